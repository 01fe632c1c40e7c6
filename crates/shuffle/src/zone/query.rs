//! What a zone holds, read without changing it: counts, lists, pageblock types and the
//! consistency check.

use alloc::vec::Vec;

use super::{ShufflePolicy, Zone};
use crate::free_area::{FreeArea, MAX_ORDER, MigrateType, NR_MIGRATETYPES};
use crate::kernel::KernelVersion;

impl<R> Zone<R> {
    /// The free area the zone owns (flags, buddy lists, pageblock types).
    pub fn free_area(&self) -> &FreeArea {
        &self.area
    }

    /// Allocation and free calls served so far (failed allocations included, rejected calls
    /// not): the unit of the simulator's "page ops/s".
    pub fn page_ops(&self) -> u64 {
        self.ops
    }

    /// The kernel rules the zone follows.
    pub fn kernel(&self) -> KernelVersion {
        self.kernel
    }

    /// First PFN of the zone.
    pub fn start_pfn(&self) -> u64 {
        self.area.start_pfn()
    }

    /// One past the last PFN of the zone.
    pub fn end_pfn(&self) -> u64 {
        self.area.end_pfn()
    }

    /// Pages spanned, holes included.
    pub fn spanned_pages(&self) -> u64 {
        self.area.spanned_pages()
    }

    /// Pages present (not holes).
    pub fn present_pages(&self) -> u64 {
        self.area.present_pages()
    }

    /// Pages not handed out: on the buddy free lists or on a per-CPU list.
    pub fn nr_free_pages(&self) -> u64 {
        self.area.nr_free_pages() + self.nr_pcp_pages()
    }

    /// Pages waiting on per-CPU lists.
    pub fn nr_pcp_pages(&self) -> u64 {
        self.pcp.as_ref().map_or(0, |p| p.total)
    }

    /// `(cpus, high, batch)` of the per-CPU lists, `None` when off.
    pub fn pcp_sizes(&self) -> Option<(u32, u32, u32)> {
        self.pcp.as_ref().map(|p| (p.cpus(), p.high, p.batch))
    }

    /// PFNs on the per-CPU list of `cpu` and `mt`, head first (empty for no such list).
    pub fn pcp_list(&self, cpu: u32, mt: MigrateType) -> Vec<u64> {
        self.pcp
            .as_ref()
            .and_then(|p| p.lists.get(cpu as usize))
            .map(|l| {
                l[mt as usize]
                    .iter()
                    .map(|&i| self.start_pfn() + u64::from(i))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The shuffle policy the zone was booted with.
    pub fn policy(&self) -> ShufflePolicy {
        self.policy
    }

    /// Number of blocks on the free list of `order` and `mt` (0 for an order above 10).
    pub fn nr_free(&self, order: u8, mt: MigrateType) -> u64 {
        if order > MAX_ORDER {
            return 0;
        }
        self.area.nr_free(order, mt as u8)
    }

    /// First PFNs of the blocks on the free list of `order` and `mt`, head first (empty for an
    /// order above 10).
    pub fn free_list(&self, order: u8, mt: MigrateType) -> Vec<u64> {
        if order > MAX_ORDER {
            return Vec::new();
        }
        self.area
            .list_nodes(order, mt as u8)
            .into_iter()
            .map(|i| self.start_pfn() + u64::from(i))
            .collect()
    }

    /// Page indices of a free list (for the bias measurement).
    pub(crate) fn list_nodes(&self, order: u8, mt: u8) -> Vec<u32> {
        self.area.list_nodes(order, mt)
    }

    /// Relinks a free list (for the bias measurement).
    pub(crate) fn relink(&mut self, order: u8, mt: u8, nodes: &[u32]) {
        self.area.relink(order, mt, nodes);
    }

    /// Migratetype of the pageblock holding `pfn` (`None` outside the zone).
    pub fn pageblock_migratetype(&self, pfn: u64) -> Option<MigrateType> {
        let i = self.area.index_of(pfn)?;
        Some(MigrateType::from_index(self.area.mt_of(i)))
    }

    /// Whether `pfn` is in the zone and present.
    pub fn is_present(&self, pfn: u64) -> bool {
        self.area
            .index_of(pfn)
            .is_some_and(|i| !self.area.is_hole(i))
    }

    /// Every page not handed out, ascending: the buddy free lists walked (not the page
    /// flags), plus the per-CPU lists.
    pub fn free_page_set(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.nr_free_pages() as usize);
        for order in 0..=MAX_ORDER {
            for mt in 0..NR_MIGRATETYPES as u8 {
                for i in self.area.list_nodes(order, mt) {
                    let pfn = self.start_pfn() + u64::from(i);
                    out.extend(pfn..pfn + (1u64 << order));
                }
            }
        }
        if let Some(p) = &self.pcp {
            for cpu in &p.lists {
                for l in cpu {
                    out.extend(l.iter().map(|&i| self.start_pfn() + u64::from(i)));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Checks the zone's internal consistency: the free area's ([`FreeArea::check_consistency`])
    /// and the per-CPU lists' (each page on one list once, flagged as such, counts right).
    ///
    /// # Errors
    /// A description of the first broken invariant (a bug in this crate if it ever happens).
    pub fn check_consistency(&self) -> Result<(), &'static str> {
        self.area.check_consistency()?;
        if self.area.nr_pcp_flagged() != self.nr_pcp_pages() {
            return Err("pages flagged per-CPU do not match the per-CPU lists");
        }
        let Some(p) = &self.pcp else {
            return Ok(());
        };
        let mut seen = alloc::collections::BTreeSet::new();
        let mut total = 0u64;
        for (cpu, lists) in p.lists.iter().enumerate() {
            let mut count = 0u32;
            for l in lists {
                for &i in l {
                    if i as u64 >= self.spanned_pages() || !self.area.is_pcp(i) {
                        return Err("per-CPU page not flagged as such");
                    }
                    if !seen.insert(i) {
                        return Err("page on per-CPU lists twice");
                    }
                    count += 1;
                }
            }
            if count != p.count[cpu] {
                return Err("per-CPU count does not match its lists");
            }
            total += u64::from(count);
        }
        if total != p.total {
            return Err("per-CPU total does not match the lists");
        }
        Ok(())
    }
}
