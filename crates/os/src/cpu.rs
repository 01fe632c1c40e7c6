//! Which CPU the calling thread runs on, and how many CPUs the system may have.
//!
//! On Linux with glibc ≥ 2.35 every thread has a registered restartable-sequence area
//! (`struct rseq`, Linux 4.18, commit d7822b1e24f2 "rseq: Introduce restartable sequences
//! system call"); glibc publishes its place as `__rseq_offset` from the thread pointer and its
//! size as `__rseq_size`. The kernel keeps the area's `cpu_id` current, so on x86_64 the CPU is
//! one thread-pointer-relative load ([`current`]), no system call. Elsewhere [`current`] asks
//! `sched_getcpu`. [`rseq_offset`] is public for crates that run their own restartable
//! sequences in that area (`scalrand-fastprng`).

/// The CPU the calling thread runs on, if the OS says (`None` without `std`, or off Linux).
///
/// The answer may be stale the instant it is returned (the thread can migrate); callers use it
/// to pick a slot, never as a proof of exclusivity.
#[inline]
pub fn current() -> Option<usize> {
    if let Some(c) = rseq_cpu() {
        return Some(c);
    }
    #[cfg(all(feature = "std", target_os = "linux", not(miri), not(scalrand_loom)))]
    {
        // SAFETY: sched_getcpu has no preconditions.
        let c = unsafe { libc::sched_getcpu() };
        usize::try_from(c).ok()
    }
    #[cfg(not(all(feature = "std", target_os = "linux", not(miri), not(scalrand_loom))))]
    None
}

/// The `cpu_id` of the calling thread's rseq area: `Some` only where this thread has a
/// registered area (Linux x86_64, glibc ≥ 2.35), with no fallback. Restartable sequences run
/// on this number (the kernel aborts them when it changes), so code about to run one asks
/// here rather than [`current`], which falls back to `sched_getcpu` for a thread without an
/// area.
#[inline]
pub fn rseq_cpu() -> Option<usize> {
    #[cfg(all(
        feature = "std",
        target_os = "linux",
        target_arch = "x86_64",
        target_env = "gnu",
        not(miri),
        not(scalrand_loom)
    ))]
    if let Some(off) = rseq_offset() {
        let cpu: u32;
        // SAFETY: reads 4 bytes of the calling thread's own rseq area (`cpu_id` at offset 4),
        // which glibc keeps mapped for the thread's lifetime at `fs:[__rseq_offset]`.
        unsafe {
            core::arch::asm!(
                "mov {c:e}, dword ptr fs:[{off} + 4]",
                off = in(reg) off,
                c = out(reg) cpu,
                options(nostack, readonly, preserves_flags),
            );
        }
        // -1 (uninitialised or unregistered) and -2 (registration failed) are negative as i32.
        return i32::try_from(cpu).ok().map(|c| c as usize);
    }
    None
}

/// The shared opening of scalrand's x86_64 restartable sequences, as one `asm!` template
/// string (not API: `scalrand-fastprng` and `scalrand-pool` use it).
///
/// It emits the section's descriptor (label `3`: `start_ip` = label `4`, length up to label
/// `5`, `abort_ip` = label `6`) into `__rseq_cs`; the abort handler into `__rseq_failure`,
/// after glibc's x86 signature `0x53053053` as the operand of a `ud1` (the kernel checks the
/// four bytes before `abort_ip`), running the given instructions and jumping back to label
/// `7`; then at `7` it arms the section by storing the descriptor's address into the area's
/// `rseq_cs` field, and opens the section at `4`. The `asm!` block must name the rseq offset
/// `off` and a scratch register `t`, and end the section with label `5`.
#[doc(hidden)]
#[macro_export]
macro_rules! __rseq_prologue {
    ($($abort:literal),* $(,)?) => {
        concat!(
            ".pushsection __rseq_cs, \"aw\"\n",
            ".balign 32\n",
            "3:\n",
            ".long 0, 0\n",
            ".quad 4f, (5f - 4f), 6f\n",
            ".popsection\n",
            ".pushsection __rseq_failure, \"ax\"\n",
            ".byte 0x0f, 0xb9, 0x3d\n",
            ".long 0x53053053\n",
            "6:\n",
            $($abort, "\n",)*
            "jmp 7f\n",
            ".popsection\n",
            "7:\n",
            "lea {t}, [rip + 3b]\n",
            "mov qword ptr fs:[{off} + 8], {t}\n",
            "4:",
        )
    };
}

/// The number of CPUs the system may bring online (at least 1): `sysconf(_SC_NPROCESSORS_CONF)`.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn possible() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        if let Ok(n) = usize::try_from(n)
            && n > 0
        {
            return n;
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// glibc's `__rseq_offset` when this process's threads have a registered rseq area of the
/// original 20-byte ABI or larger (`cpu_id` at 4, `rseq_cs` at 8); `None` otherwise (glibc
/// before 2.35, a static binary, rseq disabled with `glibc.pthread.rseq=0`).
///
/// Looked up once with `dlsym` (not linked, so an older glibc simply lacks the symbols) and
/// cached in an atomic: no lock, no `Once`.
#[cfg(all(
    feature = "std",
    target_os = "linux",
    target_env = "gnu",
    not(miri),
    not(scalrand_loom)
))]
#[cfg_attr(
    docsrs,
    doc(cfg(all(feature = "std", target_os = "linux", target_env = "gnu")))
)]
#[inline]
pub fn rseq_offset() -> Option<isize> {
    use core::sync::atomic::{AtomicIsize, Ordering};
    const UNKNOWN: isize = isize::MIN;
    const UNAVAILABLE: isize = isize::MIN + 1;
    static OFFSET: AtomicIsize = AtomicIsize::new(UNKNOWN);

    #[cold]
    fn probe() -> isize {
        // SAFETY: dlsym with RTLD_DEFAULT and NUL-terminated names has no preconditions.
        let (off, size) = unsafe {
            (
                libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr()),
                libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr()),
            )
        };
        if off.is_null() || size.is_null() {
            return UNAVAILABLE;
        }
        // SAFETY: glibc defines `__rseq_size` as `const unsigned int` and `__rseq_offset` as
        // `const ptrdiff_t`, both set before any user code runs and never written again.
        let (off, size) = unsafe { (*off.cast::<isize>(), *size.cast::<u32>()) };
        if size < 20 || off == UNKNOWN || off == UNAVAILABLE {
            return UNAVAILABLE;
        }
        off
    }

    let mut off = OFFSET.load(Ordering::Relaxed);
    if off == UNKNOWN {
        off = probe();
        OFFSET.store(off, Ordering::Relaxed);
    }
    (off != UNAVAILABLE).then_some(off)
}

#[cfg(all(test, feature = "std"))]
mod tests {
    #[test]
    fn current_is_below_possible() {
        let n = super::possible();
        assert!(n >= 1);
        #[cfg(all(target_os = "linux", not(miri)))]
        assert!(super::current().is_some_and(|c| c < n.max(1024)));
    }

    #[cfg(all(
        target_os = "linux",
        target_arch = "x86_64",
        target_env = "gnu",
        not(miri)
    ))]
    #[test]
    fn rseq_cpu_matches_sched_getcpu() {
        // glibc 2.35+ registers rseq for every thread; both sources name the same CPU unless
        // the thread migrates in between, so retry a few times.
        if super::rseq_offset().is_none() {
            return;
        }
        let same = (0..100).any(|_| {
            // SAFETY: no preconditions.
            let s = unsafe { libc::sched_getcpu() };
            super::current() == usize::try_from(s).ok()
        });
        assert!(same);
    }
}
