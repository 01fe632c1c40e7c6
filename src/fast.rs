//! Fast, **non-cryptographic** random numbers shared by every thread, with fastrand 2's API:
//! a lazily seeded global [`PerCpuWyRand`], one [wyrand](scalrand_fastprng::WyRand) state per
//! CPU (the `fastrand` crate's generator), updated in a restartable sequence that commits with
//! one store.
//!
//! # fastrand, renamed
//! A program moving from fastrand 2 renames `fastrand::` to `scalrand::fast::` and nothing
//! else: every free function of fastrand has its name, signature and panics here ([`u8()`]
//! … [`u128()`], [`i8()`] … [`i128()`], [`usize()`], [`isize()`], [`char()`] over a range;
//! [`bool()`], [`f32()`], [`f32_inclusive()`], [`f64()`], [`f64_inclusive()`],
//! [`alphabetic`], [`alphanumeric`], [`lowercase`], [`uppercase`], [`digit`], [`choice`],
//! [`choose_multiple`], [`shuffle`], [`fill`], [`seed`], [`get_seed`]), and [`Rng`] is
//! `fastrand::Rng`: the same constructors and methods, and for a seed the same outputs, bit
//! for bit, method by method. A range one-liner panics on an empty range as fastrand's does,
//! with its message; each has a `try_` form that returns `None` instead ([`try_u32`] …).
//!
//! What differs is where the one-liners' state lives: one per CPU, not one per thread. Which
//! CPU answers a call is the scheduler's choice, so the one-liners' outputs cannot be replayed
//! from a seed as a fastrand thread's can (see [`seed`]); [`Rng::with_seed`] is the
//! reproducible stream.
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
//! tokens and nonces use the crate root: [`crate::fill_bytes`], [`crate::random`],
//! [`crate::rng`] (the ChaCha20 node pools). No function here has the name and signature of
//! one there.
//!
//! # Fork
//! A `fork()`ed child gets new streams, seeded from fresh OS entropy on its first call, so
//! parent and child never continue the same streams (with a copied state they would, as
//! `fastrand`'s thread-local or a copied `SmallRng` do), however the child was forked:
//! `fork()`, a raw `SYS_fork`, from inside another library's atfork handler.
//!
//! - The one-liners, and [`fill`] of up to 64 bytes, draw their words from a
//!   [`StaticWyRand`]: per-CPU states in wipe-on-fork memory, which the kernel hands every
//!   child zeroed; a zero state is seeded on first use from a master state that is wiped the
//!   same way. No check runs per call.
//! - Where that cannot serve (no glibc rseq registration, a kernel before 4.14, another OS),
//!   for [`with`], [`fill_u64`] and longer fills, and in a process that called [`seed`] or
//!   [`get_seed`], the calls use the [`global`] [`PerCpuWyRand`], a per-process
//!   [`scalrand_os::global::Global`]: it records the
//!   [fork generation](scalrand_os::fork::generation) it was built in, and a child sees a
//!   different one and builds its own. Calls reach it through one word of wipe-on-fork memory
//!   where the OS has it, and compare the generation otherwise. A `&'static` handle from
//!   [`global`] taken *before* the fork keeps pointing at the pre-fork generator, which stays
//!   valid (it is never freed); take a new one in the child. Nothing is locked while either
//!   is built, so a fork in the middle of the first call leaves a child that simply builds it
//!   again.
//!
//! A [`Rng`] is a value like any other: a child continues its parent's copy.
//!
//! # Cost
//! On Linux x86_64 with glibc ≥ 2.35 each output word is a restartable sequence on the current
//! CPU's slot: no lock, no atomic read-modify-write, no pointer to follow. Elsewhere, and
//! after [`seed`] or [`get_seed`], it is one uncontended compare-exchange on a cache-padded
//! per-CPU slot. For many numbers at once, [`with`] and [`fill_u64`] take the current CPU's
//! slot once, and an owned [`Rng`] takes none. `BENCHMARKS.md` has the measured ratios.
//!
//! ```
//! use scalrand::fast;
//!
//! let die = fast::u8(1..=6);
//! assert!((1..=6).contains(&die));
//! let heads = fast::bool();
//! let unit = fast::f64(); // in [0, 1)
//! let mut deck: Vec<u32> = (0..52).collect();
//! fast::shuffle(&mut deck);
//! let card = fast::choice(&deck);
//! let hand = fast::choose_multiple(&deck, 5);
//! let name: String = std::iter::repeat_with(fast::alphanumeric).take(8).collect();
//! let mut buf = [0u8; 20];
//! fast::fill(&mut buf);
//! assert_eq!(fast::try_u32(5..5), None); // `fast::u32(5..5)` panics, as fastrand's does
//!
//! // A reproducible stream: fastrand's `Rng::with_seed`, output for output.
//! let mut rng = fast::Rng::with_seed(42);
//! let roll = rng.u8(1..=6);
//! assert_eq!(fast::Rng::with_seed(42).u8(1..=6), roll);
//! # let _ = (heads, unit, card, hand, name);
//! ```

