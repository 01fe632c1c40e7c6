//! The `serde` feature: experiment configs and reports survive a JSON round trip.

#![cfg(feature = "serde")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::presets::{PRESETS, preset};
use scalrand_shuffle::{ExperimentConfig, ExperimentResult, KernelVersion, run_experiment};

#[test]
fn every_preset_round_trips() {
    for name in PRESETS {
        let cfg = preset(name).unwrap();
        let text = serde_json::to_string(&cfg).unwrap();
        let back: ExperimentConfig = serde_json::from_str(&text).unwrap();
        assert_eq!(back, cfg, "{name}");
    }
}

#[test]
fn kernel_versions_serialize_as_their_first_release() {
    assert_eq!(
        serde_json::to_string(&KernelVersion::ALL).unwrap(),
        r#"["5.2","5.7","5.10"]"#
    );
}

#[test]
fn a_result_round_trips() {
    let mut cfg = preset("tiny").unwrap();
    cfg.aging_rounds = 1;
    cfg.seeds = vec![3];
    let r = run_experiment::<Xoroshiro128PlusPlus>(&cfg, &mut |_, _| {}).unwrap();
    let back: ExperimentResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}
