//! What a zone is before boot ([`ZoneConfig`]: span, holes, pageblock migratetypes, kernel,
//! per-CPU lists) and how it shuffles ([`ShufflePolicy`]).

use alloc::vec::Vec;

use crate::Error;
use crate::free_area::{MAX_ORDER, MAX_SPANNED_PAGES, MigrateType, SHUFFLE_ORDER};
use crate::kernel::KernelVersion;
use crate::pcp::PcpLists;
use crate::shuffle::ShuffleMode;

/// Shape of a zone before boot: its span, its holes and its pageblocks' migratetypes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneConfig {
    pub(super) start_pfn: u64,
    pub(super) end_pfn: u64,
    pub(super) holes: Vec<(u64, u64)>,
    pub(super) migratetypes: Vec<(u64, u64, MigrateType)>,
    pub(super) kernel: KernelVersion,
    pub(super) pcp: PcpLists,
}

impl ZoneConfig {
    /// A zone spanning PFNs `start_pfn .. end_pfn`, no holes, every pageblock movable, the
    /// newest kernel's rules ([`KernelVersion::V5_10`]) and per-CPU lists of the kernel's size
    /// on one CPU.
    ///
    /// # Errors
    /// [`Error::StartAfterEnd`], [`Error::EmptyZone`], [`Error::ZoneTooLarge`].
    pub fn new(start_pfn: u64, end_pfn: u64) -> Result<Self, Error> {
        if start_pfn > end_pfn {
            return Err(Error::StartAfterEnd {
                start: start_pfn,
                end: end_pfn,
            });
        }
        if start_pfn == end_pfn {
            return Err(Error::EmptyZone);
        }
        let spanned_pages = end_pfn - start_pfn;
        if spanned_pages > MAX_SPANNED_PAGES {
            return Err(Error::ZoneTooLarge { spanned_pages });
        }
        Ok(ZoneConfig {
            start_pfn,
            end_pfn,
            holes: Vec::new(),
            migratetypes: Vec::new(),
            kernel: KernelVersion::default(),
            pcp: PcpLists::default(),
        })
    }

    /// A zone of `spanned_pages` pages starting at `start_pfn`.
    ///
    /// # Errors
    /// As [`ZoneConfig::new`], and [`Error::PfnOverflow`].
    pub fn with_span(start_pfn: u64, spanned_pages: u64) -> Result<Self, Error> {
        let end = start_pfn
            .checked_add(spanned_pages)
            .ok_or(Error::PfnOverflow)?;
        Self::new(start_pfn, end)
    }

    /// Marks PFNs `start .. end` as a hole (not present; [`Zone::online_pages`](super::Zone::online_pages) can bring it
    /// online later, as memory hotplug does).
    ///
    /// # Errors
    /// [`Error::StartAfterEnd`], [`Error::RangeOutsideZone`].
    pub fn hole(mut self, start: u64, end: u64) -> Result<Self, Error> {
        self.check_range(start, end)?;
        self.holes.push((start, end));
        Ok(self)
    }

    /// Gives the pageblocks overlapping PFNs `start .. end` the migratetype `mt` before the
    /// boot frees (after `memmap_init_zone` has marked every pageblock MOVABLE), so the boot
    /// frees put their blocks on `mt`'s lists by `__free_one_page`'s rules. A hole brought
    /// online later becomes MOVABLE again, as hotplug makes it.
    ///
    /// # Errors
    /// [`Error::StartAfterEnd`], [`Error::RangeOutsideZone`].
    pub fn migratetype(mut self, start: u64, end: u64, mt: MigrateType) -> Result<Self, Error> {
        self.check_range(start, end)?;
        self.migratetypes.push((start, end, mt));
        Ok(self)
    }

    /// The kernel whose rules the zone follows.
    pub fn kernel(mut self, kernel: KernelVersion) -> Self {
        self.kernel = kernel;
        self
    }

    /// Per-CPU page lists (default: the kernel's sizes on one CPU).
    pub fn pcp(mut self, pcp: PcpLists) -> Self {
        self.pcp = pcp;
        self
    }

    fn check_range(&self, start: u64, end: u64) -> Result<(), Error> {
        if start > end {
            return Err(Error::StartAfterEnd { start, end });
        }
        if start < self.start_pfn || end > self.end_pfn {
            return Err(Error::RangeOutsideZone { start, end });
        }
        Ok(())
    }

    /// First PFN of the zone (`zone_start_pfn`).
    pub fn start_pfn(&self) -> u64 {
        self.start_pfn
    }

    /// Pages the zone spans, holes included (`spanned_pages`).
    pub fn spanned_pages(&self) -> u64 {
        self.end_pfn - self.start_pfn
    }
}

/// Whether and how the zone shuffles: the kernel's `page_alloc.shuffle` switch plus this
/// simulator's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShufflePolicy {
    /// Shuffle at boot and hotplug, and (with `pick_tail`) randomise frees at the shuffle order.
    pub enabled: bool,
    /// Order of the blocks shuffled (the kernel's `SHUFFLE_ORDER`, 10; 0 ..= 10 here).
    pub order: u8,
    /// Which shuffle runs.
    pub mode: ShuffleMode,
    /// Free blocks of order ≥ `order` to the head or the tail by a coin (`shuffle_pick_tail`).
    pub pick_tail: bool,
}

impl ShufflePolicy {
    /// Shuffling off: the in-order allocator.
    pub const OFF: ShufflePolicy = ShufflePolicy {
        enabled: false,
        order: SHUFFLE_ORDER,
        mode: ShuffleMode::Kernel,
        pick_tail: false,
    };
    /// What `page_alloc.shuffle=1` does (every version since 5.2): kernel shuffle at order 10
    /// plus the coin for frees at order ≥ 10.
    pub const KERNEL: ShufflePolicy = ShufflePolicy {
        enabled: true,
        order: SHUFFLE_ORDER,
        mode: ShuffleMode::Kernel,
        pick_tail: true,
    };

    pub(super) fn validate(&self) -> Result<(), Error> {
        if self.order > MAX_ORDER {
            return Err(Error::OrderTooLarge { order: self.order });
        }
        Ok(())
    }
}
