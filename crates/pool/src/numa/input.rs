//! The input pool: where entropy goes in, and how it feeds the node pools (at boot, by
//! round-robin pushes, at every reseed), which it is handed as an argument.
//!
//! Linux 5.17+ keeps its input pool as a running BLAKE2s hash (`drivers/char/random.c`); this
//! one is a running SHA-256 (the crate's own, which Fortuna uses too). Inputs are
//! length-prefixed so that two different sequences of inputs never hash the same bytes. An
//! extraction finalises a copy of the hash into `seed`, answers
//! `SHA-256("scalrand numa out" || seed)` and restarts the hash from
//! `SHA-256("scalrand numa next" || seed)`: the answer cannot be recomputed from the state
//! left behind, and no two extractions answer the same bytes.
//!
//! The input pool lives in ordinary memory, so a fork child inherits it: it is the secret the
//! child's new keys are drawn from (with fresh OS bytes, its pid and its fork generation), and
//! it cannot recompute the parent's node keys, which came from earlier, one-way extractions.

use crate::sha256::Sha256;
use scalrand_os::pad::CachePadded;
use scalrand_os::wipe::zero;

use super::node::NodePool;

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
    credited_bits: usize,
    /// Bits credited since entropy was last pushed to a node pool.
    pending_bits: usize,
    /// The next node the round-robin push feeds.
    next_node: usize,
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

    /// Entropy credited since the pool was made, in bits (saturating).
    pub(crate) fn credited_bits(&self) -> usize {
        self.credited_bits
    }

    /// Mixes `data` in (Linux's `mix_pool_bytes`); credits nothing.
    pub(crate) fn mix(&mut self, data: &[u8]) {
        self.hash.update(&(data.len() as u64).to_le_bytes());
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
        // zeroized (`Sha256`'s `Drop`).
        let mut seed = [0u8; 32];
        self.hash.clone().finalize_into(&mut seed);
        let mut out = [0u8; 32];
        Sha256::new()
            .chain_update(b"scalrand numa out")
            .chain_update(&seed)
            .finalize_into(&mut out);
        let mut next = [0u8; 32];
        Sha256::new()
            .chain_update(b"scalrand numa next")
            .chain_update(&seed)
            .finalize_into(&mut next);
        self.hash = Sha256::new();
        self.hash.update(b"scalrand numa input pool v1 chained");
        self.hash.update(&next);
        zero(&mut seed);
        zero(&mut next);
        out
    }

    /// Keys `nodes` at boot (the `init_node_pools` of Andi Kleen's 2015 patch): node 0 from
    /// an extraction, every other node from node 0's output, each with its own bytes, so no
    /// two nodes run in lock-step. The round-robin push starts again at node 0.
    pub(crate) fn seed_nodes(&mut self, nodes: &[CachePadded<NodePool>]) {
        let mut seed = self.extract();
        nodes[0].reseed(b"init", &seed);
        for node in nodes.iter().skip(1) {
            nodes[0].derive(&mut seed);
            node.reseed(b"init", &seed);
        }
        zero(&mut seed);
        self.pending_bits = 0;
        self.next_node = 0;
    }

    /// Mixes `data` in, credits it with `bits`, and feeds every [`PUSH_BITS`] credited bits
    /// to the next of `nodes` in round-robin order, **at most one push per node**: a larger
    /// credit is capped there (the data is mixed in all the same), so the work is bounded
    /// whatever the credit claims.
    pub(crate) fn credit_and_push(
        &mut self,
        data: &[u8],
        bits: usize,
        nodes: &[CachePadded<NodePool>],
    ) {
        self.credit(data, bits);
        let n = nodes.len();
        let mut pushes = 0;
        while self.pending_bits >= PUSH_BITS && pushes < n {
            self.pending_bits -= PUSH_BITS;
            let i = self.next_node % n;
            self.next_node = (i + 1) % n;
            let mut seed = self.extract();
            nodes[i].reseed(b"push", &seed);
            zero(&mut seed);
            pushes += 1;
        }
        if pushes == n {
            // Capped: the rest of this credit is dropped.
            self.pending_bits = 0;
        }
    }

    /// Mixes `fresh` in and reseeds every one of `nodes`, each with its own extraction, in
    /// round-robin order from the node the last push fed. With `bounded`, a node whose lock
    /// stays held through a bounded wait is skipped (its holder may be this thread,
    /// interrupted by the signal handler that runs this); returns whether every node was
    /// reseeded.
    pub(crate) fn reseed_nodes(
        &mut self,
        fresh: &[u8],
        nodes: &[CachePadded<NodePool>],
        bounded: bool,
    ) -> bool {
        self.mix(fresh);
        let n = nodes.len();
        let start = self.next_node % n;
        let mut all = true;
        for k in 0..n {
            let i = (start + k) % n;
            let mut seed = self.extract();
            if bounded {
                all &= nodes[i].try_reseed(b"reseed", &seed);
            } else {
                nodes[i].reseed(b"reseed", &seed);
            }
            zero(&mut seed);
        }
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
