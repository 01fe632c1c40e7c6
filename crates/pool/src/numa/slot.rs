//! One CPU's slot and the slot's own read: a ChaCha20 key taken from the node key, and a batch
//! of output.
//!
//! Linux 5.18's per-CPU `crng` (`crng_make_state`, `drivers/char/random.c`), in user space:
//! each CPU of the topology owns one slot, cache-padded so two CPUs never share a line. The
//! batch follows Bernstein's fast-key-erasure RNG ("Fast-key-erasure random-number
//! generators", 2017): a refill writes [`BATCH_LEN`] bytes of keystream under the slot key, the
//! first 32 become the new slot key (the old one is gone), the rest is handed out to small
//! reads and zeroed as it goes.
//!
//! Slots live in wipe-on-fork memory (see the pools' fork docs), so the all-zero state must be
//! safe: a zero `src_gen` is never current (node generations start at 1) and a zero `left`
//! is an empty batch. Routing (which slot, probing, the node fallback) is `pools.rs`'s job; a
//! slot never sees the pools that own it: its read takes its node's generation word, a source
//! of fresh node keys (where the pools make their fork check) and the rounds as arguments.

use super::policy::{ScheduleCount, is_stale};
use super::topology::NumaError;
use crate::chacha::{
    KEY_LEN, OneReadKey, Rounds, Section, fast_key_erasure_in, fill_erasing, refill_batch,
};
use scalrand_os::Lock;
use scalrand_os::primitive::{AtomicUsize, Ordering};
use scalrand_os::wipe::zero;

/// Bytes of keystream per batch refill (112 blocks: whole passes of the 16-block and the
/// 8-block backends); 32 of them become the next slot key, the other 7136 serve small reads.
/// A refill's fixed cost (taking and putting back the slot key, the publish, the section's
/// end) is shared by 223 reads of 32 bytes.
///
/// Under Miri it is 2048 (32 blocks, still whole passes): the slot code is the same for any
/// batch length, and the interpreter spends its time generating keystream.
pub const BATCH_LEN: usize = if cfg!(miri) { 2048 } else { 7168 };

/// Reads up to this length are served from the batch; longer ones derive a one-read key and
/// generate their keystream outside every lock.
pub const SMALL_MAX: usize = 256;

/// Busy slots a reader tries, all of its own node, before it falls back to a one-read key
/// from the node.
pub const MAX_PROBES: usize = 4;

/// The holder tag of every slot lock (locked and rseq slots) when slots are wipe-on-fork
/// memory: any nonzero value, since such a lock never outlives the process image that took
/// it (a fork child finds the lock word zero), so it needs no owner and is never taken over.
pub(crate) const WIPED_SLOT_TAG: usize = 1;

/// What a slot lock guards. `repr(C)` with the lock word in front: lock word, key and the
/// fields every read touches fill exactly the first 64-byte line of the slot on 64-bit
/// targets; the batch follows.
#[repr(C)]
pub(crate) struct SlotState {
    pub(crate) key: [u8; KEY_LEN],
    /// Generation of the node key this key came from; 0 means "never keyed" (stale).
    pub(crate) src_gen: usize,
    /// Node this key came from.
    pub(crate) src_node: u32,
    /// Unread bytes at the end of `batch`; 0 when empty.
    pub(crate) left: u32,
    /// Reads and bytes since this slot last looked at the reseed schedule.
    pub(crate) schedule: ScheduleCount,
    pub(crate) batch: [u8; BATCH_LEN],
}

impl SlotState {
    pub(crate) fn new() -> Self {
        Self {
            key: [0; KEY_LEN],
            src_gen: 0,
            src_node: 0,
            left: 0,
            schedule: ScheduleCount::new(),
            batch: [0; BATCH_LEN],
        }
    }

