//! [`StaticWyRand`]: per-CPU wyrand for a `static`, fork-safe with no per-call check.
//!
//! A `static` generator that a fork child must not share with its parent usually compares a
//! fork generation on every call, or holds a pointer to a per-process instance that a child
//! replaces: loads the call depends on. Here the slots themselves are
//! [wipe-on-fork](scalrand_os::wipe::WipeOnFork) memory: every fork child (`fork()`, a raw
//! `SYS_fork`, `clone` without `CLONE_VM`) receives them zeroed from the kernel before any of
//! its code runs, and a zero state means "not seeded". The restartable sequence that steps a
//! slot ([`PerCpuWyRand`](crate::PerCpuWyRand)'s, plus a test for zero) therefore serves the
//! parent's streams only in the parent; the child's first call on each CPU seeds that slot
//! from a master state, itself wiped in the child and drawn afresh from the OS.
//!
//! The hot path reads three words of the `static` (the slots' address, their count and glibc's
//! `__rseq_offset`) and the thread's rseq area, steps the slot with one store, and mixes
//! outside the section: no atomic read-modify-write, no fork check, no pointer to follow.
//!
//! It serves only where the restartable sequence runs (Linux x86_64 with glibc's rseq
//! registration) and the kernel honours `MADV_WIPEONFORK` (Linux ≥ 4.14), and only threads
//! whose rseq area is registered and whose CPU number is below the possible-CPU count.
//! Anywhere else [`try_next_u64`](StaticWyRand::try_next_u64) returns `None` and
//! [`next_u64_or`](StaticWyRand::next_u64_or) calls its fallback, for which the caller uses a
//! [`PerCpuWyRand`](crate::PerCpuWyRand) (as `scalrand::fast` does).
//!
//! A state that reaches 0 by stepping (once in 2^64 steps of a slot) is treated like a wiped
//! one: the next call seeds it again.

