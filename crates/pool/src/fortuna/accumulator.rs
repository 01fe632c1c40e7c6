//! The FS&K accumulator (Cryptography Engineering §9.5): 32 pools of running SHA-256 state
//! that collect entropy events, and the reseed schedule that drains them into the generator.
//!
//! An event from source `s` is appended to pool `i` as `s ‖ len(e) ‖ e` (one byte each for
//! `s` and the length, as FS&K and PyCrypto encode it). A reseed is due when pool 0 holds at
//! least the minimum pool size (64 bytes by default, headers included) and at least 100 ms have
//! passed since the previous reseed (time from an injectable [`Clock`]). Reseed number r
//! (counting from 1) uses pool i iff 2^i divides r; the seed is the concatenation of
//! SHA-256(SHA-256(pool i)) over the used pools in order, and used pools are emptied. Seed:
//! FreeBSD's Fortuna (the FS&K design it implements) and PyCrypto's accumulator, whose
//! self-test vectors the integration tests reproduce.

use core::fmt;
use core::time::Duration;

use crate::sha256::Sha256;
use scalrand_os::wipe::zero;

use super::FortunaError;
use super::generator::Generator;
use super::prf::Prf;

/// Number of entropy pools.
pub const POOL_COUNT: usize = 32;
/// Default minimum size of pool 0 before a reseed, in bytes (FS&K's `MinPoolSize`).
pub const DEFAULT_MIN_POOL_SIZE: u64 = 64;
/// Minimum time between two reseeds (FS&K: 100 ms).
pub const RESEED_INTERVAL: Duration = Duration::from_millis(100);
/// Largest event payload in bytes (FS&K: 1..=32).
pub const MAX_EVENT_LEN: usize = 32;
/// Length of the longest reseed seed: one 32-byte digest per pool.
pub(crate) const MAX_SEED_LEN: usize = 32 * POOL_COUNT;

/// The monotonic time source of the 100 ms reseed rule: scalrand's one [`Clock`] trait
/// (`scalrand_os::Clock`), re-exported here. `std` builds get [`monotonic_now`]; a `no_std`
/// host passes a function reading its own timer (`fn() -> Duration` is a `Clock`), and tests
/// pass one they control.
pub use scalrand_os::Clock;

/// The system's monotonic time (`scalrand_os::monotonic_now`, re-exported): the clock
/// [`Fortuna::new`](super::Fortuna::new) uses.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use scalrand_os::clock::monotonic_now;

/// One pool: running SHA-256 state and the number of bytes appended since it was emptied.
#[derive(Clone)]
struct Pool {
    hash: Sha256,
    len: u64,
}

impl Pool {
    fn new() -> Self {
        Self {
            hash: Sha256::new(),
            len: 0,
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        self.hash.update(bytes);
        self.len = self.len.saturating_add(bytes.len() as u64);
    }

    /// SHA-256(SHA-256(contents)) into `out`; the pool is emptied.
    fn drain_into(&mut self, out: &mut [u8]) {
        let old = core::mem::replace(self, Self::new());
        let mut inner = old.hash.finalize();
        let mut outer = Sha256::digest(&inner);
        out.copy_from_slice(&outer);
        zero(&mut inner);
        zero(&mut outer);
    }
}

/// A reseed seed drained from the pools; wiped on drop.
pub(crate) struct Seed {
    pub(crate) bytes: [u8; MAX_SEED_LEN],
    pub(crate) len: usize,
}

impl Seed {
    pub(crate) fn new() -> Self {
        Self {
            bytes: [0; MAX_SEED_LEN],
            len: 0,
        }
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }
}

impl Drop for Seed {
    fn drop(&mut self) {
        zero(&mut self.bytes);
    }
}

/// The 32-pool entropy accumulator.
///
/// ```
/// use core::time::Duration;
/// use scalrand_pool::fortuna::{Accumulator, Generator};
/// fn fixed_clock() -> Duration { Duration::from_secs(1) }
/// let mut acc = Accumulator::new(fixed_clock as fn() -> Duration);
/// let mut g = Generator::new();
/// for _ in 0..2 {
///     acc.add_random_event(42, 0, &[b'X'; 32])?; // 34 bytes each, headers included
/// }
/// assert_eq!(acc.reseed_if_due(&mut g), Some(1)); // reseed 1 drains pool 0
/// assert!(g.is_seeded());
/// # Ok::<(), scalrand_pool::fortuna::FortunaError>(())
/// ```
pub struct Accumulator<C: Clock> {
    pools: [Pool; POOL_COUNT],
    reseed_count: u64,
    last_reseed: Option<Duration>,
    min_pool_size: u64,
    clock: C,
}

impl<C: Clock> fmt::Debug for Accumulator<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Pool contents and lengths stay private; the counters are not secret.
        f.debug_struct("Accumulator")
            .field("reseed_count", &self.reseed_count)
            .field("min_pool_size", &self.min_pool_size)
            .finish_non_exhaustive()
    }
}

impl<C: Clock> Accumulator<C> {
    /// An empty accumulator with the default minimum pool size (64 bytes).
    pub fn new(clock: C) -> Self {
        Self {
            pools: core::array::from_fn(|_| Pool::new()),
            reseed_count: 0,
            last_reseed: None,
            min_pool_size: DEFAULT_MIN_POOL_SIZE,
            clock,
        }
    }

