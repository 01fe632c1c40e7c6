//! Runs the scaling rows: every row at every thread count, once in each of several processes
//! (the order reversed in every other one), the median and spread kept and each ratio taken
//! inside one process; the result is a [`Report`].
//!
//! One process per repeat because a process on these machines lands in one of two speed modes
//! for memory-touching loops (figures of one binary spread by ±30% between processes, steady
//! within one): rounds inside one process measure its mode, not the generators.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use crate::report::{Group, Point, Ratio, Report, Series, Spread, human};
use crate::{MakeError, Row};

/// How to measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Thread counts, in order.
    pub threads: Vec<usize>,
    /// Length of one measurement.
    pub duration: Duration,
    /// Processes per point; the median is kept.
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

/// [`default_threads`], then 4, 16 and 64 times as many threads as CPUs: the oversubscribed
/// points a server's worker pools, blocking pools and neighbouring processes run at, where a
/// generator whose per-CPU state a preempted thread can hold up stops keeping pace with
/// per-thread ones.
pub fn full_threads() -> Vec<usize> {
    let mut v = default_threads();
    let max = cpus();
    v.extend(
        [4, 16, 64]
            .map(|k| k * max)
            .into_iter()
            .filter(|&t| t <= 1024),
    );
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

/// Runs one row at `threads` threads for `duration`; returns aggregate units per second: the
/// units all workers completed over the wall time of the window, from the first worker's
/// start to the last worker's stop. With more threads than CPUs neither a sum of per-thread
/// rates (a thread that waits to be scheduled starts its clock late) nor the main thread's
/// own clock (it may itself be woken from the start barrier long after the workers) gives
/// that. With `pin`, worker `i` runs pinned to CPU `i mod cpus()`.
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
                    (units, start, Instant::now())
                })
            })
            .collect();
        barrier.wait();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        let mut window: Option<(Instant, Instant)> = None;
        let mut units = 0u64;
        for h in handles {
            let (u, start, end) = h
                .join()
                .map_err(|_| MakeError::from(format!("{}: a worker panicked", row.name)))?;
            units += u;
            window = Some(window.map_or((start, end), |(s0, e0)| (s0.min(start), e0.max(end))));
        }
        let secs = window.map_or(0.0, |(s0, e0)| (e0 - s0).as_secs_f64());
        Ok(if secs > 0.0 { units as f64 / secs } else { 0.0 })
    })
}

/// The median of `v` (the upper one of an even count); NaN for an empty `v`.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// What one process measured: every row once at every thread count.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessFigures {
    /// `per_sec[row][thread index]`, in the order of the rows and threads it was given
    /// (whatever order it measured them in); `None` where the row could not be built.
    pub per_sec: Vec<Vec<Option<f64>>>,
    /// Why a row could not be built, per row; `None` where it ran.
    pub errors: Vec<Option<String>>,
}

/// The points of `rows` rows at `threads` thread counts, as (row, thread index), in the order
/// one process measures them: row by row, thread counts ascending, or all of that reversed.
pub fn order(rows: usize, threads: usize, reverse: bool) -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = (0..rows)
        .flat_map(|r| (0..threads).map(move |t| (r, t)))
        .collect();
    if reverse {
        v.reverse();
    }
    v
}

/// Measures every row once at every thread count in this process, in [`order`]; a row that
/// cannot be built is recorded as such and not retried.
pub fn measure_once(
    rows: &[Row],
    threads: &[usize],
    duration: Duration,
    pin: bool,
    reverse: bool,
) -> ProcessFigures {
    let mut out = ProcessFigures {
        per_sec: vec![vec![None; threads.len()]; rows.len()],
        errors: vec![None; rows.len()],
    };
    for (r, t) in order(rows.len(), threads.len(), reverse) {
        if out.errors[r].is_some() {
            continue;
        }
        match measure(&rows[r], threads[t], duration, pin) {
            Ok(v) => out.per_sec[r][t] = Some(v),
            Err(e) => out.errors[r] = Some(e.to_string()),
        }
    }
    out
}

