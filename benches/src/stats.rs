//! Quick statistical smoke tests (not a battery): enough to make a broken generator fail fast
//! in CI. The real verdicts come from `cargo xtask stats GEN --dieharder` (see QUALITY.md).
//!
//! Each test returns a z-score that is approximately standard normal for a good generator;
//! [`smoke`] fails a stream when any |z| exceeds [`Z_LIMIT`] (a 5-sigma event, about one in
//! 1.7 million per test for an ideal generator).

/// The |z| above which [`smoke`] rejects a stream.
pub const Z_LIMIT: f64 = 5.0;

/// Monobit (NIST SP 800-22 §2.1): the count of one bits against n/2.
pub fn monobit_z(data: &[u8]) -> f64 {
    let ones: u64 = data.iter().map(|b| u64::from(b.count_ones())).sum();
    let n = data.len() as f64 * 8.0;
    (ones as f64 - n / 2.0) / (n / 4.0).sqrt()
}

/// Byte-frequency chi-square over 256 cells (255 degrees of freedom), turned into a z-score by
/// the Wilson–Hilferty cube-root approximation.
pub fn byte_chi2_z(data: &[u8]) -> f64 {
    let mut counts = [0u64; 256];
    for &b in data {
        counts[usize::from(b)] += 1;
    }
    let expected = data.len() as f64 / 256.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| {
            let d = c as f64 - expected;
            d * d / expected
        })
        .sum();
    let k = 255.0;
    ((chi2 / k).cbrt() - (1.0 - 2.0 / (9.0 * k))) / (2.0 / (9.0 * k)).sqrt()
}

/// Serial correlation of consecutive bytes (Knuth, TAOCP vol. 2, §3.3.2 K), scaled by sqrt(n):
/// for independent uniform bytes the coefficient is about N(0, 1/n).
pub fn serial_correlation_z(data: &[u8]) -> f64 {
    let n = data.len();
    if n < 2 {
        return 0.0;
    }
    let (mut sx, mut sxx, mut sxy) = (0f64, 0f64, 0f64);
    for i in 0..n {
        let x = f64::from(data[i]);
        let y = f64::from(data[(i + 1) % n]);
        sx += x;
        sxx += x * x;
        sxy += x * y;
    }
    let nf = n as f64;
    let r = (nf * sxy - sx * sx) / (nf * sxx - sx * sx);
    r * nf.sqrt()
}

/// The three z-scores of `data`, by name.
pub fn scores(data: &[u8]) -> [(&'static str, f64); 3] {
    [
        ("monobit", monobit_z(data)),
        ("byte chi-square", byte_chi2_z(data)),
        ("serial correlation", serial_correlation_z(data)),
    ]
}

/// `Err` with a description when any score of `data` is beyond [`Z_LIMIT`].
pub fn smoke(data: &[u8]) -> Result<(), String> {
    let bad: Vec<String> = scores(data)
        .iter()
        .filter(|(_, z)| z.is_nan() || z.abs() > Z_LIMIT)
        .map(|(name, z)| format!("{name}: z = {z:.2}"))
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(bad.join(", "))
    }
}
