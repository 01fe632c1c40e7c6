//! [`Rng`]: an owned wyrand with `fastrand::Rng`'s constructors and methods, and its streams.

use core::fmt;
use core::ops::RangeBounds;

use std::vec::Vec;

use scalrand_fastprng::WyRand;

use super::draw::{self, Draw};

/// An owned, seedable wyrand generator with fastrand 2's API: `fastrand::Rng`, renamed.
/// **Not cryptographic.**
///
/// `Rng::with_seed(s)` gives `fastrand::Rng::with_seed(s)`'s outputs bit for bit, method by
/// method: every range, float, `char`, [`shuffle`](Self::shuffle),
/// [`choose_multiple`](Self::choose_multiple), [`fill`](Self::fill) and [`fork`](Self::fork)
/// (`tests/fastrand_compat.rs` holds each against fastrand's for many seeds). Its panics are
/// fastrand's, with the same messages: an empty range, a `digit` base of 0 or above 36.
///
/// [`Rng::new`] seeds from the calling CPU's stream of [`fast`](super), as fastrand's `new`
/// forks its thread-local generator. The state is one word, [`get_seed`](Self::get_seed);
/// anyone who knows it predicts every output. Unlike fastrand's, `Debug` does not print it.
///
/// ```
/// use scalrand::fast::Rng;
///
/// let mut rng = Rng::with_seed(7);
/// let die = rng.u8(1..=6);
/// let mut deck: Vec<u8> = (0..52).collect();
/// rng.shuffle(&mut deck);
/// // The same seed, the same stream.
/// let mut again = Rng::with_seed(7);
/// assert_eq!(again.u8(1..=6), die);
/// let mut redeck: Vec<u8> = (0..52).collect();
/// again.shuffle(&mut redeck);
/// assert_eq!(deck, redeck);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Rng(WyRand);

impl fmt::Debug for Rng {
    /// Never prints the state.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Rng { .. }")
    }
}

impl Default for Rng {
    /// [`Rng::new`]: seeded from the calling CPU's stream, as fastrand's `Default` is from
    /// its thread-local generator (never a fixed seed).
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

/// The integer range methods, each with its own summary.
macro_rules! range_methods {
    ($($t:ident),*) => {$(
        #[doc = concat!("A uniformly distributed `", stringify!($t), "` in `range` (`..` for any), without modulo bias.")]
        ///
        /// # Panics
        /// If the range is empty, as fastrand's, with its message (`empty range: ...`).
        #[inline]
        pub fn $t(&mut self, range: impl RangeBounds<$t>) -> $t {
            draw::range(&mut self.0, range)
        }
    )*};
}

impl Rng {
    /// A generator seeded from the calling thread's stream of [`fast`](super), as fastrand's
    /// `new` forks its thread-local generator. Use [`with_seed`](Self::with_seed)
    /// for a reproducible stream.
    #[inline]
    #[must_use]
    pub fn new() -> Self {
        Self::with_seed(super::next_word())
    }

    /// The generator whose state is `seed`: `fastrand::Rng::with_seed(seed)`'s stream. Every
    /// value is a valid seed.
    #[inline]
    #[must_use = "this creates a new `Rng`; `scalrand::fast::seed` seeds the calling thread's stream"]
    pub const fn with_seed(seed: u64) -> Self {
        Self(WyRand::from_state(seed))
    }

    /// A new generator seeded with this one's next output (fastrand's `fork`): its stream
    /// differs from this one's continuation, and is the same for the same parent state.
    #[inline]
    #[must_use = "this creates a new `Rng`"]
    pub fn fork(&mut self) -> Self {
        Self::with_seed(self.0.gen_u64())
    }

    /// Sets the state to `seed`: the generator continues as `Rng::with_seed(seed)` would.
    #[inline]
    pub fn seed(&mut self, seed: u64) {
        self.0 = WyRand::from_state(seed);
    }

    /// The current state: `Rng::with_seed(rng.get_seed())` continues this generator's
    /// stream from here (the seed it was made with only until its first draw).
    #[inline]
    #[must_use]
    pub fn get_seed(&self) -> u64 {
        self.0.state()
    }