    /// Erases the key and the batch; the slot is stale until its next refresh.
    pub(crate) fn wipe(&mut self) {
        zero(&mut self.key);
        zero(&mut self.batch);
        self.src_gen = 0;
        self.left = 0;
    }

    /// Installs a key from `node`'s generation `generation` and drops the old batch.
    pub(crate) fn rekeyed(&mut self, node: u32, generation: usize) {
        self.src_node = node;
        self.src_gen = generation;
        // Plain stores are enough: the batch lives on in the heap and is read again, so the
        // compiler cannot drop them as dead.
        self.batch.fill(0);
        self.left = 0;
    }

    /// Gives the slot a new key from `fresh_key` if its key is from another node than `node`
    /// or from an older generation than `generation` holds. Returns the (node, generation)
    /// the slot key now descends from.
    ///
    /// # Errors
    /// From `fresh_key`; the slot is then erased (stale).
    #[inline]
    fn refresh_if_stale(
        &mut self,
        node: usize,
        generation: &AtomicUsize,
        fresh_key: impl FnOnce(&mut [u8; KEY_LEN]) -> Result<usize, NumaError>,
    ) -> Result<(usize, usize), NumaError> {
        let current = generation.load(Ordering::Acquire);
        // An all-zero key is what wiped memory holds: never used, whatever generation a read
        // that a fork interrupted wrote back beside it (four compares).
        let wiped = key_is_zero(&self.key);
        if wiped || is_stale(self.src_gen, self.src_node as usize, node, current) {
            let generation = match fresh_key(&mut self.key) {
                Ok(g) => g,
                Err(e) => {
                    self.wipe();
                    return Err(e);
                }
            };
            // Node indices are below MAX_NODES.
            #[allow(clippy::cast_possible_truncation)]
            self.rekeyed(node as u32, generation);
        }
        Ok((self.src_node as usize, self.src_gen))
    }

    fn refill(&mut self, rounds: Rounds) {
        refill_batch(&mut self.key, &mut self.batch, rounds);
        self.left = (BATCH_LEN - KEY_LEN) as u32;
    }

    /// Serves `dest` from the batch, zeroing what it hands out, refilling as needed.
    #[inline]
    pub(crate) fn take(&mut self, dest: &mut [u8], rounds: Rounds) {
        // More than a batch holds only after a fork wiped the slot under a read that then
        // wrote back a length: an empty batch, never an index past it.
        if self.left as usize > BATCH_LEN - KEY_LEN {
            self.left = 0;
        }
        let left = self.left as usize;
        if dest.len() <= left {
            // The common case: one piece of the current batch.
            let pos = BATCH_LEN - left;
            move_and_wipe(&mut self.batch[pos..pos + dest.len()], dest);
            // From the local `left` (never a subtraction from memory that a fork may have
            // zeroed meanwhile); it fits in u32.
            #[allow(clippy::cast_possible_truncation)]
            {
                self.left = (left - dest.len()) as u32;
            }
        } else {
            self.take_across_refills(dest, rounds);
        }
    }

    /// `take` for a request the current batch cannot cover.
    #[cold]
    #[inline(never)]
    fn take_across_refills(&mut self, dest: &mut [u8], rounds: Rounds) {
        let mut off = 0;
        while off < dest.len() {
            if self.left == 0 {
                self.refill(rounds);
            }
            let left = (self.left as usize).min(BATCH_LEN - KEY_LEN);
            let pos = BATCH_LEN - left;
            let n = (dest.len() - off).min(left);
            move_and_wipe(&mut self.batch[pos..pos + n], &mut dest[off..off + n]);
            // n <= left, which fits in u32 (from the local, as above).
            #[allow(clippy::cast_possible_truncation)]
            {
                self.left = (left - n) as u32;
            }
            off += n;
        }
    }
}

