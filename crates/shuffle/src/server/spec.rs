//! What a server ages with ([`ServerSpec`]): the sizes, rates and lifetimes its rounds draw
//! from, with [`ServerSpec::for_zone`] the defaults the module table sources.

use crate::Error;
use crate::kernel::watermarks;

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
    /// Compaction ([`ServerAging::compact`](super::ServerAging::compact)) after every `n`th round; `None` (the default)
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

    pub(super) fn validate(&self) -> Result<(), Error> {
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
