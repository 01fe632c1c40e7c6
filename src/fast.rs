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
//!   [`PerCpuWyRand`], which records the [fork generation](scalrand_os::fork::generation) it
//!   was built in; a child sees a different one and builds its own. Calls reach it through
//!   one word of wipe-on-fork memory where the OS has it, and compare the generation
//!   otherwise. A `&'static` handle from [`global`] taken *before* the fork keeps pointing
//!   at the pre-fork generator, which stays valid (it is never freed); take a new one in the
//!   child. Nothing is locked while either is built, so a fork in the middle of the first
//!   call leaves a child that simply builds it again.
//!
//! # Cost
//! On Linux x86_64 with glibc ≥ 2.35 each call is a restartable sequence on the current CPU's
//! slot: no lock, no atomic read-modify-write, and for [`next_u64`] no pointer to follow.
//! Elsewhere it is one uncontended compare-exchange on a cache-padded per-CPU slot. For many
//! numbers at once, [`with`] and [`fill_u64`] take the current CPU's slot once and run at an
//! owned generator's speed. `BENCHMARKS.md` has the measured ratios.
//!
//! ```
//! let a = scalrand::fast::next_u64();
//! let mut buf = [0u8; 20];
//! scalrand::fast::fill_bytes(&mut buf);
//! let dice = scalrand::fast::next_u64() % 6 + 1;
//! assert!((1..=6).contains(&dice));
//! # let _ = a;
//! ```

use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::boxed::Box;

use scalrand_fastprng::{PerCpuWyRand, StaticWyRand, WyRand};

use rand_core::SeedableRng;

/// A generator and the fork generation of the process image that built it.
struct Global {
    generation: usize,
    rng: PerCpuWyRand,
}

/// The global generator; null until the first call. Every non-null value it ever holds comes
/// from `Box::into_raw` in `init` and is never freed (one replaced in a fork child is leaked on
/// purpose, so handles taken before the fork stay valid).
static GLOBAL: AtomicPtr<Global> = AtomicPtr::new(ptr::null_mut());

/// The hot path's shortcut to `GLOBAL`: a pointer to one word of
/// [wipe-on-fork](scalrand_os::wipe::WipeOnFork) memory (never freed) holding the address of
/// this process image's `Global`, or null before the first call and where the OS cannot wipe
/// memory in a fork child.
///
/// The word is only ever set to a `Global` that `global_checked` matched against this process
/// image's fork generation, and the kernel hands every fork child that page zeroed before any
/// of the child's code runs (`fork()`, a raw `SYS_fork`, `clone` without `CLONE_VM` alike).
/// So a nonzero word always names this process image's generator, and the per-call
/// generation check (two dependent loads, a third of a call's cost) is not needed.
static CELL: AtomicPtr<AtomicUsize> = AtomicPtr::new(ptr::null_mut());

/// Set once making `CELL` was tried and the OS cannot wipe memory in a fork child: every
/// call then takes `global_checked`.
static NO_CELL: AtomicBool = AtomicBool::new(false);

/// The global generator, seeded from the OS on first use (and on first use in a `fork()`ed
/// child: see the module docs).
///
/// If the OS entropy source fails (no `getrandom(2)`, a sandbox that forbids it), the master
/// state is derived from the time and addresses instead: still a valid, distinct stream, but
/// one an observer could guess — acceptable for a generator that is never secret anyway.
#[inline]
pub fn global() -> &'static PerCpuWyRand {
    let cell = CELL.load(Ordering::Acquire);
    if !cell.is_null() {
        // SAFETY: a non-null `CELL` points into a wipe-on-fork mapping that is never unmapped
        // (`make_cell` forgets its owner).
        let p = unsafe { &*cell }.load(Ordering::Acquire) as *const Global;
        if !p.is_null() {
            // SAFETY: a nonzero word is a `Global` from `GLOBAL` (see `CELL`): leaked, never
            // freed; the Acquire load pairs with the Release store in `global_slow`.
            return unsafe { &(*p).rng };
        }
    }
    global_slow()
}

