//! `bias`: the shuffle's position bias, as JSON or a table.

use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, println};

use rand_core::SeedableRng;
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::{BiasReport, ShuffleMode, measure_bias};
use serde::Serialize;

use crate::CliError;
use crate::args::{BiasArgs, ModeArg};
use crate::simulate::mode_name;

/// The `--json` report of `bias`.
#[derive(Debug, Serialize)]
pub(crate) struct BiasJson<'a> {
    pub(crate) mode: &'static str,
    pub(crate) blocks: usize,
    pub(crate) trials: u64,
    pub(crate) chi2: f64,
    pub(crate) df: u64,
    pub(crate) chi2_p: f64,
    pub(crate) fixed_point_rate: f64,
    pub(crate) uniform_fixed_point_rate: f64,
    pub(crate) max_rel_dev: f64,
    pub(crate) counts: &'a [Vec<u64>],
}

pub(crate) fn bias(a: BiasArgs) -> Result<(), CliError> {
    let mode = match a.mode {
        ModeArg::Kernel => ShuffleMode::Kernel,
        ModeArg::FisherYates => ShuffleMode::FisherYates,
    };
    let r = measure_bias(
        mode,
        scalrand_shuffle::SHUFFLE_ORDER,
        a.blocks,
        a.trials,
        Xoroshiro128PlusPlus::seed_from_u64(a.seed),
    )?;
    if a.json {
        let j = BiasJson {
            mode: mode_name(mode),
            blocks: r.blocks,
            trials: r.trials,
            chi2: r.chi2,
            df: r.df,
            chi2_p: r.chi2_p,
            fixed_point_rate: r.fixed_point_rate,
            uniform_fixed_point_rate: 1.0 / r.blocks as f64,
            max_rel_dev: r.max_rel_dev,
            counts: &r.counts,
        };
        println!(
            "{}",
            serde_json::to_string(&j).map_err(|e| CliError(e.to_string()))?
        );
    } else {
        print_bias(mode, &r);
    }
    Ok(())
}

pub(crate) fn print_bias(mode: ShuffleMode, r: &BiasReport) {
    println!(
        "{} shuffle of {} order-10 blocks, {} trials",
        mode_name(mode),
        r.blocks,
        r.trials
    );
    println!(
        "position-bias matrix (count / expected; rows: blocks in PFN order, columns: list position from head)"
    );
    let expected = r.trials as f64 / r.blocks as f64;
    if r.blocks <= 16 {
        for row in &r.counts {
            let cells: Vec<String> = row
                .iter()
                .map(|&c| format!("{:5.2}", c as f64 / expected))
                .collect();
            println!("  {}", cells.join(" "));
        }
    }
    println!(
        "chi-square {:.1} on {} df: p = {:.3e}",
        r.chi2, r.df, r.chi2_p
    );
    println!(
        "fixed-point rate {:.4} (uniform: {:.4})",
        r.fixed_point_rate,
        1.0 / r.blocks as f64
    );
    println!("largest |count/expected - 1|: {:.3}", r.max_rel_dev);
}
