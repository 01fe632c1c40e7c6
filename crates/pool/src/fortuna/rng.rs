//! `Fortuna`: the accumulator and the generator behind locks, shared by `&self`, with the two
//! read paths of FreeBSD's `fortuna.c` (FreeBSD r349154, "Fortuna: allow increased
//! concurrency", 2019): [`ReadMode::Locked`] generates under the lock in 4 KiB steps;
//! [`ReadMode::Concurrent`] only derives a private reader key under the lock and generates
//! after unlocking. The schedule is specified in the module docs ("Concurrent key schedule");
//! fork safety and the memory the state lives in in "Fork safety".

use core::fmt;
use core::ops::Range;
use core::time::Duration;

use scalrand_os::Lock;
use scalrand_os::fork;
use scalrand_os::pad::CachePadded;
use scalrand_os::primitive::{AtomicBool, Ordering};
use scalrand_os::scratch::Scratch;
use scalrand_os::wipe::ZeroValid;
use scalrand_os::wipe::zero;

use super::accumulator::{Accumulator, Clock, Seed};
use super::generator::Generator;
use super::prf::{Aes256Prf, Prf};
use super::{FortunaError, ReadMode};
use crate::fork_seed::{FORK_SEED_LEN, fork_seed};
use crate::secret::{Secret, secret};
use frame::{ReaderFrame, generate_with_reader_key};

/// Bytes a Locked read generates per lock hold (FreeBSD: `PAGE_SIZE`).
pub const LOCKED_STEP: usize = 4096;

/// Shortest seed [`Fortuna::from_seed`] accepts: 32 bytes, the key size.
pub const MIN_SEED_LEN: usize = 32;

/// What the generator lock protects. It lives in wipe-on-fork memory: a fork child finds it
/// all zero.
struct Shared<P: Prf> {
    generator: Generator<P>,
    /// [`fork::generation`] when the generator was last keyed for this process image.
    fork_generation: usize,
    /// Key changes so far (every reserve, locked step and reseed adds one). Only the tests
    /// and the loom model read it.
    #[cfg(all(test, any(feature = "std", scalrand_loom)))]
    epoch: u64,
}

// SAFETY: `Shared` is a `Generator` (zero-valid: K = 0, C = 0, unseeded, see its impl), a
// `usize` and (in tests) a `u64`; all-zero bytes are a valid, safely droppable value of each.
// Fortuna treats it as stale: an unseeded generator is rekeyed (the fork path) before any
// answer, whatever `fork_generation` says.
unsafe impl<P: Prf> ZeroValid for Shared<P> {}

impl<P: Prf> Shared<P> {
    #[inline]
    fn bump_epoch(&mut self) {
        #[cfg(all(test, any(feature = "std", scalrand_loom)))]
        {
            self.epoch += 1;
        }
    }
}

/// The fork secret S (see "Fork safety" in the module docs); wiped on drop.
struct ForkSecret([u8; 32]);

impl Drop for ForkSecret {
    fn drop(&mut self) {
        zero(&mut self.0);
    }
}

/// Fortuna: a 32-pool accumulator feeding an FS&K generator, safe to share across threads.
///
/// `P` is the PRF ([`Aes256Prf`] by default, or [`ChaCha20Prf`](super::ChaCha20Prf)); `C` is
/// the accumulator's [`Clock`] (a plain `fn() -> Duration` by default).
///
/// Every read first checks (one relaxed atomic load) whether pool 0 has filled, and if so
/// reseeds when the 100 ms rule allows; then, under the generator lock, it checks the
/// process's fork generation and, in a child after `fork()`, rekeys before answering (see
/// "Fork safety" in the module docs). State and every private copy of it are wiped after use
/// and on drop.
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
/// Layout: the generator lock and the state it guards (K, C) sit in their own allocation
/// (a wipe-on-fork page on Linux, a cache-padded heap block elsewhere), away from the
/// read-mostly `reseed_ready` flag and the accumulator lock that event producers write.
pub struct Fortuna<P: Prf = Aes256Prf, C: Clock = fn() -> Duration> {
    mode: ReadMode,
    state: Secret<CachePadded<Lock<Shared<P>>>>,
    /// Ordinary memory, copied into children: taken only while holding the state lock.
    fork_secret: Lock<ForkSecret>,
    accumulator: Lock<Accumulator<C>>,
    /// Set when pool 0 reaches the minimum size; readers then try a reseed.
    reseed_ready: AtomicBool,
    /// Readers' keys and keyed forms while they generate (wipe-on-fork frames).
    readers: Scratch<ReaderFrame<P>>,
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

