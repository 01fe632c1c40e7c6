//! wyrand, and [`PerCpuWyRand`]: the per-CPU wyrand, whose restartable sequence commits with
//! one store.
//!
//! wyrand is Wang Yi's generator from wyhash (`wyrand` in `wyhash.h`, final version 4): a
//! 64-bit Weyl sequence `s += 0x2d358dccaa6c78a5` mixed by a 64×64→128-bit multiply,
//! `t = s · (s ^ 0x8bb84b93962eacc9)`, output `lo(t) ^ hi(t)`. It is the generator of the
//! `fastrand` crate: [`WyRand::from_state`] gives `fastrand::Rng::with_seed`'s output words bit
//! for bit (`tests/wyrand.rs`), [`next_raw`](WyRand::next_raw) being fastrand's `u64(..)` and
//! the low half of it fastrand's `u32(..)`. fastrand's other methods (ranges, floats,
//! `shuffle`, ...) sample those words with algorithms of their own, which rand's helpers on a
//! `WyRand` do not follow; the facade's `scalrand::fast::Rng` does. Period 2^64; every state
//! is valid. **Not cryptographic.**
//!
//! Why a second engine for [`PerCpu`]: a xoroshiro128 state is two words, so its restartable
//! sequence writes the next state to a scratch buffer and commits with a third store.
//! wyrand's state is one word: the section is "read CPU, load, add, store", the store is the
//! commit, and the mixing runs after the section in registers. That is the facade's
//! `scalrand::fast` engine.
//!
//! Streams: slot `i` starts at an independent 64-bit state drawn from the master generator.
//! All slots walk the same Weyl sequence from random offsets, so two slots' outputs overlap
//! only if one walks into the other's start: for `n` slots and `k` outputs each, with
//! probability about `n² · k / 2^64`.

use core::convert::Infallible;
use core::fmt;

use rand_core::{SeedableRng, TryRng};

#[cfg(feature = "alloc")]
use crate::PerCpu;
use crate::engine::{Engine, sealed};
use crate::layout::RseqSlot;

/// The wyrand generator (see the module docs). Never `Copy`; `Debug` hides the state.
#[derive(Clone, PartialEq, Eq)]
pub struct WyRand {
    state: u64,
}

impl WyRand {
    /// The Weyl increment (wyhash's `_wyp[0]`).
    pub const INCREMENT: u64 = 0x2d35_8dcc_aa6c_78a5;
    /// The mixing constant (wyhash's `_wyp[1]`).
    pub const MIX: u64 = 0x8bb8_4b93_962e_acc9;

    /// The generator at `state` (any value is valid): the output words of
    /// `fastrand::Rng::with_seed(state)`.
    #[must_use]
    pub const fn from_state(state: u64) -> Self {
        Self { state }
    }

    /// The current state. This *is* the generator: anyone holding it predicts every output.
    #[must_use]
    pub const fn state(&self) -> u64 {
        self.state
    }

    /// The output for a state that has just been advanced.
    #[inline(always)]
    #[must_use]
    pub const fn mix(advanced: u64) -> u64 {
        let t = (advanced as u128) * ((advanced ^ Self::MIX) as u128);
        (t as u64) ^ ((t >> 64) as u64)
    }

    /// The next output.
    #[inline(always)]
    pub fn next_raw(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::INCREMENT);
        Self::mix(self.state)
    }
}

impl fmt::Debug for WyRand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WyRand { .. }")
    }
}

impl TryRng for WyRand {
    type Error = Infallible;
    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.next_raw() as u32)
    }
    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next_raw())
    }
    #[inline]
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        crate::fill_via_u64(dest, || self.next_raw());
        Ok(())
    }
}

impl SeedableRng for WyRand {
    type Seed = [u8; 8];
    /// The state is the little-endian seed (every seed is valid).
    fn from_seed(seed: [u8; 8]) -> Self {
        Self::from_state(u64::from_le_bytes(seed))
    }
}

impl sealed::Engine for WyRand {
    type State = u64;
    const LABEL: &'static str = "wyrand";

    #[inline(always)]
    fn next_word(&mut self) -> u64 {
        self.next_raw()
    }

    /// The low half, as fastrand's `u32`.
    #[inline(always)]
    fn u32_of(x: u64) -> u32 {
        x as u32
    }

    /// Slot `i` starts at the master's output `i + 1`.
    fn next_slot(master: &mut Self) -> Self {
        Self::from_state(master.next_raw())
    }

    fn to_slot(&self) -> RseqSlot {
        RseqSlot::one_word(self.state)
    }

    fn slot_state(slot: &mut RseqSlot) -> u64 {
        slot.word_mut()
    }

    fn own_state(&self) -> u64 {
        self.state
    }

    #[inline(always)]
    unsafe fn rseq_step(off: isize, base: *mut u8, cpus: u32) -> Option<u64> {
        // SAFETY: forwarded contract (the slots are `RseqSlot`s, the state word at `STATE`).
        unsafe { crate::rseq::step_wyrand(off, base, cpus, Self::INCREMENT) }.map(Self::mix)
    }

    fn spare(a: u64, _b: u64) -> Self {
        Self::from_state(a)
    }

    fn repair(&mut self, _salt: u64) {
        // One word, written by one store: never torn, every value valid.
    }
}

impl Engine for WyRand {}

/// One [`WyRand`] per CPU, shared by `&self`: the restartable-sequence step commits with a
/// single store (see the module docs); elsewhere the try-lock slots, with the overflow stream
/// and the fork takeover of every [`PerCpu`].
///
/// **Not cryptographic.** The engine of `scalrand::fast`.
///
/// ```
/// use scalrand_fastprng::{PerCpuWyRand, WyRand};
///
/// let rng = PerCpuWyRand::with_cpus(WyRand::from_state(7), 4).unwrap();
/// let x = rng.next_u64();
/// let sum: u64 = rng.with_current(|r| (0..100).map(|_| r.next_raw() >> 8).sum());
/// # let _ = (x, sum);
/// ```
#[cfg(feature = "alloc")]
pub type PerCpuWyRand = PerCpu<WyRand>;
