//! Runs the scaling rows: every row at every thread count, a few times each (the rounds
//! interleaved across a group's rows), the median kept; the result is a [`Report`].

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
    /// Pin worker thread `i` to CPU `i mod cpus` for the measurement (thread-per-core, as a
    /// server that pins its workers runs), instead of leaving placement to the scheduler.
    pub pin: bool,
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

/// Pins the calling thread to `cpu` (Linux); `false` where that is not possible.
fn pin_to(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `set` is a zeroed cpu_set_t, filled by CPU_SET for an index below
        // CPU_SETSIZE, and passed with its size; pid 0 is the calling thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if cpu >= libc::CPU_SETSIZE as usize {
                return false;
            }
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

/// Runs one row at `threads` threads for `duration`; returns aggregate units per second.
/// With `pin`, worker `i` runs pinned to CPU `i mod cpus()`.
pub fn measure(row: &Row, threads: usize, duration: Duration, pin: bool) -> Result<f64, MakeError> {
    let worker = (row.make)()?;
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (worker, stop, barrier) = (&worker, &stop, &barrier);
                s.spawn(move || {
                    if pin {
                        pin_to(t % cpus());
                    }
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
/// one per measurement; each point's figure is printed on stderr once its group is done,
/// unless `quiet`. A row whose state cannot be built is reported on stderr and left out.
///
/// The repeats are interleaved within a group: round 1 measures every row of the group at
/// every thread count, then round 2 does it again, and so on, and each point keeps the median
/// of its rounds. The rows whose ratios a group reports are so measured side by side: a burst
/// of noise on a shared machine (a neighbour's job, the hypervisor taking a vCPU away for a
/// few seconds) lands on one round of every row rather than on every round of one row.
pub fn run(rows: &[Row], opts: &Options, progress: &ProgressBar, quiet: bool) -> Report {
    progress.set_length((rows.len() * opts.threads.len() * opts.repeat) as u64);
    let mut groups: Vec<Group> = vec![];
    let mut names: Vec<&str> = vec![];
    for row in rows {
        if !names.contains(&row.group) {
            names.push(row.group);
        }
    }
    for name in names {
        let members: Vec<&Row> = rows.iter().filter(|r| r.group == name).collect();
        // runs[row][thread index]: one figure per round; `None` once the row was skipped.
        let mut runs: Vec<Option<Vec<Vec<f64>>>> =
            vec![Some(vec![Vec::with_capacity(opts.repeat); opts.threads.len()]); members.len()];
        for _ in 0..opts.repeat {
            for (row, slot) in members.iter().zip(runs.iter_mut()) {
                for (i, &t) in opts.threads.iter().enumerate() {
                    progress.inc(1);
                    let Some(per_thread) = slot.as_mut() else {
                        continue;
                    };
                    progress.set_message(format!("{} / {} / {t} thr", row.group, row.name));
                    match measure(row, t, opts.duration, opts.pin) {
                        Ok(v) => per_thread[i].push(v),
                        Err(e) => {
                            progress.suspend(|| {
                                eprintln!("  {}: {}: skipped: {e}", row.group, row.name);
                            });
                            *slot = None;
                        }
                    }
                }
            }
        }
        let mut series = vec![];
        for (row, slot) in members.iter().zip(runs) {
            let Some(per_thread) = slot else { continue };
            let points: Vec<Point> = opts
                .threads
                .iter()
                .zip(per_thread)
                .map(|(&t, v)| Point {
                    threads: t,
                    per_sec: median(v),
                })
                .collect();
            if !quiet {
                progress.suspend(|| {
                    for p in &points {
                        eprintln!(
                            "  {:<14} {:<40} {:>3} threads  {}",
                            row.group,
                            row.name,
                            p.threads,
                            human(p.per_sec, row.unit)
                        );
                    }
                });
            }
            series.push(Series {
                name: row.name.to_owned(),
                baseline: row.baseline,
                points,
            });
        }
        if let Some(first) = members.first()
            && !series.is_empty()
        {
            groups.push(Group {
                name: name.to_owned(),
                unit: first.unit,
                series,
            });
        }
    }
    progress.finish_and_clear();
    Report {
        cpus: cpus(),
        cpu_model: cpu_model(),
        threads: opts.threads.clone(),
        duration_ms: u64::try_from(opts.duration.as_millis()).unwrap_or(u64::MAX),
        repeat: opts.repeat,
        pinned: opts.pin,
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

    static ORDER: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

    fn worker(name: &'static str) -> Result<crate::Worker, MakeError> {
        ORDER.lock().unwrap().push(name);
        Ok(Box::new(|_, stop: &AtomicBool| {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                std::hint::spin_loop();
            }
            n
        }))
    }

    fn row(
        group: &'static str,
        name: &'static str,
        make: fn() -> Result<crate::Worker, MakeError>,
    ) -> Row {
        Row {
            group,
            name,
            baseline: false,
            unit: crate::Unit::Ops,
            make,
        }
    }

    /// The rounds of a group interleave across its rows (a, b, a, b), groups run one after the
    /// other, and a row whose state cannot be built is left out of its group's report.
    #[test]
    fn rounds_interleave_within_a_group() {
        let rows = [
            row("g1", "a", || worker("a")),
            row("g1", "b", || worker("b")),
            row("g1", "broken", || {
                Err(MakeError::from("no such thing here".to_owned()))
            }),
            row("g2", "c", || worker("c")),
        ];
        let opts = Options {
            threads: vec![1],
            duration: Duration::from_millis(1),
            repeat: 3,
            pin: true,
        };
        ORDER.lock().unwrap().clear();
        let report = run(&rows, &opts, &ProgressBar::hidden(), true);
        assert_eq!(
            *ORDER.lock().unwrap(),
            ["a", "b", "a", "b", "a", "b", "c", "c", "c"]
        );
        let names: Vec<Vec<&str>> = report
            .groups
            .iter()
            .map(|g| g.series.iter().map(|s| s.name.as_str()).collect())
            .collect();
        assert_eq!(names, [vec!["a", "b"], vec!["c"]]);
        assert!(report.groups[0].series[0].points[0].per_sec > 0.0);
    }

    #[test]
    fn default_threads_end_at_all_cpus() {
        let t = default_threads();
        assert_eq!(t.first(), Some(&1));
        assert_eq!(t.last(), Some(&cpus()));
    }
}
