//! `Fortuna`: the accumulator and the generator behind locks, shared by `&self`, with the two
//! read paths of FreeBSD's `fortuna.c` (seed: the FreeBSD review "Fortuna: allow increased
//! concurrency", 2019): [`ReadMode::Locked`] generates under the lock in 4 KiB steps;
//! [`ReadMode::Concurrent`] only reserves its (K, C) range under the lock and generates after
//! unlocking. The schedule is specified in the module docs ("Concurrent key schedule").

use core::convert::Infallible;
use core::fmt;
use core::time::Duration;

use crossbeam_utils::CachePadded;
use rand_core::{TryCryptoRng, TryRng};
use zeroize::Zeroize;

use super::accumulator::{Accumulator, Clock, Seed};
use super::generator::{Generator, MAX_REQUEST, Reservation};
use super::prf::{Aes256Prf, Prf, blocks_for};
use super::sync::{AtomicBool, Mutex, MutexGuard, Ordering};
use super::{FortunaError, ReadMode};

/// Bytes a Locked read generates per lock hold (FreeBSD: `PAGE_SIZE`).
pub const LOCKED_STEP: usize = 4096;

/// Shortest seed [`Fortuna::from_seed`] accepts: 32 bytes, the key size.
pub const MIN_SEED_LEN: usize = 32;

/// What the generator lock protects.
struct Shared<P: Prf> {
    generator: Generator<P>,
    /// [`crate::fork::generation`] when the generator was last keyed for this process.
    fork_generation: u64,
    /// Key changes so far (every reserve, locked step and reseed adds one). Only the tests
    /// and the loom model read it.
    #[cfg(any(all(test, feature = "std"), scalrand_loom))]
    epoch: u64,
}

impl<P: Prf> Shared<P> {
    #[inline]
    fn bump_epoch(&mut self) {
        #[cfg(any(all(test, feature = "std"), scalrand_loom))]
        {
            self.epoch += 1;
        }
    }
}

/// Fortuna: a 32-pool accumulator feeding an FS&K generator, safe to share across threads.
///
/// `P` is the PRF ([`Aes256Prf`] by default, or [`ChaCha20Prf`](super::ChaCha20Prf)); `C` is
/// the accumulator's [`Clock`] (a plain `fn() -> Duration` by default).
///
/// Every read first checks (one relaxed atomic load) whether pool 0 has filled, and if so
/// reseeds when the 100 ms rule allows; then it checks the process's fork generation and, in
/// a child after `fork()`, reseeds before answering (see "Fork safety" in the module docs).
/// State and every private copy of it are wiped after use and on drop.
///
/// ```
/// use scalrand_pool::fortuna::{Fortuna, ReadMode};
/// # #[cfg(feature = "std")] {
/// let f = Fortuna::new(ReadMode::Concurrent)?;
/// let mut key = [0u8; 32];
/// f.fill_bytes(&mut key); // `&f` can be shared by any number of threads
/// # }
/// # Ok::<(), scalrand_pool::fortuna::FortunaError>(())
/// ```
///
/// Layout: the generator lock sits on its own cache line, away from the read-mostly
/// `reseed_ready` flag and the accumulator lock that event producers write, so readers
/// polling the flag do not share a line with the lock every reader writes.
pub struct Fortuna<P: Prf = Aes256Prf, C: Clock = fn() -> Duration> {
    mode: ReadMode,
    shared: CachePadded<Mutex<Shared<P>>>,
    accumulator: Mutex<Accumulator<C>>,
    /// Set when pool 0 reaches the minimum size; readers then try a reseed.
    reseed_ready: AtomicBool,
}

impl<P: Prf, C: Clock> fmt::Debug for Fortuna<P, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fortuna")
            .field("mode", &self.mode)
            .field("prf", &P::NAME)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "std")]
impl Fortuna<Aes256Prf> {
    /// An AES-256 Fortuna seeded with 64 bytes from the operating system, reading time from
    /// [`monotonic_now`](super::monotonic_now).
    ///
    /// # Errors
    /// [`FortunaError::Entropy`] when the OS entropy source fails.
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn new(mode: ReadMode) -> Result<Self, FortunaError> {
        Self::with_prf(mode)
    }
}

