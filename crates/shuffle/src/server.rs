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
use crate::draw::{uniform, unit};
use crate::kernel::watermarks;
use crate::zone::{MigrateType, Zone};

/// `SWAP_CLUSTER_MAX`: pages per reclaim batch.
pub const SWAP_CLUSTER_MAX: u64 = 32;

/// Parameters of the server aging (defaults: [`ServerSpec::for_zone`]).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ServerSpec {
    /// CPUs that allocate and free (each with its own per-CPU lists when the zone has them).
    pub cpus: u32,
    /// Pages of files read per round.
    pub read_pages_per_round: u64,
    /// Smallest and largest file, in pages (log-uniform between).
    pub file_pages: (u64, u64),
    /// Probability that a read re-reads a cached file instead of a new one.
    pub reread_prob: f64,
    /// Share of the zone that processes' anonymous memory is kept near.
    pub anon_fraction: f64,
    /// Smallest and largest process, in pages (log-uniform between).
    pub process_pages: (u64, u64),
    /// Pareto lifetime: minimum and cap, in pages read.
    pub process_life: (u64, u64),
    /// Files per slab (RECLAIMABLE) page.
    pub files_per_slab_page: u64,
    /// `(min, low, high)` watermarks in pages.
    pub watermarks: (u64, u64, u64),
    /// Compaction ([`ServerAging::compact`]) after every `n`th round; `None` (the default)
    /// never compacts. Absent from a JSON spec means `None`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub compact_every: Option<u32>,
}

impl ServerSpec {
    /// The defaults of the module docs for a zone of `zone_pages`.
    pub fn for_zone(zone_pages: u64) -> Self {
        let read = (zone_pages / 4).max(1);
        ServerSpec {
            cpus: 16,
            read_pages_per_round: read,
            file_pages: (1, 16_384),
            reread_prob: 0.5,
            anon_fraction: 0.3,
            process_pages: (64, 262_144.min(zone_pages / 8).max(64)),
            process_life: ((read / 64).max(1), 16 * read),
            files_per_slab_page: 5,
            watermarks: watermarks(zone_pages),
            compact_every: None,
        }
    }

    fn validate(&self) -> Result<(), Error> {
        let bad = |m| Err(Error::BadParameter(m));
        if self.cpus == 0 {
            return bad("server aging needs at least one CPU");
        }
        if self.file_pages.0 == 0 || self.file_pages.0 > self.file_pages.1 {
            return bad("server file sizes need 1 <= min <= max");
        }
        if self.process_pages.0 == 0 || self.process_pages.0 > self.process_pages.1 {
            return bad("server process sizes need 1 <= min <= max");
        }
        if self.process_life.0 == 0 || self.process_life.0 > self.process_life.1 {
            return bad("server process lifetimes need 1 <= min <= cap");
        }
        if !(0.0..=1.0).contains(&self.reread_prob) || !(0.0..=1.0).contains(&self.anon_fraction) {
            return bad("server probabilities and fractions must be within 0..=1");
        }
        if self.files_per_slab_page == 0 {
            return bad("server files_per_slab_page must be at least 1");
        }
        if self.watermarks.1 > self.watermarks.2 {
            return bad("server watermarks need low <= high");
        }
        if self.compact_every == Some(0) {
            return bad("server compact_every must be at least 1 (None never compacts)");
        }
        Ok(())
    }
}

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

