//! A fork from one thread while other threads are inside reads, and an attacker's look at the
//! child: does any 32-byte window of the child's writable memory regenerate what the parent
//! writes *after* the fork?
//!
//! [`fork_during_reads`] starts reader threads that each fill a buffer with consecutive reads
//! of one length, forks from the calling thread at a random point while they read, lets the
//! parent's readers finish, and sends their finished buffers to the child. The child (which
//! allocates nothing: another thread may have held the allocator's lock at the fork) marks the
//! bytes the parent wrote after the fork (zero in its own copy of the buffers, nonzero in the
//! parent's), finds the read each reader had in flight at the fork and takes as targets the
//! first block it wrote wholly after the fork and the first block of each later chunk of it
//! (each chunk has its own key), with their counters (the scenario's `block_at`). Then it
//! treats every 32-byte window of every writable mapping, at every byte offset, as a key: a
//! window whose block at a target's counter begins with the target's 8 bytes regenerates the
//! parent's later output. So does a key spilled word by word: at every 16-byte aligned
//! address, eight vectors 16, 32 or 64 bytes apart, each one 32-bit word repeated across its
//! lanes (a SIMD backend's broadcast key rows), are tried as the key those words make. Windows with more than 8 zero bytes or more than 8 bytes equal to
//! their neighbour are skipped (a random key has either with probability below 10^-13), and
//! so are the readers' own buffers, which hold output the child already has; the child checks
//! that nothing in them was replaced after the fork (a key parked there would be).

use crate::maps::{self, Mapping};
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One scenario: how the readers read, and where each byte of a read comes from.
pub struct Reads<'a> {
    /// Bytes per read.
    pub len: usize,
    /// Reader threads.
    pub readers: usize,
    /// Forks that must land inside a read (see [`Outcome::landed`]).
    pub landings: usize,
    /// At most this many forks are tried.
    pub max_forks: usize,
    /// One read of `dest.len()` bytes.
    pub read: &'a (dyn Fn(&mut [u8]) + Sync),
    /// The cipher a read's keys drive.
    pub cipher: Cipher,
    /// Where byte `offset` of a read of `len` bytes comes from: the counter of its block and
    /// the offset in the read where that block starts.
    pub block_at: fn(len: usize, offset: usize) -> (u128, usize),
}

/// The cipher whose keys a scenario's reads hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cipher {
    /// ChaCha with 8, 12 or 20 rounds, RFC 8439 layout, the zero nonce except for the counter's
    /// high words (a 128-bit counter spills into words 13..15).
    ChaCha(u32),
    /// AES-256 over 128-bit little-endian counter blocks.
    Aes256,
}

impl Cipher {
    fn block_len(self) -> usize {
        match self {
            Cipher::ChaCha(_) => 64,
            Cipher::Aes256 => 16,
        }
    }

    /// First 8 bytes (little-endian) of block `counter` under `key`.
    fn prefix(self, key: &[u8; 32], counter: u128) -> u64 {
        match self {
            Cipher::ChaCha(rounds) => chacha_prefix(rounds, key, counter),
            Cipher::Aes256 => {
                use aes::cipher::{BlockCipherEncrypt, KeyInit};
                let c = aes::Aes256::new(key.into());
                let mut b = aes::Block::from(counter.to_le_bytes());
                c.encrypt_block(&mut b);
                u64::from_le_bytes(b[..8].try_into().unwrap())
            }
        }
    }
}

/// Keys change every this many bytes of a long read (the node pools' chunks, Fortuna's
/// requests): the first block of each later chunk is a target of its own.
pub const CHUNK: usize = 1 << 20;

impl core::fmt::Debug for Reads<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Reads")
            .field("len", &self.len)
            .field("readers", &self.readers)
            .field("cipher", &self.cipher)
            .finish_non_exhaustive()
    }
}

/// What the forks found.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Forks made.
    pub forks: usize,
    /// Forks after which the parent still wrote output (the fork landed inside the reads).
    pub landed: usize,
    /// Forks whose child found at least one window that regenerates later output.
    pub exposed: usize,
    /// Windows that regenerated later output, over all forks.
    pub hits: u64,
    /// Bytes the parent wrote after the forks, over all forks.
    pub later_bytes: u64,
    /// Windows the children tried as keys, over all forks.
    pub candidates: u64,
    /// Where the first hit was: the mapping's name and the offset in it.
    pub first_hit: Option<(String, usize)>,
    /// 8-byte words with no zero byte of a reader's buffer that the child's copy holds and
    /// the parent's finished buffer does not: something written into a
    /// destination before the fork that the read later replaced (a key parked in the caller's
    /// buffer would show here).
    pub rewritten: u64,
}

