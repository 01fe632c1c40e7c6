//! The SIMD-section half of the trait pair: `kernel_fpu_begin()` / `kernel_fpu_end()` in the
//! thread LKML, Robert Elliott, "[PATCH v4 10/24] crypto: x86/poly - limit FPU preemption", December 2022.
//!
//! In a kernel, SIMD registers belong to user space; code that wants them saves that state
//! first and, while it holds them, must not be preempted. The driver enters a section once per
//! call and leaves it only around a real yield (and at the end), never per chunk.

/// A region in which SIMD registers may be used: what `kernel_fpu_begin`/`kernel_fpu_end` are
/// to Linux.
///
/// # Contract for implementers
/// - [`begin`](SimdSection::begin) returns `true` when the section is now held. It returns
///   `false` when SIMD is unusable right now (Linux: `!may_use_simd()`, e.g. in an interrupt);
///   the driver then runs the next stretch in fallback mode, counts a fallback, and does
///   **not** call [`end`](SimdSection::end) for that `begin`.
/// - The driver never nests sections: `begin` is only called while no section is held, and
///   `end` only while one is.
/// - Both are called rarely (once per call plus once per real yield), so they may be costly.
pub trait SimdSection {
    /// Enters the section; `false` means "SIMD unusable now, fall back".
    fn begin(&mut self) -> bool;
    /// Leaves the section entered by the last successful [`begin`](SimdSection::begin).
    fn end(&mut self);
}

/// The user-space section: the OS saves SIMD state on every context switch, so there is nothing
/// to enter or leave and `begin` always succeeds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct NoSection;

impl SimdSection for NoSection {
    #[inline(always)]
    fn begin(&mut self) -> bool {
        true
    }

    #[inline(always)]
    fn end(&mut self) {}
}

impl<S: SimdSection + ?Sized> SimdSection for &mut S {
    #[inline]
    fn begin(&mut self) -> bool {
        (**self).begin()
    }

    #[inline]
    fn end(&mut self) {
        (**self).end();
    }
}
