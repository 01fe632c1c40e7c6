//! Small reads without any lock: per-CPU batches read in restartable sequences (Linux,
//! x86_64, glibc ≥ 2.35 registering rseq for every thread; keys and batches in wipe-on-fork
//! memory).
//!
//! The locked read path (`slot.rs`) pays one `lock cmpxchg` per read, a large share of a
//! 32-byte read's cost beside the cipher, and a slot lock whose holder is preempted sends
//! every other reader of that CPU elsewhere for a whole time slice. Here the reader instead
//! runs one short restartable sequence on its CPU's slot, and a refill holds nothing that
//! another thread waits for. This file is the slot container and its refill: [`RseqSlots`],
//! one slot per CPU number and a pool of batch frames (`frames.rs`), whose `fill` serves a
//! read (take, step over words an aborted take left zero, refill at most three times) and
//! whose `refill` runs Linux's fast key erasure in user space:
//!
//! 1. **take key**: the CPU's slot key, taken exactly once (a section), into a frame the
//!    refiller owns; a stale or missing key is replaced by one from the node;
//! 2. the batch's first 16 blocks under the key (one pass of the widest backend): the first
//!    half of block 0 is the next slot key, **put** back at once (a section), so that another
//!    refill of this CPU that starts while this one is preempted finds a key; the rest is
//!    the batch's first output;
//! 3. the rest of the batch, outside every section and lock, into the frame;
//! 4. **publish** the frame on whatever CPU the refiller is on now (a section); the batch it
//!    replaces is zeroed from its first unread byte and its frame given back.
//!
//! A reader that finds its CPU's batch used up while another thread's refill is preempted
//! mid-way runs a refill of its own with the next key. The output stream is the one the
//! locked slots' `chacha::refill_batch` writes: the keystream of the slot key, whose first 32
//! bytes become the next key. The sections and why no byte is ever handed out twice are in
//! [`protocol`].
//!
//! The container never sees the pools that own it: a refill takes the nodes, a source of
//! fresh node keys (where the pools make their fork check), the rounds and the reseed
//! schedule's hook as arguments.

mod frames;
mod protocol;

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use scalrand_os::pad::CachePadded;
use scalrand_os::wipe::WipeOnFork;
use scalrand_os::wipe::zero;

use super::node::NodePool;
use super::policy::ScheduleCount;
use super::slot::BATCH_LEN;
use crate::chacha::{BLOCK_LEN, KEY_LEN, Rounds, Section, observe_key};
use frames::{Frames, token};
use protocol::{
    BatchFrame, RseqSlot, SPARE_OWNER, Taken, publish, put_key, skip, stash, take, take_key,
    unstash,
};

/// Reads up to this many bytes take the rseq path (8 words).
pub(crate) const MAX_LEN: usize = 64;

/// The batch's head, generated before the next key goes back into the slot's cell: one pass
/// of the widest backend (16 blocks), so that head and tail together run whole passes.
const HEAD_LEN: usize = 16 * BLOCK_LEN;
const _: () = assert!(HEAD_LEN < BATCH_LEN && KEY_LEN <= HEAD_LEN);

/// The test hook of [`__in_next_rseq_refill`] (a `fn` pointer as a word; 0: none).
static REFILL_HOOK: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Test hook (`doc(hidden)`, not API): `f` runs once, inside the next rseq refill of any
/// pools, after the refill has claimed its frame and holds its key there and before it
/// generates its batch: where a signal handler that reads, or forks, would interrupt it
/// (`tests/nested_refill.rs`). One relaxed load per refill.
#[doc(hidden)]
pub fn __in_next_rseq_refill(f: fn()) {
    REFILL_HOOK.store(f as usize, Ordering::Release);
}

/// Runs and clears the hook of [`__in_next_rseq_refill`], if one is set.
#[inline]
fn refill_hook() {
    if REFILL_HOOK.load(Ordering::Relaxed) == 0 {
        return;
    }
    let f = REFILL_HOOK.swap(0, Ordering::Acquire);
    if f != 0 {
        // SAFETY: the only nonzero values stored are `fn()` pointers cast to `usize`, and a
        // function pointer round-trips through `usize`.
        let f = unsafe { core::mem::transmute::<usize, fn()>(f) };
        f();
    }
}

