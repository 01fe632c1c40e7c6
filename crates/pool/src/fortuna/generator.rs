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
//!
//! Keys are only ever passed by reference (`&[u8; 32]`, reinterpreted as the cipher crates'
//! `&Array`), so no by-value copy of K is left in a stack slot; the temporaries the
//! computations need (SHA-256 digests) are wiped.

use core::fmt;
use core::marker::PhantomData;

use crate::sha256::Sha256;
use scalrand_os::wipe::ZeroValid;
use scalrand_os::wipe::zero;

use super::FortunaError;
use super::prf::{Aes256Prf, Prf};

/// The largest request [`Generator::pseudo_random_data`] serves: 2^20 bytes (FS&K §9.4.4).
pub const MAX_REQUEST: usize = 1 << 20;

/// The counter of a Concurrent reader's first block under its private key: 1, as the first
/// output block after FS&K's first reseed (see "Concurrent key schedule" in the module docs).
pub const READER_FIRST_BLOCK: u128 = 1;

/// Working bytes of a key derivation ([`Prf::derive_key`]): one ChaCha20 block, or AES's two
/// key blocks.
pub(crate) const WORK_BUF: usize = 64;

/// Writes `P`'s keyed form of `key` into `keyed`, in a frame of its own (the caller wipes the
/// stack below it afterwards).
#[inline(never)]
pub(crate) fn keyed_in_frame<P: Prf>(key: &[u8; 32], keyed: &mut core::mem::MaybeUninit<P::Keyed>) {
    P::keyed_in(key, keyed);
}

/// Domain label of the fork secret (see [`Generator::fork_secret`]).
const FORK_SECRET_LABEL: &[u8] = b"scalrand fortuna fork secret";

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

// SAFETY: a `Generator` is a `[u8; 32]`, a `u128`, a `bool` and a `PhantomData`: the all-zero
// bytes are a valid value of each (`false` is 0), so an all-zero `Generator` is valid and drops
// safely. It is exactly `Generator::with_prf()`: K = 0, C = 0, not seeded, which refuses to
// generate until reseeded (`pseudo_random_data` returns `NotSeeded`; `Fortuna` rekeys a
// generator it finds unseeded before answering).
unsafe impl<P: Prf> ZeroValid for Generator<P> {}

impl<P: Prf> Drop for Generator<P> {
    fn drop(&mut self) {
        zero(&mut self.key);
        zero(&mut self.counter);
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
        // The hash of K runs in the frame below (see `reseed_in_frame`): wiped after it.
        super::prf::wiped(|| self.reseed_in_frame(seed));
    }

    /// [`reseed`](Self::reseed) without the stack wipe. Never inlined: `finalize` moves the
    /// hasher, whose buffer and message schedule held K, and leaves the moved-from copy in
    /// this frame, for the caller's wipe.
    #[inline(never)]
    pub(crate) fn reseed_in_frame(&mut self, seed: &[u8]) {
        let mut inner = Sha256::new();
        inner.update(self.key.as_slice()); // a slice: `update(self.key)` would copy K by value
        inner.update(seed);
        let mut h1 = inner.finalize();
        let mut h2 = Sha256::digest(&h1);
        self.key.copy_from_slice(&h2);
        zero(&mut h1);
        zero(&mut h2);
        crate::chacha::observe_key(&self.key);
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
        // The keyed K and the blocks lie in the frames below, and the new K's copy passes
        // through the vector registers: both wiped after it, as `reseed` does.
        super::prf::wiped(|| self.generate_in_frame(out));
        Ok(())
    }

    /// [`generate_seeded`](Self::generate_seeded) in a frame of its own, for the caller's
    /// wipe.
    #[inline(never)]
    fn generate_in_frame(&mut self, out: &mut [u8]) {
        self.generate_seeded(out);
    }

    /// [`pseudo_random_data`](Self::pseudo_random_data) for callers that guarantee a seeded
    /// generator and `out.len() <= MAX_REQUEST` (Fortuna, which seeds at construction).
    #[inline]
    pub(crate) fn generate_seeded(&mut self, out: &mut [u8]) {
        let mut work = [0u8; WORK_BUF];
        let mut keyed = core::mem::MaybeUninit::uninit();
        self.generate_seeded_in(out, &mut work, &mut keyed);
    }

    /// [`generate_seeded`](Self::generate_seeded) with its working memory given: `work` for
    /// the new key's blocks and `keyed` (empty on entry and on return) for K's keyed form.
    /// Fortuna's locked reads pass a frame of wipe-on-fork memory, so that a child forked
    /// from another thread during the read finds no expanded K (which would give it the
    /// parent's next K) in a stack local.
    #[inline]
    pub(crate) fn generate_seeded_in(
        &mut self,
        out: &mut [u8],
        work: &mut [u8; WORK_BUF],
        keyed: &mut core::mem::MaybeUninit<P::Keyed>,
    ) {
        debug_assert!(out.len() <= MAX_REQUEST);
        // Unseeded or an all-zero key: the state a fork made by a signal handler inside this
        // very read leaves the child (the kernel zeroed it); nothing is keyed from it, and
        // the caller's fork check runs the read again with the child's own keys.
        if !self.seeded || self.key == [0; 32] {
            return;
        }
        crate::chacha::Section::nested(|_| keyed_in_frame::<P>(&self.key, keyed));
        // SAFETY: written just above.
        let k = unsafe { keyed.assume_init_ref() };
        // The output straight into `out`, then the new key through `work` (see
        // `Prf::derive_key`: its blocks never pass through a stack slot).
        let c = P::keystream(k, self.counter, out);
        self.counter = P::derive_key(k, c, &mut self.key, work);
        crate::chacha::observe_key(&self.key);
        // SAFETY: written above, dropped once (the expanded K wipes itself as it drops).
        unsafe { keyed.assume_init_drop() };
    }

