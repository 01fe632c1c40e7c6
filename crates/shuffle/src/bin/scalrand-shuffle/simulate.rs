//! `simulate`: the experiment configuration from flags and presets, the run, its `--json` report and table.

use std::string::{String, ToString};
use std::{format, println};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::presets::{self, default_aging, heap_for};
use scalrand_shuffle::server::ServerSpec;
use scalrand_shuffle::workload::{StreamSpec, TwoInstanceSpec};
use scalrand_shuffle::{
    CacheMode, Curve, ExperimentConfig, ExperimentResult, PAGE_SIZE, ShuffleMode, Workload,
    run_experiment, run_experiment_parallel,
};

use crate::CliError;
use crate::args::{AgingArg, CacheModeArg, ModeArg, SimulateArgs, WorkloadArg};
use crate::estimate::Estimate;
use crate::jobs::run_seeds;
use crate::plots::write_plots;
use crate::report::{mode_name, report, workload_name};

pub(crate) fn build_config(a: &SimulateArgs) -> Result<ExperimentConfig, CliError> {
    let mut cfg = match &a.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError(format!("--config {}: {e}", path.display())))?;
            serde_json::from_str(&text)
                .map_err(|e| CliError(format!("--config {}: {e}", path.display())))?
        }
        None => presets::preset(&a.preset)?,
    };
    if let Some(v) = a.cache_mib {
        cfg.cache_bytes = v;
    }
    if let Some(v) = a.cache_bytes {
        cfg.cache_bytes = v;
    }
    if let Some(v) = a.zone_mib {
        if v % PAGE_SIZE != 0 {
            return Err(CliError(format!(
                "--zone-mib: a zone of {v} bytes is not a whole number of {PAGE_SIZE}-byte \
                 pages; give a multiple of 4 KiB, like 512MiB"
            )));
        }
        cfg.zone_pages = v / PAGE_SIZE;
        cfg.aging = default_aging(cfg.zone_pages);
        if cfg.server.is_some() {
            cfg.server = Some(ServerSpec::for_zone(cfg.zone_pages));
        }
    }
    if let Some(m) = a.cache_mode {
        cfg.cache_mode = match m {
            CacheModeArg::Page => CacheMode::PageColour,
            CacheModeArg::Line => CacheMode::Line,
        };
    }
    if let Some(o) = a.order {
        cfg.shuffle_order = o;
    }
    if let Some(m) = a.mode {
        cfg.shuffle_mode = match m {
            ModeArg::Kernel => ShuffleMode::Kernel,
            ModeArg::FisherYates => ShuffleMode::FisherYates,
        };
    }
    if a.no_pick_tail {
        cfg.pick_tail = false;
    }
    if let Some(k) = a.kernel {
        cfg.kernel = k;
    }
    if let Some(g) = a.aging {
        cfg.server = match g {
            AgingArg::Server => Some(ServerSpec::for_zone(cfg.zone_pages)),
            AgingArg::Synthetic => None,
        };
        cfg.pcp = cfg.server.is_some();
    }
    if a.no_pcp {
        cfg.pcp = false;
    }
    if let Some(n) = a.compact_every {
        match cfg.server.as_mut() {
            Some(sp) => sp.compact_every = Some(n),
            None => {
                return Err(CliError(
                    "--compact-every needs the server aging (--aging server)".to_string(),
                ));
            }
        }
    }
    if let Some(r) = a.rounds {
        cfg.aging_rounds = r;
    }
    if let Some(s) = &a.seeds {
        cfg.seeds = s.clone();
    }
    // A seed given twice, in `--seeds` or else in the `--config` file.
    if let Some(seed) = crate::args::repeated_seed(&cfg.seeds) {
        let source = match &a.config {
            Some(path) if a.seeds.is_none() => format!("--config {}", path.display()),
            _ => "--seeds".to_string(),
        };
        return Err(CliError(format!(
            "{source}: seed {seed} is given twice; each seed is one run, so give each once"
        )));
    }
    // No aging round: only a `--config` file can ask for it (`--rounds` takes 1 or more).
    if cfg.aging_rounds == 0 {
        let source = match &a.config {
            Some(path) => format!("--config {}", path.display()),
            None => format!("--preset {}", a.preset),
        };
        return Err(CliError(format!(
            "{source}: aging_rounds must be at least 1 (the first run after boot comes before \
             the rounds; the aged figures are the last round's)"
        )));
    }
    let cache_pages = cfg.cache_bytes / PAGE_SIZE;
    let acc = a.accesses.unwrap_or(match &cfg.workload {
        Workload::Heap(h) => h.accesses,
        Workload::TwoInstance(t) => t.accesses,
        Workload::Stream(_) => 1 << 20,
    });
    let kind = a.workload.unwrap_or(match cfg.workload {
        Workload::Heap(_) => WorkloadArg::Heap,
        Workload::Stream(_) => WorkloadArg::Stream,
        Workload::TwoInstance(_) => WorkloadArg::TwoInstance,
    });
    if kind == WorkloadArg::Stream && a.accesses.is_some() {
        return Err(CliError(
            "--accesses does not apply to the stream workload, which sweeps its arrays 4 \
             times: leave it out, or pick --workload heap or two-instance"
                .to_string(),
        ));
    }
    // The workload follows the cache size (a config file's workload is kept unless a size,
    // the workload or the accesses were given).
    if resizes_workload(a) {
        cfg.workload = match kind {
            WorkloadArg::Heap => Workload::Heap(heap_for(cache_pages, acc)),
            WorkloadArg::Stream => Workload::Stream(StreamSpec {
                array_pages: cache_pages / 2,
                sweeps: 4,
            }),
            WorkloadArg::TwoInstance => Workload::TwoInstance(TwoInstanceSpec {
                pages: cache_pages / 2,
                accesses: acc,
                warmup: acc / 4,
            }),
        };
    }
    Ok(cfg)
}