#[cfg(feature = "std")]
impl<P: Prf> Fortuna<P> {
    /// Like [`Fortuna::new`] with PRF `P`: `Fortuna::<ChaCha20Prf>::with_prf(mode)`.
    ///
    /// # Errors
    /// [`FortunaError::Entropy`] when the OS entropy source fails.
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn with_prf(mode: ReadMode) -> Result<Self, FortunaError> {
        let mut seed = [0u8; 64];
        let res = crate::entropy::os_fill(&mut seed).map_err(FortunaError::Entropy);
        let f = res
            .and_then(|()| Self::from_seed(mode, &seed, super::monotonic_now as fn() -> Duration));
        seed.zeroize();
        f
    }
}

impl<P: Prf, C: Clock> Fortuna<P, C> {
    /// A Fortuna whose generator is reseeded once with `seed` (FS&K's seed file), with an
    /// empty accumulator reading time from `clock`. This is how a `no_std` host seeds it from
    /// its own entropy source; the output is a deterministic function of `seed`, the reads,
    /// the reseeds and the events (see the module docs for the exact schedule).
    ///
    /// # Errors
    /// [`FortunaError::SeedTooShort`] when `seed` has fewer than 32 bytes.
    pub fn from_seed(mode: ReadMode, seed: &[u8], clock: C) -> Result<Self, FortunaError> {
        Self::from_seed_and_accumulator(mode, seed, Accumulator::new(clock))
    }

    /// Like [`from_seed`](Self::from_seed) with a custom accumulator (minimum pool size).
    ///
    /// # Errors
    /// [`FortunaError::SeedTooShort`] when `seed` has fewer than 32 bytes.
    pub fn from_seed_and_accumulator(
        mode: ReadMode,
        seed: &[u8],
        accumulator: Accumulator<C>,
    ) -> Result<Self, FortunaError> {
        if seed.len() < MIN_SEED_LEN {
            return Err(FortunaError::SeedTooShort { len: seed.len() });
        }
        let mut generator = Generator::with_prf();
        generator.reseed(seed);
        let ready = accumulator.pool0_full();
        Ok(Self {
            mode,
            shared: CachePadded::new(Mutex::new(Shared {
                generator,
                fork_generation: crate::fork::generation(),
                #[cfg(any(all(test, feature = "std"), scalrand_loom))]
                epoch: 0,
            })),
            accumulator: Mutex::new(accumulator),
            reseed_ready: AtomicBool::new(ready),
        })
    }

    /// The read mode chosen at construction.
    #[must_use]
    pub fn mode(&self) -> ReadMode {
        self.mode
    }

    /// Fills `dest` with random bytes. Any length is served, 0 included; see the module docs
    /// for how a request is split and when the key changes.
    pub fn fill_bytes(&self, dest: &mut [u8]) {
        self.reseed_from_pools_if_due();
        match self.mode {
            ReadMode::Locked => self.fill_locked(dest),
            ReadMode::Concurrent => self.fill_concurrent(dest),
        }
    }

    /// Mixes `seed` into the generator now (K = SHA-256(SHA-256(K ‖ seed)), C += 1), outside
    /// the accumulator's schedule: for a host that has a good seed to hand, such as a TRNG
    /// read. Any length is accepted.
    pub fn reseed(&self, seed: &[u8]) {
        let mut s = self.lock_shared();
        s.generator.reseed(seed);
        s.bump_epoch();
    }

