//! The restartable sequences of the rseq read path and the slot layout they assume: the
//! **take**, **skip** and **publish** sections, each one `asm!` block on one CPU's
//! [`RseqSlot`]. What a slot holds and when it is refilled is the container's business
//! (`super`); this file is only the protocol that makes the lock-free reads safe.
//!
//! A restartable sequence (Linux 4.18, commit d7822b1e24f2 "rseq: Introduce restartable
//! sequences system call"; `scalrand_fastprng`'s `rseq` module explains the guarantee in
//! detail) either runs start to end on one CPU with no other thread of that CPU in between, or
//! is abandoned at the first preemption, migration or signal, and restarted from the top. Each
//! section is framed by `scalrand_os::__rseq_section!` (its descriptor, glibc's x86 abort
//! signature, the arming store, the `cpu_id` bounds check and the exits), as
//! `scalrand_fastprng`'s are; here the abort handler only jumps back to re-arm the section.
//!
//! # The slot
//! One [`RseqSlot`] per CPU number, 64-byte aligned: a control word `[epoch:32 | reads:16 |
//! pos:16]`, the generation and node its key came from, a lock, the key, and two
//! [`BATCH_LEN`]-byte buffers. Buffer `epoch & 1` is **active**: readers hand out its bytes
//! from `pos` on. The other is scratch for the next refill. Epoch 0 means "never keyed" (the
//! zero state a fork child finds in wipe-on-fork memory).
//!
//! # Sections
//! - **take** (`take`): read `cpu_id`, the control word; bail out if the epoch is 0, the
//!   node's generation moved, or fewer than `8k` bytes are left; copy `k` words from the active
//!   buffer at `pos` into the caller's buffer, **zeroing each word in the batch after loading
//!   it** (for 2, 4 and 8 words with 16-byte moves, all loads first, then the zero stores; a
//!   word at a time otherwise); **commit** `pos + 8k, reads + 1` with one store. No other reader reads
//!   those words before the commit (a reader on this CPU would abort the section first) or
//!   after it (they are behind `pos`), so the zero stores race with nothing.
//! - **skip** (`skip`): an abort between a zero store and the commit leaves zero words at
//!   `pos` whose bytes only the aborted reader's own buffer received (its restart overwrites
//!   them with the next words). A take that finds a zero word at `pos` reads nothing; the
//!   reader commits that word as read in a section of its own and takes again. So a handed-out
//!   word is zero in the batch by the time its read commits, and no word is handed out twice;
//!   the price is that a keystream word that is 0 by chance (probability 2^-64 per word) is
//!   never handed out.
//! - **commit a refill** (`publish`): a refiller holds the slot's lock, writes the scratch buffer
//!   and the new key with ordinary stores, then, in a section on that slot's CPU, checks the
//!   epoch it started from and stores the new control word (epoch + 1, pos 32, reads 0).
//!   Readers never read the scratch buffer, and only a lock holder writes it, so the ordinary
//!   stores race with nothing; the commit is a single store inside a section, so no reader on
//!   that CPU is between its load of the control word and its own commit when it lands (that
//!   reader would have been preempted by the refiller, and aborted).
//!
//! Readers on other CPUs never touch the slot (a migrated thread is aborted and reads its new
//! CPU's slot). So every byte is handed out at most once, and is zeroed in the batch before
//! its read returns, as the locked path does.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use crate::chacha::KEY_LEN;
use crate::numa::policy::ScheduleCount;
use crate::numa::slot::BATCH_LEN;
use scalrand_os::{Lock, LockGuard};
use zeroize::Zeroize;

/// Bytes of one slot: a 128-byte header and two batches.
const SLOT_BYTES: usize = 128 + 2 * BATCH_LEN;

const WORD: usize = 0;
const SRC_GEN: usize = 8;
const NODE_GEN: usize = 16;
const BUFS: usize = 128;

/// One CPU's rseq slot (see the module docs). Its fields are this file's alone: readers go
/// through the sections, a refiller through [`RseqSlot::try_refill`].
#[repr(C, align(64))]
pub(crate) struct RseqSlot {
    /// `[epoch:32 | reads:16 | pos:16]`; written only by commits inside sections on this
    /// slot's CPU.
    word: UnsafeCell<u64>,
    /// The node generation the key came from (0: none).
    src_gen: AtomicUsize,
    /// The node's generation word (null until the first refill).
    node_gen: AtomicPtr<AtomicUsize>,
    /// Held by refills.
    lock: Lock<()>,
    /// Reads of earlier epochs, added at each refill (the current epoch's are in `word`).
    reads: AtomicUsize,
    /// Reads and bytes since the reseed schedule was last checked (lock held).
    schedule: UnsafeCell<ScheduleCount>,
    _pad: [u8; 64 - 48],
    /// The slot key (lock held).
    key: UnsafeCell<[u8; KEY_LEN]>,
    _pad2: [u8; 32],
    bufs: UnsafeCell<[[u8; BATCH_LEN]; 2]>,
}

