//! `spsa simulate CONFIG`: the config's run on the quadratic Elo model, whatever it says; with
//! `--runs N`, a study of N seeded runs in memory to choose c_end and R_end before playing games.

use anyhow::Result;
use clap::Args;

use super::flags::RunArgs;
use crate::config::{Config, Overrides};

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
    let config = Config::load_with(&args.run.config, &flags)?;
    match args.runs {
        None => crate::method::launch::tune(config, &args.run.launch("simulate")).await,
        Some(runs) => crate::plan::study::study_config(&config, runs),
    }
}
