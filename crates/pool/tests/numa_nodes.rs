//! Each node's pool is used by its own CPUs, and entropy reaches every node pool.
#![cfg(feature = "std")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::numa::{INIT_BITS, NodePools, PUSH_BITS, Topology};
#[cfg(target_os = "linux")]
use scalrand_testkit::cpu::pin_to;

/// The shape of Andi Kleen's 2015 measurements (LKML, "Make /dev/urandom scalable"): 4 nodes of 4 CPUs.
fn four_by_four() -> Topology {
    Topology::from_nodes((0..4).map(|n| (4 * n..4 * n + 4).collect()).collect())
}

#[test]
fn each_node_serves_its_own_cpus() {
    let p = NodePools::from_seed(four_by_four(), &[3; 32]).unwrap();
    let mut b = [0u8; 32];
    let mut big = vec![0u8; 4096];
    for node in 0..4 {
        let before = p.node_stats();
        for cpu in 4 * node..4 * node + 4 {
            p.fill_bytes_on_cpu(cpu, &mut b);
            p.fill_bytes_on_cpu(cpu, &mut big);
        }
        let after = p.node_stats();
        for other in 0..4 {
            let reads = after[other].reads - before[other].reads;
            let keys = after[other].key_derivations - before[other].key_derivations;
            if other == node {
                assert_eq!(reads, 8, "node {node}: 2 reads on each of its 4 CPUs");
                assert_eq!(keys, 4, "node {node}: one slot key per CPU");
            } else {
                assert_eq!(
                    (reads, keys),
                    (0, 0),
                    "node {other} untouched by node {node}'s CPUs"
                );
            }
        }
    }
}

/// With real threads pinned to real CPUs: two "nodes" of one CPU each on a 2-core machine.
#[cfg(target_os = "linux")]
#[test]
fn pinned_threads_read_their_nodes_pool() {
    let p = NodePools::new(Topology::from_nodes(vec![vec![0], vec![1]])).unwrap();
    for cpu in 0..2 {
        let before = p.node_stats();
        let pinned = std::thread::scope(|s| {
            s.spawn(|| {
                if !pin_to(cpu) {
                    return false;
                }
                let mut b = [0u8; 32];
                for _ in 0..100 {
                    p.fill_bytes(&mut b);
                }
                true
            })
            .join()
            .unwrap()
        });
        if !pinned {
            eprintln!("skipped: cannot pin to CPU {cpu} on this machine");
            return;
        }
        let after = p.node_stats();
        assert_eq!(after[cpu].reads - before[cpu].reads, 100);
        assert_eq!(after[1 - cpu].reads, before[1 - cpu].reads);
    }
}

#[test]
fn entropy_reaches_every_node_pool() {
    let mut u = NodePools::unseeded(four_by_four()).unwrap();
    // Boot: 128 credited bits initialise node 0 from the input pool, the others from node 0.
    u.add_entropy(&[0x5a; 16], INIT_BITS - 1);
    let mut u = u.try_seed().unwrap_err();
    u.add_entropy(&[0x5a; 1], 1);
    let p = u.try_seed().unwrap();
    let s = p.node_stats();
    assert!(s.iter().all(|n| n.reseeds == 1), "{s:?}");
    assert_eq!(s[0].key_derivations, 3, "node 0 initialised nodes 1..3");
    // Round robin: each PUSH_BITS feeds the next node.
    for round in 0..8 {
        p.add_entropy(&[round as u8; 32], PUSH_BITS);
        let s = p.node_stats();
        for (i, n) in s.iter().enumerate() {
            let expected = 1 + (round / 4) + usize::from(i <= round % 4);
            assert_eq!(n.reseeds, expected, "after push {round}, node {i}: {s:?}");
        }
    }
    // reseed() and add_device_randomness() reach every node.
    let g: Vec<_> = p.node_stats().iter().map(|n| n.generation).collect();
    p.reseed();
    p.add_device_randomness(b"serial 1234");
    let s = p.node_stats();
    for i in 0..4 {
        assert_eq!(s[i].generation, g[i] + 2);
    }
}

#[test]
fn nodes_do_not_run_in_lock_step() {
    // Same slot position on every node, same history: the outputs still differ.
    let p = NodePools::from_seed(four_by_four(), &[9; 32]).unwrap();
    let outs: Vec<[u8; 32]> = (0..4)
        .map(|n| {
            let mut b = [0u8; 32];
            p.fill_bytes_on_cpu(4 * n, &mut b);
            b
        })
        .collect();
    for i in 0..4 {
        for j in 0..i {
            assert_ne!(outs[i], outs[j]);
        }
    }
}

#[test]
fn threads_share_one_pools_value() {
    let p = NodePools::from_seed(four_by_four(), &[4; 32]).unwrap();
    let outs: Vec<Vec<[u8; 32]>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|t| {
                let p = &p;
                s.spawn(move || {
                    (0..200)
                        .map(|_| {
                            let mut b = [0u8; 32];
                            p.fill_bytes_on_cpu(t, &mut b);
                            b
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<[u8; 32]> = outs.into_iter().flatten().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 800, "no 32-byte output repeats");
}
