//! scalrand-shuffle on arbitrary zones, kernel versions, per-CPU list sizes and operation
//! sequences: no page is ever lost or duplicated (the pages not handed out — buddy lists plus
//! per-CPU lists — always equal a plain set model), the free lists stay consistent with buddy
//! order and migratetype, holes are never handed out, and bad input gets a typed error
//! instead of a panic.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rand_core::SeedableRng;
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::{
    Error, KernelVersion, MAX_ORDER, MigrateType, PcpLists, ShuffleMode, ShufflePolicy, Zone,
    ZoneConfig,
};

#[derive(Arbitrary, Debug)]
enum Op {
    Alloc { order: u8, mt: u8, cpu: u8 },
    Free { idx: u16, cpu: u8 },
    Drain,
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
    kernel: u8,
    /// 0: no per-CPU lists; otherwise CPUs (1 ..= 4) with `high` and `batch` below.
    pcp_cpus: u8,
    pcp_high: u8,
    pcp_batch: u8,
    seed: u64,
    ops: Vec<Op>,
}

/// A set of PFNs inside `[start, start + span)`, as a bitmap: the plain model the zone is
/// checked against.
#[derive(Clone)]
struct PageSet {
    start: u64,
    bits: Vec<bool>,
    len: u64,
}

impl PageSet {
    fn full(start: u64, span: u64) -> Self {
        PageSet {
            start,
            bits: vec![true; span as usize],
            len: span,
        }
    }
    fn slot(&self, pfn: u64) -> Option<usize> {
        let i = usize::try_from(pfn.checked_sub(self.start)?).ok()?;
        (i < self.bits.len()).then_some(i)
    }
    fn contains(&self, pfn: u64) -> bool {
        self.slot(pfn).is_some_and(|i| self.bits[i])
    }
    /// Whether `pfn` was absent (and is now present).
    fn insert(&mut self, pfn: u64) -> bool {
        let Some(i) = self.slot(pfn) else {
            panic!("pfn {pfn} outside the zone");
        };
        let was = core::mem::replace(&mut self.bits[i], true);
        self.len += u64::from(!was);
        !was
    }
    /// Whether `pfn` was present (and is now absent).
    fn remove(&mut self, pfn: u64) -> bool {
        let Some(i) = self.slot(pfn) else {
            return false;
        };
        let was = core::mem::replace(&mut self.bits[i], false);
        self.len -= u64::from(was);
        was
    }
}

/// The pages on the zone's free lists are exactly the model's, each on one list once; with
/// `full`, also every invariant `Zone::check_consistency` walks page by page (links, counts,
/// alignment, buddy flags, no unmerged buddies).
fn check(z: &Zone<Xoroshiro128PlusPlus>, model: &PageSet, full: bool) {
    assert_eq!(z.nr_free_pages(), model.len, "free page count");
    // Pages waiting on per-CPU lists are free too, each on one list once.
    let pcp: Vec<u64> = (0..4u32)
        .flat_map(|cpu| MigrateType::ALL.map(|mt| z.pcp_list(cpu, mt)))
        .flatten()
        .collect();
    assert_eq!(pcp.len() as u64, z.nr_pcp_pages(), "per-CPU count");
    if full {
        if let Err(e) = z.check_consistency() {
            panic!("inconsistent zone: {e}");
        }
    }
    // Block by block with slice operations (memchr/memset), so the check stays cheap.
    let mut seen = vec![false; model.bits.len()];
    for order in 0..=MAX_ORDER {
        for mt in MigrateType::ALL {
            for head in z.free_list(order, mt) {
                let (Some(i), Some(_)) = (model.slot(head), model.slot(head + (1 << order) - 1))
                else {
                    panic!("free block {head} (order {order}) outside the zone");
                };
                let block = &mut seen[i..i + (1 << order)];
                assert!(
                    !block.contains(&true),
                    "block {head} overlaps another free block"
                );
                block.fill(true);
            }
        }
    }
    for p in pcp {
        let Some(i) = model.slot(p) else {
            panic!("per-CPU page {p} outside the zone");
        };
        assert!(
            !seen[i],
            "page {p} both on a per-CPU list and free (or listed twice)"
        );
        seen[i] = true;
    }
    assert!(seen == model.bits, "free pages differ from the model");
}

