//! Key erasure, checked by reading the whole process's memory as an attacker who gets a copy
//! of it (a fork child, a core dump, a swapped-out page) would.
//!
//! Every key the pools derive is shown to a test observer (`__observe_keys`) the moment it is
//! made. After reads of each size, this test reads every private writable mapping of the
//! process through `/proc/self/mem` (thread stacks, the heap, glibc's cached stacks of exited
//! threads) except the pools' own secret memory, and looks for:
//! - any 16 bytes of any key the pools ever derived (node, slot, one-read and chunk keys,
//!   current or long replaced), at every 4-byte offset, as bytes and as big-endian words
//!   (what a SHA-256 message schedule holds);
//! - any key word broadcast four times (what a block-per-lane SIMD backend keeps in a
//!   register, and spills), counted only when a second word of the same key also turns up in
//!   that mapping (broadcast or not): a spill of the state holds every key row, while a
//!   single 32-bit word is found by chance in structured memory (runs of one repeated word)
//!   about once in tens of runs, with 10,000 keys observed;
//! - any 16 nonzero bytes of what the secret memory holds now (current keys, unread batches).
//!
//! Everything the test keeps is masked with a random 32-bit word (XORed into every word), so
//! its own bookkeeping never holds a copy of a key that the scan could find; its buffers are
//! skipped, never reallocated, and zeroed before they are freed (a freed buffer of masked
//! words XORed with the mask again could meet another key's masked word by chance).
//!
//! A sampled campaign (`SCALRAND_CAMPAIGN=sample`, see `scalrand_testkit::campaign`) reads
//! every other length of each list, the first and the last always: for the node pools a read
//! the rseq slot serves, two through the locked slots and the longest (past a chunk in
//! optimised builds); for Fortuna the shortest and the longest. Each scan reads the whole
//! process, which takes seconds inside the emulated machines.
//!
//! Run it on every backend: `RUSTFLAGS="--cfg scalrand_chacha_soft"` (AVX2),
//! `--cfg scalrand_chacha_sse2`, `--cfg scalrand_chacha_portable`, in debug and `--release`
//! builds (`cargo xtask ci` does).

#![cfg(all(feature = "fortuna", target_os = "linux", feature = "std", not(miri)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_os::wipe::zero;
use scalrand_pool::chacha::{__WIPE_DEPTH, __keystream_unwiped, __observe_keys, backend};
use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, Prf, ReadMode};
use scalrand_pool::numa::{NodePools, Rounds, Topology};
use scalrand_testkit::campaign;
use scalrand_testkit::maps::{self, Mapping};
use scalrand_testkit::stack::sorted_hits;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// The mask XORed into every 32-bit word the test keeps.
static MASK: AtomicU32 = AtomicU32::new(0);
/// Every observed key, as 8 masked words. Reserved up front, so it never moves.
static LOG: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Room in `LOG`, in words.
const LOG_WORDS: usize = 1 << 22;

#[inline(never)]
fn observe(key: &[u8; 32]) {
    let m = MASK.load(Ordering::Relaxed);
    let mut log = LOG.lock().unwrap();
    if log.len() + 8 <= log.capacity() {
        for c in key.chunks_exact(4) {
            log.push(u32::from_le_bytes([c[0], c[1], c[2], c[3]]) ^ m);
        }
    }
}

/// Four 32-bit words as the u128 a little-endian load of their 16 bytes gives.
fn pack(w: &[u32]) -> u128 {
    w.iter()
        .rev()
        .fold(0u128, |acc, &x| (acc << 32) | u128::from(x))
}

/// Writable private mappings of this process: (start, end, name).
fn mappings() -> Vec<(usize, usize, String)> {
    let mut text = vec![0u8; 1 << 18];
    let mut all = vec![Mapping::EMPTY; 4096];
    let n = maps::readable(&mut text, &mut all);
    all[..n]
        .iter()
        .filter(|m| m.writable && m.private)
        .map(|m| (m.start, m.end, m.name().to_owned()))
        .collect()
}

/// A hit: where, and what kind of needle.
struct Hit {
    addr: usize,
    mapping: String,
    /// What matched: see [`Owner`].
    owner: Owner,
}

/// Which needle a hit matched: the observed key (its number in `LOG`) and the form, or a piece
/// of the secret memory.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// A key's bytes or big-endian words (`word`: the first key word in the window).
    Key { key: u32, word: u8 },
    /// A key word broadcast four times.
    Broadcast { key: u32, word: u8 },
    /// Nonzero bytes of the secret memory.
    Secret,
}