/// Whether the workload is sized from the flags (always, unless a `--config` file's workload
/// is kept: no size, workload or accesses given).
fn resizes_workload(a: &SimulateArgs) -> bool {
    a.config.is_none()
        || a.workload.is_some()
        || a.accesses.is_some()
        || a.cache_mib.is_some()
        || a.cache_bytes.is_some()
}

pub(crate) fn simulate(a: SimulateArgs) -> Result<(), CliError> {
    let cfg = build_config(&a)?;
    if a.dump_config {
        let text = serde_json::to_string_pretty(&cfg).map_err(|e| CliError(e.to_string()))?;
        println!("{text}");
        return Ok(());
    }
    cfg.validate().map_err(|e| name_the_flag(&a, e))?;
    check_outputs(&[("--svg", &a.svg), ("--png", &a.png)])?;
    check_sizes(&a, &cfg)?;
    estimate(&cfg, a.jobs).check(a.force, a.quiet)?;
    let total = 2 * cfg.seeds.len() as u64 * (u64::from(cfg.aging_rounds) + 1);
    // indicatif's stderr target draws nothing when stderr is not a terminal.
    let target = if a.quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} measurements, {elapsed} (eta {eta})")
    {
        bar.set_style(style);
    }
    let res = run_seeds(
        a.jobs,
        &|done| bar.set_position(done),
        |p| run_experiment::<Xoroshiro128PlusPlus>(&cfg, p),
        |p| run_experiment_parallel::<Xoroshiro128PlusPlus>(&cfg, p),
    );
    bar.finish_and_clear();
    let res = res?.map_err(|e| name_the_flag(&a, e))?;
    let preset = if a.config.is_some() {
        "config"
    } else {
        a.preset.as_str()
    };
    let rep = report(preset, &cfg, &res);
    write_plots(&rep, &res, a.svg.as_deref(), a.png.as_deref())?;
    if a.json {
        let text = serde_json::to_string(&rep).map_err(|e| CliError(e.to_string()))?;
        println!("{text}");
    } else {
        print_table(preset, &cfg, &res);
        for p in [&a.svg, &a.png].into_iter().flatten() {
            println!("plot written to {}", p.display());
        }
    }
    Ok(())
}