const _: () = {
    assert!(core::mem::size_of::<RseqSlot>() == SLOT_BYTES);
    assert!(core::mem::offset_of!(RseqSlot, word) == WORD);
    assert!(core::mem::offset_of!(RseqSlot, src_gen) == SRC_GEN);
    assert!(core::mem::offset_of!(RseqSlot, node_gen) == NODE_GEN);
    assert!(core::mem::offset_of!(RseqSlot, schedule) == 40);
    assert!(core::mem::offset_of!(RseqSlot, key) == 64);
    assert!(core::mem::offset_of!(RseqSlot, bufs) == BUFS);
};

// SAFETY: every field is valid at all-zero bytes: integers and byte arrays, atomics at 0, a
// null pointer, a free lock (word 0). Zero means epoch 0, "never keyed" (module docs).
unsafe impl scalrand_os::wipe::ZeroValid for RseqSlot {}

// SAFETY: `word` is written only by the commit stores of the sections (on the slot's CPU, one
// thread at a time: the rseq protocol) and read by sections and by `AtomicU64` loads; `key`,
// `schedule` and the scratch buffer are touched only with `lock` held (through `Refill`); the active buffer is
// read and zeroed by `take` (on the slot's CPU, before the commit that hands the words out)
// and read by `skip` (module docs).
unsafe impl Sync for RseqSlot {}

impl RseqSlot {
    /// A slot that was never keyed: all zero, as a fork child finds it.
    pub(crate) fn new() -> Self {
        Self {
            word: UnsafeCell::new(0),
            src_gen: AtomicUsize::new(0),
            node_gen: AtomicPtr::new(core::ptr::null_mut()),
            lock: Lock::new(()),
            reads: AtomicUsize::new(0),
            schedule: UnsafeCell::new(ScheduleCount::new()),
            _pad: [0; 64 - 48],
            key: UnsafeCell::new([0; KEY_LEN]),
            _pad2: [0; 32],
            bufs: UnsafeCell::new([[0; BATCH_LEN]; 2]),
        }
    }

    /// The control word, read from any CPU.
    pub(crate) fn word(&self) -> u64 {
        // SAFETY: `word` is an aligned u64 that is only written by single 8-byte stores;
        // reading it through an atomic view is a relaxed atomic load.
        unsafe { AtomicU64::from_ptr(self.word.get()) }.load(Ordering::Relaxed)
    }

    /// Reads served so far: earlier epochs' and the current one's.
    pub(crate) fn reads(&self) -> usize {
        self.reads.load(Ordering::Relaxed) + reads(self.word())
    }

    /// Takes the slot's lock (with holder tag `tag`) for a refill, or `None` if another
    /// thread is refilling it.
    pub(crate) fn try_refill(&self, tag: usize) -> Option<Refill<'_>> {
        let guard = self.lock.try_lock_tagged(tag)?;
        Some(Refill {
            slot: self,
            from: epoch(self.word()),
            _guard: guard,
        })
    }
}

/// A refiller's hold on one slot: its lock, and with it the key, the schedule count and the
/// scratch buffer of the next epoch. The control word cannot move from [`Refill::epoch`]
/// while it is held, except by [`Refill::publish`]: every other commit either needs the lock
/// or (a take, a skip) leaves the epoch as it is.
pub(crate) struct Refill<'a> {
    slot: &'a RseqSlot,
    from: u32,
    _guard: LockGuard<'a, ()>,
}

