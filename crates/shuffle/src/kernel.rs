//! What differs between kernel versions, each rule with the kernel function it follows.
//!
//! The free-list shuffle (`mm/shuffle.c`) arrived in Linux 5.2 with commit e900a918b098
//! ("mm: shuffle initial free memory to improve memory-side-cache utilization", Dan Williams'
//! v7 series, LKML 2019-01). Three rule sets have shipped since:
//!
//! | [`KernelVersion`] | kernels | boot / hotplug frees of order ≥ 10 | coin bit set means |
//! |---|---|---|---|
//! | [`V5_2`](KernelVersion::V5_2) | 5.2 – 5.6 | a coin each (`add_to_free_area_random`) | **head** |
//! | [`V5_7`](KernelVersion::V5_7) | 5.7 – 5.9 | a coin each (`shuffle_pick_tail`) | **tail** |
//! | [`V5_10`](KernelVersion::V5_10) | 5.10 and later (see below for 5.14+) | tail, no coin (`FPI_TO_TAIL`) | tail |
//!
//! * **5.2 – 5.6**, `mm/shuffle.c: add_to_free_area_random()` (v5.2): one bit of a 64-bit
//!   `get_random_u64()` batch per free at order ≥ `SHUFFLE_ORDER`; `if (rand & 1)
//!   add_to_free_area()` — a set bit puts the block at the **head**, a clear bit at the tail.
//!   Linux 5.4 still has this function: the rewrite below was posted as patch 1/9 of
//!   Alexander Duyck's free-page-reporting series, v16 dated 2020-01-03 (after 5.4's release
//!   and 5.5's merge window), and went in with that series.
//! * **5.7 – 5.9**, "mm: adjust shuffle code to allow for future coalescing" (Alexander
//!   Duyck): `__free_one_page()` asks `shuffle_pick_tail()`, which returns `rand & 1` — a set
//!   bit now means **tail**. Same batch, opposite direction.
//! * **5.10 and later**, commit 7fef431be9c9 ("mm/page_alloc: place pages to tail in
//!   `__free_pages_core()`", David Hildenbrand): the boot-time memblock frees and the frees of
//!   freshly onlined memory pass `FPI_TO_TAIL`, which `__free_one_page()` checks *before*
//!   `is_shuffle_order()`: those blocks go to the tail and **draw no coin**. Runtime frees at
//!   order ≥ 10 still draw `shuffle_pick_tail()`. The companion commit 293ffa5ebb9c ("move
//!   pages to tail in `move_to_free_list()`") makes pageblock conversions move free blocks
//!   to the tail too.
//!
//! In every version the boot shuffle (`shuffle_free_memory` → `shuffle_zone`) runs after the
//! boot frees, and `online_pages()` calls `shuffle_zone()` after freeing the onlined range.
//!
//! Per-CPU page lists exist in all three (order 0 only until 5.14). Their size follows
//! `zone_batchsize()` and `pageset_set_batch()` (`mm/page_alloc.c`, v5.2 – v5.13):
//! `batch = clamp(managed_pages / 1024, .., 1 MiB of pages) / 4`, rounded to
//! `rounddown_pow_of_two(batch * 3 / 2) - 1`, and `high = 6 × batch`; a 64 GiB zone gets
//! batch 63, high 378.
//!
//! **Kernels from 5.14 on** run the 5.10 shuffle and placement rules, which is what `--kernel
//! 5.14` or `6.x` selects, but their per-CPU lists differ from this model's: commit
//! 44042b449872 ("mm/page_alloc: allow high-order pages to be stored on the per-cpu lists",
//! Mel Gorman, 5.14) keeps orders up to `PAGE_ALLOC_COSTLY_ORDER` and THP-sized blocks on them
//! too, and later kernels size `high` dynamically. The model keeps 5.2 – 5.13's order-0 lists
//! with fixed `high`/`batch` for every version.

use crate::Error;
use crate::free_area::PAGE_SIZE;

/// The kernel whose page-allocator rules the zone follows (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum KernelVersion {
    /// Linux 5.2 – 5.6: `add_to_free_area_random`, a set coin bit means head.
    #[cfg_attr(feature = "serde", serde(rename = "5.2"))]
    V5_2,
    /// Linux 5.7 – 5.9: `shuffle_pick_tail`, a set coin bit means tail.
    #[cfg_attr(feature = "serde", serde(rename = "5.7"))]
    V5_7,
    /// Linux 5.10 and later: boot and hotplug frees go to the tail (`FPI_TO_TAIL`) without a
    /// coin; runtime frees at order ≥ 10 use `shuffle_pick_tail`.
    #[default]
    #[cfg_attr(feature = "serde", serde(rename = "5.10"))]
    V5_10,
}