/// Whether `key` is all zero, without loading it into a register on x86_64: four compares of
/// memory with zero, so that a signal delivered at any of them saves no key word in its frame.
/// This check runs outside every section (on every read of a locked slot), where nothing
/// wipes a signal frame afterwards; a plain `==` compiled to 16-byte vector loads, which put
/// half of the slot key in an `xmm` register (`tests/signal_frames.rs` found it there). Other
/// architectures have no compare with a memory operand: there each byte passes through a
/// general-purpose register on its own.
#[inline(always)]
fn key_is_zero(key: &[u8; KEY_LEN]) -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        let zero: u32;
        // SAFETY: reads the 32 bytes of `key` (a live reference); writes only `zero` and the
        // flags; no stack use.
        unsafe {
            core::arch::asm!(
                "xor {z:e}, {z:e}",
                "cmp qword ptr [{k}], 0",
                "jne 2f",
                "cmp qword ptr [{k} + 8], 0",
                "jne 2f",
                "cmp qword ptr [{k} + 16], 0",
                "jne 2f",
                "cmp qword ptr [{k} + 24], 0",
                "jne 2f",
                "inc {z:e}",
                "2:",
                k = in(reg) key.as_ptr(),
                z = out(reg) zero,
                options(readonly, nostack),
            );
        }
        zero != 0
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        // Volatile byte loads: never merged into vector loads.
        key.iter()
            // SAFETY: a byte of a live reference.
            .fold(0u8, |acc, b| acc | unsafe { core::ptr::read_volatile(b) })
            == 0
    }
}

/// Copies `src` into `dest` (same length) and zeroes `src`. Reads of up to 64 bytes, the
/// common case of a CSPRNG (keys, nonces, tokens), use two overlapping fixed-size moves
/// inline instead of calls to `memcpy` and `memset`, whose call overhead would dominate a
/// 32-byte read.
#[inline]
fn move_and_wipe(src: &mut [u8], dest: &mut [u8]) {
    fn pair<const K: usize>(src: &mut [u8], dest: &mut [u8]) {
        // Two K-byte pieces at both ends, overlapping when len < 2K (K <= len <= 2K).
        let last = src.len() - K;
        let head: [u8; K] = read_at(src, 0);
        let tail: [u8; K] = read_at(src, last);
        dest[..K].copy_from_slice(&head);
        dest[last..].copy_from_slice(&tail);
        src[..K].copy_from_slice(&[0; K]);
        src[last..].copy_from_slice(&[0; K]);
    }
    fn read_at<const K: usize>(s: &[u8], at: usize) -> [u8; K] {
        let mut out = [0u8; K];
        out.copy_from_slice(&s[at..at + K]);
        out
    }
    debug_assert_eq!(src.len(), dest.len());
    match src.len() {
        0 => {}
        1..=7 => {
            for (d, s) in dest.iter_mut().zip(src.iter_mut()) {
                *d = *s;
                *s = 0;
            }
        }
        8..=16 => pair::<8>(src, dest),
        17..=32 => pair::<16>(src, dest),
        33..=64 => pair::<32>(src, dest),
        _ => {
            dest.copy_from_slice(src);
            src.fill(0);
        }
    }
}

impl Drop for SlotState {
    fn drop(&mut self) {
        zero(&mut self.key);
        zero(&mut self.batch);
    }
}

/// What a slot's [`read`](Slot::read) served.
pub(crate) struct Served {
    /// The (node, generation) of the node key the output descends from.
    pub(crate) src: (usize, usize),
    /// Set when [`ScheduleCount::count`] says the slot is due: the bytes since it last was,
    /// for the reader to count against the reseed schedule.
    pub(crate) check_schedule: Option<usize>,
}

/// One CPU's slot (`repr(C)`: the lock and its state first, see [`SlotState`]). Which node
/// it belongs to is configuration and lives outside, in ordinary memory.
#[repr(C)]
pub(crate) struct Slot {
    pub(crate) state: Lock<SlotState>,
    /// Reads served, counted with a relaxed load and store while the slot lock is held
    /// (no read-modify-write on the hot path).
    pub(crate) reads: AtomicUsize,
}