/// The child's report, written through a pipe as 8-byte words.
#[repr(C)]
#[derive(Clone, Copy)]
struct Report {
    later_bytes: u64,
    hits: u64,
    candidates: u64,
    hit_offset: u64,
    hit_name: [u8; 40],
    rewritten: u64,
}

impl Default for Report {
    fn default() -> Self {
        Self {
            later_bytes: 0,
            hits: 0,
            candidates: 0,
            hit_offset: 0,
            hit_name: [0; 40],
            rewritten: 0,
        }
    }
}

/// A reader's buffer: at least eight reads, and at least 16 MiB (4 MiB for reads shorter than
/// 4 KiB, whose per-read work makes 4 MiB of them last about as long), so that the fork, made
/// after a random number of the readers' reads, lands while they still read even on a loaded
/// machine (the fork itself waits for a CPU and copies the page tables). Every fork's cost
/// grows with the span: the parent zeroes, fills and sends it, and the child compares it.
fn span(len: usize) -> usize {
    let least = if len < 4096 { 4 << 20 } else { 16 << 20 };
    (8 * len).max(least) / len * len
}

fn fill_span(read: &(dyn Fn(&mut [u8]) + Sync), buf: &mut [u8], len: usize, done: &AtomicUsize) {
    for piece in buf.chunks_mut(len) {
        read(piece);
        done.fetch_add(1, Ordering::Release);
    }
}

/// A node-pool read: keystream from block 0 under its one-read key; beyond 1 MiB, chunks of
/// 1 MiB each under its own key, every chunk but the last from block 1 (block 0 is the next
/// chunk's key).
pub fn node_block_at(len: usize, off: usize) -> (u128, usize) {
    let (chunk, within) = (off / CHUNK, off % CHUNK);
    let last = chunk == (len - 1) / CHUNK;
    let first = u128::from(len > CHUNK && !last);
    (first + (within / 64) as u128, off - within % 64)
}

/// A Fortuna Concurrent read: from block 1 under the reader key; each 1 MiB request is
/// followed by the key blocks of the next reader key, and the counter runs on.
pub fn fortuna_block_at<const BLOCK: usize, const KEY_BLOCKS: usize>(
    _len: usize,
    off: usize,
) -> (u128, usize) {
    let (piece, within) = (off / CHUNK, off % CHUNK);
    let per_piece = (CHUNK / BLOCK + KEY_BLOCKS) as u128;
    (
        1 + piece as u128 * per_piece + (within / BLOCK) as u128,
        off - within % BLOCK,
    )
}