use core::ops::RangeBounds;
// A `static` flag: loom's atomics have no `const` constructor, and the facade is not
// loom-modelled (its atomics-bearing paths are, in scalrand-fastprng and scalrand-os).
use core::sync::atomic::{AtomicBool, Ordering};

use std::vec::Vec;

use scalrand_fastprng::{PerCpuWyRand, StaticWyRand, WyRand};
use scalrand_os::global::Global;

use rand_core::SeedableRng;

mod draw;
mod rng;

use draw::Draw;
pub use rng::Rng;

/// The global generator: one per process image, built on first use (see "Fork" in the module
/// docs).
static GLOBAL: Global<PerCpuWyRand> = Global::new();

/// The global generator, seeded from the OS on first use (and on first use in a `fork()`ed
/// child: see the module docs). `&PerCpuWyRand` is a rand_core `Rng`, so every `rand` helper
/// runs on it.
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

/// The per-word generator of the one-liners (see "Fork" in the module docs).
static FAST: StaticWyRand = StaticWyRand::new();

/// Set by the first [`seed`] or [`get_seed`]: from then on the one-liners draw from the
/// [`global`] generator's try-lock slots, the ones those two act on, instead of [`FAST`]'s
/// (whose states only a restartable sequence may write).
static SEEDED: AtomicBool = AtomicBool::new(false);

/// The next output word of the calling CPU's stream: what every one-liner draws from.
#[inline]
pub(crate) fn next_word() -> u64 {
    if SEEDED.load(Ordering::Relaxed) {
        return seeded_word();
    }
    FAST.next_u64_or(global_word)
}

/// [`next_word`] where [`FAST`] cannot serve: out of line, so the hot path stays small enough
/// to inline into a caller's loop.
#[cold]
#[inline(never)]
fn global_word() -> u64 {
    global().next_u64()
}

/// [`next_word`] after [`seed`] or [`get_seed`]: the calling CPU's try-lock slot.
#[cold]
#[inline(never)]
fn seeded_word() -> u64 {
    global().with_current(WyRand::next_raw)
}

/// The calling CPU's stream, as a source of words for fastrand's methods.
struct CallingCpu;

impl Draw for CallingCpu {
    #[inline]
    fn gen_u64(&mut self) -> u64 {
        next_word()
    }
}

/// Whether the one-liners run on the wipe-on-fork per-CPU slots in this process (after a
/// first call). For tests.
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

/// Fills `dest` with uniformly distributed `u64`s from the calling CPU's stream (one slot
/// round trip). Not cryptographic.
#[inline]
pub fn fill_u64(dest: &mut [u64]) {
    global().fill_u64(dest)
}

/// Sets the state of the calling CPU's stream to `seed`: fastrand's `seed`, per CPU. Not
/// cryptographic.
///
/// fastrand's `seed(s)` makes the calling thread's next draws those of
/// `Rng::with_seed(s)`. Here the state belongs to a CPU, not to the thread: `seed(s)` sets
/// the state of the [`global`] generator's slot for the CPU the caller runs on (or, if
/// another thread holds that slot at that instant, of the next free one), and the next draw
/// made on that CPU, by any thread, continues from it. So `seed(7)` then `u32(..)` gives
/// `Rng::with_seed(7).u32(..)` only if the thread stays on that CPU and no other thread draws
/// there in between; the streams of other CPUs are untouched. For a stream that replays, own
/// a [`Rng::with_seed`].
///
/// From the first `seed` or [`get_seed`] in a process on, the one-liners draw from the slots
/// these two act on (the ones [`with`] uses: one uncontended compare-exchange per word)
/// rather than from the restartable-sequence slots, whose states cannot be set from outside
/// their sequence.
///
/// ```
/// scalrand::fast::seed(7);
/// let x = scalrand::fast::u32(..); // on this CPU's stream, from state 7 if undisturbed
/// # let _ = x;
/// ```
pub fn seed(seed: u64) {
    SEEDED.store(true, Ordering::Relaxed);
    with(|w| *w = WyRand::from_state(seed));
}

