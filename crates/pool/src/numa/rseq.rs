//! Small reads without the slot lock: per-CPU batches read in restartable sequences (Linux,
//! x86_64, glibc ≥ 2.35 registering rseq for every thread; keys in wipe-on-fork memory).
//!
//! The locked read path (`slot.rs`) pays one `lock cmpxchg` per read, a large share of a
//! 32-byte read's cost beside the cipher. Here the reader instead runs one short restartable
//! sequence on its CPU's slot. This file is the slot container and its refill policy:
//! [`RseqSlots`], one slot per CPU number in wipe-on-fork memory, whose `fill` serves a read
//! (take, step over words an aborted take left zero, refill at most three times) and whose
//! `refill` keys a slot from its node and writes the next batch with the same refill with
//! key erasure as the locked slots (`chacha::refill_batch`). The sections themselves, the
//! slot layout they assume, and why no byte is ever handed out twice are in [`protocol`].
//!
//! The container never sees the pools that own it: a refill takes the nodes, a source of
//! fresh node keys (where the pools make their fork check), the rounds and the reseed
//! schedule's hook as arguments.

mod protocol;

use alloc::boxed::Box;
use core::sync::atomic::Ordering;

use crossbeam_utils::CachePadded;
use scalrand_os::wipe::WipeOnFork;
use zeroize::Zeroize;

use crate::chacha::{KEY_LEN, Rounds, refill_batch};
use super::node::NodePool;
use super::policy::is_stale;
use super::slot::{BATCH_LEN, WIPED_SLOT_TAG};
use protocol::{RseqSlot, Taken, skip, take};

/// Reads up to this many bytes take the rseq path (8 words).
pub(crate) const MAX_LEN: usize = 64;

/// The per-CPU rseq slots of one set of node pools, indexed by CPU number.
pub(crate) struct RseqSlots {
    mem: WipeOnFork<RseqSlot>,
    off: isize,
    /// The node each CPU's slot takes its key from (ordinary memory: configuration).
    node_of_cpu: Box<[u32]>,
}

impl RseqSlots {
    /// Slots for CPUs `0..node_of_cpu.len()`, or `None` where this path cannot run: no rseq
    /// registration, or memory the OS does not wipe in a fork child (the path relies on a
    /// child finding epoch 0).
    pub(crate) fn new(node_of_cpu: Box<[u32]>) -> Option<Self> {
        let off = scalrand_os::cpu::rseq_offset()?;
        if node_of_cpu.is_empty() || u32::try_from(node_of_cpu.len()).is_err() {
            return None;
        }
        let mem = WipeOnFork::new(node_of_cpu.len(), |_| RseqSlot::new());
        mem.wipes_on_fork().then_some(Self {
            mem,
            off,
            node_of_cpu,
        })
    }

    fn base(&self) -> *mut u8 {
        self.mem.as_ptr().cast_mut().cast()
    }

    fn n(&self) -> u32 {
        // `new` checked that the length fits.
        #[allow(clippy::cast_possible_truncation)]
        {
            self.mem.len() as u32
        }
    }

    /// Where the slots are (for `__secret_memory`).
    pub(crate) fn memory(&self) -> (*const u8, usize) {
        (self.mem.as_ptr().cast(), core::mem::size_of_val(&*self.mem))
    }