    /// Reseeds the generator now with 32 fresh bytes from the operating system (the OS as an
    /// entropy source beside the accumulator's events).
    ///
    /// # Errors
    /// [`FortunaError::Entropy`] when the OS source fails; the generator is then unchanged.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn reseed_from_os(&self) -> Result<(), FortunaError> {
        let mut seed = [0u8; 32];
        let r = crate::entropy::os_fill(&mut seed).map_err(FortunaError::Entropy);
        if r.is_ok() {
            self.reseed(&seed);
        }
        seed.zeroize();
        r
    }

    /// Adds an entropy event to pool `pool` of the accumulator (see
    /// [`Accumulator::add_random_event`]).
    ///
    /// # Errors
    /// [`FortunaError::PoolIndex`] when `pool >= 32`, [`FortunaError::EventLength`] unless
    /// `1 <= data.len() <= 32`.
    pub fn add_random_event(
        &self,
        source: u8,
        pool: usize,
        data: &[u8],
    ) -> Result<(), FortunaError> {
        let mut acc = self.accumulator.lock();
        acc.add_random_event(source, pool, data)?;
        if pool == 0 && acc.pool0_full() {
            self.reseed_ready.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Reseeds from the accumulator so far (the first is number 1).
    #[must_use]
    pub fn reseed_count(&self) -> u64 {
        self.accumulator.lock().reseed_count()
    }

    /// FS&K's `RandomData` prologue: reseed from the pools when pool 0 is full and the last
    /// reseed is 100 ms old.
    fn reseed_from_pools_if_due(&self) {
        if !self.reseed_ready.load(Ordering::Relaxed) {
            return;
        }
        let mut seed = Seed::new();
        let due = {
            let mut acc = self.accumulator.lock();
            let due = acc.take_seed(&mut seed);
            if !acc.pool0_full() {
                self.reseed_ready.store(false, Ordering::Relaxed);
            }
            due
        };
        if due.is_some() {
            let mut s = self.lock_shared();
            s.generator.reseed(seed.as_slice());
            s.bump_epoch();
        }
    }

    /// Takes the generator lock; in a child after `fork()` reseeds first.
    #[inline]
    fn lock_shared(&self) -> MutexGuard<'_, Shared<P>> {
        let mut s = self.shared.lock();
        let generation = crate::fork::generation();
        if s.fork_generation != generation {
            reseed_after_fork(&mut s.generator, generation);
            s.fork_generation = generation;
            s.bump_epoch();
        }
        s
    }

    /// Locked mode: at most [`LOCKED_STEP`] bytes per lock hold, each step one generator
    /// request (so each step ends with a rekey). An empty request is one empty step.
    fn fill_locked(&self, dest: &mut [u8]) {
        if dest.is_empty() {
            let mut s = self.lock_shared();
            s.generator.generate_seeded(&mut []);
            s.bump_epoch();
            return;
        }
        for step in dest.chunks_mut(LOCKED_STEP) {
            let mut s = self.lock_shared();
            s.generator.generate_seeded(step);
            s.bump_epoch();
        }
    }

    /// Concurrent mode: reserve under the lock, generate after unlocking.
    fn fill_concurrent(&self, dest: &mut [u8]) {
        let reservation = self.reserve(dest.len());
        generate_reserved::<P>(reservation, dest);
    }

    /// The locked half of a concurrent read of `len` bytes.
    fn reserve(&self, len: usize) -> Reservation<P> {
        let mut s = self.lock_shared();
        let r = s.generator.reserve(concurrent_blocks::<P>(len));
        s.bump_epoch();
        r
    }

    /// Test access to the generator's raw state and epoch.
    #[cfg(any(all(test, feature = "std"), scalrand_loom))]
    pub(crate) fn raw_state(&self) -> ([u8; 32], u128, u64) {
        let s = self.shared.lock();
        let (k, c) = s.generator.raw_state();
        (k, c, s.epoch)
    }
}

/// Blocks a concurrent reader of `n` bytes uses of its own: the blocks of each ≤ 1 MiB piece,
/// plus [`Prf::KEY_BLOCKS`] for its private rekey between consecutive pieces.
pub(crate) fn concurrent_blocks<P: Prf>(n: usize) -> u128 {
    let full = n / MAX_REQUEST;
    let rem = n % MAX_REQUEST;
    let pieces = full + usize::from(rem > 0);
    full as u128 * blocks_for::<P>(MAX_REQUEST)
        + blocks_for::<P>(rem)
        + pieces.saturating_sub(1) as u128 * P::KEY_BLOCKS as u128
}

/// The unlocked half of a concurrent read: ≤ 1 MiB pieces from the reserved (K, C), the
/// reader's own copy of K replaced between pieces; every key copy wiped.
fn generate_reserved<P: Prf>(mut reservation: Reservation<P>, dest: &mut [u8]) {
    let mut pieces = dest.chunks_mut(MAX_REQUEST).peekable();
    let mut c = reservation.counter;
    while let Some(piece) = pieces.next() {
        c = P::keystream(&reservation.keyed, c, piece);
        if pieces.peek().is_some() {
            let mut key = [0u8; 32];
            c = P::keystream(&reservation.keyed, c, &mut key);
            reservation.keyed = P::keyed(&key);
            key.zeroize();
        }
    }
    // `reservation` (the last private key) is wiped as it drops here.
}

