//! Right after each public entry point that derives or is given a key returns, no 16-byte
//! half of any such key is in a vector register and no 8-byte quarter of one in a
//! general-purpose register: a signal delivered at that moment would save the registers into
//! a frame on the thread's stack, where no wipe reaches (and a callee-saved register is
//! pushed onto the stack by the next function that uses it).
//!
//! Every key the pools and Fortuna derive is shown to an observer (`__observe_keys`) that
//! records it with plain 8-byte loads and stores (general-purpose registers only, so the
//! observer leaves nothing in a vector register itself). The thread is pinned to one CPU; each
//! entry point runs thousands of times (hundreds for large reads), and after each call the
//! vector registers (`xmm`, all of `ymm` with AVX, all of `zmm0`–`zmm31` with AVX-512; `v0`–
//! `v31` on aarch64) are dumped and every 16-byte lane is compared with both halves of every
//! key the call derived or was given; the general-purpose registers (all but the stack
//! pointer on x86_64; `x0`–`x28` on aarch64) are dumped before them and compared with every
//! quarter.
//!
//! Run on every backend (`cargo xtask ci` runs it once per forced ChaCha backend, and in the
//! debug build of the workspace's tests).

#![cfg(all(
    feature = "fortuna",
    target_os = "linux",
    feature = "std",
    not(miri),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::chacha::{__observe_keys, backend, chacha20_block, fast_key_erasure, keystream};