std::thread_local! {
    /// Whether the calling thread is inside a refill ([`Refilling`]). Const-initialised with
    /// no destructor: a signal handler reads it with one thread-local access.
    static REFILLING: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// A refill in progress on the calling thread: at most one at a time per thread. A read in
/// a signal handler that interrupted a refill of its own thread finds one in progress and
/// takes the locked path instead of refilling inside it: a nested refill could take the very
/// frame the interrupted one writes, and in a child the handler forked, where the kernel has
/// zeroed that frame under the interrupted refill, it would publish a batch the interrupted
/// refill then overwrites with the parent's keystream (which the parent hands out too). So
/// a child's interrupted refill resumes alone: its frame is free there, and the refill
/// zeroes it when its publish is refused. The flag is ordinary thread-local memory: a fork
/// child of a handler inherits it set, as it inherits the refill it interrupted.
struct Refilling(());

impl Refilling {
    /// Marks a refill in progress on this thread; `None` if one already is (this call is
    /// nested in a signal handler that interrupted it).
    #[inline]
    fn enter() -> Option<Self> {
        // `replace` is a load and a store: a handler that runs between them sees no refill in
        // progress, and runs a whole refill of its own before this one has touched anything.
        REFILLING
            .with(|r| !r.replace(true))
            .then_some(Refilling(()))
    }
}

impl Drop for Refilling {
    #[inline]
    fn drop(&mut self) {
        REFILLING.with(|r| r.set(false));
    }
}

/// The per-CPU rseq slots of one set of node pools, indexed by CPU number.
pub(crate) struct RseqSlots {
    mem: WipeOnFork<RseqSlot>,
    frames: Frames,
    off: isize,
    /// The node each CPU's slot takes its key from (ordinary memory: configuration).
    node_of_cpu: Box<[u32]>,
}

impl RseqSlots {
    /// Slots for CPUs `0..node_of_cpu.len()`, or `None` where this path cannot run: no rseq
    /// registration, or memory the OS does not wipe in a fork child (the path relies on a
    /// child finding no batch and no key).
    pub(crate) fn new(node_of_cpu: Box<[u32]>) -> Option<Self> {
        let off = scalrand_os::cpu::rseq_offset()?;
        if node_of_cpu.is_empty() || u32::try_from(node_of_cpu.len()).is_err() {
            return None;
        }
        // SAFETY: `RseqSlot` is `ZeroValid`: all zero is a slot with no batch and no key.
        let mem = WipeOnFork::new(node_of_cpu.len(), |_| unsafe { core::mem::zeroed() });
        let frames = Frames::new(node_of_cpu.len());
        (mem.wipes_on_fork() && frames.wipes_on_fork()).then_some(Self {
            mem,
            frames,
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

    /// Where the slots and their frames are (for `__secret_memory`).
    pub(crate) fn memory(&self) -> Vec<(*const u8, usize)> {
        let mut v = alloc::vec![(self.mem.as_ptr().cast(), core::mem::size_of_val(&*self.mem))];
        v.extend(self.frames.memory());
        v
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
            zero(&mut tmp);
        }
        done
    }

    /// Refills the calling CPU's slot (the steps in the module docs). `false` when the read
    /// should take the locked path: no usable CPU number, no free frame, no key (the node's
    /// lock stayed held, or a fork child's rekey failed), or the refill found itself in a fork
    /// child of the process it started in.
    ///
    /// A slot without a key, or whose key came from an older generation of its node (never
    /// keyed: what a fork child finds), takes one from `fresh_key(node, key)`, which writes a
    /// key from that node and returns its generation. The batch is keystream with `rounds`.
    /// Each refill counts the reads of the batch it replaces and that batch's bytes against
    /// the slot's schedule count (the policy of the locked slots, `policy.rs`); when that is
    /// due, `check_schedule` is given the bytes.
    ///
    /// # Safety
    /// `nodes` outlive these slots: a published batch keeps a pointer to its node's
    /// generation word, which the take section reads.
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
        // One refill at a time on this thread: a read nested in a handler goes elsewhere.
        let Some(_refilling) = Refilling::enter() else {
            return false;
        };
        let token = token();
        // This CPU's spare (the frame the last refill here replaced: hot in the cache), else
        // a free one from the pool.
        // SAFETY: `off`, `base` and `n` describe these slots; spares are frames of the pool.
        let frame = match unsafe { unstash(self.off, self.base(), self.n()) } {
            Some(f) => {
                // SAFETY: a frame of the pool (they live as long as the slots), this
                // thread's now: the unstash took it from the slot.
                let f = unsafe { &*f };
                f.owner.store(token, Ordering::Relaxed);
                f
            }
            None => match self.frames.claim(cpu, token) {
                Some(f) => f,
                None => return false,
            },
        };
        // One section for the whole refill: its take and put sections report their aborts
        // to it, and its watch covers the stretches between them (`Section::restartable`).
        let published = Section::run(|s| {
            // SAFETY: `frame` was just claimed with `token`; `nodes` outlive the slots (the
            // caller's contract).
            unsafe { self.refill_frame(s, frame, token, nodes, rounds, fresh_key) }
        });
        let Some((cpu, old)) = published else {
            return false;
        };
        // The batch replaced: its frame is the caller's now; zeroed, it becomes the spare of
        // the CPU this thread is on, or goes back to the pool.
        if protocol::next(old) != 0 {
            // SAFETY: `old` is the control word the publish replaced.
            let replaced = unsafe { BatchFrame::zero_replaced(protocol::next(old)) };
            replaced.owner.store(SPARE_OWNER, Ordering::Relaxed);
            // SAFETY: as above; the frame is the caller's.
            if !unsafe { stash(self.off, self.base(), self.n(), replaced) } {
                replaced.owner.store(0, Ordering::Release);
            }
        }
        let slot = &self.mem[cpu];
        let served = protocol::reads(old);
        slot.add_reads(served);
        if let Some(bytes) =
            ScheduleCount::count_packed(slot.schedule(), served, BATCH_LEN - KEY_LEN)
        {
            check_schedule(bytes);
        }
        true
    }

    /// Steps 1 to 5 of a refill into `frame`: the CPU and control word the publish replaced,
    /// or `None` (the frame is then given back, or, in a fork child, left alone: the kernel
    /// zeroed it and it is free there). Runs in the refill's section `s`: its restartable
    /// sequences through [`Section::restartable`], so that an aborted take or put, or a
    /// signal during the keystream, ends the section with the long wipe.
    ///
    /// # Safety
    /// The caller claimed `frame` with `token`; `nodes` outlive the slots.
    #[inline(never)]
    unsafe fn refill_frame(
        &self,
        s: &mut Section,
        frame: &BatchFrame,
        token: u64,
        nodes: &[CachePadded<NodePool>],
        rounds: Rounds,
        fresh_key: impl FnOnce(usize, &mut [u8; KEY_LEN]) -> Option<usize>,
    ) -> Option<(usize, u64)> {
        let give_back = |frame: &BatchFrame| {
            // SAFETY: the caller's contract: the frame is this refill's, unpublished.
            zero(unsafe { frame.parts() }.0);
            frame.owner.store(0, Ordering::Release);
        };
        // SAFETY: the caller's contract.
        let (key, data) = unsafe { frame.parts() };
        // 1. The slot key, taken exactly once, or a fresh one from the node.
        // SAFETY: `off`, `base` and `n` describe these slots; `key` holds KEY_LEN bytes.
        let taken =
            s.restartable(|| unsafe { take_key(self.off, self.base(), self.n(), key.as_mut_ptr()) });
        // Watched from here (the take section cleared the registers the key went through) to
        // the put section: everything in between that loads the key (its zero check, the
        // keystream) with the registers cleared before the put, so that a signal after it
        // finds none of the key in them. A fresh key from the node runs sections of its own,
        // which replace the watch: such a refill ends with the long wipe.
        let Some((cpu, generation)) = taken
            .map(|(c, g)| (c, g as usize))
            .or_else(|| Some((scalrand_os::cpu::rseq_cpu()?, 0)))
            .filter(|&(c, _)| c < self.node_of_cpu.len())
        else {
            give_back(frame);
            return None;
        };
        let node_idx = self.node_of_cpu[cpu] as usize;
        let node = &nodes[node_idx];
        let current = node.generation.load(Ordering::Acquire);
        let generation = if generation == 0 || generation != current {
            // Never keyed (a fork child's zeroed slot), a key of an older generation, or one
            // that an aborted take key left with a zero word: a fresh one from the node.
            zero(key);
            match fresh_key(node_idx, key) {
                Some(g) => g,
                None => {
                    give_back(frame);
                    return None;
                }
            }
        } else {
            generation
        };
        // A zero key (a fork child's wiped frame under this refill) is never used.
        if key.iter().all(|&b| b == 0) {
            if frame.owner.load(Ordering::Relaxed) == token {
                give_back(frame);
            }
            return None;
        }
        refill_hook();
        // 2. The batch's head, outside every section and lock: keystream of the key from
        // block 0, whose first KEY_LEN bytes are the next slot key. One pass of the widest
        // backend (16 blocks), so that the next key goes back into the cell as soon as it
        // exists: until then another refill on this CPU finds the cell empty and derives a
        // key from the node instead.
        let (head, tail) = data.split_at_mut(HEAD_LEN);
        s.keystream(key, &[0; 3], 0, head, rounds);
        // The test observer (a no-op unless a test installed one) copies the key: watched too.
        observe_key(head[..KEY_LEN].try_into().ok()?);
        s.clear_registers();
        // 3. The next key back into the cell.
        // SAFETY: as above; `cpu < n` (it indexed `node_of_cpu`), `frame` is a frame of the
        // pool and `head` holds the next key in its first KEY_LEN bytes.
        s.restartable(|| unsafe {
            put_key(
                self.off,
                self.base(),
                self.n(),
                cpu,
                frame,
                token,
                head.as_ptr(),
                generation as u64,
            )
        });
        // Put back or not (another CPU now, or a key already there), this copy goes.
        zero(&mut head[..KEY_LEN]);
        // 4. The rest of the batch, after the head's blocks (watched again since the put).
        s.keystream(key, &[0; 3], (HEAD_LEN / BLOCK_LEN) as u32, tail, rounds);
        zero(key);
        s.clear_registers();
        frame.set_source(&node.generation, generation);
        // 5. Publish on the CPU the thread is on now.
        // The publish holds no key (`false`): through the section only so that its watch is
        // armed again after it.
        match s.restartable(|| {
            // SAFETY: as above; the batch and its source are written.
            let r = unsafe {
                publish(
                    self.off,
                    self.base(),
                    self.n(),
                    frame,
                    token,
                    frame.first_word(),
                )
            };
            (r, false)
        }) {
            Some(r) => Some(r),
            None => {
                // A CPU beyond the slots (this refill's frame still), or a fork child: the
                // kernel zeroed the frame under this refill, which went on writing it. The
                // writes are the parent's keystream (the key was in registers at the fork) or
                // this child's fresh key: wiped, unless the child has handed the frame to
                // another refill since (a handler's nested read), whose frame it now is.
                let owner = frame.owner.load(Ordering::Relaxed);
                if owner == token || owner == 0 {
                    // SAFETY: unpublished; this refill's, or free and untouched by others.
                    let (key, data) = unsafe { frame.parts() };
                    zero(key);
                    zero(data);
                    if owner == token {
                        frame.owner.store(0, Ordering::Release);
                    }
                }
                None
            }
        }
    }
}
