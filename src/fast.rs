//! Fast, **non-cryptographic** random numbers shared by every thread: a lazily seeded global
//! [`PerCpuWyRand`]: one [wyrand](scalrand_fastprng::WyRand) state per CPU (the `fastrand`
//! crate's generator), updated in a restartable sequence that commits with one store.
//!
//! # Engine
//! wyrand rather than xoroshiro128++ because its state is one word: the per-CPU step is
//! "read CPU, load, add, store" with the store as the commit, where a two-word xoroshiro state
//! needs a scratch buffer and a third store (`PerCpu`). Both pass the usual batteries
//! (QUALITY.md). Use [`scalrand_fastprng::PerCpu`] when you need xoroshiro128's jump-apart
//! streams or bit-exactness with the reference C code.
//!
//! # Not for secrets
//! Anyone who sees a few outputs can compute every later one. Linux's `prandom_u32` was used
//! for network IDs and ports until that was exploited (CVE-2020-16166); OpenZFS's per-CPU
//! generator, which this follows, is documented as "need not provide cryptographic strength".
//! Use it for sampling, hashing seeds, jitter, randomized algorithms and tests. For keys,
//! tokens and nonces use [`crate::fill_bytes`] (the ChaCha20 node pools) instead.
//!
//! # Fork
//! A `fork()`ed child gets new streams, seeded from fresh OS entropy on its first call, so
//! parent and child never continue the same streams (with a copied state they would, as
//! `fastrand`'s thread-local or a copied `SmallRng` do), however the child was forked:
//! `fork()`, a raw `SYS_fork`, from inside another library's atfork handler.
//!
//! - [`next_u64`], [`next_u32`] and [`fill_bytes`] of up to 64 bytes run on a
//!   [`StaticWyRand`]: per-CPU states in wipe-on-fork memory, which the kernel hands every
//!   child zeroed; a zero state is seeded on first use from a master state that is wiped the
//!   same way. No check runs per call.
//! - Where that cannot serve (no glibc rseq registration, a kernel before 4.14, another OS),
//!   and for [`with`], [`fill_u64`] and longer fills, the calls use the [`global`]
//!   [`PerCpuWyRand`], a per-process [`scalrand_os::global::Global`]: it records the
//!   [fork generation](scalrand_os::fork::generation) it was built in, and a child sees a
//!   different one and builds its own. Calls reach it through one word of wipe-on-fork memory
//!   where the OS has it, and compare the generation otherwise. A `&'static` handle from
//!   [`global`] taken *before* the fork keeps pointing at the pre-fork generator, which stays
//!   valid (it is never freed); take a new one in the child. Nothing is locked while either
//!   is built, so a fork in the middle of the first call leaves a child that simply builds it
//!   again.
//!
//! # Cost
//! On Linux x86_64 with glibc ≥ 2.35 each call is a restartable sequence on the current CPU's
//! slot: no lock, no atomic read-modify-write, and for [`next_u64`] no pointer to follow.
//! Elsewhere it is one uncontended compare-exchange on a cache-padded per-CPU slot. For many
//! numbers at once, [`with`] and [`fill_u64`] take the current CPU's slot once and run at an
//! owned generator's speed. `BENCHMARKS.md` has the measured ratios.
//!
//! # One-liners
//! As in `fastrand`: [`u8()`] to [`u64()`], [`i8()`] to [`i64()`], [`usize()`] and
//! [`isize()`] take a range and draw from it without modulo bias (`None` only for an empty
//! range); [`bool()`], [`f32()`], [`f64()`], [`shuffle`], [`choice`] and [`fill`] do what
//! their names say. There is
//! no `seed`: the per-CPU streams cannot be replayed (which CPU answers is the scheduler's
//! choice). For a reproducible stream own a generator:
//! `scalrand::fastprng::WyRand::from_state(seed)` is `fastrand::Rng::with_seed(seed)`, bit
//! for bit, and every `rand` helper works on it.
//!
//! ```
//! use scalrand::fast;
//!
//! let die = fast::u8(1..=6).unwrap_or(1);
//! assert!((1..=6).contains(&die));
//! let heads = fast::bool();
//! let unit = fast::f64(); // in [0, 1)
//! let mut deck: Vec<u32> = (0..52).collect();
//! fast::shuffle(&mut deck);
//! let card = fast::choice(&deck);
//! let mut buf = [0u8; 20];
//! fast::fill(&mut buf);
//! # let _ = (heads, unit, card);
//! ```

