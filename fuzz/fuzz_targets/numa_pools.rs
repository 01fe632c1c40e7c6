//! Arbitrary topologies and read sizes never panic `scalrand_pool::numa`; bad topologies
//! give the typed error the bad-input table promises.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scalrand_fuzz::with_buf;
use scalrand_pool::chacha::CHUNK_LEN;
use scalrand_pool::numa::{
    CHECK_EVERY_BYTES, INIT_BITS, MAX_CPU_ID, MAX_NODES, NodePools, NumaError, Topology, Unseeded,
};

#[derive(Arbitrary, Debug)]
enum Op {
    /// A read as CPU `cpu` (any value: outside CPUs remap); `len` picks the size, see
    /// [`read_len`].
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
    /// Empty nodes to add, see [`extra_nodes`].
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

/// Up to 15 extra empty nodes, or (when tagged) enough to pass the node limit by one or two:
/// the rejection is what the fuzzer probes there, since building a thousand valid node pools
/// per input would cost milliseconds. `exactly_max_nodes_is_accepted` in
/// `crates/pool/tests/numa_bad_inputs.rs` covers the limit itself.
fn extra_nodes(x: u16, have: usize) -> usize {
    if x & 0x8000 != 0 {
        (MAX_NODES + 1 + usize::from(x & 1)).saturating_sub(have)
    } else {
        usize::from(x & 0xF)
    }
}

/// Bytes of tagged (big) reads one input may ask for: one read across the 1 MiB chunk
/// boundary plus two next to the 64 KiB reseed-check step. It bounds what one input costs, so
/// a campaign reaches millions of executions instead of spending them on megabytes of
/// keystream.
const BIG_BUDGET: usize = CHUNK_LEN + 2 * CHECK_EVERY_BYTES + 256;

/// Read sizes: mostly up to 4 KiB (the small, batch and bulk paths); a tagged few sit next to
/// the 64 KiB reseed-check step or the 1 MiB chunk boundary, while the budget lasts.
fn read_len(len: u32, budget: &mut usize) -> usize {
    let jitter = (len & 0x7F) as usize;
    let n = match len >> 29 {
        7 => CHUNK_LEN - 64 + jitter,
        6 => CHECK_EVERY_BYTES - 64 + jitter,
        _ => return (len & 0xFFF) as usize,
    };
    if n > *budget {
        return (len & 0xFFF) as usize;
    }
    *budget -= n;
    n
}

fuzz_target!(|input: Input| {
    let mut nodes: Vec<Vec<usize>> = input
        .nodes
        .iter()
        .take(64)
        .map(|n| n.iter().take(64).map(|&c| usize::from(c)).collect())
        .collect();
    let extra = extra_nodes(input.extra_empty_nodes, nodes.len());
    nodes.extend(std::iter::repeat_with(Vec::new).take(extra));
    let expected = expected_error(&nodes);
    let topology = Topology::from_nodes(nodes);
    assert_eq!(topology.validate().err(), expected);
    let built = if input.seeded {
        NodePools::from_seed(topology, &[0x42; 32]).map(State::Ready)
    } else {
        NodePools::unseeded(topology).map(State::Unseeded)
    };
    let mut state = match (built, expected) {
        (Ok(p), None) => p,
        (Err(e), Some(x)) => {
            assert_eq!(e, x);
            return;
        }
        (got, want) => panic!("built {:?}, expected error {want:?}", got.err()),
    };
    let mut budget = BIG_BUDGET;
    for op in input.ops.into_iter().take(32) {
        // Before 128 credited bits there is nothing to read from: feed the `Unseeded`, and let
        // every read try to seed it first.
        if let State::Unseeded(mut u) = state {
            match op {
                Op::AddEntropy { data, bits } => {
                    u.add_entropy(&data, usize::from(bits));
                    state = State::Unseeded(u);
                    continue;
                }
                Op::DeviceRandomness { data } => {
                    u.add_device_randomness(&data);
                    state = State::Unseeded(u);
                    continue;
                }
                Op::Reseed => {
                    state = State::Unseeded(u);
                    continue;
                }
                _ => {
                    let credited = u.credited_bits();
                    match u.try_seed() {
                        Ok(p) => {
                            assert!(credited >= INIT_BITS);
                            state = State::Ready(p);
                        }
                        Err(u) => {
                            assert!(credited < INIT_BITS);
                            state = State::Unseeded(u);
                            continue;
                        }
                    }
                }
            }
        }
        let State::Ready(pools) = &state else {
            continue;
        };
        match op {
            Op::Read { cpu, len } => {
                let len = read_len(len, &mut budget);
                with_buf(len, |buf| {
                    pools.fill_bytes_on_cpu(cpu, buf);
                    if len >= 64 {
                        // Every 64-byte stretch must be written (64 zero bytes: p = 2^-512).
                        for c in buf.chunks_exact(64) {
                            assert!(c.iter().any(|&b| b != 0), "64 zero bytes in {len}");
                        }
                    }
                });
            }
            Op::ReadHere { len } => {
                with_buf(usize::from(len), |buf| pools.fill_bytes(buf));
            }
            Op::AddEntropy { data, bits } => pools.add_entropy(&data, usize::from(bits)),
            Op::DeviceRandomness { data } => pools.add_device_randomness(&data),
            Op::Reseed => pools.reseed(),
            Op::TryRead { len } => {
                with_buf(usize::from(len), |buf| pools.fill_bytes_on_cpu(0, buf))
            }
        }
    }
});

enum State {
    Unseeded(Unseeded),
    Ready(NodePools),
}