/// Runs the scenario (see the module docs). Linux only.
pub fn fork_during_reads(r: &Reads<'_>) -> Outcome {
    let span = span(r.len);
    let reads = span / r.len;
    let mut bufs: Vec<Vec<u8>> = (0..r.readers).map(|_| vec![0u8; span]).collect();
    // The child's working memory, allocated before the fork and skipped by its scan.
    let mut recv = vec![0u8; span * r.readers];
    let mut targets = vec![(0u128, 0u64); 4 * r.readers];
    let mut text = vec![0u8; 1 << 18];
    let mut mappings = vec![Mapping::EMPTY; 4096];
    let mut rng = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1)
    .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut out = Outcome::default();
    while out.landed < r.landings && out.forks < r.max_forks {
        for b in &mut bufs {
            b.fill(0);
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        // Fork once the readers have done between one read each and a sixteenth of their span
        // (the fork itself takes a while to copy the page tables).
        let after = r.readers * (1 + (rng >> 11) as usize % (reads / 16).max(1));
        let done = AtomicUsize::new(0);
        let start = Barrier::new(r.readers + 1);
        let (mut to_child, mut from_child) = ([0i32; 2], [0i32; 2]);
        // SAFETY: valid two-element arrays for pipe(2).
        unsafe {
            assert_eq!(libc::pipe(to_child.as_mut_ptr()), 0);
            assert_eq!(libc::pipe(from_child.as_mut_ptr()), 0);
        }
        let own: Vec<(usize, usize)> = bufs
            .iter()
            .map(|b| (b.as_ptr() as usize, b.len()))
            .collect();
        let pid = std::thread::scope(|s| {
            for b in bufs.iter_mut() {
                let (start, done) = (&start, &done);
                s.spawn(move || {
                    start.wait();
                    fill_span(r.read, b, r.len, done);
                });
            }
            start.wait();
            // Yield, not spin: on a machine with fewer free cores than threads here (two
            // cores, two readers and this one, and other work), a spin takes a reader's core.
            while done.load(Ordering::Acquire) < after {
                std::thread::yield_now();
            }
            // SAFETY: fork(2); the child only calls `child`, which allocates nothing, then
            // `_exit`s.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork");
            if pid == 0 {
                let report = child(
                    to_child[0],
                    &own,
                    &mut recv,
                    &mut targets,
                    &mut text,
                    &mut mappings,
                    r,
                );
                // SAFETY: the report's bytes, then `_exit`, which never returns.
                unsafe {
                    write_all(
                        from_child[1],
                        core::slice::from_raw_parts(
                            (&raw const report).cast::<u8>(),
                            size_of::<Report>(),
                        ),
                    );
                    libc::_exit(0);
                }
            }
            pid
        });
        // The readers have finished: hand their buffers to the child.
        for b in &bufs {
            write_all(to_child[1], b);
        }
        let mut report = Report::default();
        // SAFETY: reads into the report's own bytes; a valid status pointer.
        unsafe {
            let p = core::slice::from_raw_parts_mut(
                (&raw mut report).cast::<u8>(),
                size_of::<Report>(),
            );
            read_all(from_child[0], p);
            let mut status = 0;
            assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
            assert!(
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
                "the child failed: status {status:#x}"
            );
            for fd in to_child.into_iter().chain(from_child) {
                libc::close(fd);
            }
        }
        out.forks += 1;
        if report.later_bytes > 0 {
            out.landed += 1;
        }
        if report.hits > 0 {
            out.exposed += 1;
            if out.first_hit.is_none() {
                let m = Mapping {
                    name: report.hit_name,
                    ..Mapping::EMPTY
                };
                out.first_hit = Some((m.name().to_owned(), report.hit_offset as usize));
            }
        }
        out.hits += report.hits;
        out.later_bytes += report.later_bytes;
        out.candidates += report.candidates;
        out.rewritten += report.rewritten;
    }
    // What the test held is output: zero it, so that later scenarios' children do not spend
    // their time on it when the allocator hands the memory out again.
    for b in &mut bufs {
        b.fill(0);
    }
    recv.fill(0);
    out
}

fn write_all(fd: i32, mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: `b` is valid for `b.len()` bytes.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        assert!(n > 0, "write to pipe");
        b = &b[n as usize..];
    }
}

fn read_all(fd: i32, mut b: &mut [u8]) {
    while !b.is_empty() {
        // SAFETY: `b` is valid for `b.len()` writable bytes.
        let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
        assert!(n > 0, "read from pipe");
        b = &mut b[n as usize..];
    }
}

