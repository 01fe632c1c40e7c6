//! Named experiment presets: the defaults of the `simulate` command.
//!
//! `server` (the default) is a real machine's scale at the kernel's configuration: a 64 GiB
//! zone behind an 8 GiB direct-mapped memory-side cache, a Java-like heap of 3× the cache,
//! `shuffle_zone` at order 10 plus the coin, the newest kernel's rules, per-CPU lists, and the
//! server aging of [`crate::server`]. The Java server of commit e900a918b098 ("mm: shuffle
//! initial free memory to improve memory-side-cache utilization", Linux 5.2) is the model.
//!
//! `java` is the earlier small experiment: a 64 MiB cache in front of a 512 MiB zone, aged by
//! synthetic mixed-order churn, shuffled at order 0 (`pick_tail` on every free) because its
//! cache holds only 16 order-10 blocks.

use alloc::vec;

use crate::Error;
use crate::cache::CacheMode;
use crate::experiment::{ExperimentConfig, Workload};
use crate::kernel::KernelVersion;
use crate::server::ServerSpec;
use crate::shuffle::ShuffleMode;
use crate::workload::{AgingSpec, HeapSpec, StreamSpec, TwoInstanceSpec};
use crate::zone::{PAGE_SIZE, SHUFFLE_ORDER};

/// Names [`preset`] knows: `server` (the default: a real machine's scale at the kernel's
/// configuration, aged as a server ages), `server-small` (the same at 1/16 the size, for quick
/// runs), `java` (a 512 MiB zone shuffled at order 0, synthetic aging), `java-order10` (the
/// same at order 10), `stream`, `two-instance`, `tiny` (for tests).
pub const PRESETS: [&str; 7] = [
    "server",
    "server-small",
    "java",
    "java-order10",
    "stream",
    "two-instance",
    "tiny",
];

/// The `server` preset's shape for a zone of `zone_mib` and a cache of `cache_mib`: heap 3×
/// the cache, kernel shuffle at order 10 with the coin, the newest kernel's rules, per-CPU
/// lists, server aging ([`ServerSpec::for_zone`]), 8 rounds, seeds 1–5.
pub fn server(zone_mib: u64, cache_mib: u64) -> ExperimentConfig {
    let cache_bytes = cache_mib << 20;
    let cache_pages = cache_bytes / PAGE_SIZE;
    let zone_pages = (zone_mib << 20) / PAGE_SIZE;
    ExperimentConfig {
        zone_start_pfn: 0x10_0000,
        zone_pages,
        cache_bytes,
        cache_mode: CacheMode::PageColour,
        shuffle_order: SHUFFLE_ORDER,
        shuffle_mode: ShuffleMode::Kernel,
        pick_tail: true,
        workload: Workload::Heap(heap_for(cache_pages, (cache_pages * 2).max(1 << 14))),
        aging: default_aging(zone_pages),
        server: Some(ServerSpec::for_zone(zone_pages)),
        kernel: KernelVersion::V5_10,
        pcp: true,
        aging_rounds: 8,
        seeds: vec![1, 2, 3, 4, 5],
    }
}

/// The default aging: a round is `zone_pages / 4` allocations, 70% order-0, the rest orders
/// 1–3 and 9 (THP); 5% unmovable; 0.2% long-lived (a few rounds), the rest live up to
/// `zone_pages / 32` allocations and are freed at the end of the round (their jobs exit); the
/// live set is capped at half the zone.
pub fn default_aging(zone_pages: u64) -> AgingSpec {
    AgingSpec {
        ops: zone_pages / 4,
        live_fraction: 0.5,
        orders: vec![(0, 70), (1, 8), (2, 6), (3, 10), (9, 6)],
        long_prob: 0.002,
        short_mean: zone_pages / 64,
        long_rounds: 4,
        unmovable_prob: 0.05,
        drain_short: true,
    }
}

/// The heap workload for a cache of `cache_pages`: 3× the cache; the first sixteenth of a
/// cache of it (touched first, like a young generation) takes 90% of the accesses,
/// Zipf(0.6)-popular; the rest fall uniformly on the whole heap.
pub fn heap_for(cache_pages: u64, accesses: u64) -> HeapSpec {
    HeapSpec {
        heap_pages: 3 * cache_pages,
        hot_pages: (cache_pages / 16).max(1),
        hot_prob: 0.9,
        zipf_s: 0.6,
        accesses,
        warmup: accesses / 4,
        hot_spread: false,
    }
}

/// The experiment a preset names.
///
/// # Errors
/// [`Error::BadParameter`] for an unknown name.
pub fn preset(name: &str) -> Result<ExperimentConfig, Error> {
    let cache_bytes: u64 = 64 << 20;
    let cache_pages = cache_bytes / PAGE_SIZE;
    let zone_pages = 8 * cache_pages;
    let base = ExperimentConfig {
        zone_start_pfn: 0x10_0000,
        zone_pages,
        cache_bytes,
        cache_mode: CacheMode::PageColour,
        shuffle_order: 0,
        shuffle_mode: ShuffleMode::Kernel,
        pick_tail: true,
        workload: Workload::Heap(heap_for(cache_pages, 1 << 19)),
        aging: default_aging(zone_pages),
        server: None,
        kernel: KernelVersion::V5_10,
        pcp: false,
        aging_rounds: 8,
        seeds: vec![1, 2, 3, 4],
    };
    match name {
        "server" => Ok(server(64 << 10, 8 << 10)),
        "server-small" => Ok(server(4 << 10, 512)),
        "java" => Ok(base),
        "java-order10" => Ok(ExperimentConfig {
            shuffle_order: SHUFFLE_ORDER,
            ..base
        }),
        "stream" => Ok(ExperimentConfig {
            workload: Workload::Stream(StreamSpec {
                array_pages: cache_pages / 2,
                sweeps: 4,
            }),
            ..base
        }),
        "two-instance" => Ok(ExperimentConfig {
            zone_pages: cache_pages,
            aging: default_aging(cache_pages),
            workload: Workload::TwoInstance(TwoInstanceSpec {
                pages: cache_pages / 2,
                accesses: 1 << 20,
                warmup: 1 << 18,
            }),
            ..base
        }),
        "tiny" => {
            let cache_bytes: u64 = 4 << 20;
            let cache_pages = cache_bytes / PAGE_SIZE;
            let zone_pages = 8 * cache_pages;
            Ok(ExperimentConfig {
                zone_pages,
                cache_bytes,
                workload: Workload::Heap(heap_for(cache_pages, 1 << 14)),
                aging: default_aging(zone_pages),
                aging_rounds: 3,
                seeds: vec![1, 2],
                ..base
            })
        }
        _ => Err(Error::BadParameter("unknown preset")),
    }
}
