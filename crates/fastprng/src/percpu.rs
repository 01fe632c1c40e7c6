//! `PerCpu<R>`: one xoroshiro128 state per CPU, shared by `&self`, no lock on the fast path.
//!
//! This is the OpenZFS SPL scheme (seed `002`): `random_get_pseudo_bytes()` cost 3.16% of a
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
//!   CPU `sched_getcpu()` names (slot 0 without `std`), take its flag with one
//!   compare-exchange; if it is busy, move to the next slot. A caller never blocks and never
//!   parks; it spins only across slots that other threads hold at that instant.
//! - **after `fork()`**: the child holds a copy of every slot, so it continues the parent's
//!   streams unless it builds a new `PerCpu` (the `scalrand::fast` global does that by
//!   itself). A try-lock slot that another parent thread held at the fork would never be
//!   released in the child; a caller that finds every slot busy takes over one whose holder
//!   belongs to an earlier fork generation (`pthread_atfork`, std on Unix), so the child never
//!   deadlocks on them.
//! - **explicit CPU** (`no_std` hosts, kernels): [`with_cpu`](PerCpu::with_cpu) takes the
//!   CPU the caller says it runs on (as kernel code with preemption disabled knows it), so the
//!   slot's flag is uncontended.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;

use crossbeam_utils::CachePadded;
use rand_core::TryRng;

use crate::sync::{AtomicUsize, Ordering, UnsafeCell};
use crate::{Error, MAX_CPUS, Xoroshiro128};

/// Which path [`PerCpu::next_u64`] takes on this thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastPath {
    /// Restartable sequence on the current CPU's slot: no atomic instruction.
    Rseq,
    /// Cache-padded try-lock slot, starting at the current CPU's.
    TryLock,
}

/// A state updated only by the rseq path: `[cur, restarts, a0, a1, b0, b1]`, where `cur` is
/// the byte offset (16 or 32) of the active `(s0, s1)` buffer; the other buffer is the next
/// state's scratch space (see the `rseq` module). `restarts` counts, in slot 0 only, the
/// sections the kernel aborted (the abort handler's `lock inc`).
#[repr(C)]
struct RseqSlot {
    cur: UnsafeCell<u64>,
    restarts: core::sync::atomic::AtomicUsize,
    bufs: UnsafeCell<[u64; 4]>,
}

impl RseqSlot {
    const A: u64 = 16;

    fn new(s0: u64, s1: u64) -> Self {
        Self {
            cur: UnsafeCell::new(Self::A),
            restarts: core::sync::atomic::AtomicUsize::new(0),
            bufs: UnsafeCell::new([s0, s1, 0, 0]),
        }
    }

    /// The active state. Needs exclusive access (the caller holds `&mut PerCpu`).
    fn state(&self) -> (u64, u64) {
        // SAFETY: the caller has exclusive access (see above).
        let cur = self.cur.with_mut(|p| unsafe { *p });
        // SAFETY: as above.
        let b = self.bufs.with_mut(|p| unsafe { *p });
        if cur == Self::A {
            (b[0], b[1])
        } else {
            (b[2], b[3])
        }
    }
}

struct LockedSlot<R> {
    /// 0 when free; `g + 1` while a thread of fork generation `g` holds the slot (see the
    /// `fork` module: a holder from an earlier generation no longer exists).
    busy: AtomicUsize,
    rng: UnsafeCell<R>,
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
    locked: Box<[CachePadded<LockedSlot<R>>]>,
    /// `Some(__rseq_offset)` when the rseq path is on for this instance.
    #[cfg_attr(not(rseq_fast_path), allow(dead_code))]
    rseq_off: Option<isize>,
}

