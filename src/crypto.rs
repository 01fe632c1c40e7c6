//! **Cryptographically secure** randomness from a process-wide [`NodePools`].
//!
//! These are the crate's CSPRNG entry points: keys, nonces, tokens, salts. (The separate
//! [`crate::fast`] module is *not* cryptographic: it is for simulations and hashing seeds.)
//!
//! One global [`NodePools`] is built on first use: the machine's [`Topology`] (sysfs, else
//! one node of all CPUs), seeded with 256 bits from the operating system, reseeded from the
//! OS every 60 s or 1 GiB of output, and rekeyed from the OS in every fork child before it
//! answers. Each read takes the per-CPU slot of the CPU the thread runs on; its key is erased
//! by the read (forward secrecy). See [`scalrand_pool::numa`] for the design.

use core::convert::Infallible;

use scalrand_os::global::{Global, Inherited};
use scalrand_pool::numa::{NodePools, NumaError, Topology};

use crate::Error;

/// The global pools, built on first use ([`Global`]: no lock, no `Once`, so a child forked
/// while another thread builds them finds none and builds its own). A fork child that finds
/// them built uses them ([`Inherited`]): they rekey themselves from the OS in every child
/// before answering, without allocating.
static POOLS: Global<NodePools, Inherited> = Global::new();

/// The global pools, built on first use.
///
/// # Panics
/// If the operating system's entropy source fails on first use (three attempts), as rand's
/// `ThreadRng` does: there is nothing secure to answer with, and `fill_bytes` has no error
/// channel. On Linux this needs `getrandom(2)` itself to fail.
#[inline]
fn pools() -> &'static NodePools {
    POOLS.get_or_init(build_or_panic)
}

#[cold]
#[inline(never)]
#[allow(clippy::panic)] // Argued on `pools`: no secure answer exists without a seed.
fn build_or_panic() -> NodePools {
    let mut last = None;
    for _ in 0..3 {
        match build() {
            Ok(p) => return p,
            Err(e) => last = Some(e),
        }
    }
    panic!("scalrand: cannot seed the cryptographic pools: {last:?}")
}

/// The global pools, building them if no thread has yet.
fn try_pools() -> Result<&'static NodePools, NumaError> {
    POOLS.get_or_try_init(build)
}

/// Pools for the machine's topology, seeded from the OS.
fn build() -> Result<NodePools, NumaError> {
    NodePools::new(Topology::detect())
}

/// Fills `dest` with **cryptographically secure** random bytes (ChaCha20 with per-CPU
/// [fast key erasure](crate::glossary#fast-key-erasure-fke), seeded and
/// [reseeded](crate::glossary#reseed-schedule-the-100-ms-rule) from the OS, fork-safe).
///
/// For keys, nonces and tokens. Not the fast non-cryptographic generator: that is
/// [`crate::fast`].
///
/// ```
/// let mut key = [0u8; 32];
/// scalrand::fill_bytes(&mut key);
/// ```
///
/// Async-signal-safe on Linux: a read from a signal handler never waits for a lock that the
/// interrupted code holds (it keys itself from `getrandom(2)` instead).
///
/// # Panics
/// If the OS entropy source fails three times on the very first use in the process, as
/// rand's `ThreadRng` does, or in a fork child whose rekey gets no fresh OS entropy: without
/// fresh entropy there is nothing secure to answer with. [`try_fill_bytes`] returns the error
/// instead.
#[inline]
pub fn fill_bytes(dest: &mut [u8]) {
    pools().fill_bytes(dest);
}

/// As [`fill_bytes`], but a typed error instead of the first-use panic: for callers that
/// must not panic even when the OS refuses entropy (sandboxes, early boot).
///
/// ```
/// let mut salt = [0u8; 16];
/// scalrand::try_fill_bytes(&mut salt).expect("the OS entropy source works here");
/// ```
///
/// # Errors
/// [`Error`] while the global pools cannot be seeded (the OS entropy source failed), or in a
/// fork child whose rekey got no fresh OS entropy (the child fails closed rather than answer
/// from what it inherited, which its siblings share); a later call tries again.
pub fn try_fill_bytes(dest: &mut [u8]) -> Result<(), Error> {
    try_pools()
        .map_err(Error::from_numa)?
        .try_fill_bytes(dest)
        .map_err(Error::from_numa)
}

