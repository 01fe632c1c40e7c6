//! proptest: after any sequence of allocations, frees, shuffles, hotplugs and per-CPU drains on
//! any zone, under any kernel version's rules, with or without per-CPU lists, the pages not
//! handed out (buddy lists + per-CPU lists) are exactly those a plain set model says are free
//! — per-CPU lists never lose or duplicate a page — the free lists hold exactly the free
//! blocks of their order and migratetype, and holes are never handed out.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

mod common;

use std::collections::BTreeSet;

use common::SplitMix64;
use proptest::prelude::*;
use scalrand_shuffle::{
    Error, KernelVersion, MAX_ORDER, MigrateType, PcpLists, ShuffleMode, ShufflePolicy, Zone,
    ZoneConfig,
};

#[derive(Clone, Debug)]
enum Op {
    Alloc { order: u8, mt: u8, cpu: u32 },
    Free { idx: usize, cpu: u32 },
    Drain,
    FreeBogus { pfn_off: u64, order: u8 },
    Shuffle { order: u8, fy: bool },
    Online { hole: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (prop_oneof![4 => 0u8..3, 1 => 0u8..=MAX_ORDER], 0u8..3, 0u32..4).prop_map(|(order, mt, cpu)| Op::Alloc { order, mt, cpu }),
        5 => (any::<usize>(), 0u32..4).prop_map(|(idx, cpu)| Op::Free { idx, cpu }),
        1 => Just(Op::Drain),
        1 => (0u64..10_000, 0u8..=MAX_ORDER).prop_map(|(pfn_off, order)| Op::FreeBogus { pfn_off, order }),
        1 => (0u8..=MAX_ORDER, any::<bool>()).prop_map(|(order, fy)| Op::Shuffle { order, fy }),
        1 => any::<usize>().prop_map(|hole| Op::Online { hole }),
    ]
}

#[derive(Clone, Debug)]
struct Setup {
    start: u64,
    span: u64,
    holes: Vec<(u64, u64)>,
    unmovable: Vec<(u64, u64)>,
    policy: ShufflePolicy,
    kernel: KernelVersion,
    pcp: PcpLists,
    seed: u64,
}

fn pcp() -> impl Strategy<Value = PcpLists> {
    prop_oneof![
        Just(PcpLists::Off),
        (1u32..4).prop_map(|cpus| PcpLists::Kernel { cpus }),
        (1u32..4, 0u32..10, 1u32..5).prop_map(|(cpus, high, batch)| PcpLists::Custom {
            cpus,
            high,
            batch
        }),
    ]
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop_oneof![Just(0u64), Just(512), Just(1 << 20), 0u64..5000],
        1u64..6000,
        proptest::collection::vec((0.0f64..1.0, 0.0f64..0.3), 0..3),
        proptest::collection::vec((0.0f64..1.0, 0.0f64..0.5), 0..2),
        (any::<bool>(), 0u8..=MAX_ORDER, any::<bool>(), any::<bool>()),
        (any::<u64>(), 0usize..3, pcp()),
    )
        .prop_map(
            |(start, span, holes, unmov, (enabled, order, fy, pick_tail), (seed, k, pcp))| {
                let range = |(a, l): (f64, f64)| {
                    let s = start + (a * span as f64) as u64;
                    let e = (s + (l * span as f64) as u64).min(start + span);
                    (s, e)
                };
                Setup {
                    start,
                    span,
                    holes: holes.into_iter().map(range).collect(),
                    unmovable: unmov.into_iter().map(range).collect(),
                    policy: ShufflePolicy {
                        enabled,
                        order,
                        mode: if fy {
                            ShuffleMode::FisherYates
                        } else {
                            ShuffleMode::Kernel
                        },
                        pick_tail,
                    },
                    kernel: KernelVersion::ALL[k],
                    pcp,
                    seed,
                }
            },
        )
}

