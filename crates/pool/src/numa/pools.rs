//! [`NodePools`], the aggregate: the input pool, one pool per node, one slot per CPU (and one
//! rseq slot per CPU number); construction and [`Unseeded`], the input side's calls, the
//! reseed schedule's check and fork safety. The read path's routing (rseq slot, home slot,
//! probing, the node fallback) is the other half of its `impl`, in `pools/read.rs`. The parts
//! it is built from never name it: each call hands them what they need.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use scalrand_os::pad::CachePadded;
use scalrand_os::primitive::{AtomicUsize, Ordering};
use scalrand_os::scratch::Scratch;
use scalrand_os::wipe::zero;
use scalrand_os::{Clock, Lock, LockGuard};

mod read;

use super::input::{INIT_BITS, InputPool};
use super::node::{LOCK_ATTEMPTS, NodePool};
use super::rseq::{self, RseqSlots};
use super::schedule::{ReseedPolicy, Schedule};
use super::slot::{MAX_PROBES, SMALL_MAX, Slot, WIPED_SLOT_TAG};
use super::topology::{NumaError, Topology};
use crate::chacha::{KEY_LEN, OneReadKey, Rounds, fill_erasing};
use crate::fork_seed::{FORK_SEED_LEN, fork_seed};
use crate::secret::{Secret, secret, secret_zeroed};

/// Per-NUMA-node ChaCha20 pools fed from one input pool, with per-CPU keys refreshed by fast
/// key erasure. See the [module docs](super) for the design, the key schedule and the
/// bad-input table.
///
/// `NodePools` is `Sync`: share one (in a `static`, an `Arc`) among all threads.
pub struct NodePools {
    topology: Topology,
    /// Indexed by CPU number; `u32::MAX` for CPUs outside the topology.
    slot_of_cpu: Box<[u32]>,
    /// The node of each slot (configuration: ordinary memory).
    slot_node: Box<[u32]>,
    /// Each node's slots: (first, count). Slots are numbered node by node, so a node's are
    /// contiguous; a busy slot's reader probes only these.
    node_slots: Box<[(u32, u32)]>,
    /// Per-CPU keys and batches (wipe-on-fork).
    slots: Secret<CachePadded<Slot>>,
    /// Node keys (wipe-on-fork). Outlive `rseq`, whose slots point at their generation
    /// words (`rseq_refill`).
    nodes: Secret<CachePadded<NodePool>>,
    /// The input pool (ordinary memory: a fork child's keys are drawn from it).
    input: CachePadded<Lock<InputPool>>,
    schedule: Schedule,
    /// The fork generation the keys belong to.
    fork_gen: AtomicUsize,
    /// Slots and nodes are wipe-on-fork memory (`keys_wipe_on_fork`): a child finds every
    /// slot stale, so reads check for a fork only on the stale path (see `slot_lock_tag`).
    wiped: bool,
    /// Reseeds and fork rekeys also pull fresh bytes from the OS.
    os_reseed: bool,
    /// The rounds of the output keystream (batches and large reads).
    rounds: Rounds,
    /// Per-CPU slots read in restartable sequences, for small reads (where rseq and
    /// wipe-on-fork memory exist; see `rseq.rs`).
    rseq: Option<RseqSlots>,
    /// Reads keyed from the OS because a lock stayed held (`fill_from_os`).
    os_keyed: AtomicUsize,
    /// Small reads that left the rseq path for the locked one (`count_left_rseq`).
    left_rseq: AtomicUsize,
    /// The keys of large and fallback reads while they generate (wipe-on-fork frames).
    scratch: Scratch<OneReadKey>,
}

/// Counters of one node pool, from [`NodePools::node_stats`]. In a fork child they start
/// again from zero (they live with the keys, in wipe-on-fork memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NodeStats {
    /// Reads served by the per-CPU slots of this node's CPUs.
    pub reads: usize,
    /// Keys derived from this node's key (slot refreshes and one-read fallback keys).
    pub key_derivations: usize,
    /// Times the input pool fed this node (initialisation, round-robin pushes, reseeds).
    pub reseeds: usize,
    /// The node key's generation.
    pub generation: usize,
}

