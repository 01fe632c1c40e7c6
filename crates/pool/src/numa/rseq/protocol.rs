//! The restartable sequences of the rseq read path and the memory layout they assume: the
//! **take** and **skip** sections that readers run, and the **take key**, **put key** and
//! **publish** sections of a refill, each one `asm!` block on the calling CPU's
//! [`RseqSlot`]. When a slot is refilled and from what is the container's business (`super`);
//! this file is only the protocol that makes the lock-free reads and refills safe.
//!
//! A restartable sequence (Linux 4.18, commit d7822b1e24f2 "rseq: Introduce restartable
//! sequences system call"; `scalrand_fastprng`'s `rseq` module explains the guarantee in
//! detail) either runs start to end on one CPU with no other thread of that CPU in between, or
//! is abandoned at the first preemption, migration or signal, and restarted from the top. Each
//! section is framed by `scalrand_os::__rseq_section!` (its descriptor, glibc's x86 abort
//! signature, the arming store, the `cpu_id` bounds check and the exits), as
//! `scalrand_fastprng`'s are; here the abort handler only jumps back to re-arm the section.
//!
//! # No lock anywhere
//! User space cannot switch off preemption around per-CPU state, as the kernel's per-CPU
//! `crng` does. So no thread ever owns a slot: everything a refill does between its sections
//! (a ChaCha20 block, 7 KiB of keystream) happens in memory that thread owns alone, and a
//! thread preempted, signalled or stopped there delays no other thread's read. The slot only
//! changes in sections, which a preempted thread abandons.
//!
//! # Memory
//! - One [`RseqSlot`] per CPU number, 128 bytes: the **control word**, the **key cell** (a
//!   32-byte key and its state word: the node generation the key was taken under, 0 when the
//!   cell is empty), and counters.
//! - [`BatchFrame`]s of 8 KiB (two pages, aligned to their size) from a pool shared by all
//!   CPUs (`frames.rs`): an owner word, the node generation word and generation the batch
//!   descends from, a work key, and [`BATCH_LEN`] bytes of batch. A refiller owns the frame
//!   it writes; once published the frame belongs to the slot, until the refill that replaces
//!   it zeroes it and keeps it as its CPU's spare (**stash**, taken by that CPU's next refill
//!   with **unstash**) or gives it back to the pool.
//!
//! The control word is `[next:48 | reads:16]`: `next` is the address of the active batch's
//! next unread byte (its frame is `next & !8191`, its offset in the frame `next & 8191`), 0
//! when the slot has no batch (the zero state a fork child finds in wipe-on-fork memory).
//!
//! # Sections
//! - **take** (`take`): read `cpu_id`, the control word; bail out if there is no batch, the
//!   batch's node generation moved, or fewer than `8k` bytes are left; copy `k` words from
//!   `next` into the caller's buffer, **zeroing each word in the batch after loading it** (for
//!   2, 4 and 8 words with 16-byte moves, all loads first, then the zero stores; a word at a
//!   time otherwise); **commit** `next + 8k, reads + 1` with one store. No other reader reads
//!   those words before the commit (a reader on this CPU would abort the section first) or
//!   after it (they are behind `next`), so the zero stores race with nothing.
//! - **skip** (`skip`): an abort between a zero store and the commit leaves zero words at
//!   `next` whose bytes only the aborted reader's own buffer received (its restart overwrites
//!   them with the next words). A take that finds a zero word at `next` reads nothing; the
//!   reader commits that word as read in a section of its own and takes again. So a handed-out
//!   word is zero in the batch by the time its read commits, and no word is handed out twice;
//!   the price is that a keystream word that is 0 by chance (probability 2^-64 per word) is
//!   never handed out.
//! - **take key** (`take_key`): if the key cell is full, copy the key into the refiller's own
//!   frame, zero it in the cell, and commit the cell empty. Exactly one refiller gets each key,
//!   so no two refills generate the same batch. A key with a zero word (left by a take key
//!   aborted between its two zero stores) is consumed as unusable: the refill then keys itself
//!   from the node.
//! - **put key** (`put_key`): on the CPU the key was taken from, if the refiller still owns its
//!   frame and the cell is empty, copy the next key (block 0's first half, fast key erasure)
//!   into the cell and commit its generation. Only empty cells are written, only in sections,
//!   so two puts never mix their words.
//! - **publish** (`publish`): on whatever CPU the refiller is on now (a migrated refiller loses
//!   nothing), if it still owns its frame, store the new control word. The frame it replaces,
//!   with its unread tail, now belongs to the publisher, which zeroes the tail and gives the
//!   frame back. No reader on that CPU is between its load of the control word and its commit
//!   when the store lands (it would have been preempted by the publisher, and aborted), and
//!   readers on other CPUs never touch the slot.
//!
//! The claim check of put key and publish is what makes a fork from a signal handler safe: in
//! the child the kernel zeroed the frame under the interrupted refill, claim word included, so
//! what that refill computed from the zeroed key is never put or published.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use crate::chacha::KEY_LEN;
use crate::numa::slot::BATCH_LEN;
use scalrand_os::wipe::zero;

