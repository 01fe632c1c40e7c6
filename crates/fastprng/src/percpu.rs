//! `PerCpu<R>`: one xoroshiro128 state per CPU, shared by `&self`, no lock on the fast path.
//!
//! This is the OpenZFS SPL scheme (commit 0b43696e66, "random_get_pseudo_bytes() need not
//! provide cryptographic strength entropy", 2016): `random_get_pseudo_bytes()` cost 3.16% of a
//! file system's CPU time behind one global lock, and 0.06% with one generator per CPU, CPU
//! `i` seeded with the master state jumped `i + 1` times so no two CPUs' streams overlap for
//! 2^64 outputs.
//!
//! # Slots
//! A `PerCpu` built for `n` CPUs holds `2n` states, each on its own cache line pair
//! ([`CachePadded`]):
//! - *rseq slots* `0..n`: slot `i` = master jumped `i + 1` times, used by the restartable-
//!   sequence fast path for CPU `i`;
//! - *try-lock slots* `n..2n`: slot `n + i` = master jumped `n + i + 1` times, used by the
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
//!   slot. A caller never parks. After [`BUSY_SWEEPS`](crate::BUSY_SWEEPS) sweeps that found every slot busy
//!   (more callers than slots with their holders preempted, or a caller re-entering the same
//!   `PerCpu` from inside [`with_cpu`](PerCpu::with_cpu)), it stops spinning:
//!   [`with_cpu`](PerCpu::with_cpu) returns [`Error::SlotsBusy`], and `next_u64`/`fill_bytes`
//!   take one step of the *overflow stream*: a SplitMix64 finaliser over a per-instance
//!   atomic Weyl counter (well distributed, not bit-exact with any xoroshiro slot).
//! - **after `fork()`**: the child holds a copy of every slot, so it continues the parent's
//!   streams unless it builds a new `PerCpu` (the `scalrand::fast` global does that by
//!   itself). A try-lock slot that another parent thread held at the fork would never be
//!   released in the child; a caller that finds every slot busy takes over one whose holder
//!   belongs to an earlier fork generation ([`scalrand_os::fork`]: a wipe-on-fork word that
//!   changes in every child, however it was forked), so the child never deadlocks on them.
//! - **explicit CPU** (`no_std` hosts, kernels): [`with_cpu`](PerCpu::with_cpu) takes the
//!   CPU the caller says it runs on (as kernel code with preemption disabled knows it), so the
//!   slot's flag is uncontended.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;

use crossbeam_utils::CachePadded;
use rand_core::TryRng;

use crate::locked::{LockedSlots, SlotRng};
use crate::{Error, Xoroshiro128};

impl<R: Xoroshiro128> SlotRng for R {
    fn spare(a: u64, b: u64) -> Self {
        // An odd `s1` is never the zero state, the only one `from_state` refuses.
        match R::from_state(a, b | 1) {
            Ok(r) => r,
            Err(_) => unreachable_nonzero(),
        }
    }

    fn repair(&mut self, salt: u64) {
        // All-zero is the engine's only invalid state (a torn store could leave it).
        if self.state() == (0, 0)
            && let Ok(fresh) = R::from_state(0x9e37_79b9_7f4a_7c15, salt)
        {
            *self = fresh;
        }
    }
}

/// Which path [`PerCpu::next_u64`] takes on this thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastPath {
    /// Restartable sequence on the current CPU's slot: no atomic instruction.
    Rseq,
    /// Cache-padded try-lock slot, starting at the current CPU's.
    TryLock,
}

/// A state updated only by the rseq path: `restarts`, then `cur` (the byte offset of the
/// active `(s0, s1)` buffer, [`BUF_A`](crate::layout::BUF_A) or
/// [`BUF_B`](crate::layout::BUF_B)), then the two buffers; the inactive one is the next
/// state's scratch space (see the `rseq` module). `restarts` counts, in slot 0 only, the
/// sections the kernel aborted (the abort handler's `lock inc`). The padding words keep every
/// word a section touches clear of the rseq area's low address bits (see `layout`).
///
/// Plain `core` cells even under loom: only the assembly and `&mut PerCpu` touch them, which
/// loom does not model, and the assembly needs this exact layout.
#[repr(C)]
struct RseqSlot {
    restarts: core::sync::atomic::AtomicUsize,
    /// Up to [`HOT`](crate::layout::HOT) whatever the width of `usize` and the alignment of
    /// `u64` (4 on i686).
    _pad0: [u8; crate::layout::HOT - core::mem::size_of::<usize>()],
    cur: core::cell::UnsafeCell<u64>,
    _pad1: [u64; 3],
    a: core::cell::UnsafeCell<[u64; 2]>,
    _pad2: [u64; 2],
    b: core::cell::UnsafeCell<[u64; 2]>,
}

