//! Runs the scaling rows: every row at every thread count, a few times each, the median kept;
//! the result is a [`Report`].

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use crate::report::{Group, Point, Report, Series, human};
use crate::{MakeError, Row};

/// How to measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Thread counts, in order.
    pub threads: Vec<usize>,
    /// Length of one measurement.
    pub duration: Duration,
    /// Measurements per point; the median is kept.
    pub repeat: usize,
}

/// 1, 2, 4, ... up to all CPUs (the last one even when it is not a power of two).
pub fn default_threads() -> Vec<usize> {
    let max = cpus();
    let mut v = vec![];
    let mut t = 1;
    while t < max {
        v.push(t);
        t *= 2;
    }
    v.push(max);
    v
}

/// CPUs this process may run on.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPU model from `/proc/cpuinfo` (Linux), for the record of a run.
pub fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, m)| m.trim().to_owned())
}

/// Runs one row at `threads` threads for `duration`; returns aggregate units per second.
pub fn measure(row: &Row, threads: usize, duration: Duration) -> Result<f64, MakeError> {
    let worker = (row.make)()?;
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (worker, stop, barrier) = (&worker, &stop, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    let units = worker(t, stop);
                    units as f64 / start.elapsed().as_secs_f64()
                })
            })
            .collect();
        barrier.wait();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        handles.into_iter().try_fold(0.0, |sum, h| match h.join() {
            Ok(v) => Ok(sum + v),
            Err(_) => Err(MakeError::from(format!("{}: a worker panicked", row.name))),
        })
    })
}

/// The median of `v` (the upper one of an even count); NaN for an empty `v`.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Measures every row at every thread count and gathers the report. `progress` advances by
/// one per point; each point's figure is printed above it on stderr, unless `quiet`. A row
/// whose state cannot be built is reported on stderr and left out.
pub fn run(rows: &[Row], opts: &Options, progress: &ProgressBar, quiet: bool) -> Report {
    progress.set_length((rows.len() * opts.threads.len()) as u64);
    let mut groups: Vec<Group> = vec![];
    'rows: for row in rows {
        let mut points = vec![];
        for &t in &opts.threads {
            progress.set_message(format!("{} / {} / {t} thr", row.group, row.name));
            let runs: Result<Vec<f64>, MakeError> = (0..opts.repeat)
                .map(|_| measure(row, t, opts.duration))
                .collect();
            progress.inc(1);
            let v = match runs {
                Ok(runs) => median(runs),
                Err(e) => {
                    progress.suspend(|| eprintln!("  {}: {}: skipped: {e}", row.group, row.name));
                    progress.inc((opts.threads.len() - points.len() - 1) as u64);
                    continue 'rows;
                }
            };
            if !quiet {
                progress.suspend(|| {
                    eprintln!(
                        "  {:<14} {:<40} {:>3} threads  {}",
                        row.group,
                        row.name,
                        t,
                        human(v, row.unit)
                    );
                });
            }
            points.push(Point {
                threads: t,
                per_sec: v,
            });
        }
        let series = Series {
            name: row.name.to_owned(),
            baseline: row.baseline,
            points,
        };
        match groups.iter_mut().find(|g| g.name == row.group) {
            Some(g) => g.series.push(series),
            None => groups.push(Group {
                name: row.group.to_owned(),
                unit: row.unit,
                series: vec![series],
            }),
        }
    }
    progress.finish_and_clear();
    Report {
        cpus: cpus(),
        cpu_model: cpu_model(),
        threads: opts.threads.clone(),
        duration_ms: u64::try_from(opts.duration.as_millis()).unwrap_or(u64::MAX),
        repeat: opts.repeat,
        groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 3.0);
        assert!(median(vec![]).is_nan());
    }

    #[test]
    fn default_threads_end_at_all_cpus() {
        let t = default_threads();
        assert_eq!(t.first(), Some(&1));
        assert_eq!(t.last(), Some(&cpus()));
    }
}
