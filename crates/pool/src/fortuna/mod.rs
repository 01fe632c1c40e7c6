//! Fortuna (Ferguson, Schneier, Kohno, *Cryptography Engineering* ch. 9) with FreeBSD's
//! concurrent read path, which generates output outside the global lock.
//!
//! Source: FreeBSD r349154, "Fortuna: allow increased concurrency" (cem, 2019). FreeBSD found the system "extremely unresponsive with 3-4 concurrent
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
//! | [`Clock`] | the accumulator's injectable time source (`scalrand_os::Clock`) |
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
//! **Locked** (canonical FS&K, FreeBSD's path before r349154): the request is cut into steps
//! of at most 4 KiB ([`LOCKED_STEP`]); for each step the lock is taken, the step is one
//! `pseudo_random_data` call (so it ends with a rekey), and the lock is released. n = 0 is
//! one empty step. The output is exactly a [`Generator`] fed the same 4 KiB requests.
//!
//! **Concurrent** (FreeBSD r349154's `kern.random.fortuna.concurrent_read` path, its default
//! since 2019, with a key schedule that keeps forward secrecy between readers) follows the
//! *Concurrent key schedule* below.
//!
//! ## Concurrent key schedule
//!
//! Let the global state be (K, C), B the block length and KB = ceil(32 / B) (2 for AES, 1 for
//! ChaCha20). A read of n bytes is cut into pieces of at most 2^20 bytes: `p = ceil(n / 2^20)`
//! pieces (none when n = 0) of lengths `len_1 .. len_p`, all 2^20 but the last;
//! `m_i = ceil(len_i / B)`.
//!
//! 1. Under the lock, whatever n is (n = 0 included):
//!    the reader's private key `k_r` = first 32 bytes of E(K, C) ‖ … ‖ E(K, C + KB - 1);
//!    the new global key `K'` = first 32 bytes of E(K, C + KB) ‖ … ‖ E(K, C + 2·KB - 1);
//!    `C' = C + 2·KB`; K is overwritten by K'; unlock. This is exactly one
//!    `Generator::pseudo_random_data` of 32 bytes, whose output is `k_r`. The lock is held
//!    for one key setup and 2·KB blocks.
//! 2. Outside the lock, with c = [`READER_FIRST_BLOCK`] (1, like FS&K's first block after a
//!    reseed), for each piece i: output blocks `c .. c + m_i - 1` under `k_r` (the tail of
//!    the last block discarded), `c += m_i`; if another piece follows, the reader replaces its
//!    own key: `k_r` = first 32 bytes of E(k_r, c) ‖ … ‖ E(k_r, c + KB - 1), `c += KB`.
//! 3. `k_r` is wiped as soon as it is expanded; the expanded key when the read ends.
//!
//! Consequences, all pinned by tests against the Python reference
//! (`tests/reference/fortuna_ref.py`):
//! * **Forward secrecy between readers.** What a reader holds after unlocking is `k_r`, a
//!   PRF output under K; K' is another PRF output under K. Recovering K' (or any later
//!   reader's key, which derives from K') from `k_r` means breaking the PRF, so a memory
//!   compromise of a reader (even one preempted for a long time mid-read) reveals its own
//!   output and nothing later. (FreeBSD r349154 hands the reader K itself and derives the next
//!   global key from K at a later counter; the test
//!   `concurrent_reader_key_reaches_no_later_reader_*` fails on that schedule.)
//! * Readers never share a (key, block): each has its own key. The loom model (`rng/loom_model.rs`: two
//!   readers and a reseed, in each mode) checks that, that no reader key is a global key,
//!   and that no key change is lost or replayed:
//!   `RUSTFLAGS="--cfg scalrand_loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p scalrand-pool
//!   --release --lib fortuna::rng::loom`. Since the locks spin (each failed attempt is a
//!   scheduling point), bound 1 is exhaustive (54 executions per mode), while bound 2 is too
//!   large to exhaust; CI runs bound 1, and bound 2 has been explored for hundreds of
//!   thousands of executions per mode with `LOOM_MAX_DURATION`, all passing.
//! * Locked and Concurrent give **different** streams from the same seed, and a Concurrent
//!   read is not one `pseudo_random_data(n)`: it is a 32-byte `pseudo_random_data` (the
//!   global state) and then the reader's keystream under those 32 bytes
//!   (`tests/fortuna_props.rs` checks exactly that). Sequential reads are still a
//!   deterministic function of the seed.
//! * Every 2^20 bytes of output the reader's key changes (FS&K's limit on one key), for
//!   ChaCha20 too: FreeBSD rekeys only AES every 1 MiB, we keep one schedule for both PRFs at
//!   the cost of one ChaCha block per MiB.
//! * Cost against the r349154 schedule: one more key setup and KB more blocks per read (the
//!   reader expands `k_r` instead of reusing the expanded K). Measured in `BENCHMARKS.md`.
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
//! After `fork()` a child holds a copy of its parent's memory. [`Fortuna`] keeps its generator
//! state (K, C, the seeded flag, and the lock guarding them) in
//! [`scalrand_os::wipe::WipeOnFork`] memory: on Linux ≥ 4.14 the kernel hands the child that
//! page **zeroed** (`MADV_WIPEONFORK`), before any code runs there, so a child that never reads
//! does not carry the key that regenerates its parent's next output, and a lock some parent
//! thread held at the fork is simply free. (Cost: one page mapped per `Fortuna`, one `mmap`
//! and one `madvise` when it is made.) The all-zero state is an unseeded generator
//! ([`Generator`] is [`ZeroValid`](scalrand_os::wipe::ZeroValid)), which Fortuna never answers
//! from.
//!
//! Under the lock, before every answer, Fortuna compares [`scalrand_os::fork::generation`]
//! with the generation it was keyed under and checks that it is seeded. On a mismatch (a fork
//! child, however it was made: libc `fork()`, a raw `syscall(SYS_fork)`, `clone`/`clone3`,
//! or another library's `pthread_atfork` child handler or a signal handler reading before
//! anything else ran — no atfork handler is involved) it takes **the fork path**:
//!
//! 1. wipe K and C (already zero where the kernel wiped them; where it cannot —
//!    [`WipeOnFork::wipes_on_fork`](scalrand_os::wipe::WipeOnFork::wipes_on_fork) false:
//!    not Linux, miri, loom, `no_std` — this is what erases them, on the same code path);
//! 2. reseed from `"scalrand fortuna fork" ‖ S ‖ 32 OS bytes ‖ pid ‖ generation ‖ clock`,
//!    where S is the **fork secret**;
//! 3. derive the child's own S from the new key.
//!
//! The fork secret S = SHA-256("scalrand fortuna fork secret" ‖ K) is recomputed at every
//! keying (construction, every reseed, the fork path) and kept in ordinary memory (so the
//! child inherits it), behind its own lock taken only inside the state lock. It is one-way:
//! S does not give back K, so it regenerates no output, and it keeps the child's new key
//! secret from anyone outside the process. But siblings share S, and children started as pid 1
//! of their own namespaces within one clock tick share pid and clock too: so the fork path
//! **fails closed**. With `std`, a child whose `getrandom` fails does not key itself:
//! [`Fortuna::try_fill_bytes`] returns [`FortunaError::Entropy`] (and
//! [`Fortuna::fill_bytes`] panics) until a later call gets fresh bytes. The accumulator's
//! pools are ordinary memory and are inherited; they are entropy input, not key, and parent
//! and child mix them into different keys.
//!
//! **Reads in progress in other threads.** A child also inherits a copy of every other
//! thread's stack. While a read generates, it holds a key: a Concurrent reader's private key
//! `k_r` and its keyed form (the expanded AES-256 schedule or the ChaCha20 key), the blocks
//! each new key is taken from (`k_r` and the next K; a Locked read's next K; a long read's
//! next reader key) and the old K's keyed form that produces them; a Locked read holds K's
//! keyed form, from which the next K follows. All of these live in a frame of wipe-on-fork
//! memory taken for the read ([`Scratch`](scalrand_os::scratch::Scratch)), never in a stack
//! local, so a child forked from another thread while the read runs finds zeros
//! (`tests/fork_mid_read.rs`, with both PRFs, 300 B to 2 MiB Concurrent reads). Each key's
//! blocks are computed in registers and stored only into the frame: with AES-NI, eight blocks
//! per pass stored block by block (a short pass included); with ChaCha20, the single-block
//! function; with the bitsliced AES, in a frame of wipe-on-fork memory of its own, each word
//! then stored straight into the reader's frame. On x86_64, `tests/stack_every_step.rs`
//! single-steps 300-byte reads in both modes, with both PRFs, under `ptrace` and finds no
//! 16-byte piece of any key on the reading thread's stack at any instruction (ChaCha20's keystream runs on the node pools' backends, none of which
//! spills a key word). AES-256 is this crate's own code on every CPU, keyed in place (the
//! round keys are written where they stay and read where they lie, never copied to a stack
//! frame): AES-NI or the ARMv8 Cryptography Extension where the CPU has one, its state in
//! registers; elsewhere a
//! constant-time bitsliced AES whose state, circuit temporaries and round keys all live in
//! wipe-on-fork memory, one volatile load and store per gate (on x86_64 the step-by-step
//! search looks for every round key raw and in bitsliced form, and CI forces this AES there
//! with `SCALRAND_AES=soft`; on aarch64, under qemu-user, `tests/key_registers.rs` checks the
//! registers after each call). Every read, reseed
//! and construction ends by clearing the vector registers, so a signal frame saved right
//! after one holds no key (`tests/key_registers.rs`), and then wiping the stack as far below
//! its frames as a signal frame written during the call can reach (the red zone,
//! `AT_MINSIGSTKSZ` and the start of a handler: [`scalrand_os::signal::wipe_stack`]), so a
//! signal delivered while a key was in the registers leaves no key on the thread's stack
//! (`tests/signal_frames.rs`, `tests/signal_storm.rs`). A handler on an alternate stack
//! (`SA_ONSTACK`) gets its frame there: unless an rseq watch armed for the operation says no
//! signal came (Linux x86_64, glibc 2.35 and later; elsewhere nothing can tell), the
//! operation's end zeroes the top of that stack too (`tests/alt_stack_frames.rs`,
//! `tests/signal_frames.rs`).
//!
//! Where the kernel cannot wipe, the parent's K and C, and the frames of the reads in flight
//! at the fork, stay in a child's memory until its first read (no handler runs at `fork()`).
//! The bare [`Generator`] is the algorithm only and is not fork-safe; it wipes its stack and
//! clears the registers after every call, like Fortuna. Builds without optimisation copy key
//! words into stack temporaries during each call: ship optimised builds.
//!
//! # Locks
//!
//! Every lock is [`scalrand_os::Lock`]: one word, **waiters spin** (`spin_loop` hints, a
//! `yield_now` every 64 attempts with `std`), nothing parks; a lock left held by a thread of a
//! parent process is taken over in the child. Fortuna holds the generator lock for one key
//! setup and 2·KB blocks (Concurrent), one 4 KiB step (Locked), or one reseed; the accumulator
//! lock for one event or one pool drain. Lock order: generator state, then fork secret;
//! the accumulator lock is never held with another. Under `--cfg scalrand_loom` the atomics
//! are loom's (`scalrand_os::primitive`).
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
//! not fail after boot). In a fork child a failing `getrandom` does not fail the read: the
//! fork path keys the child from the fork secret, pid, generation and clock (see "Fork
//! safety"); `a_wiped_state_is_rekeyed_before_answering` (`rng/tests.rs`) drives that path.

