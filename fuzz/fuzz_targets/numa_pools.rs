//! Arbitrary topologies and read sizes never panic `scalrand_pool::numa`; bad topologies
//! give the typed error the bad-input table promises.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scalrand_pool::numa::{MAX_CPU_ID, MAX_NODES, NodePools, NumaError, Topology};

#[derive(Arbitrary, Debug)]
enum Op {
    /// A read of `len` bytes (capped at 3 MiB) as CPU `cpu` (any value: outside CPUs remap).
    Read {
        cpu: usize,
        len: u32,
    },
    /// A read on the current CPU.
    ReadHere {
        len: u16,
    },
    AddEntropy {
        data: Vec<u8>,
        bits: u16,
    },
    DeviceRandomness {
        data: Vec<u8>,
    },
    Reseed,
    TryRead {
        len: u8,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// CPU numbers are drawn from u16 so both valid and too-large ids occur.
    nodes: Vec<Vec<u16>>,
    /// Add this many empty nodes (up to MAX_NODES + 2) to probe the node limit.
    extra_empty_nodes: u16,
    seeded: bool,
    ops: Vec<Op>,
}

/// What the documented checks say about `nodes`, computed independently of the crate.
fn expected_error(nodes: &[Vec<usize>]) -> Option<NumaError> {
    if nodes.len() > MAX_NODES {
        return Some(NumaError::TooManyNodes { nodes: nodes.len() });
    }
    if let Some(&cpu) = nodes.iter().flatten().find(|&&c| c > MAX_CPU_ID) {
        return Some(NumaError::CpuIdTooLarge { cpu });
    }
    if nodes.iter().all(|n| n.is_empty()) {
        return Some(NumaError::EmptyTopology);
    }
    let mut seen = std::collections::HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        for &c in n {
            if let Some(&first) = seen.get(&c) {
                return Some(NumaError::DuplicateCpu {
                    cpu: c,
                    first_node: first,
                    second_node: i,
                });
            }
            seen.insert(c, i);
        }
    }
    None
}

fuzz_target!(|input: Input| {
    let mut nodes: Vec<Vec<usize>> = input
        .nodes
        .iter()
        .take(64)
        .map(|n| n.iter().take(64).map(|&c| usize::from(c)).collect())
        .collect();
    let extra = usize::from(input.extra_empty_nodes) % (MAX_NODES + 3);
    nodes.extend(std::iter::repeat_with(Vec::new).take(extra));
    let expected = expected_error(&nodes);
    let topology = Topology::from_nodes(nodes);
    assert_eq!(topology.validate().err(), expected);
    let built = if input.seeded {
        NodePools::from_seed(topology, &[0x42; 32])
    } else {
        NodePools::unseeded(topology)
    };
    let pools = match (built, expected) {
        (Ok(p), None) => p,
        (Err(e), Some(x)) => {
            assert_eq!(e, x);
            return;
        }
        (got, want) => panic!("built {:?}, expected error {want:?}", got.err()),
    };
    for op in input.ops.into_iter().take(32) {
        match op {
            Op::Read { cpu, len } => {
                let len = (len as usize) % (3 << 20);
                let mut buf = vec![0u8; len];
                pools.fill_bytes_on_cpu(cpu, &mut buf);
                if len >= 64 {
                    assert!(buf.iter().any(|&b| b != 0), "{len} zero bytes");
                }
            }
            Op::ReadHere { len } => {
                let mut buf = vec![0u8; usize::from(len)];
                pools.fill_bytes(&mut buf);
            }
            Op::AddEntropy { data, bits } => pools.add_entropy(&data, usize::from(bits)),
            Op::DeviceRandomness { data } => pools.add_device_randomness(&data),
            Op::Reseed => pools.reseed(),
            Op::TryRead { len } => {
                let mut buf = vec![0u8; usize::from(len)];
                match pools.try_fill_bytes(&mut buf) {
                    Ok(()) => assert!(pools.is_seeded()),
                    Err(e) => assert_eq!(e, NumaError::NotSeeded),
                }
            }
        }
    }
});
