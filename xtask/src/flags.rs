//! The command line, declared (clap's derive API): every command, flag and value type is here,
//! so `cargo xtask --help` and `cargo xtask COMMAND --help` are generated from one place and
//! a bad flag exits 2 naming it.

use clap::{Args, Parser, Subcommand};

use crate::step::Step;

const EXAMPLES: &str = "\
Examples:
  cargo xtask ci                            everything CI checks, in order
  cargo xtask ci --only fmt --only test     two steps
  cargo xtask ci --skip miri --skip sanitizers
  cargo xtask ci --list                     the steps, in order
  cargo xtask scaling --threads 1,2 --filter crypto
  cargo xtask fuzz --seconds 60 numa_pools
  cargo xtask stats xoroshiro128plusplus --dieharder
  cargo xtask vm --machine uneven           one emulated NUMA machine
  cargo xtask vm --break-detection shuffle  the routing checks must fail
  cargo xtask build-cost --rounds 15        a new user's build against rand 0.10's";

/// The project's automation: CI, the scaling harness, no_std builds, loom, fuzzing and
/// statistical batteries.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", version, after_help = EXAMPLES)]
pub struct Xtask {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Everything CI checks (`.ci/run` runs this), step by step
    Ci(Ci),
    /// The scaling harness: throughput against threads, tables and plots (`--help` for its
    /// options)
    Scaling(Scaling),
    /// Every library crate for thumbv7em-none-eabihf, without std
    NoStd,
    /// The OS layer linted, then every loom model (release, `--cfg scalrand_loom`)
    Loom,
    /// Fuzz campaigns (cargo-fuzz on nightly), one target after another
    Fuzz(Fuzz),
    /// A generator's raw output, its smoke scores, or a dieharder run over it
    Stats(Stats),
    /// Boot emulated many-CPU, multi-node machines (QEMU, TCG) and run the pools', fastprng's
    /// and the facade's release tests inside them
    Vm(Vm),
    /// A release build of a small scalrand program against the same program on rand 0.10:
    /// alternated rounds from emptied target directories, times and ratios
    BuildCost(BuildCost),
}

/// `cargo xtask build-cost`.
#[derive(Debug, Args)]
pub struct BuildCost {
    /// Rounds of one build of each program, alternated (at least 1)
    #[arg(long, value_name = "N", default_value_t = 15,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
}

/// `cargo xtask ci`.
#[derive(Debug, Args)]
pub struct Ci {
    /// Run only these steps (repeatable), in CI's order
    #[arg(long, value_name = "STEP")]
    pub only: Vec<Step>,
    /// Leave these steps out (repeatable)
    #[arg(long, value_name = "STEP")]
    pub skip: Vec<Step>,
    /// Print the steps that would run, in order, and exit
    #[arg(long)]
    pub list: bool,
    /// Run every step in one lane, one after another (by default the steps of the second
    /// lane, which keep about one core busy and build into directories of their own, run in
    /// a child process beside the first lane)
    #[arg(long)]
    pub serial: bool,
}

/// `cargo xtask vm`.
#[derive(Debug, Args)]
pub struct Vm {
    /// Boot only this machine (repeatable) [default: every machine]
    #[arg(long, value_name = "NAME",
          value_parser = clap::builder::PossibleValuesParser::new(
              crate::config::MACHINES.iter().map(|m| m.name)))]
    pub machine: Vec<String>,
    /// Hand the pools a wrong topology inside the guest and succeed only if the routing
    /// checks fail
    #[arg(long, value_name = "HOW")]
    pub break_detection: Option<Broken>,
    /// Print the machines and exit
    #[arg(long)]
    pub list: bool,
}

/// How `cargo xtask vm --break-detection` breaks the topology the pools get.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Broken {
    /// One node of every CPU
    OneNode,
    /// The detected nodes rotated by one
    Shuffle,
}

impl Broken {
    /// Its name on the command line and in the guest's environment.
    pub fn name(self) -> &'static str {
        match self {
            Broken::OneNode => "one-node",
            Broken::Shuffle => "shuffle",
        }
    }
}

/// `cargo xtask scaling ARGS...`: the arguments go to the harness as they are.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct Scaling {
    /// The harness's arguments (`cargo xtask scaling --help` lists them)
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}

/// `cargo xtask fuzz`.
#[derive(Debug, Args)]
pub struct Fuzz {
    /// Seconds each target runs (at least 1: libFuzzer reads 0 as no limit)
    #[arg(long, value_name = "N", default_value_t = 60,
          value_parser = crate::bench_args::at_least_one::<u64>("a number of seconds"),
          allow_negative_numbers = true)]
    pub seconds: u64,
    /// Stop a target after N executions (or after --seconds, whichever comes first)
    #[arg(long, value_name = "N",
          value_parser = crate::bench_args::at_least_one::<u64>("a number of executions"),
          allow_negative_numbers = true)]
    pub runs: Option<u64>,
    /// No progress bar; libFuzzer's output goes to the terminal as it comes
    #[arg(long, short)]
    pub quiet: bool,
    /// Targets fuzzed at once, each libFuzzer process keeping one core busy (above 1: no
    /// progress bar, each target's output printed whole when it ends)
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = crate::bench_args::at_least_one::<usize>("a number of jobs"),
          allow_negative_numbers = true)]
    pub jobs: usize,
    /// Targets to fuzz, each a `[[bin]]` of fuzz/Cargo.toml [default: every target of `cargo
    /// fuzz list`]
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
}

