//! The chi-square p-value against mpmath (`tests/data/chi2_ref.py`, output committed as
//! `tests/data/chi2_ref.txt`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

use scalrand_shuffle::bias::{chi2_sf, gamma_q};

#[test]
fn matches_mpmath() {
    let data = include_str!("data/chi2_ref.txt");
    let mut n = 0;
    for line in data.lines() {
        let f: Vec<f64> = line
            .split_whitespace()
            .map(|s| s.parse().unwrap())
            .collect();
        let (df, x, want) = (f[0], f[1], f[2]);
        let got = chi2_sf(x, df);
        let rel = ((got - want) / want).abs();
        assert!(
            rel < 1e-10,
            "df {df} x {x}: got {got:e}, mpmath {want:e} (rel err {rel:e})"
        );
        n += 1;
    }
    assert_eq!(n, 23);
}

#[test]
fn edges() {
    assert_eq!(chi2_sf(0.0, 3.0), 1.0);
    assert_eq!(chi2_sf(-1.0, 3.0), 1.0);
    assert!(chi2_sf(1.0, 0.0).is_nan());
    assert!(chi2_sf(f64::NAN, 2.0).is_nan());
    assert_eq!(chi2_sf(f64::INFINITY, 2.0), 0.0);
    assert!(gamma_q(-1.0, 1.0).is_nan());
    // Q(1, x) = e^{-x} exactly.
    for x in [0.1, 1.0, 2.5, 7.0, 30.0] {
        assert!((gamma_q(1.0, x) - (-x).exp()).abs() < 1e-14);
    }
}
