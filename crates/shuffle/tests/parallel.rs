//! Seeds run in parallel (the `parallel` feature) give the serial run's results bit for bit:
//! each seed is run the same way and the figures are combined in seed order.

#![cfg(feature = "parallel")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

use std::sync::atomic::{AtomicU64, Ordering};

use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::presets::preset;
use scalrand_shuffle::server::ServerSpec;
use scalrand_shuffle::{
    CalibrateConfig, Error, ExperimentConfig, run_calibrate, run_calibrate_parallel,
    run_experiment, run_experiment_parallel,
};

/// More threads than this machine may have cores, so seeds really interleave.
fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

fn tiny(server: bool) -> ExperimentConfig {
    let mut cfg = preset("tiny").unwrap();
    cfg.seeds = (1..=7).collect();
    cfg.aging_rounds = 2;
    if server {
        cfg.server = Some(ServerSpec::for_zone(cfg.zone_pages));
        cfg.pcp = true;
    }
    cfg
}

#[test]
fn experiment_parallel_equals_serial() {
    for server in [false, true] {
        let cfg = tiny(server);
        let mut calls = 0;
        let serial = run_experiment::<Xoroshiro128PlusPlus>(&cfg, &mut |_, _| calls += 1).unwrap();
        for threads in [2, 5] {
            let ticks = AtomicU64::new(0);
            let last = AtomicU64::new(0);
            let par = pool(threads)
                .install(|| {
                    run_experiment_parallel::<Xoroshiro128PlusPlus>(&cfg, &|done, total| {
                        ticks.fetch_add(1, Ordering::Relaxed);
                        last.fetch_max(done, Ordering::Relaxed);
                        assert!(done <= total);
                    })
                })
                .unwrap();
            // PartialEq on f64 is bit equality here: no NaN in a result.
            assert_eq!(par, serial, "server aging {server}, {threads} threads");
            assert_eq!(ticks.into_inner(), calls);
            assert_eq!(last.into_inner(), calls);
        }
    }
}

#[test]
fn calibrate_parallel_equals_serial() {
    let cfg = CalibrateConfig {
        scale: 1024,
        seeds: vec![3, 1, 4, 5],
        aging_rounds: 1,
        sweeps: 1,
        ..CalibrateConfig::default()
    };
    let serial = run_calibrate::<Xoroshiro128PlusPlus>(&cfg, &mut |_, _| {}).unwrap();
    let last = AtomicU64::new(0);
    let par = pool(3)
        .install(|| {
            run_calibrate_parallel::<Xoroshiro128PlusPlus>(&cfg, &|done, _| {
                last.fetch_max(done, Ordering::Relaxed);
            })
        })
        .unwrap();
    assert_eq!(par, serial);
    assert_eq!(last.into_inner(), cfg.runs());
}

#[test]
fn parallel_refuses_what_serial_refuses() {
    let mut cfg = tiny(false);
    cfg.seeds.clear();
    assert_eq!(
        run_experiment_parallel::<Xoroshiro128PlusPlus>(&cfg, &|_, _| {}),
        Err(Error::ZeroSeeds)
    );
    let cal = CalibrateConfig {
        scale: 3,
        ..CalibrateConfig::default()
    };
    assert!(matches!(
        run_calibrate_parallel::<Xoroshiro128PlusPlus>(&cal, &|_, _| {}),
        Err(Error::BadParameter(_))
    ));
}