/// The child's side: receive, find where each reader's in-flight read was at the fork and
/// the blocks it wrote after it, try every window as a key. Allocation-free.
fn child(
    from_parent: i32,
    own: &[(usize, usize)],
    recv: &mut [u8],
    targets: &mut [(u128, u64)],
    text: &mut [u8],
    mappings: &mut [Mapping],
    r: &Reads<'_>,
) -> Report {
    // The mappings as they were at the fork (before this child writes anything large).
    let count = maps::writable(text, mappings);
    read_all(from_parent, recv);
    let mut report = Report::default();
    let blk = r.cipher.block_len();
    let mut n = 0;
    let mut at = 0;
    for &(ptr, len) in own {
        // SAFETY: the child's copy of a reader's buffer, `len` bytes, alive in the parent's
        // frame (which the child inherited) and written by nobody in the child.
        let mine = unsafe { core::slice::from_raw_parts(ptr as *const u8, len) };
        let theirs = &recv[at..at + len];
        at += len;
        // Written after the fork: zero in the child's copy, nonzero in the parent's. Counted
        // without a branch per byte (the buffers are tens of MiB of random bytes).
        let later = |(m, t): (&u8, &u8)| *m == 0 && *t != 0;
        report.later_bytes += mine.iter().zip(theirs).filter(|&p| later(p)).count() as u64;
        let first_later = mine.iter().zip(theirs).position(later);
        // 8-byte words of the child's copy, all bytes nonzero, that the read replaced later (a
        // read may write public values first, as AES counter mode writes its counter blocks,
        // which are mostly zero bytes, but nothing random-looking other than its output).
        let word = |b: &[u8]| u64::from_ne_bytes(b.try_into().unwrap());
        report.rewritten += mine
            .chunks_exact(8)
            .zip(theirs.chunks_exact(8))
            .filter(|(m, t)| {
                let m = word(m);
                // No zero byte in `m` (the classic test: a zero byte borrows into its top bit).
                let no_zero =
                    m.wrapping_sub(0x0101_0101_0101_0101) & !m & 0x8080_8080_8080_8080 == 0;
                no_zero && m != word(t)
            })
            .count() as u64;
        let Some(p0) = first_later else { continue };
        // The read that was in flight, and the first block it wrote wholly after the fork.
        let start = p0 / r.len * r.len;
        let end = (start + r.len).min(len);
        let (ctr, bstart) = (r.block_at)(r.len, p0 - start);
        let (mut ctr, mut off) = (ctr, start + bstart);
        if off < p0 {
            ctr += 1;
            off += blk;
        }
        let mut push = |ctr: u128, off: usize| {
            if off + 8 <= end && n < targets.len() {
                targets[n] = (
                    ctr,
                    u64::from_le_bytes(theirs[off..off + 8].try_into().unwrap()),
                );
                n += 1;
            }
        };
        push(ctr, off);
        // And the first block of every later chunk of that read (its own key).
        let mut c = (p0 - start) / CHUNK + 1;
        while c * CHUNK < end - start {
            let (ctr, bstart) = (r.block_at)(r.len, c * CHUNK);
            push(ctr, start + bstart);
            c += 1;
        }
    }
    let targets = &targets[..n];
    if targets.is_empty() {
        return report;
    }
    // Skipped: the child's own working memory, and the readers' buffers, which hold only
    // output the child has (checked above: nothing in them was replaced after the fork).
    let mut skip = [(0usize, 0usize); 12];
    skip[0] = (recv.as_ptr() as usize, recv.len());
    skip[1] = (targets.as_ptr() as usize, size_of_val(targets));
    skip[2] = (text.as_ptr() as usize, text.len());
    skip[3] = (mappings.as_ptr() as usize, size_of_val(mappings));
    for (s, &(p, l)) in skip[4..].iter_mut().zip(own) {
        *s = (p, l);
    }
    for m in &mappings[..count] {
        let mut a = m.start;
        while a + 32 <= m.end {
            if let Some(&(s, l)) = skip
                .iter()
                .find(|&&(s, l)| l > 0 && a + 32 > s && a < s + l)
            {
                a = s + l;
                continue;
            }
            let stop = skip
                .iter()
                .filter(|&&(s, l)| l > 0 && s >= a)
                .map(|&(s, _)| s)
                .min()
                .unwrap_or(usize::MAX)
                .min(m.end);
            // SAFETY: `[a, stop)` lies inside a readable mapping of this single-threaded child.
            let mem = unsafe { core::slice::from_raw_parts(a as *const u8, stop - a) };
            keys_in(mem, a, |off, key| {
                report.candidates += 1;
                if targets
                    .iter()
                    .any(|&(ctr, want)| r.cipher.prefix(key, ctr) == want)
                {
                    if report.hits == 0 {
                        report.hit_offset = (a + off - m.start) as u64;
                        report.hit_name = m.name;
                    }
                    report.hits += 1;
                }
            });
            a = stop.max(a + 1);
        }
    }
    report
}

/// How far past its start a broadcast key reaches: eight vectors 64 bytes apart, the last
/// one 16 bytes long.
const BROADCAST_REACH: usize = 7 * 64 + 16;