impl fmt::Debug for NodePools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keys and batches are never printed.
        f.debug_struct("NodePools")
            .field("nodes", &self.nodes.len())
            .field("slots", &self.slots.len())
            .field("schedule", &self.schedule)
            .finish_non_exhaustive()
    }
}

/// Node pools that do not hold [`INIT_BITS`] of credited entropy yet: a `no_std` host at boot
/// feeds them with [`add_entropy`](Self::add_entropy), then turns them into readable
/// [`NodePools`] with [`try_seed`](Self::try_seed). There is no way to read from them, so no
/// byte is ever derived from too little entropy (two unseeded instances could otherwise hand
/// out the same public bytes).
pub struct Unseeded {
    topology: Topology,
    input: Box<InputPool>,
}

impl fmt::Debug for Unseeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unseeded")
            .field("nodes", &self.topology.node_count())
            .field("credited_bits", &self.input.credited_bits())
            .finish_non_exhaustive()
    }
}

impl Unseeded {
    fn new(topology: Topology) -> Result<Self, NumaError> {
        topology.validate()?;
        Ok(Self {
            topology,
            input: Box::new(InputPool::new()),
        })
    }

    /// Mixes `data` into the input pool and credits it with `entropy_bits` (the host's
    /// estimate; this crate never estimates).
    pub fn add_entropy(&mut self, data: &[u8], entropy_bits: usize) {
        self.input.credit(data, entropy_bits);
    }

    /// Mixes `data` (serial numbers, MAC addresses, boot times) in, crediting nothing.
    pub fn add_device_randomness(&mut self, data: &[u8]) {
        self.input.mix(data);
    }

    /// Entropy credited so far, in bits (saturating).
    pub fn credited_bits(&self) -> usize {
        self.input.credited_bits()
    }

    /// The pools, once at least [`INIT_BITS`] were credited: node 0 is keyed from the input
    /// pool and every other node from node 0's output, each with different bytes, so no two
    /// nodes run in lock-step (the `init_node_pools` of Andi Kleen's 2015 patch).
    ///
    /// # Errors
    /// `Err(self)`, unchanged, while fewer than [`INIT_BITS`] bits were credited.
    pub fn try_seed(self) -> Result<NodePools, Self> {
        self.try_seed_in(false)
    }

    /// `try_seed`, with keys on the ordinary heap when `heap` (the fork tests' fallback).
    fn try_seed_in(self, heap: bool) -> Result<NodePools, Self> {
        if self.input.credited_bits() < INIT_BITS {
            return Err(self);
        }
        match NodePools::build(self.topology, self.input, heap) {
            Ok(p) => Ok(p),
            // `new` validated the topology; `build` fails on nothing else.
            Err((topology, input)) => Err(Self { topology, input }),
        }
    }
}

impl NodePools {
    /// Pools for `topology`, seeded with 256 bits from the operating system, reseeding on
    /// [`ReseedPolicy::LINUX_LIKE`] with a [`MonotonicClock`](scalrand_os::MonotonicClock) and
    /// pulling fresh OS entropy at every reseed and after every fork.
    ///
    /// # Errors
    /// A bad topology (see the bad-input table in [`super`]) or [`NumaError::Entropy`].
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn new(topology: Topology) -> Result<Self, NumaError> {
        Self::new_in(topology, false)
    }

    /// Test hook (`doc(hidden)`, not API): [`new`](Self::new) with keys on the ordinary heap
    /// even where the OS could wipe them, so that the fork tests run the path other systems
    /// take (a per-read fork check, and the child erasing every slot itself).
    #[doc(hidden)]
    #[cfg(feature = "std")]
    pub fn __new_on_heap(topology: Topology) -> Result<Self, NumaError> {
        Self::new_in(topology, true)
    }