// SAFETY: every `UnsafeCell` is reached either (a) through a locked slot whose `busy` flag the
// accessor holds (acquired with `Acquire`, released with `Release`; taken over only from a
// holder of an earlier fork generation, which does not exist in this process), or (b) through the rseq
// protocol, which confines slot `i` to threads running on CPU `i` one at a time, or (c) through
// `&mut self`. `R: Send` lets a state be used from any thread.
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
    /// [`Error::TooManySlots`] if the machine reports more than [`MAX_CPUS`] CPUs.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn new(master: R) -> Result<Self, Error> {
        Self::with_cpus(master, crate::os::possible_cpus())
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
        getrandom::fill(&mut seed).map_err(|_| Error::Entropy)?;
        // An all-zero draw (probability 2^-128) is remapped by `from_seed`.
        Self::new(R::from_seed(seed))
    }

    /// `cpus` states: CPU `i`'s fast-path state is `master` jumped `i + 1` times (see the
    /// module docs for the try-lock slots after them).
    ///
    /// # Errors
    /// [`Error::NoSlots`] for `cpus == 0`, [`Error::TooManySlots`] above [`MAX_CPUS`].
    pub fn with_cpus(master: R, cpus: usize) -> Result<Self, Error> {
        if cpus == 0 {
            return Err(Error::NoSlots);
        }
        if cpus > MAX_CPUS {
            return Err(Error::TooManySlots { requested: cpus });
        }
        let mut cur = master;
        let mut rseq = Vec::with_capacity(cpus);
        for _ in 0..cpus {
            cur.jump();
            let (s0, s1) = cur.state();
            rseq.push(CachePadded::new(RseqSlot::new(s0, s1)));
        }
        crate::fork::register();
        let mut locked = Vec::with_capacity(cpus);
        for _ in 0..cpus {
            cur.jump();
            locked.push(CachePadded::new(LockedSlot {
                busy: AtomicUsize::new(0),
                rng: UnsafeCell::new(cur.clone()),
            }));
        }
        Ok(Self {
            rseq: rseq.into_boxed_slice(),
            locked: locked.into_boxed_slice(),
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
        #[cfg(rseq_fast_path)]
        if let Some(off) = self.rseq_off {
            if crate::rseq::current_cpu(off).is_some_and(|c| c < self.cpus()) {
                return FastPath::Rseq;
            }
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

    /// The next `u64` from the calling CPU's state.
    #[inline]
    pub fn next_u64(&self) -> u64 {
        #[cfg(rseq_fast_path)]
        if let Some(off) = self.rseq_off {
            // SAFETY: `off` came from `rseq::offset()`; `self.rseq` is `cpus()` slots of
            // `CachePadded<RseqSlot>` (128 bytes each, checked by the const assertion below,
            // `[cur, restarts, a0, a1, b0, b1]` first, `cur` initialised to 16) reached only through
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
        self.with_locked(self.home_slot(), |r| r.next_raw())
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
        } else {
            self.with_locked(self.home_slot(), |r| {
                crate::fill_via_u64(dest, || r.next_raw())
            });
        }
    }

    /// Runs `f` on CPU `cpu`'s try-lock state, as a `no_std` host that knows which CPU it runs
    /// on would (e.g. kernel code with preemption disabled). If another caller holds that
    /// slot, `f` gets the next free slot instead: it never blocks and never shares a state.
    ///
    /// # Errors
    /// [`Error::CpuOutOfRange`] when `cpu >= self.cpus()`.
    pub fn with_cpu<T>(&self, cpu: usize, f: impl FnOnce(&mut R) -> T) -> Result<T, Error> {
        if cpu >= self.cpus() {
            return Err(Error::CpuOutOfRange {
                cpu,
                cpus: self.cpus(),
            });
        }
        Ok(self.with_locked(cpu, f))
    }

    /// Every slot's state, rseq slots first, then try-lock slots (see the module docs).
    /// Takes `&mut self`, so no thread is using them.
    pub fn slot_states(&mut self) -> Vec<(u64, u64)> {
        let mut v = Vec::with_capacity(2 * self.cpus());
        for slot in self.rseq.iter() {
            // `&mut self` excludes every other access to the slot.
            v.push(slot.state());
        }
        for slot in self.locked.iter() {
            // SAFETY: as above.
            v.push(slot.rng.with_mut(|p| unsafe { (*p).state() }));
        }
        v
    }

    /// The try-lock slot to start from: the current CPU's.
    #[inline]
    fn home_slot(&self) -> usize {
        crate::os::current_cpu().unwrap_or(0) % self.cpus()
    }

    /// Takes the first free try-lock slot from `start` on, runs `f` on it, releases it (also
    /// if `f` unwinds).
    #[inline]
    fn with_locked<T>(&self, start: usize, f: impl FnOnce(&mut R) -> T) -> T {
        let n = self.locked.len();
        // Never 0 (free), even if the generation counter ever wrapped.
        let mine = (crate::fork::generation() as usize).wrapping_add(1).max(1);
        let mut i = start % n;
        loop {
            let slot = &self.locked[i];
            if slot
                .busy
                .compare_exchange(0, mine, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return Self::run_locked(slot, f);
            }
            i += 1;
            if i == n {
                i = 0;
                // Every slot was busy at the instant we looked: more callers than slots, or
                // slots orphaned by a fork (held by threads the child does not have).
                if let Some(slot) = self.take_orphan(mine) {
                    return Self::run_locked(slot, f);
                }
                #[cfg(scalrand_loom)]
                loom::thread::yield_now();
                core::hint::spin_loop();
            }
        }
    }

    /// Takes over a slot held by a thread of an earlier fork generation, if there is one.
    /// That thread does not exist in this process, so it will never release the slot or touch
    /// it again; it may have been stopped halfway through a step, so a torn all-zero state is
    /// replaced (the engine's only invalid state).
    #[cold]
    fn take_orphan(&self, mine: usize) -> Option<&LockedSlot<R>> {
        self.locked.iter().find_map(|slot| {
            let held = slot.busy.load(Ordering::Relaxed);
            if held == 0 || held == mine {
                return None;
            }
            slot.busy
                .compare_exchange(held, mine, Ordering::Acquire, Ordering::Relaxed)
                .ok()?;
            // SAFETY: the compare-exchange above made this thread the slot's holder.
            slot.rng.with_mut(|p| unsafe {
                if (*p).state() == (0, 0) {
                    if let Ok(r) = R::from_state(0x9e37_79b9_7f4a_7c15, mine as u64) {
                        *p = r;
                    }
                }
            });
            Some(&**slot)
        })
    }

    /// Runs `f` on a slot this thread holds, then releases it (also if `f` unwinds).
    #[inline]
    fn run_locked<T>(slot: &LockedSlot<R>, f: impl FnOnce(&mut R) -> T) -> T {
        struct Release<'a>(&'a AtomicUsize);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.store(0, Ordering::Release);
            }
        }
        let _release = Release(&slot.busy);
        // SAFETY: the caller holds the slot's `busy` flag, taken with Acquire and released
        // with Release by `_release`: exclusive access to the slot's state.
        slot.rng.with_mut(|p| f(unsafe { &mut *p }))
    }
}

#[cfg(rseq_fast_path)]
fn rseq_offset() -> Option<isize> {
    // The commit store and the address arithmetic assume this exact slot layout.
    const {
        assert!(core::mem::size_of::<CachePadded<RseqSlot>>() == 1 << crate::rseq::SHIFT);
        assert!(core::mem::align_of::<CachePadded<RseqSlot>>() >= 8);
        assert!(core::mem::offset_of!(RseqSlot, cur) == 0);
        assert!(core::mem::offset_of!(RseqSlot, restarts) == 8);
        assert!(core::mem::offset_of!(RseqSlot, bufs) == 16);
    }
    crate::rseq::offset()
}

#[cfg(not(rseq_fast_path))]
fn rseq_offset() -> Option<isize> {
    None
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