/// Measures `rows` in `opts.repeat` processes and gathers the report.
///
/// `process(i, reverse)` runs process `i` (the `scaling` binary starts itself with the hidden
/// `--child-rows` flag; tests measure in place) and returns what it measured: every row once at
/// every thread count, the order of the points reversed in every other process, so that
/// neither a row's place in the run nor a process's speed mode (single processes on these
/// machines run about 30% apart) favours one row. Each point keeps the median of its
/// processes and their spread, and each ratio of a scalrand row to a baseline of its group is
/// taken inside each process before its median is taken. `progress` advances by one per point
/// measured; unless `quiet`, one line per process and each point's figure are printed on
/// stderr. A row that cannot be built in some process is reported and left out.
///
/// # Errors
/// The first process that fails (cannot start, crashes, answers something else).
pub fn run(
    rows: &[Row],
    opts: &Options,
    progress: &ProgressBar,
    quiet: bool,
    mut process: impl FnMut(usize, bool) -> Result<ProcessFigures, String>,
) -> Result<Report, String> {
    let points = rows.len() * opts.threads.len();
    progress.set_length((points * opts.repeat) as u64);
    // figures[row][thread index]: one figure per process.
    let mut figures = vec![vec![Vec::with_capacity(opts.repeat); opts.threads.len()]; rows.len()];
    // per_process[p][row][thread index], for the ratios.
    let mut per_process = Vec::with_capacity(opts.repeat);
    let mut skipped: Vec<Option<String>> = vec![None; rows.len()];
    for p in 0..opts.repeat {
        let reverse = p % 2 == 1;
        progress.set_message(format!(
            "process {}/{}: {} points{}",
            p + 1,
            opts.repeat,
            points,
            if reverse { ", reversed" } else { "" }
        ));
        let started = Instant::now();
        let got = process(p, reverse)?;
        if got.per_sec.len() != rows.len()
            || got.per_sec.iter().any(|r| r.len() != opts.threads.len())
            || got.errors.len() != rows.len()
        {
            return Err(format!(
                "process {} answered {} rows, not the {} asked for",
                p + 1,
                got.per_sec.len(),
                rows.len()
            ));
        }
        progress.inc(points as u64);
        for (r, e) in got.errors.iter().enumerate() {
            if let Some(e) = e
                && skipped[r].is_none()
            {
                progress.suspend(|| {
                    eprintln!("  {}: {}: skipped: {e}", rows[r].group, rows[r].name);
                });
                skipped[r] = Some(e.clone());
            }
        }
        for (r, per_thread) in got.per_sec.iter().enumerate() {
            for (t, v) in per_thread.iter().enumerate() {
                if let Some(v) = v {
                    figures[r][t].push(*v);
                }
            }
        }
        if !quiet {
            progress.suspend(|| {
                eprintln!(
                    "  process {:>2}/{}: {points} points in {:.1} s{}",
                    p + 1,
                    opts.repeat,
                    started.elapsed().as_secs_f64(),
                    if reverse { " (in reverse order)" } else { "" }
                );
            });
        }
        per_process.push(got.per_sec);
    }

    let mut names: Vec<&str> = vec![];
    for row in rows {
        if !names.contains(&row.group) {
            names.push(row.group);
        }
    }
    let mut groups: Vec<Group> = vec![];
    for name in names {
        let members: Vec<usize> = (0..rows.len())
            .filter(|&r| rows[r].group == name && skipped[r].is_none())
            .collect();
        let mut series = vec![];
        for &r in &members {
            let row = &rows[r];
            let points: Vec<Point> = opts
                .threads
                .iter()
                .zip(&figures[r])
                .map(|(&t, v)| {
                    let spread = Spread::of(v);
                    Point {
                        threads: t,
                        per_sec: spread.map_or(f64::NAN, |s| s.median),
                        spread,
                    }
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
                recommended: crate::is_recommended(row),
                points,
            });
        }
        let mut ratios = vec![];
        for &o in members.iter().filter(|&&r| !rows[r].baseline) {
            for &b in members.iter().filter(|&&r| rows[r].baseline) {
                for (t, &threads) in opts.threads.iter().enumerate() {
                    let runs: Vec<f64> = per_process
                        .iter()
                        .filter_map(|f| Some(f[o][t]? / f[b][t]?))
                        .filter(|x| x.is_finite())
                        .collect();
                    if let Some(spread) = Spread::of(&runs) {
                        ratios.push(Ratio {
                            ours: rows[o].name.to_owned(),
                            baseline: rows[b].name.to_owned(),
                            threads,
                            spread,
                            runs,
                        });
                    }
                }
            }
        }
        if let Some(&first) = members.first() {
            groups.push(Group {
                name: name.to_owned(),
                unit: rows[first].unit,
                series,
                ratios,
            });
        }
    }
    progress.finish_and_clear();
    Ok(Report {
        cpus: cpus(),
        cpu_model: cpu_model(),
        backend: Some(format!("{:?}", scalrand_pool::chacha::backend())),
        threads: opts.threads.clone(),
        duration_ms: u64::try_from(opts.duration.as_millis()).unwrap_or(u64::MAX),
        repeat: opts.repeat,
        processes: true,
        full: false,
        pinned: opts.pin,
        groups,
    })
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
        baseline: bool,
        make: fn() -> Result<crate::Worker, MakeError>,
    ) -> Row {
        Row {
            group,
            name,
            baseline,
            unit: crate::Unit::Ops,
            make,
        }
    }

    #[test]
    fn every_other_process_measures_in_reverse() {
        assert_eq!(order(2, 2, false), [(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(order(2, 2, true), [(1, 1), (1, 0), (0, 1), (0, 0)]);
    }

    /// One process measures every row once in order, or in reverse; a row whose state cannot
    /// be built is recorded and not retried.
    #[test]
    fn one_process_measures_every_point_once() {
        let rows = [
            row("g1", "a", false, || worker("a")),
            row("g1", "broken", true, || {
                Err(MakeError::from("no such thing here".to_owned()))
            }),
            row("g2", "c", false, || worker("c")),
        ];
        ORDER.lock().unwrap().clear();
        let f = measure_once(&rows, &[1, 2], Duration::from_millis(1), true, true);
        assert_eq!(*ORDER.lock().unwrap(), ["c", "c", "a", "a"]);
        assert!(f.per_sec[0].iter().all(|v| v.is_some_and(|v| v > 0.0)));
        assert_eq!(f.per_sec[1], [None, None]);
        assert_eq!(f.errors[1].as_deref(), Some("no such thing here"));
        assert!(f.errors[0].is_none() && f.errors[2].is_none());
    }

    /// Processes alternate their order; points keep the median and spread of the processes,
    /// and ratios are taken inside each process: a process twice as fast for every row (a
    /// speed mode) moves the figures but not the ratio.
    #[test]
    fn ratios_are_taken_inside_each_process() {
        let rows = [
            row("g", "ours", false, || worker("ours")),
            row("g", "base", true, || worker("base")),
            row("g", "broken", true, || {
                Err(MakeError::from("gone".to_owned()))
            }),
        ];
        let opts = Options {
            threads: vec![1],
            duration: Duration::from_millis(1),
            repeat: 4,
            pin: false,
        };
        let mut reversed = vec![];
        let report = run(&rows, &opts, &ProgressBar::hidden(), true, |p, reverse| {
            reversed.push(reverse);
            let mode = if p % 2 == 0 { 1.0 } else { 2.0 };
            Ok(ProcessFigures {
                per_sec: vec![
                    vec![Some(300.0 * mode)],
                    vec![Some(100.0 * mode)],
                    vec![None],
                ],
                errors: vec![None, None, Some("gone".to_owned())],
            })
        })
        .unwrap();
        assert_eq!(reversed, [false, true, false, true]);
        let g = &report.groups[0];
        let names: Vec<&str> = g.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ours", "base"]);
        let p = g.series[0].points[0];
        assert_eq!(p.per_sec, 450.0);
        let sp = p.spread.unwrap();
        assert_eq!((sp.min, sp.max, sp.n), (300.0, 600.0, 4));
        assert_eq!(g.ratios.len(), 1);
        let r = &g.ratios[0];
        assert_eq!(
            (r.ours.as_str(), r.baseline.as_str(), r.threads),
            ("ours", "base", 1)
        );
        assert_eq!(r.runs, [3.0; 4]);
        assert_eq!(
            (r.spread.median, r.spread.min, r.spread.max),
            (3.0, 3.0, 3.0)
        );
        assert!(report.processes);
    }

    #[test]
    fn a_process_that_answers_the_wrong_shape_is_an_error() {
        let rows = [row("g", "a", false, || worker("a"))];
        let opts = Options {
            threads: vec![1, 2],
            duration: Duration::from_millis(1),
            repeat: 2,
            pin: false,
        };
        let e = run(&rows, &opts, &ProgressBar::hidden(), true, |_, _| {
            Ok(ProcessFigures::default())
        })
        .unwrap_err();
        assert_eq!(e, "process 1 answered 0 rows, not the 1 asked for");
        let e = run(&rows, &opts, &ProgressBar::hidden(), true, |_, _| {
            Err("process 1 exited with 101".to_owned())
        })
        .unwrap_err();
        assert_eq!(e, "process 1 exited with 101");
    }

    #[test]
    fn default_threads_end_at_all_cpus() {
        let t = default_threads();
        assert_eq!(t.first(), Some(&1));
        assert_eq!(t.last(), Some(&cpus()));
    }
}
