//! Fortuna (Ferguson, Schneier, Kohno, *Cryptography Engineering* ch. 9) with FreeBSD's
//! concurrent read path, which generates output outside the global lock.
//!
//! Seed document: the FreeBSD review "Fortuna: allow increased concurrency" (cem, 2019;
//! `shared/seeds/001`). FreeBSD found the system "extremely unresponsive with 3-4 concurrent
//! random readers" because Fortuna generated its output while holding the global mutex;
//! reserving the reader's key and counter under the lock and generating after unlocking took
//! concurrent AES readers from ~55 to ~197 MB/s each. This module offers both paths,
//! [`ReadMode::Locked`] and [`ReadMode::Concurrent`], so the difference can be measured.
//!
//! | item | what it is |
//! |---|---|
//! | [`Generator`] | the FS&K generator exactly: K, 128-bit C, `reseed`, `pseudo_random_data` |
//! | [`Accumulator`] | 32 SHA-256 pools, `add_random_event`, the 64-byte and 100 ms reseed rules |
//! | [`Fortuna`] | accumulator + generator behind locks, shared by `&self`; `rand_core` RNG |
//! | [`Aes256Prf`], [`ChaCha20Prf`] | the block functions (AES-256 is FS&K's and the default) |
//! | [`Clock`] | the accumulator's injectable time source |
//!
//! The core is `no_std`: a host without an OS builds a [`Fortuna`] with
//! [`Fortuna::from_seed`] from its own entropy and a clock reading its own timer. With `std`,
//! [`Fortuna::new`] seeds from the OS (`getrandom`) and [`monotonic_now`] is the clock.
//!
//! # Generator conventions
//!
//! As FS&K §9.4 with PyCrypto's `FortunaGenerator` byte order, whose published self-test
//! vectors the tests reproduce: K (32 bytes) and C (128 bits) start at zero; `reseed(s)` sets
//! K = SHA-256(SHA-256(K ‖ s)) and C += 1, so the first output block uses C = 1; block C is
//! E(K, C) with C as 16 bytes **little-endian**; a request of n ≤ 2^20 bytes takes
//! ceil(n / B) blocks (B = 16 for AES, 64 for ChaCha20) and then the next ceil(32 / B) blocks
//! become the new K (2 AES blocks, or the first 32 bytes of one ChaCha20 block), for n = 0
//! too. The ChaCha20 counter mapping (C in state words 12..15, that is RFC 8439's 32-bit block
//! counter = C mod 2^32 and 96-bit nonce = C's upper 96 bits, little-endian) is spelled out
//! in [`prf`].
//!
//! # Read modes
//!
//! A [`Fortuna`] read of n bytes (any n, 0 included) first reseeds from the accumulator if a
//! reseed is due, then, by mode:
//!
//! **Locked** (canonical FS&K, FreeBSD's old path): the request is cut into steps of at
//! most 4 KiB ([`LOCKED_STEP`]); for each step the lock is taken, the step is one
//! `pseudo_random_data` call (so it ends with a rekey), and the lock is released. n = 0 is
//! one empty step. The output is exactly a [`Generator`] fed the same 4 KiB requests.
//!
//! **Concurrent** (FreeBSD's `kern.random.fortuna.concurrent_read` path, its default since
//! 2019) follows the *Concurrent key schedule* below.
//!
//! ## Concurrent key schedule
//!
//! Let the global state be (K, C), B the block length and KB = ceil(32 / B). A read of n
//! bytes is cut into pieces of at most 2^20 bytes: `p = ceil(n / 2^20)` pieces (none when
//! n = 0) of lengths `len_1 .. len_p`, all 2^20 but the last. With `m_i = ceil(len_i / B)`,
//! the reader needs `R = m_1 + ... + m_p + KB * max(p - 1, 0)` blocks.
//!
//! 1. Under the lock: copy K and C as the reader's (k, c); set
//!    `K' = first 32 bytes of E(K, C + R) ‖ ... ‖ E(K, C + R + KB - 1)` and
//!    `C' = C + R + KB`; store (K', C'); unlock. (The lock is held for one key setup and KB
//!    blocks, whatever n is.)
//! 2. Outside the lock, for each piece i: output blocks `c .. c + m_i - 1` under k (the tail
//!    of the last block discarded), `c += m_i`; if another piece follows, the reader rekeys
//!    its own copy: `k = E(k, c) ‖ ... ‖ E(k, c + KB - 1)` (first 32 bytes), `c += KB`.
//! 3. The reader's k is wiped.
//!
//! Consequences, all pinned by tests against the Python reference
//! (`tests/reference/fortuna_ref.py`):
//! * A read of n ≤ 2^20 bytes is *identical* to one `Generator::pseudo_random_data(n)`; so is
//!   every piece of a larger read except that the global key afterwards derives from the
//!   first key (the reader's later keys are its own) — FreeBSD's "slight AES rekeying
//!   difference". Sequential reads are therefore a deterministic function of the seed.
//! * Blocks under one key never overlap between readers: each reader's blocks under K lie in
//!   `[C, C + m_1 + KB)`, disjoint from every other reader's range and from the global rekey
//!   blocks `[C + R, C + R + KB)`; later keys of a reader are private to it. The loom model
//!   (`rng.rs`: two readers and a reseed, in each mode) checks this, and that no key change
//!   is lost or replayed: `RUSTFLAGS="--cfg scalrand_loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//!   scalrand-pool --release --lib fortuna::rng::loom`.
//! * Every 2^20 bytes of output the reader's key changes (FS&K's limit on one key), for
//!   ChaCha20 too: FreeBSD rekeys only AES every 1 MiB, we keep one schedule for both PRFs at the cost
//!   of one ChaCha block per MiB.
//!
//! # Accumulator and reseeds
//!
//! See [`Accumulator`]: event = `source ‖ len ‖ data` with 1 ≤ len ≤ 32, appended to pool i;
//! a reseed is due when pool 0 holds ≥ 64 bytes (configurable) and ≥ 100 ms ([`Clock`]) have
//! passed since the last one; reseed r uses pool i iff 2^i divides r, hashing each as
//! SHA-256(SHA-256(pool)), and empties it. [`Fortuna`] checks one relaxed atomic flag per read
//! and only takes the accumulator's lock once pool 0 has filled.
//!
//! # Fork safety (std, Unix)
//!
//! [`Fortuna`] records [`crate::fork::generation`] when keyed and compares it under its lock
//! on every read. In a child after `fork()` the generation differs, and before its first read
//! the child reseeds with 32 bytes of OS entropy, its pid, the fork generation and the wall
//! clock, so it never returns bytes its parent also returns. If `getrandom` fails in the child
//! the other fields still separate it from the parent (the key stays secret: it is a hash of
//! the parent's secret key). The bare [`Generator`] is the algorithm only and is not
//! fork-safe. As with any lock, `fork()` while another thread is inside a read leaves the
//! child's copy of the lock held: POSIX allows only async-signal-safe calls in the child of a
//! multithreaded process until `exec`.
//!
//! # Locks
//!
//! With `std` the locks are `std::sync::Mutex` (waiters park); without `std`, a
//! test-and-test-and-set spin lock (waiters spin; the Concurrent path holds it for a key setup
//! and a few blocks, the Locked path for one 4 KiB step). Under `cfg(loom)` both are loom's.
//!
//! # Bad inputs
//!
//! | input | result | test (`tests/fortuna_bad_inputs.rs`) |
//! |---|---|---|
//! | `Generator::pseudo_random_data` before the first `reseed` | `Err(FortunaError::NotSeeded)`, `out` untouched | `read_before_reseed` |
//! | `Generator::pseudo_random_data` with more than 2^20 bytes | `Err(FortunaError::RequestTooLarge { requested })`, state untouched | `request_over_2_pow_20` |
//! | `add_random_event` with empty `data` | `Err(FortunaError::EventLength { len: 0 })`, nothing appended | `empty_event` |
//! | `add_random_event` with `data` over 32 bytes | `Err(FortunaError::EventLength { len })`, nothing appended | `long_event` |
//! | `add_random_event` with `pool >= 32` | `Err(FortunaError::PoolIndex { pool })` | `pool_out_of_range` |
//! | `Accumulator::with_min_pool_size(_, 0)` | `Err(FortunaError::MinPoolSize)` | `zero_min_pool_size` |
//! | `Fortuna::from_seed` with fewer than 32 seed bytes | `Err(FortunaError::SeedTooShort { len })` | `short_fortuna_seed` |
//! | `Generator::reseed` / `Fortuna::reseed` with an empty seed | accepted (FS&K bound nothing; K still changes) | `empty_reseed_is_accepted` |
//! | `Fortuna::fill_bytes` of 0 bytes or more than 2^20 bytes | served (0: a rekey only; large: split as above) | `fortuna_any_length` |
//! | a [`Clock`] that goes backwards | treated as no time passing (saturating): no reseed until 100 ms past the last | `clock_going_backwards` |
//!
//! Environment failures: [`Fortuna::new`] returns `Err(FortunaError::Entropy(_))` when the OS
//! entropy source fails (nothing to test deterministically on Linux, where `getrandom` does
//! not fail after boot).

