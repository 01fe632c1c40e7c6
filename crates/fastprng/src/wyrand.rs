//! wyrand, and [`PerCpuWyRand`]: the per-CPU generator whose restartable sequence commits with
//! one store.
//!
//! wyrand is Wang Yi's generator from wyhash (`wyrand` in `wyhash.h`, final version 4): a
//! 64-bit Weyl sequence `s += 0x2d358dccaa6c78a5` mixed by a 64×64→128-bit multiply,
//! `t = s · (s ^ 0x8bb84b93962eacc9)`, output `lo(t) ^ hi(t)`. It is the generator of the
//! `fastrand` crate, and [`WyRand::from_state`] reproduces `fastrand::Rng::with_seed`
//! bit for bit (`tests/reference.rs`). Period 2^64; every state is valid. **Not
//! cryptographic.**
//!
//! Why a second per-CPU engine: [`PerCpu`](crate::PerCpu)'s xoroshiro128 state is two words,
//! so its restartable sequence writes the next state to a scratch buffer and commits with a
//! third store. wyrand's state is one word: the section is "read CPU, load, add, store", the
//! store is the commit, and the mixing runs after the section in registers. That is the
//! facade's `scalrand::fast` engine.
//!
//! Streams: slot `i` starts at an independent 64-bit state drawn from the master generator.
//! All slots walk the same Weyl sequence from random offsets, so two slots' outputs overlap
//! only if one walks into the other's start: for `n` slots and `k` outputs each, with
//! probability about `n² · k / 2^64`.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;

use crossbeam_utils::CachePadded;
use rand_core::{SeedableRng, TryRng};

use crate::Error;
use crate::locked::{LockedSlots, SlotRng};
use crate::percpu::FastPath;

/// The wyrand generator (see the module docs). Never `Copy`; `Debug` hides the state.
#[derive(Clone, PartialEq, Eq)]
pub struct WyRand {
    state: u64,
}

impl WyRand {
    /// The Weyl increment (wyhash's `_wyp[0]`).
    pub const INCREMENT: u64 = 0x2d35_8dcc_aa6c_78a5;
    /// The mixing constant (wyhash's `_wyp[1]`).
    pub const MIX: u64 = 0x8bb8_4b93_962e_acc9;

    /// The generator at `state` (any value is valid), as `fastrand::Rng::with_seed(state)`.
    #[must_use]
    pub const fn from_state(state: u64) -> Self {
        Self { state }
    }

    /// The current state. This *is* the generator: anyone holding it predicts every output.
    #[must_use]
    pub const fn state(&self) -> u64 {
        self.state
    }

    /// The output for a state that has just been advanced.
    #[inline(always)]
    #[must_use]
    pub const fn mix(advanced: u64) -> u64 {
        let t = (advanced as u128) * ((advanced ^ Self::MIX) as u128);
        (t as u64) ^ ((t >> 64) as u64)
    }

    /// The next output.
    #[inline(always)]
    pub fn next_raw(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::INCREMENT);
        Self::mix(self.state)
    }
}

impl fmt::Debug for WyRand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WyRand { .. }")
    }
}

impl TryRng for WyRand {
    type Error = Infallible;
    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.next_raw() as u32)
    }
    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next_raw())
    }
    #[inline]
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        crate::fill_via_u64(dest, || self.next_raw());
        Ok(())
    }
}

impl SeedableRng for WyRand {
    type Seed = [u8; 8];
    /// The state is the little-endian seed (every seed is valid).
    fn from_seed(seed: [u8; 8]) -> Self {
        Self::from_state(u64::from_le_bytes(seed))
    }
}

impl SlotRng for WyRand {
    fn spare(a: u64, _b: u64) -> Self {
        Self::from_state(a)
    }

    fn repair(&mut self, _salt: u64) {
        // One word, written by one store: never torn, every value valid.
    }
}