fn log_uniform<R: Rng + ?Sized>(rng: &mut R, (lo, hi): (u64, u64)) -> u64 {
    if lo >= hi {
        return lo;
    }
    let (a, b) = (libm::log(lo as f64), libm::log(hi as f64 + 1.0));
    (libm::exp(a + (b - a) * unit(rng)) as u64).clamp(lo, hi)
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

    /// PFNs of the in-use MOVABLE pages the server owns (page cache and processes' anonymous
    /// memory), ascending: the pages [`ServerAging::compact`] may move.
    pub fn movable_pages(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.owned().into_iter().map(|(p, _)| p).collect();
        v.sort_unstable();
        v
    }

    fn owned(&self) -> Vec<(u64, Owner)> {
        let mut v = Vec::with_capacity((self.cache_pages + self.anon_pages) as usize);
        for &id in &self.live_files {
            let f = &self.files[id as usize];
            for (k, &p) in f.pages.iter().enumerate().skip(f.evicted) {
                v.push((p, Owner::File(id, k as u32)));
            }
        }
        for (id, pr) in self.procs.iter().enumerate() {
            for (k, &p) in pr.pages.iter().enumerate() {
                v.push((p, Owner::Anon(id as u32, k as u32)));
            }
        }
        v
    }

    /// One full compaction of `zone`, as `compact_zone` (`mm/compaction.c`, v5.10) runs it
    /// for a whole-zone request (`compact_node`, sync mode) at the level of this model:
    ///
    /// * first the per-CPU lists are drained, so that every free page is on the buddy lists
    ///   where the free scanner looks (a choice of this model: the kernel's free scanner
    ///   skips pages on per-CPU lists);
    /// * the migration scanner walks pageblocks from the zone's low end and takes the in-use
    ///   MOVABLE pages this server owns (page cache and anonymous memory), lowest first
    ///   (`isolate_migratepages_block`; kernel pages and slab are not movable and stay);
    /// * the free scanner walks pageblocks from the high end and, in each MOVABLE pageblock
    ///   without a free block of pageblock order, takes every free block off the buddy lists
    ///   split into order-0 pages (`isolate_freepages_block`, `suitable_migration_target`,
    ///   `split_map_pages`); it runs when the migration scanner needs a target page;
    /// * each taken page moves to the lowest isolated free page (`compaction_alloc`,
    ///   `migrate_pages`): its owner's record gets the new PFN and the old page is freed on
    ///   CPU 0 through the normal free path;
    /// * the run stops when the scanners meet (`compact_scanners_met`): the migration scanner
    ///   reaches the free scanner's pageblock or the free scanner finds nothing more below;
    /// * isolated free pages left over are freed (`release_freepages`) and the per-CPU lists
    ///   drained (as `compact_zone` does for a request of an order, `drain_local_pages`),
    ///   so freed pages merge with their buddies.
    ///
    /// Compaction ignores the watermarks and the deferral (`compaction_deferred`) the kernel
    /// applies; it runs when called, or every [`ServerSpec::compact_every`] rounds.
    ///
    /// # Errors
    /// Never in practice (the pages moved and freed are this server's); propagated from
    /// [`Zone::free_pages_on`].
    pub fn compact<R: Rng>(&mut self, zone: &mut Zone<R>) -> Result<CompactStats, Error> {
        zone.drain_pages();
        let mut owned = self.owned();
        owned.sort_unstable_by_key(|&(p, _)| p);
        let nr_block = crate::free_area::PAGEBLOCK_NR_PAGES;
        let block = |p: u64| p & !(nr_block - 1);
        let mut st = CompactStats::default();
        // The free scanner's next pageblock (it scans downwards) and its isolated pages.
        let mut free_pb = block(zone.end_pfn() - 1);
        let mut freepages: Vec<u64> = Vec::new();
        let mut next = 0usize;
        let mut meet = zone.end_pfn();
        for &(pfn, owner) in &owned {
            let pb = block(pfn);
            if next == freepages.len() {
                freepages.clear();
                next = 0;
                while freepages.is_empty() && free_pb > pb {
                    zone.isolate_free_pageblock(free_pb, &mut freepages);
                    free_pb -= nr_block;
                }
                st.isolated_free += freepages.len() as u64;
            }
            // Scanners met: the page lies in or above the free scanner's last pageblock.
            if next == freepages.len() || pb > free_pb {
                meet = pb;
                break;
            }
            let to = freepages[next];
            next += 1;
            match owner {
                Owner::File(id, k) => self.files[id as usize].pages[k as usize] = to,
                Owner::Anon(id, k) => self.procs[id as usize].pages[k as usize] = to,
            }
            zone.free_pages_on(0, pfn, 0)?;
            st.migrated += 1;
        }
        if meet == zone.end_pfn() {
            meet = free_pb + nr_block;
        }
        st.meet_pfn = meet.max(zone.start_pfn());
        for &p in &freepages[next..] {
            zone.free_pages_on(0, p, 0)?;
        }
        zone.drain_pages();
        self.stats.compactions += 1;
        self.stats.migrated += st.migrated;
        Ok(st)
    }

    fn start_process<R: Rng, W: Rng>(
        &mut self,
        zone: &mut Zone<R>,
        rng: &mut W,
        spec: &ServerSpec,
    ) -> Result<(), Error> {
        let n = log_uniform(rng, spec.process_pages);
        let cpu = uniform(rng, u64::from(spec.cpus)) as u32;
        let life = {
            let (t0, cap) = spec.process_life;
            ((t0 as f64 / unit(rng)) as u64).min(cap)
        };
        let mut p = Process {
            cpu,
            pages: Vec::with_capacity(n as usize),
            kernel: Vec::new(),
        };
        let mut ok = true;
        for _ in 0..1 + n / 512 {
            match self.alloc(zone, spec, cpu, MigrateType::Unmovable)? {
                Some(pg) => p.kernel.push(pg),
                None => ok = false,
            }
        }
        if ok {
            for _ in 0..n {
                match self.alloc(zone, spec, cpu, MigrateType::Movable)? {
                    Some(pg) => p.pages.push(pg),
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
        }
        let id = match self.free_procs.pop() {
            Some(id) => {
                self.procs[id as usize] = p;
                id
            }
            None => {
                self.procs.push(p);
                (self.procs.len() - 1) as u32
            }
        };
        self.anon_pages += self.procs[id as usize].pages.len() as u64;
        if !ok {
            self.stats.failed_starts += 1;
            return self.exit(zone, id);
        }
        self.exits.push(Reverse((self.now + life, id)));
        Ok(())
    }

    fn exit<R: Rng>(&mut self, zone: &mut Zone<R>, id: u32) -> Result<(), Error> {
        let p = core::mem::take(&mut self.procs[id as usize]);
        self.anon_pages -= p.pages.len() as u64;
        for &pg in p.pages.iter().chain(&p.kernel) {
            self.free(zone, p.cpu, pg)?;
        }
        self.free_procs.push(id);
        Ok(())
    }

    /// One file read; returns the pages it read.
    fn read<R: Rng, W: Rng>(
        &mut self,
        zone: &mut Zone<R>,
        rng: &mut W,
        spec: &ServerSpec,
    ) -> Result<u64, Error> {
        let cpu = uniform(rng, u64::from(spec.cpus)) as u32;
        if !self.live_files.is_empty() && unit(rng) <= spec.reread_prob {
            let id = self.live_files[uniform(rng, self.live_files.len() as u64) as usize];
            // Re-read: evicted pages come back, the file moves to the young end of the LRU.
            let evicted = self.files[id as usize].evicted as u64;
            let mut fresh = Vec::with_capacity(evicted as usize);
            for _ in 0..evicted {
                match self.alloc(zone, spec, cpu, MigrateType::Movable)? {
                    Some(pg) => fresh.push(pg),
                    None => break,
                }
            }
            let f = &mut self.files[id as usize];
            if f.live {
                let e = f.evicted;
                f.pages.drain(..e);
                f.evicted = 0;
                self.cache_pages += fresh.len() as u64;
                f.pages.extend_from_slice(&fresh);
                f.generation = f.generation.wrapping_add(1);
                self.lru.push_back((id, f.generation));
            } else {
                // Reclaimed while being re-read (memory is that tight): drop the pages.
                for pg in fresh {
                    self.free(zone, cpu, pg)?;
                }
            }
            return Ok(evicted);
        }
        let n = log_uniform(rng, spec.file_pages);
        let id = match self.free_files.pop() {
            Some(id) => id,
            None => {
                self.files.push(File::default());
                (self.files.len() - 1) as u32
            }
        };
        {
            let f = &mut self.files[id as usize];
            f.live = true;
            f.evicted = 0;
            f.generation = f.generation.wrapping_add(1);
            f.live_pos = self.live_files.len();
        }
        self.live_files.push(id);
        let generation = self.files[id as usize].generation;
        self.lru.push_back((id, generation));
        self.files_created += 1;
        if self.files_created.is_multiple_of(spec.files_per_slab_page)
            && let Some(pg) = self.alloc(zone, spec, cpu, MigrateType::Reclaimable)?
        {
            self.slab.push_back(pg);
        }
        for k in 0..n {
            let Some(pg) = self.alloc(zone, spec, cpu, MigrateType::Movable)? else {
                return Ok(k + 1);
            };
            let f = &mut self.files[id as usize];
            if !f.live {
                // Reclaimed while being read (memory is that tight): drop the page.
                self.free(zone, cpu, pg)?;
                return Ok(k + 1);
            }
            f.pages.push(pg);
            self.cache_pages += 1;
        }
        Ok(n)
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
