//! [`NodePools`]: the input pool, one pool per node, one slot per CPU.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use crossbeam_utils::CachePadded;
use zeroize::Zeroize;

use super::chacha::{KEY_LEN, fast_key_erasure, fill_erasing};
use super::clock::{CHECK_EVERY_BYTES, CHECK_EVERY_CALLS, Clock, ReseedPolicy};
use super::input::InputPool;
use super::node::NodePool;
use super::percpu::{MAX_PROBES, SMALL_MAX, Slot, SlotState};
use super::sync::{AtomicBool, AtomicUsize, Lock, LockGuard, Ordering, current_tag};
use super::topology::{NumaError, Topology};

/// Bits the first node pool must hold before the other nodes are initialised from it (the
/// seed's `POOL_INIT_BYTES`).
pub const INIT_BITS: usize = 128;

/// Bits the input pool collects (once the pools are ready) before it feeds the next node in
/// round-robin order.
pub const PUSH_BITS: usize = 256;

/// Per-NUMA-node ChaCha20 pools fed from one input pool, with per-CPU keys refreshed by fast
/// key erasure. See the [module docs](super) for the design, the key schedule and the
/// bad-input table.
///
/// `NodePools` is `Sync`: share one (in a `static`, an `Arc`) among all threads.
pub struct NodePools {
    topology: Topology,
    /// Indexed by CPU number; `u32::MAX` for CPUs outside the topology.
    slot_of_cpu: Box<[u32]>,
    slots: Box<[CachePadded<Slot>]>,
    nodes: Box<[CachePadded<NodePool>]>,
    input: CachePadded<Lock<InputPool>>,
    /// Set once node 0 held [`INIT_BITS`] and the other nodes were initialised from it.
    ready: AtomicBool,
    policy: ReseedPolicy,
    clock: Box<dyn Clock>,
    bytes_since_reseed: CachePadded<AtomicUsize>,
    last_reseed_secs: AtomicUsize,
    /// The fork generation the keys belong to (truncated to `usize`).
    fork_gen: AtomicUsize,
    /// Reseeds and fork rekeys also pull fresh bytes from the OS.
    os_reseed: bool,
}

/// Counters of one node pool, from [`NodePools::node_stats`].
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
            .field("ready", &self.ready.load(Ordering::Relaxed))
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// The CPU this thread runs on: `sched_getcpu`, which glibc ≥ 2.35 answers from the rseq
/// area it registered for the thread (a TLS load), else with the `getcpu` vDSO call.
#[inline]
fn current_cpu() -> usize {
    #[cfg(all(feature = "std", target_os = "linux", not(scalrand_loom)))]
    {
        // SAFETY: sched_getcpu takes no arguments and has no preconditions.
        let cpu = unsafe { libc::sched_getcpu() };
        if let Ok(cpu) = usize::try_from(cpu) {
            return cpu;
        }
    }
    0
}

impl NodePools {
    /// Pools for `topology`, seeded with 256 bits from the operating system, reseeding on
    /// [`ReseedPolicy::LINUX_LIKE`] with a [`MonotonicClock`](super::MonotonicClock) and
    /// pulling fresh OS entropy at every reseed and after every fork.
    ///
    /// # Errors
    /// A bad topology (see the bad-input table in [`super`]) or [`NumaError::Entropy`].
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn new(topology: Topology) -> Result<Self, NumaError> {
        let mut seed = [0u8; 32];
        crate::entropy::os_fill(&mut seed)?;
        let mut pools = Self::from_seed(topology, &seed)?;
        seed.zeroize();
        pools.os_reseed = true;
        pools.clock = Box::new(super::MonotonicClock::new());
        pools.policy = ReseedPolicy::LINUX_LIKE;
        Ok(pools)
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
        let pools = Self::unseeded(topology)?;
        pools.add_entropy(seed, 256);
        Ok(pools)
    }

    /// Pools for `topology` with no entropy yet: the host feeds them with
    /// [`NodePools::add_entropy`]. Until node 0 holds 128 credited bits every CPU reads from
    /// node 0 (urandom's boot behaviour: [`NodePools::fill_bytes`] answers,
    /// [`NodePools::try_fill_bytes`] refuses with [`NumaError::NotSeeded`]); then the other
    /// node pools are initialised from node 0, each with different bytes.
    ///
    /// # Errors
    /// A bad topology (see the bad-input table in [`super`]).
    pub fn unseeded(topology: Topology) -> Result<Self, NumaError> {
        let map = topology.cpu_map()?;
        let slots = map
            .node_of_slot
            .iter()
            .map(|&n| CachePadded::new(Slot::new(n as usize)))
            .collect::<Vec<_>>()
            .into_boxed_slice();
        let nodes = (0..topology.node_count())
            .map(|_| CachePadded::new(NodePool::new()))
            .collect::<Vec<_>>()
            .into_boxed_slice();
        Ok(Self {
            topology,
            slot_of_cpu: map.slot_of_cpu.into_boxed_slice(),
            slots,
            nodes,
            input: CachePadded::new(Lock::new(InputPool::new())),
            ready: AtomicBool::new(false),
            policy: ReseedPolicy::MANUAL,
            clock: Box::new(super::NoClock),
            bytes_since_reseed: CachePadded::new(AtomicUsize::new(0)),
            last_reseed_secs: AtomicUsize::new(0),
            fork_gen: AtomicUsize::new(Self::fork_generation()),
            os_reseed: false,
        })
    }