impl Refill<'_> {
    /// The epoch the refill starts from (0: never keyed, what a fork child finds).
    pub(crate) fn epoch(&self) -> u32 {
        self.from
    }

    /// The node generation the slot key was taken under (0: none).
    pub(crate) fn source(&self) -> usize {
        self.slot.src_gen.load(Ordering::Relaxed)
    }

    /// The epoch the refill publishes: epoch 0 is reserved for "never keyed", and the
    /// parity (the active buffer) alternates.
    fn to(&self) -> u32 {
        if self.from == u32::MAX {
            2
        } else {
            self.from + 1
        }
    }

    /// The slot key, for the caller to replace or to refill from, and the scratch buffer the
    /// refill writes (the buffer of the next epoch, which no reader reads before the commit).
    pub(crate) fn key_and_scratch(&mut self) -> (&mut [u8; KEY_LEN], &mut [u8; BATCH_LEN]) {
        let bufs = self.slot.bufs.get().cast::<[u8; BATCH_LEN]>();
        // SAFETY: the lock is held (`_guard`), and the key and the scratch buffer (index
        // `to & 1`, which no reader reads while the epoch is `from`) are only touched with it
        // held; `&mut self` keeps these two borrows the only ones.
        unsafe {
            (
                &mut *self.slot.key.get(),
                &mut *bufs.add((self.to() & 1) as usize),
            )
        }
    }

    /// Records that the key now comes from generation `generation` of the node whose
    /// generation word is `node_gen` (which the take section compares with it).
    pub(crate) fn set_source(&mut self, node_gen: &AtomicUsize, generation: usize) {
        self.slot.node_gen.store(
            core::ptr::from_ref(node_gen).cast_mut(),
            Ordering::Relaxed,
        );
        self.slot.src_gen.store(generation, Ordering::Relaxed);
    }

    /// The schedule count (lock held).
    pub(crate) fn schedule(&mut self) -> &mut ScheduleCount {
        // SAFETY: lock held; `&mut self` keeps this borrow the only one.
        unsafe { &mut *self.slot.schedule.get() }
    }

    /// Commits the refill on the calling CPU (**commit a refill**): the scratch buffer becomes
    /// the active one, handed out from its first word after the key. Returns the reads the
    /// old epoch served, after zeroing its buffer; `None` when the thread is no longer on the
    /// slot's CPU: the new batch is zeroed and the slot's source cleared, so the next reader
    /// on that CPU refills (its key may be of an older generation).
    ///
    /// # Safety
    /// `off`, `base` and `n` are as [`take`]'s, and `base` holds this slot; the caller wrote
    /// the scratch buffer and the key, and zeroed the scratch buffer's first [`KEY_LEN`]
    /// bytes (the new key's: they lie below the first `pos`, which no refill zeroes again;
    /// `chacha::refill_batch` does this).
    pub(crate) unsafe fn publish(&mut self, off: isize, base: *mut u8, n: u32) -> Option<usize> {
        debug_assert!(
            self.key_and_scratch().1[..KEY_LEN].iter().all(|&b| b == 0),
            "the new key's bytes were left in the batch"
        );
        let to = self.to();
        let new = (u64::from(to) << 32) | KEY_LEN as u64;
        let slot_ptr = core::ptr::from_ref(self.slot).cast_mut().cast::<u8>();
        // SAFETY: the caller's contract; the lock is held and the scratch buffer and key are
        // written.
        match unsafe { publish(off, base, n, slot_ptr, u64::from(self.from), new) } {
            Some(old) => {
                let served = reads(old);
                self.slot.reads.fetch_add(served, Ordering::Relaxed);
                // Only the words the old epoch never handed out are zeroed: every word
                // before its `pos` is zero already (a take zeroes the words it hands out
                // before its commit, a skip commits only zero words, and a refill zeroes the
                // key's words below the first `pos`).
                debug_assert!(pos(old) <= BATCH_LEN && pos(old).is_multiple_of(8));
                let pos = pos(old).min(BATCH_LEN);
                let bufs = self.slot.bufs.get().cast::<[u8; BATCH_LEN]>();
                // SAFETY: the old active buffer, from `pos <= BATCH_LEN` to its end: after
                // the commit no reader reads it, and the next writer of it is the next
                // refill, which needs the lock held here. Plain stores (`zeroize`'s byte-wise
                // volatile ones are many times slower): the buffer is shared memory that is
                // read again, so they are not dead.
                unsafe {
                    let old_buf = bufs.add((self.from & 1) as usize).cast::<u8>();
                    core::ptr::write_bytes(old_buf.add(pos), 0, BATCH_LEN - pos);
                }
                self.from = to;
                Some(served)
            }
            None => {
                self.key_and_scratch().1.zeroize();
                self.slot.src_gen.store(0, Ordering::Relaxed);
                None
            }
        }
    }
}

/// The epoch of a control word.
pub(crate) fn epoch(w: u64) -> u32 {
    (w >> 32) as u32
}

/// The position of a control word: the offset of the next byte to hand out.
pub(crate) fn pos(w: u64) -> usize {
    (w & 0xffff) as usize
}

/// The read count of a control word.
pub(crate) fn reads(w: u64) -> usize {
    ((w >> 16) & 0xffff) as usize
}

