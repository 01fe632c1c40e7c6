//! scalrand-shuffle on arbitrary zones and operation sequences: no page is ever lost or
//! duplicated (the free pages always equal a plain set model), the free lists stay consistent
//! with buddy order and migratetype, holes are never handed out, and bad input gets a typed
//! error instead of a panic.
#![no_main]

use std::collections::BTreeSet;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rand_core::SeedableRng;
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::{
    Error, MAX_ORDER, MigrateType, ShuffleMode, ShufflePolicy, Zone, ZoneConfig,
};

#[derive(Arbitrary, Debug)]
enum Op {
    Alloc { order: u8, mt: u8 },
    Free { idx: u16 },
    FreeBogus { pfn_off: u16, order: u8 },
    Shuffle { order: u8, fisher_yates: bool },
    Online { start_off: u16, len: u16 },
}

#[derive(Arbitrary, Debug)]
struct Input {
    start: u64,
    span: u16,
    holes: Vec<(u16, u16)>,
    unmovable: Vec<(u16, u16)>,
    enabled: bool,
    order: u8,
    fisher_yates: bool,
    pick_tail: bool,
    seed: u64,
    ops: Vec<Op>,
}

fn check(z: &Zone<Xoroshiro128PlusPlus>, model: &BTreeSet<u64>) {
    if let Err(e) = z.check_consistency() {
        panic!("inconsistent zone: {e}");
    }
    let free = z.free_page_set();
    assert!(
        free.iter().eq(model.iter()),
        "free pages differ from the model"
    );
}

fuzz_target!(|inp: Input| {
    let start = inp.start;
    // Small zones keep each run fast (every op is checked against the model in O(span)).
    let span = u64::from(inp.span % 8192);
    let mut cfg = match ZoneConfig::with_span(start, span) {
        Ok(c) => c,
        Err(Error::EmptyZone | Error::PfnOverflow) => return,
        Err(e) => panic!("unexpected {e}"),
    };
    let mut present: BTreeSet<u64> = (start..start + span).collect();
    let end = start + span;
    let range = |a: u16, l: u16| {
        let s = start.checked_add(u64::from(a))?;
        Some((s, s.checked_add(u64::from(l))?))
    };
    for &(a, l) in inp.holes.iter().take(4) {
        let Some((s, e)) = range(a, l) else { continue };
        match cfg.clone().hole(s, e) {
            Ok(c) => {
                cfg = c;
                for p in s..e {
                    present.remove(&p);
                }
            }
            Err(Error::RangeOutsideZone { .. }) => assert!(e > end),
            Err(e) => panic!("unexpected {e}"),
        }
    }
    for &(a, l) in inp.unmovable.iter().take(4) {
        let Some((s, e)) = range(a, l) else { continue };
        if let Ok(c) = cfg.clone().migratetype(s, e, MigrateType::Unmovable) {
            cfg = c;
        }
    }
    let mode = if inp.fisher_yates {
        ShuffleMode::FisherYates
    } else {
        ShuffleMode::Kernel
    };
    let policy = ShufflePolicy {
        enabled: inp.enabled,
        order: inp.order,
        mode,
        pick_tail: inp.pick_tail,
    };
    let mut z = match Zone::new(&cfg, policy, Xoroshiro128PlusPlus::seed_from_u64(inp.seed)) {
        Ok(z) => z,
        Err(Error::OrderTooLarge { order }) => {
            assert!(order > MAX_ORDER);
            return;
        }
        Err(Error::AllHoles) => {
            assert!(present.is_empty());
            return;
        }
        Err(e) => panic!("unexpected {e}"),
    };
    let mut model = present.clone();
    let mut live: Vec<(u64, u8)> = Vec::new();
    check(&z, &model);
    for op in inp.ops.into_iter().take(100) {
        match op {
            Op::Alloc { order, mt } => {
                let mt = MigrateType::ALL[usize::from(mt) % 3];
                match z.alloc_pages(order, mt) {
                    Ok(Some(pfn)) => {
                        assert_eq!(pfn % (1 << order), 0);
                        for p in pfn..pfn + (1 << order) {
                            assert!(present.contains(&p), "hole handed out");
                            assert!(model.remove(&p), "page handed out twice");
                        }
                        live.push((pfn, order));
                    }
                    Ok(None) => {
                        for o in order..=MAX_ORDER {
                            for m in MigrateType::ALL {
                                assert_eq!(z.nr_free(o, m), 0);
                            }
                        }
                    }
                    Err(Error::OrderTooLarge { .. }) => assert!(order > MAX_ORDER),
                    Err(e) => panic!("unexpected {e}"),
                }
            }
            Op::Free { idx } => {
                if !live.is_empty() {
                    let (pfn, order) = live.swap_remove(usize::from(idx) % live.len());
                    z.free_pages(pfn, order).unwrap();
                    for p in pfn..pfn + (1 << order) {
                        assert!(model.insert(p));
                    }
                }
            }
            Op::FreeBogus { pfn_off, order } => {
                let Some(pfn) = start.checked_add(u64::from(pfn_off)) else {
                    continue;
                };
                if !live.contains(&(pfn, order)) {
                    assert!(z.free_pages(pfn, order).is_err());
                }
            }
            Op::Shuffle {
                order,
                fisher_yates,
            } => {
                let mode = if fisher_yates {
                    ShuffleMode::FisherYates
                } else {
                    ShuffleMode::Kernel
                };
                match z.shuffle_zone(order, mode) {
                    Ok(_) => {}
                    Err(Error::OrderTooLarge { .. }) => assert!(order > MAX_ORDER),
                    Err(e) => panic!("unexpected {e}"),
                }
            }
            Op::Online { start_off, len } => {
                let Some((s, e)) = range(start_off, len) else {
                    continue;
                };
                match z.online_pages(s, e) {
                    Ok(_) => {
                        for p in s..e {
                            assert!(present.insert(p), "onlined a present page");
                            model.insert(p);
                        }
                    }
                    Err(Error::AlreadyOnline { pfn }) => assert!(present.contains(&pfn)),
                    Err(Error::RangeOutsideZone { .. }) => assert!(e > end),
                    Err(e) => panic!("unexpected {e}"),
                }
            }
        }
        check(&z, &model);
    }
});
