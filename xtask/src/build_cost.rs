//! `cargo xtask build-cost`: what `cargo add scalrand` costs a new user, against rand 0.10.
//!
//! Two programs, each a crate of its own under `scalrand-build-cost/` in the system's
//! temporary directory (outside this checkout, so that its `.cargo/config.toml` does not
//! apply to them, as it would not to a new user's program): one calls
//! `scalrand::fill_bytes` and `scalrand::random` with the facade's default features (a `path`
//! dependency on this checkout), the other does the same with rand 0.10
//! (`rand::rng().fill_bytes`, `rand::random`). A first, untimed build of each fetches what the
//! registry must serve. Then each round builds both in release from an emptied target
//! directory, in alternating order (`cargo build --release`, one target directory per
//! program), and takes the ratio within the round: this machine's speed drifts between runs
//! more than between two builds a few seconds apart. Prints the medians, quartiles and ranges
//! of the build times and of the ratios, each program's crates (`cargo tree -e normal,build`,
//! the program itself not counted) and its proc-macro crates. On Linux it also gives the CPU
//! time of each build (user and system time of cargo and everything it ran).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cmd::{Result, cargo};

/// The scalrand program.
const OURS: &str = "\
fn main() {
    let mut b = [0u8; 32];
    scalrand::fill_bytes(&mut b);
    let x: u64 = scalrand::random();
    println!(\"{b:?} {x}\");
}
";

/// The same program on rand 0.10.
const RAND: &str = "\
use rand::Rng;
fn main() {
    let mut b = [0u8; 32];
    rand::rng().fill_bytes(&mut b);
    let x: u64 = rand::random();
    println!(\"{b:?} {x}\");
}
";

/// One program: its name, its dependency line and its source.
struct Program {
    name: &'static str,
    dependency: String,
    source: &'static str,
}

/// One timed build: wall time and, where the OS reports it, CPU time.
struct Build {
    wall: Duration,
    cpu: Option<Duration>,
}

/// Runs `rounds` alternated rounds (at least 1: the flag refuses 0) and prints the summary.
pub fn run(rounds: usize) -> Result {
    let root = crate::cmd::project_root();
    let base = std::env::temp_dir().join("scalrand-build-cost");
    // A TOML literal string: no escapes, so any path without a `'` or a line break.
    let root_text = root.to_str().ok_or_else(|| {
        format!(
            "this checkout's path {} is not UTF-8, which a Cargo.toml cannot hold",
            root.display()
        )
    })?;
    if root_text.contains(['\'', '\n', '\r']) {
        return Err(format!(
            "this checkout's path {root_text:?} holds a quote or a line break, which a TOML \
             literal string cannot"
        ));
    }
    let programs = [
        Program {
            name: "scalrand",
            dependency: format!("scalrand = {{ path = '{root_text}' }}"),
            source: OURS,
        },
        Program {
            name: "rand",
            dependency: "rand = \"0.10\"".to_owned(),
            source: RAND,
        },
    ];
    let mut dirs = Vec::new();
    for p in &programs {
        let dir = base.join(format!("{}-program", p.name));
        write_program(&dir, p)?;
        // Untimed: resolves and fetches the dependencies, so the rounds time builds only.
        build(&dir, p.name)?;
        dirs.push(dir);
    }
    let mut builds: Vec<Vec<Build>> = programs.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        let mut line = format!("round {:>2}:", round + 1);
        for k in 0..programs.len() {
            // Alternate which program builds first.
            let i = (k + round) % programs.len();
            let b = build(&dirs[i], programs[i].name)?;
            line += &format!(" {} {:.2} s", programs[i].name, b.wall.as_secs_f64());
            builds[i].push(b);
        }
        eprintln!("{line}");
    }

    println!(
        "\n{rounds} rounds, release builds from an emptied target directory, alternated; \
         ratios within each round"
    );
    println!(
        "\n| program | release build, median (IQR, min–max) | ratio to rand 0.10 | CPU time | \
         crates built | proc-macro crates |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let rand_walls: Vec<f64> = builds[1].iter().map(|b| b.wall.as_secs_f64()).collect();
    for (p, (dir, b)) in programs.iter().zip(dirs.iter().zip(&builds)) {
        let walls: Vec<f64> = b.iter().map(|b| b.wall.as_secs_f64()).collect();
        let ratios: Vec<f64> = walls.iter().zip(&rand_walls).map(|(a, r)| a / r).collect();
        let cpus: Option<Vec<f64>> = b.iter().map(|b| b.cpu.map(|c| c.as_secs_f64())).collect();
        let (crates, macros) = crate_counts(dir, p.name)?;
        println!(
            "| {} | {} | {} | {} | {crates} | {macros} |",
            p.name,
            spread(&walls, " s"),
            if p.name == "rand" {
                "1".to_owned()
            } else {
                spread(&ratios, "×")
            },
            cpus.map_or_else(|| "–".to_owned(), |c| spread(&c, " s")),
        );
    }
    Ok(())
}

/// Writes the program's crate into `dir` (a workspace of its own).
fn write_program(dir: &Path, p: &Program) -> Result {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| format!("creating {}: {e}", src.display()))?;
    let manifest = format!(
        "[package]\nname = \"{}-program\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n# Not a member of the scalrand workspace around it.\n[workspace]\n\n\
         [dependencies]\n{}\n",
        p.name, p.dependency
    );
    write(&dir.join("Cargo.toml"), &manifest)?;
    write(&src.join("main.rs"), p.source)
}

