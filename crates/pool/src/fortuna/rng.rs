//! `Fortuna`: the accumulator and the generator behind locks, shared by `&self`, with the two
//! read paths of FreeBSD's `fortuna.c` (FreeBSD r349154, "Fortuna: allow increased
//! concurrency", 2019): [`ReadMode::Locked`] generates under the lock in 4 KiB steps;
//! [`ReadMode::Concurrent`] only derives a private reader key under the lock and generates
//! after unlocking. The schedule is specified in the module docs ("Concurrent key schedule");
//! fork safety and the memory the state lives in in "Fork safety".

use core::convert::Infallible;
use core::fmt;
use core::mem::MaybeUninit;
use core::ops::Range;
use core::time::Duration;

use crossbeam_utils::CachePadded;
use rand_core::{TryCryptoRng, TryRng};
use scalrand_os::Lock;
use scalrand_os::fork;
use scalrand_os::primitive::{AtomicBool, Ordering};
use scalrand_os::scratch::Scratch;
use scalrand_os::wipe::ZeroValid;
use zeroize::Zeroize;

use super::accumulator::{Accumulator, Clock, Seed};
use super::generator::{Generator, MAX_REQUEST, READER_FIRST_BLOCK, WORK_BUF, keyed_in_frame};
use super::prf::{Aes256Prf, Prf};
use super::{FortunaError, ReadMode};

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
    #[cfg(any(all(test, feature = "std"), scalrand_loom))]
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
        #[cfg(any(all(test, feature = "std"), scalrand_loom))]
        {
            self.epoch += 1;
        }
    }
}

/// The memory the generator state lives in: one element of wipe-on-fork memory. Under loom
/// (whose atomics are handles, never zero-valid, and which never forks) a plain boxed slice.
#[cfg(not(scalrand_loom))]
type StateMemory<T> = scalrand_os::wipe::WipeOnFork<T>;
#[cfg(scalrand_loom)]
type StateMemory<T> = alloc::boxed::Box<[T]>;

/// The fork secret S (see "Fork safety" in the module docs); wiped on drop.
struct ForkSecret([u8; 32]);

impl Drop for ForkSecret {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// A Concurrent reader's secrets while it generates outside the lock: its private key `k_r`
/// and the PRF's keyed form of it (an expanded AES key schedule, or the ChaCha key). Held in a
/// [`Scratch`] frame (wipe-on-fork memory), never on the stack: a child forked from another
/// thread during the read finds zeros. `keyed` is initialised only between
/// [`ReaderFrame::expand`] and [`ReaderFrame::drop_keyed`].
#[repr(C)]
struct ReaderFrame<P: Prf> {
    key: [u8; 32],
    keyed: MaybeUninit<P::Keyed>,
    /// The locked half's blocks (the reader key and the next K; a locked read's blocks).
    work: [u8; WORK_BUF],
}

// SAFETY: a byte array and a `MaybeUninit`, both valid at all zero; a zero frame has no
// keyed form (`keyed` is treated as uninitialised until `expand` writes it).
unsafe impl<P: Prf> ZeroValid for ReaderFrame<P> {}

impl<P: Prf> ReaderFrame<P> {
    /// Expands `key` into `keyed` (which must not hold a keyed form), wipes `key` and the
    /// stack the expansion used, and returns the keyed form.
    #[inline]
    fn expand(&mut self) -> &P::Keyed {
        keyed_in_frame::<P>(&self.key, &mut self.keyed);
        self.key.zeroize();
        // The expansion's temporaries lay below this frame: gone before the long generation.
        crate::chacha::wipe_stack();
        // SAFETY: `expand_in_frame` just initialised it.
        unsafe { self.keyed.assume_init_ref() }
    }