impl RseqSlot {
    fn new(s0: u64, s1: u64) -> Self {
        Self {
            restarts: core::sync::atomic::AtomicUsize::new(0),
            _pad0: [0; crate::layout::HOT - core::mem::size_of::<usize>()],
            cur: core::cell::UnsafeCell::new(crate::layout::BUF_A as u64),
            _pad1: [0; 3],
            a: core::cell::UnsafeCell::new([s0, s1]),
            _pad2: [0; 2],
            b: core::cell::UnsafeCell::new([0; 2]),
        }
    }

    /// The active state. Needs exclusive access (the caller holds `&mut PerCpu`).
    fn state(&self) -> (u64, u64) {
        // SAFETY: the caller has exclusive access (see above).
        let cur = unsafe { *self.cur.get() };
        // SAFETY: as above.
        let [s0, s1] = unsafe {
            if cur == crate::layout::BUF_A as u64 {
                *self.a.get()
            } else {
                *self.b.get()
            }
        };
        (s0, s1)
    }
}

/// One xoroshiro128 generator per CPU, shared by `&self` across threads.
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
pub struct PerCpu<R: Xoroshiro128> {
    rseq: Box<[CachePadded<RseqSlot>]>,
    locked: LockedSlots<R>,
    /// `Some(__rseq_offset)` when the rseq path is on for this instance.
    rseq_off: Option<isize>,
}

// SAFETY: every `UnsafeCell` of an rseq slot is reached either through the rseq protocol,
// which confines slot `i` to threads running on CPU `i` one at a time, or through `&mut self`;
// the try-lock slots are `Lock`s (Sync for `R: Send`). `R: Send` lets a state be used from any
// thread.
unsafe impl<R: Xoroshiro128> Sync for PerCpu<R> {}
// SAFETY: `PerCpu` owns its states; moving it moves plain data (`R: Send`).
unsafe impl<R: Xoroshiro128> Send for PerCpu<R> {}

impl<R: Xoroshiro128> fmt::Debug for PerCpu<R> {
    /// Prints the shape, never a state.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PerCpu")
            .field("generator", &R::NAME)
            .field("cpus", &self.cpus())
            .field("fast_path", &self.fast_path())
            .finish_non_exhaustive()
    }
}

impl<R: Xoroshiro128> PerCpu<R> {
    /// One state per CPU of this machine (`sysconf(_SC_NPROCESSORS_CONF)`), from `master`.
    ///
    /// # Errors
    /// [`Error::TooManySlots`] if the machine reports more than [`MAX_CPUS`](crate::MAX_CPUS) CPUs.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn new(master: R) -> Result<Self, Error> {
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
        R: rand_core::SeedableRng<Seed = [u8; 16]>,
    {
        let mut seed = [0u8; 16];
        scalrand_os::entropy::fill(&mut seed).map_err(|_| Error::Entropy)?;
        // An all-zero draw (probability 2^-128) is remapped by `from_seed`.
        Self::new(R::from_seed(seed))
    }

    /// `cpus` states: CPU `i`'s fast-path state is `master` jumped `i + 1` times (see the
    /// module docs for the try-lock slots after them).
    ///
    /// # Errors
    /// [`Error::NoSlots`] for `cpus == 0`, [`Error::TooManySlots`] above [`MAX_CPUS`](crate::MAX_CPUS).
    pub fn with_cpus(master: R, cpus: usize) -> Result<Self, Error> {
        LockedSlots::<R>::check_cpus(cpus)?;
        let mut cur = master;
        let mut rseq = Vec::with_capacity(cpus);
        for _ in 0..cpus {
            cur.jump();
            let (s0, s1) = cur.state();
            rseq.push(CachePadded::new(RseqSlot::new(s0, s1)));
        }
        let mut locked = Vec::with_capacity(cpus);
        for _ in 0..cpus {
            cur.jump();
            locked.push(cur.clone());
        }
        Ok(Self {
            rseq: rseq.into_boxed_slice(),
            locked: LockedSlots::new(locked),
            rseq_off: rseq_offset(),
        })
    }

    /// Turns the rseq fast path off for this instance: every call takes the try-lock path.
    /// For comparisons and tests; the fast path is always at least as fast.
    #[must_use]
    pub fn force_try_lock(mut self) -> Self {
        self.rseq_off = None;
        self
    }

    /// The number of CPUs this instance has slots for.
    pub fn cpus(&self) -> usize {
        self.rseq.len()
    }

    /// Which path [`next_u64`](Self::next_u64) takes on the calling thread.
    pub fn fast_path(&self) -> FastPath {
        if self.rseq_off.is_some() && scalrand_os::cpu::current().is_some_and(|c| c < self.cpus()) {
            return FastPath::Rseq;
        }
        FastPath::TryLock
    }