/// The rseq slot of one CPU: `[state, restarts]` (the abort handler counts aborts in slot
/// 0's `restarts`), padded to 128 bytes. Plain `core` cells even under loom: only the assembly
/// and `&mut self` touch them.
#[repr(C)]
struct WySlot {
    state: core::cell::UnsafeCell<u64>,
    restarts: core::sync::atomic::AtomicUsize,
}

/// One [`WyRand`] per CPU, shared by `&self`: the restartable-sequence step commits with a
/// single store (see the module docs); elsewhere the try-lock slots of
/// [`PerCpu`](crate::PerCpu), with the same overflow stream and fork takeover.
///
/// **Not cryptographic.** The engine of `scalrand::fast`.
///
/// ```
/// use scalrand_fastprng::{PerCpuWyRand, WyRand};
///
/// let rng = PerCpuWyRand::with_cpus(WyRand::from_state(7), 4).unwrap();
/// let x = rng.next_u64();
/// let sum: u64 = rng.with_current(|r| (0..100).map(|_| r.next_raw() >> 8).sum());
/// # let _ = (x, sum);
/// ```
pub struct PerCpuWyRand {
    rseq: Box<[CachePadded<WySlot>]>,
    locked: LockedSlots<WyRand>,
    rseq_off: Option<isize>,
}

// SAFETY: the rseq slots' cells are reached only through the rseq protocol (slot `i` by
// threads running on CPU `i`, one at a time) or `&mut self`; the try-lock slots are `Lock`s.
unsafe impl Sync for PerCpuWyRand {}
// SAFETY: it owns plain data.
unsafe impl Send for PerCpuWyRand {}

impl fmt::Debug for PerCpuWyRand {
    /// Prints the shape, never a state.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PerCpuWyRand")
            .field("cpus", &self.cpus())
            .field("fast_path", &self.fast_path())
            .finish_non_exhaustive()
    }
}

