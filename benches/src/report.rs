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
    /// The ChaCha keystream backend the node pools and `scalrand::fill_bytes` ran on
    /// (`scalrand_pool::chacha::backend()`, e.g. `Avx512`), where recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Length of one measurement, in milliseconds.
    pub duration_ms: u64,
    /// Measurements per point; the median is reported. In a run with
    /// [`processes`](Report::processes), each came from a process of its own.
    pub repeat: usize,
    /// Whether every repeat ran in a separate process, the order of the rows reversed in every
    /// other one, with each ratio taken inside one process; absent (false) in reports from
    /// before, whose repeats were rounds inside one process.
    #[serde(default)]
    pub processes: bool,
    /// Whether this was a `--full` run (every row at every thread count) rather than the quick
    /// headline run.
    #[serde(default)]
    pub full: bool,
    /// Whether worker `i` ran pinned to CPU `i` (`--pin`); absent in reports from before the
    /// option, which were not pinned.
    #[serde(default)]
    pub pinned: bool,
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
    /// Every scalrand row over every baseline at every thread count, each ratio taken inside
    /// one process; absent in reports from before, whose ratios were of the medians.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ratios: Vec<Ratio>,
}

impl Group {
    /// The ratio of the row `ours` to the row `baseline` at `threads`: the median of the
    /// ratios inside each process, with their spread, where the run kept them; else the ratio
    /// of the two medians. `None` where either row or point is missing.
    pub fn ratio_to(
        &self,
        ours: &str,
        baseline: &str,
        threads: usize,
    ) -> Option<(f64, Option<Spread>)> {
        if let Some(r) = self
            .ratios
            .iter()
            .find(|r| r.threads == threads && r.ours == ours && r.baseline == baseline)
        {
            return Some((r.spread.median, Some(r.spread)));
        }
        let at = |name: &str| {
            self.series
                .iter()
                .find(|s| s.name == name)?
                .points
                .iter()
                .find(|p| p.threads == threads)
                .map(|p| p.per_sec)
        };
        let r = at(ours)? / at(baseline)?;
        r.is_finite().then_some((r, None))
    }
}

/// One scalrand row over one baseline at one thread count, over the processes of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// The scalrand row's name.
    pub ours: String,
    /// The baseline's name.
    pub baseline: String,
    /// Threads running at once.
    pub threads: usize,
    /// The ratio's median and spread over the processes.
    pub spread: Spread,
    /// The ratio in each process, in process order.
    pub runs: Vec<f64>,
}

/// The median and spread of figures over processes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The median (the mean of the middle two of an even count).
    pub median: f64,
    /// The first quartile (linear interpolation between order statistics).
    pub q1: f64,
    /// The third quartile.
    pub q3: f64,
    /// The smallest figure.
    pub min: f64,
    /// The largest figure.
    pub max: f64,
    /// How many figures.
    pub n: usize,
}

impl Spread {
    /// The spread of the finite figures of `v`; `None` when there is none.
    pub fn of(v: &[f64]) -> Option<Self> {
        let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let at = |q: f64| {
            let pos = q * (v.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
        };
        Some(Self {
            median: at(0.5),
            q1: at(0.25),
            q3: at(0.75),
            min: v[0],
            max: v[v.len() - 1],
            n: v.len(),
        })
    }
}

/// One row measured at every thread count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// The generator, e.g. `"Mutex<ChaCha20Rng>"`.
    pub name: String,
    /// True for the baselines we compare against.
    pub baseline: bool,
    /// True for the row a user is pointed to for the group's job (`scalrand::fill_bytes`,
    /// `scalrand::fast`): marked in the headline figure.
    #[serde(default)]
    pub recommended: bool,
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
    /// The median and spread over the processes, where the run kept them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
}

impl Series {
    /// The series with only its points at `cpus` threads or fewer (the ones Amdahl's fit
    /// reads: beyond the CPU count the threads time-share them).
    pub fn up_to(&self, cpus: usize) -> Series {
        let mut s = self.clone();
        s.points.retain(|p| p.threads <= cpus.max(1));
        s
    }

    /// The figure at the largest thread count measured (`None` when nothing was measured).
    pub fn last(&self) -> Option<f64> {
        self.points.last().map(|p| p.per_sec)
    }

