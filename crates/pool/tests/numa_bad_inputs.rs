//! One test per row of the "Bad inputs" table in `scalrand_pool::numa`'s docs.
#![cfg(feature = "std")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::numa::{MAX_CPU_ID, MAX_NODES, NodePools, NumaError, Topology};

fn pools(nodes: Vec<Vec<usize>>) -> Result<NodePools, NumaError> {
    NodePools::from_seed(Topology::from_nodes(nodes), &[1; 32])
}

#[test]
fn empty_topology() {
    assert_eq!(pools(vec![]).unwrap_err(), NumaError::EmptyTopology);
    assert_eq!(
        pools(vec![vec![], vec![]]).unwrap_err(),
        NumaError::EmptyTopology
    );
    assert_eq!(
        NodePools::new(Topology::from_nodes(vec![])).unwrap_err(),
        NumaError::EmptyTopology
    );
    assert_eq!(
        Topology::from_nodes(vec![]).validate(),
        Err(NumaError::EmptyTopology)
    );
}

#[test]
fn duplicate_cpu() {
    assert_eq!(
        pools(vec![vec![0, 1], vec![2, 1]]).unwrap_err(),
        NumaError::DuplicateCpu {
            cpu: 1,
            first_node: 0,
            second_node: 1
        }
    );
    assert_eq!(
        pools(vec![vec![3, 3]]).unwrap_err(),
        NumaError::DuplicateCpu {
            cpu: 3,
            first_node: 0,
            second_node: 0
        }
    );
}

#[test]
fn cpu_id_too_large() {
    assert_eq!(
        pools(vec![vec![0], vec![usize::MAX]]).unwrap_err(),
        NumaError::CpuIdTooLarge { cpu: usize::MAX }
    );
    assert_eq!(
        pools(vec![vec![MAX_CPU_ID + 1]]).unwrap_err(),
        NumaError::CpuIdTooLarge {
            cpu: MAX_CPU_ID + 1
        }
    );
    // The largest id is fine.
    assert!(pools(vec![vec![MAX_CPU_ID]]).is_ok());
}

#[test]
fn too_many_nodes() {
    let mut nodes = vec![Vec::new(); MAX_NODES + 1];
    nodes[0].push(0);
    assert_eq!(
        pools(nodes).unwrap_err(),
        NumaError::TooManyNodes {
            nodes: MAX_NODES + 1
        }
    );
}

#[test]
fn exactly_max_nodes_is_accepted() {
    // The limit itself is fine: every node gets a pool, and the last one serves its CPU.
    let mut nodes = vec![Vec::new(); MAX_NODES];
    nodes[0].push(0);
    nodes[MAX_NODES - 1].push(1);
    let p = pools(nodes).unwrap();
    assert_eq!(p.node_stats().len(), MAX_NODES);
    let mut b = [0u8; 64];
    p.fill_bytes_on_cpu(1, &mut b);
    assert!(b.iter().any(|&x| x != 0));
    assert_eq!(p.node_stats()[MAX_NODES - 1].reads, 1);
}

#[test]
fn empty_node_is_accepted() {
    let p = pools(vec![vec![0], vec![], vec![1]]).unwrap();
    let mut b = [0u8; 32];
    p.fill_bytes_on_cpu(1, &mut b);
    let stats = p.node_stats();
    assert_eq!(stats.len(), 3);
    assert_eq!(stats[1].reads, 0);
    assert_eq!(stats[2].reads, 1);
    assert!(stats[1].reseeds >= 1, "an empty node is still fed");
}

#[test]
fn cpu_outside_topology() {
    // Slots: cpu 4 -> slot 0 (node 0), cpu 7 -> slot 1 (node 1). CPU 9 is in neither node:
    // slot 9 % 2 = 1, node 1.
    let p = pools(vec![vec![4], vec![7]]).unwrap();
    let mut b = [0u8; 32];
    p.fill_bytes_on_cpu(9, &mut b);
    assert_ne!(b, [0; 32]);
    let s = p.node_stats();
    assert_eq!((s[0].reads, s[1].reads), (0, 1));
    p.fill_bytes_on_cpu(usize::MAX, &mut b); // usize::MAX % 2 = 1
    assert_eq!(p.node_stats()[1].reads, 2);
    // Same seed, same reads, but the read on CPU 9 goes to CPU 7: same bytes.
    let q = pools(vec![vec![4], vec![7]]).unwrap();
    let mut c = [0u8; 32];
    let mut d = [0u8; 32];
    let r = pools(vec![vec![4], vec![7]]).unwrap();
    q.fill_bytes_on_cpu(9, &mut c);
    r.fill_bytes_on_cpu(7, &mut d);
    assert_eq!(c, d);
}

#[test]
fn zero_length_read() {
    let p = pools(vec![vec![0]]).unwrap();
    let q = pools(vec![vec![0]]).unwrap();
    p.fill_bytes_on_cpu(0, &mut []);
    p.fill_bytes(&mut []);
    assert_eq!(p.node_stats(), q.node_stats(), "nothing moved");
    let mut a = [0u8; 32];
    let mut b = [0u8; 32];
    p.fill_bytes_on_cpu(0, &mut a);
    q.fill_bytes_on_cpu(0, &mut b);
    assert_eq!(a, b, "no key was consumed by the empty reads");
}

