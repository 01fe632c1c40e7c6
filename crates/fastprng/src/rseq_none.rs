//! No restartable-sequence fast path on this target (see `lib.rs`): the offset is `None`, so
//! `PerCpu` never calls the step functions, which exist only to keep one code path.

/// log2 of the slot stride, as on the rseq targets (one `CachePadded` of 128 bytes on x86_64;
/// unused here).
#[allow(dead_code)]
pub(crate) const SHIFT: u32 = 7;

/// Never available here.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
#[inline(always)]
pub(crate) fn offset() -> Option<isize> {
    None
}

macro_rules! no_step {
    ($($name:ident),*) => {$(
        /// Never called: [`offset`] is `None`.
        ///
        /// # Safety
        /// None needed; it touches nothing.
        #[inline(always)]
        pub(crate) unsafe fn $name(_off: isize, _base: *mut u8, _cpus: u32) -> Option<u64> {
            None
        }
    )*};
}

no_step!(step_plus, step_plusplus, step_starstar);

/// Never called: [`offset`] is `None`.
///
/// # Safety
/// None needed; it touches nothing.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
#[inline(always)]
pub(crate) unsafe fn step_wyrand(
    _off: isize,
    _base: *mut u8,
    _cpus: u32,
    _inc: u64,
) -> Option<u64> {
    None
}

/// What `step_wyrand_seeded` found (only `NoSlot` here).
#[allow(dead_code)]
pub(crate) enum Seeded {
    /// As on the rseq targets.
    Advanced(u64),
    /// As on the rseq targets.
    Unseeded(*mut u8),
    /// Always, here.
    NoSlot,
}

/// Never serves: there is no restartable sequence on this target.
///
/// # Safety
/// None needed; it touches nothing.
#[allow(dead_code)]
#[inline(always)]
pub(crate) unsafe fn step_wyrand_seeded(
    _off: isize,
    _base: *mut u8,
    _cpus: u32,
    _inc: u64,
) -> Seeded {
    Seeded::NoSlot
}