    /// Largest thread count over one thread: how the row scales.
    pub fn scaling(&self) -> Option<f64> {
        Some(self.last()? / self.points.first()?.per_sec)
    }

    /// The serialized fraction `s` of one operation (time under a lock or on a contended
    /// line) that Amdahl's law, `speedup(n) = 1 / (s + (1 - s) / n)`, fits to the speedup
    /// measured from one thread to the most: `s = (n / speedup - 1) / (n - 1)`, clamped to
    /// `[0, 1]` (a row that gets slower with threads, as a contended mutex does, is at 1:
    /// nothing of it runs in parallel). `None` with fewer than two thread counts.
    pub fn serial_fraction(&self) -> Option<f64> {
        let first = self.points.first()?;
        let last = self.points.last()?;
        if first.threads != 1 || last.threads < 2 {
            return None;
        }
        let n = last.threads as f64;
        let speedup = last.per_sec / first.per_sec;
        Some(((n / speedup - 1.0) / (n - 1.0)).clamp(0.0, 1.0))
    }

    /// The throughput Amdahl's law allows at `cpus` CPUs given [`serial_fraction`]: one
    /// thread's throughput times `1 / (s + (1 - s) / cpus)`. A bound from two points on a
    /// small machine, not a measurement: per-CPU rows fit `s` near 0 (noise), lock-bound rows
    /// near 1.
    ///
    /// [`serial_fraction`]: Series::serial_fraction
    pub fn amdahl_bound(&self, cpus: usize) -> Option<f64> {
        let s = self.serial_fraction()?;
        let one = self.points.first()?.per_sec;
        Some(one / (s + (1.0 - s) / cpus as f64))
    }
}

/// The CPU counts the Amdahl columns extrapolate to.
pub const AMDAHL_CPUS: [usize; 3] = [16, 64, 256];

/// A throughput in the unit's usual form: `M/s` for calls, `MB/s` for bytes.
pub fn human(per_sec: f64, unit: Unit) -> String {
    match unit {
        Unit::Ops => format!("{:.1} M/s", per_sec / 1e6),
        Unit::Bytes => format!("{:.0} MB/s", per_sec / 1e6),
    }
}

