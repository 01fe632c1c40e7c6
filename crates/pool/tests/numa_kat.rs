//! Known-answer tests of `scalrand_pool::numa` against `reference/numa_vectors.txt`.
//!
//! Provenance: the RFC 8439 vectors are copied from the RFC (sections 2.3.2, 2.4.2 and
//! appendix A.1 #1); the fast-key-erasure step and the key-schedule vectors come from
//! `reference/chacha_ref.py`, a Python implementation written from RFC 8439 and the module's
//! documented key schedule, which asserts the RFC vectors before it prints anything.
//! Regenerate with `python3 chacha_ref.py > numa_vectors.txt` in `tests/reference/`.
//! The ChaCha8/12/20 keystream vectors in `data/chacha_rounds.txt` come from the same script
//! (`python3 chacha_ref.py rounds > ../data/chacha_rounds.txt`), self-checked against
//! draft-strombergson-chacha-test-vectors-01 for 8 and 12 rounds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::chacha::{chacha20_block, fast_key_erasure, keystream};
use scalrand_pool::numa::{NodePools, Rounds, Topology};
use sha2::{Digest, Sha256};

const VECTORS: &str = include_str!("reference/numa_vectors.txt");
const ROUNDS_VECTORS: &str = include_str!("data/chacha_rounds.txt");

fn hex(line: &str) -> Vec<u8> {
    (0..line.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&line[i..i + 2], 16).unwrap())
        .collect()
}

fn vector(name: &str) -> Vec<u8> {
    hex(VECTORS
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(" = "))
        .unwrap_or_else(|| panic!("vector {name} missing")))
}

fn arr<const N: usize>(name: &str) -> [u8; N] {
    vector(name).try_into().unwrap()
}

#[test]
fn rfc8439_block_function() {
    let key = arr::<32>("rfc8439_2_3_2_key");
    let nonce = arr::<12>("rfc8439_2_3_2_nonce");
    assert_eq!(
        chacha20_block(&key, 1, &nonce).to_vec(),
        vector("rfc8439_2_3_2_block_counter1")
    );
    assert_eq!(
        chacha20_block(&[0; 32], 0, &[0; 12]).to_vec(),
        vector("rfc8439_a_1_1_block_zero")
    );
    let nonce = arr::<12>("rfc8439_2_4_2_nonce");
    let mut ks = chacha20_block(&key, 1, &nonce).to_vec();
    ks.extend_from_slice(&chacha20_block(&key, 2, &nonce));
    assert_eq!(ks[..114], vector("rfc8439_2_4_2_keystream_counter1")[..]);
}

#[test]
fn fast_key_erasure_step() {
    let mut key = arr::<32>("fke_key");
    let mut out = [0u8; 32];
    fast_key_erasure(&mut key, &mut out);
    assert_eq!(key.to_vec(), vector("fke_next_key"));
    assert_eq!(out.to_vec(), vector("fke_output"));
}

#[test]
fn fast_key_erasure_of_the_zero_key_is_rfc_a_1_1() {
    // FKE(0^32): the new key is the first half of RFC 8439 A.1 #1, the output the second.
    let rfc = vector("rfc8439_a_1_1_block_zero");
    let mut key = [0u8; 32];
    let mut out = [0u8; 32];
    fast_key_erasure(&mut key, &mut out);
    assert_eq!(key[..], rfc[..32]);
    assert_eq!(out[..], rfc[32..]);
}

#[test]
fn whole_key_schedule() {
    let seed = arr::<32>("schedule_seed");
    let pools = NodePools::from_seed(Topology::from_nodes(vec![vec![0], vec![1]]), &seed).unwrap();
    let mut a = [0u8; 32];
    pools.fill_bytes_on_cpu(0, &mut a);
    assert_eq!(a.to_vec(), vector("schedule_cpu0_first32"));
    pools.fill_bytes_on_cpu(1, &mut a);
    assert_eq!(a.to_vec(), vector("schedule_cpu1_first32"));
    let mut big = vec![0u8; 4096];
    pools.fill_bytes_on_cpu(0, &mut big);
    assert_eq!(big[..64], vector("schedule_cpu0_4096_head")[..]);
    assert_eq!(
        Sha256::digest(&big).to_vec(),
        vector("schedule_cpu0_4096_sha256")
    );
    let mut huge = vec![0u8; (1 << 20) + 100];
    pools.fill_bytes_on_cpu(0, &mut huge);
    assert_eq!(
        Sha256::digest(&huge).to_vec(),
        vector("schedule_cpu0_huge_sha256")
    );
    pools.fill_bytes_on_cpu(1, &mut a);
    assert_eq!(a.to_vec(), vector("schedule_cpu1_second32"));
}

#[test]
fn keystream_rounds() {
    let mut seen = [0usize; 3];
    for line in ROUNDS_VECTORS.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split(' ').collect();
        let (rounds, i) = match f[0] {
            "8" => (Rounds::ChaCha8, 0),
            "12" => (Rounds::ChaCha12, 1),
            "20" => (Rounds::ChaCha20, 2),
            r => panic!("bad rounds {r}"),
        };
        let counter: u32 = f[1].parse().unwrap();
        let key: [u8; 32] = hex(f[2]).try_into().unwrap();
        let len: usize = f[3].parse().unwrap();
        let expect = hex(f[4]);
        assert_eq!(expect.len(), len);
        let mut out = vec![0xA5u8; len];
        keystream(&key, counter, &mut out, rounds);
        assert!(out == expect, "{rounds:?} counter {counter} len {len}");
        seen[i] += 1;
    }
    assert_eq!(seen, [5, 5, 5]);
    // ChaCha20 with the zero key at block 0 is RFC 8439 A.1 #1.
    let mut b = [0u8; 64];
    keystream(&[0; 32], 0, &mut b, Rounds::ChaCha20);
    assert_eq!(b.to_vec(), vector("rfc8439_a_1_1_block_zero"));
}

#[test]
fn whole_key_schedule_with_reduced_rounds() {
    let seed = arr::<32>("schedule_seed");
    for (rounds, name) in [
        (Rounds::ChaCha12, "schedule12"),
        (Rounds::ChaCha8, "schedule8"),
    ] {
        let pools = NodePools::from_seed(Topology::from_nodes(vec![vec![0], vec![1]]), &seed)
            .unwrap()
            .with_rounds(rounds);
        assert_eq!(pools.rounds(), rounds);
        let mut a = [0u8; 32];
        pools.fill_bytes_on_cpu(0, &mut a);
        assert_eq!(a.to_vec(), vector(&format!("{name}_cpu0_first32")));
        let mut big = vec![0u8; 4096];
        pools.fill_bytes_on_cpu(0, &mut big);
        assert_eq!(
            Sha256::digest(&big).to_vec(),
            vector(&format!("{name}_cpu0_4096_sha256"))
        );
    }
}