// SAFETY: all-zero `SlotState` is a valid value (byte arrays and integers) and means "stale,
// empty batch" (module docs); a zero `Lock` word is a free lock, a zero `AtomicUsize` is 0.
// Loom's atomics are not plain words, so loom builds keep slots on the ordinary heap.
#[cfg(not(scalrand_loom))]
unsafe impl scalrand_os::wipe::ZeroValid for SlotState {}
// SAFETY: as above.
#[cfg(not(scalrand_loom))]
unsafe impl scalrand_os::wipe::ZeroValid for Slot {}

impl Slot {
    pub(crate) fn new() -> Self {
        Self {
            state: Lock::new(SlotState::new()),
            reads: AtomicUsize::new(0),
        }
    }

    /// Counts one read; only called with the slot lock held.
    #[inline]
    fn count_read(&self) {
        let r = self.reads.load(Ordering::Relaxed);
        self.reads.store(r.wrapping_add(1), Ordering::Relaxed);
    }

    /// Erases the slot's key and batch, taking its lock (and taking over one that a parent's
    /// thread held at a fork: see [`Lock::lock`]).
    pub(crate) fn wipe(&self) {
        self.state.lock().with(SlotState::wipe);
    }

    /// Reads served so far.
    pub(crate) fn reads(&self) -> usize {
        self.reads.load(Ordering::Relaxed)
    }