/// log2 of the bytes of one slot.
const SLOT_SHIFT: u32 = 7;
/// Bytes of one slot.
const SLOT_BYTES: usize = 1 << SLOT_SHIFT;

const WORD: usize = 0;
const KSTATE: usize = 8;
const SPARE: usize = 32;
const KEY: usize = 64;

/// Bytes (and alignment) of one batch frame: a power of two, so that the control word's
/// `next` gives its frame and its offset with one mask each. Two pages: room for an
/// [`BATCH_LEN`] batch behind the header.
pub(crate) const FRAME_BYTES: usize = 8192;
/// The mask that gives a frame's address from the address of a byte in it.
const FRAME_BASE_MASK: i64 = -(FRAME_BYTES as i64);
const OWNER: usize = 0;
const FRAME_NODE_GEN: usize = 8;
const FRAME_SRC_GEN: usize = 16;
const FRAME_KEY: usize = 64;
/// The offset of the batch in its frame.
const DATA: usize = 256;
/// One past the batch's last byte, as an offset in the frame.
const DATA_END: usize = DATA + BATCH_LEN;
/// Where readers start in a new batch: its first [`KEY_LEN`] bytes became the next key.
pub(crate) const FIRST: usize = DATA + KEY_LEN;

/// One CPU's slot (see the module docs). Its fields are this file's alone: readers and
/// refillers go through the sections.
#[repr(C, align(128))]
pub(crate) struct RseqSlot {
    /// `[next:48 | reads:16]`; written only by commits inside sections on this slot's CPU.
    word: UnsafeCell<u64>,
    /// The node generation the key in `key` was taken under; 0: the cell is empty. Written
    /// only by commits inside sections on this slot's CPU.
    kstate: UnsafeCell<u64>,
    /// Reads of batches already replaced, added by the refill that replaced them.
    reads: AtomicUsize,
    /// Reads and bytes since the reseed schedule was last checked
    /// (`ScheduleCount::count_packed`).
    schedule: AtomicU64,
    /// A given-back frame kept for this CPU's next refill (0: none); written only inside
    /// sections on this slot's CPU.
    spare: UnsafeCell<u64>,
    _pad: [u8; KEY - 40],
    /// The key cell: written by put key, read and zeroed by take key, both in sections.
    key: UnsafeCell<[u8; KEY_LEN]>,
    _pad2: [u8; SLOT_BYTES - KEY - KEY_LEN],
}

const _: () = {
    assert!(core::mem::size_of::<RseqSlot>() == SLOT_BYTES);
    assert!(core::mem::offset_of!(RseqSlot, word) == WORD);
    assert!(core::mem::offset_of!(RseqSlot, kstate) == KSTATE);
    assert!(core::mem::offset_of!(RseqSlot, spare) == SPARE);
    assert!(core::mem::offset_of!(RseqSlot, key) == KEY);
};

// SAFETY: every field is valid at all-zero bytes: integers and byte arrays, atomics at 0. Zero
// means "no batch, no key" (module docs), what a fork child finds.
unsafe impl scalrand_os::wipe::ZeroValid for RseqSlot {}

// SAFETY: `word`, `kstate`, `spare` and `key` are written only inside sections on the slot's CPU, one
// thread at a time (the rseq protocol), and read there or by atomic loads of the aligned
// words; the other fields are atomics.
unsafe impl Sync for RseqSlot {}

impl RseqSlot {
    /// The control word, read from any CPU.
    pub(crate) fn word(&self) -> u64 {
        // SAFETY: `word` is an aligned u64 that is only written by single 8-byte stores;
        // reading it through an atomic view is a relaxed atomic load.
        unsafe { AtomicU64::from_ptr(self.word.get()) }.load(Ordering::Relaxed)
    }

