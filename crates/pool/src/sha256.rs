//! SHA-256 (FIPS 180-4, section 6.2), the crate's own: the node pools' input pool and key
//! derivations, and Fortuna's accumulator and generator. It hashes secrets only at reseeds
//! and entropy events, never per read, so a plain portable compression is enough, and it
//! keeps the default build free of the `digest` stack.
//!
//! Where its values live: the hash state and the block buffer are fields of [`Sha256`],
//! zeroed when it drops (volatile writes); the compression's working words are locals of
//! [`compress`], in registers or its frame. Every caller that hashes a key runs inside a
//! section whose end wipes the stack below it (see `reseed_key` in the node pools and
//! `Generator::reseed`), which covers that frame.
//!
//! Tested against the standard's examples and against the `sha2` crate (a dev-dependency)
//! for every length up to 300 bytes, in one call and split in two.

use scalrand_os::wipe::zero;

/// FIPS 180-4 section 4.2.2: the first 32 bits of the fractional parts of the cube roots of
/// the first 64 primes.
#[rustfmt::skip]
const K: [u32; 64] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1,
    0x923f_82a4, 0xab1c_5ed5, 0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3,
    0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174, 0xe49b_69c1, 0xefbe_4786,
    0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147,
    0x06ca_6351, 0x1429_2967, 0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13,
    0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85, 0xa2bf_e8a1, 0xa81a_664b,
    0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a,
    0x5b9c_ca4f, 0x682e_6ff3, 0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208,
    0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
];

/// FIPS 180-4 section 5.3.3: the initial hash value (the first 32 bits of the fractional
/// parts of the square roots of the first 8 primes).
#[rustfmt::skip]
const H0: [u32; 8] = [
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c,
    0x1f83_d9ab, 0x5be0_cd19,
];

/// A running SHA-256 hash. Zeroed when dropped.
#[derive(Clone)]
pub(crate) struct Sha256 {
    /// The chaining value.
    state: [u32; 8],
    /// The message bytes not yet compressed (the first `filled`).
    block: [u8; 64],
    filled: usize,
    /// Message bytes so far (the standard's length, in bytes; it wraps past 2^64, far beyond
    /// anything hashed here).
    length: u64,
}

impl Sha256 {
    /// An empty hash.
    pub(crate) const fn new() -> Self {
        Self {
            state: H0,
            block: [0; 64],
            filled: 0,
            length: 0,
        }
    }

    /// Appends `data` to the message.
    pub(crate) fn update(&mut self, mut data: &[u8]) {
        self.length = self.length.wrapping_add(data.len() as u64);
        if self.filled > 0 {
            let take = (64 - self.filled).min(data.len());
            self.block[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled < 64 {
                return;
            }
            compress(&mut self.state, &self.block);
            self.filled = 0;
        }
        let (blocks, rest) = data.as_chunks::<64>();
        for b in blocks {
            compress(&mut self.state, b);
        }
        self.block[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    /// [`update`](Self::update), by value (for chains).
    pub(crate) fn chain_update(mut self, data: &[u8]) -> Self {
        self.update(data);
        self
    }

    /// Pads the message, finishes the hash and writes the digest into `out`.
    pub(crate) fn finalize_into(mut self, out: &mut [u8; 32]) {
        let bits = self.length.wrapping_mul(8);
        let filled = self.filled;
        self.block[filled] = 0x80;
        self.block[filled + 1..].fill(0);
        if filled >= 56 {
            compress(&mut self.state, &self.block);
            self.block.fill(0);
        }
        self.block[56..].copy_from_slice(&bits.to_be_bytes());
        compress(&mut self.state, &self.block);
        for (o, w) in out.chunks_exact_mut(4).zip(self.state) {
            o.copy_from_slice(&w.to_be_bytes());
        }
        // `self` drops here, zeroed.
    }

    /// Pads the message, finishes the hash and returns the digest.
    #[cfg(any(feature = "fortuna", all(test, feature = "std")))]
    pub(crate) fn finalize(self) -> [u8; 32] {
        let mut out = [0u8; 32];
        self.finalize_into(&mut out);
        out
    }

    /// SHA-256 of `data`.
    #[cfg(any(feature = "fortuna", all(test, feature = "std")))]
    pub(crate) fn digest(data: &[u8]) -> [u8; 32] {
        Self::new().chain_update(data).finalize()
    }
}

impl Drop for Sha256 {
    fn drop(&mut self) {
        zero(&mut self.state);
        zero(&mut self.block);
        zero(&mut self.filled);
        zero(&mut self.length);
    }
}

/// FIPS 180-4 section 6.2.2: one 64-byte block into `state`, with the message schedule kept
/// as a ring of 16 words.
fn compress(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 16];
    for (w, b) in w.iter_mut().zip(block.chunks_exact(4)) {
        *w = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for (t, k) in K.iter().enumerate() {
        if t >= 16 {
            let w15 = w[(t + 1) & 15];
            let w2 = w[(t + 14) & 15];
            let s0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
            let s1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
            w[t & 15] = w[t & 15]
                .wrapping_add(s0)
                .wrapping_add(w[(t + 9) & 15])
                .wrapping_add(s1);
        }
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(*k)
            .wrapping_add(w[t & 15]);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
    zero(&mut w);
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use std::string::String;
    use std::vec::Vec;

    use super::Sha256;

    fn hex(d: &[u8]) -> String {
        d.iter().map(|b| std::format!("{b:02x}")).collect()
    }

    /// FIPS 180-2 appendix B (B.1, B.2, B.3) and the empty message; the same digests come
    /// from Python's `hashlib.sha256`.
    #[test]
    fn standard_examples() {
        assert_eq!(
            hex(&Sha256::digest(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hex(&Sha256::digest(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(&Sha256::digest(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        let mut h = Sha256::new();
        for _ in 0..1000 {
            h.update(&[b'a'; 1000]);
        }
        assert_eq!(
            hex(&h.finalize()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    /// Every length up to 300 bytes (every padding case: the length fits in the last block
    /// or needs one more), in one call and split in two: at every offset up to 130 bytes
    /// (two blocks and a part), at the block edges and the middle beyond; against the `sha2`
    /// crate.
    #[test]
    #[cfg_attr(miri, ignore = "thousands of hashes: too slow under Miri")]
    fn matches_the_sha2_crate() {
        use sha2::Digest as _;
        let msg: Vec<u8> = (0..300u32).map(|i| (i * 31 + 7) as u8).collect();
        for len in 0..=msg.len() {
            let m = &msg[..len];
            let want: [u8; 32] = sha2::Sha256::digest(m).into();
            assert_eq!(Sha256::digest(m), want, "length {len}");
            let splits: Vec<usize> = if len <= 130 {
                (0..=len).collect()
            } else {
                [0, 1, 63, 64, 65, 127, 128, 129, len / 2, len - 1, len].to_vec()
            };
            for split in splits {
                let mut h = Sha256::new();
                h.update(&m[..split]);
                let h2 = h.clone();
                h.update(&m[split..]);
                assert_eq!(h.finalize(), want, "length {len}, split at {split}");
                // A clone carries on where its original was.
                assert_eq!(h2.chain_update(&m[split..]).finalize(), want);
            }
        }
    }
}
