//! The xoroshiro128 family (Blackman & Vigna, "Scrambled Linear Pseudorandom Number
//! Generators", ACM TOMS 47(4), 2021), bit-exact with the published reference C code.
//!
//! All three share one linear engine of 128 bits of state; they differ in the scrambler that
//! turns the state into output, and `++` uses other shift/rotate constants:
//!
//! | type | output | (a, b, c) | jump polynomial |
//! |---|---|---|---|
//! | [`Xoroshiro128Plus`] | `s0 + s1` | (24, 16, 37) | `0xdf900294d8f554a5, 0x170865df4b3201fc` |
//! | [`Xoroshiro128PlusPlus`] | `rotl(s0 + s1, 17) + s0` | (49, 21, 28) | `0x2bd7a6a6e99c2ddc, 0x0992ccaf6a6fca05` |
//! | [`Xoroshiro128StarStar`] | `rotl(s0 * 5, 7) * 9` | (24, 16, 37) | `0xdf900294d8f554a5, 0x170865df4b3201fc` |
//!
//! Seeding follows rand_xoshiro: the 16-byte seed is `s0` then `s1`, each little-endian;
//! `seed_from_u64` fills them with two SplitMix64 outputs. The all-zero state is a fixed point
//! of the engine (it would output zeros forever), so it is never accepted: see
//! [`from_seed`](rand_core::SeedableRng::from_seed) on each type for the documented remap and
//! `from_state` for the fallible constructor.

use core::convert::Infallible;
use core::fmt;

use rand_core::{SeedableRng, TryRng};

use crate::Error;
use crate::engine::{Engine, sealed};
use crate::layout::RseqSlot;

/// SplitMix64 (Steele, Lea & Flood 2014), used only to expand a `u64` seed into a state, as
/// the reference `splitmix64.c` suggests and rand_xoshiro does.
#[inline]
pub(crate) fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What every xoroshiro128 variant offers besides [`rand_core::Rng`]: raw state access and the
/// jump functions. Sealed (through [`Engine`]): [`PerCpu`](crate::PerCpu) relies on the exact
/// engine.
pub trait Xoroshiro128:
    Engine + sealed::Engine<State = (u64, u64)> + Clone + TryRng<Error = Infallible> + Send
{
    /// The variant's name as the reference code spells it, e.g. `"xoroshiro128++"`.
    const NAME: &'static str;

    /// The generator with state `(s0, s1)`.
    ///
    /// # Errors
    /// [`Error::ZeroState`] for `(0, 0)`, the engine's fixed point.
    fn from_state(s0: u64, s1: u64) -> Result<Self, Error>;

    /// The current state `(s0, s1)`.
    ///
    /// This *is* the generator: anyone holding it can predict every later output.
    fn state(&self) -> (u64, u64);

    /// Advances the state by 2^64 steps: the reference `jump()`. Calling it `k` times gives
    /// `k` streams that do not overlap for 2^64 outputs each.
    fn jump(&mut self);

    /// Advances the state by 2^96 steps: the reference `long_jump()`.
    fn long_jump(&mut self);

    /// Advances by one step and returns the raw 64-bit output.
    fn next_raw(&mut self) -> u64;
}

/// Applies a jump polynomial to `(s0, s1)` using `step` as the engine (reference `jump()`).
#[inline]
fn apply_poly<F: Fn(u64, u64) -> (u64, u64)>(s: &mut (u64, u64), poly: [u64; 2], step: F) {
    let (mut j0, mut j1) = (0u64, 0u64);
    for word in poly {
        for b in 0..64 {
            if word & (1u64 << b) != 0 {
                j0 ^= s.0;
                j1 ^= s.1;
            }
            *s = step(s.0, s.1);
        }
    }
    *s = (j0, j1);
}