impl std::fmt::Debug for Hit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.owner {
            Owner::Key { key, word } => format!("key {key} from word {word}"),
            Owner::Broadcast { key, word } => format!("key {key} word {word} broadcast"),
            Owner::Secret => "secret memory".to_owned(),
        };
        write!(f, "{:#x} in {:?}: {what}", self.addr, self.mapping)
    }
}

/// Reads `[start, end)` through `/proc/self/mem` in pieces into `buf` and reports every
/// 4-byte offset whose 16 bytes, masked, are among `needles` (`owners[i]` says what
/// `needles[i]` is). Ranges in `skip` are not read. A broadcast hit is kept only when the same
/// mapping also holds another word of that key (see the module docs).
fn scan(
    mem: &File,
    needles: &[u128],
    owners: &[Owner],
    mask: u128,
    skip: &[(usize, usize)],
    buf: &mut [u8],
    hits: &mut Vec<Hit>,
) {
    for (start, end, name) in mappings() {
        let first = hits.len();
        // Cut the mapping around the skipped ranges.
        let mut pieces = vec![(start, end)];
        for &(s, e) in skip {
            pieces = pieces
                .into_iter()
                .flat_map(|(a, b)| {
                    if e <= a || s >= b {
                        vec![(a, b)]
                    } else {
                        let mut out = Vec::new();
                        if s > a {
                            out.push((a, s));
                        }
                        if e < b {
                            out.push((e, b));
                        }
                        out
                    }
                })
                .collect();
        }
        for (a, b) in pieces {
            let mut at = a;
            while at < b {
                let n = (b - at).min(buf.len());
                let Ok(got) = mem.read_at(&mut buf[..n], at as u64) else {
                    break;
                };
                if got < 16 {
                    break;
                }
                for (i, ix) in sorted_hits(&buf[..got], needles, mask, 4) {
                    hits.push(Hit {
                        addr: at + i,
                        mapping: name.clone(),
                        owner: owners[ix],
                    });
                }
                // Overlap by 12 bytes so that no window is missed at a piece boundary.
                at += if got == n && at + got < b {
                    got - 12
                } else {
                    got
                };
            }
        }
        buf.fill(0);
        // Broadcasts of one lone word are kept only with another word of their key beside them.
        let here: Vec<(u32, u8)> = hits[first..]
            .iter()
            .filter_map(|h| match h.owner {
                Owner::Key { key, word } | Owner::Broadcast { key, word } => Some((key, word)),
                Owner::Secret => None,
            })
            .collect();
        let mut i = first;
        while i < hits.len() {
            if let Owner::Broadcast { key, word } = hits[i].owner
                && !here.iter().any(|&(k, w)| k == key && w != word)
            {
                hits.remove(i);
            } else {
                i += 1;
            }
        }
    }
}

/// Whether 16 bytes look like key or keystream bytes rather than the lock words, counters
/// and pointers that share the secret memory: no zero 32-bit word and at least 12 distinct
/// byte values (16 random bytes have fewer with probability below 10^-5).
fn looks_random(c: &[u8]) -> bool {
    let mut seen = [false; 256];
    let mut distinct = 0;
    for &b in c {
        if !seen[b as usize] {
            seen[b as usize] = true;
            distinct += 1;
        }
    }
    distinct >= 12 && c.chunks_exact(4).all(|w| w != [0; 4])
}

