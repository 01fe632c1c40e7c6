//! The FS&K generator (Cryptography Engineering §9.4), with PyCrypto's conventions.
//!
//! State: a 32-byte key K and a 128-bit counter C, both zero at the start.
//! `reseed(s)`: K = SHA-256(SHA-256(K ‖ s)), C += 1. `pseudo_random_data(out)`: n ≤ 2^20
//! bytes from blocks C, C+1, ... (the tail of the last block discarded), then the next
//! [`Prf::KEY_BLOCKS`] blocks become the new K (also for n = 0), so a later compromise of the
//! state cannot regenerate the output (forward secrecy). Seed: FreeBSD's Fortuna and the FS&K
//! text; the block layout (little-endian counter, first output block C = 1) is PyCrypto's, so
//! PyCrypto's published self-test vectors apply unchanged.
//!
//! The generator is the bare algorithm: it knows nothing of threads or `fork()`. Use
//! [`Fortuna`](super::Fortuna) for a shared, fork-safe generator.

use core::fmt;
use core::marker::PhantomData;

use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use super::FortunaError;
use super::prf::{Aes256Prf, Prf};

/// The largest request [`Generator::pseudo_random_data`] serves: 2^20 bytes (FS&K §9.4.4).
pub const MAX_REQUEST: usize = 1 << 20;

/// The FS&K generator: key K, 128-bit counter C, PRF `P` ([`Aes256Prf`] by default).
///
/// Never `Copy` or `Clone` (a copy would repeat output), and its `Debug` shows neither K
/// nor C. K and C are wiped when it is dropped.
///
/// ```
/// use scalrand_pool::fortuna::Generator;
/// let mut g = Generator::new();
/// g.reseed(b"Hello");
/// let mut out = [0u8; 32];
/// g.pseudo_random_data(&mut out)?;
/// // PyCrypto's published FortunaGenerator vector.
/// assert_eq!(out[..4], [0x7c, 0xbe, 0x2c, 0x17]);
/// # Ok::<(), scalrand_pool::fortuna::FortunaError>(())
/// ```
pub struct Generator<P: Prf = Aes256Prf> {
    key: [u8; 32],
    counter: u128,
    seeded: bool,
    _prf: PhantomData<P>,
}

impl<P: Prf> fmt::Debug for Generator<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Generator")
            .field("prf", &P::NAME)
            .field("seeded", &self.seeded)
            .finish_non_exhaustive()
    }
}

impl<P: Prf> Drop for Generator<P> {
    fn drop(&mut self) {
        self.key.zeroize();
        self.counter.zeroize();
    }
}

impl Generator<Aes256Prf> {
    /// A new, unseeded AES-256 generator (K = 0, C = 0). It refuses to generate until
    /// [`reseed`](Self::reseed) has been called.
    #[must_use]
    #[allow(
        clippy::new_without_default,
        reason = "an unseeded generator is never a default"
    )]
    pub fn new() -> Self {
        Self::with_prf()
    }
}

impl<P: Prf> Generator<P> {
    /// A new, unseeded generator on PRF `P`, e.g. `Generator::<ChaCha20Prf>::with_prf()`.
    #[must_use]
    pub fn with_prf() -> Self {
        Self {
            key: [0; 32],
            counter: 0,
            seeded: false,
            _prf: PhantomData,
        }
    }

    /// Mixes `seed` into the key: K = SHA-256(SHA-256(K ‖ seed)), C += 1.
    ///
    /// Any seed length is accepted, the empty seed included (FS&K place no bound; it is the
    /// caller's job to supply entropy). The first reseed makes the generator usable.
    pub fn reseed(&mut self, seed: &[u8]) {
        let mut inner = Sha256::new();
        inner.update(self.key);
        inner.update(seed);
        let mut h1 = inner.finalize();
        let mut h2 = Sha256::digest(h1.as_slice());
        self.key.copy_from_slice(h2.as_slice());
        h1.as_mut_slice().zeroize();
        h2.as_mut_slice().zeroize();
        self.counter = self.counter.wrapping_add(1);
        self.seeded = true;
    }

    /// Whether [`reseed`](Self::reseed) has been called at least once.
    #[must_use]
    pub fn is_seeded(&self) -> bool {
        self.seeded
    }

