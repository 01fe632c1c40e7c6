//! Server aging: what shapes a long-running server's free lists — the page cache filling
//! memory and being reclaimed oldest first, the anonymous memory of processes that come and
//! go, the kernel memory that goes with both, and the per-CPU lists every order-0 page passes
//! through.
//!
//! One round reads [`ServerSpec::read_pages_per_round`] pages of files. Time is counted in
//! pages read. Before each read, processes whose time is up exit (freeing their pages in
//! virtual order on their CPU) and new ones start while the anonymous total is below its
//! target. Every allocation goes through [`ServerAging::alloc`]: when the buddy lists hold
//! fewer free pages than the low watermark, "kswapd" reclaims page-cache pages from the
//! oldest end of the LRU until they hold the high watermark; when an allocation still fails,
//! "direct reclaim" frees `SWAP_CLUSTER_MAX` pages and tries again.
//!
//! Defaults and where they come from:
//!
//! | parameter | default | source |
//! |---|---|---|
//! | watermarks | `min_free_kbytes` = √(16 × KiB), low/high = min + 1× / 2× max(min/4, 0.1% of memory) | `init_per_zone_wmark_min`, `__setup_per_zone_wmarks` (v5.10, `watermark_scale_factor` = 10) |
//! | reclaim batch | 32 pages | `SWAP_CLUSTER_MAX`, `include/linux/swap.h` |
//! | reclaim order | oldest first (LRU tail), a re-read file moves to the young end | `shrink_inactive_list`, `mark_page_accessed` (`mm/vmscan.c`, `mm/swap.c`) |
//! | per-CPU lists | 16 CPUs, kernel `high`/`batch` | `zone_batchsize`, `pageset_set_batch` (v5.2 – v5.13); 16 CPUs is this model's choice |
//! | page-cache and anon pages | order 0, MOVABLE | `__page_cache_alloc`, `do_anonymous_page` (no THP: `transparent_hugepage=madvise`, the Ubuntu / Debian default, and a JVM without `-XX:+UseTransparentHugePages`) |
//! | file sizes | log-uniform 4 KiB – 64 MiB | heavy-tailed sizes, most bytes in large files: Agrawal, Bolosky, Douceur, Lorch, "A Five-Year Study of File-System Metadata", FAST '07 |
//! | process lifetimes | Pareto, α = 1 (P(L > t) = t₀/t), t₀ = 1/64 round, capped at 16 rounds (twice the default experiment) | Harchol-Balter & Downey, "Exploiting Process Lifetime Distributions for Dynamic Load Balancing", SIGMETRICS '96 |
//! | kernel memory per process | 1 + pages/512 UNMOVABLE pages (page tables) | one PTE page maps 512 pages (x86-64) |
//! | compaction | off; [`ServerSpec::compact_every`] runs [`ServerAging::compact`] after every `n`th round | `compact_zone`, `isolate_migratepages_block`, `isolate_freepages_block` (`mm/compaction.c`, v5.10) |
//! | slab per file | 1 RECLAIMABLE page per 5 files cached (inode ≈ 600 B + dentry 192 B) | `struct inode` / `struct dentry` sizes in `/proc/slabinfo`; freed when 5 more files are evicted |
//!
//! Choices with no public source, kept as parameters: process sizes log-uniform
//! 256 KiB – 1 GiB; anonymous memory targeted at 30% of the zone (the measured heap comes on
//! top); half of all reads re-read a cached file; a round reads a quarter of the zone.

use alloc::collections::{BinaryHeap, VecDeque};
use alloc::vec::Vec;
use core::cmp::Reverse;

use rand_core::Rng;

use crate::Error;
use crate::zone::{MigrateType, Zone};

/// `SWAP_CLUSTER_MAX`: pages per reclaim batch.
pub const SWAP_CLUSTER_MAX: u64 = 32;

mod churn;
mod compact;
mod spec;