    #[cfg(feature = "std")]
    fn new_in(topology: Topology, heap: bool) -> Result<Self, NumaError> {
        let mut seed = [0u8; 32];
        scalrand_os::entropy::fill(&mut seed)?;
        let pools = Self::from_seed_in(topology, &seed, heap);
        zero(&mut seed);
        let mut pools =
            pools?.with_reseed_policy(ReseedPolicy::LINUX_LIKE, scalrand_os::MonotonicClock::new());
        pools.os_reseed = true;
        Ok(pools)
    }

    /// Pools for `topology` with no entropy yet: the host feeds them and turns them into
    /// `NodePools` with [`Unseeded::try_seed`].
    ///
    /// # Errors
    /// A bad topology (see the bad-input table in [`super`]).
    pub fn unseeded(topology: Topology) -> Result<Unseeded, NumaError> {
        Unseeded::new(topology)
    }

    /// Pools for `topology` seeded with `seed`, which the caller vouches holds 256 bits of
    /// entropy (a `no_std` host's TRNG, a boot-loader seed). Deterministic: the same seed and
    /// the same sequence of reads per CPU give the same output (tests, known answers). No
    /// reseed happens until the host calls [`NodePools::reseed`] or sets a schedule with
    /// [`NodePools::with_reseed_policy`]; with `std`, a fork still rekeys from the OS.
    ///
    /// # Errors
    /// A bad topology (see the bad-input table in [`super`]).
    pub fn from_seed(topology: Topology, seed: &[u8; 32]) -> Result<Self, NumaError> {
        Self::from_seed_in(topology, seed, false)
    }

    /// Where the per-CPU slots lie: their first address and their bytes (the unit tests'
    /// memory check, which runs on Linux outside miri and loom).
    #[cfg(all(test, target_os = "linux", not(miri), not(scalrand_loom)))]
    pub(crate) fn slots_span(&self) -> (usize, usize) {
        (
            self.slots.as_ptr() as usize,
            core::mem::size_of_val(&*self.slots),
        )
    }

    fn from_seed_in(topology: Topology, seed: &[u8; 32], heap: bool) -> Result<Self, NumaError> {
        let mut u = Self::unseeded(topology)?;
        u.add_entropy(seed, 256);
        // 256 credited bits are at least INIT_BITS, so `try_seed_in` succeeds.
        u.try_seed_in(heap).map_err(|_| NumaError::NotSeeded)
    }

    /// Builds the pools from an input pool credited with at least [`INIT_BITS`]; gives both
    /// back if the topology is bad.
    fn build(
        topology: Topology,
        mut input: Box<InputPool>,
        heap: bool,
    ) -> Result<Self, (Topology, Box<InputPool>)> {
        debug_assert!(input.credited_bits() >= INIT_BITS);
        let Ok(map) = topology.cpu_map() else {
            return Err((topology, input));
        };
        let map_slots = map.node_of_slot.len();
        // All zero is a fresh slot (`Slot`'s `ZeroValid`: stale, its batch empty, its lock
        // free), so the slots are mapped without being written: a CPU's 7 KiB slot takes
        // memory once a read uses it (without rseq, or when a read falls back to it).
        let slots = secret_zeroed(map_slots, heap, |_| CachePadded::new(Slot::new()));
        let nodes = secret(topology.node_count(), heap, |_| {
            CachePadded::new(NodePool::new())
        });
        input.seed_nodes(&nodes);
        #[cfg(not(scalrand_loom))]
        let wiped = slots.wipes_on_fork() && nodes.wipes_on_fork();
        #[cfg(scalrand_loom)]
        let wiped = false;
        let rseq = if wiped && !heap {
            let node_of_cpu: Box<[u32]> = (0..map.slot_of_cpu.len())
                .map(|cpu| {
                    let slot = match map.slot_of_cpu[cpu] {
                        s if s != u32::MAX => s as usize,
                        _ => cpu % map.node_of_slot.len(),
                    };
                    map.node_of_slot[slot]
                })
                .collect();
            RseqSlots::new(node_of_cpu)
        } else {
            None
        };
        let mut node_slots = alloc::vec![(0u32, 0u32); topology.node_count()];
        for (slot, &node) in map.node_of_slot.iter().enumerate() {
            let r = &mut node_slots[node as usize];
            if r.1 == 0 {
                // Fits: at most MAX_CPU_ID + 1 slots.
                #[allow(clippy::cast_possible_truncation)]
                {
                    r.0 = slot as u32;
                }
            }
            r.1 += 1;
        }
        Ok(Self {
            topology,
            slot_of_cpu: map.slot_of_cpu.into_boxed_slice(),
            node_slots: node_slots.into_boxed_slice(),
            slot_node: map.node_of_slot.into_boxed_slice(),
            slots,
            nodes,
            input: CachePadded::new(Lock::new(*input)),
            schedule: Schedule::new(ReseedPolicy::MANUAL, Box::new(scalrand_os::NoClock)),
            fork_gen: AtomicUsize::new(scalrand_os::fork::generation()),
            wiped,
            rseq,
            os_keyed: AtomicUsize::new(0),
            left_rseq: AtomicUsize::new(0),
            scratch: if heap {
                Scratch::on_heap(map_slots)
            } else {
                Scratch::new(map_slots)
            },
            os_reseed: false,
            rounds: Rounds::ChaCha20,
        })
    }