/// What [`take`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Taken {
    /// `k` words copied out, zeroed in the batch and committed as read.
    Done,
    /// The word at `pos` is zero: an earlier take was aborted after zeroing some of its words
    /// (they were handed to that reader's own buffer, which its restart overwrites). [`skip`]
    /// steps over them.
    Zero,
    /// Nothing read: no rseq CPU number, a CPU beyond the slots, epoch 0, a new node
    /// generation, or fewer than `8k` bytes left.
    No,
}

/// The opening both reading sections share, as one piece of assembly text: `{slot}` (the CPU
/// number) becomes the slot's address, `{w}` its control word, `{t}` the epoch; epoch 0 (never
/// keyed) leaves through label `8` (nothing done).
macro_rules! open_slot {
    () => {
        concat!(
            "imul {slot}, {slot}, {size}\n",
            "add {slot}, {base}\n",
            "mov {w}, qword ptr [{slot}]\n",
            "mov {t}, {w}\n",
            "shr {t}, 32\n",
            "jz 8f\n",
        )
    };
}

/// With the epoch in `{t}` and `pos` in `{p}`: `{t}` becomes the address of the word at `pos`
/// in the active buffer, less `{bufs}` (buffer `epoch & 1`, [`BATCH_LEN`] bytes each, so
/// `{shift}` is its log2), and the flags say whether that word is zero.
macro_rules! word_at_pos {
    () => {
        concat!(
            "and {t}, 1\n",
            "shl {t}, {shift}\n",
            "add {t}, {slot}\n",
            "add {t}, {p}\n",
            "cmp qword ptr [{t} + {bufs}], 0\n",
        )
    };
}

/// log2 of [`BATCH_LEN`]: `word_at_pos!` finds the active buffer with a shift.
const BATCH_SHIFT: u32 = BATCH_LEN.trailing_zeros();
const _: () = assert!(BATCH_LEN == 1 << BATCH_SHIFT, "word_at_pos! shifts by log2(BATCH_LEN)");
const _: () = assert!(BATCH_LEN < 1 << 16, "pos is a 16-bit field of the control word");

/// The **take** section with its copy step given: `$copy` moves the `k` words at `t + bufs`
/// into `out` and zeroes each in the batch after loading it (registers `p` and `x` are free
/// for it); `$($ops)*` adds `k` (a register or a constant) and whatever else `$copy` uses.
/// Evaluates to the status word (1 done, 2 a zero word at `pos`, 0 nothing read).
macro_rules! take_section {
    ($off:expr, $base:expr, $n:expr, $out:expr, [$($copy:expr),+ $(,)?], $($ops:tt)*) => {{
        let status: u64;
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: [],
                cpu: "slot",
                body: [
                    open_slot!(),
                    "mov {x}, qword ptr [{slot} + {node_gen}]",
                    "mov {x}, qword ptr [{x}]",
                    "cmp {x}, qword ptr [{slot} + {src_gen}]",
                    "jne 8f",
                    "movzx {p:e}, {w:x}",
                    "lea {x}, [{p} + 8*{k}]",
                    "cmp {x}, {batch}",
                    "ja 8f",
                    word_at_pos!(),
                    "je 2f",
                    $($copy,)+
                    "lea {x}, [{w} + 8*{k} + 0x10000]",
                    "mov qword ptr [{slot}], {x}",
                ],
                exits: ["2:", "mov {status:e}, 2", "jmp 9f"],
                status: "status",
            ),
            off = in(reg) $off,
            base = in(reg) $base,
            n = in(reg) u64::from($n),
            out = in(reg) $out,
            size = const SLOT_BYTES,
            node_gen = const NODE_GEN,
            src_gen = const SRC_GEN,
            batch = const BATCH_LEN,
            shift = const BATCH_SHIFT,
            bufs = const BUFS,
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
                $(concat!("movdqu {", stringify!($v), "}, xmmword ptr [{t} + {bufs} + ", $o, "]"),)+
                "pxor {z}, {z}",
                $(concat!("movdqu xmmword ptr [{out} + ", $o, "], {", stringify!($v), "}"),)+
                $(concat!("movdqu xmmword ptr [{t} + {bufs} + ", $o, "], {z}"),)+
            ],
            k = const $k,
            $($v = out(xmm_reg) _,)+
            z = out(xmm_reg) _,
            options(nostack),
        )
    };
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
/// `off` is `scalrand_os::cpu::rseq_offset()`'s value; `base` points to `n` [`RseqSlot`]s reached by other threads
/// only through these functions and the rules of the module docs; `out` is valid for `k`
/// word writes; `1 <= k <= 8`.
#[inline(always)]
pub(crate) unsafe fn take(off: isize, base: *mut u8, n: u32, k: u64, out: *mut u64) -> Taken {
    // For every block below: the caller upholds the contract; the block touches the calling
    // thread's rseq area, slot `cpu_id < n`'s control word, generation fields and active
    // buffer, and `out`. The node-generation pointer is non-null whenever the epoch is nonzero
    // (a refill sets it before its commit) and points at a node that lives as long as the
    // slots. The batch stores hit words at `pos..pos + k` of the active buffer, which no other
    // reader reads before this section's commit (any reader on this CPU would abort it first)
    // and none after it (they are behind `pos`); each is zeroed after its load.
    //
    // Unrolled copy steps for the common sizes, 16-byte moves where they fit: an abort between
    // two zero stores leaves zero words at `pos`, which `skip` steps over one by one, as it
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
                    "mov {x}, qword ptr [{t} + {bufs}]",
                    "mov qword ptr [{out}], {x}",
                    "mov qword ptr [{t} + {bufs}], 0",
                ],
                k = const 1,
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
                    "mov {x}, qword ptr [{t} + 8*{p} + {bufs}]",
                    "mov qword ptr [{out} + 8*{p}], {x}",
                    "mov qword ptr [{t} + 8*{p} + {bufs}], 0",
                    "inc {p}",
                    "cmp {p}, {k}",
                    "jb 22b",
                ],
                k = in(reg) k,
                options(nostack),
            )
        },
    };
    taken(status)
}

