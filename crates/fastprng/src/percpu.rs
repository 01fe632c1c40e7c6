//! `PerCpu<E, P>`: one generator state per CPU, shared by `&self`, no lock on the fast path;
//! generic over the [engine](crate::Engine) (xoroshiro128 family, wyrand) and over where the
//! states live ([`Heap`], or [`Static`](crate::Static) wipe-on-fork memory for a `static`).
//!
//! This is the OpenZFS SPL scheme (commit 0b43696e66, "random_get_pseudo_bytes() need not
//! provide cryptographic strength entropy", 2016): `random_get_pseudo_bytes()` cost 3.16% of a
//! file system's CPU time behind one global lock, and 0.06% with one generator per CPU, CPU
//! `i` seeded with the master state jumped `i + 1` times so no two CPUs' streams overlap for
//! 2^64 outputs.
//!
//! # Slots
//! A `PerCpu` built for `n` CPUs holds `2n` states, each on its own cache line pair
//! ([`CachePadded`](scalrand_os::pad::CachePadded)):
//! - *rseq slots* `0..n`: slot `i` is the engine's `i + 1`-th slot state taken from the master
//!   (xoroshiro128: the master jumped `i + 1` times; wyrand: the master's output `i + 1`),
//!   used by the restartable-sequence fast path for CPU `i`;
//! - *try-lock slots* `n..2n`: slot `n + i` is the master's `n + i + 1`-th, used by the
//!   fallback path and by [`with_cpu`](PerCpu::with_cpu), each guarded by a try-lock flag.
//!
//! The two sets are disjoint, so a thread on the fast path and a thread on the fallback path
//! can never touch the same state.
//!
//! # Paths
//! - **rseq** (Linux x86_64 with glibc ≥ 2.35, which registers rseq for every thread): the
//!   CPU number is read and the state updated inside a restartable sequence; no atomic
//!   instruction, no lock. Why this is sound is argued in the `rseq` module's docs (source).
//! - **try-lock** (everywhere else, and for threads without rseq): start at the slot of the
//!   CPU [`scalrand_os::cpu::current`] names (slot 0 without `std`), take its
//!   [`Lock`](scalrand_os::Lock) with one compare-exchange; if it is busy, move to the next
//!   slot. A caller never parks. After [`BUSY_SWEEPS`](crate::BUSY_SWEEPS) sweeps that found
//!   every slot busy (more callers than slots with their holders preempted, or a caller
//!   re-entering the same `PerCpu` from inside [`with_cpu`](PerCpu::with_cpu)), it stops
//!   spinning: [`with_cpu`](PerCpu::with_cpu) returns [`Error::SlotsBusy`], `next_u64` takes
//!   one step of the *overflow stream* (a SplitMix64 finaliser over a per-instance atomic
//!   Weyl counter: well distributed, not bit-exact with any slot), and `with_current` (so
//!   also `fill_u64` and `fill_bytes` over 64 bytes) runs on a generator seeded from two of
//!   its words.
//! - **after `fork()`**: the child holds a copy of every slot, so it continues the parent's
//!   streams unless it builds a new `PerCpu` (the `scalrand::fast` global does that by
//!   itself) or the states live in [`Static`](crate::Static) memory. A try-lock slot that
//!   another parent thread held at the fork would never be released in the child; a caller
//!   that finds every slot busy takes over one whose holder belongs to an earlier fork
//!   generation ([`scalrand_os::fork`]: a wipe-on-fork word that changes in every child,
//!   however it was forked), so the child never deadlocks on them.
//! - **explicit CPU** (`no_std` hosts, kernels): [`with_cpu`](PerCpu::with_cpu) takes the
//!   CPU the caller says it runs on (as kernel code with preemption disabled knows it), so the
//!   slot's flag is uncontended.

use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;

use rand_core::TryRng;

use crate::engine::Engine;
use crate::locked::LockedSlots;
use crate::placement::{Heap, Placement};
use crate::{Error, layout::RseqSlot};

/// Which path [`PerCpu::next_u64`] takes on this thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastPath {
    /// Restartable sequence on the current CPU's slot: no atomic instruction.
    Rseq,
    /// Cache-padded try-lock slot, starting at the current CPU's.
    TryLock,
}