impl PerCpuWyRand {
    /// One state per CPU of this machine, from `master`.
    ///
    /// # Errors
    /// [`Error::TooManySlots`] if the machine reports more than [`MAX_CPUS`](crate::MAX_CPUS) CPUs.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn new(master: WyRand) -> Result<Self, Error> {
        Self::with_cpus(master, scalrand_os::cpu::possible())
    }

    /// One state per CPU of this machine, from a master state drawn from the OS.
    ///
    /// # Errors
    /// [`Error::Entropy`] if the OS entropy source fails; as [`new`](Self::new) otherwise.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn from_os() -> Result<Self, Error> {
        let mut seed = [0u8; 8];
        scalrand_os::entropy::fill(&mut seed).map_err(|_| Error::Entropy)?;
        Self::new(WyRand::from_seed(seed))
    }

    /// `cpus` rseq slots and `cpus` try-lock slots; slot `k` (rseq first) starts at the
    /// master's `k`-th output.
    ///
    /// # Errors
    /// [`Error::NoSlots`] for `cpus == 0`, [`Error::TooManySlots`] above [`MAX_CPUS`](crate::MAX_CPUS).
    pub fn with_cpus(mut master: WyRand, cpus: usize) -> Result<Self, Error> {
        LockedSlots::<WyRand>::check_cpus(cpus)?;
        let rseq = (0..cpus)
            .map(|_| {
                CachePadded::new(WySlot {
                    state: core::cell::UnsafeCell::new(master.next_raw()),
                    restarts: core::sync::atomic::AtomicUsize::new(0),
                })
            })
            .collect();
        let locked: Vec<WyRand> = (0..cpus)
            .map(|_| WyRand::from_state(master.next_raw()))
            .collect();
        Ok(Self {
            rseq,
            locked: LockedSlots::new(locked),
            rseq_off: rseq_offset(),
        })
    }

    /// Turns the rseq fast path off for this instance (comparisons and tests).
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

    /// How many of this instance's restartable sequences the kernel aborted.
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

    /// The next `u64` of the calling CPU's stream.
    #[inline]
    pub fn next_u64(&self) -> u64 {
        if let Some(off) = self.rseq_off {
            // SAFETY: `off` came from `rseq::offset()`; `self.rseq` is `cpus()` slots of
            // `CachePadded<WySlot>` (128 bytes each, `[state, restarts]` first: checked by the
            // const assertions in `rseq_offset`) reached only through this step and
            // `&mut self`. `cpus() <= MAX_CPUS < u32::MAX`.
            let s = unsafe {
                crate::rseq::step_wyrand(
                    off,
                    self.rseq.as_ptr().cast_mut().cast(),
                    self.cpus() as u32,
                    WyRand::INCREMENT,
                )
            };
            if let Some(s) = s {
                return WyRand::mix(s);
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
            .with_locked(self.locked.home(), WyRand::next_raw)
            .unwrap_or_else(|| self.locked.overflow_step())
    }

    /// The next `u32` (the low half of [`next_u64`](Self::next_u64), as fastrand's `u32`).
    #[inline]
    pub fn next_u32(&self) -> u32 {
        self.next_u64() as u32
    }

    /// Fills `dest` with little-endian output words; requests over 64 bytes take one
    /// try-lock slot for the whole request (one contiguous run of one stream).
    pub fn fill_bytes(&self, dest: &mut [u8]) {
        if dest.len() <= 64 {
            crate::fill_via_u64(dest, || self.next_u64());
        } else {
            self.with_current(|r| crate::fill_via_u64(dest, || r.next_raw()));
        }
    }

    /// Runs `f` on the calling CPU's try-lock state: a loop inside `f` runs at an owned
    /// generator's speed for one lock round trip. If every slot stays busy (a re-entrant
    /// call), `f` gets a generator seeded from the overflow stream: never fails, never spins
    /// unboundedly.
    #[inline]
    pub fn with_current<T>(&self, f: impl FnOnce(&mut WyRand) -> T) -> T {
        self.locked.with_current(f)
    }

    /// Fills `dest` with successive outputs of the calling CPU's stream (one lock round trip).
    pub fn fill_u64(&self, dest: &mut [u64]) {
        self.with_current(|r| {
            for x in dest.iter_mut() {
                *x = r.next_raw();
            }
        });
    }

    /// Runs `f` on CPU `cpu`'s try-lock state (as [`PerCpu::with_cpu`](crate::PerCpu::with_cpu)).
    ///
    /// # Errors
    /// [`Error::CpuOutOfRange`] when `cpu >= self.cpus()`; [`Error::SlotsBusy`] when every
    /// slot stayed busy.
    pub fn with_cpu<T>(&self, cpu: usize, f: impl FnOnce(&mut WyRand) -> T) -> Result<T, Error> {
        self.locked.with_cpu(cpu, f)
    }

    /// Every slot's state, rseq slots first, then try-lock slots.
    pub fn slot_states(&mut self) -> Vec<u64> {
        let mut v: Vec<u64> = self.rseq.iter_mut().map(|s| *s.state.get_mut()).collect();
        v.extend(self.locked.states_mut().map(|r| r.state()));
        v
    }
}

fn rseq_offset() -> Option<isize> {
    // The step's address arithmetic and the abort counter assume this exact slot layout.
    const {
        assert!(
            !crate::rseq::ACTIVE
                || core::mem::size_of::<CachePadded<WySlot>>() == 1 << crate::rseq::SHIFT
        );
        assert!(core::mem::offset_of!(WySlot, state) == 0);
        assert!(core::mem::offset_of!(WySlot, restarts) == 8);
    }
    crate::rseq::offset()
}

impl TryRng for &PerCpuWyRand {
    type Error = Infallible;
    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(PerCpuWyRand::next_u32(self))
    }
    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(PerCpuWyRand::next_u64(self))
    }
    #[inline]
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        PerCpuWyRand::fill_bytes(self, dest);
        Ok(())
    }
}
