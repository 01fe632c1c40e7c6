//! [`RseqSlot`]: one CPU's restartable-sequence slot, one layout for every engine and both
//! placements, with every word a section touches placed so that it never trips over the
//! thread's own rseq area.
//!
//! | bytes | word | touched by |
//! |---|---|---|
//! | 0..8 | [`STATE`]: a one-word engine's state (wyrand) | its sections (load, store) |
//! | 8..16 | [`RESTARTS`]: slot 0's count of aborted sections | the abort handler only |
//! | 16..24 | [`HOT`]: a two-word engine's `cur` (xoroshiro128), the active buffer's offset | its sections (load, commit store) |
//! | 24..32 | [`MASTER`]: slot 0's master state in the wipe-on-fork placement | seeding only |
//! | 48..64 | [`BUF_A`]: a two-word engine's first `(s0, s1)` buffer | its sections |
//! | 80..96 | [`BUF_B`]: its second buffer | its sections |
//!
//! A section reads `cpu_id` (bytes 4..8 of the thread's rseq area) and writes `rseq_cs`
//! (bytes 8..16). The kernel only registers a 32-byte-aligned area: `struct rseq` is declared
//! `aligned(4 * sizeof(__u64))` in `include/uapi/linux/rseq.h`, and the `rseq` system call in
//! `kernel/rseq.c` returns `EINVAL` for an area of the original 32-byte size that is not
//! 32-byte aligned (and for a larger one not aligned to `struct rseq`). A slot word whose
//! address has the same low 12 bits as those bytes ("4K aliasing") makes a load wait on an
//! unrelated store, and a `PerCpu<Xoroshiro128++>` step with its buffers over the area's
//! bytes 4..16 is measurably slower (BENCHMARKS.md, "scalrand-fastprng and
//! `scalrand::fast`"). So every word a xoroshiro section loads or stores sits at an offset
//! that is 16..32 modulo 32 within a 128-byte-aligned slot: it can never alias bytes 4..16
//! modulo 32 of any thread's rseq area, wherever the allocator and each thread's TLS put them.
//! The abort counter and the master state, touched once per abort or per seeding, sit
//! outside that rule.
//!
//! The wyrand state sits at byte 0, where the facade's per-word draw measured faster than
//! with it at byte 16 or 24, for a reason not found; it can alias `cpu_id` only in a slot
//! whose page offset equals the area's, which needs the area at a multiple of 128 bytes in
//! its page.

use core::cell::UnsafeCell;
use core::fmt;
use core::sync::atomic::AtomicUsize;

use scalrand_os::pad::CachePadded;

/// Byte offset of a one-word engine's state.
pub(crate) const STATE: usize = 0;
/// Byte offset of the abort counter (`restarts`; counted in slot 0).
pub(crate) const RESTARTS: usize = 8;
/// Byte offset of a two-word engine's `cur`.
pub(crate) const HOT: usize = 16;
/// Byte offset of the wipe-on-fork placement's master state (in slot 0).
pub(crate) const MASTER: usize = 24;
/// Byte offset of a two-word engine's first `(s0, s1)` buffer.
pub(crate) const BUF_A: usize = 48;
/// Byte offset of a two-word engine's second `(s0, s1)` buffer.
pub(crate) const BUF_B: usize = 80;

/// One CPU's slot (see the module docs), always inside a [`CachePadded`]: 128 bytes and
/// 128-byte aligned on x86_64, where the sections run.
///
/// Plain `core` cells even under loom: only the assembly, `&mut` access and (in the
/// wipe-on-fork placement) atomic views touch them, which loom does not model, and the
/// assembly needs this exact layout.
#[repr(C)]
pub struct RseqSlot {
    word: UnsafeCell<u64>,
    restarts: AtomicUsize,
    /// Up to [`HOT`] whatever the width of `usize` and the alignment of `u64` (4 on i686).
    _pad0: [u8; 8 - core::mem::size_of::<usize>()],
    cur: UnsafeCell<u64>,
    master: UnsafeCell<u64>,
    _pad1: [u64; 2],
    a: UnsafeCell<[u64; 2]>,
    _pad2: [u64; 2],
    b: UnsafeCell<[u64; 2]>,
}

// SAFETY: the cells are reached only through the restartable sequences (slot `i` by threads
// running on CPU `i`, one at a time, the kernel aborting any section another thread of that
// CPU interrupts), through `&mut self`, or (in the wipe-on-fork placement)
// through atomic views of `word` and `master` by a protocol the sections honour (see
// `rseq::step_wyrand_seeded`); `restarts` is atomic.
unsafe impl Sync for RseqSlot {}

// SAFETY: every field is an integer, an array of integers or an atomic, all valid at 0. A
// zero `word` means "not seeded" to the one placement that keeps slots in wipe-on-fork
// memory (one-word engines only, which seed such a slot before stepping it).
#[cfg(all(feature = "std", not(scalrand_loom)))]
unsafe impl scalrand_os::wipe::ZeroValid for RseqSlot {}