    /// Reads served so far: replaced batches' and the active one's.
    pub(crate) fn reads(&self) -> usize {
        self.reads.load(Ordering::Relaxed) + reads(self.word())
    }

    /// Adds the reads of a replaced batch: a relaxed load and store (a statistic; two
    /// refills of one slot that meet can lose one batch's count).
    pub(crate) fn add_reads(&self, n: usize) {
        let r = self.reads.load(Ordering::Relaxed);
        self.reads.store(r.wrapping_add(n), Ordering::Relaxed);
    }

    /// The reseed schedule's count of this slot.
    pub(crate) fn schedule(&self) -> &AtomicU64 {
        &self.schedule
    }
}

impl Drop for RseqSlot {
    fn drop(&mut self) {
        zero(self.key.get_mut());
    }
}

/// The claim word of a frame kept as a slot's spare: even, so never a claim token.
pub(crate) const SPARE_OWNER: u64 = 2;

/// One batch frame (see the module docs): [`FRAME_BYTES`] from the frame pool.
#[repr(C, align(8192))]
pub(crate) struct BatchFrame {
    /// 0: free; [`SPARE_OWNER`]: kept as a slot's spare; otherwise the claim token of its
    /// owner (see `frames.rs`).
    pub(crate) owner: AtomicU64,
    /// The node's generation word the batch descends from (null before the first publish).
    node_gen: AtomicPtr<AtomicUsize>,
    /// The generation of that node the batch's key was taken under (0: none).
    src_gen: AtomicUsize,
    _pad: [u8; FRAME_KEY - 24],
    /// The refill's key while it generates (its claimant's alone).
    key: UnsafeCell<[u8; KEY_LEN]>,
    _pad2: [u8; DATA - FRAME_KEY - KEY_LEN],
    /// The batch: written by its owner, then read and zeroed by take sections once published.
    data: UnsafeCell<[u8; BATCH_LEN]>,
    _pad3: [u8; FRAME_BYTES - DATA_END],
}

const _: () = {
    assert!(core::mem::size_of::<BatchFrame>() == FRAME_BYTES);
    assert!(core::mem::offset_of!(BatchFrame, owner) == OWNER);
    assert!(core::mem::offset_of!(BatchFrame, node_gen) == FRAME_NODE_GEN);
    assert!(core::mem::offset_of!(BatchFrame, src_gen) == FRAME_SRC_GEN);
    assert!(core::mem::offset_of!(BatchFrame, key) == FRAME_KEY);
    assert!(core::mem::offset_of!(BatchFrame, data) == DATA);
    assert!(DATA_END <= FRAME_BYTES);
    // The read count of a control word is 16 bits; a batch serves at most
    // `BATCH_LEN / 8` reads.
    assert!(BATCH_LEN / 8 < 1 << 16);
    assert!(core::mem::align_of::<BatchFrame>() == FRAME_BYTES);
};

// SAFETY: integers, a null pointer and byte arrays: all-zero is a free frame.
unsafe impl scalrand_os::wipe::ZeroValid for BatchFrame {}

// SAFETY: `key` and `data` are written only by the frame's owner (the thread whose token is in
// `owner`) until it publishes the frame; after that `data` is read and zeroed only by take
// sections on one CPU (module docs) and, once replaced, by the publisher that replaced it,
// which then owns it. The other fields are atomics.
unsafe impl Sync for BatchFrame {}

