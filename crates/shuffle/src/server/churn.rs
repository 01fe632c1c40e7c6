//! What one round is made of: processes that start (log-uniform sizes, Pareto lifetimes)
//! and exit, and file reads that fill the page cache or re-read a cached file.

use alloc::vec::Vec;
use core::cmp::Reverse;

use rand_core::Rng;

use super::{File, Process, ServerAging, ServerSpec};
use crate::Error;
use crate::draw::{uniform, unit};
use crate::zone::{MigrateType, Zone};

fn log_uniform<R: Rng + ?Sized>(rng: &mut R, (lo, hi): (u64, u64)) -> u64 {
    if lo >= hi {
        return lo;
    }
    let (a, b) = (libm::log(lo as f64), libm::log(hi as f64 + 1.0));
    (libm::exp(a + (b - a) * unit(rng)) as u64).clamp(lo, hi)
}

impl ServerAging {
    pub(super) fn start_process<R: Rng, W: Rng>(
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

    pub(super) fn exit<R: Rng>(&mut self, zone: &mut Zone<R>, id: u32) -> Result<(), Error> {
        let p = core::mem::take(&mut self.procs[id as usize]);
        self.anon_pages -= p.pages.len() as u64;
        for &pg in p.pages.iter().chain(&p.kernel) {
            self.free(zone, p.cpu, pg)?;
        }
        self.free_procs.push(id);
        Ok(())
    }

    /// One file read; returns the pages it read.
    pub(super) fn read<R: Rng, W: Rng>(
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
}