use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, Generator, Prf, ReadMode};
use scalrand_pool::numa::{NodePools, Rounds, Topology};
use scalrand_testkit::cpu::pin_to;
use scalrand_testkit::regs::{MAX_GPRS, MAX_LANES, dump, dump_gprs};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Room for the keys one call derives.
const MAX_KEYS: usize = 64;
static KEYS: [AtomicU64; 4 * MAX_KEYS] = [const { AtomicU64::new(0) }; 4 * MAX_KEYS];
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// The observer: 8-byte volatile loads, relaxed stores (no vector register).
fn record(key: &[u8; 32]) {
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    if n < MAX_KEYS {
        for i in 0..4 {
            // SAFETY: 8 bytes inside `key`; `[u8; 8]` has alignment 1.
            let w = unsafe { core::ptr::read_volatile(key.as_ptr().add(8 * i).cast::<[u8; 8]>()) };
            KEYS[4 * n + i].store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
    }
}

/// Lanes holding half of a recorded key or of `given`, after `calls` calls of `f`.
fn left_in_registers(calls: usize, given: &[[u8; 32]], f: &mut dyn FnMut()) -> (usize, usize) {
    let mut lanes = [[0u8; 16]; MAX_LANES];
    let mut found = 0;
    let mut keys_seen = 0;
    let mut gprs = [0u64; MAX_GPRS];
    for _ in 0..calls {
        COUNT.store(0, Ordering::Relaxed);
        f();
        // The general-purpose registers first: the vector dump needs a pointer in one.
        // SAFETY: this test is the only one in its binary; no other thread dumps.
        let g = unsafe { dump_gprs(&mut gprs) };
        let n = dump(&mut lanes);
        let k = COUNT.load(Ordering::Relaxed).min(MAX_KEYS);
        keys_seen += k;
        let mut halves: Vec<[u8; 16]> = Vec::with_capacity(2 * (k + given.len()));
        for j in 0..k {
            let mut key = [0u8; 32];
            for i in 0..4 {
                key[8 * i..8 * i + 8]
                    .copy_from_slice(&KEYS[4 * j + i].load(Ordering::Relaxed).to_le_bytes());
            }
            halves.push(key[..16].try_into().unwrap());
            halves.push(key[16..].try_into().unwrap());
        }
        for g in given {
            halves.push(g[..16].try_into().unwrap());
            halves.push(g[16..].try_into().unwrap());
        }
        found += lanes[..n]
            .iter()
            .filter(|l| **l != [0; 16] && halves.contains(l))
            .count();
        // A general-purpose register holding an 8-byte quarter of a key.
        found += gprs[..g]
            .iter()
            .filter(|&&r| {
                r != 0
                    && halves.iter().any(|h| {
                        let (a, b) = h.split_at(8);
                        r == u64::from_le_bytes(a.try_into().unwrap())
                            || r == u64::from_le_bytes(b.try_into().unwrap())
                    })
            })
            .count();
    }
    (found, keys_seen)
}

fn pools() -> NodePools {
    NodePools::from_seed(Topology::from_nodes(vec![vec![0, 1]]), &[3; 32]).unwrap()
}

fn fortuna_cases<P: Prf>(mode: ReadMode, out: &mut Vec<(String, usize, usize)>) {
    let f = Fortuna::<P>::with_prf_and_seed(mode, &[5; 32]).unwrap();
    for len in [32usize, 4096] {
        let mut buf = vec![0u8; len];
        let (hits, keys) = left_in_registers(2000, &[], &mut || f.fill_bytes(&mut buf));
        out.push((
            format!("Fortuna<{}> {mode:?} fill_bytes {len} B", P::NAME),
            hits,
            keys,
        ));
    }
    let (hits, keys) = left_in_registers(500, &[], &mut || f.reseed(&[9; 32]));
    out.push((format!("Fortuna<{}> {mode:?} reseed", P::NAME), hits, keys));
    let (hits, keys) = left_in_registers(200, &[], &mut || {
        let g = Fortuna::<P>::with_prf_and_seed(mode, &[6; 32]).unwrap();
        std::hint::black_box(&g);
    });
    out.push((
        format!("Fortuna<{}> {mode:?} with_prf_and_seed", P::NAME),
        hits,
        keys,
    ));
    let mut g = Generator::<P>::with_prf();
    g.reseed(&[1; 32]);
    let mut b = [0u8; 32];
    let (hits, keys) = left_in_registers(2000, &[], &mut || g.pseudo_random_data(&mut b).unwrap());
    out.push((
        format!("Generator<{}> pseudo_random_data 32 B", P::NAME),
        hits,
        keys,
    ));
    let (hits, keys) = left_in_registers(500, &[], &mut || g.reseed(&[2; 32]));
    out.push((format!("Generator<{}> reseed", P::NAME), hits, keys));
}

#[test]
fn no_piece_of_a_key_is_left_in_a_register() {
    // Best effort: where CPU 0 is outside this process's affinity the thread stays unpinned.
    let _ = pin_to(0);
    __observe_keys(Some(record));
    let mut out = Vec::new();
    let p = pools();
    for len in [8usize, 32, 64, 100, 300, 4096, (1 << 20) + 64] {
        let mut buf = vec![0u8; len];
        let calls = if len > 4096 { 50 } else { 3000 };
        let (hits, keys) = left_in_registers(calls, &[], &mut || p.fill_bytes(&mut buf));
        out.push((format!("NodePools::fill_bytes {len} B"), hits, keys));
    }
    let mut b = [0u8; 32];
    let (hits, keys) = left_in_registers(3000, &[], &mut || p.fill_bytes_on_cpu(1, &mut b));
    out.push(("NodePools::fill_bytes_on_cpu 32 B".into(), hits, keys));
    let (hits, keys) = left_in_registers(3000, &[], &mut || {
        std::hint::black_box(p.next_u64());
    });
    out.push(("NodePools::next_u64".into(), hits, keys));
    let (hits, keys) = left_in_registers(500, &[], &mut || p.reseed());
    out.push(("NodePools::reseed".into(), hits, keys));
    let (hits, keys) = left_in_registers(500, &[], &mut || p.add_entropy(&[7; 64], 512));
    out.push(("NodePools::add_entropy".into(), hits, keys));
    let mut big = vec![0u8; 300];
    let (hits, keys) = left_in_registers(1000, &[], &mut || {
        p.__with_all_slots_busy(|| p.fill_bytes(&mut big));
    });
    out.push((
        "NodePools::fill_bytes 300 B, node fallback".into(),
        hits,
        keys,
    ));
    let (hits, keys) = left_in_registers(200, &[], &mut || {
        p.__with_node_locked(0, || p.__with_all_slots_busy(|| p.fill_bytes(&mut big)));
    });
    out.push((
        "NodePools::fill_bytes 300 B, keyed from the OS".into(),
        hits,
        keys,
    ));

    // Entry points given a key.
    let mut key = [0x5au8; 32];
    let mut given = [[0u8; 32]; 2];
    let (hits, keys) = {
        let mut found = 0;
        let mut seen = 0;
        for _ in 0..3000 {
            given[0] = key;
            let mut o = [0u8; 32];
            let (h, k) =
                left_in_registers(1, &[given[0]], &mut || fast_key_erasure(&mut key, &mut o));
            found += h;
            seen += k;
        }
        (found, seen)
    };
    out.push(("fast_key_erasure".into(), hits, keys));
    let k2 = [0x33u8; 32];
    for len in [32usize, 100, 4096] {
        let mut buf = vec![0u8; len];
        let (hits, keys) = left_in_registers(2000, &[k2], &mut || {
            keystream(&k2, 0, &mut buf, Rounds::ChaCha20)
        });
        out.push((format!("keystream {len} B"), hits, keys));
    }
    let (hits, keys) = left_in_registers(2000, &[k2], &mut || {
        std::hint::black_box(chacha20_block(&k2, 1, &[0; 12]));
    });
    out.push(("chacha20_block".into(), hits, keys));

    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        fortuna_cases::<Aes256Prf>(mode, &mut out);
        fortuna_cases::<ChaCha20Prf>(mode, &mut out);
    }
    __observe_keys(None);
    for (name, hits, keys) in &out {
        eprintln!("{name}: {hits} pieces of keys left in registers ({keys} keys observed)");
    }
    let bad: Vec<_> = out.iter().filter(|(_, h, _)| *h > 0).collect();
    assert!(bad.is_empty(), "{:?}: {bad:#?}", backend());
}
