//! The known answers every AES-256 counter mode of this crate is held to (AES-NI, ARMv8,
//! bitsliced): FIPS-197 appendix C.3, and the `aes` crate's blocks for every length from 0 to
//! 299 bytes and two longer runs, from counters that carry across 2^64 and wrap at 2^128.
//! Each takes the implementation as `run(key, counter, out) -> next counter` (expand, then
//! counter mode).

extern crate std;

use aes::cipher::array::Array;
use aes::cipher::{BlockCipherEncrypt, KeyInit};

/// FIPS-197 appendix C.3: AES-256, key 00..1f, plaintext 00112233…eeff (the counter whose
/// little-endian bytes those are).
pub(super) fn fips_197_c3(run: impl Fn(&[u8; 32], u128, &mut [u8]) -> u128) {
    let key: [u8; 32] = core::array::from_fn(|i| i as u8);
    let pt = 0xffee_ddcc_bbaa_9988_7766_5544_3322_1100u128;
    let mut out = [0u8; 16];
    assert_eq!(run(&key, pt, &mut out), pt + 1);
    assert_eq!(
        out,
        [
            0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf, 0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49,
            0x60, 0x89
        ]
    );
}

/// Every length from 0 to 299 bytes, 1024 and 4103, each under a fresh key, from counters
/// near 2^128, near 2^64 and random, against the `aes` crate block by block.
pub(super) fn matches_the_aes_crate(run: impl Fn(&[u8; 32], u128, &mut [u8]) -> u128) {
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for len in (0..300).chain([1024, 4096 + 7]) {
        let key: [u8; 32] = core::array::from_fn(|_| next() as u8);
        let c = match len % 3 {
            0 => u128::MAX - 5,
            1 => u128::from(u64::MAX) - 3,
            _ => u128::from(next()) << 64 | u128::from(next()),
        };
        let mut got = std::vec![0xa5u8; len];
        let end = run(&key, c, &mut got);
        let cipher = aes::Aes256Enc::new(&key.into());
        let mut want = std::vec::Vec::new();
        let mut k = c;
        while want.len() < len {
            let mut b = Array::from(k.to_le_bytes());
            cipher.encrypt_block(&mut b);
            want.extend_from_slice(&b);
            k = k.wrapping_add(1);
        }
        assert_eq!(got[..], want[..len], "len {len}");
        assert_eq!(end, c.wrapping_add(len.div_ceil(16) as u128));
    }
}
