//! `spsa plan` from its settings to the written file: the config loaded and its engines built,
//! the probe (`--probe`) and the pilot (`--measure`) measured when asked, then the simulated
//! studies ([`super::Planner`]) and the variables file with the chosen c_end and R_end.
//! `cli::plan` turns its flags into one [`PlanRequest`] and calls [`write_plan`].

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::study::{ModelOptimum, StudySetup};
use super::{Planner, file_text, render};
use crate::config::{Config, ConfigError, Overrides};

/// What `spsa plan` was asked, its flags checked.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    pub config: PathBuf,
    /// Plan this variables file instead of the config's.
    pub variables: Option<PathBuf>,
    pub iterations: Option<u64>,
    /// Simulated runs per setting.
    pub runs: usize,
    pub seed: Option<u64>,
    /// The variables file written.
    pub out: PathBuf,
    /// Measure simul_elo and the optimum by a pilot's matches of `pairs` pairs, at
    /// `offset_c_ends` c_ends from the start.
    pub measure: bool,
    pub pairs: u64,
    pub offset_c_ends: f64,
    /// No variable's c_end may lose more than this many Elo (`None`: measured, or the default).
    pub probe_loss: Option<f64>,
    /// Measure the probe's loss curve at `probe_scales` of c_end, `probe_pairs` pairs each.
    pub probe: bool,
    pub probe_scales: Vec<f64>,
    pub probe_pairs: u64,
}

/// Plan `request`'s variables and write them to `request.out`, printing the plan.
pub async fn write_plan(request: &PlanRequest) -> Result<()> {
    let bad = |message: String| -> anyhow::Error {
        ConfigError::InFile {
            path: request.config.clone(),
            message,
        }
        .into()
    };
    let flags = Overrides {
        iterations: request.iterations,
        seed: request.seed,
        ..Overrides::default()
    };
    let mut config = Config::load_with(&request.config, &flags)?;
    if let Some(path) = &request.variables {
        config.variables = path.clone();
    }
    // A real engine's file: where its weights are best is what the tune is for, so the model
    // does not assume it (a simulation file's optimum is 0 by convention).
    let real_engine = !config.simulate;
    let played = config.clone();
    config.simulate |= !request.measure;
    crate::config::check_writable(&request.out).map_err(|problem| {
        crate::error::UserError(format!(
            "{}: cannot be written: {problem}",
            request.out.display()
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
    if request.probe {
        let settings = super::probe::ProbeSettings {
            scales: request.probe_scales.clone(),
            pairs: request.probe_pairs,
            seed: first_seed,
            progress: true,
            memo: Some(request.out.with_extension("probe.csv")),
        };
        eprintln!(
            "measuring the probe of {} variables at scales {:?} of c_end, {} pairs each...",
            setup.vars.len(),
            settings.scales,
            settings.pairs
        );
        let curve = super::probe::measure(&played, &setup.vars, &settings).await?;
        crate::out!("{}", curve.render())?;
        if !request.measure {
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
    if request.measure {
        let settings = super::pilot::PilotSettings {
            pairs: request.pairs,
            c_ends: request.offset_c_ends,
            progress: true,
            memo: Some(memo_path(&request.out)),
        };
        eprintln!(
            "measuring {} variables: 2 matches of {} pairs each...",
            setup.vars.len(),
            request.pairs
        );
        let pilot = super::pilot::measure(&config, &setup.vars, &settings).await?;
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
            request.pairs,
            pilot.pairs_played,
            setup.pair_model.describe()
        );
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let probe_loss = request
        .probe_loss
        .or(measured_probe_loss)
        .unwrap_or(if real_engine {
            super::DEFAULT_PROBE_LOSS
        } else {
            f64::INFINITY
        });
    let planner =
        Planner::new(setup.clone(), request.runs, first_seed, threads).with_probe_loss(probe_loss);
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
        request.runs
    );
    let outcome = planner.plan();
    let variables_flag = request
        .variables
        .as_ref()
        .map(|p| format!(" --variables {}", p.display()))
        .unwrap_or_default();
    let how = format!(
        "spsa plan {}{variables_flag} --iterations {} --runs {} --seed {first_seed} --probe-loss {}{pilot_note}",
        request.config.display(),
        setup.schedule.iterations,
        request.runs,
        probe_loss
    );
    std::fs::write(&request.out, file_text(&how, &outcome))
        .with_context(|| format!("{}: cannot write", request.out.display()))?;
    crate::out!("{}", render(&setup, &outcome))?;
    crate::outln!("wrote {}", request.out.display())?;
    Ok(())
}

/// Where `spsa plan --measure -o OUT` keeps its pilot's matches: `OUT.pilot.csv` beside it
/// (`vars/x.var` → `vars/x.pilot.csv`).
fn memo_path(out: &Path) -> PathBuf {
    out.with_extension("pilot.csv")
}
