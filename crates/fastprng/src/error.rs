//! Errors of this crate.

use core::fmt;

/// Everything that can go wrong in scalrand-fastprng. Each variant is a bad input; none is a
/// run-time failure of a generator, which cannot fail once built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The state `(0, 0)`: the xoroshiro engine's fixed point, which outputs zeros forever.
    ZeroState,
    /// A [`PerCpu`](crate::PerCpu) with zero slots was asked for.
    NoSlots,
    /// `with_cpu` was given a CPU number outside `0..cpus`.
    CpuOutOfRange {
        /// The CPU number given.
        cpu: usize,
        /// The number of CPUs the `PerCpu` was built for.
        cpus: usize,
    },
    /// More slots were asked for than a `PerCpu` supports ([`MAX_CPUS`](crate::MAX_CPUS)).
    TooManySlots {
        /// The number asked for.
        requested: usize,
    },
    /// The operating system's entropy source failed while seeding (std only).
    Entropy,
    /// Every try-lock slot stayed busy for [`BUSY_SWEEPS`](crate::BUSY_SWEEPS) sweeps (a
    /// closure passed to `with_cpu` that calls the same `PerCpu` again, or more callers than
    /// slots with their holders preempted).
    SlotsBusy,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ZeroState => f.write_str("the all-zero state is invalid for xoroshiro128"),
            Error::NoSlots => f.write_str("a PerCpu needs at least one CPU slot"),
            Error::CpuOutOfRange { cpu, cpus } => {
                write!(f, "CPU {cpu} is outside this PerCpu's 0..{cpus}")
            }
            Error::TooManySlots { requested } => write!(
                f,
                "{requested} CPU slots requested, more than the supported {}",
                crate::MAX_CPUS
            ),
            Error::Entropy => f.write_str("the operating system's entropy source failed"),
            Error::SlotsBusy => f.write_str("every per-CPU slot stayed busy"),
        }
    }
}

impl core::error::Error for Error {}