impl BatchFrame {
    /// The key and the batch (its claimant's alone until it publishes the frame).
    ///
    /// # Safety
    /// The caller owns the frame (its token is in `owner`), and has not published it.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn parts(&self) -> (&mut [u8; KEY_LEN], &mut [u8; BATCH_LEN]) {
        // SAFETY: the caller's contract: nobody else touches these until the publish.
        unsafe { (&mut *self.key.get(), &mut *self.data.get()) }
    }

    /// Records the node generation word and generation the batch descends from.
    pub(crate) fn set_source(&self, node_gen: &AtomicUsize, generation: usize) {
        self.node_gen
            .store(core::ptr::from_ref(node_gen).cast_mut(), Ordering::Relaxed);
        self.src_gen.store(generation, Ordering::Relaxed);
    }

    /// The control word that publishes this frame's batch: its first unread byte, no reads.
    pub(crate) fn first_word(&self) -> u64 {
        ((core::ptr::from_ref(self) as u64) + FIRST as u64) << 16
    }

    /// Zeroes the unread part of a replaced batch (from `next`, the address of its first
    /// unread byte, to its end; every byte before it is zero already: takes zero what they
    /// hand out, skips commit only zero words, the refill zeroed the key's bytes) and returns
    /// its frame, all zero now, for the caller to keep as a spare or give back.
    ///
    /// # Safety
    /// `next` is the `next` of a control word that a publish just replaced, so its frame
    /// belongs to the caller now.
    pub(crate) unsafe fn zero_replaced<'a>(next: u64) -> &'a BatchFrame {
        let frame = (next & !(FRAME_BYTES as u64 - 1)) as usize as *mut u8;
        let at = (next & (FRAME_BYTES as u64 - 1)) as usize;
        debug_assert!((FIRST..=DATA_END).contains(&at), "a control word off its batch");
        let at = at.clamp(DATA, DATA_END);
        // SAFETY: the caller's contract: the frame is the caller's, `frame + at .. frame +
        // DATA_END` lies inside its batch, and frames live as long as the slots. Plain
        // stores: the frame is shared memory that is read again, so they are not dead.
        unsafe {
            core::ptr::write_bytes(frame.add(at), 0, DATA_END - at);
            &*frame.cast::<BatchFrame>()
        }
    }
}

impl Drop for BatchFrame {
    fn drop(&mut self) {
        zero(self.key.get_mut());
        zero(self.data.get_mut());
    }
}

/// The address of the next unread byte of a control word (0: no batch).
pub(crate) fn next(w: u64) -> u64 {
    w >> 16
}

/// The read count of a control word.
pub(crate) fn reads(w: u64) -> usize {
    (w & 0xffff) as usize
}

/// What [`take`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Taken {
    /// `k` words copied out, zeroed in the batch and committed as read.
    Done,
    /// The word at `next` is zero: an earlier take was aborted after zeroing some of its words
    /// (they were handed to that reader's own buffer, which its restart overwrites). [`skip`]
    /// steps over them.
    Zero,
    /// Nothing read: no rseq CPU number, a CPU beyond the slots, no batch, a new node
    /// generation, or fewer than `8k` bytes left.
    No,
}

/// The opening both reading sections share, as one piece of assembly text: `{slot}` (the CPU
/// number) becomes the slot's address, `{w}` its control word, `{t}` the address of the next
/// unread byte; no batch leaves through label `8` (nothing done).
macro_rules! open_slot {
    () => {
        concat!(
            "shl {slot}, {shift}\n",
            "add {slot}, {base}\n",
            "mov {w}, qword ptr [{slot}]\n",
            "mov {t}, {w}\n",
            "shr {t}, 16\n",
            "jz 8f\n",
        )
    };
}

/// With `{t}` the next unread byte: leaves through label `8` unless `8 * {k}` more bytes are
/// left in the batch (`{p}` and `{x}` are clobbered).
macro_rules! check_left {
    () => {
        concat!(
            "mov {p:e}, {t:e}\n",
            "and {p:e}, {fmask}\n",
            "lea {x}, [{p} + 8*{k}]\n",
            "cmp {x}, {end}\n",
            "ja 8f\n",
        )
    };
}