/// A throughput in [`human`]'s scale without the unit: `1534`, `12.5`.
fn bare(per_sec: f64, unit: Unit) -> String {
    match unit {
        Unit::Ops => format!("{:.1}", per_sec / 1e6),
        Unit::Bytes => format!("{:.0}", per_sec / 1e6),
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
    header.extend(report.threads.iter().map(|&t| {
        if t > report.cpus {
            format!("{t} thr ({}× CPUs, oversubscribed)", t / report.cpus.max(1))
        } else {
            format!("{t} thr")
        }
    }));
    header.push(format!("{maxt}/1 thr"));
    header.push("serial s".to_owned());
    header.extend(AMDAHL_CPUS.iter().map(|c| format!("bound {c} CPUs")));
    let rows = group
        .series
        .iter()
        .map(|s| {
            let mut cells = vec![format!(
                "{}{}",
                s.name,
                if s.baseline { " *(baseline)*" } else { "" }
            )];
            cells.extend(s.points.iter().map(|p| match p.spread {
                Some(sp) if sp.n > 1 => format!(
                    "{} ({}–{})",
                    human(p.per_sec, group.unit),
                    bare(sp.q1, group.unit),
                    bare(sp.q3, group.unit)
                ),
                _ => human(p.per_sec, group.unit),
            }));
            cells.push(format!("{:.2}x", s.scaling().unwrap_or(1.0)));
            // Amdahl's fit from one thread to all CPUs: oversubscribed points time-share the
            // CPUs and say nothing about how a row would scale on more of them.
            let fit = s.up_to(report.cpus);
            cells.push(
                fit.serial_fraction()
                    .map_or_else(|| "-".to_owned(), |f| format!("{f:.3}")),
            );
            cells.extend(AMDAHL_CPUS.iter().map(|&c| {
                fit.amdahl_bound(c)
                    .map_or_else(|| "-".to_owned(), |b| human(b, group.unit))
            }));
            cells
        })
        .collect();
    Table { header, rows }
}

/// How to read the tables' columns (the markdown's second paragraph).
pub const COLUMNS_EXPLAINED: &str = "\
Columns: `N thr` is the aggregate throughput of N threads at once (median of the runs; in \
brackets, where the run kept them, the interquartile range over its processes); \
`M/1 thr` is the most threads' throughput over one thread's. `serial s` is the fraction of \
one call that Amdahl's law, speedup(n) = 1 / (s + (1 - s) / n), fits to those two points: \
near 0 for a row that scales (per-CPU or per-thread state), near 1 for one that does not \
(a lock). `bound N CPUs` is one thread's throughput times 1 / (s + (1 - s) / N): what that \
fit allows on a machine with N CPUs. The bounds are extrapolations from two points, not \
measurements, and a single noisy point moves them a lot.";

/// The share of the ideal speedup below which a group whose best row scaled no better is
/// reported as measured on a busy machine (per-thread baselines reach 0.93-1.0 of it on an
/// idle one).
pub const DISTURBED_BELOW: f64 = 0.85;

/// `ours / base` as `1.23x`, or `n/a` where either figure is missing or zero.
fn ratio(ours: f64, base: f64) -> String {
    let r = ours / base;
    if r.is_finite() && base > 0.0 {
        format!("{r:.2}x")
    } else {
        "n/a".to_owned()
    }
}

impl Report {
    /// The headline comparisons, one line per headline scalrand row: its ratio to its group's
    /// baseline ([`HEADLINE_BASELINES`](crate::HEADLINE_BASELINES)) at every thread count,
    /// each side named with what it runs ([`WHAT_IT_IS`](crate::WHAT_IT_IS): rounds, key
    /// erasure), so that ChaCha20 with key erasure against ChaCha12 without is read as such,
    /// and the pools at ChaCha12 give the same-rounds answer beside it.
    pub fn headline_lines(&self) -> Vec<String> {
        let named = |name: &str| match crate::what_it_is(name) {
            Some(w) => format!("{name} [{w}]"),
            None => name.to_owned(),
        };
        let mut out = Vec::new();
        for g in &self.groups {
            let Some(base) = crate::headline_baseline(&g.name) else {
                continue;
            };
            if !g.series.iter().any(|s| s.name == base) {
                continue;
            }
            for s in g.series.iter().filter(|s| {
                !s.baseline && crate::HEADLINE.contains(&(g.name.as_str(), s.name.as_str()))
            }) {
                let at: Vec<String> = self
                    .threads
                    .iter()
                    .filter_map(|&t| {
                        let (r, spread) = g.ratio_to(&s.name, base, t)?;
                        let iqr = spread
                            .filter(|sp| sp.n > 1)
                            .map_or_else(String::new, |sp| format!(" ({:.2}–{:.2})", sp.q1, sp.q3));
                        Some(format!(
                            "{r:.2}x{iqr} at {t} thread{}",
                            if t == 1 { "" } else { "s" }
                        ))
                    })
                    .collect();
                if !at.is_empty() {
                    out.push(format!(
                        "{} / {}: {}",
                        named(&s.name),
                        named(base),
                        at.join(", ")
                    ));
                }
            }
        }
        out
    }

    /// Reasons to distrust this run's serial and bound columns, or its figures, in words:
    /// more threads than CPUs, a fit from only two thread counts, and groups in which no row
    /// scaled near the ideal (a busy or throttled machine).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let maxt = self.threads.iter().copied().max().unwrap_or(1);
        if maxt <= 1 {
            return out;
        }
        if maxt > self.cpus {
            out.push(format!(
                "{maxt} threads on {} CPUs: beyond {} threads the workers time-share the CPUs \
                 (oversubscribed), so no row scales there; the serial and bound columns fit the \
                 points up to {} threads.",
                self.cpus, self.cpus, self.cpus
            ));
        }
        if self.threads.len() <= 2 {
            out.push(format!(
                "The serial and bound columns come from two points (1 and {maxt} threads): read \
                 them as a sketch, and measure more thread counts on a larger machine before \
                 quoting a bound."
            ));
        }
        let ideal = maxt.min(self.cpus);
        if ideal >= 2 {
            for g in &self.groups {
                let best = g
                    .series
                    .iter()
                    .filter_map(|s| {
                        let one = s.points.iter().find(|p| p.threads == 1)?.per_sec;
                        let at = s.points.iter().find(|p| p.threads == ideal)?.per_sec;
                        Some(at / one).filter(|r| r.is_finite())
                    })
                    .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
                if let Some(best) = best
                    && best < DISTURBED_BELOW * ideal as f64
                {
                    out.push(format!(
                        "{}: no row scaled above {best:.2}x from 1 to {ideal} threads, where \
                         per-thread rows reach about {ideal}x on an idle machine: the run looks \
                         disturbed (other load, throttling); rerun, with --pin, before quoting \
                         this group.",
                        g.name
                    ));
                }
            }
        }
        out
    }

    /// Every group as a markdown section: its table, then the ratio of every scalrand row to
    /// every baseline at one thread and at the largest thread count; the columns explained
    /// and any [`warnings`](Report::warnings) first.
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "Measured by `cargo xtask scaling{}` on {} CPUs{}{} ({} ms x {} {}, median{}).\n\n",
            if self.full { " --full" } else { "" },
            self.cpus,
            self.cpu_model
                .as_ref()
                .map_or_else(String::new, |m| format!(", {m}")),
            self.backend
                .as_ref()
                .map_or_else(String::new, |b| format!(", ChaCha backend {b}")),
            self.duration_ms,
            self.repeat,
            if self.processes {
                "alternated processes"
            } else {
                "runs"
            },
            if self.pinned {
                "; worker i pinned to CPU i"
            } else {
                ""
            }
        );
        let headline = self.headline_lines();
        if !headline.is_empty() {
            md.push_str(
                "**Against what programs call today** (ours / baseline, each named with its \
                 rounds and key erasure where it is a cipher; median of the ratios inside each \
                 process, interquartile range in brackets where the run kept it):\n\n",
            );
            for l in &headline {
                md.push_str(&format!("- {l}\n"));
            }
            md.push('\n');
        }
        md.push_str(COLUMNS_EXPLAINED);
        md.push_str("\n\n");
        let warnings = self.warnings();
        if !warnings.is_empty() {
            md.push_str("**Warnings:**\n\n");
            for w in &warnings {
                md.push_str(&format!("- {w}\n"));
            }
            md.push('\n');
        }
        let maxt = self.threads.iter().copied().max().unwrap_or(1);
        for g in &self.groups {
            md.push_str(&format!("### {}\n\n", g.name));
            md.push_str(&group_table(self, g).markdown());
            let ours: Vec<&Series> = g.series.iter().filter(|s| !s.baseline).collect();
            let base: Vec<&Series> = g.series.iter().filter(|s| s.baseline).collect();
            if !ours.is_empty() && !base.is_empty() {
                let mut counts = vec![1];
                if maxt > 1 {
                    counts.push(maxt);
                }
                for t in counts {
                    let at = |s: &Series| {
                        s.points
                            .iter()
                            .find(|p| p.threads == t)
                            .map_or(f64::NAN, |p| p.per_sec)
                    };
                    let per_process = g.ratios.iter().any(|r| r.threads == t);
                    md.push_str(&format!(
                        "\nRatios at {t} thread{} (ours / baseline{}):\n\n",
                        if t == 1 { "" } else { "s" },
                        if per_process {
                            "; median of the ratios inside each process, interquartile range \
                             and min–max in brackets"
                        } else {
                            ""
                        }
                    ));
                    for o in &ours {
                        let parts: Vec<String> = base
                            .iter()
                            .map(|b| {
                                let found = g.ratios.iter().find(|r| {
                                    r.threads == t && r.ours == o.name && r.baseline == b.name
                                });
                                match found {
                                    Some(r) => format!(
                                        "{} ({:.2}–{:.2}, {:.2}–{:.2}) {}",
                                        ratio(r.spread.median, 1.0),
                                        r.spread.q1,
                                        r.spread.q3,
                                        r.spread.min,
                                        r.spread.max,
                                        b.name
                                    ),
                                    None => format!("{} {}", ratio(at(o), at(b)), b.name),
                                }
                            })
                            .collect();
                        md.push_str(&format!("- {}: {}\n", o.name, parts.join(", ")));
                    }
                }
            }
            md.push('\n');
        }
        md
    }
}

#[cfg(test)]
mod tests;
