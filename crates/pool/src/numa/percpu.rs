//! Per-CPU state: a ChaCha20 key taken from the node key, and a batch of output.
//!
//! Linux 5.18's per-CPU `crng`, in user space: each CPU of the topology owns one slot,
//! cache-padded so two CPUs never share a line. A reader locks its CPU's slot with a
//! non-blocking try-lock; if another thread holds it (two threads on one CPU, one of them
//! preempted inside), the reader moves on to the next slot, and after [`MAX_PROBES`] busy
//! slots it takes a one-read key from the node directly. Nothing here waits.
//!
//! The batch follows Bernstein's fast-key-erasure RNG: a refill writes [`BATCH_LEN`] bytes of
//! keystream under the slot key, the first 32 become the new slot key (the old one is gone),
//! the rest is handed out to small reads and zeroed as it goes.

use super::chacha::{KEY_LEN, keystream};
use super::sync::{AtomicUsize, Lock, Ordering};
use zeroize::Zeroize;

/// Bytes of keystream per batch refill (16 blocks); 32 of them become the next slot key.
pub const BATCH_LEN: usize = 1024;

/// Reads up to this length are served from the batch; longer ones derive a one-read key and
/// generate their keystream outside every lock.
pub const SMALL_MAX: usize = 256;

/// Busy slots a reader tries before it falls back to a one-read key from the node.
pub const MAX_PROBES: usize = 4;

/// What a slot lock guards. `repr(C)` with the lock word in front: lock word, key and the
/// fields every read touches fill exactly the first 64-byte line of the slot on 64-bit
/// targets; the batch follows.
#[repr(C)]
pub(crate) struct SlotState {
    pub(crate) key: [u8; KEY_LEN],
    /// Generation of the node key this key came from; 0 means "never keyed".
    pub(crate) src_gen: usize,
    /// Node this key came from.
    pub(crate) src_node: u32,
    /// Next unread byte of `batch`; `BATCH_LEN` when empty.
    pub(crate) pos: u32,
    /// Reads and bytes since this slot last looked at the reseed schedule.
    pub(crate) calls: u32,
    pub(crate) bytes: u32,
    pub(crate) batch: [u8; BATCH_LEN],
}

impl SlotState {
    fn new() -> Self {
        Self {
            key: [0; KEY_LEN],
            src_gen: 0,
            src_node: 0,
            pos: BATCH_LEN as u32,
            calls: 0,
            bytes: 0,
            batch: [0; BATCH_LEN],
        }
    }

    /// Installs a key from `node`'s generation `generation` and drops the old batch.
    pub(crate) fn rekeyed(&mut self, node: u32, generation: usize) {
        self.src_node = node;
        self.src_gen = generation;
        // Plain stores are enough: the batch lives on in the heap and is read again, so the
        // compiler cannot drop them as dead.
        self.batch.fill(0);
        self.pos = BATCH_LEN as u32;
    }

    fn refill(&mut self) {
        keystream(&self.key, 0, &mut self.batch);
        self.key.copy_from_slice(&self.batch[..KEY_LEN]);
        self.batch[..KEY_LEN].fill(0);
        self.pos = KEY_LEN as u32;
    }

    /// Serves `dest` from the batch, zeroing what it hands out, refilling as needed.
    pub(crate) fn take(&mut self, dest: &mut [u8]) {
        let mut off = 0;
        while off < dest.len() {
            let mut pos = self.pos as usize;
            if pos >= BATCH_LEN {
                self.refill();
                pos = KEY_LEN;
            }
            let n = (dest.len() - off).min(BATCH_LEN - pos);
            let src = &mut self.batch[pos..pos + n];
            dest[off..off + n].copy_from_slice(src);
            src.fill(0);
            // pos + n <= BATCH_LEN, which fits in u32.
            #[allow(clippy::cast_possible_truncation)]
            {
                self.pos = (pos + n) as u32;
            }
            off += n;
        }
    }
}

impl Drop for SlotState {
    fn drop(&mut self) {
        self.key.zeroize();
        self.batch.zeroize();
    }
}

/// One CPU's slot (`repr(C)`: the lock and its state first, see [`SlotState`]).
#[repr(C)]
pub(crate) struct Slot {
    pub(crate) state: Lock<SlotState>,
    /// The node of the CPU this slot belongs to.
    pub(crate) node: usize,
    /// Reads served, counted with a relaxed load and store while the slot lock is held
    /// (no read-modify-write on the hot path).
    pub(crate) reads: AtomicUsize,
}

impl Slot {
    pub(crate) fn new(node: usize) -> Self {
        Self {
            state: Lock::new(SlotState::new()),
            node,
            reads: AtomicUsize::new(0),
        }
    }

    /// Counts one read; only called with the slot lock held.
    #[inline]
    pub(crate) fn count_read(&self) {
        let r = self.reads.load(Ordering::Relaxed);
        self.reads.store(r.wrapping_add(1), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_zeroes_what_it_hands_out_and_rotates_the_key() {
        let mut s = SlotState::new();
        s.key = [9; 32];
        let mut a = [0u8; 40];
        s.take(&mut a);
        assert_ne!(s.key, [9; 32], "refill replaced the key");
        assert_eq!(s.pos as usize, KEY_LEN + 40);
        assert!(s.batch[..s.pos as usize].iter().all(|&b| b == 0));
        let mut ks = [0u8; BATCH_LEN];
        keystream(&[9; 32], 0, &mut ks);
        assert_eq!(a[..], ks[32..72]);
        assert_eq!(s.key[..], ks[..32]);
    }

    #[test]
    fn take_crosses_refills() {
        let mut s = SlotState::new();
        let mut big = [0u8; 3000];
        s.take(&mut big);
        assert!(s.pos as usize <= BATCH_LEN);
        // 3000 bytes over three refills of 992: none of the output blocks repeats.
        let chunks: alloc::vec::Vec<&[u8]> = big.chunks(64).collect();
        for i in 0..chunks.len() {
            for j in 0..i {
                assert_ne!(chunks[i], chunks[j]);
            }
        }
    }
}
