//! The pool of [`BatchFrame`]s the rseq slots' refills write their batches into: pages of
//! wipe-on-fork memory ([`Levels`], mapped a level at a time as more refills are in flight at
//! once), each taken by one compare-exchange of its claim word and given back by a store.
//!
//! A frame is owned by one refiller while it writes, by a slot while its batch is published,
//! and by the refiller that replaces that batch until it gives the frame back. With more
//! threads than CPUs, many refillers may be preempted mid-refill at once, each holding a
//! frame: the next level (twice as many frames) is mapped when every frame of the mapped ones
//! is taken, up to [`scalrand_os::scratch::LEVELS`] levels; past that a refill does not run
//! and the read takes the locked path.
//!
//! The claim word (`owner`) holds a **claim token** that a fork child can never match: the fork
//! generation the frame was taken under (shifted, with the low bit set, so it is never 0,
//! "free"). A fork from a signal handler that interrupted a refill leaves that refill, in the
//! child, writing a frame the kernel zeroed (claim word included): its put key and publish
//! sections compare the claim word with the token and refuse.

use core::sync::atomic::Ordering;

use scalrand_os::scratch::{LEVELS, Levels};

use super::protocol::{BatchFrame, FRAME_BYTES};

/// Frames of every rseq slot, shared by all CPUs.
pub(crate) struct Frames {
    levels: Levels<BatchFrame>,
}

/// The calling process image's claim token (see the module docs).
#[inline]
pub(crate) fn token() -> u64 {
    ((scalrand_os::fork::generation() as u64) << 1) | 1
}

impl Frames {
    /// Frames for `cpus` CPU numbers: two each at first (the active batch and one refill).
    pub(crate) fn new(cpus: usize) -> Self {
        Self {
            levels: Levels::new(cpus.saturating_mul(2), false),
        }
    }

    /// Whether a fork child receives the frames zeroed.
    pub(crate) fn wipes_on_fork(&self) -> bool {
        self.levels.wipes_on_fork()
    }

    /// Takes a free frame for the caller (its claim word becomes `token`), searching from
    /// `hint` (a CPU number, so that CPUs do not meet); `None` when every level is taken (or
    /// a frame lies above the 48 bits a control word holds, which Linux never maps without
    /// being asked to).
    #[inline]
    pub(crate) fn claim(&self, hint: usize, token: u64) -> Option<&BatchFrame> {
        for i in self.levels.search_order() {
            let Some(level) = self.levels.level(i) else {
                continue;
            };
            let n = level.len();
            let start = hint.wrapping_mul(2) % n;
            for k in 0..n {
                let j = if start + k < n {
                    start + k
                } else {
                    start + k - n
                };
                let frame = &level[j];
                if frame.owner.load(Ordering::Relaxed) == 0
                    && frame
                        .owner
                        .compare_exchange(0, token, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    if (core::ptr::from_ref(frame) as u64) >> 47 != 0 {
                        frame.owner.store(0, Ordering::Release);
                        return None;
                    }
                    return Some(frame);
                }
            }
        }
        None
    }

    /// The address ranges of the mapped frames (for `__secret_memory`).
    pub(crate) fn memory(&self) -> impl Iterator<Item = (*const u8, usize)> + '_ {
        (0..LEVELS).filter_map(|i| {
            self.levels
                .ready(i)
                .map(|l| (l.as_ptr().cast::<u8>(), l.len() * FRAME_BYTES))
        })
    }
}