    /// Replaces the reseed schedule and its clock.
    #[must_use]
    pub fn with_reseed_policy(mut self, policy: ReseedPolicy, clock: impl Clock + 'static) -> Self {
        self.policy = policy;
        self.clock = Box::new(clock);
        let now = self.clock.now_secs().unwrap_or(0);
        self.last_reseed_secs.store(
            usize::try_from(now).unwrap_or(usize::MAX),
            Ordering::Relaxed,
        );
        self
    }

    /// The topology the pools were built for.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Whether node 0 has held [`INIT_BITS`] and the node pools are initialised.
    pub fn is_seeded(&self) -> bool {
        self.ready.load(Ordering::Acquire)
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
        for s in self.slots.iter() {
            v[s.node].reads += s.reads.load(Ordering::Relaxed);
        }
        v
    }

    // ---- input side ----------------------------------------------------------------------

    /// Mixes `data` into the input pool and credits it with `entropy_bits` (the host's
    /// estimate; this crate never estimates). Crossing [`INIT_BITS`] initialises the node
    /// pools; afterwards every [`PUSH_BITS`] credited bits feed the next node pool in
    /// round-robin order.
    pub fn add_entropy(&self, data: &[u8], entropy_bits: usize) {
        let mut input = self.input.lock();
        input.with(|inp| {
            inp.credit(data, entropy_bits);
            if !self.ready.load(Ordering::Acquire) {
                if inp.credited_bits >= INIT_BITS {
                    self.initialise_nodes(inp);
                }
            } else {
                while inp.pending_bits >= PUSH_BITS {
                    inp.pending_bits -= PUSH_BITS;
                    let i = inp.next_node % self.nodes.len();
                    inp.next_node = (i + 1) % self.nodes.len();
                    let mut seed = inp.extract();
                    self.nodes[i].reseed(b"push", &seed);
                    seed.zeroize();
                }
            }
        });
    }

    /// The seed's `init_node_pools`: node 0 takes the input pool's entropy, then every other
    /// node is initialised from node 0's output (each with its own bytes, so no two nodes run
    /// in lock-step). Called with the input lock held.
    fn initialise_nodes(&self, inp: &mut InputPool) {
        let mut seed = inp.extract();
        self.nodes[0].reseed(b"init", &seed);
        for node in self.nodes.iter().skip(1) {
            self.nodes[0].derive(&mut seed);
            node.reseed(b"init", &seed);
        }
        seed.zeroize();
        inp.pending_bits = 0;
        inp.next_node = 0;
        // Every node's generation moved, so every slot takes a new key on its next read.
        self.ready.store(true, Ordering::Release);
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
        self.reseed_locked(input, &fresh);
    }

    fn fresh_entropy(&self) -> [u8; 32] {
        // Without `std` there is no OS source: the host feeds `add_entropy` instead.
        #[cfg_attr(not(feature = "std"), allow(unused_mut))]
        let mut fresh = [0u8; 32];
        if self.os_reseed {
            #[cfg(feature = "std")]
            if crate::entropy::os_fill(&mut fresh).is_err() {
                // Nothing new from the OS this time; the reseed still rotates every node key.
                fresh = [0u8; 32];
            }
        }
        fresh
    }

    fn reseed_locked(&self, mut input: LockGuard<'_, InputPool>, fresh: &[u8]) {
        input.with(|inp| {
            inp.mix(fresh);
            let n = self.nodes.len();
            let start = inp.next_node % n;
            for k in 0..n {
                let i = (start + k) % n;
                let mut seed = inp.extract();
                self.nodes[i].reseed(b"reseed", &seed);
                seed.zeroize();
            }
        });
        drop(input);
        self.bytes_since_reseed.store(0, Ordering::Relaxed);
        if let Some(now) = self.clock.now_secs() {
            self.last_reseed_secs.store(
                usize::try_from(now).unwrap_or(usize::MAX),
                Ordering::Relaxed,
            );
        }
    }

