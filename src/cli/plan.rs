//! `spsa plan CONFIG [--variables FILE] [--iterations N] [--runs R] [--seed S] -o OUT.var`: the
//! config's variables (or FILE's) with c_end and R_end chosen by simulated studies
//! ([`crate::plan`]).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::config::ConfigError;
use crate::plan::launch::{PlanRequest, write_plan};

#[derive(Args)]
pub struct PlanArgs {
    /// The config (its variables file needs simul_elo, start and bounds).
    pub config: PathBuf,
    /// Plan these variables instead of the config's variables file (a path from the current
    /// folder, not from the config's).
    #[arg(long, value_name = "FILE")]
    pub variables: Option<PathBuf>,
    /// Plan for this many iterations (default: the config's Iterations).
    #[arg(long)]
    pub iterations: Option<u64>,
    /// Simulated runs per evaluated setting (more: slower, less noisy).
    #[arg(long, default_value_t = 32)]
    pub runs: usize,
    /// Seed for reproducible plans (random when not given; the output file names it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where to write the variables file with the chosen c_end and R_end.
    #[arg(short = 'o', long = "output", value_name = "OUT.var")]
    pub out: PathBuf,
    /// Measure the model first: play short matches with each variable moved a few c_end from
    /// its start, fit its curvature (the simul_elo column) and the draw rate, then plan.
    #[arg(long)]
    pub measure: bool,
    /// With --measure: game pairs per pilot match (two matches per variable).
    #[arg(long, default_value_t = 100, requires = "measure")]
    pub pairs: u64,
    /// The most Elo any variable may lose when moved ±c_end from its optimum under its
    /// simul_elo: the plan never chooses a larger c_end (default: 5 for a real engine, where
    /// Elo is not quadratic far out; none for a simulation config, where it is; `inf`: none).
    #[arg(long, value_name = "ELO")]
    pub probe_loss: Option<f64>,
    /// With --measure: how far each variable is moved, in c_end.
    #[arg(long, default_value_t = crate::plan::pilot::DEFAULT_C_ENDS, requires = "measure")]
    pub offset_c_ends: f64,
    /// Measure how far a probe may go: play the tune's own probe θ0 + s·c_end·δ against θ0 at
    /// each --probe-scales s on held-out openings, then plan with the measured curvature
    /// (shared equally as simul_elo, unless --measure measures each variable) and the probe
    /// limit where the loss stops growing as s² (unless --probe-loss is given).
    #[arg(long)]
    pub probe: bool,
    /// With --probe: the scales, in the file's c_end, ascending.
    #[arg(long, value_delimiter = ',', default_values_t = crate::plan::probe::DEFAULT_SCALES, requires = "probe")]
    pub probe_scales: Vec<f64>,
    /// With --probe: game pairs per scale (even: both sides of each δ).
    #[arg(long, default_value_t = crate::plan::probe::DEFAULT_PAIRS, requires = "probe")]
    pub probe_pairs: u64,
}

/// Run the search, print the comparison, write OUT.var (nothing is written on bad input).
pub async fn command(args: PlanArgs) -> Result<()> {
    let bad = |message: String| -> anyhow::Error {
        ConfigError::InFile {
            path: args.config.clone(),
            message,
        }
        .into()
    };
    if args.runs < 2 {
        return Err(bad("--runs must be at least 2".into()));
    }
    if args.measure && args.pairs < 10 {
        return Err(bad(format!(
            "--pairs {}: a pilot match needs at least 10 pairs for an Elo interval",
            args.pairs
        )));
    }
    if let Some(l) = args.probe_loss.filter(|l| l.is_nan() || *l <= 0.0) {
        return Err(bad(format!(
            "--probe-loss {l}: must be a positive number of Elo (inf for no limit)"
        )));
    }
    if args.measure && !(args.offset_c_ends > 0.0 && args.offset_c_ends.is_finite()) {
        return Err(bad(format!(
            "--offset-c-ends {}: must be a positive number",
            args.offset_c_ends
        )));
    }
    if args.probe {
        crate::plan::probe::check_settings(&args.probe_scales, args.probe_pairs).map_err(bad)?;
    }
    write_plan(&PlanRequest {
        config: args.config,
        variables: args.variables,
        iterations: args.iterations,
        runs: args.runs,
        seed: args.seed,
        out: args.out,
        measure: args.measure,
        pairs: args.pairs,
        offset_c_ends: args.offset_c_ends,
        probe_loss: args.probe_loss,
        probe: args.probe,
        probe_scales: args.probe_scales,
        probe_pairs: args.probe_pairs,
    })
    .await
}
