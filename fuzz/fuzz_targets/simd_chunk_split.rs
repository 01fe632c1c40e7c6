//! Fuzz target for scalrand-simd-chunk: arbitrary data, check interval, split of the input into
//! `update` calls, yield pattern and SIMD-section failure pattern must give exactly the
//! one-shot digest, with yields counted equal to the yes answers of `should_yield`.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scalrand_simd_chunk::digest::{Digest, FixedOutput, Update};
use scalrand_simd_chunk::{
    Chunked, Policy, Preempt, SimdSection, Work, digest_chunked_with, fill_chunked,
};

#[derive(Debug, Arbitrary)]
struct Input {
    algo: u8,
    interval: u16,
    yields: Vec<bool>,
    fails: Vec<bool>,
    splits: Vec<u16>,
    data: Vec<u8>,
}

struct Scripted<'a> {
    pattern: &'a [bool],
    asked: usize,
    yes: u64,
}

impl Preempt for Scripted<'_> {
    fn should_yield(&mut self, _: Work) -> bool {
        let yes = self
            .pattern
            .get(self.asked % self.pattern.len().max(1))
            .copied()
            .unwrap_or(false);
        self.asked += 1;
        self.yes += u64::from(yes);
        yes
    }
    fn yield_now(&mut self) {}
}

struct Section<'a> {
    fails: &'a [bool],
    calls: usize,
    held: bool,
}

impl SimdSection for Section<'_> {
    fn begin(&mut self) -> bool {
        assert!(!self.held);
        let fail = self
            .fails
            .get(self.calls % self.fails.len().max(1))
            .copied()
            .unwrap_or(false);
        self.calls += 1;
        self.held = !fail;
        !fail
    }
    fn end(&mut self) {
        assert!(self.held);
        self.held = false;
    }
}

fn check<D: Digest + Update + FixedOutput + Default>(input: &Input) {
    let policy = Policy::new(usize::from(input.interval).max(1)).unwrap();

    let mut pre = Scripted {
        pattern: &input.yields,
        asked: 0,
        yes: 0,
    };
    let mut sec = Section {
        fails: &input.fails,
        calls: 0,
        held: false,
    };
    let (out, c) = digest_chunked_with::<D, _, _>(&input.data, policy, &mut sec, &mut pre);
    assert_eq!(out, <D as Digest>::digest(&input.data));
    assert_eq!(c.yields, pre.yes);
    assert_eq!(c.checks, pre.asked as u64);
    assert!(!sec.held);

    let mut pre = Scripted {
        pattern: &input.yields,
        asked: 0,
        yes: 0,
    };
    let mut sec = Section {
        fails: &input.fails,
        calls: 0,
        held: false,
    };
    let mut h = Chunked::with_parts(D::default(), policy, &mut sec, &mut pre);
    let mut rest = &input.data[..];
    for &s in &input.splits {
        let (a, b) = rest.split_at(usize::from(s).min(rest.len()));
        h.update(a);
        rest = b;
    }
    h.update(rest);
    let yields = h.counters().yields;
    assert_eq!(h.finalize(), <D as Digest>::digest(&input.data));
    assert_eq!(yields, pre.yes);
}

fuzz_target!(|input: Input| {
    match input.algo % 7 {
        0 => check::<sha1::Sha1>(&input),
        1 => check::<sha2::Sha224>(&input),
        2 => check::<sha2::Sha256>(&input),
        3 => check::<sha2::Sha384>(&input),
        4 => check::<sha2::Sha512>(&input),
        5 => check::<blake3::Hasher>(&input),
        _ => {
            // The fill driver: every byte written once, in order.
            let mut buf = vec![0u8; input.data.len()];
            let mut pre = Scripted {
                pattern: &input.yields,
                asked: 0,
                yes: 0,
            };
            let mut sec = Section {
                fails: &input.fails,
                calls: 0,
                held: false,
            };
            let mut src = &input.data[..];
            let policy = Policy::new(usize::from(input.interval).max(1)).unwrap();
            let c = fill_chunked(&mut buf, policy, &mut sec, &mut pre, |piece, _| {
                let (now, later) = src.split_at(piece.len());
                piece.copy_from_slice(now);
                src = later;
            });
            assert_eq!(buf, input.data);
            assert_eq!(c.yields, pre.yes);
        }
    }
});
