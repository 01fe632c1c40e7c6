//! Shared pieces of the benches and of the scaling harness that `cargo xtask scaling` runs.
//!
//! A scaling [`Row`] is one generator (ours or a baseline). For every thread count the harness
//! calls [`Row::make`] once, shares the returned [`Worker`] by reference among that many
//! threads, starts them together, lets them run for a fixed time, raises `stop`, and adds up
//! the units each thread reports. Aggregate units per second is the figure in the table.
//!
//! [`harness`] runs the rows, [`report`] holds what a run measured (serde: the `--json`
//! output and `--from` input of the `scaling` binary) and renders the markdown tables, and
//! [`plot`] draws the report, as SVG and PNG from one drawing.

use std::sync::atomic::AtomicBool;

pub mod args;
pub mod cli;
pub mod harness;
pub mod plot;
pub mod report;
pub mod rows;
pub mod sources;
pub mod stats;
#[cfg(target_os = "linux")]
pub mod vdso;

/// What one unit of work is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// One call returning a `u64` (or similar small value).
    Ops,
    /// One byte of output.
    Bytes,
}

/// The per-thread loop of one row: called on every thread with that thread's index and the
/// shared stop flag; runs until `stop` is set (checking it every few hundred units at most)
/// and returns how many units it did.
pub type Worker = Box<dyn Fn(usize, &AtomicBool) -> u64 + Send + Sync>;

/// Why a row could not build its shared state (no OS entropy, a bad topology...): the harness
/// reports it and goes on with the other rows.
pub type MakeError = Box<dyn std::error::Error + Send + Sync>;

/// One line of the scaling table.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// Which comparison the row belongs to, e.g. `"fast u64"` or `"crypto 4KiB"`; rows of
    /// one group are printed and plotted together.
    pub group: &'static str,
    /// The generator, e.g. `"scalrand PerCpu<Xoroshiro128++>"` or `"Mutex<ChaCha20Rng>"`.
    pub name: &'static str,
    /// True for the baselines we compare against.
    pub baseline: bool,
    /// What `Worker`'s return value counts.
    pub unit: Unit,
    /// Builds the shared state for one thread count (a fresh generator, a fresh mutex...).
    pub make: fn() -> Result<Worker, MakeError>,
}

/// Every row of every crate, in table order.
pub fn all_rows() -> Vec<Row> {
    let mut v = Vec::new();
    v.extend(rows::fastprng::rows());
    v.extend(rows::fortuna::rows());
    v.extend(rows::numa::rows());
    v
}
