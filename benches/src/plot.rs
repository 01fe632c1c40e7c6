//! The scaling figures, each drawn once and put on plotters' SVG and bitmap backends:
//!
//! * the headline ([`draw`], [`write_svg`], [`write_png`]): `scalrand::fill_bytes` against
//!   rand's `ThreadRng`, the vDSO getrandom and `getrandom::fill` on 32-byte reads, and
//!   `scalrand::fast` against `fastrand`, as bars of the median over the run's processes with
//!   their interquartile range and min–max, one bar per thread count, on linear axes;
//! * every group ([`draw_groups`], [`write_groups_svg`], [`write_groups_png`]): one panel per
//!   group, aggregate throughput (log scale) against threads (log scale), baselines dashed,
//!   the spread over the processes as a bar at each point.
//!
//! Text is DejaVu Sans (the `dejavu` crate), rendered by plotters' pure-Rust `ab_glyph`
//! support, so no system font is needed.
//!
//! Each figure has a file of its own (`headline`, `groups`); `style` holds the font, colours,
//! titles and axis labels both use, and `output` the error type, the font registration and the
//! PNG encoding.

mod groups;
mod headline;
mod output;
mod style;

pub use groups::{draw_groups, groups_size, write_groups_png, write_groups_svg};
pub use headline::{draw, short_name, size, write_png, write_svg};
pub use output::PlotError;
pub use style::{colour, si, title};