/// Calls `f(offset, key)` for every key candidate in `mem`, which starts at address `addr`:
/// each 32-byte window that [`looks_random`], and at each 16-byte aligned address each
/// [`broadcast_run`] key, in order of offset.
///
/// Every byte offset is a candidate. To keep the scan fast it keeps the window's counts as it
/// slides ([`Counts`]) and jumps over the inside of zero runs, where neither kind of key can
/// start: a window there is all zeros, and so is a broadcast key that starts at least
/// [`BROADCAST_REACH`] bytes before the run's end.
fn keys_in(mem: &[u8], addr: usize, mut f: impl FnMut(usize, &[u8; 32])) {
    let windows = mem.len().saturating_sub(31);
    let mut off = 0;
    let mut counts = Counts::at(mem, 0);
    // The end of the zero run the window is in, once found.
    let mut run_end = 0;
    while off < windows {
        if counts.zeros == 32 {
            if run_end <= off {
                run_end = zero_run_end(mem, off);
            }
            let past = run_end.saturating_sub(BROADCAST_REACH);
            if past > off {
                off = past;
                if off >= windows {
                    break;
                }
                counts = Counts::at(mem, off);
            }
        }
        if counts.random() {
            f(off, mem[off..off + 32].try_into().unwrap());
        }
        // A key spilled word by word: eight adjacent vectors, each one key word in every lane
        // (a SIMD backend's broadcast key rows), at an aligned address.
        if (addr + off).is_multiple_of(16) {
            for stride in [16, 32, 64] {
                if let Some(key) = broadcast_run(mem, off, stride) {
                    f(off, &key);
                }
            }
        }
        off += 1;
        if off < windows {
            counts.slide(mem, off);
        }
    }
}

/// The offset of the first nonzero byte of `mem` at or after `from` (`mem.len()` if none),
/// eight bytes at a time.
fn zero_run_end(mem: &[u8], from: usize) -> usize {
    let rest = &mem[from..];
    let words = rest.chunks_exact(8).position(|w| w != [0u8; 8]);
    let start = words.map_or(rest.len() / 8 * 8, |w| w * 8);
    from + start
        + rest[start..]
            .iter()
            .position(|&b| b != 0)
            .unwrap_or(rest.len() - start)
}

/// The key read from eight vectors `stride` bytes apart from `off`, each a 32-bit word
/// repeated over its first 16 bytes (at least: a broadcast `xmm`, `ymm` or `zmm` register
/// spilled), the words in order; `None` where they are not that, or the key would not
/// [`looks_random`].
fn broadcast_run(mem: &[u8], off: usize, stride: usize) -> Option<[u8; 32]> {
    if off + 7 * stride + 16 > mem.len() {
        return None;
    }
    let mut key = [0u8; 32];
    for i in 0..8 {
        let v = &mem[off + i * stride..off + i * stride + 16];
        if v[4..].chunks_exact(4).any(|c| c != &v[..4]) {
            return None;
        }
        key[4 * i..4 * i + 4].copy_from_slice(&v[..4]);
    }
    looks_random(&key).then_some(key)
}

/// [`looks_random`]'s two counts for the 32-byte window at some offset of a slice, moved one
/// byte at a time: the whole-process scan looks at every byte offset, and counting each
/// window afresh made it the campaign's longest step.
struct Counts {
    zeros: usize,
    repeats: usize,
}

impl Counts {
    /// The counts of the window at `off` (zero where `mem` has no whole window there).
    fn at(mem: &[u8], off: usize) -> Self {
        match mem.get(off..off + 32) {
            Some(w) => Counts {
                zeros: w.iter().filter(|&&b| b == 0).count(),
                repeats: w.windows(2).filter(|p| p[0] == p[1]).count(),
            },
            None => Counts {
                zeros: 0,
                repeats: 0,
            },
        }
    }

    /// From the window at `off - 1` to the one at `off` (`off + 31 < mem.len()`): the byte
    /// at `off - 1` and its pair with the next leave, the byte at `off + 31` and its pair
    /// with the one before come in.
    #[inline]
    fn slide(&mut self, mem: &[u8], off: usize) {
        let (gone, new) = (mem[off - 1], mem[off + 31]);
        self.zeros = self.zeros + usize::from(new == 0) - usize::from(gone == 0);
        self.repeats =
            self.repeats + usize::from(new == mem[off + 30]) - usize::from(gone == mem[off]);
    }

    /// [`looks_random`] of the window.
    #[inline]
    fn random(&self) -> bool {
        self.zeros <= 8 && self.repeats <= 8
    }
}

/// At most 8 zero bytes and at most 8 bytes equal to the one before.
#[inline]
fn looks_random(w: &[u8; 32]) -> bool {
    let mut zeros = 0;
    let mut repeats = 0;
    for i in 0..32 {
        zeros += usize::from(w[i] == 0);
        if i > 0 {
            repeats += usize::from(w[i] == w[i - 1]);
        }
    }
    zeros <= 8 && repeats <= 8
}

