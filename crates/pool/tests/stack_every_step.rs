//! No key on the stack at any instruction of a read: a child single-stepped under `ptrace`
//! (`scalrand_testkit::trace`) has its stack read after every instruction of one read and
//! searched for 16-byte pieces of every key the read derives (either half, or a key word
//! repeated across a vector's lanes). A fork from another thread at that instruction would
//! hand the child whatever is found.
//!
//! Nothing is allowed, on every backend (AVX-512, AVX2, SSE2, portable) and for both AES-256
//! implementations: the SIMD backends and AES-NI keep a pass's state in registers, the
//! portable backend and the bitsliced software AES (forced with `--cfg scalrand_aes_soft`) in
//! a frame of wipe-on-fork memory.
//!
//! Covered: Fortuna's reads in both modes with both PRFs (the reader key and the next
//! generator key of a Concurrent read, the new generator key of a Locked one), and the node
//! pools' reads through a slot (200 B, 4 KiB) and through the node fallback, rseq off (a
//! single step inside a restartable section aborts it; the rseq path's keystream runs the same
//! backend code). Run on every backend (`cargo xtask ci`'s `backends` and `backend-portable` steps).
//!
//! Optimised builds only, as the other memory scans (an unoptimised build copies every key
//! word into stack temporaries).

#![cfg(all(
    feature = "fortuna",
    target_os = "linux",
    target_arch = "x86_64",
    target_env = "gnu",
    feature = "std",
    not(miri),
    not(debug_assertions)
))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::chacha::{__observe_keys, backend};
use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, Prf, ReadMode};
use scalrand_pool::numa::{NodePools, Topology};
use scalrand_testkit::trace::{Marks, Traced, scan_every_step};

fn check(name: &str, t: &Traced) {
    eprintln!(
        "{name} on {:?}: {} keys, {} instructions, {} hits ({} key halves) {:?}",
        backend(),
        t.keys,
        t.steps,
        t.hit_count,
        t.half_hits,
        t.hits.first()
    );
    assert!(t.keys > 0 && t.steps > 100, "{name}: nothing was traced");
    assert!(
        t.hit_count == 0,
        "{name} on {:?}: a key piece on the stack at {} instructions: {:#?}, halves {:#?}",
        backend(),
        t.hit_count,
        t.hits,
        t.halves
    );
}

fn fortuna<P: Prf>(mode: ReadMode, len: usize) {
    let work = move |m: &Marks| {
        let f = Fortuna::<P>::with_prf_and_seed(mode, &[7u8; 32]).unwrap();
        let mut buf = vec![0u8; len];
        f.fill_bytes(&mut buf);
        m.start();
        f.fill_bytes(&mut buf);
        m.stop();
    };
    let t = scan_every_step(__observe_keys, &work);
    check(&format!("Fortuna {} {mode:?} {len} B", P::NAME), &t);
}

/// AES-NI where the CPU has it, else (and with `--cfg scalrand_aes_soft`) the bitsliced
/// software AES.
#[test]
fn fortuna_aes_concurrent() {
    fortuna::<Aes256Prf>(ReadMode::Concurrent, 300);
}

#[test]
fn fortuna_aes_locked() {
    fortuna::<Aes256Prf>(ReadMode::Locked, 300);
}

#[test]
fn fortuna_chacha_concurrent() {
    fortuna::<ChaCha20Prf>(ReadMode::Concurrent, 300);
}

#[test]
fn fortuna_chacha_locked() {
    fortuna::<ChaCha20Prf>(ReadMode::Locked, 300);
}

fn pools(len: usize, all_slots_busy: bool) {
    let work = move |m: &Marks| {
        let p = NodePools::from_seed(Topology::from_nodes(vec![vec![0, 1]]), &[9u8; 32]).unwrap();
        let mut buf = vec![0u8; len];
        p.fill_bytes(&mut buf);
        let mut read = || {
            m.start();
            p.fill_bytes(&mut buf);
            m.stop();
        };
        if all_slots_busy {
            p.__with_all_slots_busy(read);
        } else {
            read();
        }
    };
    let t = scan_every_step(__observe_keys, &work);
    let path = if all_slots_busy { "node" } else { "slot" };
    check(&format!("NodePools {path} {len} B"), &t);
}

#[test]
fn node_pools_slot_200() {
    pools(200, false);
}

#[test]
fn node_pools_slot_4096() {
    pools(4096, false);
}

/// 1,500 bytes: 23 whole blocks and a tail, so AVX-512 runs a partial pass (7 blocks) too.
#[test]
fn node_pools_slot_1500() {
    pools(1500, false);
}

#[test]
fn node_pools_node_fallback_200() {
    pools(200, true);
}
