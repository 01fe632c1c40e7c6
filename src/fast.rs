//! Fast, **non-cryptographic** random numbers with fastrand 2's API: one
//! [wyrand](crate::fastprng::WyRand) stream per thread (the `fastrand` crate's generator), a
//! thread-local load and store per word, which a `fork()`ed child never continues; and a
//! per-CPU generator shared by every thread ([`global`], [`with`], [`fill_u64`]).
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
//! As in fastrand, [`seed`] sets the calling thread's stream: the one-liners that follow on
//! that thread are [`Rng::with_seed`]'s outputs.
//!
//! What differs is the fork: fastrand's thread-local is copied into a `fork()`ed child, which
//! then repeats the parent's numbers; here it is not (see "Fork" below).
//!
//! # Engine
//! wyrand, fastrand's generator: a one-word state, advanced by a constant and mixed by one
//! 128-bit multiply. It passes the usual batteries (QUALITY.md). Use
//! [`fastprng::PerCpu`](crate::fastprng::PerCpu) when you need xoroshiro128's jump-apart streams or
//! bit-exactness with the reference C code.
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
//! - Where the OS hands a fork child memory zeroed (Linux 4.14 and later, Android), each
//!   thread has a mark: a byte of a `static` in
//!   [wipe-on-fork memory](crate::glossary#wipe-on-fork-memory)
//!   ([`StaticWipe`](crate::os::wipe::StaticWipe)), armed before the thread's state is
//!   seeded in this process image and checked again after, then before each draw. In a fork
//!   child it reads zero, and the forking thread seeds its state afresh with 8 bytes from the
//!   OS before it draws. Which thread owns which mark is kept in ordinary memory, which a
//!   child inherits, so no thread the child starts takes the forking thread's mark. No
//!   allocation and no lock on any draw (a thread's first draw claims its mark with signals
//!   blocked, and arranges its release at thread exit with a pthread key's value, which glibc
//!   keeps in the thread's descriptor for its first 32 keys and musl and bionic for all):
//!   safe in a signal handler and in the child of a raw `SYS_fork` of a multi-threaded
//!   program. Up to 8,192 threads hold a mark at once; a fork child also keeps the marks of
//!   its parent's other threads, which do not exist there. Elsewhere the thread's state
//!   records the [fork generation](crate::os::fork::generation) it was seeded in and every
//!   draw compares it, in a call of its own: where the OS cannot wipe memory (Apple's
//!   systems, older kernels, qemu-user emulation), where a key's value would allocate (the
//!   BSDs' C libraries, a glibc key past the 32nd), and where no mark is left. A [`seed`]ed
//!   stream is not continued in a child either. On targets without `fork` (Windows,
//!   WebAssembly) every thread takes a mark, given back by a thread-local destructor. A
//!   program that loads scalrand in a library it later unloads (`dlclose`) must not do so
//!   while threads that drew from it live: their exit runs the key's destructor.
//! - The mark is plain memory, so in a run of inlined draws (a loop in the caller) the
//!   compiler checks it once and keeps the state in a register, as it keeps fastrand's. A
//!   fork that lands inside such a run can only come from a signal handler (any call the
//!   loop makes ends the run); the child then finishes the run on the state in the register,
//!   its remaining words the parent's too, and the next draw after it reseeds. Likewise a
//!   signal handler that draws in the middle of such a run starts from the state the run
//!   last stored (the run's words are repeated there), as a handler that uses fastrand does.
//!   A signal handler that forks in the middle of a single draw leaves that draw to finish in
//!   the child with the parent's state: that one word is the parent's too (as it would be
//!   with any fork that lands after a word is computed).
//! - The [`global`] [`PerCpuWyRand`] (which [`with`] and [`fill_u64`] use) is a per-process [`os::global::Global`](crate::os::global::Global): it records the fork
//!   generation it was built in, and a child sees a different one and builds its own, from the
//!   OS. A `&'static` handle from [`global`] taken *before* the fork keeps pointing at the
//!   pre-fork generator, which stays valid (it is never freed); take a new one in the child.
//!   Nothing is locked while either is built, so a fork in the middle of the first call leaves
//!   a child that simply builds it again.
//!
//! A [`Rng`] is a value like any other: a child continues its parent's copy.
//!
//! **Children that share memory.** A `vfork()` child runs on its parent thread's stack and
//! thread-locals while that thread waits, so it continues the thread's stream and the parent
//! thread resumes after what the child drew: nothing repeats. A child made with the raw
//! `clone(CLONE_VM)` system call *without* `CLONE_SETTLS` (not `vfork`), which runs beside
//! its parent thread on the same thread-locals, shares that thread's stream as it shares
//! `errno`: both may draw the same word. The per-CPU [`global`] generator (and the
//! cryptographic root functions) keep every word distinct there too (`tests/memory_sharing_children.rs`).
//!
//! # Cost
//! A one-liner is fastrand's work plus the mark's check: a thread-local load, a load of the
//! mark and a compare, made once for a run of inlined draws, in which the state stays in a
//! register from draw to draw (a range draw, its redraws included, and `shuffle` run on a
//! copy of the stream in one visit). Where a thread has no mark, each draw instead compares
//! the fork generation in a call of its own. The per-CPU [`global`] generator costs
//! a restartable sequence per word (Linux x86_64 with glibc ≥ 2.35; one uncontended
//! compare-exchange elsewhere) and shares one state per CPU among any number of threads;
//! [`with`] and [`fill_u64`] take its current CPU's slot once for many numbers.
//! `BENCHMARKS.md` has the measured ratios.
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
//! [`PerCpuWyRand`]: crate::fastprng::PerCpuWyRand

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
pub use source::{fill_u64, get_seed, global, seed, with};