    /// Reads served so far, per CPU number (for `node_stats`).
    pub(crate) fn reads(&self) -> impl Iterator<Item = (u32, usize)> + '_ {
        self.mem
            .iter()
            .zip(self.node_of_cpu.iter())
            .map(|(s, &node)| (node, s.reads()))
    }

    /// Fills `dest` (1 to [`MAX_LEN`] bytes) from the calling CPU's slot; `false` when the
    /// read must take the locked path instead (see the module docs). `refill` refills the
    /// calling CPU's slot (the caller's [`refill`](Self::refill) with what it needs), `false`
    /// when it could not.
    ///
    /// Only the common cases are inline: a read of 32 bytes (a key, a token) or 8 (a `u64`),
    /// taken on the first try, each with its own copy step, so that a length the compiler
    /// cannot see costs a compare, not a jump table. Everything else (other lengths, an
    /// inline take that did not read) is one call to `fill_other`. This keeps the path small
    /// enough to inline into a caller's loop.
    #[inline]
    pub(crate) fn fill(&self, dest: &mut [u8], refill: impl FnMut() -> bool) -> bool {
        // The callers check this already (so it folds away); `take` relies on it.
        if dest.is_empty() || dest.len() > MAX_LEN {
            return false;
        }
        let out: *mut u64 = dest.as_mut_ptr().cast();
        let taken = if dest.len() == 32 {
            // SAFETY: `off` is `rseq_offset()`'s value and `base`/`n` describe these slots,
            // used only as the protocol says; `dest` holds 32 bytes, written as 4 unaligned
            // words (x86 is little-endian, so the bytes are the batch's bytes in order).
            unsafe { take(self.off, self.base(), self.n(), 4, out) }
        } else if dest.len() == 8 {
            // SAFETY: as above, with 8 bytes written as one word.
            unsafe { take(self.off, self.base(), self.n(), 1, out) }
        } else {
            Taken::No
        };
        // One call site for everything else (a second one costs the caller its inlining).
        taken == Taken::Done || self.fill_other(dest, refill)
    }

    /// `fill` for the lengths it does not inline, and after an inline take that did not read:
    /// whole words try one [`take`] here (no retry state to set up; for 8 and 32 bytes, the
    /// inline take again); anything else, and a take that did not read, go on to `fill_slow`.
    #[inline(never)]
    fn fill_other(&self, dest: &mut [u8], refill: impl FnMut() -> bool) -> bool {
        if dest.len().is_multiple_of(8) {
            let k = (dest.len() / 8) as u64;
            // SAFETY: as in `fill`; `dest` holds `8k` bytes, `1 <= k <= 8` (`MAX_LEN`).
            if unsafe { take(self.off, self.base(), self.n(), k, dest.as_mut_ptr().cast()) }
                == Taken::Done
            {
                return true;
            }
        }
        self.fill_slow(dest, refill)
    }

    /// `fill` for lengths that are not whole words, and after a `take` that did not read:
    /// step over words an aborted take zeroed, or refill (at most three times).
    #[inline(never)]
    fn fill_slow(&self, dest: &mut [u8], mut refill: impl FnMut() -> bool) -> bool {
        let k = dest.len().div_ceil(8) as u64;
        let mut tmp = [0u64; MAX_LEN / 8];
        let direct = dest.len().is_multiple_of(8);
        let out: *mut u64 = if direct {
            dest.as_mut_ptr().cast()
        } else {
            tmp.as_mut_ptr()
        };
        let mut refills = 0;
        // An aborted take leaves at most 8 zero words; 3 refills; slack for migrations.
        let done = 'read: {
            for _ in 0..16 {
                // SAFETY: as in `fill`; `out` is valid for `k <= 8` (unaligned) word writes:
                // `dest` holds `8k` bytes when `direct`, `tmp` 8 words otherwise.
                match unsafe { take(self.off, self.base(), self.n(), k, out) } {
                    Taken::Done => break 'read true,
                    // SAFETY: as above.
                    Taken::Zero => drop(unsafe { skip(self.off, self.base(), self.n()) }),
                    Taken::No => {
                        if refills == 3 || !refill() {
                            break 'read false;
                        }
                        refills += 1;
                    }
                }
            }
            false
        };
        if !direct {
            if done {
                for (c, word) in dest.chunks_mut(8).zip(tmp.iter()) {
                    c.copy_from_slice(&word.to_le_bytes()[..c.len()]);
                }
            }
            // Also when nothing was read: an aborted take may have left batch words in `tmp`
            // (a signal handler's read that interrupted it was handed those words).
            tmp.zeroize();
        }
        done
    }

    /// Refills the calling CPU's slot (see "commit a refill" in the protocol's docs). `false`
    /// when the read should take the locked path: no usable CPU number, another thread is
    /// refilling this slot, no fresh key, or the thread left the CPU before the commit.
    ///
    /// The slot's node is one of `nodes`; a slot keyed from an older generation of it (or
    /// never keyed: what a fork child finds) first takes a key from `fresh_key(node, key)`,
    /// which writes a key from that node and returns its generation. The batch is keystream
    /// with `rounds`. Each refill counts the reads the old batch served and its bytes against
    /// the slot's schedule count (the policy of the locked slots, `policy.rs`); when that is
    /// due, `check_schedule` is given the bytes, once the slot's lock is dropped.
    ///
    /// # Safety
    /// `nodes` outlive these slots: a slot keeps a pointer to its node's generation word,
    /// which the take section reads.
    #[inline]
    pub(crate) unsafe fn refill(
        &self,
        nodes: &[CachePadded<NodePool>],
        rounds: Rounds,
        fresh_key: impl FnOnce(usize, &mut [u8; KEY_LEN]) -> Option<usize>,
        check_schedule: impl FnOnce(usize),
    ) -> bool {
        // The rseq area's own CPU number, not `cpu::current` (which falls back to
        // `sched_getcpu`): a thread without an rseq registration could never publish, and
        // would pay a refill on every read.
        let Some(cpu) = scalrand_os::cpu::rseq_cpu() else {
            return false;
        };
        let (Some(slot), Some(&node_idx)) = (self.mem.get(cpu), self.node_of_cpu.get(cpu)) else {
            return false;
        };
        let Some(mut refill) = slot.try_refill(WIPED_SLOT_TAG) else {
            return false;
        };
        let node = &nodes[node_idx as usize];
        let current = node.generation.load(Ordering::Acquire);
        if refill.epoch() == 0 || is_stale(refill.source(), node_idx as usize, node_idx as usize, current) {
            // A fork child's slots are zero (epoch 0): `fresh_key` rekeys the nodes before
            // deriving from one. It fails (a child whose rekey failed: the locked path
            // reports the error; or a node lock held through a bounded wait, whose holder may
            // be this thread, interrupted by the signal handler that reads now): the locked
            // path keys the read elsewhere.
            let Some(generation) = fresh_key(node_idx as usize, refill.key_and_scratch().0) else {
                return false;
            };
            refill.set_source(&node.generation, generation);
        }
        let (key, scratch) = refill.key_and_scratch();
        refill_batch(key, scratch, rounds);
        // SAFETY: `off`, `base` and `n` describe these slots, `slot` is one of them, and the
        // key and the scratch buffer were just written.
        let Some(served) = (unsafe { refill.publish(self.off, self.base(), self.n()) }) else {
            return false;
        };
        let due = refill.schedule().count(served, BATCH_LEN - KEY_LEN);
        drop(refill);
        if let Some(bytes) = due {
            check_schedule(bytes);
        }
        true
    }
}
