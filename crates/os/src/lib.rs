#![no_std]
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// Keeps the items `$yes` where the predicate `$pred` holds and `$no` where it does not: the
/// body that every `cfg_*!` macro of this crate shares, each naming its predicate once (not
/// API: exported for `cfg_rseq!`'s expansion in other crates).
#[doc(hidden)]
#[macro_export]
macro_rules! __cfg_split {
    ($pred:tt [$($yes:item)*] [$($no:item)*]) => {
        $(#[cfg $pred] $yes)*
        $(#[cfg(not $pred)] $no)*
    };
}

/// Keeps the items of its first block where the kernel can hand a fork child memory zeroed
/// (`madvise(MADV_WIPEONFORK)` on Linux and Android, `minherit` on FreeBSD and OpenBSD, with
/// `std`, outside miri and loom), and those of its `else` block everywhere else: the one place
/// that says where that is. Whether a given kernel really does it is still asked at run time
/// ([`fork::detection`]).
macro_rules! cfg_wipe_on_fork {
    (if { $($yes:item)* } else { $($no:item)* }) => {
        $crate::__cfg_split! {
            (all(
                feature = "std",
                any(
                    target_os = "linux",
                    target_os = "android",
                    target_os = "freebsd",
                    target_os = "openbsd"
                ),
                not(miri),
                not(scalrand_loom)
            ))
            [$($yes)*]
            [$($no)*]
        }
    };
    (if { $($yes:item)* }) => {
        cfg_wipe_on_fork! { if { $($yes)* } else {} }
    };
}

/// Keeps the items of its first block where this crate declares the C library's functions
/// itself ([`sys`](crate::sys)'s module docs: Linux on 64-bit x86_64 and aarch64 (not x32
/// or ILP32), glibc or musl, with `std`), and those of its `else` block everywhere else: the
/// one place in the code that says where that is (`Cargo.toml` names the same targets for its
/// `libc` and `getrandom` dependencies, and `entropy.rs` for its direct path).
macro_rules! cfg_own_c_decls {
    (if { $($yes:item)* } else { $($no:item)* }) => {
        $crate::__cfg_split! {
            (all(
                feature = "std",
                target_os = "linux",
                any(target_arch = "x86_64", target_arch = "aarch64"),
                target_pointer_width = "64",
                any(target_env = "gnu", target_env = "musl")
            ))
            [$($yes)*]
            [$($no)*]
        }
    };
}

cfg_own_c_decls! {
    if {
        mod sys;
    } else {
        #[cfg(all(feature = "std", unix))]
        use libc as sys;
    }
}

pub mod clock;
#[doc(hidden)]
pub mod compat;
pub mod cpu;
pub mod entropy;
#[cfg(all(feature = "std", unix))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "std", unix))))]
pub mod exit;
pub mod fork;
#[cfg(all(feature = "alloc", not(scalrand_loom)))]
pub mod global;
pub mod lock;
pub mod pad;
pub mod primitive;
mod rseq;
#[cfg(feature = "alloc")]
pub mod scratch;
pub mod signal;
#[cfg(feature = "alloc")]
pub mod wipe;

pub use clock::{Clock, FnClock, ManualClock, NoClock};
#[cfg(feature = "std")]
pub use clock::{MonotonicClock, monotonic_now};
pub use entropy::EntropyError;
pub use lock::{Lock, LockGuard};
