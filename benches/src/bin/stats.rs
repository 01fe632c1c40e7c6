//! Raw output of any scalrand generator, for statistical batteries, or the quick z-scores of
//! `--smoke`. `cargo xtask stats GEN --dieharder` pipes it into `dieharder -g 200 -a`;
//! `--help` lists the options.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use scalrand_benches::{args, sources, stats};
use serde::Serialize;

const EXAMPLES: &str = "\
Examples:
  stats --list                                   the generators
  stats xoroshiro128plusplus --bytes 4MiB > x.bin
  stats percpu | dieharder -g 200 -a             raw bytes until the reader stops
  stats fortuna-aes-concurrent --smoke --json    the z-scores, as JSON";

/// Raw output of scalrand's generators for statistical batteries (dieharder, PractRand).
#[derive(Debug, Parser)]
#[command(name = "stats", version, after_help = EXAMPLES)]
struct Args {
    /// The generator (`--list` describes them)
    #[arg(value_name = "GEN", required_unless_present = "list",
          value_parser = clap::builder::PossibleValuesParser::new(names()),
          hide_possible_values = true)]
    generator: Option<String>,
    /// List the generators and exit
    #[arg(long)]
    list: bool,
    /// Bytes to write, e.g. 4096 or 8MiB; 0 = until the reader stops (with --smoke: 8MiB)
    #[arg(long, value_name = "SIZE", default_value = "0", value_parser = args::byte_size,
          allow_negative_numbers = true)]
    bytes: u64,
    /// Seed of the seedable generators (the OS-seeded ones ignore it)
    #[arg(long, value_name = "S", default_value_t = 0x5ca1_ab1e, value_parser = args::seed,
          allow_negative_numbers = true)]
    seed: u64,
    /// Print the quick z-scores (monobit, byte chi-square, serial correlation) instead
    #[arg(long)]
    smoke: bool,
    /// With --smoke: the scores as JSON
    #[arg(long, requires = "smoke")]
    json: bool,
}

fn names() -> Vec<&'static str> {
    sources::all().into_iter().map(|e| e.0).collect()
}

/// The `--smoke --json` output.
#[derive(Debug, Serialize)]
struct Smoke<'a> {
    generator: &'a str,
    bytes: usize,
    z_limit: f64,
    scores: Vec<Score>,
    pass: bool,
}

/// One test's z-score.
#[derive(Debug, Serialize)]
struct Score {
    test: &'static str,
    z: f64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("stats: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<ExitCode, String> {
    if args.list {
        for (name, what, _) in sources::all() {
            println!("{name:<24} {what}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    // Raw bytes go to stdout: never to a terminal (checked before the generator is built).
    args::refuse_terminal(!args.smoke, std::io::stdout().is_terminal())?;
    let name = args.generator.as_deref().unwrap_or_default();
    let mut source = sources::by_name(name, args.seed)
        .ok_or_else(|| format!("unknown generator {name:?}; `stats --list` lists them"))?
        .map_err(|e| format!("{name}: {e}"))?;
    if args.smoke {
        let n = if args.bytes == 0 { 8 << 20 } else { args.bytes };
        let n = usize::try_from(n).map_err(|_| format!("--bytes {n} does not fit in memory"))?;
        let mut buf = vec![0u8; n];
        source(&mut buf);
        let verdict = stats::smoke(&buf);
        if args.json {
            let report = Smoke {
                generator: name,
                bytes: n,
                z_limit: stats::Z_LIMIT,
                scores: stats::scores(&buf)
                    .into_iter()
                    .map(|(test, z)| Score { test, z })
                    .collect(),
                pass: verdict.is_ok(),
            };
            let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
            println!("{json}");
        } else {
            for (test, z) in stats::scores(&buf) {
                println!("{name}: {test:<20} z = {z:+.3}");
            }
            match &verdict {
                Ok(()) => println!("{name}: PASS (|z| <= {})", stats::Z_LIMIT),
                Err(e) => println!("{name}: FAIL {e}"),
            }
        }
        return Ok(if verdict.is_ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let mut out = std::io::stdout().lock();
    let mut buf = vec![0u8; 1 << 16];
    let mut left = args.bytes;
    loop {
        let n = if args.bytes == 0 {
            buf.len()
        } else {
            usize::try_from(left).unwrap_or(usize::MAX).min(buf.len())
        };
        if n == 0 {
            break;
        }
        source(&mut buf[..n]);
        if out.write_all(&buf[..n]).is_err() {
            // The reader (dieharder) closed the pipe: done.
            break;
        }
        left = left.saturating_sub(n as u64);
    }
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}
