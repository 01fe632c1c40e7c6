//! Where a [`PerCpu`](crate::PerCpu)'s restartable-sequence slots live: [`Heap`] (allocated
//! and seeded when the generator is built) or [`Static`] (mapped on first use in wipe-on-fork
//! memory and seeded there, for a `static`). Both hold [`RseqSlot`]s, one per CPU, stepped by
//! the same restartable sequences.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use scalrand_os::pad::CachePadded;

use crate::engine::Engine;
use crate::layout::RseqSlot;
use crate::locked::LockedSlots;

/// Where a [`PerCpu`](crate::PerCpu)'s per-CPU slots live: [`Heap`] or [`Static`]. Sealed.
pub trait Placement: sealed::Placement {}

pub(crate) mod sealed {
    /// The crate-private side of a [`Placement`](super::Placement).
    pub trait Placement: core::fmt::Debug {
        /// What backs the try-lock path for engine `E`: the try-lock slots, or nothing (the
        /// caller's fallback answers instead).
        type Locked<E: crate::engine::Engine>;

        /// Slot 0, if there are slots yet.
        fn first(&self) -> Option<&crate::layout::RseqSlot>;
    }
}

/// Slots on the heap, allocated and seeded when the generator is built: one rseq slot per CPU
/// and one try-lock slot per CPU (see [`PerCpu`](crate::PerCpu)). The default placement.
pub struct Heap {
    pub(crate) slots: Box<[CachePadded<RseqSlot>]>,
    /// `Some(__rseq_offset)` when the rseq path is on for this instance.
    pub(crate) off: Option<isize>,
}

impl Heap {
    /// Slots holding `states`, with the rseq path on where it runs.
    pub(crate) fn new(states: Vec<RseqSlot>) -> Self {
        let mut slots = Vec::with_capacity(states.len());
        for state in states {
            slots.push(CachePadded::new(state));
        }
        Self {
            slots: slots.into_boxed_slice(),
            off: crate::rseq::offset(),
        }
    }

    /// The slots' address, for the restartable sequences.
    #[inline(always)]
    pub(crate) fn base(&self) -> *mut u8 {
        self.slots.as_ptr().cast_mut().cast()
    }
}

impl sealed::Placement for Heap {
    type Locked<E: Engine> = LockedSlots<E>;

    fn first(&self) -> Option<&RseqSlot> {
        self.slots.first().map(|s| &**s)
    }
}

impl Placement for Heap {}

impl fmt::Debug for Heap {
    /// The shape, never a state.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Heap")
            .field("cpus", &self.slots.len())
            .field("rseq", &self.off.is_some())
            .finish_non_exhaustive()
    }
}

#[cfg(all(feature = "std", not(scalrand_loom)))]
pub use wiped::Static;

#[cfg(all(feature = "std", not(scalrand_loom)))]
mod wiped {
    use core::fmt;
    use core::ptr;
    use core::sync::atomic::{AtomicBool, AtomicIsize, AtomicPtr, AtomicUsize, Ordering};

    use scalrand_os::pad::CachePadded;
    use scalrand_os::wipe::WipeOnFork;

    use crate::WyRand;
    use crate::engine::Engine;
    use crate::layout::RseqSlot;
    use crate::rseq::{self, Seeded};

    /// Slots for a `static`, fork-safe with no per-call check: per-CPU [`WyRand`] states in
    /// [wipe-on-fork](scalrand_os::wipe::WipeOnFork) memory, mapped on first use.
    ///
    /// A `static` generator that a fork child must not share with its parent usually compares
    /// a fork generation on every call, or holds a pointer to a per-process instance that a
    /// child replaces: loads the call depends on. Here the slots themselves are wipe-on-fork
    /// memory: every fork child (`fork()`, a raw `SYS_fork`, `clone` without `CLONE_VM`)
    /// receives them zeroed from the kernel before any of its code runs, and a zero state
    /// means "not seeded". The restartable sequence that steps a slot (the wyrand step plus a
    /// test for zero) therefore serves the parent's streams only in the parent; the child's
    /// first call on each CPU seeds that slot from a master state, itself wiped in the child
    /// and drawn afresh from the OS.
    ///
    /// The hot path reads three words of the `static` (the slots' address, their count and
    /// glibc's `__rseq_offset`) and the thread's rseq area, steps the slot with one store, and
    /// mixes outside the section: no atomic read-modify-write, no fork check, no pointer to
    /// follow.
    ///
    /// It serves only where the restartable sequence runs (Linux x86_64 with glibc's rseq
    /// registration) and the kernel honours `MADV_WIPEONFORK` (Linux ≥ 4.14), and only threads
    /// whose rseq area is registered and whose CPU number is below the possible-CPU count;
    /// elsewhere the caller's fallback answers (see [`StaticWyRand`](crate::StaticWyRand)).
    /// A state that reaches 0 by stepping (once in 2^64 steps of a slot) is treated like a
    /// wiped one: the next call seeds it again.
    pub struct Static {
        /// The slots' mapping (never unmapped once published), or null.
        slots: AtomicPtr<u8>,
        /// Slot count, stored before `slots` is published (every initialiser stores the same
        /// value) and read only when `slots` is non-null.
        cpus: AtomicUsize,
        /// glibc's `__rseq_offset`, stored like `cpus`: the hot path reads it here, next to
        /// the other two words, rather than through another crate's `static`.
        off: AtomicIsize,
        /// Set once mapping the slots failed or could not wipe on fork: never try again.
        unavailable: AtomicBool,
    }

