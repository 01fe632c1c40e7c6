//! Linux and Android: `sched_getcpu` (glibc answers from the vDSO's `getcpu`, no system
//! call on x86_64 and aarch64), the per-thread number where it fails.

use super::Source;

fn sched_getcpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    usize::try_from(unsafe { crate::sys::sched_getcpu() }).ok()
}

#[inline]
pub(super) fn current() -> Option<usize> {
    Some(sched_getcpu().unwrap_or_else(super::per_thread))
}

pub(super) fn source() -> Source {
    if sched_getcpu().is_some() {
        Source::SchedGetcpu
    } else {
        Source::PerThread
    }
}