    /// Drops the keyed form (each wipes itself on drop).
    ///
    /// # Safety
    /// `keyed` holds a value written by [`expand`](Self::expand) and not dropped since.
    unsafe fn drop_keyed(&mut self) {
        // SAFETY: the caller's promise.
        unsafe { self.keyed.assume_init_drop() };
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
    state: StateMemory<CachePadded<Lock<Shared<P>>>>,
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
        seed.zeroize();
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
                #[cfg(any(all(test, feature = "std"), scalrand_loom))]
                epoch: 0,
            }))
        };
        #[cfg(not(scalrand_loom))]
        let state = StateMemory::new(1, init);
        #[cfg(scalrand_loom)]
        let state = (0..1).map(init).collect();
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
        self.key_in_frame(seed);
        wipe_below();
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
        let r = self.fill_in_frame(dest);
        // The frames below this one held expanded keys, key-derived blocks and the reader's
        // key in moves and temporaries that no `Zeroize` reaches (the PRF's key expansion, a
        // moved-from expanded key, by-value returns): wipe them, as the node pools do after
        // every block function.
        wipe_below();
        r
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
        self.reseed_in_frame(seed);
        // SHA-256 of K (the reseed, the fork secret) ran in frames below this one.
        wipe_below();
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
        // `StateMemory` holds exactly one element (made in `from_seed_and_accumulator`).
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
        // label ‖ S ‖ OS bytes ‖ pid ‖ generation ‖ wall clock (ns)
        let mut seed = [0u8; FORK_LABEL.len() + 32 + 32 + 8 + 8 + 16];
        let (label, rest) = seed.split_at_mut(FORK_LABEL.len());
        label.copy_from_slice(FORK_LABEL);
        let (secret, rest) = rest.split_at_mut(32);
        let (os, rest) = rest.split_at_mut(32);
        let (pid, rest) = rest.split_at_mut(8);
        let (gen_, now) = rest.split_at_mut(8);
        self.fork_secret
            .lock()
            .with(|sec| secret.copy_from_slice(&sec.0));
        gen_.copy_from_slice(&(generation as u64).to_le_bytes());
        #[cfg(feature = "std")]
        {
            if let Err(e) = scalrand_os::entropy::fill(os) {
                seed.zeroize();
                return Err(FortunaError::Entropy(e));
            }
            pid.copy_from_slice(&u64::from(std::process::id()).to_le_bytes());
            // The wall clock: a vDSO call, no lock or lazy initialiser a parent thread could
            // have held at the fork. (Miri's isolation has no wall clock: zeros there.)
            #[cfg(not(miri))]
            now.copy_from_slice(
                &std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
                    .to_le_bytes(),
            );
            #[cfg(miri)]
            let _ = now;
        }
        #[cfg(not(feature = "std"))]
        let _ = (os, pid, now);
        s.generator.reseed_in_frame(&seed);
        seed.zeroize();
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
    #[cfg(any(all(test, feature = "std"), scalrand_loom))]
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

/// Zeroes the stack below the caller to the depth a Fortuna operation reaches (see
/// `chacha::FORTUNA_WIPE_DEPTH`), then the vector registers (AES-NI and VAES keep
/// round keys in them).
#[inline]
fn wipe_below() {
    crate::chacha::wipe_stack_bytes::<{ crate::chacha::FORTUNA_WIPE_DEPTH }>();
    crate::chacha::clear_vector_registers();
}

/// Domain label of the fork path's reseed.
const FORK_LABEL: &[u8] = b"scalrand fortuna fork";

/// Reader frames mapped up front; more are mapped when as many reads are in flight at once.
const READER_FRAMES: usize = 8;