/// The needles: every key observed so far, and the nonzero 16-byte pieces of `secret`, sorted,
/// with what each one is.
fn needles(mem: &File, secret: &[(usize, usize)], buf: &mut [u8]) -> (Vec<u128>, Vec<Owner>) {
    let m = MASK.load(Ordering::Relaxed);
    let log = LOG.lock().unwrap();
    // Exactly the room needed: a reallocation would leave a freed copy of masked needles for
    // a later scan to trip over.
    let secret_bytes: usize = secret.iter().map(|&(s, e)| e - s).sum();
    let room = log.len() / 8 * 18 + secret_bytes / 16;
    let mut v = Vec::with_capacity(room);
    let mut owners = Vec::with_capacity(room);
    let m_swapped = m.swap_bytes();
    for (k, key) in (0u32..).zip(log.chunks_exact(8)) {
        for off in 0..=4 {
            let word = off as u8;
            v.push(pack(&key[off..off + 4]));
            owners.push(Owner::Key { key: k, word });
            // The same words big-endian, as SHA-256's message schedule holds a key it hashes
            // (masked with the byte-swapped mask, which the scan's mask undoes).
            let be: [u32; 4] = core::array::from_fn(|i| key[off + i].swap_bytes() ^ m_swapped ^ m);
            v.push(pack(&be));
            owners.push(Owner::Key { key: k, word });
        }
        for (word, &w) in (0u8..).zip(key) {
            v.push(pack(&[w; 4]));
            owners.push(Owner::Broadcast { key: k, word });
        }
    }
    drop(log);
    let mask4 = pack(&[m; 4]);
    for &(s, e) in secret {
        let mut at = s;
        while at < e {
            let n = (e - at).min(buf.len());
            let got = mem.read_at(&mut buf[..n], at as u64).unwrap();
            for c in buf[..got].chunks_exact(16) {
                if looks_random(c) {
                    v.push(u128::from_le_bytes(c.try_into().unwrap()) ^ mask4);
                    owners.push(Owner::Secret);
                }
            }
            at += got;
        }
        buf.fill(0);
    }
    // Sorted through an index, so that the masked needles exist only in `v` (zeroized here,
    // capacity included) and in the one sorted copy the scan skips.
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_unstable_by_key(|&i| v[i]);
    let mut sorted = Vec::with_capacity(v.len());
    sorted.extend(order.iter().map(|&i| v[i]));
    let owners = order.iter().map(|&i| owners[i]).collect();
    v.resize(v.capacity(), 0);
    zero(v.as_mut_slice());
    (sorted, owners)
}

/// Runs `work` on a worker thread, which keeps what it returns alive (a generator) while the
/// main thread scans everything outside the secret ranges it also returns; returns the hits
/// and the number of keys observed so far. With `secret_needles`, what the secret ranges hold
/// is looked for too (the node pools' unread batches; not Fortuna's, whose accumulator holds
/// public hash constants beside inherited-by-design entropy input).
fn reads_then_scan<W>(work: W, secret_needles: bool) -> (Vec<Hit>, usize)
where
    W: FnOnce() -> (Box<dyn std::any::Any + Send>, Vec<(usize, usize)>) + Send + 'static,
{
    let (to_main, from_worker) = std::sync::mpsc::channel();
    let (to_worker, from_main) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        let (holder, secret) = work();
        to_main.send(secret).unwrap();
        from_main.recv().unwrap();
        drop(holder);
    });
    let secret = from_worker.recv().unwrap();
    let mem = File::open("/proc/self/mem").unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let (needles, owners) = needles(&mem, if secret_needles { &secret } else { &[] }, &mut buf);
    let mask4 = pack(&[MASK.load(Ordering::Relaxed); 4]);
    let log = LOG.lock().unwrap();
    let log_range = (
        log.as_ptr() as usize,
        log.as_ptr() as usize + log.capacity() * 4,
    );
    let keys = log.len() / 8;
    drop(log);
    let mut skip = secret.clone();
    skip.push(log_range);
    skip.push((
        needles.as_ptr() as usize,
        needles.as_ptr() as usize + needles.capacity() * 16,
    ));
    skip.push((buf.as_ptr() as usize, buf.as_ptr() as usize + buf.len()));
    let mut hits = Vec::new();
    scan(&mem, &needles, &owners, mask4, &skip, &mut buf, &mut hits);
    let mut needles = needles;
    needles.resize(needles.capacity(), 0);
    zero(needles.as_mut_slice());
    to_worker.send(()).unwrap();
    worker.join().unwrap();
    (hits, keys)
}

/// Reads of `len` bytes from fresh node pools: 400 through `fill_bytes` (the rseq path where
/// it runs, for `len <= 64`) and 400 through `fill_bytes_on_cpu` (the locked slots; 4 and 4
/// for reads over 1 MiB, which cross a chunk key each).
fn node_pool_reads(
    len: usize,
    rounds: Rounds,
) -> (Box<dyn std::any::Any + Send>, Vec<(usize, usize)>) {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let p = NodePools::new(Topology::from_nodes(vec![(0..cpus).collect()]))
        .unwrap()
        .with_rounds(rounds);
    let mut out = vec![0u8; len];
    let n = if len > 1 << 20 { 4 } else { 400 };
    for _ in 0..n {
        p.fill_bytes(&mut out);
    }
    for i in 0..n {
        p.fill_bytes_on_cpu(i % cpus, &mut out);
    }
    out.fill(0);
    let secret = p
        .__secret_memory()
        .into_iter()
        .map(|(ptr, n)| (ptr as usize, ptr as usize + n))
        .collect();
    (Box::new(p), secret)
}

