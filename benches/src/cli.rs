//! The progress bar the `scaling` and `stats` binaries share (their arguments and checks are
//! in [`crate::args`]).

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

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
