//! A fork from one thread while two others read: the child searches all its writable memory,
//! at every byte offset, for 16-byte pieces of the keys the pools derived before the fork
//! (either half of a key, or one of its 32-bit words repeated across four lanes, as a SIMD
//! backend broadcasts it), and finds none.
//!
//! Two threads read the node pools in a loop (32-byte reads, served from per-CPU batches that
//! refills make under the slot key; 4 KiB reads, each under a one-read key), while the test's
//! thread forks at random moments, 20 times per length. The key observer (`__observe_keys`)
//! records every key the pools derive, the first 16 of a run (the node key among them) and
//! a ring of the last 256, in ordinary memory; the child takes the keys from its copy of
//! that record (which is left out of the search) and looks for their pieces everywhere else: stacks of every thread, heap, the pools' memory. A
//! key that a backend spilled to its stack frame, a slot key outside wipe-on-fork memory, or a
//! key left unwiped after use is found; so is a copy of one key that the test plants in a
//! heap buffer, every time (the control). The child allocates nothing (another thread may have
//! held the allocator's lock at the fork): its tables are allocated before the fork.
//!
//! Run on every backend (`cargo xtask ci` forces each). Where the kernel hands a fork child
//! no zeroed wipe-on-fork memory (qemu-user), the keys of the moment are there by design: not
//! run. Optimised builds only (without optimisation key words pass through stack
//! temporaries).

#![cfg(all(
    target_os = "linux",
    feature = "std",
    not(miri),
    not(scalrand_loom),
    not(debug_assertions)
))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use scalrand_pool::chacha::{__observe_keys, backend};
use scalrand_pool::numa::{NodePools, Topology};
use scalrand_testkit::fork::{in_child, libc_fork, raw_fork};
use scalrand_testkit::maps::{self, Mapping};

/// The first keys a run derives (the node key among them, which lives until a reseed), kept
/// for the whole run.
const FIRST: usize = 16;
/// The later keys the ring keeps: far more than two readers derive between a fork and the
/// last key before it.
const RING: usize = 256;
/// Places for keys: [`FIRST`], then the ring.
const SLOTS: usize = FIRST + RING;

/// The keys the pools derived: the first [`FIRST`] of a run and the last [`RING`], as
/// little-endian words (atomic stores: the observer copies a key through registers only,
/// never a stack slot).
static KEYS: [[AtomicU64; 4]; SLOTS] = [const { [const { AtomicU64::new(0) }; 4] }; SLOTS];
/// Whether a place holds a whole key (cleared while one is written: a fork then finds a
/// half-written place left out).
static READY: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
/// Keys recorded in this run.
static RECORDED: AtomicUsize = AtomicUsize::new(0);

fn record(k: &[u8; 32]) {
    let n = RECORDED.fetch_add(1, Ordering::Relaxed);
    let i = if n < FIRST {
        n
    } else {
        FIRST + (n - FIRST) % RING
    };
    READY[i].store(false, Ordering::Relaxed);
    for (w, c) in KEYS[i].iter().zip(k.chunks_exact(8)) {
        w.store(u64::from_le_bytes(c.try_into().unwrap()), Ordering::Relaxed);
    }
    READY[i].store(true, Ordering::Release);
}

/// Forgets every recorded key: a new run.
fn forget_keys() {
    for (r, k) in READY.iter().zip(&KEYS) {
        r.store(false, Ordering::Relaxed);
        for w in k {
            w.store(0, Ordering::Relaxed);
        }
    }
    RECORDED.store(0, Ordering::Relaxed);
}

/// The forks per read length.
const FORKS: usize = 20;

/// Entries of the child's table: each key's two halves and eight broadcast words, for the
/// recorded keys and [`CONTROL`].
const PIECES: usize = 10 * (SLOTS + 1);

/// The control key: planted in a heap buffer before the forks; every child must find it.
const CONTROL: [u8; 32] = *b"\x3a\x91\x5e\xc7control key of fork_key_se\x0b\xd2";

/// One piece to look for, known by its first 8 bytes: the key (an index into the child's copy
/// of [`KEYS`]) and which piece (0, 1: a half; 2..10: word `piece - 2` broadcast).
#[derive(Clone, Copy, Default)]
struct Entry {
    prefix: u64,
    key: u16,
    piece: u8,
}

