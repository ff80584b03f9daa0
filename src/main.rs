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
    /// With --runs N: a study of N seeded runs in memory (nothing written), to choose c_end/R_end.
    Simulate(SimulateArgs),
    /// Show where a run stands (table), plot it, or print its values for an engine.
    Report(ReportArgs),
    /// Play game pairs between two engines (or two option sets) and report the Elo difference.
    Match(spsa::matchrun::MatchArgs),
    /// Play a run's tuned values against its start values and report the Elo difference.
    Verify(spsa::matchrun::VerifyArgs),
    /// Labelled positions (EPD with results) from finished games, for a tune from positions.
    Positions(spsa::positions::extract::PositionsArgs),
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
    /// Study: N independent runs (seeds S, S+1, …) on all cores; prints the spread of the final
    /// values and of the model's Elo loss. Writes no log or checkpoint.
    #[arg(long, conflicts_with_all = ["resume", "fresh"])]
    runs: Option<usize>,
}

#[derive(Args)]
struct ReportArgs {
    /// A θ log or a checkpoint (the other is found beside it).
    #[arg(required_unless_present = "config")]
    path: Option<PathBuf>,
    /// Find the log and checkpoint from this config instead.
    #[arg(long, conflicts_with = "path")]
    config: Option<PathBuf>,
    /// What to print: table (default), csv (variables file), uci (setoption lines), pairs.
    #[arg(long, default_value = "table")]
    format: spsa::report::export::Format,
    /// Decimals of the values in uci/pairs output (0: integers, as spin options take).
    #[arg(long, default_value_t = 0)]
    decimals: usize,
    /// The part of the log the trend and the settled verdict are measured over.
    #[arg(long, default_value_t = 0.1)]
    window: f64,
    /// Draw the trajectories to FILE.png or FILE.svg.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Plot only (θ − start)/c_end, one panel.
    #[arg(long, requires = "plot")]
    normalized: bool,
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
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    // One thread: our work per engine line is tiny, and a single-threaded scheduler avoids the
    // cross-thread wake-ups that dominated our CPU time with engines printing many lines.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("spsa: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => app::run(args.request(false, None)).await,
            Command::Simulate(args) if args.runs.is_some() => {
                spsa::study::command(&spsa::study::StudyRequest {
                    config: args.run.config,
                    runs: args.runs.unwrap_or(1),
                    seed: args.run.seed,
                    iterations: args.iterations,
                    concurrency: args.run.concurrency,
                })
            }
            Command::Simulate(args) => app::run(args.run.request(true, args.iterations)).await,
            Command::Report(args) => {
                spsa::report::command::run(&spsa::report::command::ReportRequest {
                    path: args.path,
                    config: args.config,
                    format: args.format,
                    decimals: args.decimals,
                    window: args.window,
                    plot: args.plot,
                    normalized: args.normalized,
                })
            }
            Command::Match(args) => spsa::matchrun::args::run_match(args).await,
            Command::Verify(args) => spsa::matchrun::verify::run_verify(args).await,
            Command::Positions(args) => spsa::positions::extract::run(&args),
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