fn check<R>(z: &Zone<R>, model: &BTreeSet<u64>) -> Result<(), TestCaseError> {
    if let Err(e) = z.check_consistency() {
        return Err(TestCaseError::fail(e));
    }
    let free = z.free_page_set();
    prop_assert_eq!(free.len(), model.len());
    prop_assert!(
        free.iter().eq(model.iter()),
        "free pages differ from the model"
    );
    prop_assert_eq!(z.nr_free_pages(), model.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_page_lost_or_duplicated(s in setup(), ops in proptest::collection::vec(op(), 1..60)) {
        let mut cfg = ZoneConfig::with_span(s.start, s.span)
            .unwrap()
            .kernel(s.kernel)
            .pcp(s.pcp);
        let cpus = match s.pcp {
            PcpLists::Off => 1,
            PcpLists::Kernel { cpus } | PcpLists::Custom { cpus, .. } => cpus,
        };
        for &(a, b) in &s.holes {
            cfg = cfg.hole(a, b).unwrap();
        }
        for &(a, b) in &s.unmovable {
            cfg = cfg.migratetype(a, b, MigrateType::Unmovable).unwrap();
        }
        let mut present: BTreeSet<u64> = (s.start..s.start + s.span).collect();
        for &(a, b) in &s.holes {
            for p in a..b {
                present.remove(&p);
            }
        }
        let mut z = match Zone::new(&cfg, s.policy, SplitMix64(s.seed)) {
            Ok(z) => z,
            Err(Error::AllHoles) => {
                prop_assert!(present.is_empty());
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
        };
        let mut model: BTreeSet<u64> = present.clone();
        let mut live: Vec<(u64, u8)> = Vec::new();
        check(&z, &model)?;
        for op in ops {
            match op {
                Op::Alloc { order, mt, cpu } => {
                    let mt = MigrateType::ALL[mt as usize];
                    if cpu >= cpus && s.pcp != PcpLists::Off {
                        prop_assert_eq!(z.alloc_pages_on(cpu, order, mt), Err(Error::NoSuchCpu { cpu, cpus }));
                        continue;
                    }
                    match z.alloc_pages_on(cpu, order, mt).unwrap() {
                        Some(pfn) => {
                            prop_assert_eq!(pfn % (1 << order), 0, "block not aligned");
                            for p in pfn..pfn + (1 << order) {
                                prop_assert!(present.contains(&p), "hole handed out");
                                prop_assert!(model.remove(&p), "page handed out twice");
                            }
                            live.push((pfn, order));
                        }
                        None => {
                            prop_assert_eq!(z.nr_pcp_pages(), 0, "None with per-CPU pages left");
                            for o in order..=MAX_ORDER {
                                for m in MigrateType::ALL {
                                    prop_assert_eq!(z.nr_free(o, m), 0, "None with a block free");
                                }
                            }
                        }
                    }
                }
                Op::Drain => {
                    z.drain_pages();
                    prop_assert_eq!(z.nr_pcp_pages(), 0);
                }
                Op::Free { idx, cpu } => {
                    if !live.is_empty() {
                        let (pfn, order) = live.swap_remove(idx % live.len());
                        z.free_pages_on(cpu % cpus, pfn, order).unwrap();
                        for p in pfn..pfn + (1 << order) {
                            prop_assert!(model.insert(p));
                        }
                    }
                }
                Op::FreeBogus { pfn_off, order } => {
                    let pfn = s.start + pfn_off;
                    if !live.contains(&(pfn, order)) {
                        prop_assert_eq!(z.free_pages(pfn, order), Err(Error::NotAllocated { pfn, order }));
                    }
                }
                Op::Shuffle { order, fy } => {
                    let mode = if fy { ShuffleMode::FisherYates } else { ShuffleMode::Kernel };
                    let before: Vec<BTreeSet<u64>> = MigrateType::ALL
                        .iter()
                        .map(|&m| z.free_list(order, m).into_iter().collect())
                        .collect();
                    // The kernel's shuffle compares *pageblock* types before `list_swap`, so a
                    // block filed on a list other than its pageblock's type (a merged block
                    // joins the freed page's list) can trade lists with its partner. Lengths
                    // and the set of order-`order` blocks never change; each list keeps its
                    // members when every block sits on its pageblock's list, and always under
                    // Fisher-Yates, which permutes each list on its own.
                    let filed_by_block = MigrateType::ALL.iter().zip(&before).all(|(&m, list)| {
                        list.iter().all(|&pfn| z.pageblock_migratetype(pfn) == Some(m))
                    });
                    z.shuffle_zone(order, mode).unwrap();
                    let after: Vec<BTreeSet<u64>> = MigrateType::ALL
                        .iter()
                        .map(|&m| z.free_list(order, m).into_iter().collect())
                        .collect();
                    let all = |v: &[BTreeSet<u64>]| v.iter().flatten().copied().collect::<BTreeSet<u64>>();
                    prop_assert_eq!(all(&after), all(&before), "shuffle changed the set of free blocks");
                    for (a, b) in after.iter().zip(&before) {
                        prop_assert_eq!(a.len(), b.len(), "shuffle changed a list's length");
                        if fy || filed_by_block {
                            prop_assert_eq!(a, b, "shuffle changed list membership");
                        }
                    }
                }
                Op::Online { hole } => {
                    if !s.holes.is_empty() {
                        let (a, b) = s.holes[hole % s.holes.len()];
                        let offline = (a..b).all(|p| !present.contains(&p));
                        match z.online_pages(a, b) {
                            Ok(_) => {
                                prop_assert!(offline);
                                for p in a..b {
                                    present.insert(p);
                                    model.insert(p);
                                }
                            }
                            Err(Error::AlreadyOnline { .. }) => prop_assert!(!offline),
                            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
                        }
                    }
                }
            }
            check(&z, &model)?;
        }
        // Freeing everything brings back every present page.
        for (pfn, order) in live {
            z.free_pages(pfn, order).unwrap();
        }
        prop_assert_eq!(z.nr_free_pages(), present.len() as u64);
        check(&z, &present)?;
    }
}