    /// Fills `out` (at most [`MAX_REQUEST`] bytes, possibly none) from the next
    /// `ceil(out.len() / BLOCK_LEN)` blocks, then replaces K with the following
    /// [`Prf::KEY_BLOCKS`] blocks.
    ///
    /// # Errors
    /// [`FortunaError::NotSeeded`] before the first reseed and
    /// [`FortunaError::RequestTooLarge`] when `out.len() > 2^20`; `out` and the state are then
    /// untouched.
    pub fn pseudo_random_data(&mut self, out: &mut [u8]) -> Result<(), FortunaError> {
        if out.len() > MAX_REQUEST {
            return Err(FortunaError::RequestTooLarge {
                requested: out.len(),
            });
        }
        if !self.seeded {
            return Err(FortunaError::NotSeeded);
        }
        self.generate_seeded(out);
        Ok(())
    }

    /// [`pseudo_random_data`](Self::pseudo_random_data) for callers that guarantee a seeded
    /// generator and `out.len() <= MAX_REQUEST` (Fortuna, which seeds at construction).
    #[inline]
    pub(crate) fn generate_seeded(&mut self, out: &mut [u8]) {
        debug_assert!(self.seeded && out.len() <= MAX_REQUEST);
        let keyed = P::keyed(&self.key);
        let c = P::keystream(&keyed, self.counter, out);
        self.counter = P::keystream(&keyed, c, &mut self.key);
    }

    /// Concurrent read, the part done under the lock: hands the caller the current K and C
    /// for `reader_blocks` blocks of its own, and moves the shared state past them, K
    /// replaced by the blocks at `C + reader_blocks` under the old K. See the module docs,
    /// "Concurrent key schedule".
    /// The caller guarantees a seeded generator (Fortuna seeds at construction).
    pub(crate) fn reserve(&mut self, reader_blocks: u128) -> Reservation<P> {
        debug_assert!(self.seeded);
        let keyed = P::keyed(&self.key);
        let start = self.counter;
        self.counter = P::keystream(&keyed, start.wrapping_add(reader_blocks), &mut self.key);
        Reservation {
            keyed,
            counter: start,
        }
    }

    /// Test access to the raw state.
    #[cfg(any(all(test, feature = "std"), scalrand_loom))]
    pub(crate) fn raw_state(&self) -> ([u8; 32], u128) {
        (self.key, self.counter)
    }

    /// Test access: a seeded generator at an arbitrary state.
    #[cfg(all(test, feature = "std"))]
    pub(crate) fn from_raw_state(key: [u8; 32], counter: u128) -> Self {
        Self {
            key,
            counter,
            seeded: true,
            _prf: PhantomData,
        }
    }
}

/// A reader's private copy of (K, C) in the concurrent read path. Its keyed PRF is wiped
/// when it is dropped.
pub(crate) struct Reservation<P: Prf> {
    pub(crate) keyed: P::Keyed,
    pub(crate) counter: u128,
}

impl<P: Prf> Drop for Reservation<P> {
    fn drop(&mut self) {
        // `keyed` wipes itself (Aes256Enc / ChaChaKey); the counter is not secret but goes too.
        self.counter.zeroize();
    }
}

#[cfg(test)]
#[cfg(feature = "std")]
mod tests {
    use super::*;
    use crate::fortuna::prf::{ChaCha20Prf, Prf};

    fn hex(s: &str) -> std::vec::Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Internal-state vectors from tests/reference/fortuna_ref.py: reads across the
    /// 2^32, 2^64 and 2^128 counter boundaries, for both PRFs.
    #[test]
    fn counter_carries_match_reference() {
        let data = include_str!("../../tests/data/fortuna_counter_wrap.txt");
        let mut seen = 0;
        for line in data.lines().filter(|l| l.starts_with("wrap ")) {
            let f: std::vec::Vec<&str> = line.split(' ').collect();
            let key: [u8; 32] = hex(f[2]).try_into().unwrap();
            let start: u128 = f[3].parse().unwrap();
            let want = hex(f[4]);
            let key_after = hex(f[5]);
            let ctr_after: u128 = f[6].parse().unwrap();
            let mut out = std::vec![0u8; want.len()];
            let (k, c) = match f[1] {
                "aes" => {
                    let mut g = Generator::<Aes256Prf>::from_raw_state(key, start);
                    g.pseudo_random_data(&mut out).unwrap();
                    g.raw_state()
                }
                "chacha" => {
                    let mut g = Generator::<ChaCha20Prf>::from_raw_state(key, start);
                    g.pseudo_random_data(&mut out).unwrap();
                    g.raw_state()
                }
                other => panic!("unknown prf {other}"),
            };
            assert_eq!(out, want, "{line}");
            assert_eq!(k.as_slice(), key_after.as_slice(), "{line}");
            assert_eq!(c, ctr_after, "{line}");
            seen += 1;
        }
        assert_eq!(seen, 6);
    }

