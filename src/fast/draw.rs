//! fastrand 2's sampling methods, written once over a source of wyrand words: [`Rng`] runs
//! them on its own state, the one-liners of [`fast`](crate::fast) on the calling CPU's.
//!
//! Each follows fastrand 2.5's `Rng` (smol-rs/fastrand, `src/lib.rs`) step for step: the same
//! words drawn in the same order (the low half of a word for 8- to 32-bit types, two words
//! high-first for 128-bit ones), the same reductions ([`crate::uniform`], fastrand's
//! `gen_mod_*`), the same float conversion, shuffle order and reservoir, and the same panics
//! with the same messages. `tests/fastrand_compat.rs` holds every method against fastrand's.
//!
//! [`Rng`]: super::Rng

use core::fmt::Debug;
use core::ops::{Bound, RangeBounds};

use std::vec::Vec;

use scalrand_fastprng::WyRand;

use crate::uniform::{below_u32, below_u64, below_u128};

use super::source::with_thread;

/// A source of wyrand output words, and fastrand's methods on it.
pub(crate) trait Draw {
    /// The next 64-bit output (fastrand's `gen_u64`).
    fn gen_u64(&mut self) -> u64;

    /// The low half of the next output (fastrand's `gen_u32`).
    #[inline]
    fn gen_u32(&mut self) -> u32 {
        self.gen_u64() as u32
    }

    /// Two outputs, the first in the high half (fastrand's `gen_u128`).
    #[inline]
    fn gen_u128(&mut self) -> u128 {
        let high = self.gen_u64();
        (u128::from(high) << 64) | u128::from(self.gen_u64())
    }

    /// A uniform `u32` in `0..n` (`n > 0`).
    #[inline]
    fn gen_mod_u32(&mut self, n: u32) -> u32 {
        below_u32(n, || self.gen_u32())
    }

    /// A uniform `u64` in `0..n` (`n > 0`).
    #[inline]
    fn gen_mod_u64(&mut self, n: u64) -> u64 {
        below_u64(n, || self.gen_u64())
    }

    /// A uniform `u128` in `0..n` (`n > 0`).
    #[inline]
    fn gen_mod_u128(&mut self, n: u128) -> u128 {
        below_u128(n, || self.gen_u128())
    }

    /// fastrand's `bool`: the low bit of a full-range `u8`, `true` when it is 0.
    #[inline]
    fn bool(&mut self) -> bool {
        range::<u8, _>(self, ..) % 2 == 0
    }

    /// One byte of `chars`, as a `char`, each equally likely (fastrand's `choice` on it).
    #[inline]
    fn pick(&mut self, chars: &[u8]) -> char {
        // `range` draws below `chars.len()`, so the index is in bounds.
        char::from(chars[range::<usize, _>(self, 0..chars.len())])
    }

