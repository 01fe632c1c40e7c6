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

/// The rows of the default, quick run, by (group, name), in [`all_rows`]' order: the figures
/// a user chooses by.
/// `scalrand::fill_bytes` against what a program calls today for secure bytes (rand's
/// `ThreadRng`, the kernel's vDSO getrandom, the `getrandom` crate), the pools at rand's
/// rounds (ChaCha12) against the same, and `scalrand::fast` against `fastrand`.
pub const HEADLINE: &[(&str, &str)] = &[
    ("fast u64", "scalrand::fast::u64(..)"),
    ("fast u64", "fastrand::u64 (thread-local)"),
    ("crypto 32B", "scalrand::fill_bytes (crypto facade)"),
    (
        "crypto 32B",
        "scalrand NodePools, ChaCha12 output (with_rounds)",
    ),
    ("crypto 32B", "rand ThreadRng (rand::rng())"),
    ("crypto 32B", "getrandom::fill"),
    ("crypto 32B", "vDSO getrandom (direct, Linux >= 6.11)"),
    // Only where the CPU has AVX-512: the two scalrand rows on its AVX2 backend.
    ("crypto 32B", rows::numa::AVX2_FACADE),
    ("crypto 32B", rows::numa::AVX2_CHACHA12),
];

/// The rows a user is pointed to for their group's job (README's "Which generator?"), by
/// name: marked in the headline figure.
pub const RECOMMENDED: &[&str] = &[
    "scalrand::fast::u64(..)",
    "scalrand::fill_bytes (crypto facade)",
];

/// The baseline each headline group's scalrand rows are compared with, by (group, name): what
/// a program calls today for the group's job. The headline figure prints each bar's ratio to
/// it, and the report's first lines give each scalrand row's ratio to it.
pub const HEADLINE_BASELINES: &[(&str, &str)] = &[
    ("crypto 32B", "rand ThreadRng (rand::rng())"),
    ("fast u64", "fastrand::u64 (thread-local)"),
];

/// What the cryptographic rows run, by name: the rounds of the output keystream and whether
/// the key is erased as it goes (fast key erasure), which decide most of a row's speed. Shown
/// next to the row's figures, so that a ratio is read with what was compared.
pub const WHAT_IT_IS: &[(&str, &str)] = &[
    (
        "scalrand::fill_bytes (crypto facade)",
        "ChaCha20, fast key erasure",
    ),
    (
        "scalrand NodePools (detected topology)",
        "ChaCha20, fast key erasure",
    ),
    (
        "scalrand NodePools, ChaCha12 output (with_rounds)",
        "ChaCha12, fast key erasure",
    ),
    (
        rows::numa::AVX2_FACADE,
        "ChaCha20, fast key erasure, the AVX2 backend",
    ),
    (
        rows::numa::AVX2_CHACHA12,
        "ChaCha12, fast key erasure, the AVX2 backend",
    ),
    ("rand ThreadRng (rand::rng())", "ChaCha12, no key erasure"),
    ("Mutex<ChaCha20Rng>", "ChaCha20, no key erasure"),
    ("getrandom::fill", "the kernel's ChaCha20, a system call"),
    (
        "vDSO getrandom (direct, Linux >= 6.11)",
        "the kernel's ChaCha20, in user space",
    ),
];

/// What the row `name` runs ([`WHAT_IT_IS`]), where it is one of those rows.
pub fn what_it_is(name: &str) -> Option<&'static str> {
    WHAT_IT_IS.iter().find(|(n, _)| *n == name).map(|(_, w)| *w)
}

/// The baseline of the headline group `group` ([`HEADLINE_BASELINES`]).
pub fn headline_baseline(group: &str) -> Option<&'static str> {
    HEADLINE_BASELINES
        .iter()
        .find(|(g, _)| *g == group)
        .map(|(_, b)| *b)
}

/// Whether `row` is one of the [`HEADLINE`] rows.
pub fn is_headline(row: &Row) -> bool {
    HEADLINE.contains(&(row.group, row.name))
}

/// Whether `row` is one of the [`RECOMMENDED`] rows.
pub fn is_recommended(row: &Row) -> bool {
    RECOMMENDED.contains(&row.name)
}

/// Every row of every crate, in table order.
pub fn all_rows() -> Vec<Row> {
    let mut v = Vec::new();
    v.extend(rows::fastprng::rows());
    v.extend(rows::fortuna::rows());
    v.extend(rows::numa::rows());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `args::ROWS`, which xtask checks `--filter` against before it builds the harness, is
    /// every row by (group, name), in table order (the vDSO rows on Linux only).
    #[test]
    fn rows_are_the_args_list() {
        let built: Vec<(&str, &str)> = all_rows().iter().map(|r| (r.group, r.name)).collect();
        let listed: Vec<(&str, &str)> = args::ROWS
            .iter()
            .copied()
            .filter(|(_, n)| cfg!(target_os = "linux") || !n.starts_with("vDSO"))
            .collect();
        assert_eq!(built, listed);
    }

    /// Every headline and recommended name is a row (on Linux, where the vDSO row exists).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_headline_rows_exist() {
        let rows = all_rows();
        for (group, name) in HEADLINE {
            assert!(
                rows.iter().any(|r| r.group == *group && r.name == *name),
                "{group} / {name} is not a row"
            );
        }
        for name in RECOMMENDED {
            assert!(rows.iter().any(|r| r.name == *name && is_headline(r)));
        }
        assert_eq!(
            rows.iter().filter(|r| is_headline(r)).count(),
            HEADLINE.len()
        );
        // Each headline group's baseline is a headline baseline row, and every
        // cryptographic headline row says what it runs.
        for (group, base) in HEADLINE_BASELINES {
            assert!(HEADLINE.contains(&(*group, *base)), "{group} / {base}");
            assert!(rows.iter().any(|r| r.name == *base && r.baseline));
        }
        for (group, name) in HEADLINE {
            if group.starts_with("crypto") {
                assert!(
                    what_it_is(name).is_some(),
                    "{name} does not say what it runs"
                );
            }
        }
    }
}