    /// The reference's generator cases (tests/data/fortuna_generator.txt) also record the
    /// key and counter after each case; only here can they be compared.
    #[test]
    fn generator_cases_end_in_reference_state() {
        fn run<P: Prf>(body: &[&str]) -> ([u8; 32], u128) {
            let mut g = Generator::<P>::with_prf();
            for line in body {
                let f: std::vec::Vec<&str> = line.split(' ').collect();
                match f[0] {
                    "reseed" => g.reseed(&hex(f[1])),
                    "read" => {
                        let mut out = std::vec![0u8; f[1].parse().unwrap()];
                        g.pseudo_random_data(&mut out).unwrap();
                    }
                    _ => {}
                }
            }
            g.raw_state()
        }
        let data = include_str!("../../tests/data/fortuna_generator.txt");
        let mut lines = data.lines().filter(|l| !l.starts_with('#'));
        let mut cases = 0;
        while let Some(head) = lines.next() {
            assert!(head.starts_with("case "));
            let prf = lines.next().unwrap();
            let body: std::vec::Vec<&str> = lines.by_ref().take_while(|l| *l != "end").collect();
            let key = hex(body.iter().find_map(|l| l.strip_prefix("key ")).unwrap());
            let ctr: u128 = body
                .iter()
                .find_map(|l| l.strip_prefix("counter "))
                .unwrap()
                .parse()
                .unwrap();
            let (k, c) = match prf {
                "prf aes" => run::<Aes256Prf>(&body),
                "prf chacha" => run::<ChaCha20Prf>(&body),
                other => panic!("{other}"),
            };
            assert_eq!(k.as_slice(), key.as_slice(), "{head}");
            assert_eq!(c, ctr, "{head}");
            cases += 1;
        }
        assert_eq!(cases, 14);
    }

    /// Forward secrecy: once a read returns, nothing left in the generator regenerates it.
    /// The old key is gone, and the new key's blocks around the counter are not the output.
    fn forward_secrecy<P: Prf>() {
        let mut g = Generator::<P>::with_prf();
        g.reseed(b"forward secrecy");
        let (old_key, _) = g.raw_state();
        let mut out = [0u8; 1000];
        g.pseudo_random_data(&mut out).unwrap();
        let (new_key, c) = g.raw_state();
        assert_ne!(old_key, new_key);
        // Every block the new key produces for counters 0 .. C + 256 (every counter the
        // generator has used, and the next ones) differs from every output block.
        let keyed = P::keyed(&new_key);
        let span = c as usize + 256;
        let mut buf = std::vec![0u8; span * P::BLOCK_LEN];
        P::keystream(&keyed, 0, &mut buf);
        for kb in buf.chunks(P::BLOCK_LEN) {
            for ob in out.chunks_exact(P::BLOCK_LEN) {
                assert_ne!(kb, ob);
            }
        }
        // The old key's output is reproducible from the old key (sanity of the check above)...
        let old = P::keyed(&old_key);
        let mut again = [0u8; 1000];
        P::keystream(
            &old,
            c - blocks_used::<P>(1000) - P::KEY_BLOCKS as u128,
            &mut again,
        );
        assert_eq!(again, out);
        // ...and the generator's state holds no copy of it.
        let (k, _) = g.raw_state();
        assert!(k.windows(8).all(|w| !old_key.windows(8).any(|o| o == w)));
    }

    fn blocks_used<P: Prf>(n: usize) -> u128 {
        crate::fortuna::prf::blocks_for::<P>(n)
    }

    #[test]
    fn forward_secrecy_aes() {
        forward_secrecy::<Aes256Prf>();
    }

    #[test]
    fn forward_secrecy_chacha() {
        forward_secrecy::<ChaCha20Prf>();
    }

    #[test]
    fn debug_hides_state() {
        let mut g = Generator::new();
        g.reseed(b"x");
        let s = std::format!("{g:?}");
        assert_eq!(s, "Generator { prf: \"AES-256\", seeded: true, .. }");
    }

    #[test]
    fn reserve_equals_one_generator_call() {
        // For one piece, the concurrent reservation is exactly pseudo_random_data.
        let mut a = Generator::<Aes256Prf>::with_prf();
        let mut b = Generator::<Aes256Prf>::with_prf();
        a.reseed(b"s");
        b.reseed(b"s");
        let mut x = [0u8; 100];
        a.pseudo_random_data(&mut x).unwrap();
        let r = b.reserve(crate::fortuna::prf::blocks_for::<Aes256Prf>(100));
        let mut y = [0u8; 100];
        Aes256Prf::keystream(&r.keyed, r.counter, &mut y);
        assert_eq!(x, y);
        assert_eq!(a.raw_state(), b.raw_state());
    }
}