/// First 8 bytes (little-endian) of ChaCha block `counter` (128 bits: word 12 and, above
/// 2^32, words 13..15) under `key` with `rounds` rounds (8, 12 or 20), from the `chacha20`
/// crate.
fn chacha_prefix(rounds: u32, key: &[u8; 32], counter: u128) -> u64 {
    use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
    let hi = counter >> 32;
    let mut nonce = [0u8; 12];
    nonce.copy_from_slice(&hi.to_le_bytes()[..12]);
    let mut b = [0u8; 8];
    macro_rules! run {
        ($c:ty) => {{
            let mut c = <$c>::new(key.into(), &nonce.into());
            c.seek(u64::from(counter as u32) * 64);
            c.apply_keystream(&mut b);
        }};
    }
    match rounds {
        8 => run!(chacha20::ChaCha8),
        12 => run!(chacha20::ChaCha12),
        _ => run!(chacha20::ChaCha20),
    }
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::{Counts, broadcast_run, keys_in, looks_random};

    /// Bytes from xorshift64 (Marsaglia 2003).
    fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    /// Every window and every broadcast key, offset by offset, each window's counts taken
    /// afresh: what [`keys_in`] must find.
    fn naive(mem: &[u8], addr: usize) -> Vec<(usize, [u8; 32])> {
        let mut out = Vec::new();
        for off in 0..mem.len().saturating_sub(31) {
            let w: [u8; 32] = mem[off..off + 32].try_into().unwrap();
            if looks_random(&w) {
                out.push((off, w));
            }
            if (addr + off).is_multiple_of(16) {
                for stride in [16, 32, 64] {
                    if let Some(k) = broadcast_run(mem, off, stride) {
                        out.push((off, k));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn the_scan_finds_what_a_naive_scan_finds() {
        // Random bytes, zero runs shorter and longer than a broadcast key's reach, and
        // broadcast keys (each word in all four lanes, 16, 32 and 64 bytes apart) at the end
        // of zero runs, where the scan's jump lands.
        let mut mem = bytes(0x9e37_79b9_7f4a_7c15, 1 << 14);
        // Its first two words zero (8 zero bytes, as many as a key may have): the zero run goes
        // on two vectors past the key's start, which is what the jump's margin is for.
        let mut key = bytes(7, 32);
        key[..8].fill(0);
        for (i, (start, zeros)) in [(100, 40), (1000, 400), (3000, 2000), (8000, 5000)]
            .into_iter()
            .enumerate()
        {
            mem[start..start + zeros].fill(0);
            let stride = [16, 32, 64, 16][i];
            let at = (start + zeros - 7 * stride - 16 - 16 * i) / 16 * 16;
            for (w, word) in key.chunks_exact(4).enumerate() {
                for lane in 0..4 {
                    let p = at + w * stride + 4 * lane;
                    mem[p..p + 4].copy_from_slice(word);
                }
            }
        }
        // All zero at the end, and a short tail.
        mem[15000..].fill(0);
        for addr in [0, 3, 8] {
            for len in [mem.len(), 40, 31, 0] {
                let mut found = Vec::new();
                keys_in(&mem[..len], addr, |off, k| found.push((off, *k)));
                let want = naive(&mem[..len], addr);
                assert_eq!(found, want, "address {addr}, {len} bytes");
            }
        }
        let mut found = Vec::new();
        keys_in(&mem, 0, |off, k| found.push((off, *k)));
        let broadcast = found.iter().filter(|(_, k)| k[..] == key[..]).count();
        assert_eq!(broadcast, 4, "the four broadcast keys");
    }

    #[test]
    fn sliding_counts_match_each_window_counted_afresh() {
        // Bytes with runs of zeros and of repeats, so windows on both sides of each limit.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mem: Vec<u8> = (0..4096)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match (i / 64) % 4 {
                    0 => x as u8,
                    1 if x.is_multiple_of(3) => 0,
                    2 if x.is_multiple_of(2) => 0x5a,
                    _ => (x >> 8) as u8 & 3,
                }
            })
            .collect();
        let mut counts = Counts::at(&mem, 0);
        let (mut yes, mut no) = (0, 0);
        for off in 0..mem.len() - 31 {
            if off > 0 {
                counts.slide(&mem, off);
            }
            let w: &[u8; 32] = mem[off..off + 32].try_into().unwrap();
            assert_eq!(counts.random(), looks_random(w), "window at {off}");
            if looks_random(w) { yes += 1 } else { no += 1 }
        }
        assert!(
            yes > 100 && no > 100,
            "{yes} random-looking windows, {no} others"
        );
    }
}
