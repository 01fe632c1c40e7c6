//! The read path of [`NodePools`]: the rseq slot for small reads where it runs, else the home
//! slot of the caller's CPU, probing its node's other slots (never another node's) when it is
//! busy, a one-read key from the node when all are, and a key from the OS when the node's lock
//! stays held; and `rand_core`'s traits on top.

use super::*;

impl NodePools {
    /// Fills `dest` with cryptographically secure random bytes from the pool of the node this
    /// thread runs on. Never blocks: every lock on the way is tried for a bounded time.
    ///
    /// Async-signal-safe with `std` on Linux: a read from a signal handler that interrupted
    /// a read on the same thread finds the locks that read holds busy and takes its key from
    /// the OS instead (`getrandom(2)`, which is async-signal-safe) — never a spin.
    ///
    /// # Panics
    /// Where [`try_fill_bytes`](Self::try_fill_bytes) returns an error: in a fork child whose
    /// rekey got no fresh entropy from the OS (fail closed: the child has nothing of its own
    /// to answer with), or, without `std`, when a lock stayed held (a read from an interrupt
    /// handler that interrupted a read). Use `try_fill_bytes` where that must not panic.
    #[inline]
    pub fn fill_bytes(&self, dest: &mut [u8]) {
        if let Some(r) = &self.rseq
            && !dest.is_empty()
            && dest.len() <= rseq::MAX_LEN
            && self.rseq_fill(r, dest)
        {
            return;
        }
        self.fill_bytes_locked(dest);
    }

    /// As [`fill_bytes`](Self::fill_bytes), with the error instead of the panic.
    ///
    /// # Errors
    /// [`NumaError::Entropy`] in a fork child whose rekey got no fresh OS entropy (a later
    /// call tries again); [`NumaError::Busy`] without `std` when a lock stayed held. `dest`
    /// is then unspecified (never the parent's output).
    #[inline]
    pub fn try_fill_bytes(&self, dest: &mut [u8]) -> Result<(), NumaError> {
        if let Some(r) = &self.rseq
            && !dest.is_empty()
            && dest.len() <= rseq::MAX_LEN
            && self.rseq_fill(r, dest)
        {
            return Ok(());
        }
        self.count_left_rseq(dest.len());
        self.fill_traced(scalrand_os::cpu::current().unwrap_or(0), dest)
            .map(|_| ())
    }