/// One generator state per CPU, shared by `&self` across threads: an [`Engine`] (a
/// xoroshiro128 variant, or [`WyRand`](crate::WyRand) as [`PerCpuWyRand`](crate::PerCpuWyRand))
/// and a [`Placement`] ([`Heap`], the default; [`Static`](crate::Static) is the wipe-on-fork
/// placement of [`StaticWyRand`](crate::StaticWyRand)). See the module docs for the slots and
/// paths.
///
/// `PerCpu` is **not cryptographic**: its output is predictable from a few outputs. Use it
/// where a fast, well-distributed stream is what matters (hash seeds, sampling, jitter, tests),
/// never for keys, tokens or nonces that an adversary must not guess.
///
/// ```
/// use scalrand_fastprng::{PerCpu, Xoroshiro128PlusPlus};
/// use rand_core::SeedableRng;
///
/// let rng = PerCpu::with_cpus(Xoroshiro128PlusPlus::seed_from_u64(7), 4).unwrap();
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| {
///             let x: u64 = rng.next_u64();
///             let mut buf = [0u8; 13];
///             rng.fill_bytes(&mut buf);
///             x
///         });
///     }
/// });
/// ```
pub struct PerCpu<E: Engine, P: Placement = Heap> {
    rseq: P,
    locked: P::Locked<E>,
}

impl<E: Engine, P: Placement> PerCpu<E, P> {
    /// How many of this instance's restartable sequences the kernel aborted (preemption,
    /// migration or a signal landing inside one), each then run again from the top.
    ///
    /// A diagnostic: it shows the fast path's restart protocol at work (the crate's tests use
    /// it to check that their signal storms really abort sections). Always 0 where the rseq
    /// fast path does not exist (see [`FastPath`]), and before a [`Static`](crate::Static)
    /// placement maps its slots.
    pub fn rseq_restarts(&self) -> u64 {
        self.rseq.first().map_or(0, RseqSlot::restarts)
    }
}

impl<E: Engine> PerCpu<E> {
    /// One state per CPU of this machine (`sysconf(_SC_NPROCESSORS_CONF)`), from `master`.
    ///
    /// # Errors
    /// [`Error::TooManySlots`] if the machine reports more than [`MAX_CPUS`](crate::MAX_CPUS) CPUs.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn new(master: E) -> Result<Self, Error> {
        Self::with_cpus(master, scalrand_os::cpu::possible())
    }

    /// One state per CPU of this machine, from a master state drawn from the OS.
    ///
    /// # Errors
    /// [`Error::Entropy`] if the OS entropy source fails; as [`new`](Self::new) otherwise.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn from_os() -> Result<Self, Error>
    where
        E: rand_core::SeedableRng,
    {
        let mut seed = E::Seed::default();
        scalrand_os::entropy::fill(seed.as_mut()).map_err(|_| Error::Entropy)?;
        // An all-zero xoroshiro128 draw (probability 2^-128) is remapped by `from_seed`.
        Self::new(E::from_seed(seed))
    }

    /// `cpus` rseq slots and `cpus` try-lock slots, in that order, each the next slot state
    /// taken from `master` (see the module docs).
    ///
    /// # Errors
    /// [`Error::NoSlots`] for `cpus == 0`, [`Error::TooManySlots`] above [`MAX_CPUS`](crate::MAX_CPUS).
    pub fn with_cpus(master: E, cpus: usize) -> Result<Self, Error> {
        LockedSlots::<E>::check_cpus(cpus)?;
        let mut cur = master;
        let mut rseq = Vec::with_capacity(cpus);
        for _ in 0..cpus {
            rseq.push(E::next_slot(&mut cur).to_slot());
        }
        let mut locked = Vec::with_capacity(cpus);
        for _ in 0..cpus {
            locked.push(E::next_slot(&mut cur));
        }
        Ok(Self {
            rseq: Heap::new(rseq),
            locked: LockedSlots::new(locked),
        })
    }

    /// Turns the rseq fast path off for this instance: every call takes the try-lock path.
    /// For comparisons and tests; the fast path is always at least as fast.
    #[must_use]
    pub fn force_try_lock(mut self) -> Self {
        self.rseq.off = None;
        self
    }

    /// The number of CPUs this instance has slots for.
    pub fn cpus(&self) -> usize {
        self.rseq.slots.len()
    }

    /// Which path [`next_u64`](Self::next_u64) takes on the calling thread.
    pub fn fast_path(&self) -> FastPath {
        if self.rseq.off.is_some() && scalrand_os::cpu::current().is_some_and(|c| c < self.cpus()) {
            return FastPath::Rseq;
        }
        FastPath::TryLock
    }

    /// How many words of the overflow stream this instance has drawn: callers that found
    /// every try-lock slot busy for [`BUSY_SWEEPS`](crate::BUSY_SWEEPS) sweeps (one word per
    /// such `next_u64`, two per such `with_current`). A diagnostic, like `rseq_restarts`: a
    /// growing count means more threads than slots with holders preempted, or re-entrant use.
    pub fn overflow_draws(&self) -> u64 {
        self.locked.overflow_draws()
    }

    /// The next `u64` from the calling CPU's state.
    #[inline]
    pub fn next_u64(&self) -> u64 {
        if let Some(off) = self.rseq.off {
            // SAFETY: `off` came from `rseq::offset()`; `self.rseq.slots` is `cpus()`
            // `RseqSlot`s made by `E::to_slot` (in `CachePadded`, the stride the layout's
            // const assertions check), reached only through the engine's rseq step and
            // `&mut self`. `cpus() <= MAX_CPUS < u32::MAX`.
            let v = unsafe { E::rseq_step(off, self.rseq.base(), self.cpus() as u32) };
            if let Some(v) = v {
                return v;
            }
        }
        self.next_u64_locked()
    }

    /// The try-lock path, out of line so that the rseq path stays small enough to inline
    /// into the caller's loop with no register spills.
    #[cold]
    #[inline(never)]
    fn next_u64_locked(&self) -> u64 {
        self.locked
            .with_locked(self.locked.home(), E::next_word)
            .unwrap_or_else(|| self.locked.overflow_step())
    }

    /// The next `u32`: the half of a [`next_u64`](Self::next_u64) that the engine's own
    /// `next_u32` hands out (the high half for
    /// [`Xoroshiro128Plus`](crate::Xoroshiro128Plus), the low half otherwise).
    #[inline]
    pub fn next_u32(&self) -> u32 {
        E::u32_of(self.next_u64())
    }

    /// Fills `dest` with little-endian output words of the calling CPU's state.
    ///
    /// Requests of up to 64 bytes take one word per step from the fast path; longer ones take
    /// one try-lock slot for the whole request ([`with_current`](Self::with_current)), so the
    /// bytes of one call are one contiguous run of one stream.
    pub fn fill_bytes(&self, dest: &mut [u8]) {
        if dest.len() <= 64 {
            crate::fill_via_u64(dest, || self.next_u64());
        } else {
            self.with_current(|r| crate::fill_via_u64(dest, || r.next_word()));
        }
    }

    /// Runs `f` on CPU `cpu`'s try-lock state, as a `no_std` host that knows which CPU it runs
    /// on would (e.g. kernel code with preemption disabled). If another caller holds that
    /// slot, `f` gets the next free slot instead: it never shares a state, and it stops
    /// waiting after [`BUSY_SWEEPS`](crate::BUSY_SWEEPS) sweeps that found every slot busy.
    ///
    /// # Errors
    /// [`Error::CpuOutOfRange`] when `cpu >= self.cpus()`; [`Error::SlotsBusy`] when every
    /// slot stayed busy, e.g. when `f` itself calls `with_cpu` on a one-slot `PerCpu`.
    pub fn with_cpu<T>(&self, cpu: usize, f: impl FnOnce(&mut E) -> T) -> Result<T, Error> {
        self.locked.with_cpu(cpu, f)
    }

    /// Runs `f` on the calling CPU's try-lock state: a loop inside `f` runs at an owned
    /// generator's speed, for one lock round trip in all (the scoped form of
    /// [`next_u64`](Self::next_u64) for many numbers at once). If every slot stays busy (a
    /// re-entrant call), `f` gets a generator seeded from the overflow stream instead, so
    /// this never fails and never spins unboundedly.
    #[inline]
    pub fn with_current<T>(&self, f: impl FnOnce(&mut E) -> T) -> T {
        self.locked.with_current(f)
    }

    /// Fills `dest` with successive outputs of the calling CPU's stream, at an owned
    /// generator's speed (one lock round trip; see [`with_current`](Self::with_current)).
    pub fn fill_u64(&self, dest: &mut [u64]) {
        self.with_current(|r| {
            for x in dest.iter_mut() {
                *x = r.next_word();
            }
        });
    }

    /// Every slot's state, rseq slots first, then try-lock slots (see the module docs):
    /// `(s0, s1)` for xoroshiro128, the state word for wyrand. Takes `&mut self`, so no
    /// thread is using them.
    pub fn slot_states(&mut self) -> Vec<E::State> {
        let mut v: Vec<E::State> = self
            .rseq
            .slots
            .iter_mut()
            .map(|s| E::slot_state(s))
            .collect();
        v.extend(self.locked.states_mut().map(|r| r.own_state()));
        v
    }
}