/// **skip**: if the word at the calling CPU's `pos` is zero (left by an aborted [`take`]),
/// commits it as read. Returns whether it did.
///
/// # Safety
/// As [`take`].
#[inline(always)]
pub(crate) unsafe fn skip(off: isize, base: *mut u8, n: u32) -> bool {
    let ok: u64;
    // SAFETY: as in `take`; the one store is the commit of the slot's control word, after a
    // load of the active buffer's word at `pos`.
    unsafe {
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: [],
                cpu: "slot",
                body: [
                    open_slot!(),
                    "movzx {p:e}, {w:x}",
                    "lea {x}, [{p} + 8]",
                    "cmp {x}, {batch}",
                    "ja 8f",
                    word_at_pos!(),
                    "jne 8f",
                    "lea {x}, [{w} + 8]",
                    "mov qword ptr [{slot}], {x}",
                ],
                exits: [],
                status: "ok",
            ),
            off = in(reg) off,
            base = in(reg) base,
            n = in(reg) u64::from(n),
            size = const SLOT_BYTES,
            batch = const BATCH_LEN,
            shift = const BATCH_SHIFT,
            bufs = const BUFS,
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

/// **commit a refill**: on `slot`'s CPU, if its epoch is still `from`, stores `new` as its
/// control word. Returns the control word it replaced, or `None` (another CPU, or the epoch
/// moved).
///
/// # Safety
/// As [`take`]; `slot` is one of the `n` slots at `base`, whose lock the caller holds, with
/// the scratch buffer of epoch `from + 1` and the key written.
#[inline(always)]
unsafe fn publish(
    off: isize,
    base: *mut u8,
    n: u32,
    slot: *mut u8,
    from: u64,
    new: u64,
) -> Option<u64> {
    let ok: u64;
    let old: u64;
    // SAFETY: as in `take`; the one store is the commit of the slot's control word.
    unsafe {
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: [],
                cpu: "c",
                body: [
                    "imul {c}, {c}, {size}",
                    "add {c}, {base}",
                    "cmp {c}, {slot}",
                    "jne 8f",
                    "mov {old}, qword ptr [{slot}]",
                    "mov {t}, {old}",
                    "shr {t}, 32",
                    "cmp {t}, {from}",
                    "jne 8f",
                    "mov qword ptr [{slot}], {new}",
                ],
                exits: [],
                status: "ok",
            ),
            off = in(reg) off,
            base = in(reg) base,
            n = in(reg) u64::from(n),
            slot = in(reg) slot,
            from = in(reg) from,
            new = in(reg) new,
            size = const SLOT_BYTES,
            c = out(reg) _,
            t = out(reg) _,
            old = out(reg) old,
            ok = out(reg) ok,
            options(nostack),
        );
    }
    (ok != 0).then_some(old)
}

impl Drop for RseqSlot {
    fn drop(&mut self) {
        self.key.get_mut().zeroize();
        for b in self.bufs.get_mut() {
            b.zeroize();
        }
    }
}