    /// Replaces the reseed schedule and its clock.
    #[must_use]
    pub fn with_reseed_policy(
        mut self,
        policy: ReseedPolicy,
        clock: impl Clock + Send + Sync + 'static,
    ) -> Self {
        self.schedule = Schedule::new(policy, Box::new(clock));
        self
    }

    /// Generates output keystream (slot batches and large reads) with `rounds` instead of
    /// ChaCha20's 20. Key derivations (node keys, slot keys by fast key erasure) stay ChaCha20.
    ///
    /// ChaCha20 is Linux's choice and the default. ChaCha12 is what rand's `StdRng` and
    /// `ThreadRng` run, ChaCha8 what Go's runtime generator runs (with the same fast-key-erasure
    /// batches); Aumasson's "Too Much Crypto" (IACR ePrint 2019/1492) argues 8 rounds keep a wide
    /// margin over the best known attack (7 rounds). An explicit choice: the pools never lower
    /// the rounds by themselves.
    #[must_use]
    pub fn with_rounds(mut self, rounds: Rounds) -> Self {
        self.rounds = rounds;
        self
    }

    /// The rounds of the output keystream (see [`with_rounds`](Self::with_rounds)).
    pub fn rounds(&self) -> Rounds {
        self.rounds
    }

    /// The topology the pools were built for.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Whether a fork child receives the keys and unread output zeroed from the kernel
    /// (`MADV_WIPEONFORK`, Linux ≥ 4.14). Where it does not, the child still erases them
    /// itself before its first answer (see "Fork safety" in the module docs).
    pub fn keys_wipe_on_fork(&self) -> bool {
        self.wiped
    }

    /// Counters of every node pool, node by node.
    pub fn node_stats(&self) -> Vec<NodeStats> {
        let mut v: Vec<NodeStats> = self
            .nodes
            .iter()
            .map(|n| NodeStats {
                reads: 0,
                key_derivations: n.derivations.load(Ordering::Relaxed),
                reseeds: n.reseeds.load(Ordering::Relaxed),
                generation: n.generation.load(Ordering::Acquire),
            })
            .collect();
        for (s, &node) in self.slots.iter().zip(self.slot_node.iter()) {
            v[node as usize].reads += s.reads();
        }
        for (node, reads) in self.rseq.iter().flat_map(|r| r.reads()) {
            v[node as usize].reads += reads;
        }
        v
    }

    // ---- input side ----------------------------------------------------------------------

    /// Mixes `data` into the input pool and credits it with `entropy_bits` (the host's
    /// estimate; this crate never estimates). Every [`PUSH_BITS`](super::PUSH_BITS) credited bits feed the next
    /// node pool in round-robin order, **at most one push per node per call**: a credit larger
    /// than `PUSH_BITS ×` nodes is capped there (the data is mixed in all the same), so one
    /// call holds the input lock for a bounded time whatever it claims.
    pub fn add_entropy(&self, data: &[u8], entropy_bits: usize) {
        let mut input = self.input.lock();
        input.with(|inp| inp.credit_and_push(data, entropy_bits, &self.nodes));
    }

