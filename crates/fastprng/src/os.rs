//! What the operating system tells about CPUs (std only; `no_std` hosts pass CPUs themselves).

/// The number of CPUs the system may bring online (at least 1).
#[cfg(feature = "std")]
pub(crate) fn possible_cpus() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        if n > 0 {
            return usize::try_from(n).unwrap_or(1);
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPU the calling thread runs on, if the OS says.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
#[inline]
pub(crate) fn current_cpu() -> Option<usize> {
    #[cfg(all(feature = "std", target_os = "linux", not(miri)))]
    {
        // SAFETY: sched_getcpu has no preconditions (glibc ≥ 2.35 answers from the rseq area).
        let c = unsafe { libc::sched_getcpu() };
        usize::try_from(c).ok()
    }
    #[cfg(not(all(feature = "std", target_os = "linux", not(miri))))]
    None
}