/// The **take** section with its copy step given: `$copy` moves the `k` words at `t` into
/// `out` and zeroes each in the batch after loading it (registers `p` and `x` are free for
/// it); `$($ops)*` adds `k` (a register or a constant) and whatever else `$copy` uses.
/// Evaluates to the status word (1 done, 2 a zero word at `next`, 0 nothing read).
macro_rules! take_section {
    ($off:expr, $base:expr, $n:expr, $out:expr, [$($copy:expr),+ $(,)?], $($ops:tt)*) => {{
        let status: u64;
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: [],
                cpu: "slot",
                body: [
                    open_slot!(),
                    "mov {x}, {t}",
                    "and {x}, {fbase}",
                    "mov {p}, qword ptr [{x} + {src_gen}]",
                    "test {p}, {p}",
                    "jz 8f",
                    "mov {x}, qword ptr [{x} + {node_gen}]",
                    "cmp {p}, qword ptr [{x}]",
                    "jne 8f",
                    check_left!(),
                    "cmp qword ptr [{t}], 0",
                    "je 2f",
                    $($copy,)+
                    "mov {x}, {w}",
                    "add {x}, {step}",
                    "mov qword ptr [{slot}], {x}",
                ],
                exits: ["2:", "mov {status:e}, 2", "jmp 9f"],
                status: "status",
            ),
            off = in(reg) $off,
            base = in(reg) $base,
            n = in(reg) u64::from($n),
            out = in(reg) $out,
            shift = const SLOT_SHIFT,
            node_gen = const FRAME_NODE_GEN,
            src_gen = const FRAME_SRC_GEN,
            end = const DATA_END,
            fmask = const FRAME_BYTES - 1,
            fbase = const FRAME_BASE_MASK,
            slot = out(reg) _,
            w = out(reg) _,
            t = out(reg) _,
            p = out(reg) _,
            x = out(reg) _,
            status = out(reg) status,
            $($ops)*
        );
        status
    }};
}

/// [`take_section!`] with a copy step of 16-byte moves: `$v` names an xmm register for the
/// chunk at byte offset `$o`. All chunks are loaded and stored to `out` first, then zeroed in
/// the batch.
macro_rules! take_chunks {
    ($off:expr, $base:expr, $n:expr, $out:expr, k = $k:literal, $($v:ident @ $o:literal),+) => {
        take_section!(
            $off,
            $base,
            $n,
            $out,
            [
                $(concat!("movdqu {", stringify!($v), "}, xmmword ptr [{t} + ", $o, "]"),)+
                "pxor {z}, {z}",
                $(concat!("movdqu xmmword ptr [{out} + ", $o, "], {", stringify!($v), "}"),)+
                $(concat!("movdqu xmmword ptr [{t} + ", $o, "], {z}"),)+
            ],
            k = const $k,
            step = const commit_step($k),
            $($v = out(xmm_reg) _,)+
            z = out(xmm_reg) _,
            options(nostack),
        )
    };
}

/// What a take of `k` words adds to the control word: `8k` bytes to `next`, one read.
const fn commit_step(k: u64) -> u64 {
    ((8 * k) << 16) + 1
}

/// The status word of a take section as a [`Taken`].
#[inline(always)]
fn taken(status: u64) -> Taken {
    match status {
        1 => Taken::Done,
        2 => Taken::Zero,
        _ => Taken::No,
    }
}

/// **take**: copies `k` (1..=8) words of the calling CPU's active batch into `out`, zeroing
/// each in the batch right after copying it, and commits them as read (see the module docs).
/// 1, 2, 4 and 8 words (`next_u64`, 16-byte salts, 32-byte keys, 64-byte reads) take
/// unrolled copy steps; other counts a word loop.
///
/// # Safety
/// `off` is `scalrand_os::cpu::rseq_offset()`'s value; `base` points to `n` [`RseqSlot`]s
/// reached by other threads only through these functions and the rules of the module docs,
/// whose control words name only published [`BatchFrame`]s; `out` is valid for `k` word
/// writes; `1 <= k <= 8`.
#[inline(always)]
pub(crate) unsafe fn take(off: isize, base: *mut u8, n: u32, k: u64, out: *mut u64) -> Taken {
    // For every block below: the caller upholds the contract; the block touches the calling
    // thread's rseq area, slot `cpu_id < n`'s control word, the header and batch of the frame
    // it names, and `out`. A published frame's node-generation pointer is non-null (a refill
    // sets it before its publish; the section checks the generation it is stored with first,
    // which is 0 only in a frame never published) and points at a node that lives as long as
    // the slots. The batch stores hit words at `next..next + 8k`, inside the batch (checked),
    // which no other reader reads before this section's commit (any reader on this CPU would
    // abort it first) and none after it (they are behind `next`); each is zeroed after its
    // load.
    //
    // Unrolled copy steps for the common sizes, 16-byte moves where they fit: an abort between
    // two zero stores leaves zero words at `next`, which `skip` steps over one by one, as it
    // does after the word loop below. Each `out` is valid for its `k` words (unaligned moves).
    let status = match k {
        // SAFETY: see above.
        1 => unsafe {
            take_section!(
                off,
                base,
                n,
                out,
                [
                    "mov {x}, qword ptr [{t}]",
                    "mov qword ptr [{out}], {x}",
                    "mov qword ptr [{t}], 0",
                ],
                k = const 1,
                step = const commit_step(1),
                options(nostack),
            )
        },
        // SAFETY: see above.
        2 => unsafe { take_chunks!(off, base, n, out, k = 2, v0 @ 0) },
        // SAFETY: see above.
        4 => unsafe { take_chunks!(off, base, n, out, k = 4, v0 @ 0, v1 @ 16) },
        // SAFETY: see above.
        8 => unsafe { take_chunks!(off, base, n, out, k = 8, v0 @ 0, v1 @ 16, v2 @ 32, v3 @ 48) },
        // SAFETY: see above; `out` is valid for `k` words.
        _ => unsafe {
            take_section!(
                off,
                base,
                n,
                out,
                [
                    "xor {p:e}, {p:e}",
                    "22:",
                    "mov {x}, qword ptr [{t} + 8*{p}]",
                    "mov qword ptr [{out} + 8*{p}], {x}",
                    "mov qword ptr [{t} + 8*{p}], 0",
                    "inc {p}",
                    "cmp {p}, {k}",
                    "jb 22b",
                ],
                k = in(reg) k,
                step = in(reg) commit_step(k),
                options(nostack),
            )
        },
    };
    taken(status)
}