    /// `add_device_randomness`: mixes `data` (serial numbers, MAC addresses, boot times)
    /// into the input pool and into every node pool, crediting nothing. Every node starts a
    /// new generation.
    pub fn add_device_randomness(&self, data: &[u8]) {
        let mut input = self.input.lock();
        input.with(|inp| inp.mix(data));
        drop(input);
        for node in self.nodes.iter() {
            node.reseed(b"device", data);
        }
    }

    /// Reseeds every node pool from the input pool now, each with its own extraction, in
    /// round-robin order from the node the last push fed. With [`NodePools::new`]'s pools the
    /// input pool first takes 32 fresh bytes from the OS.
    pub fn reseed(&self) {
        let fresh = self.fresh_entropy();
        let input = self.input.lock();
        self.reseed_locked(input, &fresh, false);
    }

    /// 32 fresh bytes from the OS for a reseed (`new`'s pools), zero where it has none.
    fn fresh_entropy(&self) -> [u8; 32] {
        // Without `std` there is no OS source: the host feeds `add_entropy` instead.
        #[cfg_attr(not(feature = "std"), allow(unused_mut))]
        let mut fresh = [0u8; 32];
        if self.os_reseed {
            #[cfg(feature = "std")]
            if scalrand_os::entropy::fill(&mut fresh).is_err() {
                // Nothing new from the OS this time; the reseed still rotates every node key.
                fresh = [0u8; 32];
            }
        }
        fresh
    }

    /// Mixes `fresh` into the input pool and reseeds every node from it, each with its own
    /// extraction. With `bounded`, a node whose lock stays held through a bounded wait is
    /// skipped (its holder may be this thread, interrupted by the signal handler that runs
    /// this); returns whether every node was reseeded.
    fn reseed_locked(
        &self,
        mut input: LockGuard<'_, InputPool>,
        fresh: &[u8],
        bounded: bool,
    ) -> bool {
        let all = input.with(|inp| inp.reseed_nodes(fresh, &self.nodes, bounded));
        drop(input);
        self.schedule.reseeded();
        all
    }

    /// Called by a slot every [`CHECK_EVERY_CALLS`](super::CHECK_EVERY_CALLS) reads or
    /// [`CHECK_EVERY_BYTES`](super::CHECK_EVERY_BYTES) bytes, and
    /// by an rseq slot every few refills: reseeds if the schedule says it is due.
    fn check_schedule(&self, bytes: usize) {
        if self.schedule.due(bytes) {
            let fresh = self.fresh_entropy();
            // One reseeder at a time; a reader that finds it busy does not wait.
            if let Some(input) = self.input.try_lock() {
                // Bounded: a node lock may be held by this thread, interrupted by the signal
                // handler that runs this; a skipped node is reseeded next time.
                self.reseed_locked(input, &fresh, true);
            }
        }
    }

    // ---- fork ----------------------------------------------------------------------------

    /// Rekeys every node from fresh entropy if this process is a fork child of the one that
    /// keyed them. Two loads and a compare on the fast path. Returns the lock tag of this
    /// process image.
    ///
    /// # Errors
    /// In a fork child whose rekey could not run: [`NumaError::Entropy`] when the OS gave no
    /// fresh entropy (fail closed: the child never answers from what it inherited), or
    /// [`NumaError::Busy`] when another rekey holds the input lock beyond a bounded wait.
    /// Nothing may be derived from the nodes until a later call succeeds.
    #[inline]
    fn check_fork(&self) -> Result<usize, NumaError> {
        let g = scalrand_os::fork::generation();
        if g != self.fork_gen.load(Ordering::Acquire) {
            self.rekey_after_fork(g)?;
        }
        Ok(match g.wrapping_add(1) {
            0 => 1,
            t => t,
        })
    }

