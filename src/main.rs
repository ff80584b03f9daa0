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
    /// Serve the shared runs of a database: lease iterations, play them, report.
    Worker(WorkerArgs),
    /// Show the shared runs and workers of a database.
    Status(StatusArgs),
}

#[derive(Args)]
struct WorkerArgs {
    /// The database, e.g. postgres://worker:PASSWORD@host/spsa (add ?sslmode=require for TLS).
    #[arg(long)]
    db: String,
    /// Pairs played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Where an engine is on this machine: NAME is the config's engine file name (or Engine1 /
    /// Engine2), PATH the binary here. Repeatable.
    #[arg(long = "engine", value_name = "NAME=PATH", value_parser = parse_engine)]
    engines: Vec<(String, PathBuf)>,
    /// The name shown in `spsa status` (default: host and process id).
    #[arg(long)]
    name: Option<String>,
    /// Exit when no active run is left, instead of waiting for new ones.
    #[arg(long)]
    until_idle: bool,
}

#[derive(Args)]
struct StatusArgs {
    /// The database URL (its password is never printed).
    #[arg(long)]
    db: String,
}

fn parse_engine(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => {
            Ok((name.to_string(), PathBuf::from(path)))
        }
        _ => Err(format!("`{text}`: expected NAME=PATH")),
    }
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
    /// Pairs in flight at once (overrides the config). With --db, 0 only coordinates.
    #[arg(long)]
    concurrency: Option<usize>,
    /// Share the run through this PostgreSQL database; workers anywhere can then serve it.
    #[arg(long, value_name = "URL")]
    db: Option<String>,
    /// With --db: seconds a lease lives without a heartbeat before its work is handed on.
    #[arg(long, default_value_t = 60.0, requires = "db")]
    lease_timeout: f64,
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
    fn request(&self, force_simulate: bool, iterations: Option<u64>) -> RunRequest {
        let mode = match (self.resume, self.fresh) {
            (true, _) => StartMode::Resume,
            (_, true) => StartMode::Fresh,
            _ => StartMode::New,
        };
        RunRequest {
            config: self.config.clone(),
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
            Command::Run(args) if args.db.is_some() => {
                let shared = spsa::db::run::SharedRun {
                    url: args.db.clone().unwrap_or_default(),
                    lease_seconds: args.lease_timeout,
                };
                spsa::db::run::run(&args.request(false, None), &shared).await
            }
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
            Command::Worker(args) => worker(args).await,
            Command::Status(args) => spsa::db::status::render(&args.db).await.map(|text| {
                print!("{text}");
            }),
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

async fn worker(args: WorkerArgs) -> anyhow::Result<()> {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "host".into());
    let opts = spsa::db::worker::WorkerOptions {
        name: args
            .name
            .unwrap_or_else(|| format!("{}-{}", host.trim(), std::process::id())),
        concurrency: args.concurrency.max(1),
        engines: args.engines,
        only_run: None,
        until_idle: args.until_idle,
    };
    let summary = spsa::db::worker::serve(&args.db, opts, app::shutdown_signal()).await?;
    for (run, why) in &summary.unplayable {
        eprintln!("run {run} not served: {why}");
    }
    eprintln!(
        "worker done: {} results reported, {} refused, {} leases given back",
        summary.reported, summary.refused, summary.given_back
    );
    Ok(())
}
