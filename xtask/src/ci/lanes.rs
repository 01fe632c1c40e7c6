//! The second lane of `cargo xtask ci`: the steps that run beside the first lane, in a child
//! process of this program with a process group and a log file of its own.

use crate::cmd::Result;
use crate::step::Step;

/// The second lane of [`run`](super::run): this program again, in a process group of its own
/// (so that stopping it stops the builds and tests it started), running its steps with
/// `--serial`.
pub(super) struct SecondLane {
    child: std::process::Child,
    log: std::path::PathBuf,
    names: String,
    status: Option<std::process::ExitStatus>,
}

impl SecondLane {
    pub(super) fn start(steps: &[Step]) -> Result<Self> {
        use std::os::unix::process::CommandExt;
        let dir = crate::cmd::project_root().join("target/ci-logs");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let log = dir.join("second-lane.log");
        let io = |e: std::io::Error| format!("{}: {e}", log.display());
        let out = std::fs::File::create(&log).map_err(io)?;
        let err = out.try_clone().map_err(io)?;
        let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
        let names: Vec<String> = steps.iter().map(|s| s.name()).collect();
        let mut c = std::process::Command::new(exe);
        c.args(["ci", "--serial"]);
        for n in &names {
            c.args(["--only", n]);
        }
        c.current_dir(crate::cmd::project_root())
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let names = names.join(", ");
        eprintln!("==> [second lane] {names} > {}", log.display());
        let child = c
            .spawn()
            .map_err(|e| format!("[second lane] cannot start: {e}"))?;
        Ok(Self {
            child,
            log,
            names,
            status: None,
        })
    }

    /// Whether the lane has ended with a failure (without waiting).
    pub(super) fn failed(&mut self) -> bool {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status.is_some_and(|s| !s.success())
    }

    /// Stops the lane if it still runs: its whole process group gets SIGTERM.
    pub(super) fn stop(&mut self) {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        if self.status.is_some() {
            return;
        }
        eprintln!("==> [second lane] stopped: the first lane failed");
        let _ = std::process::Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", self.child.id())])
            .status();
    }

    /// Waits for the lane, prints its log, and returns its result.
    pub(super) fn finish(mut self) -> Result {
        let status = match self.status {
            Some(s) => s,
            None => self
                .child
                .wait()
                .map_err(|e| format!("[second lane] waiting: {e}"))?,
        };
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        eprintln!("\n---- [second lane: {}] ----\n{text}", self.names);
        eprintln!("<== [second lane] {status}");
        if status.success() {
            Ok(())
        } else {
            Err(format!("[second lane] failed: {status}"))
        }
    }
}