impl KernelVersion {
    /// Every rule set, oldest first.
    pub const ALL: [KernelVersion; 3] = [
        KernelVersion::V5_2,
        KernelVersion::V5_7,
        KernelVersion::V5_10,
    ];

    /// The released kernels [`parse`](Self::parse) accepts, as text: every `major.minor` from
    /// the shuffle's arrival to the newest release the rules were last read against. A later
    /// kernel follows the 5.10 rules: give it as `5.10`.
    pub const KNOWN: &'static str = "5.2 – 5.19, 6.0 – 6.19";

    /// Parses `major.minor` (e.g. `5.4`, `6.8`; a patch level is ignored) into the rule set that
    /// kernel follows.
    ///
    /// # Errors
    /// [`Error::BadKernelVersion`] for text that is not `major.minor`, a kernel before 5.2 (no
    /// shuffle) or one that is not a release in [`KNOWN`](Self::KNOWN) (`99.0`, `5.20`).
    pub fn parse(s: &str) -> Result<Self, Error> {
        let (maj, min) = s.trim().split_once('.').ok_or(Error::BadKernelVersion)?;
        let min = min.split('.').next().unwrap_or(min);
        let maj: u32 = maj.parse().map_err(|_| Error::BadKernelVersion)?;
        let min: u32 = min.parse().map_err(|_| Error::BadKernelVersion)?;
        // Linux 5.19 was the last 5.x release and 6.19 the last 6.x.
        match (maj, min) {
            (5, 2..=6) => Ok(KernelVersion::V5_2),
            (5, 7..=9) => Ok(KernelVersion::V5_7),
            (5, 10..=19) | (6, 0..=19) => Ok(KernelVersion::V5_10),
            _ => Err(Error::BadKernelVersion),
        }
    }

    /// The first kernel of the rule set, as text.
    pub fn name(self) -> &'static str {
        match self {
            KernelVersion::V5_2 => "5.2",
            KernelVersion::V5_7 => "5.7",
            KernelVersion::V5_10 => "5.10",
        }
    }

    /// Where a coin sends a block: `true` = tail.
    #[inline]
    pub fn coin_means_tail(self, bit: bool) -> bool {
        match self {
            KernelVersion::V5_2 => !bit,
            KernelVersion::V5_7 | KernelVersion::V5_10 => bit,
        }
    }

    /// Whether boot and hotplug frees carry `FPI_TO_TAIL` (tail, no coin).
    #[inline]
    pub fn boot_frees_to_tail(self) -> bool {
        self == KernelVersion::V5_10
    }

    /// Whether `move_to_free_list` (pageblock conversion) puts blocks at the tail.
    #[inline]
    pub fn move_to_tail(self) -> bool {
        self == KernelVersion::V5_10
    }
}

/// `zone_batchsize()` of v5.2 – v5.13 for a zone of `managed_pages` 4 KiB pages (0 for a
/// zone under 32 MiB, 8192 pages, where `managed / 1024 / 4` rounds to at most 1 and
/// `rounddown_pow_of_two(1) - 1 = 0`; `pageset_set_batch()` then uses high 0 and batch 1).
pub fn zone_batchsize(managed_pages: u64) -> u32 {
    let mut batch = managed_pages / 1024;
    let cap = (1024 * 1024) / PAGE_SIZE;
    if batch > cap {
        batch = cap;
    }
    batch /= 4;
    if batch < 1 {
        batch = 1;
    }
    let x = batch + batch / 2;
    // rounddown_pow_of_two(x) - 1
    let p = 1u64 << (63 - x.leading_zeros());
    (p - 1) as u32
}

/// Zone watermarks in pages (`min`, `low`, `high`), after `init_per_zone_wmark_min()` and
/// `__setup_per_zone_wmarks()` of v5.10 (one zone, `watermark_scale_factor` = 10):
/// `min_free_kbytes = clamp(sqrt(16 × lowmem_kbytes), 128, 65536)`, `tmp =
/// max(min / 4, managed × 10 / 10000)`, `low = min + tmp`, `high = min + 2 × tmp`.
pub fn watermarks(managed_pages: u64) -> (u64, u64, u64) {
    let kbytes = managed_pages * (PAGE_SIZE / 1024);
    let min_kb = (libm::sqrt((kbytes * 16) as f64) as u64).clamp(128, 65536);
    let min = min_kb / (PAGE_SIZE / 1024);
    let tmp = (min / 4).max(managed_pages * 10 / 10000);
    (min, min + tmp, min + 2 * tmp)
}