/// Refuses an output path whose directory does not exist, or that is a directory, before any
/// work starts.
pub(crate) fn check_outputs(paths: &[(&str, &Option<std::path::PathBuf>)]) -> Result<(), CliError> {
    for (flag, p) in paths {
        let Some(p) = p else { continue };
        if p.is_dir() {
            return Err(CliError(format!("{flag} {}: is a directory", p.display())));
        }
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        if !dir.is_dir() {
            return Err(CliError(format!(
                "{flag} {}: directory {} does not exist",
                p.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Cost of one work unit (see [`estimate`]), nanoseconds of one core in a release build (the
/// runs it comes from are in BENCHMARKS.md).
const NS_PER_UNIT: f64 = 30.0;

/// The most work units `simulate` runs without `--force`: 80 × the default `server`
/// experiment, about 8 CPU-hours.
pub(crate) const CAP_UNITS: u64 = 1_000_000_000_000;

/// What the run is about to cost. A work unit is one access measured; a page of the zone aged
/// and measured counts 8 (the server aging's page operations per page). Every measurement
/// (both policies, every round and the first run, every seed) ages the zone once and runs the
/// workload once.
pub(crate) fn estimate(cfg: &ExperimentConfig, jobs: Option<usize>) -> Estimate {
    let measurements = 2u64
        .saturating_mul(cfg.seeds.len() as u64)
        .saturating_mul(u64::from(cfg.aging_rounds).saturating_add(1));
    let accesses = match &cfg.workload {
        Workload::Heap(h) => h.accesses.saturating_add(h.warmup),
        Workload::TwoInstance(t) => t.accesses.saturating_add(t.warmup),
        Workload::Stream(st) => {
            let per_page = match cfg.cache_mode {
                CacheMode::Line => PAGE_SIZE / 64,
                CacheMode::PageColour => 1,
            };
            st.array_pages
                .saturating_mul(u64::from(st.sweeps).saturating_add(1))
                .saturating_mul(per_page)
        }
    };
    let per_measurement = cfg.zone_pages.saturating_mul(8).saturating_add(accesses);
    let cores = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    Estimate {
        unit: "work units",
        units: measurements.saturating_mul(per_measurement),
        ns_per_unit: NS_PER_UNIT,
        threads: cores.min(cfg.seeds.len()).max(1),
        memory: cfg.memory_estimate(),
        cap: CAP_UNITS,
        sized_by: "--zone-mib, --rounds, --seeds, --accesses",
    }
}

/// The configuration's refusal of a size, with the flag that set it in front (`--zone-mib`,
/// `--cache-mib`, `--cache-bytes`) and what to give instead: a zone of no page or above the
/// model's limit, a cache of zero bytes or not a whole number of its units. Other refusals
/// name the `--config` file when there is one (the flags and presets cannot make them).
fn name_the_flag(a: &SimulateArgs, e: scalrand_shuffle::Error) -> CliError {
    use scalrand_shuffle::Error;
    let human = crate::estimate::human;
    let cache = match (a.cache_mib, a.cache_bytes) {
        (Some(v), _) => Some(("--cache-mib", v)),
        (None, Some(v)) => Some(("--cache-bytes", v)),
        (None, None) => None,
    };
    match (&e, a.zone_mib, cache) {
        (Error::EmptyZone, Some(v), _) => CliError(format!(
            "--zone-mib: a zone of {v} bytes holds no {PAGE_SIZE}-byte page; give a size \
             like 1GiB"
        )),
        (Error::ZoneTooLarge { .. }, Some(v), _) => CliError(format!(
            "--zone-mib: a zone of {}: {e} ({}); give a smaller size",
            human(v),
            human(scalrand_shuffle::MAX_SPANNED_PAGES.saturating_mul(PAGE_SIZE))
        )),
        (Error::ZeroCacheSize | Error::CacheSizeNotMultiple { .. }, _, Some((flag, v))) => {
            CliError(format!(
                "{flag}: a cache of {v} bytes: {e}; give a size like --cache-mib 512MiB"
            ))
        }
        _ => match &a.config {
            Some(path) => CliError(format!("--config {}: {e}", path.display())),
            None => CliError(e.to_string()),
        },
    }
}

/// Refuses sizes that cannot make a run, naming the flag that set them: a cache at least as
/// large as the zone (`--cache-mib 64GiB` on a 64 GiB zone, `--zone-mib 1` under a 4 MiB
/// cache), and a heap or stream arrays, which the workload sizes from the cache, that do not
/// fit in the zone. The cache's flag is named when both were given; sizes that came from the
/// preset are consistent, and those of a `--config` file name the file.
fn check_sizes(a: &SimulateArgs, cfg: &ExperimentConfig) -> Result<(), CliError> {
    let human = crate::estimate::human;
    let zone = cfg.zone_pages.saturating_mul(PAGE_SIZE);
    let cache_flag = if a.cache_mib.is_some() {
        Some("--cache-mib")
    } else if a.cache_bytes.is_some() {
        Some("--cache-bytes")
    } else {
        None
    };
    let from = if a.config.is_some() {
        "the --config file's"
    } else {
        "the preset's"
    };
    let zone_from = if a.zone_mib.is_some() {
        "--zone-mib".to_string()
    } else {
        format!("{from} zone")
    };
    let flag = match (cache_flag, a.zone_mib, &a.config) {
        (Some(flag), _, _) => flag.to_string(),
        (None, Some(_), _) => "--zone-mib".to_string(),
        (None, None, Some(path)) => format!("--config {}", path.display()),
        (None, None, None) => return Ok(()),
    };
    let fix = "give a smaller cache, e.g. --cache-mib 512MiB, or a larger --zone-mib";
    if cfg.cache_bytes >= zone {
        return Err(CliError(match cache_flag {
            Some(_) => format!(
                "{flag}: the cache ({}) must be smaller than the zone ({}, {zone_from}); {fix}",
                human(cfg.cache_bytes),
                human(zone)
            ),
            None => format!(
                "{flag}: the zone ({}) must be larger than the cache ({}, {from} cache); {fix}",
                human(zone),
                human(cfg.cache_bytes)
            ),
        }));
    }
    let sized = if resizes_workload(a) {
        if cache_flag.is_some() {
            " the workload sizes from this cache"
        } else {
            " the workload sizes from the cache"
        }
    } else {
        ""
    };
    let (what, pages) = match &cfg.workload {
        Workload::Heap(h) => (format!("the heap{sized}"), h.heap_pages),
        Workload::Stream(st) => (
            format!("the stream arrays{sized}"),
            st.array_pages.saturating_mul(3),
        ),
        // One instance on each node, and each node is a zone of `zone_pages`.
        Workload::TwoInstance(t) => (format!("an instance{sized}"), t.pages),
    };
    if pages > cfg.zone_pages {
        let verb = if matches!(cfg.workload, Workload::Stream(_)) {
            "do not fit"
        } else {
            "does not fit"
        };
        let zone_desc = if cache_flag.is_some() {
            format!("{}, {zone_from}", human(zone))
        } else {
            human(zone)
        };
        return Err(CliError(format!(
            "{flag}: {what} ({}) {verb} in the zone ({zone_desc}); {fix}",
            human(pages.saturating_mul(PAGE_SIZE))
        )));
    }
    Ok(())
}

pub(crate) fn pct(x: f64) -> String {
    format!("{:6.2}%", 100.0 * x)
}

pub(crate) fn print_table(preset: &str, cfg: &ExperimentConfig, r: &ExperimentResult) {
    println!(
        "preset {preset}: kernel {} rules, {} aging{}, workload {}, zone {} MiB, cache {} KiB ({}), shuffle order {} ({}{}), {}",
        cfg.kernel.name(),
        if cfg.server.is_some() {
            "server"
        } else {
            "synthetic"
        },
        if cfg.pcp { ", per-CPU lists" } else { "" },
        workload_name(&cfg.workload),
        (cfg.zone_pages * PAGE_SIZE) >> 20,
        cfg.cache_bytes >> 10,
        match cfg.cache_mode {
            CacheMode::Line => "64 B lines",
            CacheMode::PageColour => "page colours",
        },
        cfg.shuffle_order,
        mode_name(cfg.shuffle_mode),
        if cfg.pick_tail { " + pick_tail" } else { "" },
        crate::report::seeds(r.seeds)
    );
    println!("conflict rate (mean ± sd over seeds)");
    println!(
        "{:>12} {:>18} {:>18}",
        "aging round", "in-order", "shuffled"
    );
    for i in 0..r.in_order.mean.len() {
        let label = if i == 0 {
            "first run".to_string()
        } else {
            i.to_string()
        };
        let cell = |c: &Curve| format!("{} ± {:.2}", pct(c.mean[i]), 100.0 * c.sd[i]);
        println!(
            "{label:>12} {:>18} {:>18}",
            cell(&r.in_order),
            cell(&r.shuffled)
        );
    }
    println!(
        "summary: first run {} in-order / {} shuffled; aged {} in-order / {} shuffled (Linux e900a918b098 on hardware: 8% / 21% / 11%)",
        pct(r.in_order.first_run()).trim(),
        pct(r.shuffled.first_run()).trim(),
        pct(r.in_order.aged()).trim(),
        pct(r.shuffled.aged()).trim()
    );
    println!("simulated page allocations + frees: {}", r.page_ops);
}
