//! `shuffle_zone` (kernel mode) and the boot-time buddy freeing, bit for bit against the
//! independent C reference `tests/data/shuffle_ref.c` (its output is committed as
//! `tests/data/shuffle_ref.out`; the C file says how to regenerate it).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

mod common;

use common::SplitMix64;
use scalrand_shuffle::{
    KernelVersion, MAX_ORDER, MigrateType, PcpLists, ShuffleMode, ShufflePolicy, Zone, ZoneConfig,
};
use std::fmt::Write;

struct Scenario {
    start: u64,
    spanned: u64,
    holes: Vec<(u64, u64)>,
    unmovable: Vec<(u64, u64)>,
    order: u8,
    seed: u64,
    rounds: u32,
}

fn scenarios() -> Vec<Scenario> {
    let s2 = 0x40000;
    vec![
        Scenario {
            start: 0,
            spanned: 16 * 1024,
            holes: vec![],
            unmovable: vec![],
            order: 10,
            seed: 42,
            rounds: 1,
        },
        Scenario {
            start: 512,
            spanned: 16 * 1024,
            holes: vec![],
            unmovable: vec![],
            order: 10,
            seed: 43,
            rounds: 1,
        },
        Scenario {
            start: s2,
            spanned: 32 * 1024,
            holes: vec![
                (s2 + 3 * 1024, s2 + 4 * 1024),
                (s2 + 10 * 1024 + 100, s2 + 10 * 1024 + 200),
            ],
            unmovable: vec![(s2 + 5 * 1024, s2 + 8 * 1024)],
            order: 10,
            seed: 44,
            rounds: 3,
        },
        Scenario {
            start: 0,
            spanned: 8 * 1024,
            holes: (0..8).map(|k| (k * 1024, k * 1024 + 512)).collect(),
            unmovable: vec![],
            order: 9,
            seed: 45,
            rounds: 1,
        },
        Scenario {
            start: 1024,
            spanned: 20 * 1024 + 300,
            holes: vec![],
            unmovable: vec![],
            order: 10,
            seed: 46,
            rounds: 2,
        },
        Scenario {
            start: 1024,
            spanned: 20 * 1024 + 300,
            holes: vec![],
            unmovable: vec![],
            order: 2,
            seed: 47,
            rounds: 1,
        },
    ]
}

fn lists<R>(z: &Zone<R>, tag: &str, out: &mut String) {
    for o in 0..=MAX_ORDER {
        for mt in MigrateType::ALL {
            let l = z.free_list(o, mt);
            if l.is_empty() {
                continue;
            }
            write!(out, "{tag} o{o} m{}:", mt as u8).unwrap();
            for p in l {
                write!(out, " {p:x}").unwrap();
            }
            out.push('\n');
        }
    }
}

#[test]
fn matches_c_reference() {
    let mut out = String::new();
    for (id, sc) in scenarios().into_iter().enumerate() {
        // The C reference frees at boot the pre-5.10 way (head of the list, no FPI_TO_TAIL).
        let mut cfg = ZoneConfig::with_span(sc.start, sc.spanned)
            .unwrap()
            .kernel(KernelVersion::V5_2)
            .pcp(PcpLists::Off);
        for (s, e) in sc.holes {
            cfg = cfg.hole(s, e).unwrap();
        }
        for (s, e) in sc.unmovable {
            cfg = cfg.migratetype(s, e, MigrateType::Unmovable).unwrap();
        }
        let mut z = Zone::new(&cfg, ShufflePolicy::OFF, SplitMix64(sc.seed)).unwrap();
        lists(&z, &format!("S{id} boot"), &mut out);
        let (mut words, mut swaps) = (0, 0);
        for _ in 0..sc.rounds {
            let st = z.shuffle_zone(sc.order, ShuffleMode::Kernel).unwrap();
            words += st.random_words;
            swaps += st.swaps;
        }
        z.check_consistency().unwrap();
        writeln!(out, "S{id} words {words} swaps {swaps}").unwrap();
        lists(&z, &format!("S{id} shuf"), &mut out);
    }
    let expected = include_str!("data/shuffle_ref.out");
    for (i, (a, b)) in out.lines().zip(expected.lines()).enumerate() {
        assert_eq!(a, b, "line {i} differs from the C reference");
    }
    assert_eq!(out.lines().count(), expected.lines().count());
}

#[test]
fn misaligned_zone_is_never_shuffled() {
    // The kernel quirk: i is aligned absolutely, j relative to zone_start_pfn.
    let cfg = ZoneConfig::with_span(512, 16 * 1024)
        .unwrap()
        .kernel(KernelVersion::V5_2);
    let mut z = Zone::new(&cfg, ShufflePolicy::OFF, SplitMix64(7)).unwrap();
    let before = z.free_list(10, MigrateType::Movable);
    assert_eq!(before.len(), 15);
    let st = z.shuffle_zone(10, ShuffleMode::Kernel).unwrap();
    assert_eq!(st.swaps, 0);
    assert_eq!(st.retries_exhausted, 15);
    assert_eq!(st.random_words, 150);
    assert_eq!(z.free_list(10, MigrateType::Movable), before);
    // Fisher-Yates has no such quirk.
    let st = z.shuffle_zone(10, ShuffleMode::FisherYates).unwrap();
    assert_eq!(st.swaps, 14);
}

#[test]
fn draws_exactly_one_word_per_try() {
    // Two blocks: with a replayed stream we know which tries fail. spanned = 2048, order 10.
    // i = 0: r = 5 -> j = 0 (== i, retry), r = 1500 -> j = 1024 (valid): swap.
    // i = 1024: r = 2047 -> j = 1024 (== i), r = 3 -> j = 0: swap back.
    let cfg = ZoneConfig::with_span(0, 2048)
        .unwrap()
        .kernel(KernelVersion::V5_2);
    let mut z = Zone::new(
        &cfg,
        ShufflePolicy::OFF,
        common::Replay(vec![5, 1500, 2047, 3], 0),
    )
    .unwrap();
    let before = z.free_list(10, MigrateType::Movable);
    let st = z.shuffle_zone(10, ShuffleMode::Kernel).unwrap();
    assert_eq!((st.random_words, st.swaps), (4, 2));
    // Two blocks always come back to where they were: the second swap undoes the first.
    assert_eq!(z.free_list(10, MigrateType::Movable), before);
}