/// **skip**: if the word at the calling CPU's `next` is zero (left by an aborted [`take`]),
/// commits it as read. Returns whether it did.
///
/// # Safety
/// As [`take`].
#[inline(always)]
pub(crate) unsafe fn skip(off: isize, base: *mut u8, n: u32) -> bool {
    let ok: u64;
    // SAFETY: as in `take`; the one store is the commit of the slot's control word, after a
    // load of the batch's word at `next`.
    unsafe {
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: [],
                cpu: "slot",
                body: [
                    open_slot!(),
                    check_left!(),
                    "cmp qword ptr [{t}], 0",
                    "jne 8f",
                    "mov {x}, {w}",
                    "add {x}, {step}",
                    "mov qword ptr [{slot}], {x}",
                ],
                exits: [],
                status: "ok",
            ),
            off = in(reg) off,
            base = in(reg) base,
            n = in(reg) u64::from(n),
            shift = const SLOT_SHIFT,
            end = const DATA_END,
            fmask = const FRAME_BYTES - 1,
            k = const 1,
            step = const 8u64 << 16,
            slot = out(reg) _,
            w = out(reg) _,
            t = out(reg) _,
            p = out(reg) _,
            x = out(reg) _,
            ok = out(reg) ok,
            options(nostack),
        );
    }
    ok != 0
}