/// `global` without (or before) the wipe-on-fork shortcut: the generation-checked global, then
/// the shortcut set to it where the OS offers wipe-on-fork memory.
#[inline(never)]
fn global_slow() -> &'static PerCpuWyRand {
    let mut cell = CELL.load(Ordering::Acquire);
    if cell.is_null() && !NO_CELL.load(Ordering::Relaxed) {
        cell = make_cell();
    }
    if cell.is_null() {
        return &global_checked().rng;
    }
    // The check and the store happen in one process image: with signals blocked, no handler
    // can fork between them and leave the child storing its parent's generator.
    let g = scalrand_os::fork::signals_blocked(|| {
        let g = global_checked();
        // SAFETY: as in `global`. `g` belongs to this process image (`global_checked`).
        unsafe { &*cell }.store(ptr::from_ref(g) as usize, Ordering::Release);
        g
    });
    &g.rng
}

/// Maps the shortcut's word and publishes it in `CELL` (or sets `NO_CELL`); returns `CELL`.
#[cold]
fn make_cell() -> *mut AtomicUsize {
    let wipe = scalrand_os::wipe::WipeOnFork::new(1, |_| AtomicUsize::new(0));
    if !wipe.wipes_on_fork() {
        NO_CELL.store(true, Ordering::Relaxed);
        return ptr::null_mut();
    }
    let word = ptr::from_ref(&wipe[0]).cast_mut();
    match CELL.compare_exchange(ptr::null_mut(), word, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            // Published: the mapping must outlive every reader, so it is never unmapped.
            core::mem::forget(wipe);
            word
        }
        // Another thread published first; ours is unmapped when `wipe` drops.
        Err(theirs) => theirs,
    }
}

/// The generator of this process image, checked against its fork generation.
#[inline]
fn global_checked() -> &'static Global {
    let p = GLOBAL.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: a non-null `GLOBAL` came from `Box::into_raw` and is never freed (see its
        // docs), and the Acquire load pairs with the compare-exchange in `init` that
        // published it.
        let g = unsafe { &*p };
        if g.generation == scalrand_os::fork::generation() {
            return g;
        }
    }
    init(p)
}

/// Builds a generator for this process image and publishes it in place of `seen` (null, or
/// one built by a parent process).
#[cold]
#[inline(never)]
fn init(mut seen: *mut Global) -> &'static Global {
    let generation = scalrand_os::fork::generation();
    let fresh = Box::into_raw(Box::new(Global {
        generation,
        rng: new_generator(),
    }));
    loop {
        match GLOBAL.compare_exchange(seen, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // SAFETY: `fresh` is now the published global, never freed.
            Ok(_) => return unsafe { &*fresh },
            Err(now) => {
                // SAFETY: as in `global`.
                let g = unsafe { &*now };
                if !now.is_null() && g.generation == generation {
                    // Another thread of this process published first: ours was never
                    // shared, so it can be dropped.
                    // SAFETY: `fresh` came from `Box::into_raw` above and nobody else saw it.
                    drop(unsafe { Box::from_raw(fresh) });
                    return g;
                }
                seen = now;
            }
        }
    }
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
/// let mut hits = 0u32;
/// scalrand::fast::with(|rng| {
///     for _ in 0..1000 {
///         hits += u32::from(rng.next_raw() % 6 == 0);
///     }
/// });
/// # let _ = hits;
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

    /// Where glibc registers rseq (and the kernel wipes on fork), `next_u64` runs on the
    /// static per-CPU slots, not on the global.
    #[cfg(all(
        target_os = "linux",
        target_arch = "x86_64",
        target_env = "gnu",
        not(miri)
    ))]
    #[test]
    fn next_u64_uses_the_static_slots_where_rseq_runs() {
        let _ = super::next_u64();
        if scalrand_os::cpu::rseq_cpu().is_some() {
            assert!(super::__static_slots_mapped());
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
}
