//! The one-liners: fastrand 2's free functions, each a draw from the calling CPU's stream.

use core::ops::RangeBounds;

use std::vec::Vec;

use super::draw::{self, Draw};
use super::source::{CallingThread, with_thread};

/// A uniformly distributed `bool`. Not cryptographic.
#[inline]
pub fn bool() -> bool {
    with_thread(|w| w.bool())
}

/// A letter, `A-Z` or `a-z`, each equally likely. Not cryptographic.
#[inline]
pub fn alphabetic() -> char {
    with_thread(|w| w.alphabetic())
}

/// A letter or digit, `A-Z`, `a-z` or `0-9`, each equally likely. Not cryptographic.
///
/// ```
/// let id: String = std::iter::repeat_with(scalrand::fast::alphanumeric).take(12).collect();
/// assert!(id.chars().all(|c| c.is_ascii_alphanumeric()));
/// ```
#[inline]
pub fn alphanumeric() -> char {
    with_thread(|w| w.alphanumeric())
}

/// A lowercase letter, `a-z`, each equally likely. Not cryptographic.
#[inline]
pub fn lowercase() -> char {
    with_thread(|w| w.lowercase())
}

/// An uppercase letter, `A-Z`, each equally likely. Not cryptographic.
#[inline]
pub fn uppercase() -> char {
    with_thread(|w| w.uppercase())
}

/// A digit of `base`, each equally likely: `0-9`, then `a-z` for bases above 10. Not
/// cryptographic.
///
/// ```
/// let hex = scalrand::fast::digit(16);
/// assert!(hex.is_ascii_hexdigit());
/// ```
///
/// # Panics
/// As fastrand's: if `base` is 0 ("base cannot be zero") or above 36 ("base cannot be larger
/// than 36").
#[inline]
pub fn digit(base: u32) -> char {
    with_thread(|w| w.digit(base))
}

/// A uniformly distributed `f32` in `[0, 1)` (63 random bits scaled, as fastrand 2.4 on). Not
/// cryptographic.
#[inline]
pub fn f32() -> f32 {
    with_thread(|w| w.f32())
}

/// A uniformly distributed `f32` in `[0, 1]`: [`f32()`] without its redraw of 1. Not
/// cryptographic.
#[inline]
pub fn f32_inclusive() -> f32 {
    with_thread(|w| w.f32_inclusive())
}

/// A uniformly distributed `f64` in `[0, 1)` (63 random bits scaled, as fastrand 2.4 on). Not
/// cryptographic.
#[inline]
pub fn f64() -> f64 {
    with_thread(|w| w.f64())
}

/// A uniformly distributed `f64` in `[0, 1]`: [`f64()`] without its redraw of 1. Not
/// cryptographic.
#[inline]
pub fn f64_inclusive() -> f64 {
    with_thread(|w| w.f64_inclusive())
}

/// One item of `iter`, each equally likely; `None` when it is empty. Not cryptographic.
///
/// The item is chosen by index below `len()`, so an iterator whose `len()` is wrong may give
/// an unexpected one (as fastrand's may).
///
/// ```
/// let pick = scalrand::fast::choice(["rock", "paper", "scissors"]);
/// assert!(pick.is_some());
/// assert_eq!(scalrand::fast::choice(Vec::<u8>::new()), None);
/// ```
#[inline]
pub fn choice<I>(iter: I) -> Option<I::Item>
where
    I: IntoIterator,
    I::IntoIter: ExactSizeIterator,
{
    CallingThread.choice(iter)
}

/// `amount` items of `source` drawn without replacement (all of them when it has fewer), in
/// one pass over it; their order in the vector is not itself uniform. Not cryptographic.
///
/// ```
/// let sample = scalrand::fast::choose_multiple(0..100, 10);
/// assert_eq!(sample.len(), 10);
/// assert_eq!(scalrand::fast::choose_multiple([1, 2], 5), [1, 2]);
/// ```
pub fn choose_multiple<I: IntoIterator>(source: I, amount: usize) -> Vec<I::Item> {
    CallingThread.choose_multiple(source, amount)
}