    /// Counts a read of `len` bytes that the rseq path would have served but did not (its
    /// refill failed), for [`__left_rseq_reads`](Self::__left_rseq_reads).
    #[inline]
    fn count_left_rseq(&self, len: usize) {
        if self.rseq.is_some() && len != 0 && len <= rseq::MAX_LEN {
            self.left_rseq.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Fills `dest` (1 to `rseq::MAX_LEN` bytes) from the calling CPU's rseq slot; `false`
    /// when the read must take the locked path instead. Inline where a whole number of words
    /// is taken on the first try; everything else is out of line.
    #[inline]
    fn rseq_fill(&self, r: &RseqSlots, dest: &mut [u8]) -> bool {
        // The refill finds the slots itself: a closure of one pointer keeps the inline take
        // section's registers free.
        r.fill(dest, || self.rseq_refill())
    }

    /// Refills the calling CPU's rseq slot from its node: `false` when the read should take
    /// the locked path (see `RseqSlots::refill`).
    #[cold]
    #[inline(never)]
    fn rseq_refill(&self) -> bool {
        let Some(r) = &self.rseq else {
            return false;
        };
        // SAFETY: `self.nodes` lives as long as `self`, and so as long as `r`.
        unsafe {
            r.refill(
                &self.nodes,
                self.rounds,
                |node, key| self.node_key(node, key).ok(),
                |bytes| self.check_schedule(bytes),
            )
        }
    }

    /// [`NodePools::fill_bytes`] through the locked slots: out of line, so that the rseq path
    /// above inlines into a caller's loop.
    #[inline(never)]
    fn fill_bytes_locked(&self, dest: &mut [u8]) {
        self.count_left_rseq(dest.len());
        self.fill_bytes_on_cpu(scalrand_os::cpu::current().unwrap_or(0), dest);
    }

    /// A random `u64` (little-endian bytes from [`NodePools::fill_bytes`]).
    ///
    /// # Panics
    /// As [`fill_bytes`](Self::fill_bytes).
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
    ///
    /// # Panics
    /// As [`fill_bytes`](Self::fill_bytes).
    #[inline]
    #[allow(clippy::panic)] // Fail closed: no secure answer exists (argued on `fill_bytes`).
    pub fn fill_bytes_on_cpu(&self, cpu: usize, dest: &mut [u8]) {
        if let Err(e) = self.fill_traced(cpu, dest) {
            panic!("scalrand: no secure output: {e}");
        }
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
    /// (`None` for an empty `dest` or a read keyed from the OS). The loom model checks the
    /// generation.
    ///
    /// Routing: the home slot, then the slots after it among its node's own, wrapping at the
    /// node's last, up to [`MAX_PROBES`] in all (a busy slot means another thread on that CPU,
    /// or a preempted one); if all are busy, a one-read key straight from the home slot's
    /// node. A read never leaves its node. A node lock that stays held through a bounded
    /// wait (its holder may be this very thread, interrupted by the signal handler that is
    /// reading now) sends the read to a key from the OS.
    #[inline]
    pub(crate) fn fill_traced(
        &self,
        cpu: usize,
        dest: &mut [u8],
    ) -> Result<Option<(usize, usize)>, NumaError> {
        if dest.is_empty() {
            return Ok(None);
        }
        match self.fill_from_pools(cpu, dest) {
            Err(NumaError::Busy) => self.fill_from_os(dest).map(|()| None),
            r => r.map(Some),
        }
    }

    /// A read through the slots, run again in a fork child whose fork (made by a signal
    /// handler that interrupted the read on this thread) landed inside it: the kernel zeroed
    /// the slot, its key and batch (and a large read's key frame) under the running read,
    /// which went on with what it held in registers. What it produced rests on zeros or on
    /// the parent's keys, and what it wrote back (a length, a half-copied key) is the
    /// parent's: the child forgets every slot and reads again with its own keys. One fork
    /// generation load before and after (two loads each).
    fn fill_from_pools(&self, cpu: usize, dest: &mut [u8]) -> Result<(usize, usize), NumaError> {
        loop {
            let g = scalrand_os::fork::generation();
            let r = if dest.len() > SMALL_MAX {
                // A large read's key lives in a frame of wipe-on-fork memory while it
                // generates.
                self.scratch
                    .with(cpu, |k| self.fill_from_slots(cpu, dest, Some(k)))
            } else {
                self.fill_from_slots(cpu, dest, None)
            };
            if scalrand_os::fork::generation() == g {
                return r;
            }
            self.forget_slots();
        }
    }

    /// In a fork child whose fork landed inside a read of this thread: erases every slot
    /// (zero already where the kernel wiped them, except what that read wrote back after the
    /// fork), so that the read's next try, and every later one, takes a fresh key.
    #[cold]
    #[inline(never)]
    fn forget_slots(&self) {
        for s in self.slots.iter() {
            s.wipe();
        }
    }

    /// The routing of [`fill_from_pools`](Self::fill_from_pools); `bulk` is the large read's
    /// key frame.
    #[inline]
    fn fill_from_slots(
        &self,
        cpu: usize,
        dest: &mut [u8],
        mut bulk: Option<&mut OneReadKey>,
    ) -> Result<(usize, usize), NumaError> {
        let tag = self.slot_lock_tag()?;
        let home = self.home_slot(cpu);
        let node = self.slot_node[home] as usize;
        // The probes stay among the node's own slots, wrapping at its last one.
        let (first, count) = self.node_slots[node];
        let (first, end) = (first as usize, first as usize + count as usize);
        let mut idx = home;
        for _ in 0..MAX_PROBES.min(count as usize) {
            let served = self.slots[idx].read(
                tag,
                node,
                &self.nodes[node].generation,
                dest,
                self.rounds,
                bulk.as_deref_mut(),
                |key| self.node_key(node, key),
            )?;
            if let Some(served) = served {
                if let Some(bytes) = served.check_schedule {
                    self.check_schedule(bytes);
                }
                return Ok(served.src);
            }
            idx += 1;
            if idx == end {
                idx = first;
            }
        }
        match bulk {
            Some(k) => self.fill_from_node(node, dest, k),
            None => loop {
                if let Some(r) = self
                    .scratch
                    .with_unforked(cpu, |k| self.fill_from_node(node, dest, k))
                {
                    break r;
                }
            },
        }
    }

    /// Every probed slot was busy: a one-read key straight from the node (in the caller's
    /// frame of wipe-on-fork memory), keystream outside the lock.
    #[cold]
    fn fill_from_node(
        &self,
        node: usize,
        dest: &mut [u8],
        k: &mut OneReadKey,
    ) -> Result<(usize, usize), NumaError> {
        let generation = self.node_key(node, &mut k.key)?;
        fill_erasing(k, dest, self.rounds);
        Ok((node, generation))
    }

    /// A lock of the pools stayed held: a one-read key from the OS (in a frame of wipe-on-fork
    /// memory), keystream as usual (fast key erasure chunks). Without `std` there is no OS to
    /// ask.
    #[cold]
    #[inline(never)]
    fn fill_from_os(&self, dest: &mut [u8]) -> Result<(), NumaError> {
        #[cfg(feature = "std")]
        {
            loop {
                let r = self.scratch.with_unforked(0, |k| {
                    if let Err(e) = scalrand_os::entropy::fill(&mut k.key) {
                        return Err(NumaError::Entropy(e));
                    }
                    crate::chacha::observe_key(&k.key);
                    fill_erasing(k, dest, self.rounds);
                    self.os_keyed.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                });
                if let Some(r) = r {
                    return r;
                }
            }
        }
        #[cfg(not(feature = "std"))]
        {
            let _ = dest;
            Err(NumaError::Busy)
        }
    }

    /// Test hook (`doc(hidden)`, not API): reads that took their key from the OS because a
    /// lock of the pools stayed held.
    #[doc(hidden)]
    pub fn __os_keyed_reads(&self) -> usize {
        self.os_keyed.load(Ordering::Relaxed)
    }

    /// Test hook (`doc(hidden)`, not API): reads of at most 64 bytes that the rseq path did
    /// not serve (its refill failed: no frame, no key, a fork during the refill) and that went
    /// on to the locked path. Always 0 where the rseq path does not run.
    #[doc(hidden)]
    pub fn __left_rseq_reads(&self) -> usize {
        self.left_rseq.load(Ordering::Relaxed)
    }

    /// Test hook (`doc(hidden)`, not API): runs `f` while this thread holds every slot lock,
    /// so that reads on other threads (and this thread's own) take the node fallback.
    #[doc(hidden)]
    #[cfg(not(scalrand_loom))]
    #[allow(clippy::panic)] // test hook: a slot held elsewhere is a broken test
    pub fn __with_all_slots_busy<R>(&self, f: impl FnOnce() -> R) -> R {
        let guards: Vec<_> = self
            .slots
            .iter()
            .filter_map(|s| s.state.try_lock_tagged(usize::MAX))
            .collect();
        if guards.len() != self.slots.len() {
            panic!("a slot was busy");
        }
        let r = f();
        drop(guards);
        r
    }

    /// Test hook: takes the lock of CPU `cpu`'s home slot (`None` when it is held), so that a
    /// read from that CPU finds it busy while the guard lives.
    #[cfg(all(test, not(scalrand_loom)))]
    pub(crate) fn hold_home_slot(
        &self,
        cpu: usize,
    ) -> Option<scalrand_os::lock::LockGuard<'_, super::super::slot::SlotState>> {
        self.slots[self.home_slot(cpu)]
            .state
            .try_lock_tagged(usize::MAX)
    }

    /// Test hook: erases every slot, as a fork child finds them in wipe-on-fork memory.
    #[cfg(all(test, not(scalrand_loom)))]
    pub(crate) fn wipe_slots(&self) {
        for s in self.slots.iter() {
            s.wipe();
        }
    }

    /// Test hook (`doc(hidden)`, not API): runs `f` while this thread holds node `node`'s
    /// lock, as a read that a signal handler interrupted does; with every slot busy too,
    /// reads take their key from the OS.
    #[doc(hidden)]
    #[cfg(not(scalrand_loom))]
    pub fn __with_node_locked<R>(&self, node: usize, f: impl FnOnce() -> R) -> R {
        let held = self.nodes[node].key.lock();
        let r = f();
        drop(held);
        r
    }

    /// Test hook (`doc(hidden)`, not API): the address ranges of the memory that holds keys
    /// and unread output (slots, nodes and the rseq slots), for memory scans in tests.
    #[doc(hidden)]
    pub fn __secret_memory(&self) -> Vec<(*const u8, usize)> {
        let mut v = alloc::vec![
            (
                self.slots.as_ptr().cast::<u8>(),
                core::mem::size_of_val(&*self.slots),
            ),
            (
                self.nodes.as_ptr().cast::<u8>(),
                core::mem::size_of_val(&*self.nodes),
            ),
        ];
        if let Some(rseq) = &self.rseq {
            v.append(&mut rseq.memory());
        }
        v
    }

    /// Test hook (`doc(hidden)`, not API): reads served by the restartable-sequence path so
    /// far, or `None` where that path is off (no rseq, no wipe-on-fork memory, or this target).
    #[doc(hidden)]
    pub fn __rseq_reads(&self) -> Option<usize> {
        self.rseq.as_ref().map(|r| r.reads().map(|(_, n)| n).sum())
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