/// **take key**: on the calling CPU's slot, if the key cell is full, copies the key to `out`,
/// zeroes it in the cell and commits the cell empty. Returns the CPU and the generation the
/// key was taken under, 0 when the key had a zero word (consumed as unusable: the caller
/// wipes `out`); `None` when the cell was empty or the CPU has no slot.
///
/// The key passes through one general-purpose and two vector registers, which the section
/// zeroes before its commit (an abort can leave them set: the caller clears the registers
/// afterwards too, `chacha::clear_vector_registers`). The second value says whether the
/// section was aborted (a signal or a preemption landed in it: a signal frame may hold those
/// registers).
///
/// # Safety
/// As [`take`]; `out` is valid for [`KEY_LEN`] bytes of writes.
#[inline(always)]
pub(crate) unsafe fn take_key(
    off: isize,
    base: *mut u8,
    n: u32,
    out: *mut u8,
) -> (Option<(usize, u64)>, bool) {
    let ok: u64;
    let cpu: u64;
    let generation: u64;
    let aborted: u32;
    // SAFETY: as in `take`; the stores are to `out` (the caller's), the zero stores of the
    // key cell and the commit of `kstate`, all on the calling CPU's slot.
    unsafe {
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: ["mov {ab:e}, 1"],
                cpu: "c",
                body: [
                    "mov {slot}, {c}",
                    "shl {slot}, {shift}",
                    "add {slot}, {base}",
                    "mov {g}, qword ptr [{slot} + {kstate}]",
                    "test {g}, {g}",
                    "jz 8f",
                    "mov {x}, qword ptr [{slot} + {key}]",
                    "test {x}, {x}",
                    "cmovz {g}, {x}",
                    "mov {x}, qword ptr [{slot} + {key} + 8]",
                    "test {x}, {x}",
                    "cmovz {g}, {x}",
                    "mov {x}, qword ptr [{slot} + {key} + 16]",
                    "test {x}, {x}",
                    "cmovz {g}, {x}",
                    "mov {x}, qword ptr [{slot} + {key} + 24]",
                    "test {x}, {x}",
                    "cmovz {g}, {x}",
                    "movdqu {v0}, xmmword ptr [{slot} + {key}]",
                    "movdqu {v1}, xmmword ptr [{slot} + {key} + 16]",
                    "movdqu xmmword ptr [{out}], {v0}",
                    "movdqu xmmword ptr [{out} + 16], {v1}",
                    "pxor {v0}, {v0}",
                    "movdqu xmmword ptr [{slot} + {key}], {v0}",
                    "movdqu xmmword ptr [{slot} + {key} + 16], {v0}",
                    "pxor {v1}, {v1}",
                    "xor {x:e}, {x:e}",
                    "mov qword ptr [{slot} + {kstate}], 0",
                ],
                exits: [],
                status: "ok",
            ),
            off = in(reg) off,
            base = in(reg) base,
            n = in(reg) u64::from(n),
            out = in(reg) out,
            shift = const SLOT_SHIFT,
            kstate = const KSTATE,
            key = const KEY,
            c = out(reg) cpu,
            slot = out(reg) _,
            g = out(reg) generation,
            x = out(reg) _,
            t = out(reg) _,
            v0 = out(xmm_reg) _,
            v1 = out(xmm_reg) _,
            ok = out(reg) ok,
            ab = inout(reg) 0u32 => aborted,
            options(nostack),
        );
    }
    ((ok != 0).then_some((cpu as usize, generation)), aborted != 0)
}

/// **put key**: on CPU `cpu`'s slot, if the calling thread runs there, still owns `frame`
/// (its `owner` is `token`) and the key cell is empty, copies the key at `src` into the cell
/// and commits it with `generation` (nonzero). Returns whether it did.
///
/// The key passes through two vector registers, zeroed before the commit (see [`take_key`]).
/// Returns whether it put the key, and whether the section was aborted (as [`take_key`]).
///
/// # Safety
/// As [`take`]; `cpu < n`; `frame` is a [`BatchFrame`]; `src` is valid for [`KEY_LEN`] bytes
/// of reads.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the section's operands, one register each
pub(crate) unsafe fn put_key(
    off: isize,
    base: *mut u8,
    n: u32,
    cpu: usize,
    frame: *const BatchFrame,
    token: u64,
    src: *const u8,
    generation: u64,
) -> (bool, bool) {
    let ok: u64;
    let aborted: u32;
    // SAFETY: as in `take`; the stores are the key cell's words and the commit of `kstate`,
    // on the calling CPU's slot, made only when that is slot `cpu` and the cell is empty.
    unsafe {
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: ["mov {ab:e}, 1"],
                cpu: "c",
                body: [
                    "cmp {c}, {want}",
                    "jne 8f",
                    "cmp qword ptr [{frame}], {token}",
                    "jne 8f",
                    "shl {c}, {shift}",
                    "add {c}, {base}",
                    "cmp qword ptr [{c} + {kstate}], 0",
                    "jne 8f",
                    "movdqu {v0}, xmmword ptr [{src}]",
                    "movdqu {v1}, xmmword ptr [{src} + 16]",
                    "movdqu xmmword ptr [{c} + {key}], {v0}",
                    "movdqu xmmword ptr [{c} + {key} + 16], {v1}",
                    "pxor {v0}, {v0}",
                    "pxor {v1}, {v1}",
                    "mov qword ptr [{c} + {kstate}], {g}",
                ],
                exits: [],
                status: "ok",
            ),
            off = in(reg) off,
            base = in(reg) base,
            n = in(reg) u64::from(n),
            want = in(reg) cpu as u64,
            frame = in(reg) frame,
            token = in(reg) token,
            src = in(reg) src,
            g = in(reg) generation,
            shift = const SLOT_SHIFT,
            kstate = const KSTATE,
            key = const KEY,
            c = out(reg) _,
            t = out(reg) _,
            v0 = out(xmm_reg) _,
            v1 = out(xmm_reg) _,
            ok = out(reg) ok,
            ab = inout(reg) 0u32 => aborted,
            options(nostack),
        );
    }
    (ok != 0, aborted != 0)
}