    /// Concurrent read, the part done under the lock (see "Concurrent key schedule" in the
    /// module docs): writes the reader's private key `k_r` = the first 32 bytes of
    /// E(K, C) ‖ … ‖ E(K, C + KB - 1) into `reader_key`, replaces K with the first 32 bytes of
    /// E(K, C + KB) ‖ … ‖ E(K, C + 2·KB - 1), and sets C += 2·KB. The old K is overwritten; the
    /// reader then generates under `k_r` from counter [`READER_FIRST_BLOCK`].
    ///
    /// The caller guarantees a seeded generator (Fortuna seeds it before every answer).
    #[inline]
    #[cfg(all(test, feature = "std"))]
    pub(crate) fn reserve(&mut self, reader_key: &mut [u8; 32]) {
        let mut work = [0u8; WORK_BUF];
        let mut keyed = core::mem::MaybeUninit::uninit();
        self.reserve_in(reader_key, &mut work, &mut keyed);
    }

    /// [`reserve`](Self::reserve) with its working memory given: `work` for the keys' blocks and
    /// `keyed` (empty on entry and on return) for the old K's keyed form. A Concurrent read
    /// passes its frame of wipe-on-fork memory, so that a fork child finds neither the
    /// reader's key nor the old K (which would give it) in a stack local, even while this
    /// runs.
    #[inline]
    pub(crate) fn reserve_in(
        &mut self,
        reader_key: &mut [u8; 32],
        work: &mut [u8; WORK_BUF],
        keyed: &mut core::mem::MaybeUninit<P::Keyed>,
    ) {
        // As in `generate_seeded_in`: a zeroed state keys nothing (`reader_key` is left as it
        // is; the caller refuses a zero one).
        if !self.seeded || self.key == [0; 32] {
            return;
        }
        crate::chacha::Section::nested(|_| keyed_in_frame::<P>(&self.key, keyed));
        // SAFETY: written just above.
        let k = unsafe { keyed.assume_init_ref() };
        // Each key through `work` (see `Prf::derive_key`).
        let c = P::derive_key(k, self.counter, reader_key, work);
        self.counter = P::derive_key(k, c, &mut self.key, work);
        crate::chacha::observe_key(reader_key);
        crate::chacha::observe_key(&self.key);
        // SAFETY: written above, dropped once (the expanded old K wipes itself as it drops).
        unsafe { keyed.assume_init_drop() };
    }

    /// Erases K and C and marks the generator unseeded: the all-zero state a wipe-on-fork
    /// page gives a fork child, produced by hand where the OS cannot wipe.
    pub(crate) fn wipe(&mut self) {
        zero(&mut self.key);
        zero(&mut self.counter);
        self.seeded = false;
    }

    /// The fork secret S = SHA-256("scalrand fortuna fork secret" ‖ K) of the current key,
    /// written into `out`. One-way: S does not give K back. See "Fork safety" in the module
    /// docs.
    ///
    /// Never inlined: `finalize` moves the hasher, whose buffer holds K, and leaves the
    /// moved-from copy in this frame, which the public entry points wipe after returning.
    #[inline(never)]
    pub(crate) fn fork_secret(&self, out: &mut [u8; 32]) {
        let mut h = Sha256::new();
        h.update(FORK_SECRET_LABEL);
        h.update(self.key.as_slice());
        h.finalize_into(out);
    }

    /// Test access to the raw state.
    #[cfg(all(test, any(feature = "std", scalrand_loom)))]
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

    /// The locked half of a concurrent read, against the schedule written out by hand:
    /// reader key from blocks C.., new global key from the KB blocks after it.
    fn reserve_follows_the_schedule<P: Prf>() {
        let mut g = Generator::<P>::with_prf();
        g.reseed(b"s");
        let (k, c) = g.raw_state();
        let mut reader = [0u8; 32];
        g.reserve(&mut reader);
        let kb = P::KEY_BLOCKS as u128;
        let mut want_reader = [0u8; 32];
        let mut want_global = [0u8; 32];
        let keyed = P::keyed(&k);
        P::keystream(&keyed, c, &mut want_reader);
        P::keystream(&keyed, c + kb, &mut want_global);
        assert_eq!(reader, want_reader);
        assert_eq!(g.raw_state(), (want_global, c + 2 * kb));
        assert_ne!(reader, want_global);
    }

    #[test]
    fn reserve_follows_the_schedule_aes() {
        reserve_follows_the_schedule::<Aes256Prf>();
    }

    #[test]
    fn reserve_follows_the_schedule_chacha() {
        reserve_follows_the_schedule::<ChaCha20Prf>();
    }

    #[test]
    fn wipe_gives_the_all_zero_unseeded_state() {
        let mut g = Generator::<Aes256Prf>::with_prf();
        g.reseed(b"w");
        let mut s1 = [0u8; 32];
        g.fork_secret(&mut s1);
        assert_ne!(s1, g.raw_state().0, "S is not K");
        g.wipe();
        assert_eq!(g.raw_state(), ([0; 32], 0));
        assert!(!g.is_seeded());
        assert_eq!(
            g.pseudo_random_data(&mut [0u8; 4]),
            Err(FortunaError::NotSeeded)
        );
    }
}
