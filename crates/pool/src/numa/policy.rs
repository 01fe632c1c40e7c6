//! The per-CPU read policy that both kinds of slot follow (the locked slots of `slot.rs` and
//! the rseq slots of `rseq.rs`): when a slot key is stale and must be taken again from its
//! node before it serves a byte, and when a slot's reader looks at the reseed schedule.
//!
//! Linux's per-CPU `crng` (`drivers/char/random.c`, 5.18) keeps the same two facts per CPU:
//! the generation its key was taken under, compared with the base key's before every use.

use super::schedule::{CHECK_EVERY_BYTES, CHECK_EVERY_CALLS};

/// Whether a slot key taken from node `src_node` under generation `src_gen` must be replaced
/// before it serves a read for node `node`, whose generation is now `current`. Generation 0
/// means "never keyed" (the state a fork child finds in wiped memory); node generations start
/// at 1, so it is never current.
#[inline(always)]
pub(crate) fn is_stale(src_gen: usize, src_node: usize, node: usize, current: usize) -> bool {
    src_gen == 0 || src_node != node || src_gen != current
}

/// Reads and bytes a slot has served since its reader last looked at the reseed schedule.
/// All zero is a fresh count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct ScheduleCount {
    calls: u32,
    bytes: u32,
}

impl ScheduleCount {
    /// A fresh count.
    pub(crate) const fn new() -> Self {
        Self { calls: 0, bytes: 0 }
    }

    /// Counts `calls` reads of `bytes` bytes in all. Once the slot has served
    /// [`CHECK_EVERY_CALLS`] reads or [`CHECK_EVERY_BYTES`] bytes, returns the bytes since the
    /// last check (for the reader to count against the schedule) and starts again.
    #[inline]
    pub(crate) fn count(&mut self, calls: usize, bytes: usize) -> Option<usize> {
        self.calls = self
            .calls
            .saturating_add(u32::try_from(calls).unwrap_or(u32::MAX));
        self.bytes = self
            .bytes
            .saturating_add(u32::try_from(bytes).unwrap_or(u32::MAX));
        (self.calls >= CHECK_EVERY_CALLS || self.bytes as usize >= CHECK_EVERY_BYTES).then(|| {
            let b = self.bytes as usize;
            *self = Self::new();
            b
        })
    }
}

// Only where the rseq slots exist (their refills count with it); the test runs wherever the
// target has 64-bit atomics.
#[cfg(target_has_atomic = "64")]
#[cfg_attr(not(test), allow(dead_code))]
impl ScheduleCount {
    /// [`count`](Self::count) on a count packed into one atomic word (`[calls:32 |
    /// bytes:32]`), for slots that no lock guards (the rseq slots, counted by whichever
    /// refill replaces a batch). A relaxed load and store, no read-modify-write: two refills
    /// of one slot that meet (one preempted between the two) can lose one count, which only
    /// moves the schedule's next look by one batch.
    pub(crate) fn count_packed(
        word: &core::sync::atomic::AtomicU64,
        calls: usize,
        bytes: usize,
    ) -> Option<usize> {
        use core::sync::atomic::Ordering;
        let w = word.load(Ordering::Relaxed);
        let mut c = Self {
            calls: (w >> 32) as u32,
            bytes: w as u32,
        };
        let due = c.count(calls, bytes);
        word.store(
            (u64::from(c.calls) << 32) | u64::from(c.bytes),
            Ordering::Relaxed,
        );
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_stale_when_never_keyed_from_another_node_or_an_older_generation() {
        assert!(is_stale(0, 0, 0, 0), "generation 0 is never current");
        assert!(is_stale(0, 1, 1, 5));
        assert!(is_stale(5, 0, 1, 5), "another node");
        assert!(is_stale(4, 1, 1, 5), "an older generation");
        assert!(!is_stale(5, 1, 1, 5));
    }

    #[test]
    fn the_schedule_is_due_after_so_many_reads_or_bytes() {
        let mut c = ScheduleCount::new();
        for _ in 1..CHECK_EVERY_CALLS {
            assert_eq!(c.count(1, 32), None);
        }
        assert_eq!(c.count(1, 32), Some(CHECK_EVERY_CALLS as usize * 32));
        assert_eq!(c, ScheduleCount::new(), "starts again");
        assert_eq!(c.count(1, CHECK_EVERY_BYTES - 1), None);
        assert_eq!(c.count(1, 1), Some(CHECK_EVERY_BYTES));
        // A refill's worth of reads at once, and lengths beyond u32 saturate.
        assert_eq!(c.count(CHECK_EVERY_CALLS as usize, 992), Some(992));
        assert_eq!(c.count(1, usize::MAX), Some(u32::MAX as usize));
    }

    #[test]
    #[cfg(target_has_atomic = "64")]
    fn the_packed_count_is_due_when_the_plain_one_is() {
        let w = core::sync::atomic::AtomicU64::new(0);
        let mut c = ScheduleCount::new();
        for i in 0..3 * CHECK_EVERY_CALLS as usize {
            let bytes = 100 + i % 7;
            assert_eq!(
                ScheduleCount::count_packed(&w, 1, bytes),
                c.count(1, bytes),
                "read {i}"
            );
        }
    }
}
