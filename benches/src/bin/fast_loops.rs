//! `scalrand::fast` against fastrand in a fastrand user's own hot loops: each loop runs the
//! same number of iterations on both, the two alternated (ours first in even rounds, theirs
//! first in odd ones), and each round's ratio (fastrand's time over ours: above 1, ours is
//! faster) is taken inside this one process; the median and the interquartile range of the
//! rounds' ratios are printed. `--help` lists the options.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;

/// `scalrand::fast` against fastrand in hot loops (ratios inside one process).
#[derive(Debug, Parser)]
#[command(name = "fast_loops", version)]
struct Args {
    /// Alternated rounds per loop (at least 1)
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Milliseconds each side of a round runs, about (at least 1)
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    ms: u64,
}

/// Nanoseconds per call of `f` over `calls` calls.
fn time(f: &mut dyn FnMut() -> u64, calls: u64) -> f64 {
    let t = Instant::now();
    let mut acc = 0u64;
    for _ in 0..calls {
        acc ^= f();
    }
    black_box(acc);
    t.elapsed().as_nanos() as f64 / calls as f64
}

/// Runs `ours` and `theirs` alternated for `rounds` rounds; returns the ratios sorted.
fn ratios(
    rounds: u32,
    ms: u64,
    ours: &mut dyn FnMut() -> u64,
    theirs: &mut dyn FnMut() -> u64,
) -> Vec<f64> {
    // Calls per side and round, from a short calibration on fastrand.
    let per_call = time(theirs, 10_000).max(0.1);
    let calls = ((ms as f64 * 1e6 / per_call) as u64).max(1);
    let mut r: Vec<f64> = (0..rounds)
        .map(|i| {
            let (a, b) = if i % 2 == 0 {
                let a = time(ours, calls);
                (a, time(theirs, calls))
            } else {
                let b = time(theirs, calls);
                (time(ours, calls), b)
            };
            b / a
        })
        .collect();
    r.sort_by(f64::total_cmp);
    r
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut v: Vec<u32> = (0..1000).collect();
    let mut w: Vec<u32> = (0..1000).collect();
    type Loop<'a> = (
        &'static str,
        Box<dyn FnMut() -> u64 + 'a>,
        Box<dyn FnMut() -> u64 + 'a>,
    );
    let loops: Vec<Loop<'_>> = vec![
        (
            "64 inlined u64(..) draws",
            Box::new(|| (0..64).fold(0, |a, _| a ^ scalrand::fast::u64(..))),
            Box::new(|| (0..64).fold(0, |a, _| a ^ fastrand::u64(..))),
        ),
        (
            "64 inlined u32(0..1000) draws",
            Box::new(|| (0..64).fold(0, |a, _| a ^ u64::from(scalrand::fast::u32(0..1000)))),
            Box::new(|| (0..64).fold(0, |a, _| a ^ u64::from(fastrand::u32(0..1000)))),
        ),
        (
            "64 inlined f64() draws",
            Box::new(|| (0..64).fold(0, |a, _| a ^ scalrand::fast::f64().to_bits())),
            Box::new(|| (0..64).fold(0, |a, _| a ^ fastrand::f64().to_bits())),
        ),
        (
            "shuffle of 1000 u32",
            Box::new(|| {
                scalrand::fast::shuffle(&mut v);
                u64::from(v[0])
            }),
            Box::new(|| {
                fastrand::shuffle(&mut w);
                u64::from(w[0])
            }),
        ),
    ];
    println!(
        "scalrand::fast / fastrand, speed (fastrand's time over ours), {} alternated rounds of about {} ms a side",
        args.rounds, args.ms
    );
    for (name, mut ours, mut theirs) in loops {
        let r = ratios(args.rounds, args.ms, &mut *ours, &mut *theirs);
        let q = |p: f64| r[((r.len() - 1) as f64 * p).round() as usize];
        println!(
            "  {name:32} median {:.2}  IQR {:.2}-{:.2}  min {:.2}  max {:.2}",
            q(0.5),
            q(0.25),
            q(0.75),
            r[0],
            r[r.len() - 1]
        );
    }
    ExitCode::SUCCESS
}
