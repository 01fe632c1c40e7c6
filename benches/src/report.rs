//! What one run of the scaling harness measured, and its markdown tables.
//!
//! [`Report`] is the data: serde writes it as `scaling.json` (and `scaling --json` prints it),
//! and reads it back with `scaling --from FILE` to redraw the tables and plots without
//! measuring again. Later fields get `#[serde(default)]` so older files still load.
//!
//! The markdown is built from [`Table`]s: a table is a header and rows of cells, so a new
//! column is one more header and one more cell per row in [`group_table`].

use serde::{Deserialize, Serialize};

use crate::Unit;

/// One run of the harness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// CPUs the machine offered (`available_parallelism`).
    pub cpus: usize,
    /// The CPU model (`/proc/cpuinfo`), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// Thread counts measured, in order.
    pub threads: Vec<usize>,
    /// Length of one measurement, in milliseconds.
    pub duration_ms: u64,
    /// Measurements per point; the median is reported.
    pub repeat: usize,
    /// The groups, in table order.
    pub groups: Vec<Group>,
}

/// Rows compared together: one table, one plot panel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The group's name, e.g. `"fast u64"`.
    pub name: String,
    /// What the figures count.
    pub unit: Unit,
    /// The rows of the group, in table order.
    pub series: Vec<Series>,
}

/// One row measured at every thread count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// The generator, e.g. `"Mutex<ChaCha20Rng>"`.
    pub name: String,
    /// True for the baselines we compare against.
    pub baseline: bool,
    /// One point per thread count, in the report's thread order.
    pub points: Vec<Point>,
}

/// One measured point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Threads running at once.
    pub threads: usize,
    /// Aggregate units per second over all threads (median of the runs).
    pub per_sec: f64,
}

impl Series {
    /// The figure at the largest thread count measured (`None` when nothing was measured).
    pub fn last(&self) -> Option<f64> {
        self.points.last().map(|p| p.per_sec)
    }

    /// Largest thread count over one thread: how the row scales.
    pub fn scaling(&self) -> Option<f64> {
        Some(self.last()? / self.points.first()?.per_sec)
    }
}

/// A throughput in the unit's usual form: `M/s` for calls, `MB/s` for bytes.
pub fn human(per_sec: f64, unit: Unit) -> String {
    match unit {
        Unit::Ops => format!("{:.1} M/s", per_sec / 1e6),
        Unit::Bytes => format!("{:.0} MB/s", per_sec / 1e6),
    }
}

/// A markdown table: header cells, then rows of cells; the first column is left-aligned and
/// the others right-aligned (they hold figures).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Header cells.
    pub header: Vec<String>,
    /// Body rows, each as long as the header.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The table as GitHub-flavoured markdown, ending in a newline.
    pub fn markdown(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut s = line(&self.header);
        let sep: Vec<&str> = (0..self.header.len())
            .map(|i| if i == 0 { "---" } else { "---:" })
            .collect();
        s.push_str(&format!("|{}|\n", sep.join("|")));
        for r in &self.rows {
            s.push_str(&line(r));
        }
        s
    }
}

/// The table of one group: a row per series, a column per thread count, then the scaling
/// from one thread to the most.
pub fn group_table(report: &Report, group: &Group) -> Table {
    let maxt = report.threads.iter().copied().max().unwrap_or(1);
    let mut header = vec!["generator".to_owned()];
    header.extend(report.threads.iter().map(|t| format!("{t} thr")));
    header.push(format!("{maxt}/1 thr"));
    let rows = group
        .series
        .iter()
        .map(|s| {
            let mut cells = vec![format!(
                "{}{}",
                s.name,
                if s.baseline { " *(baseline)*" } else { "" }
            )];
            cells.extend(s.points.iter().map(|p| human(p.per_sec, group.unit)));
            cells.push(format!("{:.2}x", s.scaling().unwrap_or(1.0)));
            cells
        })
        .collect();
    Table { header, rows }
}

impl Report {
    /// Every group as a markdown section: its table, then the ratio of every scalrand row to
    /// every baseline at the largest thread count.
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "Measured by `cargo xtask scaling` on {} CPUs ({} ms x {} runs, median).\n\n",
            self.cpus, self.duration_ms, self.repeat
        );
        let maxt = self.threads.iter().copied().max().unwrap_or(1);
        for g in &self.groups {
            md.push_str(&format!("### {}\n\n", g.name));
            md.push_str(&group_table(self, g).markdown());
            let ours: Vec<&Series> = g.series.iter().filter(|s| !s.baseline).collect();
            let base: Vec<&Series> = g.series.iter().filter(|s| s.baseline).collect();
            if !ours.is_empty() && !base.is_empty() {
                md.push_str(&format!(
                    "\nRatios at {maxt} threads (ours / baseline):\n\n"
                ));
                for o in &ours {
                    let ov = o.last().unwrap_or(0.0);
                    let parts: Vec<String> = base
                        .iter()
                        .map(|b| format!("{:.2}x {}", ov / b.last().unwrap_or(f64::NAN), b.name))
                        .collect();
                    md.push_str(&format!("- {}: {}\n", o.name, parts.join(", ")));
                }
            }
            md.push('\n');
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        let series = |name: &str, baseline, a, b| Series {
            name: name.to_owned(),
            baseline,
            points: vec![
                Point {
                    threads: 1,
                    per_sec: a,
                },
                Point {
                    threads: 2,
                    per_sec: b,
                },
            ],
        };
        Report {
            cpus: 2,
            cpu_model: None,
            threads: vec![1, 2],
            duration_ms: 400,
            repeat: 5,
            groups: vec![Group {
                name: "fast u64".to_owned(),
                unit: Unit::Ops,
                series: vec![
                    series("ours", false, 100e6, 200e6),
                    series("Mutex", true, 50e6, 10e6),
                ],
            }],
        }
    }

    #[test]
    fn markdown_has_the_table_and_the_ratios() {
        let md = report().markdown();
        assert!(md.starts_with("Measured by `cargo xtask scaling` on 2 CPUs (400 ms x 5 runs"));
        assert!(md.contains("| generator | 1 thr | 2 thr | 2/1 thr |\n|---|---:|---:|---:|\n"));
        assert!(md.contains("| ours | 100.0 M/s | 200.0 M/s | 2.00x |"));
        assert!(md.contains("| Mutex *(baseline)* | 50.0 M/s | 10.0 M/s | 0.20x |"));
        assert!(md.contains("- ours: 20.00x Mutex"));
    }

    #[test]
    fn json_round_trips() {
        let r = report();
        let json = serde_json::to_string_pretty(&r).unwrap();
        assert!(json.contains("\"unit\": \"ops\""));
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