pub use spec::ServerSpec;

#[derive(Debug, Default)]
struct File {
    pages: Vec<u64>,
    evicted: usize,
    generation: u32,
    live: bool,
    live_pos: usize,
}

#[derive(Debug, Default)]
struct Process {
    cpu: u32,
    pages: Vec<u64>,
    kernel: Vec<u64>,
}

/// What the aging did, summed over its rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Page allocations (all orders count one).
    pub allocs: u64,
    /// Page frees.
    pub frees: u64,
    /// Pages reclaimed from the page cache.
    pub reclaimed: u64,
    /// Process starts abandoned for lack of memory.
    pub failed_starts: u64,
    /// Compaction runs ([`ServerAging::compact`]).
    pub compactions: u64,
    /// Pages moved by compaction.
    pub migrated: u64,
}

/// What one compaction run ([`ServerAging::compact`]) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactStats {
    /// In-use MOVABLE pages moved to a free page higher up.
    pub migrated: u64,
    /// Free pages the free scanner isolated (those left unused were freed again).
    pub isolated_free: u64,
    /// PFN where the scanners met (the migration scanner's pageblock when it stopped).
    pub meet_pfn: u64,
}

/// Who owns an in-use MOVABLE page: a file's page (id, index) or a process's (id, index).
#[derive(Clone, Copy, Debug)]
enum Owner {
    File(u32, u32),
    Anon(u32, u32),
}

/// The state of a server: its page cache, processes and slab.
#[derive(Debug, Default)]
pub struct ServerAging {
    now: u64,
    files: Vec<File>,
    free_files: Vec<u32>,
    live_files: Vec<u32>,
    lru: VecDeque<(u32, u32)>,
    cache_pages: u64,
    procs: Vec<Process>,
    free_procs: Vec<u32>,
    exits: BinaryHeap<Reverse<(u64, u32)>>,
    anon_pages: u64,
    slab: VecDeque<u64>,
    files_created: u64,
    files_evicted: u64,
    rounds: u64,
    stats: ServerStats,
}

impl ServerAging {
    /// An idle server: no page cache, no processes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pages in the page cache now.
    pub fn cache_pages(&self) -> u64 {
        self.cache_pages
    }

    /// Anonymous pages of live processes now.
    pub fn anon_pages(&self) -> u64 {
        self.anon_pages
    }

    /// Counters so far.
    pub fn stats(&self) -> ServerStats {
        self.stats
    }

    /// Allocates an order-0 page of `mt` on `cpu` the way a server's allocation would: kswapd
    /// reclaim when the buddy lists fall below the low watermark, direct reclaim when the
    /// allocation fails. `None` when nothing is left to reclaim.
    ///
    /// # Errors
    /// [`Error::NoSuchCpu`] for a CPU the zone lacks.
    pub fn alloc<R: Rng>(
        &mut self,
        zone: &mut Zone<R>,
        spec: &ServerSpec,
        cpu: u32,
        mt: MigrateType,
    ) -> Result<Option<u64>, Error> {
        let (_, low, high) = spec.watermarks;
        if zone.free_area().nr_free_pages() < low {
            let want = high - zone.free_area().nr_free_pages();
            self.reclaim(zone, spec, want)?;
        }
        loop {
            if let Some(p) = zone.alloc_pages_on(cpu, 0, mt)? {
                self.stats.allocs += 1;
                return Ok(Some(p));
            }
            if self.reclaim(zone, spec, SWAP_CLUSTER_MAX)? == 0 {
                return Ok(None);
            }
        }
    }

    /// Frees an order-0 page on `cpu`.
    fn free<R: Rng>(&mut self, zone: &mut Zone<R>, cpu: u32, pfn: u64) -> Result<(), Error> {
        self.stats.frees += 1;
        zone.free_pages_on(cpu, pfn, 0)
    }