    /// The slot's own read: if the slot is free (its lock taken with `tag`), serves `dest`
    /// from it; `Ok(None)` if another thread holds it.
    ///
    /// `node` is the slot's node and `generation` that node's generation word; a key from
    /// another node or an older generation is stale and is replaced by `fresh_key`, which
    /// writes a key from the node and returns its generation. Under the slot lock: refresh a
    /// stale key, then either take a small read from the batch or, for a large read (`bulk`
    /// given: the caller's frame of wipe-on-fork memory), step the slot key once (fast key
    /// erasure) for a one-read key in that frame. After unlocking: a large read's keystream.
    ///
    /// # Errors
    /// From `fresh_key`; the slot is then erased (stale) and `dest` untouched.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn read(
        &self,
        tag: usize,
        node: usize,
        generation: &AtomicUsize,
        dest: &mut [u8],
        rounds: Rounds,
        mut bulk: Option<&mut OneReadKey>,
        fresh_key: impl FnOnce(&mut [u8; KEY_LEN]) -> Result<usize, NumaError>,
    ) -> Result<Option<Served>, NumaError> {
        // Under the slot lock: the key refreshed if stale, then a large read's one-read key
        // derived (in the section it is given) or a small read served from the batch. `None`
        // if the lock was held.
        let locked = |bulk: Option<(&mut Section, &mut OneReadKey)>| -> Result<_, NumaError> {
            let Some(mut guard) = self.state.try_lock_tagged(tag) else {
                return Ok(None);
            };
            let served = guard.with(|s| {
                let src = s.refresh_if_stale(node, generation, fresh_key)?;
                match bulk {
                    Some((sec, k)) => {
                        let (key, block) = (&mut k.key, &mut k.block0);
                        fast_key_erasure_in(sec, &mut s.key, key, Rounds::ChaCha20, block);
                    }
                    None => s.take(dest, rounds),
                }
                let check_schedule = s.schedule.count(1, dest.len());
                Ok::<_, NumaError>(Served {
                    src,
                    check_schedule,
                })
            })?;
            self.count_read();
            drop(guard);
            Ok(Some(served))
        };
        // A large read's key derivation runs in a section that ends after the slot lock is
        // dropped (its wipe holds up no other reader of this CPU); a small read's batch
        // refills run sections of their own.
        let locked = match bulk.as_deref_mut() {
            Some(k) => Section::run(|sec| locked(Some((sec, k)))),
            None => locked(None),
        }?;
        let Some(served) = locked else {
            return Ok(None);
        };
        if let Some(k) = bulk {
            // Bulk keystream outside every lock; `fill_erasing` wipes the key.
            fill_erasing(k, dest, rounds);
        }
        Ok(Some(served))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chacha::keystream;

    #[test]
    fn take_zeroes_what_it_hands_out_and_rotates_the_key() {
        let mut s = SlotState::new();
        s.key = [9; 32];
        let mut a = [0u8; 40];
        s.take(&mut a, Rounds::ChaCha20);
        assert_ne!(s.key, [9; 32], "refill replaced the key");
        let pos = BATCH_LEN - s.left as usize;
        assert_eq!(pos, KEY_LEN + 40);
        assert!(s.batch[..pos].iter().all(|&b| b == 0));
        let mut ks = [0u8; BATCH_LEN];
        keystream(&[9; 32], 0, &mut ks, Rounds::ChaCha20);
        assert_eq!(a[..], ks[32..72]);
        assert_eq!(s.key[..], ks[..32]);
    }

    #[test]
    fn move_and_wipe_copies_and_zeroes_every_length() {
        // Every branch of the small-copy switch (0, 1..=7, pairs of 8, 16 and 32, longer),
        // at every offset parity, against a byte-by-byte reference.
        for len in 0..=80usize {
            for off in 0..3usize {
                let mut src: alloc::vec::Vec<u8> = (0..len + off).map(|i| i as u8 ^ 0xa5).collect();
                let want = src[off..].to_vec();
                let mut dest = alloc::vec![0x11u8; len];
                move_and_wipe(&mut src[off..], &mut dest);
                assert_eq!(dest, want, "len {len} off {off}");
                assert!(src[off..].iter().all(|&b| b == 0), "len {len} off {off}");
                assert!(
                    src[..off]
                        .iter()
                        .enumerate()
                        .all(|(i, &b)| b == i as u8 ^ 0xa5)
                );
            }
        }
    }

    #[test]
    fn take_serves_the_keystream_in_order_for_every_small_length() {
        // Successive reads of lengths 1, 2, 3, ... walk the batch (and across refills) in
        // order: the concatenation equals the keystream of the successive slot keys.
        let mut s = SlotState::new();
        s.key = [3; 32];
        let mut got = alloc::vec::Vec::new();
        for len in 1..=70usize {
            let mut b = alloc::vec![0u8; len];
            s.take(&mut b, Rounds::ChaCha12);
            got.extend_from_slice(&b);
        }
        let mut want = alloc::vec::Vec::new();
        let mut key = [3u8; 32];
        while want.len() < got.len() {
            let mut ks = [0u8; BATCH_LEN];
            keystream(&key, 0, &mut ks, Rounds::ChaCha12);
            key.copy_from_slice(&ks[..KEY_LEN]);
            want.extend_from_slice(&ks[KEY_LEN..]);
        }
        assert_eq!(got[..], want[..got.len()]);
    }

    #[test]
    fn take_crosses_refills() {
        let mut s = SlotState::new();
        let mut big = alloc::vec![0u8; BATCH_LEN + 3000];
        s.take(&mut big, Rounds::ChaCha20);
        assert!(s.left as usize <= BATCH_LEN);
        // Over two refills of `BATCH_LEN - KEY_LEN` bytes: none of the output blocks repeats.
        let chunks: alloc::vec::Vec<&[u8]> = big.chunks(64).collect();
        for i in 0..chunks.len() {
            for j in 0..i {
                assert_ne!(chunks[i], chunks[j]);
            }
        }
    }

    #[test]
    fn the_zero_state_is_stale_and_empty() {
        // What a fork child finds in wipe-on-fork memory.
        let s = SlotState::new();
        assert_eq!(s.src_gen, 0);
        assert_eq!(s.left, 0, "an empty batch, never zero bytes handed out");
    }
}