/// The child's tables, allocated before the fork.
struct Tables {
    keys: Vec<[u8; 32]>,
    entries: Vec<Entry>,
    /// A filter on the first 8 bytes: one bit per hash, 2^16 bits.
    filter: Vec<u64>,
    text: Vec<u8>,
    mappings: Vec<Mapping>,
    /// The control: a copy of [`CONTROL`], planted at an odd offset before the forks, which
    /// every child must find.
    control: Vec<u8>,
}

fn hash(v: u64) -> usize {
    (v.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as usize
}

/// Piece `piece` of `key` compared with the 16 bytes at `at`.
fn is_piece(at: &[u8], key: &[u8; 32], piece: u8) -> bool {
    match piece {
        0 | 1 => {
            let h = usize::from(piece) * 16;
            at[..16] == key[h..h + 16]
        }
        _ => {
            let w = 4 * usize::from(piece - 2);
            at[..16].chunks_exact(4).all(|c| c == &key[w..w + 4])
        }
    }
}

/// What a child found.
struct Found {
    /// Key pieces outside the record of keys, the child's tables and the control.
    hits: u64,
    /// Key pieces in the control.
    control: u64,
    /// The first hit's offset in its mapping, and the mapping's name.
    first_at: u64,
    first_name: [u8; 40],
}

/// In the child: the pieces of every recorded key found outside the record, and the first one's
/// mapping and offset. Allocates nothing.
fn search(t: &mut Tables) -> Found {
    let kept = (KEYS.as_ptr() as usize, size_of_val(&KEYS));
    let mut n = 0;
    t.filter.fill(0);
    t.keys[SLOTS] = CONTROL;
    for k in (0..SLOTS).chain([SLOTS]) {
        // Straight into the table (skipped by the search), never a whole key in a local.
        if k < SLOTS {
            if !READY[k].load(Ordering::Acquire) {
                continue;
            }
            for (c, w) in t.keys[k].chunks_exact_mut(8).zip(&KEYS[k]) {
                c.copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
            }
        }
        let key = &t.keys[k];
        for piece in 0..10u8 {
            let prefix = if piece < 2 {
                u64::from_le_bytes(key[16 * usize::from(piece)..][..8].try_into().unwrap())
            } else {
                let w = &key[4 * usize::from(piece - 2)..][..4];
                let w = u64::from(u32::from_le_bytes(w.try_into().unwrap()));
                w | (w << 32)
            };
            t.entries[n] = Entry {
                prefix,
                key: k as u16,
                piece,
            };
            t.filter[hash(prefix) / 64] |= 1 << (hash(prefix) % 64);
            n += 1;
        }
    }
    // Key pieces in the table and the filter are 8-byte prefixes, never a whole 16-byte piece.
    t.entries[..n].sort_unstable_by_key(|e| e.prefix);
    let entries = &t.entries[..n];
    let own = [kept, (t.keys.as_ptr() as usize, t.keys.len() * 32)];
    let control = (t.control.as_ptr() as usize, t.control.len());
    let count = maps::writable(&mut t.text, &mut t.mappings);
    let mut f = Found {
        hits: 0,
        control: 0,
        first_at: 0,
        first_name: [0; 40],
    };
    for m in &t.mappings[..count] {
        // SAFETY: a readable and writable mapping of this (single-threaded) child, read as
        // bytes; nothing writes it while the search runs (the search's own memory is in other
        // mappings, or skipped below).
        let mem = unsafe { core::slice::from_raw_parts(m.start as *const u8, m.end - m.start) };
        for at in 0..mem.len().saturating_sub(16) {
            let addr = m.start + at;
            if own.iter().any(|&(s, l)| addr + 16 > s && addr < s + l) {
                continue;
            }
            let v = u64::from_le_bytes(mem[at..at + 8].try_into().unwrap());
            let h = hash(v);
            if t.filter[h / 64] & (1 << (h % 64)) == 0 {
                continue;
            }
            let from = entries.partition_point(|e| e.prefix < v);
            for e in entries[from..].iter().take_while(|e| e.prefix == v) {
                if !is_piece(&mem[at..], &t.keys[usize::from(e.key)], e.piece) {
                    continue;
                }
                if addr >= control.0 && addr + 16 <= control.0 + control.1 {
                    f.control += 1;
                    continue;
                }
                if f.hits == 0 {
                    f.first_at = at as u64;
                    f.first_name = m.name;
                }
                f.hits += 1;
            }
        }
    }
    f
}

/// `FORKS` forks while two threads read `len` bytes at a time: how many children found a key
/// piece, the pieces found over all, and the first one's place.
fn forks_during_reads(len: usize) -> (usize, u64, String) {
    forget_keys();
    // Observed from the first key on, the node keys included.
    __observe_keys(Some(record));
    let pools = NodePools::new(Topology::from_nodes(vec![(0..2).collect()])).unwrap();
    let mut tables = Tables {
        keys: vec![[0u8; 32]; SLOTS + 1],
        entries: vec![Entry::default(); PIECES],
        filter: vec![0u64; 1 << 10],
        text: vec![0u8; 1 << 18],
        mappings: vec![Mapping::EMPTY; 4096],
        control: vec![0u8; 48],
    };
    let stop = AtomicBool::new(false);
    let mut exposed = 0;
    let mut pieces = 0;
    let mut first = String::new();
    /// Stops the readers however the forking loop ends (a failed assertion too), so that the
    /// scope's join does not wait for ever.
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    std::thread::scope(|s| {
        for _ in 0..2 {
            let (pools, stop) = (&pools, &stop);
            s.spawn(move || {
                let mut buf = vec![0u8; len];
                while !stop.load(Ordering::Relaxed) {
                    pools.fill_bytes(&mut buf);
                }
            });
        }
        tables.control[7..39].copy_from_slice(&CONTROL);
        let _stop = Stop(&stop);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for i in 0..FORKS {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            std::thread::sleep(Duration::from_micros(500 + rng % 2500));
            let how = if i.is_multiple_of(2) {
                libc_fork
            } else {
                raw_fork
            };
            let tables = &mut tables;
            let ((), got) = in_child(
                how,
                || {
                    let f = search(tables);
                    let mut out = [0u8; 64];
                    out[..8].copy_from_slice(&f.hits.to_le_bytes());
                    out[8..16].copy_from_slice(&f.first_at.to_le_bytes());
                    out[16..56].copy_from_slice(&f.first_name);
                    out[56..].copy_from_slice(&f.control.to_le_bytes());
                    out
                },
                || (),
            );
            let got = got.expect("the child did not report");
            let hits = u64::from_le_bytes(got[..8].try_into().unwrap());
            let control = u64::from_le_bytes(got[56..64].try_into().unwrap());
            // Both halves and the eight words are there, unless a word's broadcast is
            // degenerate (never, for a random key).
            assert!(
                control >= 2,
                "the child did not find the planted key ({control} pieces)"
            );
            if hits > 0 {
                exposed += 1;
                pieces += hits;
                if first.is_empty() {
                    let at = u64::from_le_bytes(got[8..16].try_into().unwrap());
                    let name = Mapping {
                        name: got[16..56].try_into().unwrap(),
                        ..Mapping::EMPTY
                    };
                    first = format!("{:?} + {at}", name.name());
                }
            }
        }
    });
    __observe_keys(None);
    assert!(
        RECORDED.load(Ordering::Relaxed) > 2 * FORKS,
        "the readers derived too few keys to search for"
    );
    (exposed, pieces, first)
}

fn wipe_on_fork_here() -> bool {
    scalrand_os::wipe::WipeOnFork::<u8>::new(1, |_| 0).wipes_on_fork()
}

#[test]
fn no_fork_child_holds_a_piece_of_a_key_in_use() {
    if !wipe_on_fork_here() {
        eprintln!(
            "not checked: no wipe-on-fork memory here (a child holds the keys of the moment)"
        );
        return;
    }
    let mut failures = Vec::new();
    for len in [32, 4096] {
        let (exposed, pieces, first) = forks_during_reads(len);
        eprintln!(
            "{len} B on {:?}: {exposed} of {FORKS} forks found a key piece ({pieces} pieces; first {first})",
            backend()
        );
        if exposed > 0 {
            failures.push(format!(
                "{len} B: {exposed} of {FORKS} forks, first {first}"
            ));
        }
    }
    assert!(failures.is_empty(), "on {:?}: {failures:#?}", backend());
}