/// The current state of the calling CPU's stream: fastrand's `get_seed`, per CPU. Not
/// cryptographic.
///
/// The state of the [`global`] generator's slot for the CPU the caller runs on (or the next
/// free one, if another thread holds it at that instant); [`seed`] with it, on the same CPU,
/// sets the stream back to this point. Like [`seed`], it moves the one-liners of this process
/// onto those slots.
///
/// ```
/// let state = scalrand::fast::get_seed();
/// # let _ = state;
/// ```
#[must_use]
pub fn get_seed() -> u64 {
    SEEDED.store(true, Ordering::Relaxed);
    with(|w| w.state())
}

/// A uniformly distributed `bool`. Not cryptographic.
#[inline]
pub fn bool() -> bool {
    CallingCpu.bool()
}

/// A letter, `A-Z` or `a-z`, each equally likely. Not cryptographic.
#[inline]
pub fn alphabetic() -> char {
    CallingCpu.alphabetic()
}

/// A letter or digit, `A-Z`, `a-z` or `0-9`, each equally likely. Not cryptographic.
///
/// ```
/// let id: String = std::iter::repeat_with(scalrand::fast::alphanumeric).take(12).collect();
/// assert!(id.chars().all(|c| c.is_ascii_alphanumeric()));
/// ```
#[inline]
pub fn alphanumeric() -> char {
    CallingCpu.alphanumeric()
}

/// A lowercase letter, `a-z`, each equally likely. Not cryptographic.
#[inline]
pub fn lowercase() -> char {
    CallingCpu.lowercase()
}

/// An uppercase letter, `A-Z`, each equally likely. Not cryptographic.
#[inline]
pub fn uppercase() -> char {
    CallingCpu.uppercase()
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
    CallingCpu.digit(base)
}

/// A uniformly distributed `f32` in `[0, 1)` (63 random bits scaled, as fastrand 2.4 on). Not
/// cryptographic.
#[inline]
pub fn f32() -> f32 {
    CallingCpu.f32()
}

/// A uniformly distributed `f32` in `[0, 1]`: [`f32()`] without its redraw of 1. Not
/// cryptographic.
#[inline]
pub fn f32_inclusive() -> f32 {
    CallingCpu.f32_inclusive()
}

/// A uniformly distributed `f64` in `[0, 1)` (63 random bits scaled, as fastrand 2.4 on). Not
/// cryptographic.
#[inline]
pub fn f64() -> f64 {
    CallingCpu.f64()
}

/// A uniformly distributed `f64` in `[0, 1]`: [`f64()`] without its redraw of 1. Not
/// cryptographic.
#[inline]
pub fn f64_inclusive() -> f64 {
    CallingCpu.f64_inclusive()
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
    CallingCpu.choice(iter)
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
    CallingCpu.choose_multiple(source, amount)
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
    CallingCpu.shuffle(slice)
}

/// Fills `slice` with random bytes: fastrand's `fill`. Not cryptographic: for keys and
/// nonces, [`crate::fill_bytes`] or rand's [`crate::fill`], its namesake at the crate root.
///
/// Up to 64 bytes take one word per 8 bytes from the calling CPU's stream; longer slices take
/// the CPU's slot once for the whole slice ([`with`]).
#[inline]
pub fn fill(slice: &mut [u8]) {
    if slice.len() <= 64 {
        Draw::fill(&mut CallingCpu, slice)
    } else {
        with(|w| Draw::fill(w, slice))
    }
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
            draw::range(&mut CallingCpu, range)
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
            draw::try_range(&mut CallingCpu, range)
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
    draw::range(&mut CallingCpu, range)
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
    draw::try_range(&mut CallingCpu, range)
}

#[cfg(test)]
mod tests {
    use std::vec::Vec;

