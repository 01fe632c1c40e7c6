//! Cheap counters for what the driver did: the `fpu_rescheds` module parameter and its
//! "longest FPU context", plus the numbers needed to check a policy (LKML, Robert Elliott, "[PATCH v4 10/24] crypto: x86/poly - limit FPU preemption", December 2022).

/// What a chunked run did. Plain integers bumped once per check interval, so keeping them costs
/// a few additions per 4 KiB; they carry no secret data and print freely.
///
/// Counters accumulate across calls on the same [`Chunked`](crate::Chunked) and are returned by
/// the free functions for their single run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// Times the policy was asked (`should_yield` / `poll_yield` calls).
    pub checks: u64,
    /// Real yields: times the policy said yes (`yield_now` calls, or `Pending` returns).
    pub yields: u64,
    /// Successful `begin` calls, each matched by one `end` (begin/end pairs).
    pub sections: u64,
    /// `begin` calls that returned `false` (SIMD unusable, ran in fallback mode).
    pub fallbacks: u64,
    /// Bytes processed.
    pub bytes: u64,
    /// Longest stretch, in bytes, processed without a yield in between: the byte analogue of
    /// the thread's "longest FPU context". For async futures, the most bytes hashed in one poll.
    pub longest_stretch: u64,
}

impl Counters {
    #[inline]
    pub(crate) fn note_stretch(&mut self, stretch: u64) {
        if stretch > self.longest_stretch {
            self.longest_stretch = stretch;
        }
    }
}
