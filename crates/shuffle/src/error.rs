//! Typed errors for every bad input the simulator can be handed.
//!
//! Each variant is one row of the "Bad input" table in the crate README, and each row has a
//! test in `tests/errors.rs`.

use core::fmt;

/// What went wrong. No operation of this crate panics on bad input; it returns one of these.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A PFN range was given with `start > end`.
    StartAfterEnd {
        /// First PFN of the range.
        start: u64,
        /// One past the last PFN of the range.
        end: u64,
    },
    /// The zone spans no pages (`start == end`).
    EmptyZone,
    /// The zone spans more pages than the model indexes (see [`crate::MAX_SPANNED_PAGES`]).
    ZoneTooLarge {
        /// Pages asked for.
        spanned_pages: u64,
    },
    /// `start + spanned` overflows a `u64`.
    PfnOverflow,
    /// An order above [`crate::MAX_ORDER`] (10) was asked for.
    OrderTooLarge {
        /// The order asked for.
        order: u8,
    },
    /// Every page of the zone is a hole: there is nothing to allocate or shuffle.
    AllHoles,
    /// A hole (or a range to online) reaches outside the zone's span.
    RangeOutsideZone {
        /// First PFN of the range.
        start: u64,
        /// One past the last PFN of the range.
        end: u64,
    },
    /// Pages to online are already present.
    AlreadyOnline {
        /// The first present PFN found in the range.
        pfn: u64,
    },
    /// A free was asked for a block that is not an allocated block of that order
    /// (never allocated, freed twice, wrong order, or not its first page).
    NotAllocated {
        /// The PFN handed to `free_pages`.
        pfn: u64,
        /// The order handed to `free_pages`.
        order: u8,
    },
    /// The cache capacity is zero.
    ZeroCacheSize,
    /// The cache capacity is not a multiple of the line (64 B) or, in page-colour mode, of the
    /// page (4 KiB).
    CacheSizeNotMultiple {
        /// Capacity asked for, in bytes.
        capacity: u64,
        /// The unit it must be a multiple of.
        unit: u64,
    },
    /// An experiment was asked to run over zero seeds.
    ZeroSeeds,
    /// A workload or experiment parameter is out of range (the message says which).
    BadParameter(&'static str),
    /// The bias measurement needs at least one block and one trial.
    BadBiasSetup(&'static str),
    /// An allocation or free named a CPU the zone has no per-CPU list for.
    NoSuchCpu {
        /// The CPU asked for.
        cpu: u32,
        /// CPUs the zone has (CPU 0 always exists).
        cpus: u32,
    },
    /// A kernel version that is not `major.minor`, older than 5.2 (no shuffle), or not a
    /// release in [`KernelVersion::KNOWN`](crate::KernelVersion::KNOWN).
    BadKernelVersion,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::StartAfterEnd { start, end } => {
                write!(f, "range start {start:#x} is after its end {end:#x}")
            }
            Error::EmptyZone => f.write_str("the zone spans no pages"),
            Error::ZoneTooLarge { spanned_pages } => write!(
                f,
                "the zone spans {spanned_pages} pages, more than the model's limit of {}",
                crate::MAX_SPANNED_PAGES
            ),
            Error::PfnOverflow => f.write_str("zone start + span overflows a 64-bit PFN"),
            Error::OrderTooLarge { order } => {
                write!(f, "order {order} is above MAX_ORDER {}", crate::MAX_ORDER)
            }
            Error::AllHoles => f.write_str("every page of the zone is a hole"),
            Error::RangeOutsideZone { start, end } => {
                write!(f, "range {start:#x}..{end:#x} reaches outside the zone")
            }
            Error::AlreadyOnline { pfn } => write!(f, "pfn {pfn:#x} is already online"),
            Error::NotAllocated { pfn, order } => {
                write!(f, "pfn {pfn:#x} is not an allocated block of order {order}")
            }
            Error::ZeroCacheSize => f.write_str("cache capacity is zero"),
            Error::CacheSizeNotMultiple { capacity, unit } => {
                write!(
                    f,
                    "cache capacity {capacity} B is not a multiple of {unit} B"
                )
            }
            Error::ZeroSeeds => f.write_str("an experiment needs at least one seed"),
            Error::BadParameter(what) => write!(f, "bad parameter: {what}"),
            Error::BadBiasSetup(what) => write!(f, "bad bias setup: {what}"),
            Error::NoSuchCpu { cpu, cpus } => {
                write!(f, "cpu {cpu} does not exist (the zone has {cpus})")
            }
            Error::BadKernelVersion => {
                write!(
                    f,
                    "kernel version must be a release given as major.minor, one of {} (e.g. 5.4, 6.8; a later kernel follows the 5.10 rules: give 5.10)",
                    crate::KernelVersion::KNOWN
                )
            }
        }
    }
}

impl core::error::Error for Error {}
