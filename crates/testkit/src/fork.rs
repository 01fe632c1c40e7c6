//! Real forks for tests: libc's `fork()`, a raw `SYS_fork` that runs no `pthread_atfork`
//! handler, and [`in_child`], which runs a closure in a forked child and brings back the bytes
//! it returns through a pipe. Nothing on the child's side allocates, so a child of a
//! multi-threaded process (whose allocator lock another thread may have held at the fork) or
//! of a raw `SYS_fork` (after which glibc's own bookkeeping is stale) can use it.
//! [`wait_within`] reaps a child that runs on its own, killing it at a deadline.

use std::time::{Duration, Instant};

/// How a test forks: [`libc_fork`] or [`raw_fork`].
pub type ForkFn = fn() -> libc::pid_t;

/// How long a child of [`in_child`] may run before its own `alarm` ends it, so that a child
/// that hangs (on a lock a parent's thread held at the fork, say) fails its test instead of
/// stalling the run.
pub const CHILD_ALARM_SECS: u32 = 20;

/// libc's `fork()`: runs the `pthread_atfork` handlers.
pub fn libc_fork() -> libc::pid_t {
    // SAFETY: fork(2) has no memory-safety preconditions of its own; what a child may do
    // afterwards (async-signal-safe calls only, in a multi-threaded parent) is for the
    // closure [`in_child`] runs there to keep to.
    unsafe { libc::fork() }
}

/// A fork that runs no `pthread_atfork` handler at all: `SYS_fork`, or `clone` with only
/// `SIGCHLD` where there is no `SYS_fork`, as fork does.
#[cfg(target_os = "linux")]
pub fn raw_fork() -> libc::pid_t {
    // SAFETY: as `libc_fork`; SYS_fork takes no arguments.
    #[cfg(target_arch = "x86_64")]
    return unsafe { libc::syscall(libc::SYS_fork) } as libc::pid_t;
    // Architectures without SYS_fork: clone with SIGCHLD and nothing shared, as fork does.
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above.
    return unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    } as libc::pid_t;
}

/// Writes all of `b` to `fd`, stopping at the first error (async-signal-safe calls only).
pub fn write_all(fd: libc::c_int, mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: `b` is `b.len()` readable bytes.
        let r = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        if r <= 0 {
            return;
        }
        b = &b[r as usize..];
    }
}

/// Everything readable from `fd` until its end (every write end closed), an interrupted read
/// retried; stops at the first error. Reads straight into the returned vector's heap buffer:
/// what a child sends (the keys it derived, in [`crate::trace`]) never lands on this thread's
/// stack, which the next child forked from this thread inherits and a stack scan searches.
pub fn read_to_end(fd: libc::c_int) -> Vec<u8> {
    const CHUNK: usize = 4096;
    let mut got: Vec<u8> = Vec::with_capacity(CHUNK);
    loop {
        got.reserve(CHUNK);
        let spare = got.spare_capacity_mut();
        // SAFETY: `spare` is writable for its length (uninitialised bytes read(2) overwrites).
        let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), spare.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return got;
        }
        // SAFETY: read(2) initialised the first `n` spare bytes (n <= spare.len()).
        unsafe { got.set_len(got.len() + n as usize) };
    }
}

/// Forks with `how`. The child arms `alarm(CHILD_ALARM_SECS)`, runs `child`, sends the bytes
/// it returns through a pipe (their length first) and leaves with `_exit(0)`, skipping the
/// atexit handlers and the test harness, which belong to the parent. Return a fixed-size
/// array, or a buffer allocated before the fork, so that the child does not allocate.
///
/// The parent runs `parent` as soon as `fork` has returned there (before it reads the pipe),
/// then collects the child's bytes and reaps it. Returns what `parent` returned and the
/// child's bytes: `None` when the child did not exit with status 0 after sending them all (a
/// panic, a crash, a hang ended by the alarm).
pub fn in_child<B: AsRef<[u8]>, R>(
    how: ForkFn,
    child: impl FnOnce() -> B,
    parent: impl FnOnce() -> R,
) -> (R, Option<Vec<u8>>) {
    in_child_with_alarm(how, CHILD_ALARM_SECS, child, parent)
}

/// [`in_child`] with the child's alarm at `alarm_secs` seconds instead of
/// [`CHILD_ALARM_SECS`]; 0 arms none (as `alarm(0)`), for a child whose test is bounded some
/// other way (a slow emulated machine that its runner times out as a whole).
pub fn in_child_with_alarm<B: AsRef<[u8]>, R>(
    how: ForkFn,
    alarm_secs: u32,
    child: impl FnOnce() -> B,
    parent: impl FnOnce() -> R,
) -> (R, Option<Vec<u8>>) {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid two-element array for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = how();
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: alarm has no preconditions; SIGALRM's default action ends the child.
        unsafe { libc::alarm(alarm_secs) };
        let out = child();
        let out = out.as_ref();
        write_all(fds[1], &(out.len() as u64).to_le_bytes());
        write_all(fds[1], out);
        // SAFETY: `_exit` never returns.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: our copy of the write end; closing it lets a dead child show as EOF.
    unsafe { libc::close(fds[1]) };
    let r = parent();
    let got = read_to_end(fds[0]);
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer; the fd is ours.
    unsafe {
        assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
        libc::close(fds[0]);
    }
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 && got.len() >= 8;
    if !ok {
        return (r, None);
    }
    let len = u64::from_le_bytes(got[..8].try_into().unwrap()) as usize;
    (r, (got.len() == 8 + len).then(|| got[8..].to_vec()))
}

/// Waits for the forked child `pid` until `limit` has passed since the call, polling `waitpid`
/// with `WNOHANG`: after 0.1 ms, then twice as long each time up to every 20 ms (the calling
/// thread sleeps between polls; it does not spin). A child that is ending anyway, the usual
/// case (its pipe already at its end), is reaped within a fraction of a millisecond.
/// Returns its wait status, or `None` if it was still running at the limit: then it is
/// killed with `SIGKILL` and reaped. (A program started with `Command` has
/// [`crate::cli::wait_within`].)
pub fn wait_within(pid: libc::pid_t, limit: Duration) -> Option<libc::c_int> {
    let start = Instant::now();
    let mut status = 0;
    let mut pause = Duration::from_micros(100);
    loop {
        // SAFETY: `pid` is the caller's child; `status` is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::Interrupted,
                "waitpid({pid}): {e}"
            );
        } else if r == pid {
            return Some(status);
        }
        if start.elapsed() > limit {
            // SAFETY: `pid` is the caller's child, not reaped yet (so not a recycled pid).
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return None;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}
