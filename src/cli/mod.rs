//! The command line: one file per command, each with its flags turned into one call of the
//! library; the flags more than one command takes in [`flags`], the exit policy in [`exit`]. No
//! command's file imports another's (the layers test keeps it). Library modules never call into
//! here; `main.rs` only parses, runs [`dispatch`] and maps the
//! error to an exit status ([`exit::status`]).

pub mod approve;
pub mod coefficients;
pub mod completions;
pub mod exit;
pub mod flags;
pub mod init;
pub mod man;
pub mod r#match;
pub mod modify;
pub mod plan;
pub mod positions;
pub mod prune;
pub mod reject;
pub mod report;
pub mod run;
pub mod serve;
pub mod simulate;
pub mod status;
pub mod verify;
pub mod worker;

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
    Run(flags::RunArgs),
    /// Run a config with simulated games (the quadratic Elo model), whatever it says.
    /// With --runs N: a study of N seeded runs in memory (nothing written), to choose c_end/R_end.
    Simulate(simulate::SimulateArgs),
    /// Write a variables file from an engine's spin options (start = default, bounds = range).
    Init(init::InitArgs),
    /// Choose c_end and R_end by simulated studies of the config's model; writes a variables file.
    Plan(plan::PlanArgs),
    /// Show where a run stands (table), plot it, or print its values for an engine.
    Report(report::ReportArgs),
    /// Play game pairs between two engines (or two option sets) and report the Elo difference.
    Match(r#match::MatchArgs),
    /// Play a run's tuned values against its start values and report the Elo difference.
    Verify(verify::VerifyArgs),
    /// Labelled positions (EPD with results) from finished games, for a tune from positions.
    Positions(positions::PositionsArgs),
    /// Convert a coefficient file between its text and binary (`.coefb`) forms.
    Coefficients(coefficients::CoefficientsArgs),
    /// Change a shared run while it goes on: its throughput share, its priority.
    Modify(modify::ModifyArgs),
    /// Approve a member's waiting run or match (as an approver): the workers play it.
    Approve(approve::ApproveArgs),
    /// Reject a member's waiting run or match with a reason (as an approver): it never plays.
    Reject(reject::RejectArgs),
    /// Serve the shared runs of a database: lease iterations, play them, report.
    Worker(worker::WorkerArgs),
    /// Show the shared runs of a database and their workers.
    Status(status::StatusArgs),
    /// A live web page (and JSON API) over local runs' files and a database's shared runs.
    Serve(serve::ServeArgs),
    /// Delete the stored games and results of finished shared runs, keeping their summaries.
    Prune(prune::PruneArgs),
    /// Print the completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff), or write one per command into a folder with --dir.
    Man(man::ManArgs),
}

/// Run one command to its end.
pub async fn dispatch(command: Command) -> Result<()> {
    match command {
        Command::Run(args) => run::command(args).await,
        Command::Simulate(args) => simulate::command(args).await,
        Command::Init(args) => init::command(args).await,
        Command::Plan(args) => plan::command(args).await,
        Command::Report(args) => report::command(args),
        Command::Match(args) => r#match::command(args).await,
        Command::Verify(args) => verify::command(args).await,
        Command::Positions(args) => positions::command(&args),
        Command::Coefficients(args) => coefficients::command(&args),
        Command::Worker(args) => worker::command(args).await,
        Command::Status(args) => status::command(args).await,
        Command::Modify(args) => modify::command(args).await,
        Command::Approve(args) => approve::command(args).await,
        Command::Reject(args) => reject::command(args).await,
        Command::Serve(args) => serve::command(args).await,
        Command::Prune(args) => prune::command(args).await,
        Command::Completions(args) => completions::command(&args),
        Command::Man(args) => man::command(&args),
    }
}