use core::sync::atomic::{AtomicBool, AtomicIsize, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use core::{fmt, ptr};

use crossbeam_utils::CachePadded;
use scalrand_os::wipe::WipeOnFork;

use crate::WyRand;
use crate::rseq::{self, Seeded};

/// One slot: `[state, restarts, master]` (the abort handler counts aborts in slot 0's
/// `restarts`; `master` is used in slot 0 only), padded to 128 bytes.
type Slot = CachePadded<[AtomicUsize; 3]>;

/// How many times the slow path steps, seeding a slot each time it finds one unseeded, before
/// it gives up for this call (a thread that keeps migrating to unseeded CPUs).
const SEED_TRIES: usize = 8;

/// Per-CPU [`WyRand`] slots in wipe-on-fork memory, for a `static` (see the module docs).
///
/// **Not cryptographic.** The engine of `scalrand::fast::next_u64` where it serves.
///
/// ```
/// use scalrand_fastprng::{PerCpuWyRand, StaticWyRand};
///
/// static RNG: StaticWyRand = StaticWyRand::new();
///
/// fn nibble() -> u64 {
///     // `None` where the restartable sequence does not run: fall back to a per-CPU
///     // generator with try-lock slots. (The top 4 bits: uniform in 0..16, where `% 6`
///     // would favour small values.)
///     RNG.try_next_u64().unwrap_or_else(|| PerCpuWyRand::from_os().unwrap().next_u64()) >> 60
/// }
/// assert!(nibble() < 16);
/// ```
pub struct StaticWyRand {
    /// The slots' mapping (never unmapped once published), or null.
    slots: AtomicPtr<u8>,
    /// Slot count, stored before `slots` is published (every initialiser stores the same
    /// value) and read only when `slots` is non-null.
    cpus: AtomicUsize,
    /// glibc's `__rseq_offset`, stored like `cpus`: the hot path reads it here, next to the
    /// other two words, rather than through another crate's `static`.
    off: AtomicIsize,
    /// Set once mapping the slots failed or could not wipe on fork: never try again.
    unavailable: AtomicBool,
}

impl StaticWyRand {
    /// An instance with no slots yet: the first call maps them. `const`, for a `static`.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            slots: AtomicPtr::new(ptr::null_mut()),
            cpus: AtomicUsize::new(0),
            off: AtomicIsize::new(0),
            unavailable: AtomicBool::new(false),
        }
    }

    /// The next `u64` of the calling CPU's stream, or `None` where this generator cannot serve
    /// the calling thread (see the module docs).
    #[inline]
    pub fn try_next_u64(&self) -> Option<u64> {
        match self.step() {
            Seeded::Advanced(s) => Some(WyRand::mix(s)),
            _ => self.next_slow(),
        }
    }

    /// [`try_next_u64`](Self::try_next_u64), with `fallback()` answering where this generator
    /// cannot serve the calling thread: the same stream, but the hot path returns straight
    /// from the step (no `Option` for the caller to test again) and everything else, the
    /// fallback included, runs out of line.
    ///
    /// ```
    /// use scalrand_fastprng::{PerCpuWyRand, StaticWyRand};
    /// use std::sync::OnceLock;
    ///
    /// static RNG: StaticWyRand = StaticWyRand::new();
    /// static SLOW: OnceLock<PerCpuWyRand> = OnceLock::new();
    ///
    /// /// Where the restartable sequence does not run: a per-CPU generator with try-lock slots.
    /// fn slow() -> u64 {
    ///     SLOW.get_or_init(|| PerCpuWyRand::from_os().unwrap()).next_u64()
    /// }
    ///
    /// let nibble = RNG.next_u64_or(slow) >> 60; // uniform in 0..16
    /// assert!(nibble < 16);
    /// ```
    #[inline]
    pub fn next_u64_or(&self, fallback: impl FnOnce() -> u64) -> u64 {
        match self.step() {
            Seeded::Advanced(s) => WyRand::mix(s),
            _ => self.slow_or(fallback),
        }
    }

    #[cold]
    #[inline(never)]
    fn slow_or(&self, fallback: impl FnOnce() -> u64) -> u64 {
        self.next_slow().unwrap_or_else(fallback)
    }

    /// Whether the slots are mapped in wipe-on-fork memory (after a first call that could map
    /// them).
    pub fn is_mapped(&self) -> bool {
        !self.slots.load(Ordering::Acquire).is_null()
    }

    /// How many restartable sequences of this instance the kernel aborted (preemption,
    /// migration or a signal inside a section); 0 before the slots are mapped. A diagnostic.
    pub fn rseq_restarts(&self) -> u64 {
        self.slot_word(0, 1)
            .map_or(0, |w| w.load(Ordering::Relaxed))
    }

    /// Slot `cpu`'s state: for tests that account for every output of a slot. Not API.
    #[doc(hidden)]
    pub fn __slot_state(&self, cpu: usize) -> Option<u64> {
        self.slot_word(cpu, 0).map(|w| w.load(Ordering::Relaxed))
    }

    /// Word `word` (< 3) of slot `cpu`, if the slots are mapped and `cpu` is in range.
    fn slot_word(&self, cpu: usize, word: usize) -> Option<&AtomicU64> {
        let base = self.slots.load(Ordering::Acquire);
        if base.is_null() || cpu >= self.cpus.load(Ordering::Relaxed) || word >= 3 {
            return None;
        }
        // SAFETY: a published mapping of `cpus` 128-byte slots of three 8-byte words, never
        // unmapped; the words are accessed atomically (or by the rseq step, whose plain
        // loads and stores are single-copy atomic on x86_64).
        Some(unsafe {
            &*base
                .add(cpu << rseq::SHIFT)
                .add(word * 8)
                .cast::<AtomicU64>()
        })
    }

    #[inline(always)]
    fn step(&self) -> Seeded {
        let base = self.slots.load(Ordering::Acquire);
        if base.is_null() {
            return Seeded::NoSlot;
        }
        let (off, cpus) = (
            self.off.load(Ordering::Relaxed),
            self.cpus.load(Ordering::Relaxed) as u32,
        );
        // SAFETY: slots are published only where `rseq::offset()` is `Some`, after its value
        // went into `off`. A non-null `slots` is a published mapping of `cpus` slots of 128
        // bytes (`Slot`, `[state, restarts, ..]`: checked in `map`), never unmapped, whose
        // state words are written only by this step and by `seed`'s compare-exchange from 0;
        // the Acquire load pairs with the publication, which `off` and `cpus` preceded.
        // `cpus <= MAX_CPUS`.
        unsafe { rseq::step_wyrand_seeded(off, base, cpus, WyRand::INCREMENT) }
    }

    #[cold]
    #[inline(never)]
    fn next_slow(&self) -> Option<u64> {
        for _ in 0..SEED_TRIES {
            match self.step() {
                Seeded::Advanced(s) => return Some(WyRand::mix(s)),
                Seeded::Unseeded(state) => self.seed(state),
                Seeded::NoSlot if self.is_mapped() => return None,
                Seeded::NoSlot => {
                    if !self.map() {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// Maps and publishes the slots; false if they cannot be made or do not wipe on fork.
    fn map(&self) -> bool {
        const {
            assert!(!rseq::ACTIVE || core::mem::size_of::<Slot>() == 1 << rseq::SHIFT);
            assert!(core::mem::size_of::<AtomicUsize>() == 8 || !rseq::ACTIVE);
        }
        if self.unavailable.load(Ordering::Relaxed) {
            return false;
        }
        if self.is_mapped() {
            return true;
        }
        let Some(off) = rseq::offset() else {
            self.unavailable.store(true, Ordering::Relaxed);
            return false;
        };
        let n = scalrand_os::cpu::possible().clamp(1, crate::MAX_CPUS);
        let slots = WipeOnFork::new(n, |_| Slot::new([const { AtomicUsize::new(0) }; 3]));
        if !slots.wipes_on_fork() {
            self.unavailable.store(true, Ordering::Relaxed);
            return false;
        }
        // Every initialiser computes the same values; they are stored before any publication.
        self.cpus.store(n, Ordering::Relaxed);
        self.off.store(off, Ordering::Relaxed);
        let p = slots.as_ptr().cast::<u8>().cast_mut();
        if self
            .slots
            .compare_exchange(ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            // Published: readers may hold the address forever, so it is never unmapped.
            core::mem::forget(slots);
        }
        true
    }

    /// Seeds the unseeded state word at `state` (a compare-exchange from 0, which the step's
    /// protocol allows from any CPU; see `rseq::step_wyrand_seeded`) from the master state in
    /// slot 0, drawing the master from the OS first if it is 0 (first use, or a fork child).
    fn seed(&self, state: *mut u8) {
        // `seed` runs only after a step found an unseeded slot, so the slots are published.
        let Some(master) = self.slot_word(0, 2) else {
            return;
        };
        if master.load(Ordering::Relaxed) == 0 {
            let _ = master.compare_exchange(0, os_seed(), Ordering::Relaxed, Ordering::Relaxed);
        }
        let m = master
            .fetch_add(WyRand::INCREMENT, Ordering::Relaxed)
            .wrapping_add(WyRand::INCREMENT);
        let seed = WyRand::mix(m).max(1);
        // SAFETY: `state` is the 8-byte-aligned state word of a published slot (the step
        // returned it); see the compare-exchange rule above.
        let word = unsafe { &*state.cast::<AtomicU64>() };
        let _ = word.compare_exchange(0, seed, Ordering::Relaxed, Ordering::Relaxed);
    }
}

impl Default for StaticWyRand {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for StaticWyRand {
    /// Prints whether the slots are mapped and how many, never a state.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mapped = self.is_mapped();
        f.debug_struct("StaticWyRand")
            .field("mapped", &mapped)
            .field(
                "cpus",
                &if mapped {
                    self.cpus.load(Ordering::Relaxed)
                } else {
                    0
                },
            )
            .finish_non_exhaustive()
    }
}

/// A nonzero master state from the OS; from the time and an address if the OS refuses (the
/// generator is not secret). Allocates nothing, so a raw `SYS_fork` child may call it.
fn os_seed() -> u64 {
    let mut b = [0u8; 8];
    let s = match scalrand_os::entropy::fill(&mut b) {
        Ok(()) => u64::from_le_bytes(b),
        Err(_) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            t ^ (ptr::from_ref(&b) as u64).rotate_left(32)
        }
    };
    s.max(1)
}