    /// A uniformly distributed `bool`.
    #[inline]
    pub fn bool(&mut self) -> bool {
        self.0.bool()
    }

    /// A letter, `A-Z` or `a-z`, each equally likely.
    #[inline]
    pub fn alphabetic(&mut self) -> char {
        self.0.alphabetic()
    }

    /// A letter or digit, `A-Z`, `a-z` or `0-9`, each equally likely.
    #[inline]
    pub fn alphanumeric(&mut self) -> char {
        self.0.alphanumeric()
    }

    /// A lowercase letter, `a-z`, each equally likely.
    #[inline]
    pub fn lowercase(&mut self) -> char {
        self.0.lowercase()
    }

    /// An uppercase letter, `A-Z`, each equally likely.
    #[inline]
    pub fn uppercase(&mut self) -> char {
        self.0.uppercase()
    }

    /// A digit of `base`, each equally likely: `0-9`, then `a-z` for bases above 10.
    ///
    /// # Panics
    /// As fastrand's: if `base` is 0 ("base cannot be zero") or above 36 ("base cannot be
    /// larger than 36").
    #[inline]
    pub fn digit(&mut self, base: u32) -> char {
        self.0.digit(base)
    }

    /// A `char` in `range` (`..` for any Unicode scalar value), each equally likely; the
    /// surrogates `U+D800..=U+DFFF`, which are not `char`s, are skipped.
    ///
    /// # Panics
    /// If the range holds no `char`, as fastrand's, with its message (`empty range: ...`).
    #[inline]
    pub fn char(&mut self, range: impl RangeBounds<char>) -> char {
        draw::range(&mut self.0, range)
    }

    range_methods!(
        u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
    );

    /// A uniformly distributed `f32` in `[0, 1)` (63 random bits scaled, as fastrand 2.4 on).
    #[inline]
    pub fn f32(&mut self) -> f32 {
        self.0.f32()
    }

    /// A uniformly distributed `f32` in `[0, 1]`: [`f32`](Self::f32) without its redraw of 1.
    #[inline]
    pub fn f32_inclusive(&mut self) -> f32 {
        self.0.f32_inclusive()
    }

    /// A uniformly distributed `f64` in `[0, 1)` (63 random bits scaled, as fastrand 2.4 on).
    #[inline]
    pub fn f64(&mut self) -> f64 {
        self.0.f64()
    }

    /// A uniformly distributed `f64` in `[0, 1]`: [`f64`](Self::f64) without its redraw of 1.
    #[inline]
    pub fn f64_inclusive(&mut self) -> f64 {
        self.0.f64_inclusive()
    }

    /// One item of `iter`, each equally likely; `None` when it is empty. The item is chosen by
    /// index below `len()`, so an iterator whose `len()` is wrong may give an unexpected one.
    #[inline]
    pub fn choice<I>(&mut self, iter: I) -> Option<I::Item>
    where
        I: IntoIterator,
        I::IntoIter: ExactSizeIterator,
    {
        self.0.choice(iter)
    }

    /// `amount` items of `source` drawn without replacement (all of them when it has fewer),
    /// in one pass over it; their order in the vector is not itself uniform.
    pub fn choose_multiple<I: IntoIterator>(&mut self, source: I, amount: usize) -> Vec<I::Item> {
        self.0.choose_multiple(source, amount)
    }

    /// Shuffles `slice` in place (Fisher-Yates): every order equally likely, within what a
    /// 64-bit state can reach.
    #[inline]
    pub fn shuffle<T>(&mut self, slice: &mut [T]) {
        self.0.shuffle(slice)
    }

    /// Fills `slice` with random bytes: one output word per 8 bytes, in native byte order as
    /// fastrand's are (so a seeded stream's bytes differ between little- and big-endian
    /// targets, as fastrand's do).
    #[inline]
    pub fn fill(&mut self, slice: &mut [u8]) {
        Draw::fill(&mut self.0, slice)
    }
}
