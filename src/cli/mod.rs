//! The command line: one file per command, each with its flags and how it wires the parts.
//! Library modules never call into here; `main.rs` only parses, runs [`dispatch`] and maps the
//! error to an exit status ([`crate::error::exit_code`]).

pub mod r#match;
pub mod positions;
pub mod report;
pub mod run;
pub mod simulate;
pub mod verify;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// Tune chess engine parameters by SPSA over game pairs.
#[derive(Parser)]
#[command(version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run a tuning session (simulated when the config says Simulate = 1).
    Run(run::RunArgs),
    /// Run a config with simulated games (the quadratic Elo model), whatever it says.
    /// With --runs N: a study of N seeded runs in memory (nothing written), to choose c_end/R_end.
    Simulate(simulate::SimulateArgs),
    /// Show where a run stands (table), plot it, or print its values for an engine.
    Report(report::ReportArgs),
    /// Play game pairs between two engines (or two option sets) and report the Elo difference.
    Match(crate::matchrun::MatchArgs),
    /// Play a run's tuned values against its start values and report the Elo difference.
    Verify(crate::matchrun::VerifyArgs),
    /// Labelled positions (EPD with results) from finished games, for a tune from positions.
    Positions(crate::positions::extract::PositionsArgs),
}

/// Run one command to its end.
pub async fn dispatch(command: Command) -> Result<()> {
    match command {
        Command::Run(args) => run::command(args).await,
        Command::Simulate(args) => simulate::command(args).await,
        Command::Report(args) => report::command(args),
        Command::Match(args) => r#match::command(args).await,
        Command::Verify(args) => verify::command(args).await,
        Command::Positions(args) => positions::command(&args),
    }
}

/// `--concurrency`: at least 1, rejected the same way by every command.
pub fn concurrency_flag(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!(
            "must be a whole number from 1 to 1024, not `{text}`"
        )),
    }
}
