//! A direct-mapped memory-side cache (DRAM in front of persistent memory, KNL MCDRAM in cache
//! mode), the hardware commit e900a918b098 ("mm: shuffle initial free memory to improve
//! memory-side-cache utilization", Linux 5.2) shuffles for.
//!
//! * [`CacheMode::Line`]: 64-byte lines, set = (PA / 64) mod (C / 64): exact, one tag per line.
//! * [`CacheMode::PageColour`]: the fast mode for large runs: one tag per 4 KiB page colour,
//!   colour = PFN mod (C / 4 KiB). A page then stands for its 64 lines moving together, which
//!   is what a whole-page touch does in line mode.
//!
//! Counting: every access is a hit or a miss; a miss that evicts a valid line of another
//! address is a *conflict* (in a direct-mapped cache every non-cold miss is one: the line lost
//! its only slot to an address of the same set). The conflict rate is conflicts / accesses.

use alloc::vec;
use alloc::vec::Vec;

use crate::Error;
use crate::zone::PAGE_SIZE;

/// Cache line size in bytes.
pub const LINE_SIZE: u64 = 64;

/// Granularity of the cache model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CacheMode {
    /// One set per 64-byte line.
    Line,
    /// One set per 4 KiB page colour (fast).
    PageColour,
}

/// Hit, miss and conflict counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CacheStats {
    /// Accesses counted.
    pub accesses: u64,
    /// Accesses that found their line.
    pub hits: u64,
    /// Accesses that did not (cold or conflict).
    pub misses: u64,
    /// Misses that evicted another valid line.
    pub conflicts: u64,
}

impl CacheStats {
    /// conflicts / accesses (0 when nothing was accessed).
    pub fn conflict_rate(&self) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            self.conflicts as f64 / self.accesses as f64
        }
    }

    /// misses / accesses (0 when nothing was accessed).
    pub fn miss_rate(&self) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            self.misses as f64 / self.accesses as f64
        }
    }
}

/// A direct-mapped memory-side cache.
#[derive(Clone)]
pub struct MemSideCache {
    mode: CacheMode,
    capacity: u64,
    sets: u64,
    // Tag = line (or page) number + 1; 0 = empty.
    tags: Vec<u64>,
    stats: CacheStats,
}

impl core::fmt::Debug for MemSideCache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MemSideCache")
            .field("mode", &self.mode)
            .field("capacity", &self.capacity)
            .field("sets", &self.sets)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl MemSideCache {
    /// A cold cache of `capacity` bytes.
    ///
    /// # Errors
    /// [`Error::ZeroCacheSize`]; [`Error::CacheSizeNotMultiple`] unless `capacity` is a
    /// multiple of 64 (line mode) or 4096 (page-colour mode); [`Error::BadParameter`] above
    /// 2^40 bytes of line-mode sets the model would have to allocate.
    pub fn new(capacity: u64, mode: CacheMode) -> Result<Self, Error> {
        if capacity == 0 {
            return Err(Error::ZeroCacheSize);
        }
        let unit = match mode {
            CacheMode::Line => LINE_SIZE,
            CacheMode::PageColour => PAGE_SIZE,
        };
        if !capacity.is_multiple_of(unit) {
            return Err(Error::CacheSizeNotMultiple { capacity, unit });
        }
        let sets = capacity / unit;
        if sets > 1 << 28 {
            return Err(Error::BadParameter("cache has more than 2^28 sets"));
        }
        Ok(MemSideCache {
            mode,
            capacity,
            sets,
            tags: vec![0; sets as usize],
            stats: CacheStats::default(),
        })
    }

    /// The model's granularity.
    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Capacity in pages (the number of page colours).
    pub fn colours(&self) -> u64 {
        self.capacity / PAGE_SIZE
    }

    /// Counters so far.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Zeroes the counters, keeping the contents.
    pub fn reset_stats(&mut self) {
        self.stats = CacheStats::default();
    }

    /// Empties the cache and zeroes the counters.
    pub fn flush(&mut self) {
        self.tags.iter_mut().for_each(|t| *t = 0);
        self.stats = CacheStats::default();
    }

    #[inline]
    fn touch(&mut self, unit_no: u64) {
        let set = (unit_no % self.sets) as usize;
        // Tag 0 means empty; unit numbers come from 64-bit addresses (see `access_page`).
        let tag = unit_no.wrapping_add(1);
        self.stats.accesses += 1;
        // `set < sets == tags.len()`.
        let slot = &mut self.tags[set];
        if *slot == tag {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
            if *slot != 0 {
                self.stats.conflicts += 1;
            }
            *slot = tag;
        }
    }

    /// One access to physical address `pa`. In page-colour mode the whole page is the unit.
    #[inline]
    pub fn access(&mut self, pa: u64) {
        match self.mode {
            CacheMode::Line => self.touch(pa / LINE_SIZE),
            CacheMode::PageColour => self.touch(pa / PAGE_SIZE),
        }
    }

    /// One access to page `pfn` at byte `offset` within it (the offset matters in line mode
    /// only; it is taken modulo the page size). Physical addresses wrap at 2^64 (PFNs above
    /// 2^52 are remapped modulo that, as no real machine has them).
    #[inline]
    pub fn access_page(&mut self, pfn: u64, offset: u64) {
        match self.mode {
            CacheMode::Line => {
                self.touch(
                    pfn.wrapping_mul(PAGE_SIZE / LINE_SIZE)
                        .wrapping_add((offset % PAGE_SIZE) / LINE_SIZE),
                );
            }
            CacheMode::PageColour => self.touch(pfn),
        }
    }
}
