//! Known-answer tests: chunked digests against values from independent references, not from
//! the hashers under test.
//!
//! - SHA family: Python's `hashlib` (OpenSSL), produced by `tests/gen_kat.py` (committed next to
//!   this file) over the pattern `byte[i] = (31 * i + 7) mod 256`.
//! - BLAKE3: the official `test_vectors/test_vectors.json` of BLAKE3-team/BLAKE3 (input
//!   `byte[i] = i mod 251`, first 32 bytes of the `hash` field).

// Test helpers outside #[test] fns unwrap and assert too; clippy.toml only exempts #[test] bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use digest::Digest;
use scalrand_simd_chunk::{NoSection, Policy, Preempt, Work, digest_chunked, digest_chunked_with};

/// Yields at every other check.
struct Alternate(bool);

impl Preempt for Alternate {
    fn should_yield(&mut self, _: Work) -> bool {
        self.0 = !self.0;
        self.0
    }
    fn yield_now(&mut self) {}
}

const SHA_VECTORS: &[(usize, &str, &str)] = &[
    (0, "sha1", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
    (
        0,
        "sha224",
        "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f",
    ),
    (
        0,
        "sha256",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ),
    (
        0,
        "sha384",
        "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b",
    ),
    (
        0,
        "sha512",
        "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
    ),
    (4095, "sha1", "934544efc5884e5f54ade97342528873811d5e83"),
    (
        4095,
        "sha224",
        "15690b6eca420a12875f0994e771140fe24196381a75d682a460fc8c",
    ),
    (
        4095,
        "sha256",
        "e22f185103f5d75f22898e979206334d51aa47b9a01b6d835df0ec9000aac2e5",
    ),
    (
        4095,
        "sha384",
        "6d0fe2b8ba6c409b6b5d7ef61deb88642af485be4c7747ea9135e467b1a351e9a478c9f0c524169b2d4fd7d47f32bb7a",
    ),
    (
        4095,
        "sha512",
        "d4da3d5a8c27b3bcf290605a6913570950fe766ddd0df283c2ef0fbe99d1c26ac2f8bf266beb6759b04d0b1f8386098588b9782f505ca5a903283ac04dd36644",
    ),
    (4096, "sha1", "2c177f7cc0e199dab44868ac2d42a03814e38e75"),
    (
        4096,
        "sha224",
        "e989f745a17bcda811a06e84cde97fa4263045deec0d3efbf3f586c0",
    ),
    (
        4096,
        "sha256",
        "d41d438c379110c7f7b2c561b1f04f26c1b4549110791f8e022f48974280c13e",
    ),
    (
        4096,
        "sha384",
        "5acd4d2b1f3e7a6d4d32dfc1adf99cef86dbad1c307a21f8277409036588abcd3807a8609c04d9d5df8d7b36a7dee710",
    ),
    (
        4096,
        "sha512",
        "83d4a8da077efa9a0ce3c713c4e5703ddf29472d246ebb845dd003d03caf8aabdb1e8702dfcef6a7e5134fefd104bcf61dbdcd3db385ae48343367200a65b368",
    ),
    (4097, "sha1", "188259446cd63cd102f7c7b3deaf9dc844e442ce"),
    (
        4097,
        "sha224",
        "f29c2b34334bd73a7238d8119055fea08187be5e8699fd3f92dddd3f",
    ),
    (
        4097,
        "sha256",
        "bb37fb3430fb3bc003f70512ee0189aec84b029b221885c8f16280d1b935483e",
    ),
    (
        4097,
        "sha384",
        "103648cefada3d3b13740901d2e46b9b8b783f7004edd459d3c7063ef1058e986847b5007bf6d9f08d8106d0b78e450b",
    ),
    (
        4097,
        "sha512",
        "85cec90d56270665f26f3291f6902a336646bfcfda109194308ecd3b46f7097044ecfa159a839071c5cd5f4d57dd92d4aa622849902ecc46741eb4736fb20dd0",
    ),
    (1000003, "sha1", "4857033e0d823d30a82ee329fbdf3098956f520d"),
    (
        1000003,
        "sha224",
        "9929a02f5ccd9eab4edcf8e0fc79f424a05d965d5ae6bded2120a8be",
    ),
    (
        1000003,
        "sha256",
        "98a99a78c43949f17251c669c6e3ff37064482fdc65e85ef1f21b70c2e48a81b",
    ),
    (
        1000003,
        "sha384",
        "1415daf13624b418c6347a5e6230d159c3411fad8d34ff1a32864a32641529f284b3b5a13baa3f9034fb574c3f9bc6d3",
    ),
    (
        1000003,
        "sha512",
        "dce3224a6e37f174b606d9b937f528a829a13b071511c091d915ffd711083e8f29c21058dc1274741de32a2f42afdaf4ca51886a778ba16038fe19b384d27a8d",
    ),
];

const BLAKE3_VECTORS: &[(usize, &str)] = &[
    (
        0,
        "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
    ),
    (
        1023,
        "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11",
    ),
    (
        4097,
        "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995",
    ),
    (
        7169,
        "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817",
    ),
];

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn chunked_hex<D: Digest + digest::common::BlockSizeUser>(data: &[u8]) -> [String; 3] {
    let default = hex(&digest_chunked::<D>(data, &mut Alternate(false)));
    let odd = hex(&digest_chunked_with::<D, _, _>(
        data,
        Policy::new(1000).unwrap(),
        &mut NoSection,
        &mut Alternate(true),
    )
    .0);
    let tiny = hex(&digest_chunked_with::<D, _, _>(
        data,
        Policy::new(7).unwrap(),
        &mut NoSection,
        &mut Alternate(false),
    )
    .0);
    [default, odd, tiny]
}

#[test]
fn sha_family_matches_hashlib() {
    for &(n, name, want) in SHA_VECTORS {
        let data: Vec<u8> = (0..n).map(|i| (31 * i + 7) as u8).collect();
        let got = match name {
            "sha1" => chunked_hex::<sha1::Sha1>(&data),
            "sha224" => chunked_hex::<sha2::Sha224>(&data),
            "sha256" => chunked_hex::<sha2::Sha256>(&data),
            "sha384" => chunked_hex::<sha2::Sha384>(&data),
            "sha512" => chunked_hex::<sha2::Sha512>(&data),
            other => panic!("unknown algorithm {other}"),
        };
        for g in got {
            assert_eq!(g, want, "{name} over {n} bytes");
        }
    }
}

#[test]
fn blake3_matches_official_vectors() {
    for &(n, want) in BLAKE3_VECTORS {
        let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        for g in chunked_hex::<blake3::Hasher>(&data) {
            assert_eq!(g, want, "BLAKE3 over {n} bytes");
        }
        let tree = digest_chunked_with::<blake3::Hasher, _, _>(
            &data,
            Policy::tree_hash::<blake3::Hasher>(),
            &mut NoSection,
            &mut Alternate(false),
        )
        .0;
        assert_eq!(hex(&tree), want);
    }
}
