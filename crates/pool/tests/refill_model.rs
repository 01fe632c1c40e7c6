//! A model check of the rseq read path's protocol (`numa/rseq/protocol.rs`): two CPUs, two
//! threads, every interleaving of their steps explored, with a preemption (another thread of
//! the CPU runs) or a migration possible between any two steps and a restartable section
//! either run whole or aborted after its zero stores and before its commit.
//!
//! Inline assembly and the kernel's restarts cannot run under loom, so the model is the
//! protocol's rules written as a state machine: a section is one atomic step on its CPU's
//! slot (the rseq guarantee), everything a refill does between sections (claiming a frame,
//! generating, giving a replaced frame back) is a step of its own that any other step may come
//! between. It checks what the module docs claim:
//! - no output word is handed out twice, across refills, aborts, skips and migrations;
//! - no key generates two batches (take key hands each key to one refill);
//! - a frame is never claimed while a slot's control word names it or a thread owns it;
//! - no step waits for another thread (the explorer would find a state with no move), and
//!   every read ends after at most three refills, served by the rseq path or sent to the
//!   locked one.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // test code

use std::collections::{HashSet, VecDeque};

/// Words per batch (the first is the next key, as in the pools).
const BATCH: u8 = 3;
/// Words per read.
const READ: u8 = 2;
/// Frames in the pool.
const FRAMES: usize = 3;
/// Reads per thread.
const READS: u8 = 1;

/// A key: a node key `Node(n)`, or the key a batch of key `k` carries in its first word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
enum Key {
    Node(u8),
    Next(u16),
}

impl Key {
    /// A small unique number per key (for output words and the next key).
    fn id(self) -> u16 {
        match self {
            Key::Node(n) => u16::from(n),
            Key::Next(k) => k,
        }
    }
    fn next(self) -> Key {
        Key::Next(self.id() * 8 + 100)
    }
}