    /// How many of this instance's restartable sequences the kernel aborted (preemption,
    /// migration or a signal landing inside one), each then run again from the top.
    ///
    /// A diagnostic: it shows the fast path's restart protocol at work (the crate's tests use
    /// it to check that their signal storms really abort sections). Always 0 where the rseq
    /// fast path does not exist (see [`FastPath`]).
    pub fn rseq_restarts(&self) -> u64 {
        self.rseq[0]
            .restarts
            .load(core::sync::atomic::Ordering::Relaxed) as u64
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
        if let Some(off) = self.rseq_off {
            // SAFETY: `off` came from `rseq::offset()`; `self.rseq` is `cpus()` slots of
            // `CachePadded<RseqSlot>` (128 bytes each, the layout checked by the const assertions
            // below, `cur` initialised to `BUF_A`) reached only through
            // the rseq step functions and `&mut self`. `cpus() <= MAX_CPUS < u32::MAX`.
            let v = unsafe {
                R::rseq_step(
                    off,
                    self.rseq.as_ptr().cast_mut().cast(),
                    self.cpus() as u32,
                )
            };
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
            .with_locked(self.locked.home(), |r| r.next_raw())
            .unwrap_or_else(|| self.locked.overflow_step())
    }

    /// The next `u32` (the high half for [`Xoroshiro128Plus`](crate::Xoroshiro128Plus),
    /// the low half otherwise, as each type's own `next_u32`).
    #[inline]
    pub fn next_u32(&self) -> u32 {
        R::u32_of(self.next_u64())
    }

    /// Fills `dest` with little-endian output words of the calling CPU's state.
    ///
    /// Short requests take one word per step from the fast path; longer ones take one slot
    /// for the whole request (try-lock path), so the bytes of one call are one contiguous run
    /// of one stream.
    pub fn fill_bytes(&self, dest: &mut [u8]) {
        if dest.len() <= 64 {
            crate::fill_via_u64(dest, || self.next_u64());
        } else if self
            .locked
            .with_locked(self.locked.home(), |r| {
                crate::fill_via_u64(dest, || r.next_raw())
            })
            .is_none()
        {
            crate::fill_via_u64(dest, || self.locked.overflow_step());
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
    pub fn with_cpu<T>(&self, cpu: usize, f: impl FnOnce(&mut R) -> T) -> Result<T, Error> {
        self.locked.with_cpu(cpu, f)
    }

    /// Runs `f` on the calling CPU's try-lock state: a loop inside `f` runs at an owned
    /// generator's speed, for one lock round trip in all (the scoped form of
    /// [`next_u64`](Self::next_u64) for many numbers at once). If every slot stays busy (a
    /// re-entrant call), `f` gets a generator seeded from the overflow stream instead, so
    /// this never fails and never spins unboundedly.
    #[inline]
    pub fn with_current<T>(&self, f: impl FnOnce(&mut R) -> T) -> T {
        self.locked.with_current(f)
    }

    /// Fills `dest` with successive outputs of the calling CPU's stream, at an owned
    /// generator's speed (one lock round trip; see [`with_current`](Self::with_current)).
    pub fn fill_u64(&self, dest: &mut [u64]) {
        self.with_current(|r| {
            for x in dest.iter_mut() {
                *x = r.next_raw();
            }
        });
    }

    /// Every slot's state, rseq slots first, then try-lock slots (see the module docs).
    /// Takes `&mut self`, so no thread is using them.
    pub fn slot_states(&mut self) -> Vec<(u64, u64)> {
        let mut v = Vec::with_capacity(2 * self.cpus());
        for slot in self.rseq.iter() {
            // `&mut self` excludes every other access to the slot.
            v.push(slot.state());
        }
        v.extend(self.locked.states_mut().map(|r| r.state()));
        v
    }
}

/// `from_state(_, odd)` never sees `(0, 0)`.
#[cold]
fn unreachable_nonzero() -> ! {
    #[allow(clippy::panic)]
    {
        panic!("an odd s1 is never the zero state")
    }
}

fn rseq_offset() -> Option<isize> {
    // The commit store and the address arithmetic assume this exact slot layout.
    const {
        assert!(
            !crate::rseq::ACTIVE
                || core::mem::size_of::<CachePadded<RseqSlot>>() == 1 << crate::rseq::SHIFT
        );
        assert!(core::mem::align_of::<CachePadded<RseqSlot>>() >= 8);
        assert!(
            core::mem::align_of::<CachePadded<RseqSlot>>().is_multiple_of(32)
                || !crate::rseq::ACTIVE
        );
        assert!(core::mem::offset_of!(RseqSlot, restarts) == crate::layout::RESTARTS);
        assert!(core::mem::offset_of!(RseqSlot, cur) == crate::layout::HOT);
        assert!(core::mem::offset_of!(RseqSlot, a) == crate::layout::BUF_A);
        assert!(core::mem::offset_of!(RseqSlot, b) == crate::layout::BUF_B);
    }
    crate::rseq::offset()
}

impl<R: Xoroshiro128> TryRng for &PerCpu<R> {
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

impl<R: Xoroshiro128> TryRng for PerCpu<R> {
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