#[test]
fn huge_read() {
    // 3 MiB + 17: three full 1 MiB chunks under three keys and a tail under a fourth.
    let p = pools(vec![vec![0]]).unwrap();
    let len = 3 * (1 << 20) + 17;
    let mut big = vec![0u8; len];
    p.fill_bytes_on_cpu(0, &mut big);
    let mib = 1 << 20;
    for i in 0..3 {
        for j in 0..i {
            assert_ne!(big[i * mib..i * mib + 64], big[j * mib..j * mib + 64]);
        }
    }
    assert_ne!(big[len - 17..], [0u8; 17]);
    // No 64-byte block of the output is all zero (a missed chunk would be).
    assert!(big.chunks(64).all(|c| c.iter().any(|&x| x != 0)));
    // The next small read still works and differs.
    let mut a = [0u8; 32];
    p.fill_bytes_on_cpu(0, &mut a);
    assert_ne!(a[..], big[..32]);
}

#[test]
fn read_before_seeded() {
    // An `Unseeded` has no read method at all (a compile-time guarantee); it only becomes
    // readable `NodePools` once 128 bits were credited.
    let mut u = NodePools::unseeded(Topology::from_nodes(vec![vec![0], vec![1]])).unwrap();
    u.add_device_randomness(b"serial number: credits nothing");
    u.add_entropy(&[7; 13], 100);
    assert_eq!(u.credited_bits(), 100);
    let mut u = u.try_seed().expect_err("100 bits are not enough");
    u.add_entropy(&[8; 4], 28);
    let p = u.try_seed().expect("128 bits are");
    let mut a = [0u8; 32];
    p.fill_bytes_on_cpu(1, &mut a);
    assert_ne!(a, [0; 32]);
    // Two instances fed the same public bytes without credit... cannot be read at all; fed
    // the same credited bytes they are deterministic (known answers), fed different bytes
    // they differ.
    let mut v = NodePools::unseeded(Topology::single_node(1)).unwrap();
    v.add_entropy(&[9; 16], 128);
    let q = v.try_seed().unwrap();
    let mut b = [0u8; 32];
    q.fill_bytes_on_cpu(0, &mut b);
    assert_ne!(a, b);
}

#[test]
fn huge_credit_is_bounded() {
    // Crediting usize::MAX bits used to loop 2^56 times under the input lock. Run it on a
    // thread with a watchdog: it must return at once, having pushed each node at most once.
    let p = std::sync::Arc::new(pools(vec![vec![0], vec![1], vec![2]]).unwrap());
    let before: Vec<usize> = p.node_stats().iter().map(|n| n.reseeds).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let q = p.clone();
    std::thread::spawn(move || {
        q.add_entropy(b"I claim a lot", usize::MAX);
        let _ = tx.send(());
    });
    rx.recv_timeout(std::time::Duration::from_secs(30))
        .expect("add_entropy with a huge credit must return in bounded time");
    let after: Vec<usize> = p.node_stats().iter().map(|n| n.reseeds).collect();
    for (a, b) in after.iter().zip(&before) {
        assert_eq!(*a, b + 1);
    }
}

#[test]
fn bad_sysfs() {
    let dir = std::env::temp_dir().join(format!("scalrand-numa-sysfs-{}", std::process::id()));
    let node = dir.join("node0");
    std::fs::create_dir_all(&node).unwrap();
    std::fs::write(node.join("cpulist"), "0-1,zz\n").unwrap();
    assert!(matches!(
        Topology::from_sysfs_dir(&dir),
        Err(NumaError::Source(_))
    ));
    std::fs::write(node.join("cpulist"), "0-3\n").unwrap();
    std::fs::create_dir_all(dir.join("node2")).unwrap();
    std::fs::write(dir.join("node2").join("cpulist"), "4-5\n").unwrap();
    std::fs::create_dir_all(dir.join("power")).unwrap();
    assert_eq!(
        Topology::from_sysfs_dir(&dir).unwrap(),
        Topology::from_nodes(vec![vec![0, 1, 2, 3], vec![4, 5]])
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(matches!(
        Topology::from_sysfs_dir(&dir),
        Err(NumaError::Source(_))
    ));
}

/// An offline CPU is missing from its node's `cpulist` but keeps its `cpuM` link: it stays
/// in its node (a machine booted with `maxcpus=`, or a CPU taken offline).
#[test]
fn sysfs_offline_cpus_keep_their_node() {
    let dir = std::env::temp_dir().join(format!("scalrand-numa-offline-{}", std::process::id()));
    for (node, list, links) in [
        ("node0", "0-1\n", &[0, 1][..]),
        ("node1", "2,4-7\n", &[2, 3, 4, 5, 6, 7]),
        ("node2", "8-11\n", &[8, 9, 10, 11, 12, 13, 14, 15]),
        ("node3", "\n", &[]),
    ] {
        let d = dir.join(node);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cpulist"), list).unwrap();
        for cpu in links {
            // sysfs holds symbolic links to the CPU devices; a plain directory reads the same.
            std::fs::create_dir_all(d.join(format!("cpu{cpu}"))).unwrap();
        }
        std::fs::create_dir_all(d.join("cpumap_not_a_cpu")).unwrap();
    }
    let t = Topology::from_sysfs_dir(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        t,
        Topology::from_nodes(vec![
            vec![0, 1],
            (2..8).collect(),
            (8..16).collect(),
            vec![]
        ])
    );
    let p = NodePools::from_seed(t, &[7; 32]).unwrap();
    let mut b = [0u8; 16];
    p.fill_bytes_on_cpu(13, &mut b);
    let reads: Vec<usize> = p.node_stats().iter().map(|n| n.reads).collect();
    assert_eq!(reads, [0, 0, 1, 0], "CPU 13 is node 2's");
}
