//! Where the words of a `PerCpu` (xoroshiro) slot sit, so that a restartable sequence never
//! trips over its own rseq area.
//!
//! A section reads `cpu_id` (bytes 4..8 of the thread's rseq area) and writes `rseq_cs`
//! (bytes 8..16). The kernel only registers a 32-byte-aligned area: `struct rseq` is declared
//! `aligned(4 * sizeof(__u64))` in `include/uapi/linux/rseq.h`, and the `rseq` system call in
//! `kernel/rseq.c` returns `EINVAL` for an area of the original 32-byte size that is not
//! 32-byte aligned (and for a larger one not aligned to `struct rseq`). A slot word whose
//! address has the same low 12 bits as those bytes ("4K aliasing") makes a load wait on an
//! unrelated store, and a `PerCpu<Xoroshiro128++>` step with its buffers over the area's
//! bytes 4..16 is measurably slower (BENCHMARKS.md, "scalrand-fastprng and
//! `scalrand::fast`"). So every word a xoroshiro
//! section loads or stores sits at an offset that is 16..32 modulo 32 within a
//! 128-byte-aligned slot: it can never alias bytes 4..16 modulo 32 of any thread's rseq area,
//! wherever the allocator and each thread's TLS put them. Only the abort counter, touched
//! once per abort, sits at byte 0.
//!
//! The wyrand slots (`PerCpuWyRand`, `StaticWyRand`) keep their state at byte 0, where
//! `scalrand::fast::next_u64` measured faster than with it at byte 16 or 24, for a reason not
//! found; their state word can alias `cpu_id` only in a slot whose page offset equals the
//! area's, which needs the area at a multiple of 128 bytes in its page.

/// Byte offset of slot 0's abort counter (`restarts`).
#[allow(dead_code)]
pub(crate) const RESTARTS: usize = 0;
/// Byte offset of a xoroshiro slot's `cur`.
#[allow(dead_code)]
pub(crate) const HOT: usize = 16;
/// Byte offset of a xoroshiro slot's first `(s0, s1)` buffer.
#[allow(dead_code)]
pub(crate) const BUF_A: usize = 48;
/// Byte offset of a xoroshiro slot's second `(s0, s1)` buffer.
#[allow(dead_code)]
pub(crate) const BUF_B: usize = 80;

/// Whether the 8-byte word at byte `at` of a 32-byte-aligned slot lies in bytes 16..32 of its
/// 32-byte granule.
const fn clear_of_rseq_area(at: usize) -> bool {
    at % 32 >= 16 && at % 32 + 8 <= 32
}

const _: () = {
    assert!(clear_of_rseq_area(HOT));
    assert!(clear_of_rseq_area(BUF_A) && clear_of_rseq_area(BUF_A + 8));
    assert!(clear_of_rseq_area(BUF_B) && clear_of_rseq_area(BUF_B + 8));
    assert!(
        BUF_B + 16 <= 1 << crate::rseq::SHIFT && (1usize << crate::rseq::SHIFT).is_multiple_of(32)
    );
    assert!(RESTARTS + 8 <= HOT);
};

#[cfg(test)]
mod tests {
    use super::{BUF_A, BUF_B, HOT};

    /// Brute force over every place a 32-byte-aligned rseq area and a 128-byte-aligned slot
    /// can have within a 4 KiB page: no word a section touches shares a low-12-bit address
    /// with the area's `cpu_id` or `rseq_cs` bytes (4..16).
    #[test]
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
