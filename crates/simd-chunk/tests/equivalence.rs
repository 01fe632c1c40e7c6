//! Property tests: any data, check interval, yield pattern, section failure pattern and split
//! of the input give exactly the one-shot digest, and the counters match what the policy and
//! section were asked and answered. Runs SHA-1, SHA-224/256/384/512 and BLAKE3 (through its
//! `traits-preview` digest 0.11 impls).

// Test helpers outside #[test] fns unwrap and assert too; clippy.toml only exempts #[test] bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use digest::Digest;
use proptest::prelude::*;
use scalrand_simd_chunk::{
    Chunked, Policy, Preempt, SimdSection, Work, digest_chunked, digest_chunked_with, fill_chunked,
};

/// Answers `should_yield` from a cyclic script and records everything it was asked.
struct Scripted {
    pattern: Vec<bool>,
    asked: usize,
    said_yes: u64,
    yield_calls: u64,
    pending_yield: bool,
    interval: usize,
}

impl Scripted {
    fn new(pattern: Vec<bool>, interval: usize) -> Self {
        Scripted {
            pattern,
            asked: 0,
            said_yes: 0,
            yield_calls: 0,
            pending_yield: false,
            interval,
        }
    }
}

impl Preempt for Scripted {
    fn should_yield(&mut self, work: Work) -> bool {
        assert!(
            !self.pending_yield,
            "should_yield called again before yield_now"
        );
        assert_eq!(work.bytes, self.interval);
        let yes = self.pattern.is_empty() || self.pattern[self.asked % self.pattern.len()];
        self.asked += 1;
        if yes {
            self.said_yes += 1;
            self.pending_yield = true;
        }
        yes
    }

    fn yield_now(&mut self) {
        assert!(
            self.pending_yield,
            "yield_now without a yes from should_yield"
        );
        self.pending_yield = false;
        self.yield_calls += 1;
    }
}

/// A section that fails `begin` per a cyclic script and asserts it is never nested.
struct Section {
    fail: Vec<bool>,
    begins: usize,
    held: bool,
    ok_begins: u64,
    failed_begins: u64,
    ends: u64,
}

impl Section {
    fn new(fail: Vec<bool>) -> Self {
        Section {
            fail,
            begins: 0,
            held: false,
            ok_begins: 0,
            failed_begins: 0,
            ends: 0,
        }
    }
}

impl SimdSection for Section {
    fn begin(&mut self) -> bool {
        assert!(!self.held, "begin while the section is held");
        let fail = !self.fail.is_empty() && self.fail[self.begins % self.fail.len()];
        self.begins += 1;
        if fail {
            self.failed_begins += 1;
            false
        } else {
            self.held = true;
            self.ok_begins += 1;
            true
        }
    }

    fn end(&mut self) {
        assert!(self.held, "end without a held section");
        self.held = false;
        self.ends += 1;
    }
}

fn check_one_shot<D: Digest>(data: &[u8], interval: usize, pattern: Vec<bool>, fail: Vec<bool>) {
    let policy = Policy::new(interval).unwrap();
    let mut pre = Scripted::new(pattern, interval);
    let mut sec = Section::new(fail);
    let (out, c) = digest_chunked_with::<D, _, _>(data, policy, &mut sec, &mut pre);
    assert_eq!(out, D::digest(data));
    let expected_checks = if data.is_empty() {
        0
    } else {
        (data.len() - 1) / interval
    };
    assert_eq!(c.checks, expected_checks as u64);
    assert_eq!(c.checks, pre.asked as u64);
    assert_eq!(c.yields, pre.said_yes);
    assert_eq!(c.yields, pre.yield_calls);
    assert_eq!(c.sections, sec.ok_begins);
    assert_eq!(c.sections, sec.ends);
    assert_eq!(c.fallbacks, sec.failed_begins);
    assert!(!sec.held);
    // One begin per call plus one per real yield, never more.
    let begins = if data.is_empty() { 0 } else { 1 + c.yields };
    assert_eq!(sec.begins as u64, begins);
    assert_eq!(c.bytes, data.len() as u64);
    assert!(c.longest_stretch <= data.len() as u64);
    if c.yields == 0 {
        assert_eq!(c.longest_stretch, data.len() as u64);
    }
}

