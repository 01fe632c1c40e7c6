//! rand 0.10's free functions (`rand::random`, `random_iter`, `random_range`, `random_bool`,
//! `random_ratio`, `fill`; rand's `src/lib.rs`), with the same signatures and panics, drawing
//! from the **cryptographically secure** global generator ([`rng`], a [`SecureRng`]) where
//! rand's draw from its thread-local `ThreadRng`.
//!
//! Each is rand's own `RngExt` method (or `Fill::fill_slice`) on a [`SecureRng`], as rand's
//! are on a `ThreadRng`: the same sampling code, so the same values for the same generator
//! words, and the same panics with the same messages.

use rand::distr::uniform::{SampleRange, SampleUniform};
use rand::distr::{Distribution, Iter, StandardUniform};
use rand::{Fill, RngExt};

use crate::{SecureRng, rng};

/// A random value of type `T`, **cryptographically secure**: `rand::random`, drawn from
/// [`rng`] instead of rand's `ThreadRng`.
///
/// Any type rand's `StandardUniform` distribution samples: fixed-width integers, floats (`[0, 1)`),
/// `bool`, `char`, tuples and arrays of them. Shorthand for `scalrand::rng().random()`; a
/// loop can hold the handle instead ([`SecureRng`] is `Copy`).
///
/// ```
/// let token: u128 = scalrand::random();
/// let nonce: [u8; 12] = scalrand::random();
/// let unit: f64 = scalrand::random();
/// assert!((0.0..1.0).contains(&unit));
/// # let _ = (token, nonce);
/// ```
///
/// # Panics
/// If the OS entropy source fails on first use, as [`fill_bytes`](crate::fill_bytes) does.
#[inline]
pub fn random<T>() -> T
where
    StandardUniform: Distribution<T>,
{
    rng().random()
}

/// An endless iterator of random values of type `T`, **cryptographically secure**:
/// `rand::random_iter`, over [`rng`] instead of rand's `ThreadRng` (the iterator owns a
/// [`SecureRng`], so it is `Send`).
///
/// ```
/// let ids: Vec<u64> = scalrand::random_iter().take(4).collect();
/// assert_eq!(ids.len(), 4);
/// ```
///
/// # Panics
/// Each step, as [`random`] does.
#[inline]
pub fn random_iter<T>() -> Iter<StandardUniform, SecureRng, T>
where
    StandardUniform: Distribution<T>,
{
    rng().random_iter()
}

/// A uniformly distributed value in `range`, **cryptographically secure**:
/// `rand::random_range`, drawn from [`rng`]; rand's unbiased integer and float sampling.
///
/// Integers, floats, `char` and `Duration`, from `low..high` and `low..=high` (and `..high`,
/// `..=high` for unsigned integers).
///
/// ```
/// let die: u8 = scalrand::random_range(1..=6);
/// assert!((1..=6).contains(&die));
/// let x = scalrand::random_range(-1.5..1.5);
/// assert!((-1.5..1.5).contains(&x));
/// ```
///
/// # Panics
/// As rand's: if the range is empty ("cannot sample empty range"), or if `high - low`
/// overflows for floats; and as [`random`] if the OS entropy source fails on first use.
#[inline]
#[track_caller]
pub fn random_range<T, R>(range: R) -> T
where
    T: SampleUniform,
    R: SampleRange<T>,
{
    rng().random_range(range)
}

/// `true` with probability `p`, **cryptographically secure**: `rand::random_bool`, drawn
/// from [`rng`] (rand's `Bernoulli`: `p == 1.0` is always `true`, `p == 0.0` always `false`).
///
/// ```
/// assert!(scalrand::random_bool(1.0));
/// assert!(!scalrand::random_bool(0.0));
/// let rare = scalrand::random_bool(1.0 / 1024.0);
/// # let _ = rare;
/// ```
///
/// # Panics
/// As rand's: if `p < 0` or `p > 1` (or NaN), with rand's message
/// `p={p:?} is outside range [0.0, 1.0]`; and as [`random`] if the OS entropy source fails
/// on first use.
#[inline]
#[track_caller]
pub fn random_bool(p: f64) -> bool {
    rng().random_bool(p)
}

/// `true` with probability `numerator / denominator`, **cryptographically secure**:
/// `rand::random_ratio`, drawn from [`rng`]. Exact: `numerator == denominator` is always
/// `true`, `numerator == 0` always `false`.
///
/// ```
/// let two_in_three = scalrand::random_ratio(2, 3);
/// assert!(scalrand::random_ratio(7, 7));
/// assert!(!scalrand::random_ratio(0, 7));
/// # let _ = two_in_three;
/// ```
///
/// # Panics
/// As rand's: if `denominator == 0` or `numerator > denominator`, with rand's message
/// `p={numerator}/{denominator} is outside range [0.0, 1.0]`; and as [`random`] if the OS
/// entropy source fails on first use.
#[inline]
#[track_caller]
pub fn random_ratio(numerator: u32, denominator: u32) -> bool {
    rng().random_ratio(numerator, denominator)
}

/// Fills `dest` with random values, **cryptographically secure**: `rand::fill`, drawn from
/// [`rng`]; any slice of a type rand's `Fill` covers (`u8` … `u128`, `i8` … `i128` and their
/// `Wrapping`s).
///
/// Not [`fast::fill`](crate::fast::fill), fastrand's namesake, which is not cryptographic.
/// For bytes this is [`fill_bytes`](crate::fill_bytes); a slice of wider integers is filled
/// as rand fills it: its bytes from the generator, each value read little-endian.
///
/// ```
/// let mut ids = [0u32; 8];
/// scalrand::fill(&mut ids[..]);
/// let mut salt = [0u8; 16];
/// scalrand::fill(&mut salt);
/// assert_ne!(salt, [0u8; 16]);
/// ```
///
/// # Panics
/// As [`random`], if the OS entropy source fails on first use.
#[inline]
#[track_caller]
pub fn fill<T: Fill>(dest: &mut [T]) {
    Fill::fill_slice(dest, &mut rng())
}
