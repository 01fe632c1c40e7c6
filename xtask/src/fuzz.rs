//! `cargo xtask fuzz`: cargo-fuzz campaigns (nightly), one target after another, each for
//! `--seconds` (and at most `--runs` executions), with a progress bar over the targets.
//!
//! When the bar is shown (stderr is a terminal and no `--quiet`), libFuzzer's own output goes
//! to `target/fuzz-logs/TARGET.log` so it does not tear the bar; otherwise (CI, `--quiet`) it
//! goes to the terminal as before. With `--jobs N` (CI runs 2), N targets fuzz at once, each
//! one's output printed whole when it ends.

use std::fs::File;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::cmd::{Result, project_root};
use crate::cmd::{cargo_nightly, run_parallel};
use crate::flags;

/// Every target `cargo fuzz list` names.
fn all_targets() -> Result<Vec<String>> {
    let out = cargo_nightly("fuzz list", ["fuzz", "list", "--fuzz-dir", "fuzz"]).output()?;
    if !out.status.success() {
        return Err(format!(
            "cargo fuzz list: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .filter(|l| !l.is_empty())
        .collect())
}

fn progress(len: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    // Hidden by itself when stderr is not a terminal.
    let bar = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The fuzz targets fuzz/Cargo.toml declares (each `[[bin]]`'s `name`), read without building
/// anything.
fn declared_targets() -> Result<Vec<String>> {
    let path = project_root().join("fuzz/Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin
            && let Some(value) = line.strip_prefix("name")
            && let Some(value) = value.trim_start().strip_prefix('=')
        {
            names.push(value.trim().trim_matches('"').to_owned());
        }
    }
    Ok(names)
}

/// Refuses a target fuzz/Cargo.toml does not declare, naming the ones it does.
fn check_targets(asked: &[String], declared: &[String]) -> Result {
    if let Some(t) = asked.iter().find(|t| !declared.contains(t)) {
        return Err(format!(
            "fuzz: no target {t:?}; fuzz/Cargo.toml declares {}",
            declared.join(", ")
        ));
    }
    Ok(())
}

/// `cargo xtask fuzz`.
pub fn run(flags: &flags::Fuzz) -> Result {
    // Every named target is checked before cargo-fuzz builds anything.
    check_targets(&flags.targets, &declared_targets()?)?;
    let targets = if flags.targets.is_empty() {
        all_targets()?
    } else {
        flags.targets.clone()
    };
    let root = project_root();
    let logs = root.join("target/fuzz-logs");
    let mut commands = Vec::new();
    for t in &targets {
        // New inputs go to the (ignored) working corpus, the first directory; the committed
        // seeds (a minimised corpus of the long campaigns, plus any crash turned regression
        // input) are replayed with it before fuzzing, so even a 30 s smoke starts from the
        // campaigns' coverage.
        let corpus = root.join("fuzz/corpus").join(t);
        std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
        let seeds = root.join("fuzz/seeds").join(t);
        let mut c = cargo_nightly(
            &format!("fuzz {t}"),
            ["fuzz", "run", "--fuzz-dir", "fuzz", t],
        )
        .arg(&corpus);
        if seeds.is_dir() {
            c = c.arg(&seeds);
        }
        c = c.args([
            "--".to_owned(),
            format!("-max_total_time={}", flags.seconds),
            "-print_final_stats=1".to_owned(),
        ]);
        if let Some(n) = flags.runs {
            // Stops at N executions or after --seconds, whichever comes first.
            c = c.arg(format!("-runs={n}"));
        }
        commands.push(c);
    }
    if flags.jobs > 1 {
        // Several targets at once, each libFuzzer process on a core of its own; each
        // target's output is printed whole when it ends.
        return run_parallel(commands, flags.jobs, &logs);
    }
    let bar = progress(targets.len() as u64, flags.quiet);
    for (t, c) in targets.iter().zip(commands) {
        bar.set_message(format!("{t} (up to {} s)", flags.seconds));
        if bar.is_hidden() {
            c.run()?;
        } else {
            std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
            let log = logs.join(format!("{t}.log"));
            let io = |e: std::io::Error| format!("{}: {e}", log.display());
            let out = File::create(&log).map_err(io)?;
            let err = out.try_clone().map_err(io)?;
            bar.println(format!(
                "fuzz {t}: libFuzzer's output goes to {}",
                log.display()
            ));
            c.stdio(out, err)
                .run_unlogged()
                .map_err(|e| format!("{e}; see {}", log.display()))?;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_targets_are_fuzz_cargo_toml_bins() {
        let t = declared_targets().unwrap();
        assert!(t.contains(&"numa_pools".to_owned()), "{t:?}");
        assert!(t.contains(&"shuffle_ops".to_owned()), "{t:?}");
        assert!(!t.contains(&"scalrand-fuzz".to_owned()), "{t:?}");
        let e = check_targets(&["numa_pool".to_owned()], &t).unwrap_err();
        assert!(
            e.contains("no target \"numa_pool\"") && e.contains("numa_pools"),
            "{e}"
        );
        check_targets(&["numa_pools".to_owned()], &t).unwrap();
    }
}