fn check_splits<D: Digest + digest::Update + digest::FixedOutput>(
    data: &[u8],
    interval: usize,
    splits: &[usize],
    pattern: Vec<bool>,
) {
    let policy = Policy::new(interval).unwrap();
    let mut pre = Scripted::new(pattern, interval);
    let mut sec = Section::new(Vec::new());
    let mut h = Chunked::with_parts(D::new(), policy, &mut sec, &mut pre);
    let mut rest = data;
    for &s in splits {
        let (a, b) = rest.split_at(s.min(rest.len()));
        h.update(a);
        rest = b;
    }
    h.update(rest);
    let c = *h.counters();
    assert_eq!(h.finalize(), <D as Digest>::digest(data));
    // Check points are counted from the start of the stream: same count as one call.
    let expected_checks = if data.is_empty() {
        0
    } else {
        (data.len() - 1) / interval
    };
    assert_eq!(c.checks, expected_checks as u64);
    assert_eq!(c.yields, pre.said_yes);
    assert_eq!(c.sections, sec.ends);
}

fn data_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..6000)
}

macro_rules! digest_props {
    ($name:ident, $d:ty) => {
        mod $name {
            use super::*;
            proptest! {
                #![proptest_config(ProptestConfig::with_cases(64))]
                #[test]
                fn any_interval_and_pattern(
                    data in data_strategy(),
                    interval in 1usize..3000,
                    pattern in prop::collection::vec(any::<bool>(), 0..8),
                    fail in prop::collection::vec(any::<bool>(), 0..4),
                ) {
                    check_one_shot::<$d>(&data, interval, pattern, fail);
                }

                #[test]
                fn any_split(
                    data in data_strategy(),
                    interval in 1usize..3000,
                    splits in prop::collection::vec(0usize..2500, 0..6),
                    pattern in prop::collection::vec(any::<bool>(), 0..8),
                ) {
                    check_splits::<$d>(&data, interval, &splits, pattern);
                }
            }

            #[test]
            fn default_policy_large_input() {
                // Several default (4 KiB) intervals, not a multiple of the interval.
                let data: Vec<u8> = (0..70_001u32).map(|i| (i * 31 + 7) as u8).collect();
                let mut pre = Scripted::new(vec![true, false, false], 4096);
                assert_eq!(
                    digest_chunked::<$d>(&data, &mut pre),
                    <$d as Digest>::digest(&data)
                );
                assert_eq!(pre.asked, 70_000 / 4096);
                assert_eq!(pre.said_yes, pre.yield_calls);
            }
        }
    };
}

digest_props!(sha1, ::sha1::Sha1);
digest_props!(sha224, ::sha2::Sha224);
digest_props!(sha256, ::sha2::Sha256);
digest_props!(sha384, ::sha2::Sha384);
digest_props!(sha512, ::sha2::Sha512);
digest_props!(blake3, ::blake3::Hasher);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn fill_visits_every_byte_once_in_order(
        len in 0usize..20_000,
        interval in 1usize..5000,
        pattern in prop::collection::vec(any::<bool>(), 0..8),
    ) {
        let mut buf = vec![0u8; len];
        let mut pre = Scripted::new(pattern, interval);
        let mut sec = Section::new(Vec::new());
        let mut next = 0u32;
        let mut pieces = 0u64;
        let c = fill_chunked(&mut buf, Policy::new(interval).unwrap(), &mut sec, &mut pre, |piece, simd| {
            assert!(simd);
            assert!(!piece.is_empty() && piece.len() <= interval);
            pieces += 1;
            for b in piece {
                *b = (next % 251) as u8 + 1;
                next += 1;
            }
        });
        prop_assert!(buf.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8 + 1));
        prop_assert_eq!(c.checks + u64::from(len > 0), pieces);
        prop_assert_eq!(c.yields, pre.said_yes);
    }
}