    /// An AES-256 Fortuna seeded with `seed` (at least 32 bytes: a seed file, a host's TRNG
    /// read), reading time from [`monotonic_now`](super::monotonic_now): [`from_seed`]
    /// without naming a PRF or a clock.
    ///
    /// ```
    /// use scalrand_pool::fortuna::{Fortuna, ReadMode};
    ///
    /// let f = Fortuna::with_seed(ReadMode::Concurrent, &[7u8; 32]).unwrap();
    /// let mut key = [0u8; 32];
    /// f.fill_bytes(&mut key);
    /// ```
    ///
    /// # Errors
    /// [`FortunaError::SeedTooShort`] when `seed` has fewer than 32 bytes.
    ///
    /// [`from_seed`]: Fortuna::from_seed
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn with_seed(mode: ReadMode, seed: &[u8]) -> Result<Self, FortunaError> {
        Self::with_prf_and_seed(mode, seed)
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
        let res = scalrand_os::entropy::fill(&mut seed).map_err(FortunaError::Entropy);
        let f = res
            .and_then(|()| Self::from_seed(mode, &seed, super::monotonic_now as fn() -> Duration));
        zero(&mut seed);
        f
    }

    /// Like [`Fortuna::with_seed`] with PRF `P`:
    /// `Fortuna::<ChaCha20Prf>::with_prf_and_seed(mode, &seed)`.
    ///
    /// # Errors
    /// [`FortunaError::SeedTooShort`] when `seed` has fewer than 32 bytes.
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn with_prf_and_seed(mode: ReadMode, seed: &[u8]) -> Result<Self, FortunaError> {
        Self::from_seed(mode, seed, super::monotonic_now as fn() -> Duration)
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
        let ready = accumulator.pool0_full();
        let fork_generation = fork::generation();
        let init = |_| {
            CachePadded::new(Lock::new(Shared {
                generator: Generator::with_prf(),
                fork_generation,
                #[cfg(all(test, any(feature = "std", scalrand_loom)))]
                epoch: 0,
            }))
        };
        let state = secret(1, false, init);
        let f = Self {
            mode,
            state,
            fork_secret: Lock::new(ForkSecret([0; 32])),
            accumulator: Lock::new(accumulator),
            reseed_ready: AtomicBool::new(ready),
            readers: Scratch::new(READER_FRAMES),
        };
        // Seeded in place, in the state's own memory: no copy of K is moved into it.
        f.key_in_place(seed);
        Ok(f)
    }

    /// The first keying (see `from_seed_and_accumulator`), then a wipe of the frames below
    /// this one, where K was hashed (the reseed, the fork secret).
    fn key_in_place(&self, seed: &[u8]) {
        wiped(|| self.key_in_frame(seed));
    }

    #[inline(never)]
    fn key_in_frame(&self, seed: &[u8]) {
        self.state().lock().with(|s| {
            s.generator.reseed_in_frame(seed);
            self.note_keying(&s.generator);
        });
    }

    /// The read mode chosen at construction.
    #[must_use]
    pub fn mode(&self) -> ReadMode {
        self.mode
    }