/// Rekeys a generator copied into a forked child: fresh OS entropy when the OS answers,
/// always the child's pid, fork generation and clock, so the child's key differs from the
/// parent's even if `getrandom` fails.
fn reseed_after_fork<P: Prf>(generator: &mut Generator<P>, generation: u64) {
    let mut seed = [0u8; 32 + 8 + 8 + 16];
    #[cfg(feature = "std")]
    {
        // A failure here leaves those 32 bytes zero; the other fields still separate the child
        // from its parent (see "Fork safety" in the module docs).
        let _ = crate::entropy::os_fill(&mut seed[..32]);
        seed[32..40].copy_from_slice(&u64::from(std::process::id()).to_le_bytes());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        seed[48..64].copy_from_slice(&now.to_le_bytes());
    }
    seed[40..48].copy_from_slice(&generation.to_le_bytes());
    generator.reseed(b"scalrand fortuna fork");
    generator.reseed(&seed);
    seed.zeroize();
}

impl<P: Prf, C: Clock> TryRng for &Fortuna<P, C> {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        Ok(u32::from_le_bytes(b))
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        Ok(u64::from_le_bytes(b))
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        Fortuna::fill_bytes(self, dst);
        Ok(())
    }
}

impl<P: Prf, C: Clock> TryCryptoRng for &Fortuna<P, C> {}

impl<P: Prf, C: Clock> TryRng for Fortuna<P, C> {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        (&*self).try_next_u32()
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        (&*self).try_next_u64()
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        Fortuna::fill_bytes(self, dst);
        Ok(())
    }
}

impl<P: Prf, C: Clock> TryCryptoRng for Fortuna<P, C> {}

#[cfg(test)]
#[cfg(all(feature = "std", not(scalrand_loom)))]
mod tests {
    use super::*;
    use crate::fortuna::prf::TaggingPrf;

    fn zero() -> Duration {
        Duration::ZERO
    }

    #[test]
    fn concurrent_block_counts() {
        type P = Aes256Prf;
        assert_eq!(concurrent_blocks::<P>(0), 0);
        assert_eq!(concurrent_blocks::<P>(1), 1);
        assert_eq!(concurrent_blocks::<P>(MAX_REQUEST), 65536);
        assert_eq!(concurrent_blocks::<P>(MAX_REQUEST + 1), 65536 + 2 + 1);
        assert_eq!(
            concurrent_blocks::<P>(2 * MAX_REQUEST + 17),
            2 * 65536 + 2 * 2 + 2
        );
        assert_eq!(
            concurrent_blocks::<crate::fortuna::ChaCha20Prf>(2 * MAX_REQUEST),
            2 * 16384 + 1
        );
    }

    /// Forward secrecy at the Fortuna level, both modes: after a read, the global state's key
    /// regenerates none of the output for any counter up to C + 256, while the key the read
    /// started from does (so the check can see a match when there is one).
    #[test]
    fn forward_secrecy_after_a_read() {
        for mode in [ReadMode::Locked, ReadMode::Concurrent] {
            let f: Fortuna = Fortuna::from_seed(mode, &[3; 32], zero as fn() -> Duration).unwrap();
            let (k0, c0, _) = f.raw_state();
            let mut out = [0u8; 3000];
            f.fill_bytes(&mut out);
            let (k1, c1, _) = f.raw_state();
            assert_ne!(k0, k1);
            let span = c1 as usize + 256;
            let mut ks = std::vec![0u8; span * 16];
            Aes256Prf::keystream(&Aes256Prf::keyed(&k1), 0, &mut ks);
            for blk in ks.chunks_exact(16) {
                assert!(out.chunks_exact(16).all(|o| o != blk), "{mode:?}");
            }
            let mut again = [0u8; 16];
            Aes256Prf::keystream(&Aes256Prf::keyed(&k0), c0, &mut again);
            assert_eq!(again, out[..16]);
        }
    }

    #[test]
    fn reseed_from_os_changes_the_stream() {
        let f: Fortuna =
            Fortuna::from_seed(ReadMode::Concurrent, &[3; 32], zero as fn() -> Duration).unwrap();
        let twin: Fortuna =
            Fortuna::from_seed(ReadMode::Concurrent, &[3; 32], zero as fn() -> Duration).unwrap();
        f.reseed_from_os().unwrap();
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        f.fill_bytes(&mut a);
        twin.fill_bytes(&mut b);
        assert_ne!(a, b);
    }

