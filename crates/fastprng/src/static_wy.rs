//! [`StaticWyRand`]: the [`Static`](crate::Static) placement of [`PerCpu`] for wyrand, with
//! the `const` constructor a `static` needs.

use core::ops::Deref;

use crate::{PerCpu, Static, WyRand};

/// Per-CPU [`WyRand`] slots in wipe-on-fork memory, for a `static`: a
/// `PerCpu<WyRand, Static>` (see [`Static`] for why a fork child never continues its parent's
/// streams, with no per-call check). It dereferences to that `PerCpu`, whose
/// [`try_next_u64`](PerCpu::try_next_u64) and [`next_u64_or`](PerCpu::next_u64_or) are the
/// calls: `None`, or the fallback's answer, where the slots cannot serve the calling thread,
/// for which the caller uses a [`PerCpuWyRand`](crate::PerCpuWyRand) (as `scalrand::fast`
/// does).
///
/// **Not cryptographic.** The engine of `scalrand::fast`'s one-liners where it serves.
///
/// ```
/// use scalrand_fastprng::{PerCpuWyRand, StaticWyRand};
///
/// static RNG: StaticWyRand = StaticWyRand::new();
///
/// fn nibble() -> u64 {
///     // `None` where the restartable sequence does not run: fall back to a per-CPU
///     // generator with try-lock slots. (The top 4 bits: uniform in 0..16, where `% 6`
///     // would favour small values.)
///     RNG.try_next_u64().unwrap_or_else(|| PerCpuWyRand::from_os().unwrap().next_u64()) >> 60
/// }
/// assert!(nibble() < 16);
/// ```
#[derive(Debug)]
pub struct StaticWyRand(PerCpu<WyRand, Static>);

impl StaticWyRand {
    /// An instance with no slots yet: the first call maps them. `const`, for a `static`.
    #[must_use]
    pub const fn new() -> Self {
        Self(PerCpu::unmapped())
    }
}

impl Default for StaticWyRand {
    fn default() -> Self {
        Self::new()
    }
}

impl Deref for StaticWyRand {
    type Target = PerCpu<WyRand, Static>;

    #[inline(always)]
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}