/// As [`next_u64`], but a typed error instead of the first-use panic.
///
/// ```
/// let id = scalrand::try_next_u64().expect("the OS entropy source works here");
/// # let _ = id;
/// ```
///
/// # Errors
/// As [`try_fill_bytes`].
pub fn try_next_u64() -> Result<u64, Error> {
    let mut b = [0u8; 8];
    try_fill_bytes(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// A **cryptographically secure** random `u64` (from the same pools as [`fill_bytes`]).
///
/// ```
/// let id = scalrand::next_u64();
/// # let _ = id;
/// ```
///
/// # Panics
/// As [`fill_bytes`].
#[inline]
pub fn next_u64() -> u64 {
    pools().next_u64()
}

/// A handle to the global **cryptographically secure** pools, implementing rand_core 0.10's
/// `TryRng<Error = Infallible>` and `TryCryptoRng`, hence `Rng + CryptoRng`: every `rand`
/// helper works on it. [`rng`] returns one, as `rand::rng()` returns a `ThreadRng`.
///
/// The handle holds no state (all state is per CPU in the global pools), so any number of
/// handles on any threads read the same fork-safe, key-erasing generator. That is also why it
/// is `Copy`, unlike a generator with state of its own: a copy cannot repeat the original's
/// output, it reads the same pools. It is `Send + Sync` and can be held across `.await`.
///
/// ```
/// use rand::RngExt;
///
/// let mut rng = scalrand::rng();
/// let die: u8 = rng.random_range(1..=6);
/// assert!((1..=6).contains(&die));
/// let nonce: [u8; 12] = rng.random();
/// # let _ = nonce;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SecureRng {
    _private: (),
}

impl SecureRng {
    /// A handle to the global pools (built on first use; see [`fill_bytes`] for the one
    /// panic). The same as [`rng`].
    #[must_use]
    pub const fn new() -> Self {
        Self { _private: () }
    }
}

/// A handle to the global **cryptographically secure** pools: scalrand's `rand::rng()`.
///
/// ```
/// use rand::RngExt;
///
/// let coin: bool = scalrand::rng().random();
/// # let _ = coin;
/// ```
#[must_use]
#[inline]
pub const fn rng() -> SecureRng {
    SecureRng::new()
}

impl rand_core::TryRng for SecureRng {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut b = [0u8; 4];
        fill_bytes(&mut b);
        Ok(u32::from_le_bytes(b))
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(next_u64())
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        fill_bytes(dst);
        Ok(())
    }
}

impl rand_core::TryCryptoRng for SecureRng {}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{CryptoRng, Rng as _};

    fn assert_crypto<R: CryptoRng>(_: &R) {}

    #[test]
    fn handle_is_a_crypto_rng() {
        let mut r = rng();
        assert_crypto(&r);
        let a = r.next_u64();
        let b = r.next_u64();
        assert_ne!(a, b);
        let mut buf = [0u8; 64];
        r.fill_bytes(&mut buf);
        assert_ne!(buf, [0u8; 64]);
    }

    #[test]
    fn free_functions_differ_across_threads() {
        let outs: std::vec::Vec<[u8; 32]> = std::thread::scope(|s| {
            let hs: std::vec::Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let mut b = [0u8; 32];
                        fill_bytes(&mut b);
                        b
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for i in 0..outs.len() {
            for j in 0..i {
                assert_ne!(outs[i], outs[j]);
            }
        }
        assert_ne!(next_u64(), next_u64());
    }

    #[test]
    fn zero_length_is_fine() {
        fill_bytes(&mut []);
        try_fill_bytes(&mut []).unwrap();
    }

    #[test]
    fn copies_read_the_same_pools_without_repeating() {
        let mut a = SecureRng::new();
        let mut b = a;
        assert_ne!(a.next_u64(), b.next_u64());
        let (x, y) = (try_next_u64().unwrap(), try_next_u64().unwrap());
        assert_ne!(x, y);
    }
}