macro_rules! xoroshiro {
    (
        $(#[$doc:meta])*
        $name:ident, $label:literal, a = $a:literal, b = $b:literal, c = $c:literal,
        jump = $jump:expr, long_jump = $long:expr,
        output = |$o0:ident, $o1:ident| $out:expr,
        next_u32 = |$x:ident| $u32:expr,
        rseq = $rseq:ident $(,)?
    ) => {
        $(#[$doc])*
        ///
        /// # Seeding
        /// `from_seed(seed)` reads `s0 = u64::from_le_bytes(seed[0..8])`, `s1` from
        /// `seed[8..16]`. The all-zero seed is **remapped** to `seed_from_u64(0)` (as
        /// rand_xoshiro does) because the zero state would output zeros forever; use
        /// `from_state` to get [`Error::ZeroState`] instead. `seed_from_u64(x)` takes `s0`
        /// and `s1` from two SplitMix64 outputs of `x`, which is never all-zero.
        ///
        /// # Output
        /// `next_u64` is the reference `next()`. `fill_bytes` writes successive `next_u64`
        /// outputs little-endian; a final partial word uses the low bytes of one more output.
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name {
            s0: u64,
            s1: u64,
        }

        impl $name {
            /// The generator with state `(s0, s1)`.
            ///
            /// # Errors
            /// [`Error::ZeroState`] for `(0, 0)`.
            pub const fn from_state(s0: u64, s1: u64) -> Result<Self, Error> {
                if s0 == 0 && s1 == 0 {
                    Err(Error::ZeroState)
                } else {
                    Ok(Self { s0, s1 })
                }
            }

            /// One step of the engine, without output.
            #[inline(always)]
            pub(crate) const fn step(s0: u64, s1: u64) -> (u64, u64) {
                let s1 = s1 ^ s0;
                (s0.rotate_left($a) ^ s1 ^ (s1 << $b), s1.rotate_left($c))
            }

            /// The scrambler: the output for state `(s0, s1)`.
            #[inline(always)]
            pub(crate) const fn output($o0: u64, $o1: u64) -> u64 {
                $out
            }

            /// Advances by one step and returns the reference `next()` output.
            #[inline(always)]
            pub fn next_u64(&mut self) -> u64 {
                let r = Self::output(self.s0, self.s1);
                let (a, b) = Self::step(self.s0, self.s1);
                self.s0 = a;
                self.s1 = b;
                r
            }

            /// Returns the next `u32` (see the type's docs for which half).
            #[inline(always)]
            pub fn next_u32(&mut self) -> u32 {
                <Self as sealed::Engine>::u32_of(self.next_u64())
            }

            /// Fills `dest` with output bytes, little-endian (see the type's docs).
            #[inline]
            pub fn fill_bytes(&mut self, dest: &mut [u8]) {
                crate::fill_via_u64(dest, || self.next_u64());
            }

            /// Advances by 2^64 steps (the reference `jump()`).
            pub fn jump(&mut self) {
                let mut s = (self.s0, self.s1);
                apply_poly(&mut s, $jump, Self::step);
                (self.s0, self.s1) = s;
            }

            /// Advances by 2^96 steps (the reference `long_jump()`).
            pub fn long_jump(&mut self) {
                let mut s = (self.s0, self.s1);
                apply_poly(&mut s, $long, Self::step);
                (self.s0, self.s1) = s;
            }
        }

        impl sealed::Engine for $name {
            type State = (u64, u64);
            const LABEL: &'static str = $label;

            #[inline(always)]
            fn next_word(&mut self) -> u64 {
                self.next_u64()
            }

            #[inline(always)]
            fn u32_of($x: u64) -> u32 {
                $u32
            }

            /// Slot `i` is the master jumped `i + 1` times (OpenZFS's scheme).
            fn next_slot(master: &mut Self) -> Self {
                master.jump();
                master.clone()
            }

            fn to_slot(&self) -> RseqSlot {
                RseqSlot::two_words(self.s0, self.s1)
            }

            fn slot_state(slot: &mut RseqSlot) -> (u64, u64) {
                slot.two_words_mut()
            }

            fn own_state(&self) -> (u64, u64) {
                (self.s0, self.s1)
            }

            #[inline(always)]
            unsafe fn rseq_step(off: isize, base: *mut u8, cpus: u32) -> Option<u64> {
                // SAFETY: forwarded contract.
                unsafe { crate::rseq::$rseq(off, base, cpus) }
            }

            fn spare(a: u64, b: u64) -> Self {
                // An odd `s1` is never the zero state, the only one `from_state` refuses.
                match Self::from_state(a, b | 1) {
                    Ok(r) => r,
                    Err(_) => unreachable_nonzero(),
                }
            }

            fn repair(&mut self, salt: u64) {
                // All-zero is the engine's only invalid state (a torn store could leave it).
                if (self.s0, self.s1) == (0, 0)
                    && let Ok(fresh) = Self::from_state(0x9e37_79b9_7f4a_7c15, salt)
                {
                    *self = fresh;
                }
            }
        }

        impl Engine for $name {}

        impl Xoroshiro128 for $name {
            const NAME: &'static str = $label;
            fn from_state(s0: u64, s1: u64) -> Result<Self, Error> {
                $name::from_state(s0, s1)
            }
            fn state(&self) -> (u64, u64) {
                (self.s0, self.s1)
            }
            fn jump(&mut self) {
                $name::jump(self)
            }
            fn long_jump(&mut self) {
                $name::long_jump(self)
            }
            #[inline(always)]
            fn next_raw(&mut self) -> u64 {
                self.next_u64()
            }
        }

        impl fmt::Debug for $name {
            /// Never prints the state: it would give away every future output.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }

        impl TryRng for $name {
            type Error = Infallible;
            #[inline(always)]
            fn try_next_u32(&mut self) -> Result<u32, Infallible> {
                Ok(self.next_u32())
            }
            #[inline(always)]
            fn try_next_u64(&mut self) -> Result<u64, Infallible> {
                Ok(self.next_u64())
            }
            #[inline]
            fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
                self.fill_bytes(dest);
                Ok(())
            }
        }

        impl SeedableRng for $name {
            type Seed = [u8; 16];

            /// `s0` from `seed[0..8]`, `s1` from `seed[8..16]`, little-endian. The all-zero
            /// seed is remapped to `seed_from_u64(0)`.
            fn from_seed(seed: [u8; 16]) -> Self {
                let mut lo = [0u8; 8];
                let mut hi = [0u8; 8];
                lo.copy_from_slice(&seed[..8]);
                hi.copy_from_slice(&seed[8..]);
                match Self::from_state(u64::from_le_bytes(lo), u64::from_le_bytes(hi)) {
                    Ok(rng) => rng,
                    Err(_) => Self::seed_from_u64(0),
                }
            }

            /// Two SplitMix64 outputs of `state` become `s0` and `s1`.
            fn seed_from_u64(mut state: u64) -> Self {
                let s0 = splitmix64(&mut state);
                let s1 = splitmix64(&mut state);
                // SplitMix64 is a bijection of its counter, and two consecutive counters
                // cannot both map to 0, so the state is never zero.
                if s0 == 0 && s1 == 0 {
                    return Self { s0: 1, s1: 0 };
                }
                Self { s0, s1 }
            }
        }
    };
}

xoroshiro! {
    /// xoroshiro128+ 1.0: the fastest variant, for floating-point generation.
    ///
    /// **Its lowest bits are weak**: the lowest 4 bits fail linearity tests (binary rank,
    /// linear complexity). [`next_u32`](Self::next_u32) therefore returns the *high* 32
    /// bits; do not hand out the low bits of `next_u64` raw where bits matter.
    Xoroshiro128Plus, "xoroshiro128+", a = 24, b = 16, c = 37,
    jump = [0xdf90_0294_d8f5_54a5, 0x1708_65df_4b32_01fc],
    long_jump = [0xd2a9_8b26_625e_ee7b, 0xdddf_9b10_90aa_7ac1],
    output = |s0, s1| s0.wrapping_add(s1),
    next_u32 = |x| (x >> 32) as u32,
    rseq = step_plus,
}

xoroshiro! {
    /// xoroshiro128++ 1.0: the all-purpose variant, and the one [`PerCpu`](crate::PerCpu)
    /// and `scalrand::fast` use by default.
    ///
    /// [`next_u32`](Self::next_u32) returns the low 32 bits of `next_u64`, as rand_xoshiro
    /// does (all bits of `++` pass the tests).
    Xoroshiro128PlusPlus, "xoroshiro128++", a = 49, b = 21, c = 28,
    jump = [0x2bd7_a6a6_e99c_2ddc, 0x0992_ccaf_6a6f_ca05],
    long_jump = [0x360f_d5f2_cf8d_5d99, 0x9c6e_6877_736c_46e3],
    output = |s0, s1| s0.wrapping_add(s1).rotate_left(17).wrapping_add(s0),
    next_u32 = |x| x as u32,
    rseq = step_plusplus,
}

xoroshiro! {
    /// xoroshiro128** 1.0: the all-purpose variant with a multiplicative scrambler.
    ///
    /// [`next_u32`](Self::next_u32) returns the low 32 bits of `next_u64`, as rand_xoshiro
    /// does.
    Xoroshiro128StarStar, "xoroshiro128**", a = 24, b = 16, c = 37,
    jump = [0xdf90_0294_d8f5_54a5, 0x1708_65df_4b32_01fc],
    long_jump = [0xd2a9_8b26_625e_ee7b, 0xdddf_9b10_90aa_7ac1],
    output = |s0, _s1| s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9),
    next_u32 = |x| x as u32,
    rseq = step_starstar,
}

/// `from_state(_, odd)` never sees `(0, 0)`.
#[cold]
fn unreachable_nonzero() -> ! {
    #[allow(clippy::panic)]
    {
        panic!("an odd s1 is never the zero state")
    }
}
