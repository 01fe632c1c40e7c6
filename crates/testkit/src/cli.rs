//! Command-line tools run from their own tests: a run that must succeed (its stdout back as
//! text), a `--help` that must list given flags, a run that must be refused (its exit status
//! and message), and a run with a time limit (or a started program waited for with one).
//!
//! Standard library only, so a package that cannot depend on this crate can include the file
//! with `#[path]`.

// Test support fails loudly (repeated here for the packages that include the file).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` and checks that it succeeded (its stderr in the failure message); returns its
/// stdout as text.
pub fn stdout_of(cmd: &mut Command) -> String {
    let out = output(cmd);
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `cmd` (a `--help`), checks that it succeeded and that its stdout holds each of
/// `wants`; returns the text.
pub fn assert_help_lists(cmd: &mut Command, wants: &[&str]) -> String {
    let help = stdout_of(cmd);
    for want in wants {
        assert!(help.contains(want), "{want} missing from:\n{help}");
    }
    help
}

/// Starts `cmd`. Under wine, `CreateProcess` now and then fails with `ERROR_INTERNAL_ERROR`
/// (1359) while the machine is busy; that error is tried again a few times (a program that
/// cannot be started fails every try), every other error fails the test at once.
pub fn spawn(cmd: &mut Command) -> std::process::Child {
    const ERROR_INTERNAL_ERROR: i32 = 1359;
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Ok(child) => return child,
            Err(e)
                if cfg!(windows) && e.raw_os_error() == Some(ERROR_INTERNAL_ERROR) && tries < 4 =>
            {
                tries += 1;
                std::thread::sleep(Duration::from_millis(250));
            }
            Err(e) => panic!("{cmd:?}: cannot start: {e}"),
        }
    }
}

/// Runs `cmd` to the end with stdout and stderr captured (started through [`spawn`]).
pub fn output(cmd: &mut Command) -> Output {
    spawn(cmd.stdout(Stdio::piped()).stderr(Stdio::piped()))
        .wait_with_output()
        .unwrap()
}

/// Runs `cmd` and checks that it exited with status `code` and that its stderr holds `want`;
/// returns the whole output.
pub fn assert_exits(cmd: &mut Command, code: i32, want: &str) -> Output {
    let out = output(cmd);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{cmd:?}: {err}");
    assert!(err.contains(want), "{cmd:?}: {err}");
    out
}

/// Runs `cmd` with stdout and stderr captured; one still running after `secs` seconds is
/// killed and the test fails (a refusal that does the work instead would otherwise run on).
pub fn output_within(cmd: &mut Command, secs: u64) -> Output {
    let mut child = spawn(cmd.stdout(Stdio::piped()).stderr(Stdio::piped()));
    if wait_within(&mut child, Duration::from_secs(secs)).is_none() {
        panic!("{cmd:?} did work first: still running after {secs} s");
    }
    child.wait_with_output().unwrap()
}

/// Waits for `child` until `limit` has passed since the call, polling `try_wait` every 20 ms
/// (the calling thread sleeps between polls; it does not spin). Returns its exit status, or
/// `None` if it was still running at the limit: then it is killed and reaped.
pub fn wait_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