    /// The locked read path's entry: its fork check and slot-lock tag. With wipe-on-fork
    /// memory it costs nothing: a fork child finds every slot zeroed, so its first read of any
    /// slot takes the stale path, which gets its key from [`node_key`](Self::node_key), where
    /// the check is made instead; and a slot lock never outlives the process image that took
    /// it (the child's copy of the lock word is zero), so slot locks need no owner tag and
    /// are never taken over. Without wipe-on-fork memory, every read checks the generation
    /// here first.
    #[inline]
    fn slot_lock_tag(&self) -> Result<usize, NumaError> {
        if self.wiped {
            Ok(WIPED_SLOT_TAG)
        } else {
            self.check_fork()
        }
    }

    /// A key from node `node` (a stale slot's, a stale rseq slot's or a one-read key) and the
    /// generation it belongs to: the one way a read reaches a node key. With wipe-on-fork
    /// memory this is where reads check for a fork (every path a child's zeroed slots lead to
    /// comes here before it derives anything). Lock order: a stale slot's read comes here
    /// holding its slot lock and the check may take the input lock, which is sound because
    /// in this mode nothing that holds the input lock waits for a slot lock
    /// (`rekey_after_fork` leaves the kernel-wiped slots alone). Without wipe-on-fork memory
    /// the read checked at its entry (`slot_lock_tag`), before it took any slot, and a check
    /// here could find a fork only while this thread holds a slot lock that a rekey would take
    /// over.
    ///
    /// # Errors
    /// From [`check_fork`](Self::check_fork); [`NumaError::Busy`] when the node lock stayed
    /// held through a bounded wait (its holder may be this thread, interrupted by the signal
    /// handler that reads now).
    #[inline]
    fn node_key(&self, node: usize, out: &mut [u8; KEY_LEN]) -> Result<usize, NumaError> {
        if self.wiped {
            self.check_fork()?;
        }
        self.nodes[node].try_derive(out).ok_or(NumaError::Busy)
    }

    /// In a fork child, before the first answer: erase every slot key and batch (already zero
    /// where the kernel wiped them), then reseed every node from the input pool mixed with a
    /// fork seed (32 fresh OS bytes, the child's pid, its fork generation, the clock:
    /// `fork_seed.rs`).
    ///
    /// **Fails closed**: without fresh OS bytes the child would key itself from the inherited
    /// input pool alone, which its siblings share (children started as pid 1 of their own
    /// namespaces even share the pid), so it returns the entropy error instead and leaves the
    /// pools unusable until a later read gets entropy. The pid and generation are an extra,
    /// not the defence. Without `std` there is no fork to detect.
    #[cold]
    fn rekey_after_fork(&self, g: usize) -> Result<(), NumaError> {
        let mut fresh = [0u8; FORK_SEED_LEN];
        fork_seed(g, &mut fresh).map_err(NumaError::Entropy)?;
        // Lock order: input, then slots, then nodes. Without wipe-on-fork memory nothing takes
        // the input lock while holding a slot or node lock; with it, a child's first read
        // takes it while holding its own (zeroed) slot, and nothing here waits for a slot.
        // Bounded: the holder may be this thread, interrupted by a signal handler that reads.
        let Some(input) = self.input.lock_bounded(LOCK_ATTEMPTS) else {
            zero(&mut fresh);
            return Err(NumaError::Busy);
        };
        if self.fork_gen.load(Ordering::Acquire) == g {
            zero(&mut fresh);
            return Ok(()); // another thread of this child did it
        }
        if !self.wiped {
            // The kernel did not wipe them: slot locks carry owner tags here, and `lock`
            // takes over one a parent's thread held at the fork.
            for slot in self.slots.iter() {
                slot.wipe();
            }
        }
        let all = self.reseed_locked(input, &fresh, true);
        zero(&mut fresh);
        if !all {
            return Err(NumaError::Busy);
        }
        self.fork_gen.store(g, Ordering::Release);
        Ok(())
    }
}
