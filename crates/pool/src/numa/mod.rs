//! Per-NUMA-node ChaCha20 pools that also scale inside one big node.
//!
//! Seed: Andi Kleen, "Make /dev/urandom scalable" (2015,
//! `../shared/seeds/000_2a26b7919f706e12.txt`): a 4-socket server spent over 80% of its CPU
//! time on the one urandom spinlock; one pool per NUMA node, fed round-robin from the input
//! pool, took 4 nodes from 0.42× to 3× of one node. This module keeps that shape and adds what
//! Linux did next (5.18: a base key plus per-CPU keys refreshed by fast key erasure, bulk
//! output generated after unlocking), so that a node of 16+ CPUs does not meet the same cliff
//! on its own lock.
//!
//! ```
//! # #[cfg(feature = "std")]
//! # fn main() -> Result<(), scalrand_pool::numa::NumaError> {
//! use scalrand_pool::numa::{NodePools, Topology};
//!
//! // Two nodes of two CPUs each, on any machine; seeded from the OS (`std`).
//! let pools = NodePools::new(Topology::from_nodes(vec![vec![0, 1], vec![2, 3]]))?;
//! let mut key = [0u8; 32];
//! pools.fill_bytes(&mut key);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "std"))]
//! # fn main() {}
//! ```
//!
//! # Design
//!
//! ```text
//!  add_entropy ──► input pool (running SHA-256, credited bits)
//!                       │ extract: round-robin, one extraction per node
//!        ┌──────────────┼──────────────┐
//!        ▼              ▼              ▼
//!   node pool 0    node pool 1  …  node pool N-1     key + generation, spin lock
//!    │   │   │      │   │   │                        (held for one SHA-256 or one block)
//!    ▼   ▼   ▼      ▼   ▼   ▼   fast key erasure, once per slot per generation
//!   slot slot slot slot slot slot                    one per CPU, cache-padded, try-lock
//!   key + 992-byte batch                             (never waits: busy → next slot)
//! ```
//!
//! - [`Topology`] says which CPUs belong to which node (explicit, sysfs, hwloc).
//! - The **input pool** takes all entropy ([`NodePools::add_entropy`], credited by the host;
//!   with `std`, 256 bits from the OS at [`NodePools::new`] and 32 fresh bytes at each reseed).
//! - **Boot** ([`NodePools::unseeded`]): until node 0 holds [`INIT_BITS`] = 128 bits, every
//!   CPU reads from node 0; then node 0 initialises the other nodes from its own output, each
//!   with different bytes, so no two nodes run in lock-step (the seed's `init_node_pools`).
//! - **Feeding**: afterwards every [`PUSH_BITS`] credited bits feed the next node pool in
//!   round-robin order; [`NodePools::reseed`] feeds every node, each its own extraction;
//!   [`NodePools::add_device_randomness`] goes to the input pool and to every node pool.
//! - **Schedule**: a reseed is due after [`ReseedPolicy::max_bytes`] bytes or
//!   [`ReseedPolicy::max_interval_secs`] seconds of an injectable [`Clock`]; readers check it
//!   every [`CHECK_EVERY_CALLS`] reads / [`CHECK_EVERY_BYTES`] bytes of a slot, so no timer
//!   runs and a `no_std` host drives it with a [`ManualClock`] or by calling
//!   [`NodePools::reseed`].
//! - **Per CPU**: the reader's CPU (`sched_getcpu`, which glibc answers from its rseq area)
//!   picks a slot. A slot holds a ChaCha20 key taken from its node's key and the node
//!   generation it was taken under; when the node's generation moves on (a reseed), the slot's
//!   next reader takes a new key before it answers. Only that refresh touches the node lock.
//!
//! # Key schedule
//!
//! `B(k, c)` is the ChaCha20 block (RFC 8439) under key `k`, counter `c`, zero nonce;
//! `FKE(k)` is one fast-key-erasure step: `b = B(k, 0)`, the key becomes `b[0..32]`, the output
//! is `b[32..64]` ([`fast_key_erasure`]).
//!
//! | step | computation |
//! |---|---|
//! | input pool | `H = SHA-256("scalrand numa input pool v1" ‖ (len ‖ data)*)` |
//! | extract | `s = H.final`; out `= SHA-256("scalrand numa out" ‖ s)`; `H` restarts from `SHA-256("scalrand numa next" ‖ s)` |
//! | node reseed | `K_node = SHA-256("scalrand numa node " ‖ label ‖ K_node ‖ len ‖ input)`, generation + 1 |
//! | other nodes at boot | `K_i` reseeded with `FKE(K_0)` output, one step per node |
//! | slot refresh | `K_slot = FKE(K_node)` output (the node key moves on) |
//! | small read (≤ 256 B) | from the batch; refill: `b = B(K_slot, 0..16)`, `K_slot = b[0..32]`, batch `= b[32..1024]`; bytes are zeroed as handed out |
//! | large read | `k = FKE(K_slot)` output (under the slot lock); unlocked: output `= B(k, 0), B(k, 1), …`; beyond 1 MiB, block 0 becomes the next chunk's `k` and each chunk starts at block 1 |
//!
//! Forward secrecy: every read moves the slot key forward (a small read's bytes come from a
//! batch whose key is already replaced); a large read's one-read key is wiped after it. Keys,
//! batches and the input pool's hash are zeroized on drop; `Debug` prints none of them.
//!
//! # Fork safety
//!
//! Every read first compares [`crate::fork::generation`] with the generation the pools were
//! keyed under (one relaxed and one acquire load). In a fork child they differ: before
//! answering, the child mixes 32 fresh OS bytes, its pid and the new generation into the input
//! pool and reseeds every node, which moves every node's generation, so every slot (and its
//! batch, copied from the parent) is replaced before it serves a byte. A zeroed or copied
//! state can never carry the child's generation. Locks that parent threads held at the moment
//! of `fork()` are tagged with the parent's generation and taken over in the child (see
//! `sync.rs`). `tests/numa_fork.rs` forks 1,000 times and checks that no child's 32-byte output
//! equals any of the parent's.
//!
//! # Bad inputs
//!
//! | input | result | test |
//! |---|---|---|
//! | empty topology (`from_nodes(vec![])`, or only empty nodes) | [`NumaError::EmptyTopology`] | `numa_bad_inputs::empty_topology` |
//! | a CPU listed twice (in one node or two) | [`NumaError::DuplicateCpu`] | `numa_bad_inputs::duplicate_cpu` |
//! | a CPU number above [`MAX_CPU_ID`] | [`NumaError::CpuIdTooLarge`] (before anything is allocated) | `numa_bad_inputs::cpu_id_too_large` |
//! | more than [`MAX_NODES`] nodes | [`NumaError::TooManyNodes`] | `numa_bad_inputs::too_many_nodes` |
//! | an empty node among others | accepted (memory-only nodes exist); it serves no CPU | `numa_bad_inputs::empty_node_is_accepted` |
//! | a read on a CPU outside the topology | documented remap: slot `cpu % slots` | `numa_bad_inputs::cpu_outside_topology` |
//! | zero-length read | returns at once; no key moves, no lock is taken | `numa_bad_inputs::zero_length_read` |
//! | huge read (any length) | 1 MiB chunks, each under its own key, keys erased between | `numa_bad_inputs::huge_read` |
//! | read before 128 bits were credited | `fill_bytes` answers from node 0 (urandom semantics); `try_fill_bytes` gives [`NumaError::NotSeeded`] | `numa_bad_inputs::read_before_seeded` |
//! | malformed sysfs `cpulist` | [`NumaError::Source`] | `numa_bad_inputs::bad_sysfs` |
//! | bad hwloc synthetic description | [`NumaError::Source`] | `numa_hwloc::bad_synthetic` (`hwloc` feature) |
//!
//! If the OS entropy source fails, [`NodePools::new`] returns [`NumaError::Entropy`]; a
//! reseed or fork rekey then still rotates every key and, after a fork, mixes in the child's
//! pid and generation so a child never repeats its parent (not covered by a test: it needs
//! fault injection into `getrandom`).

mod chacha;
mod clock;
mod input;
mod node;
mod percpu;
mod pools;
mod sync;
mod topology;

pub use chacha::{BLOCK_LEN, CHUNK_LEN, KEY_LEN, chacha20_block, fast_key_erasure};
#[cfg(feature = "std")]
pub use clock::MonotonicClock;
pub use clock::{CHECK_EVERY_BYTES, CHECK_EVERY_CALLS, Clock, ManualClock, NoClock, ReseedPolicy};
pub use percpu::{BATCH_LEN, MAX_PROBES, SMALL_MAX};
pub use pools::{INIT_BITS, NodePools, NodeStats, PUSH_BITS};
pub use topology::{MAX_CPU_ID, MAX_NODES, NumaError, Topology};

#[cfg(all(test, not(scalrand_loom)))]
mod tests;

#[cfg(all(test, scalrand_loom))]
mod loom_tests;