/// `cargo xtask stats`.
#[derive(Debug, Args)]
pub struct Stats {
    /// The generator (`--list` describes them)
    #[arg(value_name = "GEN", required_unless_present = "list",
          value_parser = clap::builder::PossibleValuesParser::new(crate::bench_args::GENERATORS))]
    pub generator: Option<String>,
    /// List the generators and exit
    #[arg(long)]
    pub list: bool,
    /// Bytes to write, e.g. 8MiB (0: until the reader stops)
    #[arg(long, value_name = "SIZE", value_parser = crate::bench_args::byte_size,
          allow_negative_numbers = true)]
    pub bytes: Option<u64>,
    /// Seed of the seedable generators
    #[arg(long, value_name = "S", value_parser = crate::bench_args::seed,
          allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// The quick z-scores instead of raw bytes
    #[arg(long, conflicts_with = "dieharder")]
    pub smoke: bool,
    /// With --smoke: the scores as JSON
    #[arg(long, requires = "smoke")]
    pub json: bool,
    /// Pipe the output into `dieharder -g 200`, with ARGS (default `-a`, the whole battery);
    /// must come last
    #[arg(long, value_name = "ARGS", num_args = 0.., allow_hyphen_values = true)]
    pub dieharder: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn scaling_passes_everything_through() {
        let x = Xtask::try_parse_from(["xtask", "scaling", "--help", "--threads", "1,2"]).unwrap();
        let Command::Scaling(s) = x.command else {
            panic!("not scaling: {x:?}")
        };
        assert_eq!(s.args, ["--help", "--threads", "1,2"]);
    }

    #[test]
    fn dieharder_takes_the_rest_of_the_line() {
        let x =
            Xtask::try_parse_from(["xtask", "stats", "percpu", "--dieharder", "-d", "0"]).unwrap();
        let Command::Stats(s) = x.command else {
            panic!("not stats: {x:?}")
        };
        assert_eq!(s.generator.as_deref(), Some("percpu"));
        assert_eq!(
            s.dieharder.as_deref(),
            Some(&["-d".to_owned(), "0".to_owned()][..])
        );

        let x = Xtask::try_parse_from(["xtask", "stats", "percpu", "--dieharder"]).unwrap();
        let Command::Stats(s) = x.command else {
            panic!("not stats: {x:?}")
        };
        assert_eq!(s.dieharder.as_deref(), Some(&[][..]));
    }

    #[test]
    fn stats_sizes_and_seeds_name_negative_numbers() {
        let e = Xtask::try_parse_from(["xtask", "stats", "percpu", "--bytes", "-1"]).unwrap_err();
        assert!(e.to_string().contains("-1 is negative: a size"), "{e}");
        let e = Xtask::try_parse_from(["xtask", "stats", "percpu", "--seed", "-3"]).unwrap_err();
        assert!(e.to_string().contains("-3 is negative: a seed"), "{e}");
        let x = Xtask::try_parse_from(["xtask", "stats", "percpu", "--bytes", "8MiB"]).unwrap();
        let Command::Stats(s) = x.command else {
            panic!("not stats: {x:?}")
        };
        assert_eq!(s.bytes, Some(8 << 20));
    }

    #[test]
    fn generators_fuzz_seconds_and_runs_are_checked() {
        let e = Xtask::try_parse_from(["xtask", "stats", "bogus"]).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("bogus") && e.contains("percpu"), "{e}");
        let e = Xtask::try_parse_from(["xtask", "fuzz", "--seconds", "0"]).unwrap_err();
        assert!(
            e.to_string().contains("0 is not a number of seconds"),
            "{e}"
        );
        let e = Xtask::try_parse_from(["xtask", "fuzz", "--runs", "-5"]).unwrap_err();
        assert!(e.to_string().contains("-5 is negative"), "{e}");
        assert!(Xtask::try_parse_from(["xtask", "stats", "nodepools"]).is_ok());
    }

    #[test]
    fn steps_are_typed() {
        let x =
            Xtask::try_parse_from(["xtask", "ci", "--only", "no-std", "--skip", "fmt"]).unwrap();
        let Command::Ci(c) = x.command else {
            panic!("not ci: {x:?}")
        };
        assert_eq!(c.only, [Step::NoStd]);
        assert_eq!(c.skip, [Step::Fmt]);
        assert!(Xtask::try_parse_from(["xtask", "ci", "--only", "clipy"]).is_err());
    }
}