    /// Reclaims at least `want` page-cache pages (in batches of `SWAP_CLUSTER_MAX`) from the
    /// oldest end of the LRU, freeing them on CPU 0 (kswapd's); returns the pages reclaimed.
    fn reclaim<R: Rng>(
        &mut self,
        zone: &mut Zone<R>,
        spec: &ServerSpec,
        want: u64,
    ) -> Result<u64, Error> {
        let want = want.div_ceil(SWAP_CLUSTER_MAX) * SWAP_CLUSTER_MAX;
        let mut got = 0;
        while got < want {
            let Some(&(id, generation)) = self.lru.front() else {
                break;
            };
            let f = &self.files[id as usize];
            if !f.live || f.generation != generation {
                self.lru.pop_front();
                continue;
            }
            let take = ((want - got) as usize).min(f.pages.len() - f.evicted);
            let (from, to) = (f.evicted, f.evicted + take);
            for k in from..to {
                let p = self.files[id as usize].pages[k];
                self.free(zone, 0, p)?;
            }
            got += take as u64;
            self.cache_pages -= take as u64;
            self.stats.reclaimed += take as u64;
            let f = &mut self.files[id as usize];
            f.evicted = to;
            if f.evicted == f.pages.len() {
                self.lru.pop_front();
                self.drop_file(id);
                self.files_evicted += 1;
                if self.files_evicted.is_multiple_of(spec.files_per_slab_page)
                    && let Some(p) = self.slab.pop_front()
                {
                    self.free(zone, 0, p)?;
                }
            }
        }
        Ok(got)
    }

    fn drop_file(&mut self, id: u32) {
        let f = &mut self.files[id as usize];
        f.live = false;
        f.pages.clear();
        f.evicted = 0;
        let pos = f.live_pos;
        self.live_files.swap_remove(pos);
        if let Some(&moved) = self.live_files.get(pos) {
            self.files[moved as usize].live_pos = pos;
        }
        self.free_files.push(id);
    }

    /// Runs one round on `zone` with workload generator `rng`.
    ///
    /// # Errors
    /// [`Error::BadParameter`] for a bad spec; [`Error::NoSuchCpu`] when the zone has fewer
    /// per-CPU lists than `spec.cpus`.
    pub fn round<R: Rng, W: Rng>(
        &mut self,
        zone: &mut Zone<R>,
        rng: &mut W,
        spec: &ServerSpec,
    ) -> Result<(), Error> {
        spec.validate()?;
        let anon_target = (zone.present_pages() as f64 * spec.anon_fraction) as u64;
        let end = self.now + spec.read_pages_per_round;
        while self.now < end {
            while let Some(&Reverse((t, id))) = self.exits.peek() {
                if t > self.now {
                    break;
                }
                self.exits.pop();
                self.exit(zone, id)?;
            }
            let mut tries = 0;
            while self.anon_pages < anon_target && tries < 4 {
                tries += 1;
                self.start_process(zone, rng, spec)?;
            }
            let read = self.read(zone, rng, spec)?;
            self.now += read.max(1);
        }
        self.rounds += 1;
        if let Some(n) = spec.compact_every
            && self.rounds.is_multiple_of(u64::from(n))
        {
            self.compact(zone)?;
        }
        Ok(())
    }

    /// Frees everything: processes, page cache, slab.
    ///
    /// # Errors
    /// Never in practice (the zone handed these pages out); propagated from `free_pages_on`.
    pub fn release_all<R: Rng>(&mut self, zone: &mut Zone<R>) -> Result<(), Error> {
        while let Some(Reverse((_, id))) = self.exits.pop() {
            self.exit(zone, id)?;
        }
        let all = self.cache_pages;
        let spec = ServerSpec::for_zone(zone.present_pages());
        self.reclaim(zone, &spec, all)?;
        while let Some(p) = self.slab.pop_front() {
            self.free(zone, 0, p)?;
        }
        Ok(())
    }
}
