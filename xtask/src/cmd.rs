//! The one way xtask starts a process: a labelled [`Cmd`] that logs what it runs and how long
//! it took, and turns a failure into an error naming the label; the [`Result`] every command
//! returns and the [`project_root`] it runs in.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What a command reports when it fails.
pub type Result<T = ()> = std::result::Result<T, String>;

/// The workspace root (xtask's parent directory).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// A command with the label its log lines and errors carry.
pub struct Cmd {
    label: String,
    inner: Command,
}

impl fmt::Debug for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {:?}", self.label, self.inner)
    }
}

/// `cargo ARGS` from the workspace root, with the cargo that runs xtask (`$CARGO`).
pub fn cargo<I, S>(label: &str, args: I) -> Cmd
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    Cmd::new(label, cargo).args(args)
}

/// `cargo +nightly ARGS` from the workspace root, through rustup's proxy (`$CARGO` points at
/// stable).
pub fn cargo_nightly<I, S>(label: &str, args: I) -> Cmd
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut c = Cmd::new(label, "cargo").arg("+nightly").args(args);
    // Let rustup pick the toolchain from `+nightly`, not from the outer cargo's environment.
    c.inner
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        .env_remove("RUSTC");
    c
}

impl Cmd {
    /// `program`, run from the workspace root.
    pub fn new(label: &str, program: impl AsRef<OsStr>) -> Self {
        let mut inner = Command::new(program);
        inner.current_dir(project_root());
        Self {
            label: label.to_owned(),
            inner,
        }
    }

    /// The label its log lines and errors carry.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// One more argument.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.inner.arg(a);
        self
    }

    /// More arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.inner.args(args);
        self
    }

    /// An environment variable for the command.
    pub fn env(mut self, k: &str, v: impl AsRef<OsStr>) -> Self {
        self.inner.env(k, v);
        self
    }

    /// An environment variable the command does not inherit.
    pub fn env_remove(mut self, k: &str) -> Self {
        self.inner.env_remove(k);
        self
    }

    /// Runs the command in `dir` instead of the workspace root.
    pub fn current_dir(mut self, dir: &std::path::Path) -> Self {
        self.inner.current_dir(dir);
        self
    }

    /// A target directory of its own under `target/` (keeps the host build cache intact).
    pub fn target_dir(self, sub: &str) -> Self {
        let dir = project_root().join("target").join(sub);
        self.env("CARGO_TARGET_DIR", dir)
    }

    /// Where the command's stdin comes from (inherited unless set).
    pub fn stdin(mut self, input: impl Into<Stdio>) -> Self {
        self.inner.stdin(input);
        self
    }

    /// Where the command's stdout and stderr go (inherited unless set).
    pub fn stdio(mut self, out: impl Into<Stdio>, err: impl Into<Stdio>) -> Self {
        self.inner.stdout(out).stderr(err);
        self
    }

    /// Runs it to the end, logging the command and its time on stderr; an error unless it
    /// exits 0.
    pub fn run(self) -> Result {
        eprintln!("\n==> {self:?}");
        let label = self.label.clone();
        let t = Instant::now();
        let result = self.run_unlogged();
        eprintln!("<== [{label}] {:.1}s", t.elapsed().as_secs_f64());
        result
    }

    /// Runs it to the end without the log lines (for callers drawing a progress bar).
    pub fn run_unlogged(mut self) -> Result {
        let status = self
            .inner
            .status()
            .map_err(|e| format!("[{}] cannot start: {e}", self.label))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("[{}] failed: {status}", self.label))
        }
    }

    /// Runs it to the end and captures its output (whatever the exit status).
    pub fn output(mut self) -> Result<Output> {
        self.inner
            .output()
            .map_err(|e| format!("[{}] cannot start: {e}", self.label))
    }

    /// Starts it with its stdout piped, for another command to read.
    pub fn spawn_piped(mut self) -> Result<Child> {
        eprintln!("==> [{}] {:?} |", self.label, self.inner);
        self.inner
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("[{}] cannot start: {e}", self.label))
    }
}

/// Runs `cmds` at most `jobs` at a time (for work that keeps one core busy: miri, libFuzzer),
/// each one's output going to `logs/LABEL.log` and printed whole when it ends, so the logs
/// do not interleave. Every command runs; the errors of those that failed come together.
pub fn run_parallel(cmds: Vec<Cmd>, jobs: usize, logs: &Path) -> Result {
    std::fs::create_dir_all(logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let mut pending = cmds.into_iter();
    let mut running: Vec<(String, std::path::PathBuf, Instant, Child)> = Vec::new();
    let mut errors = Vec::new();
    loop {
        while running.len() < jobs.max(1) {
            let Some(mut c) = pending.next() else { break };
            let log = logs.join(format!("{}.log", c.label.replace(['/', ' '], "_")));
            let io = |e: std::io::Error| format!("{}: {e}", log.display());
            let out = std::fs::File::create(&log).map_err(io)?;
            let err = out.try_clone().map_err(io)?;
            eprintln!("==> {c:?} > {}", log.display());
            let child = c
                .inner
                .stdout(out)
                .stderr(err)
                .spawn()
                .map_err(|e| format!("[{}] cannot start: {e}", c.label))?;
            running.push((c.label, log, Instant::now(), child));
        }
        if running.is_empty() {
            break;
        }
        let mut i = 0;
        while i < running.len() {
            let status = running[i]
                .3
                .try_wait()
                .map_err(|e| format!("[{}] waiting: {e}", running[i].0))?;
            let Some(status) = status else {
                i += 1;
                continue;
            };
            let (label, log, started, _) = running.swap_remove(i);
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            eprintln!("\n---- [{label}] ----\n{text}");
            eprintln!("<== [{label}] {:.1}s", started.elapsed().as_secs_f64());
            if !status.success() {
                errors.push(format!("[{label}] failed: {status}"));
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}
