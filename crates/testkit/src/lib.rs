//! Test support shared by the scalrand crates' tests (not published): how much of a long
//! campaign to run ([`campaign`]), command-line tools run
//! from their tests ([`cli`]), threads pinned to CPUs ([`cpu`]), real forks with a child that
//! reports through a pipe or is waited for with a deadline ([`fork`]), forks in the middle of
//! reads with a scan of the child's memory ([`midread`]), the process's writable mappings read
//! without allocating ([`maps`]), the vector registers as they are now ([`regs`]), a thread's
//! rseq registration taken away ([`rseq`]), entropy denied by a seccomp filter
//! ([`seccomp`]), what the calls a thread just made left on its own stack and the key pieces
//! to look for there ([`stack`]), and a forked child single-stepped under `ptrace` with its
//! stack scanned for keys at every instruction or after a signal at any one ([`trace`]).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test support fails loudly

pub mod campaign;
pub mod cli;
#[cfg(target_os = "linux")]
pub mod cpu;
#[cfg(unix)]
pub mod fork;
#[cfg(target_os = "linux")]
pub mod maps;
#[cfg(target_os = "linux")]
pub mod midread;
pub mod regs;
#[cfg(target_os = "linux")]
pub mod rseq;
#[cfg(target_os = "linux")]
pub mod seccomp;
pub mod stack;
#[cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]
pub mod trace;