    /// Fills `dest` with random bytes. Any length is served, 0 included; see the module docs
    /// for how a request is split and when the key changes.
    ///
    /// # Panics
    /// Where [`try_fill_bytes`](Self::try_fill_bytes) returns an error: in a fork child whose
    /// rekey got no fresh entropy from the OS (fail closed, see "Fork safety").
    #[allow(clippy::panic)] // Fail closed: no secure answer exists, and there is no error channel.
    pub fn fill_bytes(&self, dest: &mut [u8]) {
        if let Err(e) = self.try_fill_bytes(dest) {
            panic!("scalrand: Fortuna has no secure output: {e}");
        }
    }

    /// As [`fill_bytes`](Self::fill_bytes), with the error instead of the panic.
    ///
    /// # Errors
    /// [`FortunaError::Entropy`] in a fork child whose rekey got no fresh OS entropy: the
    /// child would otherwise key itself from what it inherited, which its siblings share. The
    /// generator stays unkeyed and a later call tries again; `dest` is then unspecified.
    pub fn try_fill_bytes(&self, dest: &mut [u8]) -> Result<(), FortunaError> {
        // The frames below this one hold expanded keys, key-derived blocks and the reader's
        // key in moves and temporaries that no erasure of a named value reaches (the PRF's key expansion, a
        // moved-from expanded key, by-value returns): wiped after it, as the node pools wipe
        // after every block function.
        wiped(|| self.fill_in_frame(dest))
    }

    /// The read itself, in frames of its own (never inlined into `try_fill_bytes`, whose
    /// wipe only reaches below it).
    #[inline(never)]
    fn fill_in_frame(&self, dest: &mut [u8]) -> Result<(), FortunaError> {
        self.reseed_from_pools_if_due();
        match self.mode {
            ReadMode::Locked => self.fill_locked(dest),
            ReadMode::Concurrent => self.fill_concurrent(dest),
        }
    }

    /// Mixes `seed` into the generator now (K = SHA-256(SHA-256(K ‖ seed)), C += 1), outside
    /// the accumulator's schedule: for a host that has a good seed to hand, such as a TRNG
    /// read. Any length is accepted. In a fork child whose own rekey failed (see
    /// [`try_fill_bytes`](Self::try_fill_bytes)) it does nothing.
    pub fn reseed(&self, seed: &[u8]) {
        // SHA-256 of K (the reseed, the fork secret) runs in frames below this one.
        wiped(|| self.reseed_in_frame(seed));
    }

    #[inline(never)]
    fn reseed_in_frame(&self, seed: &[u8]) {
        let _ = self.with_state(|s| {
            s.generator.reseed_in_frame(seed);
            self.note_keying(&s.generator);
            s.bump_epoch();
        });
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
        let r = scalrand_os::entropy::fill(&mut seed).map_err(FortunaError::Entropy);
        if r.is_ok() {
            self.reseed(&seed);
        }
        zero(&mut seed);
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
        self.accumulator.lock().with(|acc| {
            acc.add_random_event(source, pool, data)?;
            if pool == 0 && acc.pool0_full() {
                self.reseed_ready.store(true, Ordering::Relaxed);
            }
            Ok(())
        })
    }

    /// Reseeds from the accumulator so far (the first is number 1).
    #[must_use]
    pub fn reseed_count(&self) -> u64 {
        self.accumulator.lock().with(|acc| acc.reseed_count())
    }

    /// FS&K's `RandomData` prologue: reseed from the pools when pool 0 is full and the last
    /// reseed is 100 ms old.
    fn reseed_from_pools_if_due(&self) {
        if !self.reseed_ready.load(Ordering::Relaxed) {
            return;
        }
        let mut seed = Seed::new();
        let due = self.accumulator.lock().with(|acc| {
            let due = acc.take_seed(&mut seed);
            if !acc.pool0_full() {
                self.reseed_ready.store(false, Ordering::Relaxed);
            }
            due
        });
        if due.is_some() {
            self.reseed(seed.as_slice());
        }
    }

    /// The generator lock and state.
    #[inline]
    fn state(&self) -> &Lock<Shared<P>> {
        // `Secret` holds exactly one element (made in `from_seed_and_accumulator`).
        &self.state[0]
    }