use core::ops::{Bound, RangeBounds};

use scalrand_fastprng::{PerCpuWyRand, StaticWyRand, WyRand};
use scalrand_os::global::Global;

use rand_core::SeedableRng;

use crate::uniform::below_u64;

/// The global generator: one per process image, built on first use (see "Fork" in the module
/// docs).
static GLOBAL: Global<PerCpuWyRand> = Global::new();

/// The global generator, seeded from the OS on first use (and on first use in a `fork()`ed
/// child: see the module docs).
///
/// If the OS entropy source fails (no `getrandom(2)`, a sandbox that forbids it), the master
/// state is derived from the time and addresses instead: still a valid, distinct stream, but
/// one an observer could guess — acceptable for a generator that is never secret anyway.
#[inline]
pub fn global() -> &'static PerCpuWyRand {
    GLOBAL.get_or_init(new_generator)
}

fn new_generator() -> PerCpuWyRand {
    let mut seed = [0u8; 8];
    let master = match scalrand_os::entropy::fill(&mut seed) {
        Ok(()) => WyRand::from_seed(seed),
        Err(_) => WyRand::from_state(weak_seed()),
    };
    match PerCpuWyRand::new(master.clone()) {
        Ok(p) => p,
        // Only `TooManySlots` can fail `new`; one slot per CPU modulo 1024 then.
        Err(_) => match PerCpuWyRand::with_cpus(master, 1024) {
            Ok(p) => p,
            Err(_) => unreachable_slots(),
        },
    }
}

#[cold]
fn unreachable_slots() -> ! {
    // `with_cpus(_, 1024)` fails only for 0 or more than MAX_CPUS (2^20) slots.
    #[allow(clippy::panic)]
    {
        panic!("PerCpuWyRand::with_cpus(_, 1024) cannot fail")
    }
}

fn weak_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let local = 0u8;
    t ^ (core::ptr::from_ref(&local) as u64).rotate_left(32) ^ u64::from(std::process::id())
}

/// The per-call generator of [`next_u64`] (see "Fork" in the module docs).
static FAST: StaticWyRand = StaticWyRand::new();

/// A uniformly distributed `u64` from the calling CPU's stream. Not cryptographic.
#[inline]
pub fn next_u64() -> u64 {
    FAST.next_u64_or(next_u64_global)
}

/// [`next_u64`] where [`FAST`] cannot serve: out of line, so the hot path stays small enough
/// to inline into a caller's loop.
#[cold]
#[inline(never)]
fn next_u64_global() -> u64 {
    global().next_u64()
}

/// A uniformly distributed `u32` from the calling CPU's stream (the low half of a
/// [`next_u64`]). Not cryptographic.
#[inline]
pub fn next_u32() -> u32 {
    next_u64() as u32
}

/// Fills `dest` with uniformly distributed bytes (little-endian output words). Not
/// cryptographic.
#[inline]
pub fn fill_bytes(dest: &mut [u8]) {
    if dest.len() <= 64 {
        let mut chunks = dest.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let n = rest.len();
            rest.copy_from_slice(&next_u64().to_le_bytes()[..n]);
        }
    } else {
        global().fill_bytes(dest)
    }
}

/// Whether [`next_u64`] runs on the wipe-on-fork per-CPU slots in this process (after a first
/// call). For tests.
#[doc(hidden)]
pub fn __static_slots_mapped() -> bool {
    FAST.is_mapped()
}

/// Runs `f` with the calling CPU's generator: a loop inside `f` runs at an owned generator's
/// speed, for one slot round trip in all. Not cryptographic.
///
/// ```
/// use rand::RngExt; // rand's unbiased ranges on the CPU's own `WyRand`
///
/// let mut sixes = 0u32;
/// scalrand::fast::with(|rng| {
///     for _ in 0..1000 {
///         sixes += u32::from(rng.random_range(1..=6) == 6);
///     }
/// });
/// # let _ = sixes;
/// ```
#[inline]
pub fn with<T>(f: impl FnOnce(&mut WyRand) -> T) -> T {
    global().with_current(f)
}

/// Fills `dest` with uniformly distributed `u64`s (one slot round trip). Not cryptographic.
#[inline]
pub fn fill_u64(dest: &mut [u64]) {
    global().fill_u64(dest)
}

/// Same as [`fill_bytes`] (`fastrand::fill`'s name). Not cryptographic.
#[inline]
pub fn fill(dest: &mut [u8]) {
    fill_bytes(dest);
}

