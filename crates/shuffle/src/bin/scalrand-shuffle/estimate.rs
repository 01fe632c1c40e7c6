//! What a long command (`simulate`, `bias`, `calibrate`) is about to cost, said before it starts:
//! work units, a rough time and the memory, on stderr; a run over its command's cap is refused
//! unless `--force`, and one that needs more memory than the machine has available is refused.
//!
//! The rough time is the work units times a cost per unit measured on a 2-vCPU x86_64 (AMD
//! EPYC) in a release build; a debug build is several times slower.

use std::format;
use std::string::String;

use crate::CliError;

/// One command's estimate.
#[derive(Debug)]
pub(crate) struct Estimate {
    /// What one work unit is, plural (`"shuffle steps"`).
    pub(crate) unit: &'static str,
    /// Work units the run does.
    pub(crate) units: u64,
    /// Measured cost of one unit, nanoseconds of one core.
    pub(crate) ns_per_unit: f64,
    /// Threads the work spreads over (1 for a serial run).
    pub(crate) threads: usize,
    /// Bytes of memory the run needs at most.
    pub(crate) memory: u64,
    /// The most work units the command runs without `--force`.
    pub(crate) cap: u64,
    /// The flags that size the work, for the refusal's advice.
    pub(crate) sized_by: &'static str,
}

impl Estimate {
    /// Core-seconds the run takes, roughly.
    fn cpu_seconds(&self) -> f64 {
        self.units as f64 * self.ns_per_unit * 1e-9
    }

    /// The estimate, one line.
    pub(crate) fn line(&self) -> String {
        let cpu = self.cpu_seconds();
        let threads = self.threads.max(1);
        format!(
            "estimate: {} {} (cap {} without --force), {} on {} thread{}, {} of memory",
            units(self.units),
            self.unit,
            units(self.cap),
            duration(cpu / threads as f64),
            threads,
            if threads == 1 { "" } else { "s" },
            human(self.memory)
        )
    }

    /// Refuses a run that needs more memory than is available, or more work units than the
    /// cap without `force` (the refusal carries the estimate); otherwise prints the estimate to
    /// stderr unless `quiet`.
    pub(crate) fn check(&self, force: bool, quiet: bool) -> Result<(), CliError> {
        if let Some(avail) = available_memory()
            && self.memory > avail
        {
            return Err(CliError(format!(
                "this run needs about {} of memory and {} is available: ask for less ({})",
                human(self.memory),
                human(avail),
                self.sized_by
            )));
        }
        if self.units > self.cap && !force {
            return Err(CliError(format!(
                "this run is {} {}, {} of CPU time, over the cap of {} ({}): ask for less ({}) or pass --force to run it anyway",
                units(self.units),
                self.unit,
                duration(self.cpu_seconds()),
                units(self.cap),
                duration(self.cap as f64 * self.ns_per_unit * 1e-9),
                self.sized_by
            )));
        }
        if !quiet {
            std::eprintln!("{}", self.line());
        }
        Ok(())
    }
}

/// `MemAvailable` from `/proc/meminfo`, in bytes (Linux); `None` elsewhere.
pub(crate) fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Bytes as GiB or MiB, one decimal.
pub(crate) fn human(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    }
}

/// A count with three significant digits and an exponent when large (`2.00e14`).
fn units(n: u64) -> String {
    if n < 1_000_000 {
        format!("{n}")
    } else {
        format!("{:.2e}", n as f64)
    }
}

/// Seconds, in the largest unit that keeps the number readable.
fn duration(s: f64) -> String {
    if !s.is_finite() {
        return "forever".into();
    }
    if s < 1.0 {
        "under a second".into()
    } else if s < 120.0 {
        format!("about {s:.0} s")
    } else if s < 2.0 * 3600.0 {
        format!("about {:.0} min", s / 60.0)
    } else if s < 2.0 * 86_400.0 {
        format!("about {:.0} h", s / 3600.0)
    } else if s < 2.0 * 365.25 * 86_400.0 {
        format!("about {:.0} days", s / 86_400.0)
    } else {
        format!("about {:.0} years", s / (365.25 * 86_400.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_units_read_well() {
        assert_eq!(duration(0.2), "under a second");
        assert_eq!(duration(90.0), "about 90 s");
        assert_eq!(duration(600.0), "about 10 min");
        assert_eq!(duration(3.0 * 3600.0), "about 3 h");
        assert_eq!(duration(10.0 * 86_400.0), "about 10 days");
        assert_eq!(duration(1e12), "about 31688 years");
        assert_eq!(units(999_999), "999999");
        assert_eq!(units(200_000_000_000_000), "2.00e14");
    }
}
