//! Per-NUMA-node ChaCha20 pools that also scale inside one big node.
//!
//! Andi Kleen, "[PATCH 1/3] Make /dev/urandom scalable" (LKML, 2015-10-06): a 4-socket server
//! spent over 80% of its CPU time on the one urandom spinlock; one pool per NUMA node, fed round-robin from the input
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
//!   key + 7136-byte batch                            (never waits: busy → node's next slot)
//! ```
//!
//! - [`Topology`] says which CPUs belong to which node (explicit, sysfs, hwloc).
//! - The **input pool** takes all entropy ([`NodePools::add_entropy`], credited by the host;
//!   with `std`, 256 bits from the OS at [`NodePools::new`] and 32 fresh bytes at each reseed).
//! - **Boot** ([`NodePools::unseeded`] gives an [`Unseeded`], which has no read method):
//!   once the host has credited [`INIT_BITS`] = 128 bits, [`Unseeded::try_seed`] keys node 0
//!   from the input pool and every other node from node 0's output, each with different
//!   bytes, so no two nodes run in lock-step (the 2015 patch's `init_node_pools`). No byte is
//!   ever derived from less entropy than that.
//! - **Feeding**: afterwards every [`PUSH_BITS`] credited bits feed the next node pool in
//!   round-robin order (at most one push per node per [`NodePools::add_entropy`] call);
//!   [`NodePools::reseed`] feeds every node, each its own extraction;
//!   [`NodePools::add_device_randomness`] goes to the input pool and to every node pool.
//! - **Schedule**: a reseed is due after [`ReseedPolicy::max_bytes`] bytes or
//!   [`ReseedPolicy::max_interval_secs`] seconds of an injectable
//!   [`Clock`](scalrand_os::Clock); readers check it every [`CHECK_EVERY_CALLS`] reads /
//!   [`CHECK_EVERY_BYTES`] bytes of a slot, so no timer runs and a `no_std` host drives it
//!   with a [`ManualClock`](scalrand_os::ManualClock) or by calling [`NodePools::reseed`].
//! - **Per CPU**: the reader's CPU ([`scalrand_os::cpu::current`]: glibc's rseq `cpu_id`, one
//!   thread-local load) picks a slot. A slot holds a ChaCha20 key taken from its node's key and the node
//!   generation it was taken under; when the node's generation moves on (a reseed), the slot's
//!   next reader takes a new key before it answers. Only that refresh touches the node lock.
//! - **Small reads without a lock** (Linux x86_64 with glibc's rseq, keys in wipe-on-fork
//!   memory): reads of up to 64 bytes from [`NodePools::fill_bytes`] take a second set of
//!   per-CPU slots, indexed by CPU number, read and advanced in restartable sequences instead
//!   of under the slot's try-lock: no atomic instruction per read. Refills hold nothing another
//!   thread waits for, so more threads than CPUs (a preempted thread mid-refill) cost the
//!   CPU's other readers nothing: a refill takes its CPU's slot key exactly once in a
//!   restartable section, generates the batch outside every section and lock in a frame of its
//!   own (a pool of wipe-on-fork pages), puts the next key back and publishes the batch with
//!   one store in a section on whatever CPU it runs on by then; a reader that finds the batch
//!   used up while another thread's refill is preempted mid-way runs its own with the next key
//!   (or one from the node, when that key is out too). The protocol and why it never hands a
//!   byte out twice are in the source (`rseq/protocol.rs`); `tests/numa_rseq.rs` checks it
//!   against the locked path's bytes and under a storm of signals, preemption and migration,
//!   `tests/numa_oversubscribed.rs` with a refill stopped midway and with 64 threads per CPU,
//!   and `tests/refill_model.rs` explores every interleaving of a model of it. Elsewhere (and
//!   for a CPU outside the topology) every read takes the locked slots.
//! - **Cipher**: ChaCha20, except the output keystream when a host chooses reduced rounds with
//!   [`NodePools::with_rounds`] (key derivations stay ChaCha20). Bulk keystream ([`keystream`](crate::chacha::keystream): slot batches, large reads) runs
//!   on this crate's own backends, the widest the CPU has (detected once, at run time): 16
//!   blocks per pass on AVX-512F, 8 on AVX2, 4 on SSE2, one elsewhere ([`backend`](crate::chacha::backend) says which;
//!   `--cfg scalrand_chacha_soft`, `scalrand_chacha_sse2` and `scalrand_chacha_portable` force a
//!   narrower one). No backend leaves a copy of a key or of unread keystream behind: each call
//!   is followed by a wipe of the stack it used and of the vector registers.
//!
//! # Source layout
//!
//! Each row imports only rows below it and the cipher ([`crate::chacha`]), and only `pools.rs` (with `pools/read.rs`) names
//! [`NodePools`]: the parts take what they need (nodes, a generation word, a source of fresh
//! node keys, the rounds) as arguments.
//!
//! | file | holds |
//! |---|---|
//! | `pools.rs`, `pools/read.rs` | [`NodePools`] and [`Unseeded`]: construction, the input side's calls, the reseed schedule's check, the fork check and rekey; the read path's routing (rseq slot, home slot, probing, the node fallback, a key from the OS) |
//! | `rseq.rs` | the rseq slot container: one slot per CPU number, its read (take, skip, refill) and the refill's steps; `rseq_none.rs` where the path does not exist |
//! | `rseq/protocol.rs` | the restartable sequences (take, skip, take key, put key, publish, stash, unstash) and the slot and frame layouts they assume |
//! | `rseq/frames.rs` | the pool of batch frames the rseq refills write into, and their claim tokens |
//! | `slot.rs` | one CPU's locked slot: key, batch and the slot's own read |
//! | `policy.rs` | the read policy both kinds of slot follow: when a key is stale, when a reader looks at the reseed schedule |
//! | `input.rs` | the input pool: mixing, extraction, feeding the node pools it is handed |
//! | `node.rs` | one node pool: key, generation, reseed, key derivation |
//! | `schedule.rs` | the reseed policy and its schedule |
//! | `topology.rs` | CPUs and nodes, [`NumaError`] |
//!
//! # Key schedule
//!
//! `B(k, c)` is the ChaCha20 block (RFC 8439) under key `k`, counter `c`, zero nonce;
//! `FKE(k)` is one fast-key-erasure step: `b = B(k, 0)`, the key becomes `b[0..32]`, the output
//! is `b[32..64]` ([`fast_key_erasure`](crate::chacha::fast_key_erasure)).
//!
//! | step | computation |
//! |---|---|
//! | input pool | `H = SHA-256("scalrand numa input pool v1" ‖ (len ‖ data)*)` |
//! | extract | `s = H.final`; out `= SHA-256("scalrand numa out" ‖ s)`; `H` restarts from `SHA-256("scalrand numa next" ‖ s)` |
//! | node reseed | `K_node = SHA-256("scalrand numa node " ‖ label ‖ K_node ‖ len ‖ input)`, generation + 1 |
//! | other nodes at boot | `K_i` reseeded with `FKE(K_0)` output, one step per node |
//! | slot refresh | `K_slot = FKE(K_node)` output (the node key moves on) |
//! | small read (≤ 256 B) | from the batch; refill: `b = B(K_slot, 0..112)`, `K_slot = b[0..32]`, batch `= b[32..7168]`; bytes are zeroed as handed out |
//! | small read (≤ 64 B), rseq path | the same, in whole 8-byte words: a read takes `⌈len/8⌉` words of the batch, and one that does not fit in what is left skips the rest (zeroed at the refill) |
//! | large read | `k = FKE(K_slot)` output (under the slot lock); unlocked: output `= B(k, 0), B(k, 1), …`; beyond 1 MiB, block 0 becomes the next chunk's `k` and each chunk starts at block 1 |
//!
//! Forward secrecy: every read moves the slot key forward (a small read's bytes come from a
//! batch whose key is already replaced); a large read's one-read key is wiped after it. Keys,
//! batches and the input pool's hash are zeroized on drop; `Debug` prints none of them.
//!
//! # Fork safety
//!
//! Slot keys, batches and node keys live in [`WipeOnFork`](scalrand_os::wipe::WipeOnFork)
//! memory: on Linux ≥ 4.14 the kernel hands a fork child those pages zeroed, so the parent's
//! keys and its unread output are gone from the child before any of the child's code runs,
//! whether or not the child ever reads ([`NodePools::keys_wipe_on_fork`] says whether that
//! holds here). A child's zeroed slots are stale, so its first read of each takes the slot's
//! refresh path, which compares [`scalrand_os::fork::generation`] (a wipe-on-fork word: it
//! changes in every child however it was forked, raw `SYS_fork` and other libraries' atfork
//! handlers included) with the generation the keys belong to before it derives a key; where
//! the OS offers no wipe-on-fork memory, every read makes that comparison first. In a child
//! they differ: before answering, the child erases every slot (already zero where the kernel
//! wiped it), mixes 32 fresh OS bytes, its pid and its generation into the input pool (which
//! is ordinary, inherited memory: the secret the child's keys come from) and reseeds every
//! node. A zero slot is stale (generation 0 is never current) and its batch empty, so nothing
//! zeroed is ever handed out. Locks that parent threads held at `fork()` are free in the child
//! (wiped) or taken over ([`scalrand_os::Lock`]). `tests/numa_fork.rs` checks each of these
//! against a child made by `fork()`, by `syscall(SYS_fork)` and under an earlier-registered
//! atfork handler, and scans the child's memory for the parent's later output.
//!
//! **Reads in progress in other threads.** A fork child of a multi-threaded program also
//! inherits a copy of every other thread's stack. A large read (over 256 bytes), and every
//! read that falls back to a key from the node or from the OS, holds a one-read key (and, for
//! reads over 1 MiB, the block that becomes the next chunk's key) while it generates outside
//! every lock; those live in a frame of wipe-on-fork memory taken for the read
//! ([`Scratch`](scalrand_os::scratch::Scratch)), and every key derivation computes its block
//! in the slot's read frame or the node's own memory, never in a stack local. A child forked
//! from another thread while that read runs finds zeros, not a key that would regenerate what
//! the parent writes after the fork (`tests/fork_mid_read.rs`: the child tries every 32-byte
//! window of its writable memory, at every byte offset, as a key). Registers are cleared after
//! the last instruction that touches a key, so a signal frame saved on the stack right after
//! a call holds none.
//!
//! **A signal while a key is in the registers.** The kernel saves every register below the
//! interrupted stack pointer (past the red zone: about 3.6 KB with AVX-512 state) and nothing
//! erases that frame when the handler returns. Every section of code that holds a key (a
//! batch refill, a key derivation, a large read's keystream, a node reseed) is watched from
//! its first instruction ([`scalrand_os::signal::Watch`]: an rseq descriptor with an empty
//! section, which the kernel clears whenever it delivers a signal to the thread or preempts
//! it) and ends by clearing the registers, then wiping its own frames, and, when the watch
//! says something interrupted it (always where there is no rseq registration, and after an
//! rseq refill, whose own sections replace the watch), as far below them as a signal frame
//! can reach ([`scalrand_os::signal::wipe_stack`]: the red zone, `AT_MINSIGSTKSZ`, and 512
//! bytes for the start of the handler). `tests/signal_frames.rs` delivers a signal at
//! instructions spread over each kind of read of a child stepped under `ptrace` and finds
//! no piece of any key on the thread's stack after the read; `tests/signal_storm.rs` sends a
//! signal every 0.5 to 5 µs to a thread that reads with rseq on, and finds none when it
//! stops. A handler on an alternate stack (`sigaltstack`, `SA_ONSTACK`) gets its frame
//! there: a section whose watch is not quiet (something interrupted it; without rseq, every
//! section) also zeroes the top of that stack
//! ([`scalrand_os::signal::wipe_alternate_stack`], one `sigaltstack` call, on Linux, macOS,
//! the BSDs and illumos). `tests/alt_stack_frames.rs` signals inside refills and key derivations with a
//! marker in a register, on a thread with rseq and on one without, and finds none of it there
//! after the read; `tests/signal_frames.rs` runs its signals with the handler on an
//! alternate stack too. What remains: a handler that itself reaches deeper than 512 bytes
//! below the frame leaves the registers it saves below the wipe.
//!
//! What a child can still hold, per platform: where the OS offers no wipe-on-fork memory
//! (qemu-user and other emulators whose `madvise` does nothing, macOS, systems before Linux
//! 4.14), keys sit in ordinary memory and a child that never reads keeps a copy of the slot
//! and node keys of the moment, and of the keys of reads in flight at the fork; its own first
//! read erases and replaces all of them. While a keystream call runs, what its own stack frame
//! holds depends on the backend (`tests/stack_every_step.rs` single-steps reads under
//! `ptrace` and searches the reading thread's stack after every instruction for 16-byte
//! pieces of every key the read derives): on x86_64 nothing of a key is on the stack at any
//! instruction, on every backend. The AVX-512 backend keeps all 16 state words in registers
//! and loads the key words from the key's own memory again for the feed-forward; the AVX2 and
//! SSE2 backends run each pass as one assembly block that keeps the state in registers (AVX2's
//! eight-block passes keep words 0..3 in a spill frame of wipe-on-fork memory), reloads the key
//! for the feed-forward and stores each block straight from the registers; every key derivation runs on the SSE2 pass for one block, which stores
//! into the slot's or frame's memory. Blocks a last partial pass computes past the request
//! stay in registers. The portable backend (other architectures, single blocks on aarch64, or
//! forced) keeps its 16 state words in a frame of wipe-on-fork memory, loaded and stored
//! around each quarter round, and reloads the key for the feed-forward (the step-by-step
//! search runs on it forced on x86_64); the NEON backend (aarch64) has 32 vector registers for
//! its 16 state words, and `tests/backend_frames.rs` finds no key piece in the stack its calls
//! leave (under qemu-user; the step-by-step search runs on x86_64 only).
//! Builds without
//! optimisation copy key words into stack temporaries for the length of each call (a fork
//! landing in one finds them): ship optimised builds. A core dump taken during a read holds
//! that read's frame like any other memory.
//!
//! **A fork made by a signal handler inside a read on the same thread.** The child resumes
//! that read on memory the kernel just zeroed under it. A read through the slots checks the
//! fork generation before and after and, in such a child, forgets every slot and runs again
//! with the child's own keys; a slot never keys anything from an all-zero key, and a length
//! zeroed under the read is never subtracted from or indexed past. An rseq read's take and
//! refill are sections that such a fork aborts, and a refill's frame carries a claim token
//! the child cannot match, so nothing computed from the zeroed frame is put back or
//! published. The child's bytes are its own (`tests/fork_in_handler.rs`: every length 1 to
//! 300 and 4096 through each path: no zero run, no byte of the parent's read, not the
//! all-zero key's stream, no panic), except when the fork lands after the read's bytes were
//! settled: then the child returns the parent's whole read, as it would from a fork just
//! after the call. A thread runs one rseq refill at a time: a read in a handler that
//! interrupted a refill of its own thread takes the locked path instead of refilling inside
//! it, so no nested refill can take the frame the interrupted one writes, in the parent or,
//! with the frame zeroed and free, in a child the handler forked
//! (`tests/nested_refill.rs`; `tests/handler_fork_stress.rs`: sixteen readers, a real-time
//! signal every few microseconds, every 500th handler forking and reading, 300 children in CI
//! and 20,000 or 20 s in a full campaign: no word handed out by a parent and its child).
//!
//! The fresh OS bytes are the defence; pid and generation are an extra (siblings started as
//! pid 1 of their own namespaces share both, and share the inherited input pool). So a child
//! whose OS read fails **fails closed**: it rekeys nothing, [`NodePools::try_fill_bytes`]
//! returns [`NumaError::Entropy`] and [`NodePools::fill_bytes`] panics, and the next read
//! asks the OS again (`tests/numa_hostile.rs`, with `getrandom` and `/dev/urandom` denied by
//! a seccomp filter).
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
//! | read before 128 bits were credited | impossible: [`Unseeded`] has no read method; [`Unseeded::try_seed`] gives the `Unseeded` back until 128 bits are credited | `numa_bad_inputs::read_before_seeded` |
//! | `add_entropy` crediting `usize::MAX` bits | mixed in; at most one push per node, the rest of the credit dropped (bounded work under the input lock) | `numa_bad_inputs::huge_credit_is_bounded` |
//! | malformed sysfs `cpulist` | [`NumaError::Source`] | `numa_bad_inputs::bad_sysfs` |
//! | bad hwloc synthetic description | [`NumaError::Source`] | `numa_hwloc::bad_synthetic` (`hwloc` feature) |
//! | OS entropy denied in a fork child (seccomp, sandbox) | fail closed: [`NodePools::try_fill_bytes`] returns [`NumaError::Entropy`], [`NodePools::fill_bytes`] panics; a later read tries again | `numa_hostile::a_fork_child_without_entropy_refuses_to_answer` |
//! | a read whose node or input lock stays held (a signal handler interrupting a read on its own thread) | bounded wait, then a one-read key from the OS; without `std`, [`NumaError::Busy`] | `numa::tests::a_node_lock_held_by_this_thread_sends_the_read_elsewhere`, `numa_hostile::signal_handlers_that_read_never_hang` |
//!
//! If the OS entropy source fails, [`NodePools::new`] returns [`NumaError::Entropy`]. A
//! scheduled reseed whose OS read fails still rotates every node key (the pools' own state is
//! secret; the next reseed asks the OS again).

mod input;
mod node;
mod policy;
mod pools;
scalrand_os::cfg_rseq! {
    if {
        mod rseq;
    } else {
        #[path = "rseq_none.rs"]
        mod rseq;
    }
}
mod schedule;
mod slot;
mod topology;

#[doc(no_inline)]
pub use crate::chacha::Rounds;
pub use input::{INIT_BITS, PUSH_BITS};
pub use pools::{NodePools, NodeStats, Unseeded};
#[doc(hidden)]
pub use rseq::__in_next_rseq_refill;
pub use schedule::{CHECK_EVERY_BYTES, CHECK_EVERY_CALLS, ReseedPolicy};
pub use slot::{BATCH_LEN, MAX_PROBES, SMALL_MAX};
pub use topology::{MAX_CPU_ID, MAX_NODES, NumaError, Topology};

#[cfg(all(test, not(scalrand_loom)))]
mod tests;

#[cfg(all(test, scalrand_loom))]
mod loom_tests;