/// A uniformly distributed `bool` (the top bit of a [`next_u64`]). Not cryptographic.
#[inline]
pub fn bool() -> bool {
    next_u64() >> 63 == 1
}

/// A uniformly distributed `f64` in `[0, 1)`: 53 random bits, every multiple of `2^-53`
/// equally likely. Not cryptographic.
#[inline]
pub fn f64() -> f64 {
    (next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniformly distributed `f32` in `[0, 1)`: 24 random bits, every multiple of `2^-24`
/// equally likely. Not cryptographic.
#[inline]
pub fn f32() -> f32 {
    (next_u64() >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
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
pub fn shuffle<T>(slice: &mut [T]) {
    for i in (1..slice.len()).rev() {
        // i + 1 <= slice.len() fits in u64, and the answer is at most i.
        let j = below_u64(i as u64 + 1, next_u64) as usize;
        slice.swap(i, j);
    }
}

/// One item of `iter`, each equally likely; `None` when it is empty. Not cryptographic.
///
/// ```
/// let pick = scalrand::fast::choice(["rock", "paper", "scissors"]);
/// assert!(pick.is_some());
/// assert_eq!(scalrand::fast::choice(Vec::<u8>::new()), None);
/// ```
pub fn choice<I>(iter: I) -> Option<I::Item>
where
    I: IntoIterator,
    I::IntoIter: ExactSizeIterator,
{
    let mut it = iter.into_iter();
    let n = it.len();
    if n == 0 {
        return None;
    }
    it.nth(below_u64(n as u64, next_u64) as usize)
}

/// The uniform integer one-liners: `$name(range)` for `$t`, through `$u` (same width,
/// unsigned) and [`below_u64`].
macro_rules! ranges {
    ($($name:ident: $t:ty, $u:ty;)*) => {$(
        #[doc = concat!("A uniformly distributed `", stringify!($t), "` in `range` (`..` for any), without modulo bias;")]
        /// `None` when the range is empty. Not cryptographic.
        ///
        /// ```
        #[doc = concat!("let x = scalrand::fast::", stringify!($name), "(1..=6).unwrap();")]
        /// assert!((1..=6).contains(&x));
        #[doc = concat!("assert_eq!(scalrand::fast::", stringify!($name), "(3..3), None);")]
        /// ```
        #[inline]
        pub fn $name(range: impl RangeBounds<$t>) -> Option<$t> {
            let low = match range.start_bound() {
                Bound::Included(&x) => x,
                Bound::Excluded(&x) => x.checked_add(1)?,
                Bound::Unbounded => <$t>::MIN,
            };
            let high = match range.end_bound() {
                Bound::Included(&x) => x,
                Bound::Excluded(&x) => x.checked_sub(1)?,
                Bound::Unbounded => <$t>::MAX,
            };
            if low > high {
                return None;
            }
            // The number of values, in u64; 0 only for the whole 64-bit range.
            let span = ((high as $u).wrapping_sub(low as $u) as u64).wrapping_add(1);
            let offset = if span == 0 {
                next_u64()
            } else {
                below_u64(span, next_u64)
            };
            // offset < span, so low + offset stays within low..=high.
            Some(low.wrapping_add(offset as $u as $t))
        }
    )*};
}

ranges! {
    u8: u8, u8;
    u16: u16, u16;
    u32: u32, u32;
    u64: u64, u64;
    usize: usize, usize;
    i8: i8, u8;
    i16: i16, u16;
    i32: i32, u32;
    i64: i64, u64;
    isize: isize, usize;
}

#[cfg(test)]
mod tests {
    use std::vec::Vec;

    #[test]
    fn outputs_vary_and_fill_is_complete() {
        let a = super::next_u64();
        let b = super::next_u64();
        assert_ne!(a, b);
        let mut buf = [0u8; 1000];
        super::fill_bytes(&mut buf);
        // 1000 random bytes hold about 4 zeros; 50 or more would mean a broken fill.
        assert!(buf.iter().filter(|&&x| x == 0).count() < 50);
        let _ = super::next_u32();
    }

    scalrand_os::cfg_rseq! {
        if {
            /// Where glibc registers rseq (and the kernel wipes on fork), `next_u64` runs on
            /// the static per-CPU slots, not on the global.
            #[test]
            fn next_u64_uses_the_static_slots_where_rseq_runs() {
                let _ = super::next_u64();
                if scalrand_os::cpu::rseq_cpu().is_some() {
                    assert!(super::__static_slots_mapped());
                }
            }
        }
    }

    #[test]
    fn threads_get_distinct_outputs() {
        let v: Vec<u64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..1000).map(|_| super::next_u64()).collect::<Vec<_>>()))
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut sorted = v.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), v.len());
    }

    /// Pearson's chi-square statistic of observed counts against equal expected counts.
    fn chi_square(counts: &[u64]) -> f64 {
        let n: u64 = counts.iter().sum();
        let e = n as f64 / counts.len() as f64;
        counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
    }

    #[test]
    fn die_rolls_pass_chi_square() {
        let mut counts = [0u64; 6];
        for _ in 0..600_000 {
            let d = super::u32(1..=6).unwrap();
            counts[d as usize - 1] += 1;
        }
        // 5 degrees of freedom: P(chi2 > 40) is about 1e-7.
        let x = chi_square(&counts);
        assert!(x < 40.0, "chi2 = {x}, counts {counts:?}");
    }

    #[test]
    fn ranges_reach_both_ends_and_refuse_empty_ones() {
        let mut seen = [false; 256];
        for _ in 0..100_000 {
            seen[(super::i8(..).unwrap() as u8) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "some i8 never drawn");
        let mut top = [false; 6];
        for _ in 0..10_000 {
            top[usize::from(super::u8(250..=255).unwrap() - 250)] = true;
        }
        assert_eq!(top, [true; 6]);
        for _ in 0..1000 {
            let v = super::i64(-3..2).unwrap();
            assert!((-3..2).contains(&v), "{v}");
            let w = super::isize(isize::MIN..isize::MIN + 2).unwrap();
            assert!(w == isize::MIN || w == isize::MIN + 1);
        }
        assert_eq!(super::u64(5..6), Some(5));
        assert_eq!(super::u64(u64::MAX..), Some(u64::MAX));
        let _ = super::u64(..).unwrap();
        let _ = super::usize(..=0).unwrap();
        assert_eq!(super::u32(5..5), None);
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = super::i32(3..=2);
        assert_eq!(reversed, None);
        assert_eq!(
            super::u8((core::ops::Bound::Excluded(255), core::ops::Bound::Unbounded)),
            None
        );
        assert_eq!(super::i16(..i16::MIN), None);
    }

    #[test]
    fn floats_and_bools_are_in_range_and_centred() {
        let n = 100_000;
        let mut sum = 0.0;
        let mut ones = 0u32;
        for _ in 0..n {
            let x = super::f64();
            assert!((0.0..1.0).contains(&x));
            let y = super::f32();
            assert!((0.0..1.0).contains(&y));
            sum += x;
            ones += u32::from(super::bool());
        }
        // Both means have sd below 0.002 here: 0.01 is 5 sd.
        assert!((sum / f64::from(n) - 0.5).abs() < 0.01, "{sum}");
        assert!(
            (f64::from(ones) / f64::from(n) - 0.5).abs() < 0.01,
            "{ones}"
        );
    }

    #[test]
    fn shuffle_gives_every_order_equally_often() {
        // The 6 orders of 3 items, counted over 60,000 shuffles.
        let mut counts = [0u64; 6];
        for _ in 0..60_000 {
            let mut v = [0u8, 1, 2];
            super::shuffle(&mut v);
            let k = match v {
                [0, 1, 2] => 0,
                [0, 2, 1] => 1,
                [1, 0, 2] => 2,
                [1, 2, 0] => 3,
                [2, 0, 1] => 4,
                [2, 1, 0] => 5,
                other => panic!("not a permutation: {other:?}"),
            };
            counts[k] += 1;
        }
        let x = chi_square(&counts);
        assert!(x < 40.0, "chi2 = {x}, counts {counts:?}");
        let mut empty: [u8; 0] = [];
        super::shuffle(&mut empty);
        let mut one = [7];
        super::shuffle(&mut one);
        assert_eq!(one, [7]);
    }

    #[test]
    fn choice_picks_every_item_and_none_from_nothing() {
        let mut counts = [0u64; 4];
        for _ in 0..40_000 {
            counts[*super::choice(&[0usize, 1, 2, 3]).unwrap()] += 1;
        }
        let x = chi_square(&counts);
        assert!(x < 35.0, "chi2 = {x}, counts {counts:?}");
        assert_eq!(super::choice(core::iter::empty::<u8>()), None);
        let mut buf = [0u8; 100];
        super::fill(&mut buf);
        assert!(buf.iter().any(|&b| b != 0));
    }
}
