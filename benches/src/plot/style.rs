//! What both scaling figures share in how they look and read: the font, the series colours,
//! the titles, and the numbers and key points of their axes.

use plotters::style::RGBColor;

use crate::report::Report;

/// Font family every text of the plot uses (registered by
/// [`register_fonts`](super::output::register_fonts)).
pub(super) const FONT: &str = "sans-serif";

/// Line colours (ColorBrewer Dark2, then grey), one per series of a panel of up to 8 series;
/// larger panels get evenly spaced hues instead ([`colour`]), so no two lines share a colour.
const COLOURS: [RGBColor; 8] = [
    RGBColor(0x1b, 0x9e, 0x77),
    RGBColor(0xd9, 0x5f, 0x02),
    RGBColor(0x75, 0x70, 0xb3),
    RGBColor(0xe7, 0x29, 0x8a),
    RGBColor(0x66, 0xa6, 0x1e),
    RGBColor(0xe6, 0xab, 0x02),
    RGBColor(0xa6, 0x76, 0x1d),
    RGBColor(0x66, 0x66, 0x66),
];

/// The colour of series `i` of a panel of `n` series: distinct from every other series of the
/// panel.
pub fn colour(i: usize, n: usize) -> RGBColor {
    if n <= COLOURS.len() {
        return COLOURS[i % COLOURS.len()];
    }
    // Evenly spaced hues, dark enough to read on white: HSL (k / n, 0.75, 0.4) as RGB, where
    // series i takes hue k = i * step mod n with a step coprime to n near n / 3, so that
    // series listed next to each other in the legend are far apart on the colour wheel.
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let step = (n / 3..n).find(|&s| s > 0 && gcd(s, n) == 1).unwrap_or(1);
    let h = ((i * step) % n) as f64 / n as f64 * 6.0;
    let (s, l) = (0.75, 0.40);
    let c = (1.0 - (2.0 * l - 1.0_f64).abs()) * s;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    RGBColor(byte(r), byte(g), byte(b))
}

/// `v` with an SI prefix and at most three significant digits: `10M`, `1.5G`, `250k`.
pub fn si(v: f64) -> String {
    for (d, p) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if v >= d * 0.9995 {
            return format!("{}{p}", three_digits(v / d));
        }
    }
    three_digits(v)
}

/// `x` (at least 0) with at most three significant digits and no trailing zeros.
fn three_digits(x: f64) -> String {
    let decimals = if x >= 99.95 {
        0
    } else if x >= 9.995 {
        1
    } else {
        2
    };
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// The machine in words: `2 CPUs, Intel(R) Xeon(R) Processor, ChaCha backend Avx512`.
pub(super) fn machine(report: &Report) -> String {
    let mut s = format!("{} CPUs", report.cpus);
    if let Some(m) = &report.cpu_model {
        s.push_str(&format!(", {m}"));
    }
    if let Some(b) = &report.backend {
        s.push_str(&format!(", ChaCha backend {b}"));
    }
    s
}

/// A group's title in plain words (its name where there is none).
pub fn title(group: &str) -> String {
    match group {
        "fast u64" => "Fast, non-cryptographic numbers: u64 per call",
        "crypto 32B" => "Secure random bytes, 32-byte reads (a key)",
        "crypto 4KiB" => "Secure random bytes, 4 KiB reads",
        "numa 4x4 explicit topology 32B" => "Per-node pools (4 nodes x 4 CPUs) vs one lock, 32 B",
        "fortuna 4KiB" => "Fortuna, AES-256 (4 KiB): outside the lock vs inside",
        "fortuna ChaCha20 4KiB" => "Fortuna, ChaCha20 (4 KiB): outside the lock vs inside",
        other => other,
    }
    .to_owned()
}

/// Log-scale key points for `lo..=hi` decades: 1, 2 and 5 times each decade while there are
/// few decades, the decades alone past four.
pub(super) fn log_ticks(lo: i32, hi: i32) -> Vec<f64> {
    let steps: &[f64] = if hi - lo <= 4 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    (lo..=hi)
        .flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e)))
        .filter(|v| *v <= 10f64.powi(hi) * 1.0001)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{colour, log_ticks, si};

    #[test]
    fn ticks_read_as_numbers() {
        assert_eq!(si(1.5e9), "1.5G");
        assert_eq!(si(250e3), "250k");
        assert_eq!(si(12.34e6), "12.3M");
        assert_eq!(si(1e6), "1M");
        assert_eq!(si(0.0), "0");
        assert_eq!(log_ticks(6, 7), [1e6, 2e6, 5e6, 1e7]);
        assert_eq!(log_ticks(1, 7).len(), 7);
    }

    #[test]
    fn colours_are_distinct_within_a_panel() {
        for n in 1..=16 {
            let cs: Vec<_> = (0..n).map(|i| colour(i, n)).collect();
            for i in 0..n {
                for j in 0..i {
                    assert_ne!(cs[i], cs[j], "{n} series: {i} and {j} share a colour");
                }
            }
        }
    }
}
