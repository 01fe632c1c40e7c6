//! The restartable-sequence fast path (Linux, x86_64, glibc ≥ 2.35).
//!
//! # What a restartable sequence guarantees
//! A thread registers a `struct rseq` area with the kernel (glibc does this for every thread
//! and publishes where, as `__rseq_offset` from the thread pointer). Before entering a critical
//! section the thread stores a pointer to a descriptor `{start_ip, post_commit_offset,
//! abort_ip}` into the area's `rseq_cs` field. If the kernel preempts the thread, migrates it
//! or delivers a signal while its instruction pointer is inside
//! `[start_ip, start_ip + post_commit_offset)`, it moves the instruction pointer to `abort_ip`
//! before the thread runs again. So a section either runs start to end on one CPU with no
//! other thread of that CPU interleaved, or is abandoned and restarted from the top.
//!
//! # Why the per-CPU step here is sound
//! A xoroshiro slot ([`RseqSlot`](crate::layout::RseqSlot)) holds `cur` at [`HOT`] and two
//! state buffers `(s0, s1)` at [`BUF_A`] and [`BUF_B`] (placed so that no word a section
//! touches can alias the rseq area's hot bytes, see `layout`); `cur` is the byte offset of the
//! *active* buffer, the other one is scratch. `restarts` (at [`RESTARTS`]) is not part of the
//! protocol: slot 0's counts the instance's aborted sections. A wyrand slot holds its one-word
//! state at [`STATE`] (see [`step_wyrand`]). The section (one `asm!` block, so the compiler cannot move
//! code into or out of it):
//! 1. reads `cpu_id` from the rseq area and bounds-checks it against the slot count;
//! 2. loads `cur` and the active `(s0, s1)`, computes the output and the next state in
//!    registers;
//! 3. writes the next state into the **inactive** buffer (two plain stores);
//! 4. **commits** by storing the inactive buffer's offset into `cur`: one 8-byte store, the
//!    last instruction of the section.
//!
//! Step 3 never touches the active state, so an abort at any point leaves the generator's
//! state unchanged, and the restart recomputes from it. The inactive buffer is read only after
//! a commit names it, and a commit retires only at the end of a section that ran from its
//! start without interruption, having written that whole buffer itself: any thread that ran on
//! this CPU in between would have aborted the section. Only threads running *on that CPU*
//! touch slot `cpu`, and the CPU serialises them; other CPUs never read or write it, so no
//! `lock` prefix or fence is needed. A thread that migrates mid-section is aborted and restarts
//! on its new CPU, reading the new `cpu_id`. The slot memory is reached only through these
//! `asm!` blocks and through `&mut PerCpu`, never through a shared Rust reference (the
//! wipe-on-fork placement adds atomic compare-exchanges from 0 on a wyrand state word, which
//! [`step_wyrand_seeded`] allows).
//!
//! (A single 16-byte store of `(s0, s1)` would also be a valid commit, but it moves the state
//! through vector registers and the next call's loads wait on it, whether the step itself runs
//! in general or in vector registers; and even an unsound in-place update by two plain stores
//! is only a little faster than this layout. BENCHMARKS.md, "scalrand-fastprng and
//! `scalrand::fast`", has the measurements.)
//!
//! A thread whose rseq registration failed reads `cpu_id` as -1 or -2, which the unsigned
//! bounds check rejects; the caller then uses the try-lock slots, which are a separate set of
//! states, so the two paths never share a slot. `__rseq_size == 0` (rseq disabled by the
//! glibc tunable `glibc.pthread.rseq=0`) or a libc without `__rseq_offset` turns the fast path
//! off for the whole process.
//!
//! Every section here is one `slot_section!`: `scalrand_os::__rseq_section!`'s frame (the
//! descriptor, the arming store, the `cpu_id` bounds check, the exits) around the step. The
//! abort handler sits out of line in `__rseq_failure`, preceded by glibc's x86 signature
//! `0x53053053` encoded as the operand of a `ud1` instruction (the kernel checks the four
//! bytes before `abort_ip`); it adds one to slot 0's `restarts` word with a `lock inc` (the
//! only atomic instruction on any rseq path, and only on an abort; `PerCpu::rseq_restarts`
//! reads it) and jumps back to re-arm `rseq_cs` and start again. It addresses the counter
//! through `base`, an input register the section never writes, so it is valid wherever the
//! abort landed.

/// log2 of the slot stride: each slot is one `CachePadded` (128 bytes on x86_64).
pub(crate) const SHIFT: u32 = 7;

pub(crate) use crate::layout::{BUF_A, BUF_B, HOT, RESTARTS, STATE};

