//! The try-lock slots a heap-placed `PerCpu` falls back to, for every engine: one cache-padded
//! [`Lock`](scalrand_os::Lock) per CPU, a sweep that never parks, takeover of slots a fork
//! orphaned, and the overflow stream once every slot stays busy (see `PerCpu`'s docs).

use alloc::boxed::Box;
use alloc::vec::Vec;

use scalrand_os::pad::CachePadded;

use crate::engine::Engine;
use crate::{Error, MAX_CPUS};
use scalrand_os::primitive::{AtomicUsize, Ordering, spin_wait};
use scalrand_os::{Lock, LockGuard};

/// Sweeps over the try-lock slots that find every slot busy before a caller stops spinning
/// (see `PerCpu`'s module docs).
pub const BUSY_SWEEPS: u32 = 256;

/// The try-lock slots and the overflow stream's counter.
pub struct LockedSlots<R> {
    slots: Box<[CachePadded<Lock<R>>]>,
    overflow: CachePadded<AtomicUsize>,
}

impl<R> core::fmt::Debug for LockedSlots<R> {
    /// The slot count, never a state.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LockedSlots")
            .field("cpus", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl<R: Engine> LockedSlots<R> {
    pub(crate) fn new(states: Vec<R>) -> Self {
        let mut slots = Vec::with_capacity(states.len());
        for r in states {
            slots.push(CachePadded::new(Lock::new(r)));
        }
        Self {
            slots: slots.into_boxed_slice(),
            overflow: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// `Ok` for a slot count `PerCpu`-like types accept.
    pub(crate) fn check_cpus(cpus: usize) -> Result<(), Error> {
        if cpus == 0 {
            return Err(Error::NoSlots);
        }
        if cpus > MAX_CPUS {
            return Err(Error::TooManySlots { requested: cpus });
        }
        Ok(())
    }

    /// The slot to start from: the calling thread's CPU's (slot 0 without an answer).
    #[inline]
    pub(crate) fn home(&self) -> usize {
        scalrand_os::cpu::current().unwrap_or(0) % self.slots.len()
    }

    /// `with_cpu` of the per-CPU types: slot `cpu`'s state, or the next free one.
    pub(crate) fn with_cpu<T>(&self, cpu: usize, f: impl FnOnce(&mut R) -> T) -> Result<T, Error> {
        let cpus = self.slots.len();
        if cpu >= cpus {
            return Err(Error::CpuOutOfRange { cpu, cpus });
        }
        self.with_locked(cpu, f).ok_or(Error::SlotsBusy)
    }

    /// `with_current` of the per-CPU types: the calling CPU's state, or (every slot busy) a
    /// spare generator seeded from the overflow stream. Never fails, never spins unboundedly.
    #[inline]
    pub(crate) fn with_current<T>(&self, f: impl FnOnce(&mut R) -> T) -> T {
        let mut f = Some(f);
        let done = self
            .with_locked(self.home(), |r| f.take().map(|f| f(r)))
            .flatten();
        match (done, f.take()) {
            (Some(t), _) => t,
            (None, Some(f)) => f(&mut R::spare(self.overflow_step(), self.overflow_step())),
            // `f` runs at most once: `with_locked` returned `None` without calling it.
            (None, None) => taken_twice(),
        }
    }

    /// Every slot's state, through exclusive access.
    pub(crate) fn states_mut(&mut self) -> impl Iterator<Item = R> + '_ {
        self.slots.iter_mut().map(|l| l.with_mut(|r| r.clone()))
    }

    /// Takes the first free slot from `start` on and runs `f` on it (the lock is released
    /// when `f` returns or unwinds). `None` after [`BUSY_SWEEPS`] sweeps found every slot
    /// busy.
    #[inline]
    pub(crate) fn with_locked<T>(&self, start: usize, f: impl FnOnce(&mut R) -> T) -> Option<T> {
        let n = self.slots.len();
        let tag = scalrand_os::fork::tag();
        let mut i = start % n;
        let mut sweeps = 0u32;
        loop {
            if let Some(mut g) = self.slots[i].try_lock_tagged(tag) {
                return Some(g.with(f));
            }
            i += 1;
            if i == n {
                i = 0;
                // Every slot was busy at the instant we looked: more callers than slots, a
                // re-entrant caller, or slots orphaned by a fork (held by threads the child
                // does not have).
                if let Some(mut g) = self.take_orphan(tag) {
                    return Some(g.with(f));
                }
                sweeps += 1;
                if sweeps >= BUSY_SWEEPS {
                    return None;
                }
                spin_wait(sweeps);
            }
        }
    }

    /// Takes over a slot held by a thread of an earlier fork generation, if there is one.
    /// That thread does not exist in this process, so it will never release the slot or touch
    /// it again; it may have been stopped halfway through a step, so the state is repaired.
    #[cold]
    fn take_orphan(&self, tag: usize) -> Option<LockGuard<'_, R>> {
        self.slots.iter().find_map(|slot| {
            let mut g = slot.try_take_over(tag)?;
            g.with(|r| r.repair(tag as u64));
            Some(g)
        })
    }

    /// How many overflow-stream words were drawn so far (the counter is the Weyl index).
    pub(crate) fn overflow_draws(&self) -> u64 {
        self.overflow.load(Ordering::Relaxed) as u64
    }

    /// One step of the overflow stream: SplitMix64 (Steele, Lea, Flood, "Fast splittable
    /// pseudorandom number generators", OOPSLA 2014) over a per-instance atomic Weyl counter,
    /// salted with the instance's address. Lock-free; only taken when every slot stays busy.
    #[cold]
    pub(crate) fn overflow_step(&self) -> u64 {
        let w = self.overflow.fetch_add(1, Ordering::Relaxed) as u64;
        let mut x = (core::ptr::from_ref(self) as u64)
            .rotate_left(32)
            .wrapping_add(w.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        crate::xoroshiro::splitmix64(&mut x)
    }
}

/// Unreachable: `with_locked` either ran the closure (and returned `Some`) or did not.
#[cold]
fn taken_twice() -> ! {
    #[allow(clippy::panic)]
    {
        panic!("with_current's closure is taken at most once")
    }
}