fuzz_target!(|inp: Input| {
    let start = inp.start;
    // Small zones (up to two order-10 blocks, four pageblocks) keep each run fast: building
    // the zone, shuffling it and the consistency walk are O(span).
    let span = u64::from(inp.span % 2048);
    let mut cfg = match ZoneConfig::with_span(start, span) {
        Ok(c) => c,
        Err(Error::EmptyZone | Error::PfnOverflow) => return,
        Err(e) => panic!("unexpected {e}"),
    };
    let mut present = PageSet::full(start, span);
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
                    present.remove(p);
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
    let cpus = u32::from(inp.pcp_cpus % 5);
    let cfg = cfg
        .kernel(KernelVersion::ALL[usize::from(inp.kernel) % 3])
        .pcp(if cpus == 0 {
            PcpLists::Off
        } else {
            PcpLists::Custom {
                cpus,
                high: u32::from(inp.pcp_high % 16),
                batch: u32::from(inp.pcp_batch % 8).max(1),
            }
        });
    let pcp_on = cpus > 0;
    let cpus = cpus.max(1);
    let mut z = match Zone::new(&cfg, policy, Xoroshiro128PlusPlus::seed_from_u64(inp.seed)) {
        Ok(z) => z,
        Err(Error::OrderTooLarge { order }) => {
            assert!(order > MAX_ORDER);
            return;
        }
        Err(Error::AllHoles) => {
            assert_eq!(present.len, 0);
            return;
        }
        Err(e) => panic!("unexpected {e}"),
    };
    let mut model = present.clone();
    let mut live: Vec<(u64, u8)> = Vec::new();
    check(&z, &model, true);
    let ops: Vec<Op> = inp.ops.into_iter().take(100).collect();
    let last = ops.len().saturating_sub(1);
    for (i, op) in ops.into_iter().enumerate() {
        // Every op is checked against the model; the page-by-page consistency walk runs after
        // list reorderings and onlining, every sixteenth op and after the last.
        let full = i % 16 == 15
            || i == last
            || matches!(op, Op::Shuffle { .. } | Op::Online { .. } | Op::Drain);
        match op {
            Op::Alloc { order, mt, cpu } => {
                let mt = MigrateType::ALL[usize::from(mt) % 3];
                let cpu = u32::from(cpu % 5);
                match z.alloc_pages_on(cpu, order, mt) {
                    Ok(Some(pfn)) => {
                        assert_eq!(pfn % (1 << order), 0);
                        for p in pfn..pfn + (1 << order) {
                            assert!(present.contains(p), "hole handed out");
                            assert!(model.remove(p), "page handed out twice");
                        }
                        live.push((pfn, order));
                    }
                    Ok(None) => {
                        assert_eq!(z.nr_pcp_pages(), 0);
                        for o in order..=MAX_ORDER {
                            for m in MigrateType::ALL {
                                assert_eq!(z.nr_free(o, m), 0);
                            }
                        }
                    }
                    Err(Error::OrderTooLarge { .. }) => assert!(order > MAX_ORDER),
                    Err(Error::NoSuchCpu { .. }) => assert!(cpu >= cpus && pcp_on),
                    Err(e) => panic!("unexpected {e}"),
                }
            }
            Op::Drain => {
                z.drain_pages();
                assert_eq!(z.nr_pcp_pages(), 0);
            }
            Op::Free { idx, cpu } => {
                if !live.is_empty() {
                    let (pfn, order) = live.swap_remove(usize::from(idx) % live.len());
                    z.free_pages_on(u32::from(cpu) % cpus, pfn, order).unwrap();
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
                    Err(Error::AlreadyOnline { pfn }) => assert!(present.contains(pfn)),
                    Err(Error::RangeOutsideZone { .. }) => assert!(e > end),
                    Err(e) => panic!("unexpected {e}"),
                }
            }
        }
        check(&z, &model, full);
    }
});
