//! The `--json` report of `simulate` and the names it gives modes and workloads: what
//! `simulate` prints and `plot` reads back.

use std::string::{String, ToString};
use std::vec::Vec;

use scalrand_shuffle::{
    CacheMode, ExperimentConfig, ExperimentResult, KernelVersion, ShuffleMode, Workload,
};
use serde::{Deserialize, Serialize};

/// "1 seed", "5 seeds": the count of seeds as the printed lines and plot titles give it.
pub(crate) fn seeds(n: usize) -> String {
    if n == 1 {
        "1 seed".to_string()
    } else {
        std::format!("{n} seeds")
    }
}

pub(crate) fn mode_name(m: ShuffleMode) -> &'static str {
    match m {
        ShuffleMode::Kernel => "kernel",
        ShuffleMode::FisherYates => "fisher-yates",
    }
}

pub(crate) fn workload_name(w: &Workload) -> &'static str {
    match w {
        Workload::Heap(_) => "heap",
        Workload::Stream(_) => "stream",
        Workload::TwoInstance(_) => "two-instance",
    }
}

/// The `--json` report of `simulate` (the field names the README documents).
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct SimulateReport {
    pub(crate) preset: String,
    pub(crate) kernel: KernelVersion,
    pub(crate) aging: String,
    pub(crate) pcp: bool,
    pub(crate) workload: String,
    pub(crate) zone_pages: u64,
    pub(crate) cache_bytes: u64,
    pub(crate) cache_mode: String,
    pub(crate) shuffle_order: u8,
    pub(crate) shuffle_mode: String,
    pub(crate) pick_tail: bool,
    pub(crate) aging_rounds: u32,
    pub(crate) seeds: usize,
    #[serde(default)]
    pub(crate) page_ops: u64,
    pub(crate) first_run: Pair,
    pub(crate) aged: Pair,
    pub(crate) curve: CurveReport,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct Pair {
    pub(crate) in_order: f64,
    pub(crate) shuffled: f64,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct CurveReport {
    pub(crate) in_order: Vec<f64>,
    pub(crate) shuffled: Vec<f64>,
    pub(crate) in_order_min: Vec<f64>,
    pub(crate) in_order_max: Vec<f64>,
    pub(crate) shuffled_min: Vec<f64>,
    pub(crate) shuffled_max: Vec<f64>,
    pub(crate) in_order_sd: Vec<f64>,
    pub(crate) shuffled_sd: Vec<f64>,
}

pub(crate) fn report(preset: &str, cfg: &ExperimentConfig, r: &ExperimentResult) -> SimulateReport {
    SimulateReport {
        preset: preset.to_string(),
        kernel: cfg.kernel,
        aging: if cfg.server.is_some() {
            "server"
        } else {
            "synthetic"
        }
        .to_string(),
        pcp: cfg.pcp,
        workload: workload_name(&cfg.workload).to_string(),
        zone_pages: cfg.zone_pages,
        cache_bytes: cfg.cache_bytes,
        cache_mode: match cfg.cache_mode {
            CacheMode::Line => "line",
            CacheMode::PageColour => "page",
        }
        .to_string(),
        shuffle_order: cfg.shuffle_order,
        shuffle_mode: mode_name(cfg.shuffle_mode).to_string(),
        pick_tail: cfg.pick_tail,
        aging_rounds: cfg.aging_rounds,
        seeds: r.seeds,
        page_ops: r.page_ops,
        first_run: Pair {
            in_order: r.in_order.first_run(),
            shuffled: r.shuffled.first_run(),
        },
        aged: Pair {
            in_order: r.in_order.aged(),
            shuffled: r.shuffled.aged(),
        },
        curve: CurveReport {
            in_order: r.in_order.mean.clone(),
            shuffled: r.shuffled.mean.clone(),
            in_order_min: r.in_order.min.clone(),
            in_order_max: r.in_order.max.clone(),
            shuffled_min: r.shuffled.min.clone(),
            shuffled_max: r.shuffled.max.clone(),
            in_order_sd: r.in_order.sd.clone(),
            shuffled_sd: r.shuffled.sd.clone(),
        },
    }
}