// The sections index slots by `cpu << SHIFT` and need the layout's hot words inside a slot.
const _: () = {
    use core::mem::{align_of, size_of};
    use scalrand_os::pad::CachePadded;
    type Slot = CachePadded<crate::layout::RseqSlot>;
    assert!(size_of::<Slot>() == 1 << SHIFT);
    assert!(align_of::<Slot>().is_multiple_of(32));
    assert!(BUF_B + 16 <= 1 << SHIFT && (1usize << SHIFT).is_multiple_of(32));
};

/// glibc's `__rseq_offset` when this process's threads have a registered rseq area.
#[inline(always)]
pub(crate) fn offset() -> Option<isize> {
    scalrand_os::cpu::rseq_offset()
}

/// One section on the calling CPU's slot (`{slot}` holds its address once `body` starts),
/// with the abort handler counting the abort in slot 0's `restarts` word (atomically: threads
/// of any CPU may abort at once) before re-arming and starting over. `ins` and `outs` are the
/// step's own register operands; evaluates to the status word (1 at label `5`, 0 when the
/// thread's `cpu_id` is not below `cpus`, or what an exit set).
///
/// Every caller's `unsafe` block argues: the block touches only the calling thread's rseq
/// area (fs-relative), slot `cpu_id < cpus` at `base` and slot 0's `restarts` (the abort
/// handler, only after a section started, so only when `cpu_id < cpus`), under the
/// restartable-sequence protocol of the module docs; it uses no stack.
macro_rules! slot_section {
    (
        $off:expr, $base:expr, $cpus:expr,
        body: [$($body:expr),* $(,)?],
        exits: [$($exit:expr),* $(,)?],
        ins: [$($ins:tt)*],
        outs: [$($outs:tt)*] $(,)?
    ) => {{
        let status: u32;
        core::arch::asm!(
            scalrand_os::__rseq_section!(
                abort: ["lock inc qword ptr [{base} + {restarts}]"],
                cpu: "slot",
                body: ["shl {slot}, {shift}", "add {slot}, {base}", $($body),*],
                exits: [$($exit),*],
                status: "status",
            ),
            off = in(reg) $off,
            base = in(reg) $base,
            n = in(reg) u64::from($cpus),
            $($ins)*
            shift = const SHIFT,
            restarts = const RESTARTS,
            slot = out(reg) _,
            t = out(reg) _,
            $($outs)*
            status = out(reg) status,
            options(nostack),
        );
        status
    }};
}

