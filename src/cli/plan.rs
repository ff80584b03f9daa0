//! `spsa plan CONFIG [--variables FILE] [--iterations N] [--runs R] [--seed S] -o OUT.var`: the
//! config's variables (or FILE's) with c_end and R_end chosen by simulated studies
//! ([`crate::plan`]).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use crate::config::{Config, ConfigError, Overrides};
use crate::plan::study::{ModelOptimum, StudySetup};
use crate::plan::{Planner, file_text, render};

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
    let flags = Overrides {
        iterations: args.iterations,
        seed: args.seed,
        ..Overrides::default()
    };
    let mut config = Config::load_with(&args.config, &flags)?;
    if let Some(path) = &args.variables {
        config.variables = path.clone();
    }
    // A real engine's file: where its weights are best is what the tune is for, so the model
    // does not assume it (a simulation file's optimum is 0 by convention).
    let real_engine = !config.simulate;
    let played = config.clone();
    config.simulate |= !args.measure;
    crate::config::check_writable(&args.out).map_err(|problem| {
        crate::error::UserError(format!(
            "{}: cannot be written: {problem}",
            args.out.display()
        ))
    })?;
    crate::engine::build::build_sources(&mut config).await?;
    let mut setup = StudySetup::from_config(&config)?;
    if real_engine {
        setup.optimum = ModelOptimum::unknown(&setup.vars);
    }
    let first_seed = config.seed.unwrap_or_else(|| rand::random::<u64>() >> 1);
    let mut pilot_note = String::new();
    let mut measured_probe_loss = None;
    if args.probe {
        let settings = crate::plan::probe::ProbeSettings {
            scales: args.probe_scales.clone(),
            pairs: args.probe_pairs,
            seed: first_seed,
            progress: true,
            memo: Some(args.out.with_extension("probe.csv")),
        };
        eprintln!(
            "measuring the probe of {} variables at scales {:?} of c_end, {} pairs each...",
            setup.vars.len(),
            settings.scales,
            settings.pairs
        );
        let curve = crate::plan::probe::measure(&played, &setup.vars, &settings).await?;
        crate::out!("{}", curve.render())?;
        if !args.measure {
            setup.vars = curve.shared_simul_elo(&setup.vars);
            if let Some(model) = curve.points.first().and_then(|p| {
                crate::stats::pairs::PairModel::from_pair_counts(&p.tally.pentanomial)
            }) {
                setup.pair_model = model;
            }
        }
        measured_probe_loss = curve.probe_loss();
        pilot_note = format!(
            " --probe --probe-scales {} --probe-pairs {} (probe: {} pairs{})",
            settings
                .scales
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(","),
            settings.pairs,
            curve.pairs_played,
            match curve.fit {
                Some(f) if f.measurable() => format!(
                    ", quadratic to scale {}, k {} Elo",
                    f.holds_to,
                    crate::vars::format_value(f.k, 3)
                ),
                _ => ", no measurable loss".into(),
            }
        );
    }
    if args.measure {
        let settings = crate::plan::pilot::PilotSettings {
            pairs: args.pairs,
            c_ends: args.offset_c_ends,
            progress: true,
            memo: Some(memo_path(&args.out)),
        };
        eprintln!(
            "measuring {} variables: 2 matches of {} pairs each...",
            setup.vars.len(),
            args.pairs
        );
        let pilot = crate::plan::pilot::measure(&config, &setup.vars, &settings).await?;
        crate::out!("{}", pilot.render())?;
        for m in &pilot.measured {
            if let Some(w) = m.warning() {
                eprintln!("warning: {w}");
            }
        }
        setup.optimum = pilot.optimum();
        setup.vars = pilot.apply(&setup.vars);
        setup.pair_model = pilot.pair_model();
        pilot_note += &format!(
            " --measure --pairs {} (simul_elo measured: {} pairs, {})",
            args.pairs,
            pilot.pairs_played,
            setup.pair_model.describe()
        );
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let probe_loss = args
        .probe_loss
        .or(measured_probe_loss)
        .unwrap_or(if real_engine {
            crate::plan::DEFAULT_PROBE_LOSS
        } else {
            f64::INFINITY
        });
    let planner =
        Planner::new(setup.clone(), args.runs, first_seed, threads).with_probe_loss(probe_loss);
    if !planner.has_tunable() {
        return Err(bad(format!(
            "{}: no variable has a positive simul_elo and a range, so the model has nothing to plan; set simul_elo (column 7)",
            config.variables.display()
        )));
    }
    for w in planner.warnings() {
        eprintln!("warning: {w}");
    }
    eprintln!(
        "planning {} variables over {} iterations with {} runs per setting on {threads} threads...",
        setup.vars.len(),
        setup.schedule.iterations,
        args.runs
    );
    let outcome = planner.plan();
    let variables_flag = args
        .variables
        .as_ref()
        .map(|p| format!(" --variables {}", p.display()))
        .unwrap_or_default();
    let how = format!(
        "spsa plan {}{variables_flag} --iterations {} --runs {} --seed {first_seed} --probe-loss {}{pilot_note}",
        args.config.display(),
        setup.schedule.iterations,
        args.runs,
        probe_loss
    );
    std::fs::write(&args.out, file_text(&how, &outcome))
        .with_context(|| format!("{}: cannot write", args.out.display()))?;
    crate::out!("{}", render(&setup, &outcome))?;
    crate::outln!("wrote {}", args.out.display())?;
    Ok(())
}

/// Where `spsa plan --measure -o OUT` keeps its pilot's matches: `OUT.pilot.csv` beside it
/// (`vars/x.var` → `vars/x.pilot.csv`).
fn memo_path(out: &std::path::Path) -> std::path::PathBuf {
    out.with_extension("pilot.csv")
}