    /// An empty accumulator whose pool 0 must hold `min_pool_size` bytes before a reseed.
    ///
    /// # Errors
    /// [`FortunaError::MinPoolSize`] for 0 (a reseed would not wait for any entropy).
    pub fn with_min_pool_size(clock: C, min_pool_size: u64) -> Result<Self, FortunaError> {
        if min_pool_size == 0 {
            return Err(FortunaError::MinPoolSize);
        }
        let mut acc = Self::new(clock);
        acc.min_pool_size = min_pool_size;
        Ok(acc)
    }

    /// Appends event `data` from `source` to pool `pool` as `source ‖ len ‖ data`.
    ///
    /// # Errors
    /// [`FortunaError::PoolIndex`] when `pool >= 32`, [`FortunaError::EventLength`] when
    /// `data` is empty or longer than 32 bytes; nothing is appended then.
    pub fn add_random_event(
        &mut self,
        source: u8,
        pool: usize,
        data: &[u8],
    ) -> Result<(), FortunaError> {
        let p = self
            .pools
            .get_mut(pool)
            .ok_or(FortunaError::PoolIndex { pool })?;
        let len = u8::try_from(data.len())
            .ok()
            .filter(|l| (1..=MAX_EVENT_LEN as u8).contains(l))
            .ok_or(FortunaError::EventLength { len: data.len() })?;
        p.append(&[source, len]);
        p.append(data);
        Ok(())
    }

    /// Bytes appended to `pool` since it was last emptied (headers included); `None` for a
    /// pool index ≥ 32.
    #[must_use]
    pub fn pool_len(&self, pool: usize) -> Option<u64> {
        self.pools.get(pool).map(|p| p.len)
    }

    /// Whether pool 0 has reached the minimum pool size (the 100 ms rule aside).
    #[must_use]
    pub fn pool0_full(&self) -> bool {
        self.pools[0].len >= self.min_pool_size
    }

    /// Reseeds done so far.
    #[must_use]
    pub fn reseed_count(&self) -> u64 {
        self.reseed_count
    }

    /// Whether a reseed is due now: pool 0 is full and [`RESEED_INTERVAL`] has passed since
    /// the last reseed (or there was none).
    #[must_use]
    pub fn reseed_due(&self) -> bool {
        self.due_at(self.clock.now())
    }

    fn due_at(&self, now: Duration) -> bool {
        self.pool0_full()
            && self
                .last_reseed
                .is_none_or(|last| now.saturating_sub(last) >= RESEED_INTERVAL)
    }

    /// If a reseed is due, drains the pools it uses into `seed` and returns its number r.
    pub(crate) fn take_seed(&mut self, seed: &mut Seed) -> Option<u64> {
        let now = self.clock.now();
        if !self.due_at(now) {
            return None;
        }
        self.reseed_count = self.reseed_count.wrapping_add(1);
        self.last_reseed = Some(now);
        let r = self.reseed_count;
        seed.len = 0;
        for (i, pool) in self.pools.iter_mut().enumerate() {
            // 2^i divides r; r = 0 (after 2^64 reseeds) is divisible by every 2^i.
            if r.trailing_zeros() as usize >= i {
                let end = seed.len + 32;
                if let Some(dst) = seed.bytes.get_mut(seed.len..end) {
                    pool.drain_into(dst);
                    seed.len = end;
                }
            }
        }
        Some(r)
    }

    /// If a reseed is due, reseeds `generator` from the pools it uses and returns the
    /// reseed's number r (1 for the first); otherwise `None`.
    pub fn reseed_if_due<P: Prf>(&mut self, generator: &mut Generator<P>) -> Option<u64> {
        let mut seed = Seed::new();
        let r = self.take_seed(&mut seed)?;
        generator.reseed(seed.as_slice());
        Some(r)
    }

    /// The clock this accumulator reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

#[cfg(test)]
#[cfg(feature = "std")]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> std::string::String {
        b.iter().map(|x| std::format!("{x:02x}")).collect()
    }

    fn digest(p: &mut Pool) -> std::string::String {
        let mut out = [0u8; 32];
        p.clone().drain_into(&mut out);
        hex(&out)
    }

    /// PyCrypto's published FortunaPool vectors (SelfTest/Random/Fortuna/
    /// test_FortunaAccumulator.py, test_FortunaPool): raw appends, SHAd-256 digests.
    #[test]
    fn pool_digest_matches_pycrypto() {
        let mut p = Pool::new();
        assert_eq!(
            digest(&mut p),
            "5df6e0e2761359d30a8275058e299fcc0381534545f55cf43e41983f5d4c9456"
        );
        p.append(b"abc");
        assert_eq!(p.len, 3);
        assert_eq!(
            digest(&mut p),
            "4f8b42c22dd3729b519ba6f68d2da7cc5b2d606d05daed5ad5128cc03e6c6358"
        );
        p.append(b"dbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq");
        assert_eq!(p.len, 56);
        assert_eq!(
            digest(&mut p),
            "0cffe17f68954dac3a84fb1458bd5ec99209449749b2b308b7cb55812f9563af"
        );
        let mut out = [0u8; 32];
        p.drain_into(&mut out);
        assert_eq!(p.len, 0);
        let a = std::vec![b'a'; 1_000_000];
        p.append(&a);
        assert_eq!(p.len, 1_000_000);
        assert_eq!(
            digest(&mut p),
            "80d1189477563e1b5206b2749f1afe4807e5705e8bd77887a60187a712156688"
        );
    }
}
