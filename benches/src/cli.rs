//! Pieces the `scaling` and `stats` binaries share: typed values for clap (thread counts, byte
//! sizes) and the progress bar.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// One thread count: a whole number of at least 1 (`--threads 1,2,4` splits on commas first).
pub fn thread_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("a thread count is at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{s:?} is not a thread count: {e}")),
    }
}

/// A byte count: a whole number with an optional binary suffix, `4096`, `64KiB`, `8MiB`,
/// `1GiB` (`K`, `M`, `G` and `T` alone mean the same; a trailing `B` is allowed).
pub fn byte_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size: expected a number like 4096 or 8MiB"))?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(format!(
                "unknown size suffix {other:?}: use KiB, MiB, GiB or TiB"
            ));
        }
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} does not fit in 64 bits"))
}

/// A progress bar of `len` steps on stderr, drawn only when stderr is a terminal, and never
/// when `quiet`.
pub fn progress(len: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} (eta {eta}) {wide_msg}",
    ) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(byte_size("4096"), Ok(4096));
        assert_eq!(byte_size("64KiB"), Ok(64 << 10));
        assert_eq!(byte_size("8MiB"), Ok(8 << 20));
        assert_eq!(byte_size("1g"), Ok(1 << 30));
        assert_eq!(byte_size("0"), Ok(0));
        assert!(byte_size("8 parsecs").is_err());
        assert!(byte_size("MiB").is_err());
        assert!(byte_size("99999999999TiB").is_err());
    }

    #[test]
    fn thread_counts() {
        assert_eq!(thread_count(" 4"), Ok(4));
        assert!(thread_count("0").is_err());
        assert!(thread_count("x").is_err());
    }
}
