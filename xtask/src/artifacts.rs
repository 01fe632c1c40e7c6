//! Executables built once and run without cargo: with `--message-format=json` cargo names
//! each executable it built, so a step can build a set of packages together (one feature
//! resolution, one build) and then run the test binaries of only some of them, or copy
//! programs into an emulated machine.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::cmd::Cmd;
use crate::cmd::Result;

/// One executable cargo built: a test binary or a program.
#[derive(Debug, Clone)]
pub struct TestBinary {
    /// The package it belongs to.
    pub package: String,
    /// The target's name (`numa_fork`, the package's library name for its unit tests, or a
    /// `[[bin]]`'s name).
    pub target: String,
    /// Whether it is a test harness (built for `cargo test`).
    pub test: bool,
    /// The executable.
    pub exe: PathBuf,
    /// The package's directory (cargo runs tests from there).
    pub dir: PathBuf,
}

impl TestBinary {
    /// The command that runs it as `cargo test` would: from the package's directory, with
    /// `CARGO_MANIFEST_DIR` set; `args` go to the test harness.
    pub fn cmd(&self, label: &str, args: &[&str]) -> Cmd {
        self.cmd_under(&[], label, args)
    }

    /// [`cmd`](Self::cmd) through `runner` (a program and its arguments, as cargo's
    /// `CARGO_TARGET_<TRIPLE>_RUNNER` names one): an emulator for another architecture's
    /// executable. An empty `runner` runs it directly.
    pub fn cmd_under(&self, runner: &[&str], label: &str, args: &[&str]) -> Cmd {
        let c = match runner.split_first() {
            Some((program, rest)) => Cmd::new(label, program).args(rest).arg(&self.exe),
            None => Cmd::new(label, &self.exe),
        };
        c.args(args)
            .current_dir(&self.dir)
            .env("CARGO_MANIFEST_DIR", &self.dir)
    }
}

/// The test binary of `package`'s target `target` among `built`, or an error that names it.
pub fn test_binary<'a>(
    built: &'a [TestBinary],
    package: &str,
    target: &str,
) -> Result<&'a TestBinary> {
    built
        .iter()
        .find(|b| b.test && b.package == package && b.target == target)
        .ok_or_else(|| format!("the build made no {package} {target} test binary"))
}

/// Runs `build` (a `cargo test … --no-run` command, to which `--message-format=json` is
/// added) and returns the test executables it built; cargo's messages go to stderr as usual.
pub fn build_tests(build: Cmd) -> Result<Vec<TestBinary>> {
    Ok(build_executables(build)?
        .into_iter()
        .filter(|b| b.test)
        .collect())
}

/// Runs `build` (a cargo command that builds, to which `--message-format=json` is added)
/// and returns every executable it built, tests and programs.
pub fn build_executables(build: Cmd) -> Result<Vec<TestBinary>> {
    let build = build
        .arg("--message-format=json-render-diagnostics")
        .stdio(Stdio::piped(), Stdio::inherit());
    eprintln!("\n==> {build:?}");
    let t = std::time::Instant::now();
    let out = build.output()?;
    eprintln!("<== built in {:.1}s", t.elapsed().as_secs_f64());
    if !out.status.success() {
        return Err(format!("the build failed: {}", out.status));
    }
    Ok(parse(&String::from_utf8_lossy(&out.stdout)))
}

/// The executables named in cargo's JSON messages.
fn parse(messages: &str) -> Vec<TestBinary> {
    let mut found = Vec::new();
    for line in messages.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let (Some(target), Some(exe), Some(manifest), Some(id)) = (
            msg["target"]["name"].as_str(),
            msg["executable"].as_str(),
            msg["manifest_path"].as_str(),
            msg["package_id"].as_str(),
        ) else {
            continue;
        };
        found.push(TestBinary {
            package: package_name(id),
            target: target.to_owned(),
            test: msg["profile"]["test"] == true,
            exe: PathBuf::from(exe),
            dir: Path::new(manifest)
                .parent()
                .map_or_else(PathBuf::new, Path::to_path_buf),
        });
    }
    found
}

/// The package name in a cargo package id: `path+file:///…/pool#scalrand-pool@0.1.0`, or
/// `path+file:///…/xtask#0.1.0` where the directory is the name.
fn package_name(id: &str) -> String {
    let (path, rest) = id.rsplit_once('#').unwrap_or(("", id));
    match rest.split_once('@') {
        Some((name, _)) => name.to_owned(),
        None => path.rsplit('/').next().unwrap_or(rest).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_executables_are_found_with_their_package() {
        let messages = concat!(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/pool#scalrand-pool@0.1.0","manifest_path":"/w/crates/pool/Cargo.toml","target":{"name":"numa_fork"},"profile":{"test":true},"executable":"/w/target/release/deps/numa_fork-1"}"#,
            "\n",
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/pool#scalrand-pool@0.1.0","manifest_path":"/w/crates/pool/Cargo.toml","target":{"name":"scalrand_pool"},"profile":{"test":false},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/xtask#0.1.0","manifest_path":"/w/xtask/Cargo.toml","target":{"name":"cli"},"profile":{"test":true},"executable":"/w/target/release/deps/cli-2"}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
            "\n",
            "Compiling something\n",
        );
        let found = parse(messages);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.iter().all(|b| b.test));
        assert_eq!(found[0].package, "scalrand-pool");
        assert_eq!(found[0].target, "numa_fork");
        assert_eq!(found[0].dir, Path::new("/w/crates/pool"));
        assert_eq!(found[1].package, "xtask");
        let b = test_binary(&found, "scalrand-pool", "numa_fork").unwrap();
        assert_eq!(b.exe, Path::new("/w/target/release/deps/numa_fork-1"));
        let missing = test_binary(&found, "scalrand", "numa_fork").unwrap_err();
        assert!(missing.contains("scalrand numa_fork"), "{missing}");
        // Through a runner: the runner, its arguments, the executable, then the harness's.
        let run = format!(
            "{:?}",
            b.cmd_under(
                &["qemu-aarch64", "-L", "/sysroot"],
                "emulated",
                &["--exact"]
            )
        );
        assert!(
            run.contains(
                r#""qemu-aarch64" "-L" "/sysroot" "/w/target/release/deps/numa_fork-1" "--exact""#
            ),
            "{run}"
        );
        let direct = format!("{:?}", b.cmd_under(&[], "direct", &[]));
        assert!(!direct.contains("qemu"), "{direct}");
    }
}
