#![no_std]
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod bandwidth;
pub mod bias;
pub mod cache;
pub mod calibrate;
mod draw;
mod error;
pub mod experiment;
pub mod free_area;
pub mod jvm;
pub mod kernel;
pub mod pcp;
pub mod presets;
mod seeds;
pub mod server;
pub mod shuffle;
pub mod workload;
pub mod zone;
pub mod zonesort;

pub use bandwidth::BandwidthModel;
pub use bias::{BiasReport, chi2_sf, measure_bias, measure_bias_with_progress};
pub use cache::{CacheMode, CacheStats, LINE_SIZE, MemSideCache};
#[cfg(feature = "parallel")]
pub use calibrate::run_calibrate_parallel;
pub use calibrate::{
    CalibrateConfig, CalibrateReport, expected_shuffled_miss_ratio, run_calibrate,
};
pub use error::Error;
#[cfg(feature = "parallel")]
pub use experiment::run_experiment_parallel;
pub use experiment::{Curve, ExperimentConfig, ExperimentResult, Workload, run_experiment};
pub use free_area::{
    FreeArea, MAX_ORDER, MAX_SPANNED_PAGES, MigrateType, NR_ORDERS, PAGE_SIZE, PAGEBLOCK_NR_PAGES,
    PAGEBLOCK_ORDER, SHUFFLE_ORDER,
};
pub use kernel::KernelVersion;
pub use pcp::PcpLists;
pub use shuffle::{PickTail, SHUFFLE_RETRY, ShuffleMode, ShuffleStats};
pub use zone::{ShufflePolicy, Zone, ZoneConfig};
