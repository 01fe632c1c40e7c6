//! Threads pinned to CPUs, for tests that need a thread to stay on one CPU or to visit each.

/// Pins the calling thread to `cpu`; `false` if the kernel refused (no such CPU, or one
/// outside this process's affinity).
pub fn pin_to(cpu: usize) -> bool {
    // SAFETY: `set` is a zeroed, valid cpu_set_t that CPU_SET fills before the call; pid 0 is
    // the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// The CPUs the calling thread may run on, ascending.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: `set` is a zeroed cpu_set_t that sched_getaffinity fills; CPU_ISSET reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}
