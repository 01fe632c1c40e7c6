//! The calling thread's rseq area: where glibc put it (`__rseq_offset`, probed once), the
//! `cpu_id` the kernel keeps there, and the process-wide switch ([`disable_rseq`]) that turns
//! scalrand's use of it off.

crate::cfg_rseq! {
    if {
        #[inline]
        pub(super) fn rseq_area_cpu() -> Option<usize> {
            let off = rseq_offset()?;
            let cpu: u32;
            // SAFETY: reads 4 bytes of the calling thread's own rseq area (`cpu_id` at offset
            // 4), which glibc keeps mapped for the thread's lifetime at `fs:[__rseq_offset]`.
            unsafe {
                core::arch::asm!(
                    "mov {c:e}, dword ptr fs:[{off} + 4]",
                    off = in(reg) off,
                    c = out(reg) cpu,
                    options(nostack, readonly, preserves_flags),
                );
            }
            // -1 (uninitialised or unregistered) and -2 (registration failed) are negative as
            // i32.
            i32::try_from(cpu).ok().map(|c| c as usize)
        }
    } else {
        #[inline]
        pub(super) fn rseq_area_cpu() -> Option<usize> {
            None
        }
    }
}

/// [`disable_rseq`] came after something had already been handed the rseq offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RseqInUse;

impl core::fmt::Display for RseqInUse {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(
            "restartable sequences are already in use in this process: call disable_rseq \
             before the first use of scalrand",
        )
    }
}

impl core::error::Error for RseqInUse {}

/// Switches scalrand's restartable sequences off for the rest of the process: from then on
/// [`rseq_offset`] and [`rseq_cpu`](super::rseq_cpu) answer `None`, so the per-CPU fast paths of
/// `scalrand-fastprng` and `scalrand-pool` take their locked paths (one compare-exchange per
/// call), and [`current`](super::current) asks `sched_getcpu`.
///
/// **For programs whose children share their memory**: a child made with `vfork()` or with
/// `clone(CLONE_VM)` without `CLONE_THREAD` runs on its parent thread's rseq area with no rseq
/// registration of its own (the kernel's `rseq_fork` drops it for `CLONE_VM`), so the kernel
/// never aborts its sections, and no memory is copied, so wipe-on-fork memory never fires. A
/// read from such a child could then interleave with a parent thread's on the same CPU slot:
/// repeated output for both, zero words for the parent. The locked paths order every reader
/// with atomic instructions, whichever task it is, so after this call such a child reads as
/// one more thread would. Nothing in user memory tells such a child from its parent thread
/// without a system call, so this is the program's choice, made once, not a check per read.
/// `GLIBC_TUNABLES=glibc.pthread.rseq=0` in the environment has the same effect for scalrand
/// (glibc then registers no rseq area).
///
/// Call it before anything in the process uses scalrand: instances built earlier keep the
/// offset they were given. Returns [`RseqInUse`] when the offset was already handed out
/// (nothing is switched then); `Ok` again on later calls, and always `Ok` where scalrand runs
/// no restartable sequences (other targets, no `std`). Async-signal-safe (one atomic
/// compare-exchange).
pub fn disable_rseq() -> Result<(), RseqInUse> {
    rseq_switch::disable()
}

#[cfg(all(
    feature = "std",
    target_os = "linux",
    target_env = "gnu",
    not(miri),
    not(scalrand_loom)
))]
mod rseq_switch {
    use core::sync::atomic::{AtomicIsize, Ordering};

    pub(super) const UNKNOWN: isize = isize::MIN;
    pub(super) const UNAVAILABLE: isize = isize::MIN + 1;
    /// The probed offset, [`UNKNOWN`] before the first probe, [`UNAVAILABLE`] when there is
    /// none or [`super::disable_rseq`] came first.
    pub(super) static OFFSET: AtomicIsize = AtomicIsize::new(UNKNOWN);

    pub(super) fn disable() -> Result<(), super::RseqInUse> {
        match OFFSET.compare_exchange(UNKNOWN, UNAVAILABLE, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) | Err(UNAVAILABLE) => Ok(()),
            Err(_) => Err(super::RseqInUse),
        }
    }
}

#[cfg(not(all(
    feature = "std",
    target_os = "linux",
    target_env = "gnu",
    not(miri),
    not(scalrand_loom)
)))]
mod rseq_switch {
    #[allow(clippy::unnecessary_wraps)] // the signature of the switch where rseq exists
    pub(super) fn disable() -> Result<(), super::RseqInUse> {
        Ok(())
    }
}

/// glibc's `__rseq_offset` when this process's threads have a registered rseq area of the
/// original 20-byte ABI or larger (`cpu_id` at 4, `rseq_cs` at 8); `None` otherwise (glibc
/// before 2.35, a static binary, rseq disabled with `glibc.pthread.rseq=0` or
/// [`disable_rseq`]).
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
    use core::sync::atomic::Ordering;
    use rseq_switch::{OFFSET, UNAVAILABLE, UNKNOWN};

    #[cold]
    fn probe() -> isize {
        // SAFETY: dlsym with RTLD_DEFAULT and NUL-terminated names has no preconditions.
        let (off, size) = unsafe {
            (
                crate::sys::dlsym(crate::sys::RTLD_DEFAULT, c"__rseq_offset".as_ptr()),
                crate::sys::dlsym(crate::sys::RTLD_DEFAULT, c"__rseq_size".as_ptr()),
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
        // A compare-exchange, not a store: a `disable_rseq` between the load and here wins.
        let probed = probe();
        off = match OFFSET.compare_exchange(UNKNOWN, probed, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => probed,
            Err(now) => now,
        };
    }
    (off != UNAVAILABLE).then_some(off)
}