mod accumulator;
mod generator;
pub mod prf;
mod rng;

use core::fmt;

#[cfg(feature = "std")]
pub use accumulator::monotonic_now;
pub use accumulator::{
    Accumulator, Clock, DEFAULT_MIN_POOL_SIZE, MAX_EVENT_LEN, POOL_COUNT, RESEED_INTERVAL,
};
pub use generator::{Generator, MAX_REQUEST, READER_FIRST_BLOCK};
pub use prf::{Aes256Prf, ChaCha20Prf, Prf};
pub use rng::{Fortuna, LOCKED_STEP, MIN_SEED_LEN};

use scalrand_os::EntropyError;

/// How [`Fortuna`] serves reads from several threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadMode {
    /// Generate under the global lock, at most 4 KiB per lock hold, rekeying after each
    /// step: canonical FS&K, FreeBSD's path before 2019.
    Locked,
    /// Reserve the reader's key and counter range under the lock, generate after unlocking
    /// (FreeBSD's default since 2019). See "Concurrent key schedule" in the module docs.
    Concurrent,
}

/// Errors from the Fortuna API. Every one leaves the state untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FortunaError {
    /// The generator was read before its first reseed.
    NotSeeded,
    /// A generator request exceeded [`MAX_REQUEST`] (2^20) bytes.
    RequestTooLarge {
        /// Bytes asked for.
        requested: usize,
    },
    /// An entropy event's data was not 1..=32 bytes long.
    EventLength {
        /// Its length.
        len: usize,
    },
    /// A pool index was not below [`POOL_COUNT`] (32).
    PoolIndex {
        /// The index given.
        pool: usize,
    },
    /// The accumulator's minimum pool size was 0.
    MinPoolSize,
    /// A Fortuna seed was shorter than [`MIN_SEED_LEN`] (32) bytes.
    SeedTooShort {
        /// Its length.
        len: usize,
    },
    /// The operating system's entropy source failed.
    Entropy(EntropyError),
}

impl fmt::Display for FortunaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotSeeded => f.write_str("Fortuna generator read before its first reseed"),
            Self::RequestTooLarge { requested } => write!(
                f,
                "Fortuna generator request of {requested} bytes exceeds the 2^20-byte limit"
            ),
            Self::EventLength { len } => {
                write!(
                    f,
                    "entropy event of {len} bytes; events carry 1 to 32 bytes"
                )
            }
            Self::PoolIndex { pool } => write!(f, "pool index {pool} out of range 0..32"),
            Self::MinPoolSize => f.write_str("minimum pool size must be at least 1 byte"),
            Self::SeedTooShort { len } => {
                write!(f, "Fortuna seed of {len} bytes; at least 32 are required")
            }
            Self::Entropy(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for FortunaError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Entropy(e) => Some(e),
            _ => None,
        }
    }
}
