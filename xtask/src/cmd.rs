//! The one way xtask starts a process: a labelled [`Cmd`] that logs what it runs and how long
//! it took, and turns a failure into an error naming the label; the [`Result`] every command
//! returns and the [`project_root`] it runs in.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
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

/// The longest one command may run, in seconds; 0: no limit. Set by [`limit_each_command`].
static LIMIT_SECS: AtomicU64 = AtomicU64::new(0);

/// From now on, every command that runs longer than `limit` is killed with every process it
/// started (the processes it started are listed first, with the kernel function each one
/// waits in), and fails. `cargo xtask ci` sets this, so that a test that hangs fails its step
/// with a name instead of stalling the whole run.
pub fn limit_each_command(limit: Duration) {
    LIMIT_SECS.store(limit.as_secs().max(1), Ordering::Relaxed);
}

/// The limit [`limit_each_command`] set, if any.
fn limit() -> Option<Duration> {
    match LIMIT_SECS.load(Ordering::Relaxed) {
        0 => None,
        s => Some(Duration::from_secs(s)),
    }
}

/// Waits for `child` to end; past `limit`, kills it and every process it started. Without a
/// limit, a plain wait; with one, polls (every 1 ms at first, then less often, up to 100 ms:
/// short commands are not held up by the poll).
fn wait_limited(label: &str, child: &mut Child, started: Instant) -> Result<ExitStatus> {
    if limit().is_none() {
        return child.wait().map_err(|e| format!("[{label}] waiting: {e}"));
    }
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("[{label}] waiting: {e}"))?
        {
            return Ok(status);
        }
        if let Some(l) = limit()
            && started.elapsed() > l
        {
            kill_tree(child);
            return Err(format!(
                "[{label}] ran past its limit of {} s and was killed with every process it \
                 started (listed above)",
                l.as_secs()
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// Kills `child` and, on Linux, every process descended from it (found through `/proc`),
/// after listing them.
fn kill_tree(child: &mut Child) {
    let root = child.id();
    let mut tree = vec![root];
    if let Ok(dir) = std::fs::read_dir("/proc") {
        // (pid, parent pid) of every process.
        let procs: Vec<(u32, u32)> = dir
            .filter_map(|e| {
                let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                // After the command name's closing parenthesis: state, then the parent pid.
                let ppid = stat
                    .rsplit_once(')')?
                    .1
                    .split_whitespace()
                    .nth(1)?
                    .parse()
                    .ok()?;
                Some((pid, ppid))
            })
            .collect();
        let mut i = 0;
        while i < tree.len() {
            let parent = tree[i];
            tree.extend(procs.iter().filter(|p| p.1 == parent).map(|p| p.0));
            i += 1;
        }
        eprintln!("processes left running (pid, command, kernel function it waits in):");
        for pid in &tree {
            let read = |f: &str| {
                std::fs::read_to_string(format!("/proc/{pid}/{f}"))
                    .unwrap_or_default()
                    .trim()
                    .to_owned()
            };
            eprintln!("  {pid} {} {}", read("comm"), read("wchan"));
        }
    }
    let _ = Command::new("kill")
        .arg("-KILL")
        .args(tree.iter().map(u32::to_string))
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
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

/// Clippy's driver of the toolchain that runs xtask: beside `$CARGO`, or where rustup says.
fn clippy_driver() -> Result<PathBuf> {
    let name = format!("clippy-driver{}", std::env::consts::EXE_SUFFIX);
    if let Ok(cargo) = std::env::var("CARGO") {
        let beside = Path::new(&cargo).with_file_name(&name);
        if beside.is_file() {
            return Ok(beside);
        }
    }
    let missing = || {
        "clippy's driver (clippy-driver) is neither beside cargo ($CARGO) nor known to rustup: \
         `rustup component add clippy`"
            .to_owned()
    };
    let out = Command::new("rustup")
        .args(["which", "clippy-driver"])
        .output()
        .map_err(|_| missing())?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if out.status.success() && path.is_file() {
        Ok(path)
    } else {
        Err(missing())
    }
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

    /// Lints while it builds: the workspace's crates that this cargo command compiles go
    /// through clippy's driver (`RUSTC_WORKSPACE_WRAPPER`, with `-D warnings`), as `cargo
    /// clippy` runs them for its `cargo check`, but here in a build that also generates their
    /// code. The driver lints the packages the command names (`-p`, `--workspace`) and
    /// compiles every other crate as rustc would, so one build is both `cargo clippy` and the
    /// tests' build, and the dependencies are compiled once, not checked and then built.
    /// Every command that builds in the same target directory must lint too: cargo rebuilds a
    /// workspace crate whose wrapper changed.
    pub fn linted(self) -> Result<Self> {
        Ok(self.env("RUSTC_WORKSPACE_WRAPPER", clippy_driver()?).env(
            "CLIPPY_ARGS",
            "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
        ))
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
        let started = Instant::now();
        let mut child = self
            .inner
            .spawn()
            .map_err(|e| format!("[{}] cannot start: {e}", self.label))?;
        let status = wait_limited(&self.label, &mut child, started)?;
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

    /// Runs it to the end and returns its stdout; an error holding its stderr unless it exits
    /// 0.
    pub fn stdout(self) -> Result<Vec<u8>> {
        let label = self.label.clone();
        let out = self.output()?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(format!(
                "[{label}] failed: {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// Runs it to the end and parses its stdout as JSON (`cargo metadata`); an error holding
    /// its stderr unless it exits 0, or naming it if the output is not JSON.
    pub fn json(self) -> Result<serde_json::Value> {
        let label = self.label.clone();
        serde_json::from_slice(&self.stdout()?).map_err(|e| format!("[{label}] its output: {e}"))
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
            let status = match (status, limit()) {
                (Some(s), _) => Some(s),
                (None, Some(l)) if running[i].2.elapsed() > l => {
                    let (label, log, _, mut child) = running.swap_remove(i);
                    kill_tree(&mut child);
                    let text = std::fs::read_to_string(&log).unwrap_or_default();
                    eprintln!("\n---- [{label}] ----\n{text}");
                    errors.push(format!("[{label}] ran past its limit of {} s", l.as_secs()));
                    continue;
                }
                (None, _) => None,
            };
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
