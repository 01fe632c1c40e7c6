//! The input side: the input pool where entropy goes in, the [`NodePools`] calls that feed it,
//! and [`Unseeded`], the pools before they hold enough entropy to answer.
//!
//! Linux 5.17+ keeps its input pool as a running BLAKE2s hash (`drivers/char/random.c`); this
//! one is a running SHA-256 (already a dependency of the crate, for Fortuna). Inputs are
//! length-prefixed so that two different sequences of inputs never hash the same bytes. An
//! extraction finalises a copy of the hash into `seed`, answers
//! `SHA-256("scalrand numa out" || seed)` and restarts the hash from
//! `SHA-256("scalrand numa next" || seed)`: the answer cannot be recomputed from the state
//! left behind, and no two extractions answer the same bytes.
//!
//! The input pool lives in ordinary memory, so a fork child inherits it: it is the secret the
//! child's new keys are drawn from (with fresh OS bytes, its pid and its fork generation), and
//! it cannot recompute the parent's node keys, which came from earlier, one-way extractions.

use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use super::pools::NodePools;
use super::topology::{NumaError, Topology};

/// Bits the input pool must be credited with before the node pools are built from it (the
/// 128 bits of `POOL_INIT_BYTES` in Andi Kleen's 2015 patch).
pub const INIT_BITS: usize = 128;

/// Bits the input pool collects (once the pools are built) before it feeds the next node in
/// round-robin order.
pub const PUSH_BITS: usize = 256;

/// The running hash and the entropy accounting of the input pool.
pub(crate) struct InputPool {
    hash: Sha256,
    /// Bits credited since the pool was made (saturating).
    pub(crate) credited_bits: usize,
    /// Bits credited since entropy was last pushed to a node pool.
    pub(crate) pending_bits: usize,
    /// The next node the round-robin push feeds.
    pub(crate) next_node: usize,
}

impl InputPool {
    pub(crate) fn new() -> Self {
        let mut hash = Sha256::new();
        hash.update(b"scalrand numa input pool v1");
        Self {
            hash,
            credited_bits: 0,
            pending_bits: 0,
            next_node: 0,
        }
    }

    /// Mixes `data` in (Linux's `mix_pool_bytes`); credits nothing.
    pub(crate) fn mix(&mut self, data: &[u8]) {
        self.hash.update((data.len() as u64).to_le_bytes());
        self.hash.update(data);
    }

    /// Mixes `data` in and credits `bits` of entropy to it.
    pub(crate) fn credit(&mut self, data: &[u8], bits: usize) {
        self.mix(data);
        self.credited_bits = self.credited_bits.saturating_add(bits);
        self.pending_bits = self.pending_bits.saturating_add(bits);
    }

    /// 32 bytes for a node pool; the pool moves on so they are never produced again.
    pub(crate) fn extract(&mut self) -> [u8; 32] {
        // Digests are finalised into buffers that are wiped here; the hash states drop
        // zeroized (sha2's `zeroize` feature).
        let mut seed = [0u8; 32];
        self.hash.clone().finalize_into((&mut seed).into());
        let mut out = [0u8; 32];
        Sha256::new()
            .chain_update(b"scalrand numa out")
            .chain_update(seed)
            .finalize_into((&mut out).into());
        let mut next = [0u8; 32];
        Sha256::new()
            .chain_update(b"scalrand numa next")
            .chain_update(seed)
            .finalize_into((&mut next).into());
        self.hash = Sha256::new();
        self.hash.update(b"scalrand numa input pool v1 chained");
        self.hash.update(next);
        seed.zeroize();
        next.zeroize();
        out
    }
}

/// Node pools that do not hold [`INIT_BITS`] of credited entropy yet: a `no_std` host at boot
/// feeds them with [`add_entropy`](Self::add_entropy), then turns them into readable
/// [`NodePools`] with [`try_seed`](Self::try_seed). There is no way to read from them, so no
/// byte is ever derived from too little entropy (two unseeded instances could otherwise hand
/// out the same public bytes).
pub struct Unseeded {
    topology: Topology,
    input: alloc::boxed::Box<InputPool>,
}

impl core::fmt::Debug for Unseeded {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Unseeded")
            .field("nodes", &self.topology.node_count())
            .field("credited_bits", &self.input.credited_bits)
            .finish_non_exhaustive()
    }
}

impl Unseeded {
    pub(crate) fn new(topology: Topology) -> Result<Self, NumaError> {
        topology.validate()?;
        Ok(Self {
            topology,
            input: alloc::boxed::Box::new(InputPool::new()),
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
        self.input.credited_bits
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
    pub(crate) fn try_seed_in(self, heap: bool) -> Result<NodePools, Self> {
        if self.input.credited_bits < INIT_BITS {
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
    /// Pools for `topology` with no entropy yet: the host feeds them and turns them into
    /// `NodePools` with [`Unseeded::try_seed`].
    ///
    /// # Errors
    /// A bad topology (see the bad-input table in [`super`]).
    pub fn unseeded(topology: Topology) -> Result<Unseeded, NumaError> {
        Unseeded::new(topology)
    }

    /// Mixes `data` into the input pool and credits it with `entropy_bits` (the host's
    /// estimate; this crate never estimates). Every [`PUSH_BITS`] credited bits feed the next
    /// node pool in round-robin order, **at most one push per node per call**: a credit larger
    /// than `PUSH_BITS ×` nodes is capped there (the data is mixed in all the same), so one
    /// call holds the input lock for a bounded time whatever it claims.
    pub fn add_entropy(&self, data: &[u8], entropy_bits: usize) {
        let mut input = self.input.lock();
        input.with(|inp| {
            inp.credit(data, entropy_bits);
            let n = self.nodes.len();
            let mut pushes = 0;
            while inp.pending_bits >= PUSH_BITS && pushes < n {
                inp.pending_bits -= PUSH_BITS;
                let i = inp.next_node % n;
                inp.next_node = (i + 1) % n;
                let mut seed = inp.extract();
                self.nodes[i].reseed(b"push", &seed);
                seed.zeroize();
                pushes += 1;
            }
            if pushes == n {
                // Capped: the rest of this call's credit is dropped.
                inp.pending_bits = 0;
            }
        });
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

    pub(crate) fn fresh_entropy(&self) -> [u8; 32] {
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
    pub(crate) fn reseed_locked(
        &self,
        mut input: scalrand_os::LockGuard<'_, InputPool>,
        fresh: &[u8],
        bounded: bool,
    ) -> bool {
        let all = input.with(|inp| {
            inp.mix(fresh);
            let n = self.nodes.len();
            let start = inp.next_node % n;
            let mut all = true;
            for k in 0..n {
                let i = (start + k) % n;
                let mut seed = inp.extract();
                if bounded {
                    all &= self.nodes[i].try_reseed(b"reseed", &seed);
                } else {
                    self.nodes[i].reseed(b"reseed", &seed);
                }
                seed.zeroize();
            }
            all
        });
        drop(input);
        self.schedule.reseeded();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extractions_differ_and_depend_on_input() {
        let mut a = InputPool::new();
        let mut b = InputPool::new();
        a.mix(b"x");
        b.mix(b"y");
        let a1 = a.extract();
        assert_ne!(a1, b.extract());
        assert_ne!(a1, a.extract());
    }

    #[test]
    fn length_prefix_separates_inputs() {
        let mut a = InputPool::new();
        let mut b = InputPool::new();
        a.mix(b"ab");
        a.mix(b"c");
        b.mix(b"a");
        b.mix(b"bc");
        assert_ne!(a.extract(), b.extract());
    }
}