/// What a word of a batch holds: an output word (key, index), or zero.
type Word = Option<(u16, u8)>;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Cell {
    Empty,
    Full(Key),
    /// A key whose take was aborted between its zero stores and its commit.
    Broken,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Slot {
    /// (frame, next word) of the active batch.
    word: Option<(usize, u8)>,
    cell: Cell,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Owner {
    Free,
    Thread(usize),
    Published,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Frame {
    owner: Owner,
    words: [Word; BATCH as usize],
}

/// Where a thread is in its current read.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Pc {
    /// Run the take section.
    Take,
    /// Claim a frame (refill step 0).
    Claim,
    /// Run take key into frame `f`.
    TakeKey(usize),
    /// Generate into frame `f` from `key`, taken on CPU `cpu`.
    Generate(usize, Key, usize),
    /// Put back `next` (taken on `cpu`), then publish frame `f`.
    PutKey(usize, Key, usize),
    Publish(usize),
    /// Give back frame `f` that a publish replaced (its unread words are zeroed here).
    GiveBack(usize),
    /// The read is over (done, or sent to the locked path).
    Done,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Thread {
    cpu: usize,
    pc: Pc,
    reads_left: u8,
    refills: u8,
    /// Whether this thread has migrated already (one migration each keeps the model small).
    moved: bool,
    /// Whether one of its sections was aborted already (one abort each, for the same reason).
    aborted: bool,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct State {
    slots: [Slot; 2],
    frames: [Frame; FRAMES],
    threads: [Thread; 2],
    node_keys: u8,
    /// Every word handed out, sorted.
    out: Vec<(u16, u8)>,
    /// Every key that generated a batch, sorted.
    generated: Vec<u16>,
    /// Reads sent to the locked path.
    locked: u8,
}

/// Records `x` in the sorted vector `v`; `false` if it was there already.
fn insert<T: Ord>(v: &mut Vec<T>, x: T) -> bool {
    match v.binary_search(&x) {
        Ok(_) => false,
        Err(i) => {
            v.insert(i, x);
            true
        }
    }
}

/// The next states after thread `t` takes one step (several: a section may also abort).
fn step(s: &State, t: usize) -> Vec<State> {
    let th = s.threads[t].clone();
    let c = th.cpu;
    let mut next = Vec::new();
    let mut n = s.clone();
    match th.pc {
        Pc::Done => unreachable!(),
        Pc::Take => {
            // The take section: whole, or aborted after its zero stores.
            let usable = s.slots[c]
                .word
                .and_then(|(f, pos)| (pos + READ <= BATCH).then_some((f, pos)));
            match usable {
                Some((f, pos)) if s.frames[f].words[pos as usize].is_none() => {
                    // A zero word at `next`: skip it (its own section), then take again.
                    n.slots[c].word = Some((f, pos + 1));
                    next.push(n);
                }
                Some((f, pos)) => {
                    let mut whole = n.clone();
                    for i in pos..pos + READ {
                        // The section looks at the first word only: the words an aborted take
                        // zeroed are always a run from `next`, so none after a nonzero first
                        // word is zero, and no read hands out a zero word.
                        let w = whole.frames[f].words[i as usize].take();
                        let w = w.unwrap_or_else(|| panic!("a zero word handed out: {s:#?}"));
                        assert!(insert(&mut whole.out, w), "word {w:?} handed out twice");
                    }
                    whole.slots[c].word = Some((f, pos + READ));
                    finish_read(&mut whole, t);
                    next.push(whole);
                    // Aborted after one or both zero stores: those words are zero, `next`
                    // stays, the thread runs the section again.
                    for zeroed in (1..=READ).filter(|_| !th.aborted) {
                        let mut a = n.clone();
                        a.threads[t].aborted = true;
                        for i in pos..pos + zeroed {
                            a.frames[f].words[i as usize] = None;
                        }
                        next.push(a);
                    }
                }
                None => {
                    if th.refills == 3 {
                        n.locked += 1;
                        finish_read(&mut n, t);
                    } else {
                        n.threads[t].refills += 1;
                        n.threads[t].pc = Pc::Claim;
                    }
                    next.push(n);
                }
            }
        }
        Pc::Claim => {
            match n.frames.iter().position(|f| f.owner == Owner::Free) {
                Some(f) => {
                    for sl in &n.slots {
                        assert_ne!(sl.word.map(|w| w.0), Some(f), "claimed a published frame");
                    }
                    n.frames[f].owner = Owner::Thread(t);
                    n.threads[t].pc = Pc::TakeKey(f);
                }
                None => {
                    n.locked += 1;
                    finish_read(&mut n, t);
                }
            }
            next.push(n);
        }
        Pc::TakeKey(f) => {
            match s.slots[c].cell.clone() {
                Cell::Full(k) => {
                    let mut whole = n.clone();
                    whole.slots[c].cell = Cell::Empty;
                    whole.threads[t].pc = Pc::Generate(f, k, c);
                    next.push(whole);
                    // Aborted between the zero stores: a broken key stays in the cell.
                    if !th.aborted {
                        let mut a = n.clone();
                        a.slots[c].cell = Cell::Broken;
                        a.threads[t].aborted = true;
                        next.push(a);
                    }
                }
                Cell::Broken | Cell::Empty => {
                    // Consumed as unusable (or none there): a fresh key from the node.
                    n.slots[c].cell = Cell::Empty;
                    n.node_keys += 1;
                    n.threads[t].pc = Pc::Generate(f, Key::Node(n.node_keys), c);
                    next.push(n);
                }
            }
        }
        Pc::Generate(f, k, from) => {
            assert!(
                insert(&mut n.generated, k.id()),
                "key {k:?} generated two batches"
            );
            n.frames[f].words[0] = None; // the next key's word, zeroed after the put
            for i in 1..BATCH {
                n.frames[f].words[i as usize] = Some((k.id(), i));
            }
            n.threads[t].pc = Pc::PutKey(f, k.next(), from);
            next.push(n);
        }
        Pc::PutKey(f, k, from) => {
            if c == from && s.slots[c].cell == Cell::Empty {
                n.slots[c].cell = Cell::Full(k);
            }
            n.threads[t].pc = Pc::Publish(f);
            next.push(n);
        }
        Pc::Publish(f) => {
            let old = n.slots[c].word.replace((f, 1));
            n.frames[f].owner = Owner::Published;
            match old {
                Some((g, _)) => {
                    n.frames[g].owner = Owner::Thread(t);
                    n.threads[t].pc = Pc::GiveBack(g);
                }
                None => n.threads[t].pc = Pc::Take,
            }
            next.push(n);
        }
        Pc::GiveBack(g) => {
            n.frames[g].words = [None; BATCH as usize];
            n.frames[g].owner = Owner::Free;
            n.threads[t].pc = Pc::Take;
            next.push(n);
        }
    }
    next
}

fn finish_read(s: &mut State, t: usize) {
    let th = &mut s.threads[t];
    th.reads_left -= 1;
    th.refills = 0;
    th.pc = if th.reads_left == 0 {
        Pc::Done
    } else {
        Pc::Take
    };
}

/// Explores every interleaving from `start`; returns (states, final states).
fn explore(start: State) -> (usize, usize) {
    let mut seen = HashSet::from([start.clone()]);
    let mut queue = VecDeque::from([start]);
    let (mut states, mut ends) = (0usize, 0usize);
    let mut push = |n: State, queue: &mut VecDeque<State>| {
        if seen.insert(n.clone()) {
            queue.push_back(n);
        }
    };
    while let Some(s) = queue.pop_front() {
        states += 1;
        assert!(states < 20_000_000, "the model has grown past its bound");
        let mut moves = 0;
        for t in 0..2 {
            if s.threads[t].pc == Pc::Done {
                continue;
            }
            for n in step(&s, t) {
                moves += 1;
                push(n, &mut queue);
            }
            if !s.threads[t].moved {
                // Migrated between two steps: the next section runs on the other CPU.
                let mut m = s.clone();
                m.threads[t].cpu ^= 1;
                m.threads[t].moved = true;
                moves += 1;
                push(m, &mut queue);
            }
        }
        if moves == 0 {
            assert!(
                s.threads.iter().all(|t| t.pc == Pc::Done),
                "a state where no thread can move: {s:#?}"
            );
            ends += 1;
            // Every read was served, by the rseq path or the locked one.
            let words = s.out.len() as u8;
            assert_eq!(words / READ + s.locked, 2 * READS, "{s:#?}");
        }
    }
    (states, ends)
}

/// Two threads that both start on CPU 0: from slots that were never keyed (a fresh process,
/// a fork child), and from CPU 0 in its steady state (a batch half read, a key in the cell).
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "millions of states: run with --release (CI does)"
)]
fn every_interleaving_hands_out_each_word_once_and_uses_each_key_once() {
    let thread = |cpu| Thread {
        cpu,
        pc: Pc::Take,
        reads_left: READS,
        refills: 0,
        moved: false,
        aborted: false,
    };
    let empty = Slot {
        word: None,
        cell: Cell::Empty,
    };
    let fresh = State {
        slots: [empty.clone(), empty],
        frames: core::array::from_fn(|_| Frame {
            owner: Owner::Free,
            words: [None; BATCH as usize],
        }),
        threads: [thread(0), thread(0)],
        node_keys: 0,
        out: Vec::new(),
        generated: Vec::new(),
        locked: 0,
    };
    // CPU 0 after one refill from node key 1 and nothing read yet: frame 0 published, the
    // next key in the cell.
    let mut steady = fresh.clone();
    steady.node_keys = 1;
    steady.generated.push(Key::Node(1).id());
    steady.slots[0] = Slot {
        word: Some((0, 1)),
        cell: Cell::Full(Key::Node(1).next()),
    };
    steady.frames[0].owner = Owner::Published;
    for i in 1..BATCH {
        steady.frames[0].words[i as usize] = Some((Key::Node(1).id(), i));
    }
    for (name, start) in [("fresh", fresh), ("steady", steady)] {
        let (states, ends) = explore(start);
        eprintln!("{name}: {states} states, {ends} final");
        assert!(ends > 0 && states > 100_000, "{name}");
    }
}