    /// fastrand's `alphabetic`: `A-Z`, `a-z`.
    #[inline]
    fn alphabetic(&mut self) -> char {
        self.pick(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    }

    /// fastrand's `alphanumeric`: `A-Z`, `a-z`, `0-9`.
    #[inline]
    fn alphanumeric(&mut self) -> char {
        self.pick(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    }

    /// fastrand's `lowercase`: `a-z`.
    #[inline]
    fn lowercase(&mut self) -> char {
        self.pick(b"abcdefghijklmnopqrstuvwxyz")
    }

    /// fastrand's `uppercase`: `A-Z`.
    #[inline]
    fn uppercase(&mut self) -> char {
        self.pick(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    }

    /// fastrand's `digit`: a digit of `base`, `0-9` then `a-z`.
    ///
    /// # Panics
    /// As fastrand: "base cannot be zero" for 0, "base cannot be larger than 36" above 36.
    #[inline]
    // fastrand's `digit` panics on these two bases with these messages; a user moving from it
    // keeps them (the one-liner and `Rng::digit` document it).
    #[allow(clippy::panic)]
    fn digit(&mut self, base: u32) -> char {
        if base == 0 {
            panic!("base cannot be zero");
        }
        if base > 36 {
            panic!("base cannot be larger than 36");
        }
        let num = range::<u8, _>(self, ..base as u8);
        if num < 10 {
            char::from(b'0' + num)
        } else {
            char::from(b'a' + num - 10)
        }
    }

    /// fastrand's `f32_inclusive`: 63 bits of a word times `2^-63`, in `[0, 1]`.
    #[inline]
    fn f32_inclusive(&mut self) -> f32 {
        const MUL: f32 = 1.0 / (1u64 << 63) as f32;
        (self.gen_u64() >> 1) as f32 * MUL
    }

    /// fastrand's `f32`: [`f32_inclusive`](Self::f32_inclusive) drawn again while it is 1.
    #[inline]
    fn f32(&mut self) -> f32 {
        loop {
            let x = self.f32_inclusive();
            if x < 1.0 {
                return x;
            }
        }
    }

    /// fastrand's `f64_inclusive`: 63 bits of a word times `2^-63`, in `[0, 1]`.
    #[inline]
    fn f64_inclusive(&mut self) -> f64 {
        const MUL: f64 = 1.0 / (1u64 << 63) as f64;
        (self.gen_u64() >> 1) as f64 * MUL
    }

    /// fastrand's `f64`: [`f64_inclusive`](Self::f64_inclusive) drawn again while it is 1.
    #[inline]
    fn f64(&mut self) -> f64 {
        loop {
            let x = self.f64_inclusive();
            if x < 1.0 {
                return x;
            }
        }
    }

    /// fastrand's `choice`: the item at a uniform index below `len()`, `None` when empty.
    #[inline]
    fn choice<I>(&mut self, iter: I) -> Option<I::Item>
    where
        I: IntoIterator,
        I::IntoIter: ExactSizeIterator,
    {
        let mut iter = iter.into_iter();
        let len = iter.len();
        if len == 0 {
            return None;
        }
        let index = range::<usize, _>(self, 0..len);
        iter.nth(index)
    }

    /// fastrand's `choose_multiple`: reservoir sampling (Vitter's algorithm R), `amount`
    /// items or all there are.
    fn choose_multiple<I: IntoIterator>(&mut self, source: I, amount: usize) -> Vec<I::Item> {
        let mut reservoir = Vec::with_capacity(amount);
        let mut iter = source.into_iter();
        reservoir.extend(iter.by_ref().take(amount));
        // Only an iterator that filled the reservoir is read further (one that stopped is not
        // asked again).
        if reservoir.len() == amount {
            for (i, elem) in iter.enumerate() {
                let end = i + 1 + amount;
                let k = range::<usize, _>(self, 0..end);
                if let Some(slot) = reservoir.get_mut(k) {
                    *slot = elem;
                }
            }
        } else if reservoir.capacity() > 3 * reservoir.len() {
            // Fewer items than asked for: give back the unused space, as fastrand does.
            reservoir.shrink_to_fit();
        }
        reservoir
    }

    /// fastrand's `shuffle`: Fisher-Yates from the front, item `i` swapped with a uniform
    /// index in `0..=i`.
    #[inline]
    fn shuffle<T>(&mut self, slice: &mut [T]) {
        for i in 1..slice.len() {
            let j = range::<usize, _>(self, ..=i);
            // SAFETY: for `i` below `usize::MAX` (a slice index is), `range(..=i)` is `0 +
            // below(i + 1)` (`Ranged::sample`), and `below(s)` returns the high half of the
            // product of a word and `s`, which is below `s`: so `j <= i < slice.len()`. The
            // hint drops the swap's bounds check, which the compiler cannot see is redundant
            // (about 10% of a shuffle's time).
            unsafe { core::hint::assert_unchecked(j <= i) };
            slice.swap(i, j);
        }
    }

    /// fastrand's `fill`: one word per 8 bytes in native byte order, the last word cut short.
    #[inline]
    fn fill(&mut self, slice: &mut [u8]) {
        let mut chunks = slice.chunks_exact_mut(8);
        for chunk in chunks.by_ref() {
            chunk.copy_from_slice(&self.gen_u64().to_ne_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let n = rest.len();
            rest.copy_from_slice(&self.gen_u64().to_ne_bytes()[..n]);
        }
    }
}

/// An owned wyrand: [`Rng`](super::Rng)'s state, and the calling CPU's generator inside
/// [`with`](super::with).
impl Draw for WyRand {
    #[inline]
    fn gen_u64(&mut self) -> u64 {
        self.next_raw()
    }
}

/// A type fastrand draws from a range: its bounds and its draw.
pub(crate) trait Ranged: Copy + Debug {
    /// The range's first and last value, `None` when it is empty.
    fn span(range: &impl RangeBounds<Self>) -> Option<(Self, Self)>;
    /// A uniform value in `low..=high` (`low <= high`).
    fn sample<D: Draw + ?Sized>(d: &mut D, low: Self, high: Self) -> Self;
}

/// fastrand's range methods: a value of `range`.
///
/// # Panics
/// As fastrand, with its message, when `range` is empty.
#[inline]
pub(crate) fn range<T: Ranged, D: Draw + ?Sized>(d: &mut D, range: impl RangeBounds<T>) -> T {
    match T::span(&range) {
        Some((low, high)) => T::sample(d, low, high),
        None => empty_range(&range),
    }
}

/// [`range`] on the calling thread's stream: the range's bounds are read first (they may be
/// a caller's type, running the caller's code), then the value is drawn in one visit to the
/// stream, its redraws included.
///
/// # Panics
/// As fastrand, with its message, when `range` is empty.
#[inline]
pub(crate) fn thread_range<T: Ranged>(range: impl RangeBounds<T>) -> T {
    match T::span(&range) {
        Some((low, high)) => with_thread(|w| T::sample(w, low, high)),
        None => empty_range(&range),
    }
}

/// [`thread_range`], but `None` for an empty range instead of the panic.
#[inline]
pub(crate) fn try_thread_range<T: Ranged>(range: impl RangeBounds<T>) -> Option<T> {
    let (low, high) = T::span(&range)?;
    Some(with_thread(|w| T::sample(w, low, high)))
}

/// fastrand's panic for an empty range, with its message.
#[cold]
#[inline(never)]
// fastrand's range methods panic on an empty range with this message; the range one-liners
// and `Rng`'s range methods mirror it and document it (the `try_` one-liners do not panic).
#[allow(clippy::panic)]
fn empty_range<T: Debug>(range: &impl RangeBounds<T>) -> ! {
    panic!(
        "empty range: {:?}..{:?}",
        range.start_bound(),
        range.end_bound()
    )
}

/// [`Ranged`] for the integers: `$u` is the unsigned type of the same width, `$gen` the word
/// a full range takes, `$mod` the reduction fastrand uses for the type.
macro_rules! ranged_int {
    ($($t:ident: $u:ty, $gen:ident, $mod:ident;)*) => {$(
        impl Ranged for $t {
            #[inline]
            fn span(range: &impl RangeBounds<$t>) -> Option<($t, $t)> {
                let low = match range.start_bound() {
                    Bound::Unbounded => $t::MIN,
                    Bound::Included(&x) => x,
                    Bound::Excluded(&x) => x.checked_add(1)?,
                };
                let high = match range.end_bound() {
                    Bound::Unbounded => $t::MAX,
                    Bound::Included(&x) => x,
                    Bound::Excluded(&x) => x.checked_sub(1)?,
                };
                (low <= high).then_some((low, high))
            }

            #[inline]
            fn sample<D: Draw + ?Sized>(d: &mut D, low: $t, high: $t) -> $t {
                if low == $t::MIN && high == $t::MAX {
                    d.$gen() as $t
                } else {
                    // The number of values, in the type's own wrapping arithmetic, then as
                    // the unsigned type widened to the reduction's word.
                    let len = high.wrapping_sub(low).wrapping_add(1);
                    low.wrapping_add(d.$mod(len as $u as _) as $t)
                }
            }
        }
    )*};
}

ranged_int! {
    u8: u8, gen_u32, gen_mod_u32;
    u16: u16, gen_u32, gen_mod_u32;
    u32: u32, gen_u32, gen_mod_u32;
    u64: u64, gen_u64, gen_mod_u64;
    u128: u128, gen_u128, gen_mod_u128;
    i8: u8, gen_u32, gen_mod_u32;
    i16: u16, gen_u32, gen_mod_u32;
    i32: u32, gen_u32, gen_mod_u32;
    i64: u64, gen_u64, gen_mod_u64;
    i128: u128, gen_u128, gen_mod_u128;
}

#[cfg(target_pointer_width = "64")]
ranged_int! {
    usize: usize, gen_u64, gen_mod_u64;
    isize: usize, gen_u64, gen_mod_u64;
}

#[cfg(not(target_pointer_width = "64"))]
ranged_int! {
    usize: usize, gen_u32, gen_mod_u32;
    isize: usize, gen_u32, gen_mod_u32;
}

/// The UTF-16 surrogates, `U+D800..=U+DFFF`: no `char` has these values.
const SURROGATE_START: u32 = 0xd800;
const SURROGATE_LEN: u32 = 0x800;

/// fastrand's `char` ranges: Unicode scalar values, the surrogate gap skipped (an excluded
/// bound next to the gap steps over it).
impl Ranged for char {
    #[inline]
    fn span(range: &impl RangeBounds<char>) -> Option<(char, char)> {
        let low = match range.start_bound() {
            Bound::Unbounded => '\0',
            Bound::Included(&x) => x,
            Bound::Excluded(&x) => {
                let scalar = if x as u32 == SURROGATE_START - 1 {
                    SURROGATE_START + SURROGATE_LEN
                } else {
                    x as u32 + 1
                };
                char::from_u32(scalar)?
            }
        };
        let high = match range.end_bound() {
            Bound::Unbounded => char::MAX,
            Bound::Included(&x) => x,
            Bound::Excluded(&x) => {
                let scalar = if x as u32 == SURROGATE_START + SURROGATE_LEN {
                    SURROGATE_START - 1
                } else {
                    (x as u32).wrapping_sub(1)
                };
                char::from_u32(scalar)?
            }
        };
        (low <= high).then_some((low, high))
    }

    #[inline]
    fn sample<D: Draw + ?Sized>(d: &mut D, low: char, high: char) -> char {
        let gap = if (low as u32) < SURROGATE_START && (high as u32) >= SURROGATE_START {
            SURROGATE_LEN
        } else {
            0
        };
        let span = high as u32 - low as u32 - gap;
        let mut val = u32::sample(d, 0, span) + low as u32;
        if val >= SURROGATE_START {
            val += gap;
        }
        // `val` is `low` plus at most the number of scalar values up to `high`, stepped over
        // the gap: a scalar value, so `low` is never returned here.
        char::from_u32(val).unwrap_or(low)
    }
}
