//! The `spsa` command line. Parsing only; the work is in `spsa::app`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use spsa::app::{self, RunRequest};
use spsa::tuner::StartMode;

/// Tune chess engine parameters by SPSA over game pairs.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a tuning session (simulated when the config says Simulate = 1).
    Run(RunArgs),
    /// Run a config with simulated games (the quadratic Elo model), whatever it says.
    Simulate(SimulateArgs),
    /// Play game pairs between two engines (or two option sets) and report the Elo difference.
    Match(spsa::matchrun::MatchArgs),
    /// Play a run's tuned values against its start values and report the Elo difference.
    Verify(spsa::matchrun::VerifyArgs),
}

#[derive(Args)]
struct RunArgs {
    /// The config file: classic INI (.conf) or TOML (.toml).
    config: PathBuf,
    /// Continue the earlier run from its checkpoint.
    #[arg(long, conflicts_with = "fresh")]
    resume: bool,
    /// Start over; the earlier run's log and checkpoint are kept as .bak.
    #[arg(long)]
    fresh: bool,
    /// Seed the run for exact reproducibility (with Concurrency 1).
    #[arg(long)]
    seed: Option<u64>,
    /// Pairs in flight at once (overrides the config).
    #[arg(long)]
    concurrency: Option<usize>,
}

#[derive(Args)]
struct SimulateArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Planned iterations N (overrides the config's Iterations).
    #[arg(long)]
    iterations: Option<u64>,
}

impl RunArgs {
    fn request(self, force_simulate: bool, iterations: Option<u64>) -> RunRequest {
        let mode = match (self.resume, self.fresh) {
            (true, _) => StartMode::Resume,
            (_, true) => StartMode::Fresh,
            _ => StartMode::New,
        };
        RunRequest {
            config: self.config,
            mode,
            seed: self.seed,
            iterations,
            concurrency: self.concurrency,
            force_simulate,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("spsa: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => app::run(args.request(false, None)).await,
            Command::Simulate(args) => app::run(args.run.request(true, args.iterations)).await,
            Command::Match(args) => spsa::matchrun::args::run_match(args).await,
            Command::Verify(args) => spsa::matchrun::verify::run_verify(args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("spsa: {e:#}");
            ExitCode::from(app::exit_code(&e) as u8)
        }
    }
}
