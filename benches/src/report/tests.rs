//! Tests of the scaling report: the spreads, ratios and Amdahl fit it computes, its markdown
//! tables and warnings, and its JSON round trip.

use super::*;

fn report() -> Report {
    let series = |name: &str, baseline, a, b| Series {
        name: name.to_owned(),
        baseline,
        recommended: !baseline,
        points: vec![
            Point {
                threads: 1,
                per_sec: a,
                spread: None,
            },
            Point {
                threads: 2,
                per_sec: b,
                spread: None,
            },
        ],
    };
    Report {
        cpus: 2,
        cpu_model: None,
        backend: None,
        threads: vec![1, 2],
        duration_ms: 400,
        repeat: 5,
        processes: false,
        full: false,
        pinned: false,
        groups: vec![Group {
            name: "fast u64".to_owned(),
            unit: Unit::Ops,
            series: vec![
                series("ours", false, 100e6, 200e6),
                series("Mutex", true, 50e6, 10e6),
            ],
            ratios: vec![],
        }],
    }
}

#[test]
fn spread_is_median_quartiles_and_extremes() {
    let s = Spread::of(&[5.0, 1.0, f64::NAN, 3.0, 2.0, 4.0]).unwrap();
    assert_eq!(
        (s.median, s.q1, s.q3, s.min, s.max, s.n),
        (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    );
    let s = Spread::of(&[1.0, 2.0]).unwrap();
    assert_eq!((s.median, s.q1, s.q3), (1.5, 1.25, 1.75));
    assert!(Spread::of(&[f64::INFINITY]).is_none());
}

/// A run in processes reports each point's interquartile range and each ratio's median
/// over the processes, with its spread; the header names the machine and the backend.
#[test]
fn per_process_ratios_and_spreads_are_reported() {
    let mut r = report();
    r.processes = true;
    r.full = true;
    r.repeat = 15;
    r.cpu_model = Some("Some CPU".to_owned());
    r.backend = Some("Avx2".to_owned());
    r.groups[0].series[0].points[0].spread = Spread::of(&[90e6, 100e6, 110e6]);
    let runs = vec![1.9, 2.1, 2.0, 1.8, 2.2];
    r.groups[0].ratios.push(Ratio {
        ours: "ours".to_owned(),
        baseline: "Mutex".to_owned(),
        threads: 1,
        spread: Spread::of(&runs).unwrap(),
        runs,
    });
    let md = r.markdown();
    assert!(
        md.starts_with(
            "Measured by `cargo xtask scaling --full` on 2 CPUs, Some CPU, ChaCha backend \
             Avx2 (400 ms x 15 alternated processes, median)."
        ),
        "{md}"
    );
    assert!(
        md.contains("| ours | 100.0 M/s (95.0–105.0) | 200.0 M/s |"),
        "{md}"
    );
    assert!(
        md.contains("- ours: 2.00x (1.90–2.10, 1.80–2.20) Mutex"),
        "{md}"
    );
    // Where no per-process ratio was kept (2 threads here), the medians' ratio.
    assert!(md.contains("Ratios at 2 threads (ours / baseline):\n\n- ours: 20.00x Mutex"));
    let back: Report = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}

#[test]
fn markdown_has_the_table_and_the_ratios() {
    let md = report().markdown();
    assert!(md.starts_with("Measured by `cargo xtask scaling` on 2 CPUs (400 ms x 5 runs"));
    assert!(md.contains(
        "| generator | 1 thr | 2 thr | 2/1 thr | serial s | bound 16 CPUs | bound 64 CPUs | bound 256 CPUs |\n|---|---:|---:|---:|---:|---:|---:|---:|\n"
    ));
    // Perfect doubling fits s = 0: the bound is linear in the CPUs.
    assert!(md.contains(
        "| ours | 100.0 M/s | 200.0 M/s | 2.00x | 0.000 | 1600.0 M/s | 6400.0 M/s | 25600.0 M/s |"
    ));
    // A row that slows down is all serial: never above one thread.
    assert!(md.contains(
        "| Mutex *(baseline)* | 50.0 M/s | 10.0 M/s | 0.20x | 1.000 | 50.0 M/s | 50.0 M/s | 50.0 M/s |"
    ));
    assert!(md.contains("Ratios at 1 thread (ours / baseline):\n\n- ours: 2.00x Mutex"));
    assert!(md.contains("Ratios at 2 threads (ours / baseline):\n\n- ours: 20.00x Mutex"));
}

#[test]
fn columns_are_explained_and_two_points_warned_about() {
    let md = report().markdown();
    assert!(md.contains("`serial s` is the fraction of"));
    assert!(md.contains("`bound N CPUs` is one thread's throughput"));
    assert!(md.contains("**Warnings:**\n\n- The serial and bound columns come from two points"));
    // The report's best row doubled: not disturbed.
    assert_eq!(report().warnings().len(), 1);
}

#[test]
fn a_group_where_nothing_scaled_is_flagged() {
    let mut r = report();
    r.groups[0].series[0].points[1].per_sec = 130e6; // 1.3x at 2 threads, the best row
    let w = r.warnings();
    assert!(
        w.iter()
            .any(|w| w.starts_with("fast u64: no row scaled above 1.30x from 1 to 2 threads")),
        "{w:?}"
    );
    assert!(r.markdown().contains("the run looks disturbed"));
}

#[test]
fn more_threads_than_cpus_and_missing_points_are_named() {
    let mut r = report();
    r.threads = vec![1, 2, 4];
    for s in &mut r.groups[0].series {
        s.points.push(Point {
            threads: 4,
            per_sec: 0.0,
            spread: None,
        });
    }
    let w = r.warnings();
    assert!(w[0].starts_with("4 threads on 2 CPUs"), "{w:?}");
    assert_eq!(w.len(), 1, "{w:?}");
    // A zero baseline gives n/a, never NaN or inf.
    let md = r.markdown();
    assert!(md.contains("- ours: n/a Mutex"), "{md}");
    assert!(!md.contains("NaN") && !md.contains("inf"));
}

#[test]
fn amdahl_fit() {
    let r = report();
    let ours = &r.groups[0].series[0];
    assert_eq!(ours.serial_fraction(), Some(0.0));
    // 1.5x on 2 threads: s = (2 / 1.5 - 1) / 1 = 1/3; at 16 CPUs 1 / (1/3 + 2/3/16) = 2.67x.
    let mut third = ours.clone();
    third.points[1].per_sec = 150e6;
    let s = third.serial_fraction().unwrap();
    assert!((s - 1.0 / 3.0).abs() < 1e-12);
    let b = third.amdahl_bound(16).unwrap();
    assert!((b - 100e6 / (1.0 / 3.0 + 2.0 / 3.0 / 16.0)).abs() < 1.0);
}

#[test]
fn json_round_trips() {
    let r = report();
    let json = serde_json::to_string_pretty(&r).unwrap();
    assert!(json.contains("\"unit\": \"ops\""));
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
}

/// The report's first lines compare each headline scalrand row with its group's baseline,
/// each side named with its rounds and key erasure: `scalrand::fill_bytes` (ChaCha20, key
/// erasure) and the pools at ChaCha12 (key erasure) against `rand::rng()` (ChaCha12, none).
#[test]
fn headline_lines_name_rounds_and_erasure() {
    let point = |threads, per_sec| Point {
        threads,
        per_sec,
        spread: None,
    };
    let series = |name: &str, baseline, a, b| Series {
        name: name.to_owned(),
        baseline,
        recommended: false,
        points: vec![point(1, a), point(2, b)],
    };
    let mut r = report();
    let runs = vec![0.8, 0.82, 0.85];
    r.groups.insert(
        0,
        Group {
            name: "crypto 32B".to_owned(),
            unit: Unit::Bytes,
            series: vec![
                series("scalrand::fill_bytes (crypto facade)", false, 820e6, 1560e6),
                series(
                    "scalrand NodePools, ChaCha12 output (with_rounds)",
                    false,
                    1100e6,
                    2200e6,
                ),
                series("rand ThreadRng (rand::rng())", true, 1000e6, 2000e6),
            ],
            ratios: vec![Ratio {
                ours: "scalrand::fill_bytes (crypto facade)".to_owned(),
                baseline: "rand ThreadRng (rand::rng())".to_owned(),
                threads: 1,
                spread: Spread::of(&runs).unwrap(),
                runs,
            }],
        },
    );
    let lines = r.headline_lines();
    assert_eq!(
        lines,
        [
            "scalrand::fill_bytes (crypto facade) [ChaCha20, fast key erasure] / rand ThreadRng \
             (rand::rng()) [ChaCha12, no key erasure]: 0.82x (0.81–0.83) at 1 thread, 0.78x at \
             2 threads",
            "scalrand NodePools, ChaCha12 output (with_rounds) [ChaCha12, fast key erasure] / \
             rand ThreadRng (rand::rng()) [ChaCha12, no key erasure]: 1.10x at 1 thread, 1.10x \
             at 2 threads",
        ]
    );
    let md = r.markdown();
    assert!(md.contains("**Against what programs call today**"), "{md}");
    assert!(md.contains(&format!("- {}\n", lines[1])), "{md}");
    // "fast u64" has no headline rows in this report: no line for it.
    assert!(!md.contains("- ours /"), "{md}");
}