#[cfg(all(feature = "std", not(scalrand_loom)))]
impl PerCpu<crate::WyRand, crate::Static> {
    /// No slots yet: the first call maps them (see [`Static`](crate::Static)).
    pub(crate) const fn unmapped() -> Self {
        Self {
            rseq: crate::Static::new(),
            locked: (),
        }
    }

    /// The next `u64` of the calling CPU's stream, or `None` where the
    /// [`Static`](crate::Static) slots cannot serve the calling thread.
    #[inline]
    pub fn try_next_u64(&self) -> Option<u64> {
        match self.rseq.step() {
            crate::rseq::Seeded::Advanced(s) => Some(crate::WyRand::mix(s)),
            _ => self.rseq.next_slow(),
        }
    }

    /// [`try_next_u64`](Self::try_next_u64), with `fallback()` answering where the slots
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
        match self.rseq.step() {
            crate::rseq::Seeded::Advanced(s) => crate::WyRand::mix(s),
            _ => self.slow_or(fallback),
        }
    }

    #[cold]
    #[inline(never)]
    fn slow_or(&self, fallback: impl FnOnce() -> u64) -> u64 {
        self.rseq.next_slow().unwrap_or_else(fallback)
    }

    /// Whether the slots are mapped in wipe-on-fork memory (after a first call that could map
    /// them).
    pub fn is_mapped(&self) -> bool {
        self.rseq.is_mapped()
    }

    /// Slot `cpu`'s state: for tests that account for every output of a slot. Not API.
    #[doc(hidden)]
    pub fn __slot_state(&self, cpu: usize) -> Option<u64> {
        self.rseq
            .slot(cpu)
            .map(|s| s.word().load(core::sync::atomic::Ordering::Relaxed))
    }
}

impl<E: Engine, P: Placement> fmt::Debug for PerCpu<E, P> {
    /// Prints the engine and the placement's shape, never a state.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PerCpu")
            .field("generator", &E::LABEL)
            .field("slots", &self.rseq)
            .finish_non_exhaustive()
    }
}

/// `TryRng` (hence rand_core's `Rng`) for the generator and for a shared reference to it,
/// which is what threads hold.
macro_rules! try_rng {
    ($($t:ty),+) => {$(
        impl<E: Engine> TryRng for $t {
            type Error = Infallible;
            #[inline]
            fn try_next_u32(&mut self) -> Result<u32, Infallible> {
                Ok(PerCpu::next_u32(self))
            }
            #[inline]
            fn try_next_u64(&mut self) -> Result<u64, Infallible> {
                Ok(PerCpu::next_u64(self))
            }
            #[inline]
            fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
                PerCpu::fill_bytes(self, dest);
                Ok(())
            }
        }
    )+};
}

try_rng!(PerCpu<E>, &PerCpu<E>);
