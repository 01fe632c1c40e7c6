//! Running one function over every seed of a run: one after another, or in parallel on a
//! rayon thread pool. Either way the results come back in seed order, so whatever is combined
//! from them afterwards is the same, bit for bit.

use alloc::vec::Vec;

use crate::Error;

/// `f` on each seed in turn; stops at the first error.
pub(crate) fn map_serial<T>(
    seeds: &[u64],
    mut f: impl FnMut(u64) -> Result<T, Error>,
) -> Result<Vec<T>, Error> {
    seeds.iter().map(|&s| f(s)).collect()
}

/// `f` on the seeds in parallel on the current rayon pool, results in seed order.
#[cfg(feature = "parallel")]
pub(crate) fn map_parallel<T: Send>(
    seeds: &[u64],
    f: impl Fn(u64) -> Result<T, Error> + Sync,
) -> Result<Vec<T>, Error> {
    use rayon::prelude::*;
    // One seed per task: a seed is seconds to minutes of work.
    seeds.par_iter().with_max_len(1).map(|&s| f(s)).collect()
}