impl RseqSlot {
    /// A slot holding `word` and, in the active buffer, `pair`; every other word 0.
    fn new(word: u64, pair: [u64; 2]) -> Self {
        Self {
            word: UnsafeCell::new(word),
            restarts: AtomicUsize::new(0),
            _pad0: [0; 8 - core::mem::size_of::<usize>()],
            cur: UnsafeCell::new(BUF_A as u64),
            master: UnsafeCell::new(0),
            _pad1: [0; 2],
            a: UnsafeCell::new(pair),
            _pad2: [0; 2],
            b: UnsafeCell::new([0; 2]),
        }
    }

    /// A slot holding a one-word engine's state (0: not seeded, in the wipe-on-fork
    /// placement).
    pub(crate) fn one_word(state: u64) -> Self {
        Self::new(state, [0; 2])
    }

    /// A slot holding a two-word engine's state `(s0, s1)` in its active buffer.
    pub(crate) fn two_words(s0: u64, s1: u64) -> Self {
        Self::new(0, [s0, s1])
    }

    /// A one-word engine's state; `&mut` excludes every other access.
    pub(crate) fn word_mut(&mut self) -> u64 {
        *self.word.get_mut()
    }

    /// A two-word engine's active state; `&mut` excludes every other access.
    pub(crate) fn two_words_mut(&mut self) -> (u64, u64) {
        let [s0, s1] = if *self.cur.get_mut() == BUF_A as u64 {
            *self.a.get_mut()
        } else {
            *self.b.get_mut()
        };
        (s0, s1)
    }

    /// The sections of this instance that the kernel aborted (counted in slot 0).
    #[cfg(feature = "alloc")]
    pub(crate) fn restarts(&self) -> u64 {
        self.restarts.load(core::sync::atomic::Ordering::Relaxed) as u64
    }

    /// The state word, atomically (the wipe-on-fork placement's seeding and tests).
    #[cfg(all(feature = "std", not(scalrand_loom)))]
    pub(crate) fn word(&self) -> &core::sync::atomic::AtomicU64 {
        // SAFETY: `word` is 8-byte aligned (offset 0 of a slot that `CachePadded` aligns to
        // far more) and lives as long as `self`; the sections' plain loads and stores of it
        // are single-copy atomic on x86_64, and nothing else accesses it non-atomically
        // while shared.
        unsafe { core::sync::atomic::AtomicU64::from_ptr(self.word.get()) }
    }

    /// The master state, atomically (slot 0 of the wipe-on-fork placement).
    #[cfg(all(feature = "std", not(scalrand_loom)))]
    pub(crate) fn master(&self) -> &core::sync::atomic::AtomicU64 {
        // SAFETY: as in `word` (offset 24); no section touches it.
        unsafe { core::sync::atomic::AtomicU64::from_ptr(self.master.get()) }
    }
}

impl fmt::Debug for RseqSlot {
    /// Never prints a state.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RseqSlot { .. }")
    }
}

/// Whether the 8-byte word at byte `at` of a 32-byte-aligned slot lies in bytes 16..32 of its
/// 32-byte granule.
const fn clear_of_rseq_area(at: usize) -> bool {
    at % 32 >= 16 && at % 32 + 8 <= 32
}

// The sections' address arithmetic, commit stores and abort counter assume exactly this.
const _: () = {
    use core::mem::{align_of, offset_of};
    assert!(offset_of!(RseqSlot, word) == STATE);
    assert!(offset_of!(RseqSlot, restarts) == RESTARTS);
    assert!(offset_of!(RseqSlot, cur) == HOT);
    assert!(offset_of!(RseqSlot, master) == MASTER);
    assert!(offset_of!(RseqSlot, a) == BUF_A);
    assert!(offset_of!(RseqSlot, b) == BUF_B);
    assert!(align_of::<CachePadded<RseqSlot>>() >= 8);
    assert!(clear_of_rseq_area(HOT));
    assert!(clear_of_rseq_area(BUF_A) && clear_of_rseq_area(BUF_A + 8));
    assert!(clear_of_rseq_area(BUF_B) && clear_of_rseq_area(BUF_B + 8));
};

#[cfg(test)]
mod tests {
    use super::{BUF_A, BUF_B, HOT};

    /// Brute force over every place a 32-byte-aligned rseq area and a 128-byte-aligned slot
    /// can have within a 4 KiB page: no word a xoroshiro section touches shares a low-12-bit
    /// address with the area's `cpu_id` or `rseq_cs` bytes (4..16).
    #[test]
    #[cfg_attr(
        miri,
        ignore = "arithmetic on offsets only: nothing for Miri to check, and 20,000 steps"
    )]
    fn no_hot_word_aliases_the_rseq_area() {
        let hot = [HOT, BUF_A, BUF_A + 8, BUF_B, BUF_B + 8];
        for area in (0..4096).step_by(32) {
            let touched = (area + 4)..(area + 16);
            for slot in (0..4096).step_by(128) {
                for w in hot {
                    let at = (slot + w) % 4096;
                    assert!(
                        at + 8 <= touched.start || at >= touched.end,
                        "area {area:#x}, slot {slot:#x}, word {w}"
                    );
                }
            }
        }
    }
}
