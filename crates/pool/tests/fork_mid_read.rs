//! A fork from one thread while other threads are inside reads: the child, scanning all its
//! writable memory at every byte offset, finds no 32-byte window that regenerates what the
//! parent writes after the fork (`scalrand_testkit::midread`).
//!
//! A fork child of a multi-threaded program inherits a copy of every thread's stack. A read
//! that derives a one-read key under a lock and generates its keystream after unlocking has
//! that key (and whatever cipher state it expands it to) somewhere while it generates: it
//! must be memory the kernel hands a child zeroed, not a stack local. Covered here: the node
//! pools' reads through a slot, through the node fallback (every slot busy) and through the
//! OS-keyed fallback (the node lock held too), and Fortuna's Concurrent reads with both PRFs,
//! at 300 bytes, 64 KiB and 2 MiB (two 1 MiB chunks, each under its own key).
//!
//! Run on every backend (`cargo xtask ci` runs it once per forced ChaCha backend, and with
//! rseq off). Optimised builds only: without optimisation every key word a backend reads is
//! copied into stack temporaries for the length of the call (the portable backend's state
//! array, by-value copies of the key), and a fork landing in that call finds them.

#![cfg(all(
    feature = "fortuna",
    target_os = "linux",
    feature = "std",
    not(miri),
    not(debug_assertions)
))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::chacha::backend;
use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, Prf, ReadMode};
use scalrand_pool::numa::{NodePools, Topology};
use scalrand_testkit::midread::{
    Cipher, Outcome, Reads, fork_during_reads, fortuna_block_at, node_block_at,
};

const LENS: [usize; 3] = [300, 64 << 10, 2 << 20];

/// The scenarios run one at a time: each child scans the whole process, and another test's
/// readers would only add to what it scans.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(
    name: &str,
    len: usize,
    read: &(dyn Fn(&mut [u8]) + Sync),
    cipher: Cipher,
    block_at: fn(usize, usize) -> (u128, usize),
) -> Outcome {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let out = fork_during_reads(&Reads {
        len,
        readers: 2,
        landings: 3,
        // A sampled campaign (`SCALRAND_CAMPAIGN=sample`) stops sooner.
        max_forks: scalrand_testkit::campaign::trials(20, 10),
        read,
        cipher,
        block_at,
    });
    eprintln!(
        "{name} {len} B on {:?}: {} forks, {} landed inside reads, {} exposed ({} windows regenerate later output; {} candidate windows; first at {:?}; {} bytes rewritten)",
        backend(),
        out.forks,
        out.landed,
        out.exposed,
        out.hits,
        out.candidates,
        out.first_hit,
        out.rewritten
    );
    out
}

/// Whether this kernel hands a fork child wipe-on-fork memory zeroed (not under qemu-user,
/// whose `madvise` does nothing): where it does not, the frames are ordinary memory and a
/// child finds the keys of the reads in flight at the fork, as the pools' docs say.
fn wipe_on_fork_here() -> bool {
    scalrand_os::wipe::WipeOnFork::<u8>::new(1, |_| 0).wipes_on_fork()
}

fn check(results: &[(String, Outcome)]) {
    if !wipe_on_fork_here() {
        eprintln!("not checked: no wipe-on-fork memory here");
        return;
    }
    let bad: Vec<_> = results
        .iter()
        .filter(|(_, o)| o.exposed > 0 || o.landed == 0 || o.rewritten > 0)
        .map(|(n, o)| {
            format!(
                "{n}: {} of {} landed forks exposed, first at {:?}",
                o.exposed, o.landed, o.first_hit
            )
        })
        .collect();
    assert!(bad.is_empty(), "{:?}: {bad:#?}", backend());
}

fn pools() -> NodePools {
    NodePools::new(Topology::from_nodes(vec![vec![0, 1]])).unwrap()
}

#[test]
fn node_pool_reads_through_a_slot() {
    let p = pools();
    let results: Vec<_> = LENS
        .iter()
        .map(|&len| {
            (
                "slot".to_owned() + &len.to_string(),
                run(
                    "slot",
                    len,
                    &|d| p.fill_bytes(d),
                    Cipher::ChaCha(20),
                    node_block_at,
                ),
            )
        })
        .collect();
    check(&results);
}

#[test]
fn node_pool_reads_through_the_node_fallback() {
    let p = pools();
    let results: Vec<_> = p.__with_all_slots_busy(|| {
        LENS.iter()
            .map(|&len| {
                (
                    "node".to_owned() + &len.to_string(),
                    run(
                        "node",
                        len,
                        &|d| p.fill_bytes(d),
                        Cipher::ChaCha(20),
                        node_block_at,
                    ),
                )
            })
            .collect()
    });
    check(&results);
}

#[test]
fn node_pool_reads_keyed_from_the_os() {
    let p = pools();
    let before = p.__os_keyed_reads();
    let results: Vec<_> = p.__with_node_locked(0, || {
        p.__with_all_slots_busy(|| {
            LENS.iter()
                .map(|&len| {
                    (
                        "os".to_owned() + &len.to_string(),
                        run(
                            "os",
                            len,
                            &|d| p.fill_bytes(d),
                            Cipher::ChaCha(20),
                            node_block_at,
                        ),
                    )
                })
                .collect()
        })
    });
    assert!(
        p.__os_keyed_reads() > before,
        "the reads did not take the OS-keyed path"
    );
    check(&results);
}

fn fortuna<P: Prf>(lens: &[usize], cipher: Cipher, block_at: fn(usize, usize) -> (u128, usize)) {
    let f = Fortuna::<P>::with_prf(ReadMode::Concurrent).unwrap();
    let results: Vec<_> = lens
        .iter()
        .map(|&len| {
            (
                format!("fortuna {} {len}", P::NAME),
                run(P::NAME, len, &|d| f.fill_bytes(d), cipher, block_at),
            )
        })
        .collect();
    check(&results);
}

#[test]
fn fortuna_concurrent_reads_aes() {
    fortuna::<Aes256Prf>(&LENS, Cipher::Aes256, fortuna_block_at::<16, 2>);
}

#[test]
fn fortuna_concurrent_reads_chacha() {
    fortuna::<ChaCha20Prf>(&LENS, Cipher::ChaCha(20), fortuna_block_at::<64, 1>);
}

/// The check of the check: a read that keeps its key in a stack local while it generates (what
/// the pools' reads must not do) is found by the child's scan.
#[test]
fn a_key_in_a_reader_stack_frame_is_found() {
    use chacha20::ChaCha20;
    use chacha20::cipher::{KeyIvInit, StreamCipher};
    let read = |d: &mut [u8]| {
        let mut key = [0u8; 32];
        scalrand_os::entropy::fill(&mut key).unwrap();
        // The key stays in this frame (and in the cipher's state) for the whole read.
        let key = std::hint::black_box(key);
        d.fill(0);
        let mut c = ChaCha20::new(&key.into(), &[0u8; 12].into());
        for piece in d.chunks_mut(4096) {
            c.apply_keystream(piece);
            std::hint::black_box(&key);
        }
    };
    let out = run("stack", 64 << 10, &read, Cipher::ChaCha(20), node_block_at);
    assert!(
        out.landed > 0 && out.exposed > 0,
        "no fork child found the reads' keys: {} forks, {} landed",
        out.forks,
        out.landed
    );
}