    /// Takes the generator lock and runs `f` on a state that belongs to this process image:
    /// in a fork child (another fork generation, or the all-zero state the kernel handed it)
    /// the state is wiped and rekeyed first.
    ///
    /// The lock spins (see [`scalrand_os::Lock`]); a lock some thread of a parent process held
    /// at `fork()` is taken over.
    ///
    /// # Errors
    /// [`FortunaError::Entropy`] from a fork child's rekey (see `rekey_after_fork`); `f` is
    /// then not run.
    #[inline]
    fn with_state<R>(&self, f: impl FnOnce(&mut Shared<P>) -> R) -> Result<R, FortunaError> {
        self.state().lock().with(|s| {
            let generation = fork::generation();
            if s.fork_generation != generation || !s.generator.is_seeded() {
                self.rekey_after_fork(s, generation)?;
            }
            Ok(f(s))
        })
    }

    /// S := SHA-256("scalrand fortuna fork secret" ‖ K) for the key just installed. Called
    /// with the state lock held (lock order: state, then fork secret).
    fn note_keying(&self, generator: &Generator<P>) {
        self.fork_secret
            .lock()
            .with(|secret| generator.fork_secret(&mut secret.0));
    }

    /// The fork path: erase K and C (already zero where the kernel wiped them: one code path
    /// for both), then key the generator from the fork secret S, 32 fresh bytes from the OS
    /// (when it answers), the child's pid, fork generation and clock; then derive the child's
    /// own S. See "Fork safety" in the module docs.
    ///
    /// # Errors
    /// With `std`, [`FortunaError::Entropy`] when the OS gives no fresh bytes: **fail
    /// closed**. S, the pid and the clock alone would key siblings alike (children started as
    /// pid 1 of their own namespaces in the same clock tick), so the generator is left wiped
    /// (unseeded) and the next call tries again.
    #[cold]
    #[inline(never)]
    fn rekey_after_fork(&self, s: &mut Shared<P>, generation: usize) -> Result<(), FortunaError> {
        s.generator.wipe();
        // label ‖ S ‖ fork seed (OS bytes ‖ pid ‖ generation ‖ wall clock: `fork_seed.rs`)
        let mut seed = [0u8; FORK_LABEL.len() + 32 + FORK_SEED_LEN];
        let (label, rest) = seed.split_at_mut(FORK_LABEL.len());
        label.copy_from_slice(FORK_LABEL);
        let (secret, fresh) = rest.split_at_mut(32);
        self.fork_secret
            .lock()
            .with(|sec| secret.copy_from_slice(&sec.0));
        if let Err(e) = fork_seed(generation, fresh) {
            zero(&mut seed);
            return Err(FortunaError::Entropy(e));
        }
        s.generator.reseed_in_frame(&seed);
        zero(&mut seed);
        self.note_keying(&s.generator);
        s.fork_generation = generation;
        s.bump_epoch();
        Ok(())
    }

    /// Locked mode: at most [`LOCKED_STEP`] bytes per lock hold, each step one generator
    /// request (so each step ends with a rekey). An empty request is one empty step.
    /// Runs `f` on a reader frame; again if the process forked meanwhile (a fork from a signal
    /// handler that interrupted this read wiped the frame under it: see
    /// [`Scratch::with_unforked`]).
    fn in_frame<R>(&self, hint: usize, mut f: impl FnMut(&mut ReaderFrame<P>) -> R) -> R {
        loop {
            if let Some(r) = self.readers.with_unforked(hint, &mut f) {
                return r;
            }
        }
    }

