//! `spsa report LOG|CHECKPOINT|--config CONF`: where a run stands, plots, values for engines.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::report::command::{ReportRequest, run};
use crate::report::export::Format;

#[derive(Args)]
pub struct ReportArgs {
    /// A θ log or a checkpoint (the other is found beside it).
    #[arg(required_unless_present = "config")]
    path: Option<PathBuf>,
    /// Find the log and checkpoint from this config instead.
    #[arg(long, conflicts_with = "path")]
    config: Option<PathBuf>,
    /// What to print: table (default), csv (variables file), uci (setoption lines), pairs
    /// (`name, value`), openbench (OpenBench's and fishtest's SPSA block; also `fishtest`), tune
    /// (Stockfish's TUNE lines), history (θ after every applied result, from the log, as CSV:
    /// `row,iteration,<θ of each variable>`).
    #[arg(long, default_value = "table")]
    format: Format,
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
    /// With --format history: every Nth row (rows N, 2N, …) and the last.
    #[arg(long, value_name = "N")]
    every: Option<u64>,
    /// With --format history: only these variables' columns, in this order (comma-separated).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    variables: Vec<String>,
}

pub fn command(args: ReportArgs) -> Result<()> {
    run(&ReportRequest {
        path: args.path,
        config: args.config,
        format: args.format,
        decimals: args.decimals,
        window: args.window,
        plot: args.plot,
        normalized: args.normalized,
        history: crate::report::history_csv::Selection {
            every: args.every,
            variables: args.variables,
        },
    })
}

#[cfg(test)]
mod tests {
    use clap::Args;

    /// Issue 46: the help listed 4 of the 6 formats (7 since `history`).
    #[test]
    fn the_help_names_every_format() {
        let mut cmd = super::ReportArgs::augment_args(clap::Command::new("report"));
        let help = cmd.render_help().to_string();
        for f in [
            "table",
            "csv",
            "uci",
            "pairs",
            "openbench",
            "tune",
            "history",
        ] {
            assert!(help.contains(f), "{f} missing from:\n{help}");
            assert!(f.parse::<crate::report::export::Format>().is_ok());
        }
    }
}
