//! The input pool: where entropy goes in (the seed's `input_pool`).
//!
//! Linux 5.17+ keeps its input pool as a running BLAKE2s hash; this one is a running SHA-256
//! (already a dependency of the crate, for Fortuna). Inputs are length-prefixed so that two
//! different sequences of inputs never hash the same bytes. An extraction finalises a copy of
//! the hash into `seed`, answers `SHA-256("scalrand numa out" || seed)` and restarts the hash
//! from `SHA-256("scalrand numa next" || seed)`: the answer cannot be recomputed from the
//! state left behind, and no two extractions answer the same bytes.

use sha2::{Digest, Sha256};
use zeroize::Zeroize;

/// The running hash and the entropy accounting of the seed's input pool.
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

    /// Mixes `data` in (the seed's `mix_pool_bytes`); credits nothing.
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
        let mut seed: [u8; 32] = self.hash.clone().finalize().into();
        let out: [u8; 32] = Sha256::new()
            .chain_update(b"scalrand numa out")
            .chain_update(seed)
            .finalize()
            .into();
        let mut next: [u8; 32] = Sha256::new()
            .chain_update(b"scalrand numa next")
            .chain_update(seed)
            .finalize()
            .into();
        self.hash = Sha256::new();
        self.hash.update(b"scalrand numa input pool v1 chained");
        self.hash.update(next);
        seed.zeroize();
        next.zeroize();
        out
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
