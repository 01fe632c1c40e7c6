//! [`Engine`]: the generators [`PerCpu`](crate::PerCpu) runs one of per CPU, each with its own
//! restartable-sequence step: the xoroshiro128 family and [`WyRand`](crate::WyRand).

/// A generator [`PerCpu`](crate::PerCpu) keeps one state of per CPU: the three xoroshiro128
/// variants and [`WyRand`](crate::WyRand).
///
/// Sealed: each engine has a restartable sequence of its own, written for its exact step and
/// slot layout. What tells the engines apart is crate-private:
///
/// | engine | slot `i`'s state (of `n` CPUs; try-lock slots after the rseq ones) | `slot_states` gives | `next_u32` |
/// |---|---|---|---|
/// | xoroshiro128 `+`, `++`, `**` | the master jumped `i + 1` times | `(s0, s1)` | the high half for `+`, the low half otherwise |
/// | [`WyRand`](crate::WyRand) | the master's output `i + 1` | the state word | the low half |
pub trait Engine: sealed::Engine + Clone + Send {}

pub(crate) mod sealed {
    use crate::layout::RseqSlot;

    /// The crate-private hooks of an [`Engine`](super::Engine). Names differ from every
    /// public method of the engines, so that no call through a bound is ambiguous.
    pub trait Engine: Sized {
        /// One slot's state as `PerCpu::slot_states` reports it.
        type State: Copy + PartialEq + core::fmt::Debug;

        /// The engine's name, for `Debug`.
        const LABEL: &'static str;

        /// Advances by one step and returns the output (the engine's reference `next`).
        fn next_word(&mut self) -> u64;

        /// `next_u32` of an output word: which half this engine hands out.
        fn u32_of(x: u64) -> u32;

        /// The generator of the next slot, taken from `master` (which advances).
        fn next_slot(master: &mut Self) -> Self;

        /// An rseq slot holding this generator's state.
        fn to_slot(&self) -> RseqSlot;

        /// The state an rseq slot holds; `&mut` excludes every other access.
        fn slot_state(slot: &mut RseqSlot) -> Self::State;

        /// This generator's state.
        fn own_state(&self) -> Self::State;

        /// One step on the current CPU's rseq slot, returning the output (see `crate::rseq`).
        ///
        /// # Safety
        /// As the `crate::rseq` step functions: `off` is `rseq::offset()`'s value and `base`
        /// points to `cpus` slots made by [`to_slot`](Self::to_slot), reached by other
        /// threads only through this step.
        unsafe fn rseq_step(off: isize, base: *mut u8, cpus: u32) -> Option<u64>;

        /// A generator made from two overflow-stream words, for a caller that found every
        /// try-lock slot busy (`with_current`).
        fn spare(a: u64, b: u64) -> Self;

        /// Replaces a state that a thread stopped halfway through a step could have left
        /// invalid (taking over a try-lock slot orphaned by a fork); `salt` differs per
        /// process image.
        fn repair(&mut self, salt: u64);
    }
}