    /// Called by a slot every [`CHECK_EVERY_CALLS`] reads or [`CHECK_EVERY_BYTES`] bytes.
    fn check_schedule(&self, bytes: usize) {
        let p = self.policy;
        if p.max_bytes == 0 && p.max_interval_secs == 0 {
            return;
        }
        let total = self
            .bytes_since_reseed
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        let by_bytes = p.max_bytes != 0 && total as u64 >= p.max_bytes;
        let by_time = p.max_interval_secs != 0
            && self.clock.now_secs().is_some_and(|now| {
                let last = self.last_reseed_secs.load(Ordering::Relaxed) as u64;
                now.saturating_sub(last) >= p.max_interval_secs
            });
        if by_bytes || by_time {
            let fresh = self.fresh_entropy();
            // One reseeder at a time; a reader that finds it busy does not wait.
            if let Some(input) = self.input.try_lock(current_tag()) {
                self.reseed_locked(input, &fresh);
            }
        }
    }

    // ---- fork ----------------------------------------------------------------------------

    #[inline]
    fn fork_generation() -> usize {
        // Truncation on 32-bit targets only matters after 2^32 nested forks.
        #[allow(clippy::cast_possible_truncation)]
        let g = crate::fork::generation() as usize;
        g
    }

    /// Rekeys every node from fresh entropy if this process is a fork child of the one that
    /// keyed them. One relaxed atomic load and one acquire load on the fast path.
    /// Returns the lock tag of this process image.
    #[inline]
    fn check_fork(&self) -> usize {
        let g = Self::fork_generation();
        if g != self.fork_gen.load(Ordering::Acquire) {
            self.rekey_after_fork(g);
        }
        match g.wrapping_add(1) {
            0 => 1,
            t => t,
        }
    }

    #[cold]
    fn rekey_after_fork(&self, g: usize) {
        let mut fresh = [0u8; 48];
        #[cfg(feature = "std")]
        {
            // If the OS source fails, the pid and generation below still make the child's
            // keys differ from the parent's (the parent never mixes them in).
            let _ = crate::entropy::os_fill(&mut fresh[..32]);
            #[cfg(unix)]
            // SAFETY: getpid has no preconditions.
            fresh[32..40].copy_from_slice(&(unsafe { libc::getpid() } as u64).to_le_bytes());
        }
        fresh[40..48].copy_from_slice(&(g as u64).to_le_bytes());
        let input = self.input.lock();
        if self.fork_gen.load(Ordering::Acquire) == g {
            return; // another thread of this child did it
        }
        self.reseed_locked(input, &fresh);
        fresh.zeroize();
        self.fork_gen.store(g, Ordering::Release);
    }

    // ---- output side ---------------------------------------------------------------------

    /// Fills `dest` with cryptographically secure random bytes from the pool of the node this
    /// thread runs on. Never fails, never blocks (see [`NodePools::try_fill_bytes`] to refuse
    /// output before the pools are seeded).
    #[inline]
    pub fn fill_bytes(&self, dest: &mut [u8]) {
        self.fill_bytes_on_cpu(current_cpu(), dest);
    }

    /// As [`NodePools::fill_bytes`], but an error instead of output while the pools are not
    /// seeded yet ([`NodePools::unseeded`] before [`INIT_BITS`] bits).
    ///
    /// # Errors
    /// [`NumaError::NotSeeded`].
    pub fn try_fill_bytes(&self, dest: &mut [u8]) -> Result<(), NumaError> {
        if !self.is_seeded() {
            return Err(NumaError::NotSeeded);
        }
        self.fill_bytes(dest);
        Ok(())
    }