    /// Every block a concurrent reader emits is tagged with (key, counter) by the tagging
    /// PRF: readers' blocks never repeat, and the epoch counts every key change.
    #[test]
    fn concurrent_readers_never_share_a_block() {
        let f: Fortuna<TaggingPrf> =
            Fortuna::from_seed(ReadMode::Concurrent, &[9; 32], zero as fn() -> Duration).unwrap();
        let mut seen = std::collections::HashSet::new();
        let reads = 200;
        std::thread::scope(|s| {
            let hs: std::vec::Vec<_> = (0..4)
                .map(|t| {
                    let f = &f;
                    s.spawn(move || {
                        let mut all = std::vec::Vec::new();
                        for i in 0..reads / 4 {
                            let mut buf = std::vec![0u8; 16 * (1 + (i + t) % 7)];
                            f.fill_bytes(&mut buf);
                            all.extend_from_slice(&buf);
                        }
                        all
                    })
                })
                .collect();
            for h in hs {
                for b in h.join().unwrap().chunks(16) {
                    assert!(seen.insert(b.to_vec()), "block reused");
                }
            }
        });
        let (_, _, epoch) = f.raw_state();
        assert_eq!(epoch, reads as u64);
    }
}

#[cfg(test)]
#[cfg(scalrand_loom)]
mod loom_model {
    //! Two concurrent readers and one reseed, under every interleaving loom finds with the
    //! preemption bound: no two readers use the same (K, C) block and the global key never
    //! goes backwards (no key change is lost or replayed).
    use super::*;
    use crate::fortuna::prf::TaggingPrf;
    use loom::sync::Arc;
    extern crate std;
    use std::vec::Vec;

    fn zero() -> Duration {
        Duration::ZERO
    }

    /// (key tag, counter) of each 16-byte block.
    fn blocks(buf: &[u8]) -> Vec<(u64, u64)> {
        buf.chunks(16)
            .map(|b| {
                let mut t = [0u8; 8];
                let mut c = [0u8; 8];
                t.copy_from_slice(&b[..8]);
                c.copy_from_slice(&b[8..]);
                (u64::from_le_bytes(t), u64::from_le_bytes(c))
            })
            .collect()
    }

    #[test]
    fn two_concurrent_readers_and_a_reseed() {
        two_readers_and_a_reseed(ReadMode::Concurrent);
    }

    #[test]
    fn two_locked_readers_and_a_reseed() {
        two_readers_and_a_reseed(ReadMode::Locked);
    }

    fn two_readers_and_a_reseed(mode: ReadMode) {
        let _ = crate::fork::generation(); // register the atfork handler outside the model
        loom::model(move || {
            let f: Arc<Fortuna<TaggingPrf>> =
                Arc::new(Fortuna::from_seed(mode, &[1; 32], zero as fn() -> Duration).unwrap());
            let (k0, c0, e0) = f.raw_state();
            let readers: Vec<_> = [3usize, 5]
                .into_iter()
                .map(|nblocks| {
                    let f = Arc::clone(&f);
                    loom::thread::spawn(move || {
                        let mut buf = std::vec![0u8; 16 * nblocks];
                        f.fill_bytes(&mut buf);
                        blocks(&buf)
                    })
                })
                .collect();
            let g = Arc::clone(&f);
            let reseeder = loom::thread::spawn(move || g.reseed(b"event"));
            let outs: Vec<Vec<(u64, u64)>> =
                readers.into_iter().map(|h| h.join().unwrap()).collect();
            reseeder.join().unwrap();
            let (k1, c1, e1) = f.raw_state();

            // Each reader used one key, consecutive counters.
            for o in &outs {
                assert!(
                    o.windows(2)
                        .all(|w| w[0].0 == w[1].0 && w[1].1 == w[0].1 + 1)
                );
            }
            // No (K, C) block is shared between the readers.
            for a in &outs[0] {
                assert!(!outs[1].contains(a), "readers shared block {a:?}");
            }
            // The readers saw different global keys, neither of them the final one.
            let (ta, tb) = (outs[0][0].0, outs[1][0].0);
            assert_ne!(ta, tb);
            let t1 = TaggingPrf::tag(&k1);
            assert_ne!(t1, ta);
            assert_ne!(t1, tb);
            assert_ne!(k1, k0);
            // Three key changes, none lost; the counter moved forward by exactly what was
            // reserved: 3 + 5 reader blocks, 2 x 2 rekey blocks, +1 for the reseed.
            assert_eq!(e1, e0 + 3);
            assert_eq!(c1, c0 + 3 + 5 + 4 + 1);
        });
    }
}
