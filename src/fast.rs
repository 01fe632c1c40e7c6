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
//!
//! [`PerCpuWyRand`]: scalrand_fastprng::PerCpuWyRand
//! [`StaticWyRand`]: scalrand_fastprng::StaticWyRand

mod draw;
mod free;
mod rng;
mod source;
#[cfg(test)]
mod tests;

// Every one-liner, as fastrand names it.
pub use free::*;
pub use rng::Rng;
pub(crate) use source::next_word;
pub use source::{__static_slots_mapped, fill_u64, get_seed, global, seed, with};