    fn fill_locked(&self, dest: &mut [u8]) -> Result<(), FortunaError> {
        // K's keyed form lives in a frame of wipe-on-fork memory while each step generates.
        let hint = scalrand_os::cpu::current().unwrap_or(0);
        self.in_frame(hint, |frame| {
            if dest.is_empty() {
                return self.with_state(|s| {
                    s.generator
                        .generate_seeded_in(&mut [], &mut frame.work, &mut frame.keyed);
                    s.bump_epoch();
                });
            }
            for step in dest.chunks_mut(LOCKED_STEP) {
                self.with_state(|s| {
                    s.generator
                        .generate_seeded_in(step, &mut frame.work, &mut frame.keyed);
                    s.bump_epoch();
                })?;
            }
            Ok(())
        })
    }

    /// Concurrent mode: derive the reader's key under the lock, generate after unlocking; the
    /// key and its keyed form live in a frame of wipe-on-fork memory meanwhile.
    fn fill_concurrent(&self, dest: &mut [u8]) -> Result<(), FortunaError> {
        let hint = scalrand_os::cpu::current().unwrap_or(0);
        self.in_frame(hint, |frame| {
            self.with_state(|s| {
                s.generator
                    .reserve_in(&mut frame.key, &mut frame.work, &mut frame.keyed);
                s.bump_epoch();
            })?;
            // A zero reader key is a fork child's zeroed state (see `reserve_in`): never
            // generated from; the fork check around this runs the read again.
            if frame.key == [0; 32] {
                return Err(FortunaError::NotSeeded);
            }
            generate_with_reader_key::<P>(frame, dest);
            Ok(())
        })
    }

    /// The locked half of a concurrent read: writes the reader's key `k_r` into `key` and
    /// moves the global state on ("Concurrent key schedule", step 1).
    #[inline]
    #[cfg(all(test, feature = "std", not(scalrand_loom)))]
    fn reserve(&self, key: &mut [u8; 32]) -> Result<(), FortunaError> {
        self.with_state(|s| {
            s.generator.reserve(key);
            s.bump_epoch();
        })
    }

    /// Test support, not API: the address ranges of this instance's memory (the `Fortuna`
    /// value itself, then the generator lock and state), for the fork tests that scan a
    /// child's memory for its parent's keys.
    #[doc(hidden)]
    pub fn memory_ranges_for_tests(&self) -> [Range<usize>; 2] {
        let me = core::ptr::from_ref(self) as usize;
        let st = core::ptr::from_ref(&self.state[0]) as usize;
        [
            me..me + core::mem::size_of::<Self>(),
            st..st + core::mem::size_of::<CachePadded<Lock<Shared<P>>>>(),
        ]
    }

    /// Test support, not API: runs `f` while holding the generator lock (the fork test that
    /// forks while another thread holds it).
    #[doc(hidden)]
    pub fn hold_lock_for_tests<R>(&self, f: impl FnOnce() -> R) -> R {
        self.state().lock().with(|_| f())
    }

    /// Test access to the generator's raw state and epoch.
    #[cfg(all(test, any(feature = "std", scalrand_loom)))]
    pub(crate) fn raw_state(&self) -> ([u8; 32], u128, u64) {
        self.state().lock().with(|s| {
            let (k, c) = s.generator.raw_state();
            (k, c, s.epoch)
        })
    }

    /// Test access: the locked half of a concurrent read, returning the reader's key.
    #[cfg(all(test, feature = "std", not(scalrand_loom)))]
    #[allow(clippy::expect_used)] // test helper: a seeded generator in the test's own process
    pub(crate) fn reserve_for_tests(&self) -> [u8; 32] {
        let mut k = [0u8; 32];
        self.reserve(&mut k).expect("seeded, not a fork child");
        k
    }
}

use super::prf::wiped;

/// Domain label of the fork path's reseed.
const FORK_LABEL: &[u8] = b"scalrand fortuna fork";

/// Reader frames mapped up front; more are mapped when as many reads are in flight at once.
const READER_FRAMES: usize = 8;

mod frame;
mod traits;

#[cfg(test)]
#[cfg(all(feature = "std", not(scalrand_loom)))]
mod tests;

#[cfg(test)]
#[cfg(scalrand_loom)]
mod loom_model;