macro_rules! rseq_step {
    ($(#[$doc:meta])* $name:ident, a = $a:literal, b = $b:literal, c = $c:literal, out = [$($out:literal),+ $(,)?]) => {
        $(#[$doc])*
        ///
        /// Returns `None` when the thread's `cpu_id` is not below `cpus` (unregistered
        /// thread, or a CPU number beyond the slots).
        ///
        /// # Safety
        /// `off` must be `offset()`'s value; `base` must point to `cpus` slots of
        /// `1 << SHIFT` bytes each laid out as [`RseqSlot`](crate::layout::RseqSlot), `cur`
        /// holding [`BUF_A`] or [`BUF_B`], whose `cur` and buffers are accessed only through
        /// these functions while any thread may call them, and whose `restarts` word is only
        /// ever accessed atomically.
        #[inline(always)]
        pub(crate) unsafe fn $name(off: isize, base: *mut u8, cpus: u32) -> Option<u64> {
            let out: u64;
            // SAFETY: the caller upholds the contract above; see `slot_section!`.
            let status = unsafe {
                slot_section!(
                    off, base, cpus,
                    body: [
                        "mov {cur}, qword ptr [{slot} + {hot}]",
                        "mov {s0}, qword ptr [{slot} + {cur}]",
                        "mov {s1}, qword ptr [{slot} + {cur} + 8]",
                        $($out,)+
                        "xor {s1}, {s0}",
                        "mov {t}, {s1}",
                        "shl {t}, {b}",
                        "rol {s0}, {a}",
                        "xor {s0}, {s1}",
                        "xor {s0}, {t}",
                        "rol {s1}, {c}",
                        "xor {cur}, {flip}",
                        "mov qword ptr [{slot} + {cur}], {s0}",
                        "mov qword ptr [{slot} + {cur} + 8], {s1}",
                        "mov qword ptr [{slot} + {hot}], {cur}",
                    ],
                    exits: [],
                    ins: [
                        hot = const HOT,
                        flip = const BUF_A ^ BUF_B,
                        a = const $a,
                        b = const $b,
                        c = const $c,
                    ],
                    outs: [
                        s0 = out(reg) _,
                        s1 = out(reg) _,
                        cur = out(reg) _,
                        r = out(reg) out,
                    ],
                )
            };
            (status != 0).then_some(out)
        }
    };
}

rseq_step! {
    /// One xoroshiro128+ step on the current CPU's slot.
    step_plus, a = 24, b = 16, c = 37,
    out = ["lea {r}, [{s0} + {s1}]"]
}

rseq_step! {
    /// One xoroshiro128++ step on the current CPU's slot.
    step_plusplus, a = 49, b = 21, c = 28,
    out = ["lea {r}, [{s0} + {s1}]", "rol {r}, 17", "add {r}, {s0}"]
}

rseq_step! {
    /// One xoroshiro128** step on the current CPU's slot.
    step_starstar, a = 24, b = 16, c = 37,
    out = ["lea {r}, [{s0} + {s0}*4]", "rol {r}, 7", "lea {r}, [{r} + {r}*8]"]
}

/// The wyrand section: load the slot's state word, run the `check` instructions on it (`{s}`),
/// add `inc`, commit with one store; evaluates to `(status, s)`.
macro_rules! wyrand_section {
    (
        $off:expr, $base:expr, $cpus:expr, $inc:expr,
        check: [$($check:expr),* $(,)?],
        exits: [$($exit:expr),* $(,)?] $(,)?
    ) => {{
        let out: u64;
        let status = slot_section!(
            $off, $base, $cpus,
            body: [
                "mov {s}, qword ptr [{slot} + {state}]",
                $($check,)*
                "add {s}, {inc}",
                "mov qword ptr [{slot} + {state}], {s}",
            ],
            exits: [$($exit),*],
            ins: [inc = in(reg) $inc, state = const STATE,],
            outs: [s = out(reg) out,],
        );
        (status, out)
    }};
}

/// One wyrand step on the current CPU's slot: `state += inc`, committed by one 8-byte store,
/// the section's last instruction. Returns the new state (the caller mixes it into the output
/// outside the section); `None` when the thread's `cpu_id` is not below `cpus`.
///
/// Why one store suffices: the whole state is one word, so there is no torn state to guard
/// against and no scratch buffer; an abort before the store leaves the slot unchanged and the
/// restart recomputes from it, an abort cannot land after it (the section ends there).
///
/// # Safety
/// `off` must be `offset()`'s value; `base` must point to `cpus` slots of `1 << SHIFT` bytes
/// each laid out as [`RseqSlot`](crate::layout::RseqSlot), whose state words are accessed only
/// through this function while any thread may call it, and whose `restarts` word is only ever
/// accessed atomically.
#[inline(always)]
pub(crate) unsafe fn step_wyrand(off: isize, base: *mut u8, cpus: u32, inc: u64) -> Option<u64> {
    // SAFETY: the caller upholds the contract above; see `slot_section!`.
    let (status, out) = unsafe { wyrand_section!(off, base, cpus, inc, check: [], exits: []) };
    (status != 0).then_some(out)
}

/// What [`step_wyrand_seeded`] found.
pub(crate) enum Seeded {
    /// The slot's new state (the caller mixes it into the output).
    Advanced(u64),
    /// The slot's state is 0 (never seeded, or wiped in a fork child): the address of the
    /// slot's state word, which the section did not write.
    Unseeded(*mut u8),
    /// The thread's `cpu_id` is not below `cpus` (unregistered thread, a CPU number beyond the
    /// slots, or `cpus == 0`): nothing was read.
    NoSlot,
}

/// [`step_wyrand`] for slots where state 0 means "not seeded": a section that loads 0 leaves
/// without storing and says so. Any other state advances by `inc` and commits with one store,
/// the section's last instruction, exactly as in `step_wyrand`.
///
/// A seeder may therefore set a state with an atomic compare-exchange from 0 from any CPU:
/// a section only stores after loading a nonzero state, and a slot goes from nonzero to 0 only
/// by a commit on its own CPU (which aborts every other section of that CPU) or in a fork
/// child's wiped copy, so no section in flight can overwrite a seed.
///
/// # Safety
/// `off` must be `offset()`'s value; when `cpus > 0`, `base` must point to `cpus` slots of
/// `1 << SHIFT` bytes each laid out as [`RseqSlot`](crate::layout::RseqSlot), whose state
/// words are written only by this function and by compare-exchanges from 0, and whose
/// `restarts` word is only ever accessed atomically. With `cpus == 0`, `base` is not read (the
/// unsigned compare fails first).
#[inline(always)]
pub(crate) unsafe fn step_wyrand_seeded(off: isize, base: *mut u8, cpus: u32, inc: u64) -> Seeded {
    // SAFETY: the caller upholds the contract above; see `slot_section!`.
    let (status, out) = unsafe {
        wyrand_section!(
            off, base, cpus, inc,
            check: ["test {s}, {s}", "jz 2f"],
            exits: ["2:", "lea {s}, [{slot} + {state}]", "mov {status:e}, 2", "jmp 9f"],
        )
    };
    match status {
        1 => Seeded::Advanced(out),
        2 => Seeded::Unseeded(out as *mut u8),
        _ => Seeded::NoSlot,
    }
}
