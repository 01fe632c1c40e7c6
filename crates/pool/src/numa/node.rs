//! One node pool: a base key and its generation (Linux 5.18's `base_crng`, one per node as the
//! `nonblocking_node_pool[]` of Andi Kleen's "Make /dev/urandom scalable", LKML 2015-10-06).
//!
//! The key only moves forward: a reseed hashes the old key with 32 bytes from the input pool,
//! and every per-CPU key taken from it advances it by fast key erasure, so a per-CPU key
//! cannot be recomputed from the node key that is left. Each reseed bumps the generation; a
//! per-CPU slot whose key came from an older generation takes a new one before it answers.

use crate::chacha::{BLOCK_LEN, KEY_LEN, Rounds, Section, fast_key_erasure_in};
use crate::sha256::Sha256;
use scalrand_os::primitive::{AtomicUsize, Ordering};
use scalrand_os::wipe::zero;
use scalrand_os::{Lock, LockGuard};

/// Tries (each followed by a short spin, a `yield` every 64th) a read-path lock gets before it
/// gives up: a few microseconds, far longer than any holder keeps a node or input lock (one
/// ChaCha20 block, one SHA-256), short enough to bound a read from a signal handler that
/// interrupted the holder.
pub(crate) const LOCK_ATTEMPTS: u32 = 256;

/// What the node lock guards.
pub(crate) struct NodeKey {
    pub(crate) key: [u8; KEY_LEN],
    /// The generation of `key`; [`NodePool::generation`] mirrors it for lock-free checks.
    pub(crate) generation: usize,
    /// Where a derivation computes its block (zero between derivations): node memory, which a
    /// fork child gets zeroed, not a stack local.
    pub(crate) work: [u8; BLOCK_LEN],
}

impl Drop for NodeKey {
    fn drop(&mut self) {
        zero(&mut self.key);
    }
}

/// A node pool and its counters. Lives in wipe-on-fork memory: a fork child finds the key
/// zeroed and generation 0 (never current), and reseeds every node before answering.
pub(crate) struct NodePool {
    pub(crate) key: Lock<NodeKey>,
    /// Mirror of `NodeKey::generation`, stored (Release) while the lock is held, after the key
    /// changed. Generations start at 1 and 0 is never current, so a zeroed slot is stale.
    pub(crate) generation: AtomicUsize,
    /// Times the input pool fed this node.
    pub(crate) reseeds: AtomicUsize,
    /// Per-CPU (or one-read) keys derived from this node's key.
    pub(crate) derivations: AtomicUsize,
}

// SAFETY: all-zero `NodeKey` is a valid value (bytes and an integer) meaning "unkeyed"; a zero
// `Lock` word is free and zero atomics are 0. Loom builds keep nodes on the ordinary heap.
#[cfg(not(scalrand_loom))]
unsafe impl scalrand_os::wipe::ZeroValid for NodeKey {}
// SAFETY: as above.
#[cfg(not(scalrand_loom))]
unsafe impl scalrand_os::wipe::ZeroValid for NodePool {}

impl NodePool {
    pub(crate) fn new() -> Self {
        Self {
            key: Lock::new(NodeKey {
                work: [0; BLOCK_LEN],
                key: [0; KEY_LEN],
                generation: 1,
            }),
            generation: AtomicUsize::new(1),
            reseeds: AtomicUsize::new(0),
            derivations: AtomicUsize::new(0),
        }
    }

    /// Hashes `input` into the key under `label` and starts a new generation.
    pub(crate) fn reseed(&self, label: &[u8], input: &[u8]) {
        // SHA-256 (SHA-NI where the CPU has it) leaves the new key in stack and registers:
        // a section, ended after the lock is dropped.
        Section::run(|_| {
            let mut g = self.key.lock();
            g.with(|nk| Self::reseed_key(nk, &self.generation, label, input));
        });
        self.reseeds.fetch_add(1, Ordering::Relaxed);
    }

    /// The SHA-256 below holds the old key in its message schedule and block buffer, in
    /// frames below this one: callers wipe the stack after the lock is dropped.
    #[inline(never)]
    fn reseed_key(nk: &mut NodeKey, mirror: &AtomicUsize, label: &[u8], input: &[u8]) {
        let mut h = Sha256::new();
        h.update(b"scalrand numa node ");
        h.update(label);
        h.update(&nk.key);
        h.update(&(input.len() as u64).to_le_bytes());
        h.update(input);
        // Straight into the key: no copy of the new key is left on the stack.
        h.finalize_into(&mut nk.key);
        crate::chacha::observe_key(&nk.key);
        nk.generation = nk.generation.wrapping_add(1).max(1);
        mirror.store(nk.generation, Ordering::Release);
    }

    /// [`reseed`](Self::reseed) with a bounded wait for the node lock ([`LOCK_ATTEMPTS`]);
    /// `false` (nothing changed) if it stayed held.
    pub(crate) fn try_reseed(&self, label: &[u8], input: &[u8]) -> bool {
        // As in `reseed`.
        let done = Section::run(|_| {
            let Some(mut g) = self.key.lock_bounded(LOCK_ATTEMPTS) else {
                return false;
            };
            g.with(|nk| Self::reseed_key(nk, &self.generation, label, input));
            true
        });
        if done {
            self.reseeds.fetch_add(1, Ordering::Relaxed);
        }
        done
    }

    /// Takes a fresh key from the node key by fast key erasure; returns its generation, or
    /// `None` if the node lock stayed held through a bounded wait ([`LOCK_ATTEMPTS`]): the
    /// read path never waits without bound, since the holder may be its own thread,
    /// interrupted by a signal handler that reads. The caller may already hold a slot lock
    /// (lock order: slot, then node).
    pub(crate) fn try_derive(&self, out: &mut [u8; KEY_LEN]) -> Option<usize> {
        // The section ends after the lock is dropped: its wipe (the long one, with a
        // system call, when something interrupted it) holds up no other reader.
        let generation = Section::run(|s| {
            let mut g = self.key.lock_bounded(LOCK_ATTEMPTS)?;
            Some(g.with(|nk| {
                fast_key_erasure_in(s, &mut nk.key, out, Rounds::ChaCha20, &mut nk.work);
                nk.generation
            }))
        })?;
        self.derivations.fetch_add(1, Ordering::Relaxed);
        Some(generation)
    }

    /// [`try_derive`](Self::try_derive) waiting as long as it takes: only where no read can
    /// interrupt a holder (building the pools).
    pub(crate) fn derive(&self, out: &mut [u8; KEY_LEN]) -> usize {
        let generation = Section::run(|s| {
            let mut g: LockGuard<'_, NodeKey> = self.key.lock();
            g.with(|nk| {
                fast_key_erasure_in(s, &mut nk.key, out, Rounds::ChaCha20, &mut nk.work);
                nk.generation
            })
        });
        self.derivations.fetch_add(1, Ordering::Relaxed);
        generation
    }
}
