//! Per-CPU page lists (`struct per_cpu_pages`, `mm/page_alloc.c`, v5.2 – v5.13): order-0
//! pages freed on a CPU wait on that CPU's list for its migratetype; allocations on that CPU
//! take the most recently freed page first.
//!
//! * `free_unref_page()`: the page goes to the **head** of `lists[pageblock migratetype]`;
//!   when `count >= high`, `free_pcppages_bulk(batch)` returns `batch` pages to the buddy
//!   lists.
//! * `free_pcppages_bulk()`: round robin over the migratetype lists starting after the last
//!   one used (a `batch_free` counter grows on every empty list, so fuller lists give more),
//!   taking each page from the list's **tail** (the oldest); the pages then go through
//!   `__free_one_page()` with the migratetype of the list they were on.
//! * `rmqueue_pcplist()`: an empty list is refilled by `rmqueue_bulk(batch)`, which appends
//!   each page it takes from the buddy lists at the list's tail; the allocation takes the
//!   **head**.
//! * `drain_all_pages()` (on an allocation failure before giving up) frees every list.
//!
//! The lists are `VecDeque`s (front = head) of page indices; which CPU an operation runs on is
//! the caller's choice ([`crate::Zone::alloc_pages_on`], [`crate::Zone::free_pages_on`]).

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::Error;
use crate::free_area::NR_MIGRATETYPES;
use crate::kernel::zone_batchsize;

/// Per-CPU list sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PcpLists {
    /// No per-CPU lists: order-0 pages go straight to and from the buddy lists.
    Off,
    /// `cpus` CPUs with the kernel's `high` and `batch` for the zone's size
    /// ([`crate::kernel::zone_batchsize`], `high = 6 × batch`).
    Kernel {
        /// CPUs (lists) in the zone.
        cpus: u32,
    },
    /// Explicit sizes.
    Custom {
        /// CPUs (lists) in the zone.
        cpus: u32,
        /// Free to the buddy lists when a CPU holds this many pages.
        high: u32,
        /// Pages moved per refill or spill (at least 1).
        batch: u32,
    },
}

impl Default for PcpLists {
    /// The kernel's sizes on one CPU.
    fn default() -> Self {
        PcpLists::Kernel { cpus: 1 }
    }
}

impl PcpLists {
    /// `(cpus, high, batch)` for a zone of `managed_pages`, or `None` when off.
    ///
    /// # Errors
    /// [`Error::BadParameter`] for zero CPUs, more than 4096, or a custom batch of 0.
    pub fn resolve(self, managed_pages: u64) -> Result<Option<(u32, u32, u32)>, Error> {
        let (cpus, high, batch) = match self {
            PcpLists::Off => return Ok(None),
            PcpLists::Kernel { cpus } => {
                let b = zone_batchsize(managed_pages);
                (cpus, 6 * b, b.max(1))
            }
            PcpLists::Custom { cpus, high, batch } => {
                if batch == 0 {
                    return Err(Error::BadParameter("per-CPU batch must be at least 1"));
                }
                (cpus, high, batch)
            }
        };
        if cpus == 0 || cpus > 4096 {
            return Err(Error::BadParameter("per-CPU lists need 1 ..= 4096 CPUs"));
        }
        Ok(Some((cpus, high, batch)))
    }
}

/// The per-CPU lists of one zone.
#[derive(Clone, Debug)]
pub(crate) struct PerCpuPages {
    pub(crate) high: u32,
    pub(crate) batch: u32,
    pub(crate) lists: Vec<[VecDeque<u32>; NR_MIGRATETYPES]>,
    pub(crate) count: Vec<u32>,
    pub(crate) total: u64,
}

impl PerCpuPages {
    pub(crate) fn new(cpus: u32, high: u32, batch: u32) -> Self {
        PerCpuPages {
            high,
            batch,
            lists: (0..cpus).map(|_| Default::default()).collect(),
            count: alloc::vec![0; cpus as usize],
            total: 0,
        }
    }

    pub(crate) fn cpus(&self) -> u32 {
        self.lists.len() as u32
    }

    /// `free_unref_page` minus the spill: the page goes to the head of its list. Returns
    /// whether the CPU is now at `high`.
    #[inline]
    pub(crate) fn push(&mut self, cpu: usize, mt: u8, i: u32) -> bool {
        self.lists[cpu][mt as usize].push_front(i);
        self.count[cpu] += 1;
        self.total += 1;
        self.count[cpu] >= self.high
    }

    /// The head of a list (the allocation side).
    #[inline]
    pub(crate) fn pop_head(&mut self, cpu: usize, mt: u8) -> Option<u32> {
        let i = self.lists[cpu][mt as usize].pop_front()?;
        self.count[cpu] -= 1;
        self.total -= 1;
        Some(i)
    }

    /// `rmqueue_bulk` appends here.
    #[inline]
    pub(crate) fn push_tail(&mut self, cpu: usize, mt: u8, i: u32) {
        self.lists[cpu][mt as usize].push_back(i);
        self.count[cpu] += 1;
        self.total += 1;
    }

    /// The selection of `free_pcppages_bulk(count)`: `(page, migratetype)` in the order the
    /// kernel hands them to `__free_one_page`.
    pub(crate) fn take_bulk(&mut self, cpu: usize, count: u32, out: &mut Vec<(u32, u8)>) {
        let mut count = count.min(self.count[cpu]);
        let mut migratetype = 0usize;
        let mut batch_free = 0u32;
        while count > 0 {
            let lists = &mut self.lists[cpu];
            loop {
                batch_free += 1;
                migratetype += 1;
                if migratetype == NR_MIGRATETYPES {
                    migratetype = 0;
                }
                if !lists[migratetype].is_empty() {
                    break;
                }
            }
            // The only non-empty list: free from it alone.
            if batch_free == NR_MIGRATETYPES as u32 {
                batch_free = count;
            }
            while let Some(i) = lists[migratetype].pop_back() {
                self.count[cpu] -= 1;
                self.total -= 1;
                out.push((i, migratetype as u8));
                count -= 1;
                batch_free -= 1;
                if count == 0 || batch_free == 0 || lists[migratetype].is_empty() {
                    break;
                }
            }
        }
    }
}
