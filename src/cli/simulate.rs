//! `spsa simulate CONFIG`: the config's run on the quadratic Elo model, whatever it says; with
//! `--runs N`, a study of N seeded runs in memory to choose c_end and R_end before playing games.

use std::io::IsTerminal;

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget};
use rand::Rng;

use super::run::{Overrides, RunArgs, load_config, tune};
use crate::config::ConfigError;
use crate::plan::study::{StudySetup, render, run_study};

/// `spsa run`'s flags and `--runs`; `--engine-log` is refused, not ignored (a simulation plays
/// no engine) and left out of the help.
#[derive(Args)]
#[command(mut_arg("engine_log", |a| a.hide(true).value_parser(no_engine_to_log)))]
pub struct SimulateArgs {
    /// The run's flags, `--iterations N` among them (planned iterations, overriding the
    /// config's; with --resume, above the checkpoint's total, an extension).
    #[command(flatten)]
    pub run: RunArgs,
    /// Study: N independent runs (seeds S, S+1, …) on all cores; prints the spread of the final
    /// values and of the model's Elo loss. Writes no log or checkpoint.
    #[arg(long, conflicts_with_all = ["resume", "fresh"])]
    pub runs: Option<usize>,
}

fn no_engine_to_log(_: &str) -> Result<std::path::PathBuf, String> {
    Err("`spsa simulate` plays no engine, so there is nothing to log".into())
}

pub async fn command(args: SimulateArgs) -> Result<()> {
    let flags = Overrides {
        simulate: true,
        ..args.run.overrides()
    };
    let config = load_config(&args.run.config, &flags)?;
    let Some(runs) = args.runs else {
        return tune(&args.run, config, "simulate").await;
    };
    if runs == 0 {
        return Err(ConfigError::InFile {
            path: args.run.config.clone(),
            message: "--runs must be at least 1".into(),
        }
        .into());
    }
    let setup = StudySetup::from_config(&config)?;
    if setup.vars.iter().all(|v| v.simul_elo == 0.0) {
        eprintln!(
            "{}: every simul_elo is 0, so the model has no optimum to find and no Elo to lose; set simul_elo (column 7) to study the schedule",
            config.variables.display()
        );
    }
    let first_seed = config.seed.unwrap_or_else(|| rand::rng().next_u64() >> 1);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let progress = ProgressBar::with_draw_target(Some(runs as u64), target);
    let study = run_study(&setup, runs, first_seed, threads, &progress);
    progress.finish_and_clear();
    crate::out!("{}", render(&setup, &study))?;
    Ok(())
}
