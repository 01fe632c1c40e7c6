//! Synthetic aging: allocations of mixed orders and migratetypes with mixed lifetimes, the
//! live set held near a fraction of the zone.

use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::Reverse;

use rand_core::Rng;

use crate::Error;
use crate::draw::{uniform, unit};
use crate::zone::{MAX_ORDER, MigrateType, Zone};

/// One aging round: `ops` allocations of mixed orders and migratetypes, each living a
/// mixed-length time (most short, some spanning rounds), with frees as lifetimes end; the
/// live set is kept near `live_fraction` of the zone's present pages.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AgingSpec {
    /// Allocations per round.
    pub ops: u64,
    /// Share of present pages the aging keeps allocated at most.
    pub live_fraction: f64,
    /// `(order, weight)` pairs the allocation orders are drawn from.
    pub orders: Vec<(u8, u32)>,
    /// Probability that an allocation is long-lived.
    pub long_prob: f64,
    /// Mean lifetime of a short-lived allocation, in allocations.
    pub short_mean: u64,
    /// Mean lifetime of a long-lived allocation, in rounds.
    pub long_rounds: u64,
    /// Probability that an allocation is unmovable (the rest are movable).
    pub unmovable_prob: f64,
    /// At the end of the round every short-lived allocation still live is freed (its job
    /// exited), soonest-expiring first; long-lived ones stay.
    pub drain_short: bool,
}

impl AgingSpec {
    fn validate(&self) -> Result<(), Error> {
        if self.orders.is_empty() || self.orders.iter().all(|&(_, w)| w == 0) {
            return Err(Error::BadParameter(
                "aging needs at least one order with a weight",
            ));
        }
        if let Some(&(o, _)) = self.orders.iter().find(|&&(o, _)| o > MAX_ORDER) {
            return Err(Error::OrderTooLarge { order: o });
        }
        if !(0.0..=1.0).contains(&self.live_fraction)
            || !(0.0..=1.0).contains(&self.long_prob)
            || !(0.0..=1.0).contains(&self.unmovable_prob)
        {
            return Err(Error::BadParameter(
                "aging probabilities must be within 0..=1",
            ));
        }
        if self.short_mean == 0 || self.long_rounds == 0 {
            return Err(Error::BadParameter("aging lifetimes must be at least 1"));
        }
        Ok(())
    }
}

/// The aging state of one zone: live allocations ordered by expiry.
#[derive(Debug, Default)]
pub struct Aging {
    clock: u64,
    live_pages: u64,
    live: BinaryHeap<Reverse<(u64, u64, u8, bool)>>,
}

impl Aging {
    /// No live allocations.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pages the aging holds now.
    pub fn live_pages(&self) -> u64 {
        self.live_pages
    }

    fn free_due<R: Rng>(&mut self, zone: &mut Zone<R>, now: u64) -> Result<(), Error> {
        while let Some(&Reverse((t, pfn, order, _))) = self.live.peek() {
            if t > now {
                break;
            }
            self.live.pop();
            zone.free_pages(pfn, order)?;
            self.live_pages -= 1 << order;
        }
        Ok(())
    }

    fn free_oldest<R: Rng>(&mut self, zone: &mut Zone<R>) -> Result<bool, Error> {
        match self.live.pop() {
            Some(Reverse((_, pfn, order, _))) => {
                zone.free_pages(pfn, order)?;
                self.live_pages -= 1 << order;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Runs one round on `zone`.
    ///
    /// # Errors
    /// [`Error::BadParameter`] / [`Error::OrderTooLarge`] for a bad spec.
    pub fn round<R: Rng, W: Rng>(
        &mut self,
        zone: &mut Zone<R>,
        rng: &mut W,
        spec: &AgingSpec,
    ) -> Result<(), Error> {
        spec.validate()?;
        let total_w: u64 = spec.orders.iter().map(|&(_, w)| u64::from(w)).sum();
        let cap = (zone.present_pages() as f64 * spec.live_fraction) as u64;
        for _ in 0..spec.ops {
            self.clock += 1;
            self.free_due(zone, self.clock)?;
            let mut pick = uniform(rng, total_w);
            let mut order = 0;
            for &(o, w) in &spec.orders {
                if pick < u64::from(w) {
                    order = o;
                    break;
                }
                pick -= u64::from(w);
            }
            while self.live_pages + (1 << order) > cap {
                if !self.free_oldest(zone)? {
                    break;
                }
            }
            let mt = if unit(rng) <= spec.unmovable_prob {
                MigrateType::Unmovable
            } else {
                MigrateType::Movable
            };
            let Some(pfn) = zone.alloc_pages(order, mt)? else {
                continue;
            };
            let long = unit(rng) <= spec.long_prob;
            // Saturating: absurd lifetimes must not overflow (n >= 2 here, never 0).
            let span = if long {
                spec.long_rounds.saturating_mul(spec.ops).saturating_mul(2)
            } else {
                spec.short_mean.saturating_mul(2)
            };
            let life = 1 + uniform(rng, span);
            self.live
                .push(Reverse((self.clock + life, pfn, order, long)));
            self.live_pages += 1 << order;
        }
        if spec.drain_short {
            let mut keep = BinaryHeap::with_capacity(self.live.len());
            while let Some(Reverse(e)) = self.live.pop() {
                if e.3 {
                    keep.push(Reverse(e));
                } else {
                    zone.free_pages(e.1, e.2)?;
                    self.live_pages -= 1 << e.2;
                }
            }
            self.live = keep;
        }
        Ok(())
    }

    /// Frees everything the aging holds.
    ///
    /// # Errors
    /// Never in practice (the zone handed these blocks out); propagated from `free_pages`.
    pub fn release_all<R: Rng>(&mut self, zone: &mut Zone<R>) -> Result<(), Error> {
        while self.free_oldest(zone)? {}
        Ok(())
    }
}
