//! Test support shared by the scalrand crates' tests (not published): forks in the middle of
//! reads with a scan of the child's memory ([`midread`]), the process's writable mappings read
//! without allocating ([`maps`]), and the vector registers as they are now ([`regs`]).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test support fails loudly

#[cfg(target_os = "linux")]
pub mod maps;
#[cfg(target_os = "linux")]
pub mod midread;
pub mod regs;
#[cfg(target_os = "linux")]
pub mod seccomp;