/// Reads of `len` bytes from a fresh Fortuna (100, or 4 over 1 MiB).
fn fortuna_reads<P: Prf>(
    mode: ReadMode,
    len: usize,
) -> (Box<dyn std::any::Any + Send>, Vec<(usize, usize)>) {
    let f = Fortuna::<P>::with_prf(mode).unwrap();
    let mut out = vec![0u8; len];
    for _ in 0..if len > 1 << 20 { 4 } else { 100 } {
        f.fill_bytes(&mut out);
    }
    out.fill(0);
    let secret = f
        .memory_ranges_for_tests()
        .into_iter()
        .map(|r| (r.start, r.end))
        .collect();
    (Box::new(f), secret)
}

/// A read that crosses a chunk key (over 1 MiB) in optimised builds; unoptimised AES and
/// ChaCha take seconds per MiB, so there it is 2000 bytes (the release runs in CI cover it).
fn huge_read() -> usize {
    if cfg!(debug_assertions) {
        2000
    } else {
        (1 << 20) + 5
    }
}

/// The scans see the whole process: one at a time, or each would find the other's live keys.
static SERIAL: Mutex<()> = Mutex::new(());

fn start_observing() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut b = [0u8; 4];
        scalrand_os::entropy::fill(&mut b).unwrap();
        MASK.store(u32::from_le_bytes(b) | 1, Ordering::Relaxed);
        LOG.lock().unwrap().reserve_exact(LOG_WORDS);
        __observe_keys(Some(observe));
    });
}

#[test]
fn no_key_or_unread_output_outside_the_secret_memory() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    start_observing();
    let mut failures = Vec::new();
    for rounds in [Rounds::ChaCha20, Rounds::ChaCha12] {
        for len in campaign::spread(&[16usize, 32, 100, 300, 1000, 4096, huge_read()], 2) {
            let (hits, keys) = reads_then_scan(move || node_pool_reads(len, rounds), true);
            eprintln!(
                "{:?} {rounds:?} {len} B: {keys} keys observed so far, {} copies found",
                backend(),
                hits.len()
            );
            if !hits.is_empty() {
                failures.push(format!("{rounds:?} {len} B: {hits:x?}"));
            }
        }
    }
    assert!(
        LOG.lock().unwrap().len() > 1000,
        "the observer saw the keys"
    );
    assert!(
        failures.is_empty(),
        "{:?}: copies of keys or unread output outside the secret memory:\n{}",
        backend(),
        failures.join("\n")
    );
}