/// The unlocked half of a concurrent read ("Concurrent key schedule", step 2): ≤ 1 MiB
/// pieces under the reader's key from counter [`READER_FIRST_BLOCK`], the key replaced by
/// its own next blocks between pieces. The key is wiped as soon as it is expanded, and
/// reused in place for each private rekey; the keyed form is dropped (and wipes itself)
/// before each new expansion and at the end.
fn generate_with_reader_key<P: Prf>(frame: &mut ReaderFrame<P>, dest: &mut [u8]) {
    let mut c = READER_FIRST_BLOCK;
    let mut pieces = dest.chunks_mut(MAX_REQUEST).peekable();
    frame.expand();
    while let Some(piece) = pieces.next() {
        // SAFETY: expanded above or at the end of the previous piece, not dropped since.
        let keyed = unsafe { frame.keyed.assume_init_ref() };
        c = P::keystream(keyed, c, piece);
        if pieces.peek().is_some() {
            c = P::keystream(keyed, c, &mut frame.key);
            crate::chacha::observe_key(&frame.key);
            // SAFETY: expanded, and not dropped since; expanded again right after.
            unsafe { frame.drop_keyed() };
            frame.expand();
        }
    }
    // SAFETY: the last expansion, not dropped since.
    unsafe { frame.drop_keyed() };
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
    use crate::fortuna::ChaCha20Prf;
    use crate::fortuna::prf::TaggingPrf;
    use std::collections::HashSet;
    use std::vec;

    fn zero() -> Duration {
        Duration::ZERO
    }

    /// Forward secrecy at the Fortuna level, both modes: after a read, the global state's key
    /// regenerates none of the output for any counter up to C + 256, while the key the read
    /// started from does, through the mode's schedule (so the check can see a match when
    /// there is one).
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
            let mut ks = vec![0u8; span * 16];
            Aes256Prf::keystream(&Aes256Prf::keyed(&k1), 0, &mut ks);
            for blk in ks.chunks_exact(16) {
                assert!(out.chunks_exact(16).all(|o| o != blk), "{mode:?}");
            }
            let mut again = [0u8; 16];
            match mode {
                ReadMode::Locked => {
                    Aes256Prf::keystream(&Aes256Prf::keyed(&k0), c0, &mut again);
                }
                ReadMode::Concurrent => {
                    let mut kr = [0u8; 32];
                    Aes256Prf::keystream(&Aes256Prf::keyed(&k0), c0, &mut kr);
                    Aes256Prf::keystream(&Aes256Prf::keyed(&kr), READER_FIRST_BLOCK, &mut again);
                }
            }
            assert_eq!(again, out[..16], "{mode:?}");
        }
    }

    /// The Concurrent schedule's forward secrecy between readers: the private key a reader
    /// holds after unlocking reaches neither the new global key nor any later reader's
    /// output. Reader 1's key is taken from the locked half; then reader 2 reads. Checked:
    /// no block of reader 2 is in reader 1's keystream for counters 0 .. C' + 4096 (C' the
    /// global counter after reader 1, far past every counter used), and no key the schedule
    /// derives from reader 1's key at any of those counters is the global K' or produces
    /// reader 2's first blocks. (The pre-2026 schedule, where the reader held the global K
    /// itself and K' = E(K, C + R ..), fails both.)
    fn reader_key_reaches_no_later_reader<P: Prf>() {
        let f: Fortuna<P> =
            Fortuna::from_seed(ReadMode::Concurrent, &[7; 32], zero as fn() -> Duration).unwrap();
        let mut warm = [0u8; 100];
        f.fill_bytes(&mut warm);
        let k1 = f.reserve_for_tests();
        let (k_global, c_global, _) = f.raw_state();
        let mut out2 = vec![0u8; 4096];
        f.fill_bytes(&mut out2);
        let blocks2: HashSet<&[u8]> = out2.chunks_exact(P::BLOCK_LEN).collect();
        let window = c_global as usize + 4096;
        let keyed1 = P::keyed(&k1);
        let mut ks = vec![0u8; window * P::BLOCK_LEN];
        P::keystream(&keyed1, 0, &mut ks);
        for blk in ks.chunks_exact(P::BLOCK_LEN) {
            assert!(
                !blocks2.contains(blk),
                "reader 2's block in reader 1's keystream"
            );
        }
        let mut first2 = vec![0u8; 2 * P::BLOCK_LEN];
        first2.copy_from_slice(&out2[..2 * P::BLOCK_LEN]);
        for c in 0..window as u128 {
            let mut derived = [0u8; 32];
            P::keystream(&keyed1, c, &mut derived);
            assert_ne!(derived, k_global, "K' derivable from reader 1's key at {c}");
            let mut guess = vec![0u8; 2 * P::BLOCK_LEN];
            P::keystream(&P::keyed(&derived), READER_FIRST_BLOCK, &mut guess);
            assert_ne!(
                guess, first2,
                "reader 2's key derivable from reader 1's at {c}"
            );
        }
        // The control: reader 1's key does regenerate reader 1's own output.
        let mut own = vec![0u8; P::BLOCK_LEN];
        P::keystream(&keyed1, READER_FIRST_BLOCK, &mut own);
        assert_eq!(own, ks[P::BLOCK_LEN..2 * P::BLOCK_LEN]);
    }

    #[test]
    fn concurrent_reader_key_reaches_no_later_reader_aes() {
        reader_key_reaches_no_later_reader::<Aes256Prf>();
    }

    #[test]
    fn concurrent_reader_key_reaches_no_later_reader_chacha() {
        reader_key_reaches_no_later_reader::<ChaCha20Prf>();
    }

    /// The fork path, driven by hand (what a child does on its first read): K and C are
    /// replaced, the new key is not the old one, and the fork secret changes with it.
    #[test]
    fn a_wiped_state_is_rekeyed_before_answering() {
        let f: Fortuna =
            Fortuna::from_seed(ReadMode::Locked, &[2; 32], zero as fn() -> Duration).unwrap();
        let twin: Fortuna =
            Fortuna::from_seed(ReadMode::Locked, &[2; 32], zero as fn() -> Duration).unwrap();
        let (k0, _, _) = f.raw_state();
        let s0 = f.fork_secret.lock().with(|s| s.0);
        // What the kernel does to wipe-on-fork memory, done by hand.
        f.state().lock().with(|s| s.generator.wipe());
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        f.fill_bytes(&mut a);
        twin.fill_bytes(&mut b);
        assert_ne!(a, b);
        let (k1, _, _) = f.raw_state();
        assert_ne!(k1, k0);
        assert_ne!(f.fork_secret.lock().with(|s| s.0), s0);
        assert_ne!(s0, k0);
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
        let mut seen = HashSet::new();
        let reads = 200;
        std::thread::scope(|s| {
            let hs: std::vec::Vec<_> = (0..4)
                .map(|t| {
                    let f = &f;
                    s.spawn(move || {
                        let mut all = std::vec::Vec::new();
                        for i in 0..reads / 4 {
                            let mut buf = vec![0u8; 16 * (1 + (i + t) % 7)];
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
    //! Two readers and one reseed, under every interleaving loom finds with the preemption
    //! bound: no two readers use the same (key, counter) block, no reader holds a global key
    //! (Concurrent: each reader's key is derived, never the shared K), and no key change is
    //! lost or replayed.
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
        // `scalrand_os::Lock` spins (a loom `yield_now` per attempt): each wait is a branch,
        // so the default bound of 1,000 branches per execution is too small.
        let mut builder = loom::model::Builder::new();
        builder.max_branches = builder.max_branches.max(100_000);
        // Executions explored (plain std atomic: counts across loom's runs), printed at the end.
        static EXECUTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        EXECUTIONS.store(0, std::sync::atomic::Ordering::Relaxed);
        builder.check(move || {
            EXECUTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
            // The readers used different keys, neither of them the final global one.
            let (ta, tb) = (outs[0][0].0, outs[1][0].0);
            assert_ne!(ta, tb);
            let t1 = TaggingPrf::tag(&k1);
            assert_ne!(t1, ta);
            assert_ne!(t1, tb);
            assert_ne!(k1, k0);
            // Three key changes, none lost.
            assert_eq!(e1, e0 + 3);
            let kb = <TaggingPrf as Prf>::KEY_BLOCKS as u128;
            match mode {
                ReadMode::Concurrent => {
                    // Readers start at block 1 of their private keys, which are never a
                    // global key (the initial one included); the global counter moved by
                    // exactly 2·KB per reader, +1 for the reseed.
                    for o in &outs {
                        assert_eq!(o[0].1, READER_FIRST_BLOCK as u64);
                    }
                    let t0 = TaggingPrf::tag(&k0);
                    assert_ne!(ta, t0);
                    assert_ne!(tb, t0);
                    assert_eq!(c1, c0 + 2 * (2 * kb) + 1);
                }
                ReadMode::Locked => {
                    // 3 + 5 output blocks, a KB-block rekey after each read, +1 for the reseed.
                    assert_eq!(c1, c0 + 3 + 5 + 2 * kb + 1);
                }
            }
        });
        std::eprintln!(
            "loom {mode:?}: {} executions",
            EXECUTIONS.load(std::sync::atomic::Ordering::Relaxed)
        );
    }
}
