//! How much of a long test campaign to run: every trial, or an even sample of them.
//!
//! The campaigns that signal reads at spread instructions under `ptrace`, storm a reader with
//! signals, fork in the middle of reads or fork from handlers at every read length take most
//! of a ChaCha backend's test time (a minute or more in unoptimised builds and on the
//! portable backend, 2 vCPUs). `SCALRAND_CAMPAIGN`
//! chooses: unset or `full`, every trial (what `cargo test` runs, and what `cargo xtask ci`
//! runs when the variable is set to `full`); `sample`, an even spread of them, the same
//! points every run (what `cargo xtask ci` runs by default on the forced backends and in
//! unoptimised builds). Anything else is refused, naming the variable.

/// The environment variable that picks the campaign size.
pub const VAR: &str = "SCALRAND_CAMPAIGN";

/// Whether this run takes every trial (`SCALRAND_CAMPAIGN` unset or `full`) or a sample
/// (`sample`).
///
/// # Panics
/// On any other value, naming the variable and what it accepts.
pub fn full() -> bool {
    match std::env::var(VAR).as_deref() {
        Err(_) | Ok("" | "full") => true,
        Ok("sample") => false,
        Ok(other) => panic!("{VAR}={other:?}: expected `full` or `sample`"),
    }
}

/// `full` trials in a full campaign, `sample` in a sampled one.
pub fn trials(full: usize, sample: usize) -> usize {
    if self::full() { full } else { sample }
}

/// The items of `items` a campaign visits: all of them in a full campaign; in a sampled one
/// every `every`-th, the first and the last always included, so the ends of a range of lengths
/// stay covered.
pub fn spread<T: Copy>(items: &[T], every: usize) -> Vec<T> {
    pick(items, if full() { 1 } else { every })
}

/// Every `every`-th item of `items` (all of them for 0 or 1), and the last.
fn pick<T: Copy>(items: &[T], every: usize) -> Vec<T> {
    let every = every.max(1);
    let last = items.len().saturating_sub(1);
    items
        .iter()
        .enumerate()
        .filter(|&(i, _)| i % every == 0 || i == last)
        .map(|(_, &x)| x)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::pick;

    #[test]
    fn a_sample_keeps_both_ends_and_an_even_spread() {
        let items: Vec<u32> = (1..=10).collect();
        assert_eq!(pick(&items, 4), [1, 5, 9, 10]);
        assert_eq!(pick(&items, 1), items);
        assert_eq!(pick(&items, 0), items);
        assert_eq!(pick(&items, 20), [1, 10]);
        assert_eq!(pick::<u32>(&[], 3), Vec::<u32>::new());
    }
}
