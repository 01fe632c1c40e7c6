//! `--jobs`: how many threads the seeds run on, and the runner that honours it.

use std::format;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::CliError;

/// The most threads `--jobs` accepts.
pub(crate) const MAX_JOBS: usize = 1024;

/// `--jobs N`: a whole number from 1 to [`MAX_JOBS`].
pub(crate) fn parse_jobs(s: &str) -> Result<usize, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!(
            "`{s}` is negative: --jobs is a number of threads, 1 or more"
        ));
    }
    let n: usize = t
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of threads"))?;
    if n == 0 {
        return Err("0 threads cannot run anything: --jobs is 1 or more".to_string());
    }
    if n > MAX_JOBS {
        return Err(format!(
            "{n} threads is more than the {MAX_JOBS} --jobs allows"
        ));
    }
    Ok(n)
}

/// Runs `serial` when one thread is asked for; otherwise `parallel` on a rayon pool of `jobs`
/// threads (default: one per core the process may use). `progress` is handed to either as the
/// callback that draws the bar: calls from several threads only ever move it forward.
pub(crate) fn run_seeds<T: Send>(
    jobs: Option<usize>,
    draw: &(dyn Fn(u64) + Sync),
    serial: impl FnOnce(&mut dyn FnMut(u64, u64)) -> T,
    parallel: impl FnOnce(&(dyn Fn(u64, u64) + Sync)) -> T + Send,
) -> Result<T, CliError> {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 1 {
        return Ok(serial(&mut |done, _| draw(done)));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| CliError(format!("--jobs {jobs}: cannot start the threads: {e}")))?;
    let high = AtomicU64::new(0);
    let progress = |done: u64, _total: u64| {
        if high.fetch_max(done, Ordering::Relaxed) < done {
            draw(done);
        }
    };
    Ok(pool.install(|| parallel(&progress)))
}
