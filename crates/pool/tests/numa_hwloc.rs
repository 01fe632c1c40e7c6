//! Topologies from hwloc (the `hwloc` feature; needs libhwloc-dev, libudev-dev, pkg-config).
#![cfg(feature = "hwloc")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::numa::{NodePools, NumaError, Topology};

#[test]
fn synthetic_four_nodes() {
    let t = Topology::from_hwloc_synthetic("node:4 core:4 pu:1").unwrap();
    let expected: Vec<Vec<usize>> = (0..4).map(|n| (4 * n..4 * n + 4).collect()).collect();
    assert_eq!(t.nodes(), &expected[..]);
    let p = NodePools::from_seed(t, &[2; 32]).unwrap();
    let mut b = [0u8; 32];
    p.fill_bytes_on_cpu(13, &mut b);
    assert_eq!(p.node_stats()[3].reads, 1);
}

#[test]
fn synthetic_two_packages_of_two_nodes() {
    let t = Topology::from_hwloc_synthetic("pack:2 node:2 core:2 pu:2").unwrap();
    assert_eq!(t.node_count(), 4);
    assert_eq!(t.nodes()[3], vec![12, 13, 14, 15]);
    t.validate().unwrap();
}

#[test]
fn this_machine() {
    let t = Topology::from_hwloc().unwrap();
    t.validate().unwrap();
    // hwloc and sysfs agree where sysfs exists.
    if let Ok(s) = Topology::from_sysfs() {
        let mut a: Vec<Vec<usize>> = t.nodes().to_vec();
        let mut b: Vec<Vec<usize>> = s
            .nodes()
            .iter()
            .filter(|n| !n.is_empty())
            .cloned()
            .collect();
        a.retain(|n| !n.is_empty());
        a.iter_mut().for_each(|n| n.sort_unstable());
        b.iter_mut().for_each(|n| n.sort_unstable());
        assert_eq!(a, b);
    }
}

#[test]
fn bad_synthetic() {
    assert!(matches!(
        Topology::from_hwloc_synthetic("node:banana"),
        Err(NumaError::Source(_))
    ));
    assert!(matches!(
        Topology::from_hwloc_synthetic(""),
        Err(NumaError::Source(_))
    ));
}