    #[test]
    fn outputs_vary_and_fill_is_complete() {
        let a = super::u64(..);
        let b = super::u64(..);
        assert_ne!(a, b);
        for len in [1000, 64, 63, 9] {
            let mut buf = [0u8; 1000];
            super::fill(&mut buf[..len]);
            // n random bytes hold about n/256 zeros; n/20 or more would mean a broken fill.
            let zeros = buf[..len].iter().filter(|&&x| x == 0).count();
            assert!(zeros < len / 20 + 2, "{len}: {zeros} zeros");
            assert!(
                buf[len..].iter().all(|&x| x == 0),
                "{len}: wrote past the slice"
            );
        }
    }

    scalrand_os::cfg_rseq! {
        if {
            /// Where glibc registers rseq (and the kernel wipes on fork), the one-liners run
            /// on the static per-CPU slots, not on the global.
            #[test]
            fn one_liners_use_the_static_slots_where_rseq_runs() {
                let _ = super::u64(..);
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
                .map(|_| s.spawn(|| (0..1000).map(|_| super::u64(..)).collect::<Vec<_>>()))
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
            let d = super::u32(1..=6);
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
            seen[(super::i8(..) as u8) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "some i8 never drawn");
        let mut top = [false; 6];
        for _ in 0..10_000 {
            top[usize::from(super::u8(250..=255) - 250)] = true;
        }
        assert_eq!(top, [true; 6]);
        for _ in 0..1000 {
            let v = super::i64(-3..2);
            assert!((-3..2).contains(&v), "{v}");
            let w = super::isize(isize::MIN..isize::MIN + 2);
            assert!(w == isize::MIN || w == isize::MIN + 1);
            let x = super::i128(i128::MAX - 1..);
            assert!(x >= i128::MAX - 1);
            let c = super::char('\u{d7ff}'..='\u{e000}');
            assert!(c == '\u{d7ff}' || c == '\u{e000}', "{c:?}");
        }
        assert_eq!(super::u64(5..6), 5);
        assert_eq!(super::u64(u64::MAX..), u64::MAX);
        let _ = super::u64(..);
        assert_eq!(super::usize(..=0), 0);
        assert_eq!(super::try_u32(5..5), None);
        assert_eq!(super::try_u32(5..=5), Some(5));
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = super::try_i32(3..=2);
        assert_eq!(reversed, None);
        assert_eq!(
            super::try_u8((core::ops::Bound::Excluded(255), core::ops::Bound::Unbounded)),
            None
        );
        assert_eq!(super::try_i16(..i16::MIN), None);
        assert_eq!(super::try_char(..'\0'), None);
        assert_eq!(super::try_char('\u{d7ff}'..'\u{e000}'), Some('\u{d7ff}'));
    }

    #[test]
    #[should_panic(expected = "empty range: Included(5)..Excluded(5)")]
    fn an_empty_range_panics_as_fastrands_does() {
        let _ = super::u32(5..5);
    }

    #[test]
    #[should_panic(expected = "base cannot be larger than 36")]
    fn a_base_above_36_panics_as_fastrands_does() {
        let _ = super::digit(37);
    }

    #[test]
    fn characters_come_from_their_sets() {
        for _ in 0..1000 {
            assert!(super::alphabetic().is_ascii_alphabetic());
            assert!(super::alphanumeric().is_ascii_alphanumeric());
            assert!(super::lowercase().is_ascii_lowercase());
            assert!(super::uppercase().is_ascii_uppercase());
            assert!(super::digit(10).is_ascii_digit());
            assert!(matches!(super::digit(36), '0'..='9' | 'a'..='z'));
            assert_eq!(super::digit(1), '0');
        }
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
            assert!((0.0..=1.0).contains(&super::f64_inclusive()));
            assert!((0.0..=1.0).contains(&super::f32_inclusive()));
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
        // Every item equally often in a sample of 2 of 4, drawn 40,000 times.
        let mut counts = [0u64; 4];
        for _ in 0..40_000 {
            let pair = super::choose_multiple(0..4usize, 2);
            assert_eq!(pair.len(), 2);
            assert_ne!(pair[0], pair[1]);
            for i in pair {
                counts[i] += 1;
            }
        }
        let x = chi_square(&counts);
        assert!(x < 35.0, "chi2 = {x}, counts {counts:?}");
        assert_eq!(super::choice(core::iter::empty::<u8>()), None);
        let mut buf = [0u8; 100];
        super::fill(&mut buf);
        assert!(buf.iter().any(|&b| b != 0));
    }
}