/// **publish**: on the calling CPU's slot, if the calling thread still owns `frame` (its
/// `owner` is `token`), stores `new` as the control word. Returns the CPU and the control word
/// it replaced, whose frame (if any) now belongs to the caller; `None` when it did not.
///
/// # Safety
/// As [`take`]; `frame` is a [`BatchFrame`] whose batch and source the caller wrote, and
/// `new` is its [`first_word`](BatchFrame::first_word).
#[inline(always)]
pub(crate) unsafe fn publish(
    off: isize,
    base: *mut u8,
    n: u32,
    frame: *const BatchFrame,
    token: u64,
    new: u64,
) -> Option<(usize, u64)> {
    let ok: u64;
    let old: u64;
    let cpu: u64;
    // SAFETY: as in `take`; the one store is the commit of the calling CPU's control word.
    unsafe {
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: [],
                cpu: "c",
                body: [
                    "cmp qword ptr [{frame}], {token}",
                    "jne 8f",
                    "mov {slot}, {c}",
                    "shl {slot}, {shift}",
                    "add {slot}, {base}",
                    "mov {old}, qword ptr [{slot}]",
                    "mov qword ptr [{slot}], {new}",
                ],
                exits: [],
                status: "ok",
            ),
            off = in(reg) off,
            base = in(reg) base,
            n = in(reg) u64::from(n),
            frame = in(reg) frame,
            token = in(reg) token,
            new = in(reg) new,
            shift = const SLOT_SHIFT,
            c = out(reg) cpu,
            slot = out(reg) _,
            t = out(reg) _,
            old = out(reg) old,
            ok = out(reg) ok,
            options(nostack),
        );
    }
    (ok != 0).then_some((cpu as usize, old))
}

/// **unstash**: takes the calling CPU's spare frame, if it has one. Returns the frame (its owner
/// word is [`SPARE_OWNER`]: the caller sets its own token).
///
/// # Safety
/// As [`take`]; spares are only frames of the pool the slots use.
#[inline(always)]
pub(crate) unsafe fn unstash(off: isize, base: *mut u8, n: u32) -> Option<*const BatchFrame> {
    let ok: u64;
    let frame: u64;
    // SAFETY: as in `take`; the one store is the commit clearing the calling CPU's spare.
    unsafe {
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: [],
                cpu: "c",
                body: [
                    "shl {c}, {shift}",
                    "add {c}, {base}",
                    "mov {f}, qword ptr [{c} + {spare}]",
                    "test {f}, {f}",
                    "jz 8f",
                    "mov qword ptr [{c} + {spare}], 0",
                ],
                exits: [],
                status: "ok",
            ),
            off = in(reg) off,
            base = in(reg) base,
            n = in(reg) u64::from(n),
            shift = const SLOT_SHIFT,
            spare = const SPARE,
            c = out(reg) _,
            f = out(reg) frame,
            t = out(reg) _,
            ok = out(reg) ok,
            options(nostack),
        );
    }
    (ok != 0).then_some(frame as usize as *const BatchFrame)
}

/// **stash**: keeps `frame` (all zero, its claim word [`SPARE_OWNER`]) as the calling CPU's
/// spare if it has none. Returns whether it did.
///
/// # Safety
/// As [`take`]; `frame` is a frame of the pool that the caller owns.
#[inline(always)]
pub(crate) unsafe fn stash(off: isize, base: *mut u8, n: u32, frame: *const BatchFrame) -> bool {
    let ok: u64;
    // SAFETY: as in `take`; the one store is the commit of the calling CPU's spare.
    unsafe {
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: [],
                cpu: "c",
                body: [
                    "shl {c}, {shift}",
                    "add {c}, {base}",
                    "cmp qword ptr [{c} + {spare}], 0",
                    "jne 8f",
                    "mov qword ptr [{c} + {spare}], {f}",
                ],
                exits: [],
                status: "ok",
            ),
            off = in(reg) off,
            base = in(reg) base,
            n = in(reg) u64::from(n),
            f = in(reg) frame,
            shift = const SLOT_SHIFT,
            spare = const SPARE,
            c = out(reg) _,
            t = out(reg) _,
            ok = out(reg) ok,
            options(nostack),
        );
    }
    ok != 0
}