/// Shuffles `slice` in place (Fisher-Yates, each swap index drawn without modulo bias): every
/// order equally likely, within what a 64-bit generator state can reach. Not cryptographic.
///
/// ```
/// let mut v = [1, 2, 3, 4, 5];
/// scalrand::fast::shuffle(&mut v);
/// v.sort_unstable();
/// assert_eq!(v, [1, 2, 3, 4, 5]);
/// ```
#[inline]
pub fn shuffle<T>(slice: &mut [T]) {
    // On a copy of the thread's stream (a shuffle runs no code of the caller's), the words
    // in the order `Rng::shuffle` draws them.
    with_thread(|w| Draw::shuffle(w, slice));
}

/// Fills `slice` with random bytes: fastrand's `fill`. Not cryptographic: for keys and
/// nonces, [`crate::fill_bytes`] or rand's [`crate::fill`], its namesake at the crate root.
///
/// One word per 8 bytes from the calling thread's stream, as fastrand's `fill` takes them.
#[inline]
pub fn fill(slice: &mut [u8]) {
    with_thread(|w| Draw::fill(w, slice));
}

/// The range one-liners and their `try_` forms, each with its own summary.
macro_rules! ranges {
    ($($name:ident, $try_name:ident: $t:ident;)*) => {$(
        #[doc = concat!("A uniformly distributed `", stringify!($t), "` in `range` (`..` for any), without modulo bias. Not")]
        /// cryptographic.
        ///
        /// ```
        #[doc = concat!("let x = scalrand::fast::", stringify!($name), "(1..=6);")]
        /// assert!((1..=6).contains(&x));
        /// ```
        ///
        /// # Panics
        /// If the range is empty, as fastrand's, with its message (`empty range: ...`);
        #[doc = concat!("[`", stringify!($try_name), "`] returns `None` instead.")]
        #[inline]
        pub fn $name(range: impl RangeBounds<$t>) -> $t {
            draw::thread_range(range)
        }

        #[doc = concat!("[`", stringify!($name), "()`], but `None` for an empty range instead of the panic. Not")]
        /// cryptographic.
        ///
        /// ```
        #[doc = concat!("assert_eq!(scalrand::fast::", stringify!($try_name), "(3..3), None);")]
        #[doc = concat!("assert_eq!(scalrand::fast::", stringify!($try_name), "(4..=4), Some(4));")]
        /// ```
        #[inline]
        pub fn $try_name(range: impl RangeBounds<$t>) -> Option<$t> {
            draw::try_thread_range(range)
        }
    )*};
}

ranges! {
    u8, try_u8: u8;
    u16, try_u16: u16;
    u32, try_u32: u32;
    u64, try_u64: u64;
    u128, try_u128: u128;
    usize, try_usize: usize;
    i8, try_i8: i8;
    i16, try_i16: i16;
    i32, try_i32: i32;
    i64, try_i64: i64;
    i128, try_i128: i128;
    isize, try_isize: isize;
}

/// A `char` in `range` (`..` for any Unicode scalar value), each equally likely; the
/// surrogates `U+D800..=U+DFFF`, which are not `char`s, are skipped. Not cryptographic.
///
/// ```
/// let c = scalrand::fast::char('a'..='z');
/// assert!(c.is_ascii_lowercase());
/// ```
///
/// # Panics
/// If the range holds no `char`, as fastrand's, with its message (`empty range: ...`);
/// [`try_char`] returns `None` instead.
#[inline]
pub fn char(range: impl RangeBounds<char>) -> char {
    draw::thread_range(range)
}

/// [`char()`], but `None` for a range that holds no `char` instead of the panic. Not
/// cryptographic.
///
/// ```
/// assert_eq!(scalrand::fast::try_char('b'..'b'), None);
/// assert_eq!(scalrand::fast::try_char('b'..='b'), Some('b'));
/// ```
#[inline]
pub fn try_char(range: impl RangeBounds<char>) -> Option<char> {
    draw::try_thread_range(range)
}