/// Fortuna's global key and every reader's private key (Concurrent), in both modes and with
/// both PRFs: no copy outside the generator's own memory after reads of 32 B, 1 KiB and
/// 1 MiB + 5 B (which crosses a private rekey).
#[test]
fn no_fortuna_key_outside_the_generator() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    start_observing();
    let mut failures = Vec::new();
    for mode in [ReadMode::Concurrent, ReadMode::Locked] {
        for len in campaign::spread(&[32usize, 1024, huge_read()], 2) {
            for (name, (hits, keys)) in [
                (
                    "AES",
                    reads_then_scan(move || fortuna_reads::<Aes256Prf>(mode, len), false),
                ),
                (
                    "ChaCha20",
                    reads_then_scan(move || fortuna_reads::<ChaCha20Prf>(mode, len), false),
                ),
            ] {
                eprintln!(
                    "{name} {mode:?} {len} B: {keys} keys so far, {} copies found",
                    hits.len()
                );
                if !hits.is_empty() {
                    failures.push(format!("{name} {mode:?} {len} B: {hits:x?}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "copies of Fortuna keys outside the generator:\n{}",
        failures.join("\n")
    );
}

/// Bytes of stack between the measuring frame and the deepest byte `f` wrote, found by
/// painting the stack below through `/proc/self/mem` and reading it back.
#[inline(never)]
fn stack_depth(f: &mut dyn FnMut()) -> usize {
    const GAP: usize = 1024; // room for the frames of the pwrite and pread calls
    const SPAN: usize = 256 * 1024;
    let marker = 0u8;
    let top = std::hint::black_box(&marker) as *const u8 as usize;
    let below = top - GAP - SPAN;
    let mem = File::options()
        .read(true)
        .write(true)
        .open("/proc/self/mem")
        .unwrap();
    let paint = vec![0x5Au8; SPAN];
    mem.write_all_at(&paint, below as u64).unwrap();
    f();
    let mut back = vec![0u8; SPAN];
    mem.read_exact_at(&mut back, below as u64).unwrap();
    match back.iter().position(|&b| b != 0x5A) {
        Some(i) => top - (below + i),
        None => 0,
    }
}

/// The wipe after every backend call covers the deepest stack any backend call reaches:
/// measured here for bulk keystream (whole passes, partial passes, a last partial block)
/// and the one-block function, every round count.
#[test]
fn backend_stack_depth_is_within_the_wipe() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let key = [0x42u8; 32];
    // The process's first eight-block pass on AVX2 maps the spill frames (an `mmap`, before
    // the pass loads any key word: its frames hold none); measured here are the passes.
    __keystream_unwiped(&key, 0, &mut [0u8; 512], Rounds::ChaCha20);
    let mut deepest = 0;
    for rounds in [Rounds::ChaCha8, Rounds::ChaCha12, Rounds::ChaCha20] {
        for len in [1usize, 64, 100, 192, 300, 512, 1000, 1024, 4096 + 17] {
            let mut out = vec![0u8; len];
            let d = stack_depth(&mut || __keystream_unwiped(&key, 0, &mut out, rounds));
            deepest = deepest.max(d);
        }
    }
    eprintln!(
        "{:?}: deepest backend stack use {deepest} bytes, wiped {}",
        backend(),
        __WIPE_DEPTH
    );
    // The wipe runs one call level above the backend (its buffer starts a few words lower).
    assert!(
        deepest + 256 <= __WIPE_DEPTH,
        "{:?} reaches {deepest} bytes below the caller; the wipe covers {}",
        backend(),
        __WIPE_DEPTH
    );
}

/// Fortuna wipes the stack below its entry points after every read, reseed and construction:
/// after each, no byte deeper than that wipe was written (the read's frames reached no
/// deeper than the wipe), for both PRFs, both modes, and reads that cross a private rekey.
#[test]
fn fortuna_stack_use_is_within_the_wipe() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    fn check<P: Prf>(deepest: &mut usize) {
        for mode in [ReadMode::Concurrent, ReadMode::Locked] {
            let f = Fortuna::<P, _>::from_seed(mode, &[7; 32], scalrand_os::MonotonicClock::new())
                .unwrap();
            for len in [0usize, 32, 1024, huge_read()] {
                let mut out = vec![0u8; len];
                *deepest = (*deepest).max(stack_depth(&mut || f.fill_bytes(&mut out)));
            }
            *deepest = (*deepest).max(stack_depth(&mut || f.reseed(b"more")));
        }
    }
    let mut deepest = 0;
    check::<Aes256Prf>(&mut deepest);
    check::<ChaCha20Prf>(&mut deepest);
    let wiped = scalrand_pool::fortuna::__wipe_depth();
    eprintln!("Fortuna: deepest write {deepest} bytes, wiped {wiped}");
    // The wipe itself writes down to about its depth below the entry point's frame, which
    // lies a few frames below the measuring one (large frames in unoptimised builds).
    let slack = if cfg!(debug_assertions) { 8192 } else { 512 };
    assert!(
        deepest <= wiped + slack,
        "a Fortuna call wrote {deepest} bytes below its caller; the wipe covers {wiped}"
    );
}

/// The vector registers as they are now (every lane `scalrand_testkit::regs::dump` reads:
/// `xmm`, `ymm` with AVX, all 32 `zmm` with AVX-512), as 32-bit words.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn register_words() -> Vec<u32> {
    let mut lanes = [[0u8; 16]; scalrand_testkit::regs::MAX_LANES];
    let n = scalrand_testkit::regs::dump(&mut lanes);
    lanes[..n]
        .iter()
        .flat_map(|l| {
            l.chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        })
        .collect()
}

/// Right after `chacha::keystream` returns, no vector register holds a word of its key: every
/// length (whole passes, a partial last block, which every x86_64 path computes with the
/// one-block SSE2 function) and every round count, on whichever backend this build runs.
#[cfg(target_arch = "x86_64")]
#[test]
fn no_key_word_is_left_in_a_vector_register() {
    let mut found = Vec::new();
    for rounds in [Rounds::ChaCha8, Rounds::ChaCha12, Rounds::ChaCha20] {
        for len in [1usize, 64, 100, 300, 1000, 4096 + 17] {
            let mut key = [0u8; 32];
            scalrand_os::entropy::fill(&mut key).unwrap();
            let words: Vec<u32> = key
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let mut out = vec![0u8; len];
            scalrand_pool::chacha::keystream(&key, 0, &mut out, rounds);
            let lanes = register_words();
            let left = lanes.iter().filter(|w| words.contains(w)).count();
            if left != 0 {
                found.push(format!("{rounds:?} {len} B: {left} key words"));
            }
            zero(&mut key);
        }
    }
    assert!(
        found.is_empty(),
        "{:?}: key words left in vector registers after keystream: {found:?}",
        backend()
    );
}