mod accumulator;
#[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
mod aes_armv8;
#[cfg(all(test, feature = "std"))]
mod aes_kat;
#[cfg(all(target_arch = "x86_64", not(miri)))]
mod aes_ni;
mod aes_soft;
mod generator;
pub mod prf;
#[doc(hidden)]
pub use prf::__wipe_depth;
mod rng;

use core::fmt;

#[cfg(feature = "std")]
pub use accumulator::monotonic_now;
pub use accumulator::{
    Accumulator, Clock, DEFAULT_MIN_POOL_SIZE, MAX_EVENT_LEN, POOL_COUNT, RESEED_INTERVAL,
};
pub use generator::{Generator, MAX_REQUEST, READER_FIRST_BLOCK};
pub use prf::{Aes256Keyed, Aes256Prf, ChaCha20Prf, Prf};
pub use rng::{Fortuna, LOCKED_STEP, MIN_SEED_LEN};

use scalrand_os::EntropyError;

/// How [`Fortuna`] serves reads from several threads.
///
/// Both modes give cryptographically secure output under the same seeding and reseed rules,
/// wipe what a read holds, and are fork-safe alike; they differ in what a read does while it
/// holds the global lock, and so in what several threads reading at once cost each other.
/// From one seed they give different streams.
///
/// **Pick [`Concurrent`](Self::Concurrent)** for a `Fortuna` that several threads read at
/// once (a server's keys, tokens and nonces). A read holds the lock only long enough to
/// take a private key for itself and replace the global key (one key setup and four AES
/// blocks, or two ChaCha20 blocks), then generates its output after unlocking, so readers on
/// different CPUs generate in parallel and a long read delays no one. The price is one more
/// key setup and one more key's worth of blocks per read than a Locked read of the same
/// size, which shows on small reads from a single thread. While it generates, a reader holds
/// only its own key: a memory compromise of a reader (a core dump, a debugger, a reader
/// preempted mid-read) reveals that read's output and nothing another or later read
/// produces. The reader's key changes every 1 MiB of a long read.
///
/// **Pick [`Locked`](Self::Locked)** when one thread does the reading (a single-threaded or
/// `no_std` host, one background task), when the output must be the canonical algorithm's (a
/// Locked read is exactly a [`Generator`] fed requests of at most 4 KiB, which an FS&K
/// generator with the same conventions and seed reproduces: see "Generator conventions" in
/// the module docs), or to measure what generating outside the lock buys. Each 4 KiB step of a read is generated under the global lock and ends with
/// a rekey, so the key changes every 4 KiB; but every other reader waits for the whole step,
/// spinning, not parked (see "Locks" in the module docs), so reads from several threads at
/// once take turns and their total throughput does not grow with their number. While a step
/// runs, its thread holds the global key, from which all output up to the next reseed
/// follows.
///
/// The repository's `BENCHMARKS.md` has the measured cost of each at one and two threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadMode {
    /// Generate under the global lock in steps of at most 4 KiB ([`LOCKED_STEP`]), each
    /// ending with a rekey: canonical FS&K, FreeBSD's path before 2019. Other readers wait
    /// for each step. For one reader, or for FS&K's exact output.
    Locked,
    /// Take a private reader key under the lock, generate after unlocking (FreeBSD's default
    /// since 2019, with a key schedule that keeps readers' keys apart). For a generator that
    /// several threads read at once. See "Concurrent key schedule" in the module docs.
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
