//! The reseed schedule: when the node pools take fresh input-pool output on their own.
//!
//! Linux reseeds its crng on a timer-free schedule: a reader that finds the key older than the
//! interval reseeds before it answers (`crng_has_old_seed`, `drivers/char/random.c`). The pools
//! do the same, with two triggers: after [`ReseedPolicy::max_bytes`] bytes of output, or after
//! [`ReseedPolicy::max_interval_secs`] seconds of the injected [`Clock`]. A `no_std` host
//! without a clock passes a [`NoClock`](scalrand_os::NoClock) (time never passes) or a
//! [`ManualClock`](scalrand_os::ManualClock) it sets itself, or calls
//! [`NodePools::reseed`](super::NodePools::reseed) when it likes.
//!
//! Readers look at the schedule every [`CHECK_EVERY_CALLS`] reads or [`CHECK_EVERY_BYTES`]
//! bytes of one per-CPU slot, so the clock is not read on every 32-byte read: a reseed is
//! due by the clock, and happens at the next check point of any slot. The pools own the
//! `Schedule` and ask it; it knows nothing of them.

use alloc::boxed::Box;
use core::fmt;

use scalrand_os::Clock;
use scalrand_os::primitive::{AtomicUsize, Ordering};

/// A slot checks the schedule after this many reads...
pub const CHECK_EVERY_CALLS: u32 = 64;
/// ...or after this many bytes, whichever comes first.
pub const CHECK_EVERY_BYTES: usize = 64 * 1024;

/// When the pools reseed from the input pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReseedPolicy {
    /// Reseed once this many bytes were handed out since the last reseed (0: never by bytes).
    pub max_bytes: u64,
    /// Reseed once this many seconds passed since the last reseed (0: never by time).
    pub max_interval_secs: u64,
}

impl ReseedPolicy {
    /// Linux's interval (60 s, `CRNG_RESEED_INTERVAL`) and 1 GiB of output.
    pub const LINUX_LIKE: Self = Self {
        max_bytes: 1 << 30,
        max_interval_secs: 60,
    };

    /// Only explicit [`NodePools::reseed`](super::NodePools::reseed) calls (and forks) reseed.
    pub const MANUAL: Self = Self {
        max_bytes: 0,
        max_interval_secs: 0,
    };
}

/// The schedule's state: the policy, its clock and what happened since the last reseed.
pub(crate) struct Schedule {
    pub(crate) policy: ReseedPolicy,
    clock: Box<dyn Clock + Send + Sync>,
    bytes_since_reseed: scalrand_os::pad::CachePadded<AtomicUsize>,
    last_reseed_secs: AtomicUsize,
}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schedule")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Schedule {
    pub(crate) fn new(policy: ReseedPolicy, clock: Box<dyn Clock + Send + Sync>) -> Self {
        let s = Self {
            policy,
            clock,
            bytes_since_reseed: scalrand_os::pad::CachePadded::new(AtomicUsize::new(0)),
            last_reseed_secs: AtomicUsize::new(0),
        };
        s.reseeded();
        s
    }

    fn now_secs(&self) -> u64 {
        self.clock.now().as_secs()
    }

    /// Records a reseed now.
    pub(crate) fn reseeded(&self) {
        self.bytes_since_reseed.store(0, Ordering::Relaxed);
        self.last_reseed_secs.store(
            usize::try_from(self.now_secs()).unwrap_or(usize::MAX),
            Ordering::Relaxed,
        );
    }

    /// Counts `bytes` of output; true when a reseed is due.
    pub(crate) fn due(&self, bytes: usize) -> bool {
        let p = self.policy;
        if p.max_bytes == 0 && p.max_interval_secs == 0 {
            return false;
        }
        let total = self
            .bytes_since_reseed
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        let by_bytes = p.max_bytes != 0 && total as u64 >= p.max_bytes;
        let by_time = p.max_interval_secs != 0 && {
            let last = self.last_reseed_secs.load(Ordering::Relaxed) as u64;
            self.now_secs().saturating_sub(last) >= p.max_interval_secs
        };
        by_bytes || by_time
    }
}