    /// A random `u64` (little-endian bytes from [`NodePools::fill_bytes`]).
    #[inline]
    pub fn next_u64(&self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    /// As [`NodePools::fill_bytes`] for a thread that runs on CPU `cpu`: the entry point for
    /// hosts that know their CPU number themselves (`no_std` kernels, where
    /// [`NodePools::fill_bytes`] assumes CPU 0) and for modelling a big machine on a small
    /// one. A CPU outside the topology uses slot `cpu % slots` (documented remap, see the
    /// bad-input table).
    pub fn fill_bytes_on_cpu(&self, cpu: usize, dest: &mut [u8]) {
        let _ = self.fill_traced(cpu, dest);
    }

    /// The slot CPU `cpu` starts from.
    #[inline]
    fn home_slot(&self, cpu: usize) -> usize {
        match self.slot_of_cpu.get(cpu) {
            Some(&s) if s != u32::MAX => s as usize,
            _ => cpu % self.slots.len(),
        }
    }

    /// Fills `dest`; returns (node, generation) of the node key the output descends from
    /// (`None` for an empty `dest`). The loom model checks the generation.
    pub(crate) fn fill_traced(&self, cpu: usize, dest: &mut [u8]) -> Option<(usize, usize)> {
        if dest.is_empty() {
            return None;
        }
        let tag = self.check_fork();
        let n = self.slots.len();
        let mut idx = self.home_slot(cpu);
        for _ in 0..MAX_PROBES.min(n) {
            let slot = &self.slots[idx];
            if let Some(mut guard) = slot.state.try_lock(tag) {
                let mut one_read_key = [0u8; KEY_LEN];
                let (src, bulk, due) = guard.with(|s| {
                    let src = self.refresh_if_stale(slot, s);
                    let bulk = if dest.len() <= SMALL_MAX {
                        s.take(dest);
                        false
                    } else {
                        fast_key_erasure(&mut s.key, &mut one_read_key);
                        true
                    };
                    s.calls += 1;
                    s.bytes = s
                        .bytes
                        .saturating_add(u32::try_from(dest.len()).unwrap_or(u32::MAX));
                    let due =
                        if s.calls >= CHECK_EVERY_CALLS || s.bytes as usize >= CHECK_EVERY_BYTES {
                            let b = s.bytes as usize;
                            s.calls = 0;
                            s.bytes = 0;
                            Some(b)
                        } else {
                            None
                        };
                    (src, bulk, due)
                });
                slot.count_read();
                drop(guard);
                if bulk {
                    // Bulk keystream outside every lock.
                    fill_erasing(&mut one_read_key, dest);
                }
                if let Some(bytes) = due {
                    self.check_schedule(bytes);
                }
                return Some(src);
            }
            idx += 1;
            if idx == n {
                idx = 0;
            }
        }
        Some(self.fill_from_node(self.slots[self.home_slot(cpu)].node, dest))
    }

    /// The node whose key a slot of `node` reads: its own once the pools are ready, node 0
    /// before (the seed's boot behaviour).
    #[inline]
    fn effective_node(&self, node: usize) -> usize {
        if self.ready.load(Ordering::Acquire) {
            node
        } else {
            0
        }
    }

    /// Gives the slot a new key if its key is from another node or an older generation.
    /// Returns the (node, generation) the slot key now descends from.
    #[inline]
    fn refresh_if_stale(&self, slot: &Slot, s: &mut SlotState) -> (usize, usize) {
        let eff = self.effective_node(slot.node);
        let current = self.nodes[eff].generation.load(Ordering::Acquire);
        if s.src_node as usize != eff || s.src_gen != current {
            let generation = self.nodes[eff].derive(&mut s.key);
            // Node indices are below MAX_NODES.
            #[allow(clippy::cast_possible_truncation)]
            s.rekeyed(eff as u32, generation);
        }
        (s.src_node as usize, s.src_gen)
    }

    /// Every probed slot was busy: a one-read key straight from the node, keystream outside
    /// the lock.
    #[cold]
    fn fill_from_node(&self, node: usize, dest: &mut [u8]) -> (usize, usize) {
        let eff = self.effective_node(node);
        let mut key = [0u8; KEY_LEN];
        let generation = self.nodes[eff].derive(&mut key);
        fill_erasing(&mut key, dest);
        (eff, generation)
    }

    /// Test hook: runs `f` while every slot lock is held, so reads take the fallback path.
    #[cfg(all(test, not(scalrand_loom)))]
    pub(crate) fn with_all_slots_busy<R>(&self, f: impl FnOnce() -> R) -> R {
        let guards: Vec<_> = self
            .slots
            .iter()
            .filter_map(|s| s.state.try_lock(usize::MAX))
            .collect();
        assert_eq!(guards.len(), self.slots.len());
        let r = f();
        drop(guards);
        r
    }
}

/// rand_core 0.10 interop: `&NodePools` is an `Rng + CryptoRng`, so rand's `RngExt` helpers
/// (`random_range`, `fill`, slice `shuffle`, ...) work on a shared reference.
///
/// ```
/// use rand_core::Rng;
/// use scalrand_pool::numa::{NodePools, Topology};
///
/// // `from_seed` needs no OS (use `NodePools::new` to seed from it under `std`).
/// let pools = NodePools::from_seed(Topology::from_nodes(vec![vec![0, 1]]), &[7; 32]).unwrap();
/// let mut rng = &pools;
/// let a = rng.next_u64();
/// let mut key = [0u8; 32];
/// rng.fill_bytes(&mut key);
/// # let _ = a;
/// ```
impl rand_core::TryRng for &NodePools {
    type Error = core::convert::Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut b = [0u8; 4];
        NodePools::fill_bytes(self, &mut b);
        Ok(u32::from_le_bytes(b))
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(NodePools::next_u64(self))
    }

    #[inline]
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Self::Error> {
        NodePools::fill_bytes(self, dest);
        Ok(())
    }
}

impl rand_core::TryCryptoRng for &NodePools {}