    /// How many times the slow path steps, seeding a slot each time it finds one unseeded,
    /// before it gives up for this call (a thread that keeps migrating to unseeded CPUs).
    const SEED_TRIES: usize = 8;

    impl Static {
        /// No slots yet: the first call maps them.
        pub(crate) const fn new() -> Self {
            Self {
                slots: AtomicPtr::new(ptr::null_mut()),
                cpus: AtomicUsize::new(0),
                off: AtomicIsize::new(0),
                unavailable: AtomicBool::new(false),
            }
        }

        /// Whether the slots are mapped (after a first call that could map them).
        pub(crate) fn is_mapped(&self) -> bool {
            !self.slots.load(Ordering::Acquire).is_null()
        }

        /// Slot `cpu`, if the slots are mapped and `cpu` is in range.
        pub(crate) fn slot(&self, cpu: usize) -> Option<&RseqSlot> {
            let base = self.slots.load(Ordering::Acquire);
            if base.is_null() || cpu >= self.cpus.load(Ordering::Relaxed) {
                return None;
            }
            // SAFETY: a published mapping of `cpus` slots of `1 << SHIFT` bytes, never
            // unmapped; `RseqSlot` is `Sync` (its cells are reached by the protocol it
            // documents).
            Some(unsafe { &*base.add(cpu << rseq::SHIFT).cast::<RseqSlot>() })
        }

        /// One step on the calling CPU's slot.
        #[inline(always)]
        pub(crate) fn step(&self) -> Seeded {
            let base = self.slots.load(Ordering::Acquire);
            if base.is_null() {
                return Seeded::NoSlot;
            }
            let (off, cpus) = (
                self.off.load(Ordering::Relaxed),
                self.cpus.load(Ordering::Relaxed) as u32,
            );
            // SAFETY: slots are published only where `rseq::offset()` is `Some`, after its
            // value went into `off`. A non-null `slots` is a published mapping of `cpus`
            // `RseqSlot`s of `1 << SHIFT` bytes (`CachePadded`), never unmapped, whose state
            // words are written only by this step and by `seed`'s compare-exchange from 0; the
            // Acquire load pairs with the publication, which `off` and `cpus` preceded.
            // `cpus <= MAX_CPUS`.
            unsafe { rseq::step_wyrand_seeded(off, base, cpus, WyRand::INCREMENT) }
        }

        /// The next output where the hot path did not serve: maps the slots, seeds the
        /// calling CPU's, and steps again; `None` where they cannot serve this thread.
        #[cold]
        #[inline(never)]
        pub(crate) fn next_slow(&self) -> Option<u64> {
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
            let slots = WipeOnFork::new(n, |_| CachePadded::new(RseqSlot::one_word(0)));
            if !slots.wipes_on_fork() {
                self.unavailable.store(true, Ordering::Relaxed);
                return false;
            }
            // Every initialiser computes the same values; they are stored before any
            // publication.
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

        /// Seeds the unseeded state word at `state` (a compare-exchange from 0, which the
        /// step's protocol allows from any CPU; see `rseq::step_wyrand_seeded`) from the
        /// master state in slot 0, drawing the master from the OS first if it is 0 (first use,
        /// or a fork child).
        fn seed(&self, state: *mut u8) {
            // `seed` runs only after a step found an unseeded slot, so the slots are
            // published.
            let Some(master) = self.slot(0).map(RseqSlot::master) else {
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
            let word = unsafe { &*state.cast::<core::sync::atomic::AtomicU64>() };
            let _ = word.compare_exchange(0, seed, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    impl super::sealed::Placement for Static {
        type Locked<E: Engine> = ();

        fn first(&self) -> Option<&RseqSlot> {
            self.slot(0)
        }
    }

    impl super::Placement for Static {}

    impl fmt::Debug for Static {
        /// Whether the slots are mapped and how many, never a state.
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let mapped = self.is_mapped();
            f.debug_struct("Static")
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

    /// A nonzero master state from the OS; from the time and an address if the OS refuses
    /// (the generator is not secret). Allocates nothing, so a raw `SYS_fork` child may call
    /// it.
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
}