fn write(path: &Path, text: &str) -> Result {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// One release build of the program in `dir` from an emptied target directory.
fn build(dir: &Path, name: &str) -> Result<Build> {
    let target = dir.join("target");
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .map_err(|e| format!("removing {}: {e}", target.display()))?;
    }
    let manifest = dir.join("Cargo.toml");
    let cpu_before = children_cpu();
    let t = Instant::now();
    cargo(
        &format!("build-cost {name}"),
        [
            "build".as_ref(),
            "--release".as_ref(),
            "--quiet".as_ref(),
            "--manifest-path".as_ref(),
            manifest.as_os_str(),
        ],
    )
    .current_dir(dir)
    .env("CARGO_TARGET_DIR", &target)
    .run_unlogged()?;
    let wall = t.elapsed();
    let cpu = cpu_before
        .zip(children_cpu())
        .map(|(a, b)| b.saturating_sub(a));
    Ok(Build { wall, cpu })
}

/// The program's crates, itself not counted, and how many of them are proc-macro crates: the
/// crates `cargo tree -e normal,build` lists, and those among them whose package has a
/// proc-macro target (`cargo metadata`).
fn crate_counts(dir: &Path, name: &str) -> Result<(usize, usize)> {
    let manifest = dir.join("Cargo.toml");
    let out = cargo(
        &format!("build-cost tree {name}"),
        [
            "tree".as_ref(),
            "--quiet".as_ref(),
            "-e".as_ref(),
            "normal,build".as_ref(),
            "--prefix".as_ref(),
            "none".as_ref(),
            "--format".as_ref(),
            "{p}".as_ref(),
            "--manifest-path".as_ref(),
            manifest.as_os_str(),
        ],
    )
    .current_dir(dir)
    .stdout()?;
    // "NAME vVERSION (SOURCE)" or "NAME vVERSION (*)": the name and the version identify it.
    let program = format!("{name}-program");
    let mut crates: Vec<(String, String)> = String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let n = words.next()?;
            let v = words.next()?.strip_prefix('v')?;
            Some((n.to_owned(), v.to_owned()))
        })
        .filter(|(n, _)| *n != program)
        .collect();
    crates.sort();
    crates.dedup();

    let v = cargo(
        &format!("build-cost metadata {name}"),
        [
            "metadata".as_ref(),
            "--format-version".as_ref(),
            "1".as_ref(),
            "--manifest-path".as_ref(),
            manifest.as_os_str(),
        ],
    )
    .current_dir(dir)
    .json()?;
    let macros = v["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| {
            let key = (
                p["name"].as_str().unwrap_or_default().to_owned(),
                p["version"].as_str().unwrap_or_default().to_owned(),
            );
            crates.binary_search(&key).is_ok()
        })
        .filter(|p| {
            p["targets"].as_array().into_iter().flatten().any(|t| {
                t["kind"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k == "proc-macro")
            })
        })
        .count();
    Ok((crates.len(), macros))
}

/// `median (IQR q1–q3, min–max)` with `unit`, two decimals; the quartiles are the sorted
/// values at ranks `(n-1)/4` and `n-1-(n-1)/4` (rounded down from the ends alike, so the
/// same distance from each end; for 15 values the 4th and the 12th).
fn spread(v: &[f64], unit: &str) -> String {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return "–".to_owned();
    }
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    format!(
        "{median:.2}{unit} (IQR {:.2}–{:.2}, {:.2}–{:.2})",
        s[(n - 1) / 4],
        s[n - 1 - (n - 1) / 4],
        s[0],
        s[n - 1]
    )
}

/// User plus system time of this process's waited-for children so far (Linux: fields 16 and
/// 17 of `/proc/self/stat`, in clock ticks of 1/100 s, Linux's `USER_HZ` on x86_64 and
/// aarch64); `None` elsewhere.
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces: field 3
    // (state) is the first.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let cutime: u64 = fields.get(16 - 3)?.parse().ok()?;
    let cstime: u64 = fields.get(17 - 3)?.parse().ok()?;
    Some(Duration::from_millis((cutime + cstime) * 10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_gives_median_quartiles_and_range() {
        let v: Vec<f64> = (1..=15).map(f64::from).collect();
        assert_eq!(spread(&v, " s"), "8.00 s (IQR 4.00–12.00, 1.00–15.00)");
        assert_eq!(spread(&[2.0, 1.0], "×"), "1.50× (IQR 1.00–2.00, 1.00–2.00)");
        let v: Vec<f64> = (1..=8).map(f64::from).collect();
        assert_eq!(spread(&v, ""), "4.50 (IQR 2.00–7.00, 1.00–8.00)");
        assert_eq!(spread(&[], " s"), "–");
    }
}
