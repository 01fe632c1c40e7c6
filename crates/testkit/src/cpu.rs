//! Threads pinned to CPUs, for tests that need a thread to stay on one CPU or to visit each.

/// Pins the calling thread to `cpu`; `false` if the kernel refused (no such CPU, or one
/// outside this process's affinity).
pub fn pin_to(cpu: usize) -> bool {
    pin_to_set(&[cpu])
}

/// Confines the calling thread to the CPUs in `cpus` (it may run on any of them), as a
/// container's cpuset confines a process; `false` if the kernel refused (none of them exists
/// or is in this process's affinity). Allocation-free, so a fork child may call it.
pub fn pin_to_set(cpus: &[usize]) -> bool {
    // SAFETY: `set` is a zeroed, valid cpu_set_t that CPU_SET fills before the call (a CPU at
    // or above CPU_SETSIZE panics there, out of bounds, rather than writing past it); pid 0 is
    // the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
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

/// The CPU the calling thread runs on now (`sched_getcpu`).
pub fn current() -> usize {
    // SAFETY: no preconditions.
    usize::try_from(unsafe { libc::sched_getcpu() }).unwrap_or(0)
}

/// Every configured CPU (not `available_parallelism`, which a pinned thread sees as 1).
pub fn configured() -> usize {
    // SAFETY: no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }).unwrap_or(1)
}
