//! `spsa verify`: play the tuned values against the start values (or any two variables files)
//! with a run's engines, book and limits, through the same match runner as `spsa match`.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use super::UserError;
use super::args::{MatchFlags, apply_flags, describe_options, plan, play_to_end};
use crate::arena::OptionSet;
use crate::config::Config;
use crate::engine::OptionValue;
use crate::report::history::History;
use crate::tuner::checkpoint;
use crate::vars::{self, Variable};

/// `spsa verify CONFIG`: does the tuned θ beat the start values?
#[derive(Args, Clone, Debug)]
pub struct VerifyArgs {
    /// The tuning run's config (engines, book, limits, adjudication, variables, checkpoint).
    pub config: PathBuf,
    /// Take the tuned θ from this checkpoint instead of the config's.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["values", "a", "b"])]
    pub checkpoint: Option<PathBuf>,
    /// Take the tuned θ from the θ log's row for this iteration (the values after K updates),
    /// to verify a point along the run.
    #[arg(long, value_name = "K", conflicts_with_all = ["checkpoint", "values", "a", "b"])]
    pub iteration: Option<u64>,
    /// Take the tuned values from this variables file's start column instead of a checkpoint.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["a", "b"])]
    pub values: Option<PathBuf>,
    /// Play any two sets: side A's values from this variables file (start column)…
    #[arg(long, value_name = "FILE", requires = "b")]
    pub a: Option<PathBuf>,
    /// …against side B's from this one.
    #[arg(long, value_name = "FILE", requires = "a")]
    pub b: Option<PathBuf>,
    #[command(flatten)]
    pub flags: MatchFlags,
}

fn bad(message: impl Into<String>) -> anyhow::Error {
    UserError(message.into()).into()
}

/// One side's values: names and numbers, rounded to the integers spin options take.
struct ValueSet {
    label: String,
    names: Vec<String>,
    values: Vec<f64>,
}

impl ValueSet {
    fn from_vars(label: String, vars: &[Variable]) -> ValueSet {
        ValueSet {
            label,
            names: vars.iter().map(|v| v.name.clone()).collect(),
            values: vars.iter().map(|v| v.start.round()).collect(),
        }
    }

    fn options(&self) -> OptionSet {
        self.names
            .iter()
            .zip(&self.values)
            .map(|(n, v)| (n.clone(), OptionValue::Number(*v)))
            .collect()
    }

    fn get(&self, name: &str) -> Option<f64> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.values[i])
    }
}

fn load_values(path: &Path, label: &str) -> Result<ValueSet> {
    if std::fs::metadata(path).is_err() {
        return Err(bad(format!("{}: variables file not found", path.display())));
    }
    let vars = vars::load(path)?;
    Ok(ValueSet::from_vars(
        format!("{label} ({})", path.display()),
        &vars,
    ))
}

/// The two sides from the flags: (A, B).
fn sides(args: &VerifyArgs, config: &Config) -> Result<(ValueSet, ValueSet)> {
    if let (Some(a), Some(b)) = (&args.a, &args.b) {
        return Ok((load_values(a, "A")?, load_values(b, "B")?));
    }
    let start = load_values(&config.variables, "start")?;
    if let Some(v) = &args.values {
        return Ok((load_values(v, "tuned")?, start));
    }
    if let Some(k) = args.iteration {
        return Ok((logged_values(config, &start, k)?, start));
    }
    let path = args.checkpoint.as_ref().unwrap_or(&config.checkpoint);
    if std::fs::metadata(path).is_err() {
        return Err(bad(format!(
            "{}: checkpoint not found (run `spsa run {}` first, or give --values FILE)",
            path.display(),
            config.path.display()
        )));
    }
    let ck = checkpoint::read(path)?;
    let names: Vec<String> = ck.vars.iter().map(|v| v.name.clone()).collect();
    if names != start.names {
        return Err(bad(format!(
            "{}: the checkpoint's variables {:?} differ from {}'s {:?}",
            path.display(),
            names,
            config.variables.display(),
            start.names
        )));
    }
    let tuned = ValueSet {
        label: format!(
            "tuned ({}, {} of {} iterations)",
            path.display(),
            ck.state.applied,
            ck.state.iterations
        ),
        names,
        values: ck.state.theta.iter().map(|t| t.round()).collect(),
    };
    Ok((tuned, start))
}

/// θ after `iteration` updates, from the config's θ log (rounded as a checkpoint's θ is).
fn logged_values(config: &Config, start: &ValueSet, iteration: u64) -> Result<ValueSet> {
    let log = &config.log;
    if std::fs::metadata(log).is_err() {
        return Err(bad(format!(
            "{}: θ log not found (run `spsa run {}` first)",
            log.display(),
            config.path.display()
        )));
    }
    let history = History::read_named(log, Some(&start.names))?;
    if history.names != start.names {
        return Err(bad(format!(
            "{}: the θ log's variables {:?} differ from {}'s {:?}",
            log.display(),
            history.names,
            config.variables.display(),
            start.names
        )));
    }
    let Some(row) = history.iterations.iter().position(|&i| i == iteration) else {
        let last = history.iterations.last().copied().unwrap_or(0);
        return Err(bad(format!(
            "{}: no row for iteration {iteration} (the log holds iterations up to {last})",
            log.display()
        )));
    };
    Ok(ValueSet {
        label: format!("tuned ({}, iteration {iteration})", log.display()),
        names: history.names.clone(),
        values: history.values.iter().map(|c| c[row].round()).collect(),
    })
}

/// A table of both sides' values, one variable a line.
fn values_table(a: &ValueSet, b: &ValueSet, a_name: &str, b_name: &str) -> String {
    let mut names: Vec<&String> = a.names.iter().collect();
    for n in &b.names {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let show = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_else(|| "-".into());
    let rows: Vec<Vec<String>> = names
        .into_iter()
        .map(|n| vec![n.clone(), show(a.get(n)), show(b.get(n))])
        .collect();
    crate::report::status::table(&["variable", a_name, b_name], &rows)
}

/// Run `spsa verify` and print the values, the counts and the Elo difference.
pub async fn run_verify(args: VerifyArgs) -> Result<()> {
    let config = Config::load(&args.config)?;
    let Some(mut games) = config.games.clone() else {
        return Err(bad(format!(
            "{}: no engines configured (verify plays real games)",
            config.path.display()
        )));
    };
    // The run's PGN file is the tuning games'; verification games go only where --pgn says.
    games.pgn = None;
    apply_flags(&mut games, &args.flags)?;
    let (a, b) = sides(&args, &config)?;
    let names = if args.a.is_some() {
        ["A".to_string(), "B".to_string()]
    } else {
        ["tuned".to_string(), "start".to_string()]
    };
    let mut plan = plan(
        &games,
        names.clone(),
        a.options(),
        b.options(),
        &args.flags,
        100,
        Some(config.concurrency),
        config.seed,
        format!("spsa verify {}", config.path.display()),
    )?;
    plan.option_places.config = Some(config.clone());
    let source = plan.start_source().await?;
    println!("verify: {} vs {}", a.label, b.label);
    print!("{}", values_table(&a, &b, &names[0], &names[1]));
    println!(
        "{} pairs, concurrency {}, {}",
        plan.pairs, plan.concurrency, plan.description
    );
    tracing::debug!(
        "A: {}; B: {}",
        describe_options(&plan.a_options),
        describe_options(&plan.b_options)
    );
    play_to_end(&source, &plan, &args.flags).await
}
