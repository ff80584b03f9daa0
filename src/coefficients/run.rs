//! A tune with exact gradients from a coefficient file (`objective = "positions"`,
//! `coefficients = "FILE"`, `method = "gradient"` or `"lbfgs"`), with the outputs of every run:
//! the θ log (one row per epoch, the last row the final values), the loss log beside it (the
//! learning curve `spsa report --plot` draws), a checkpoint after every epoch (resume continues
//! Adam exactly; L-BFGS restarts its history from the checkpointed θ), and the final values as a
//! table, a variables CSV and `setoption` lines.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use super::Coefficients;
use super::estimated::{Estimate, UciModel};
use super::fit::{
    self, AdamState, Control, Finish, FitSettings, Fitted, GradientMethod, HeldK, K_ROUND,
    Progress, ScoresAt,
};
use super::objective::{Model, Objective};
use crate::arena::EngineSetup;
use crate::config::positions::{KSetting, Method, PositionsConfig, Validation};
use crate::positions::Outcome;
use crate::positions::eval::{EvalSettings, Evaluator};
use crate::positions::source::{load_sets, scored_through};
use crate::positions::{Loss, fit_k};
use crate::report::export::{Format, render};
use crate::report::loss_curve::{HEADER, loss_log_path, part_line};
use crate::report::summary::final_table;
use crate::spsa::Schedule;
use crate::tuner::checkpoint::{self, RunState, write_atomically};
use crate::tuner::log::ThetaLog;
use crate::vars::Variable;

const STATE_PREFIX: &str = "#: ";
const VERSION: u32 = 1;

/// Where a gradient run keeps its files.
#[derive(Clone, Debug)]
pub struct RunFiles {
    pub theta_log: PathBuf,
    pub checkpoint: PathBuf,
}

impl RunFiles {
    pub fn loss_log(&self) -> PathBuf {
        loss_log_path(&self.theta_log)
    }
}

/// Everything a gradient run needs besides its data.
pub struct GradientRun<'a> {
    pub positions: &'a PositionsConfig,
    pub vars: &'a [Variable],
    pub files: RunFiles,
    pub threads: usize,
    pub seed: u64,
    pub resume: bool,
}

/// The run's state between epochs, in the checkpoint's `#:` lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GradientState {
    pub version: u32,
    /// "gradient" or "lbfgs".
    pub method: String,
    pub seed: String,
    pub k: f64,
    /// Whether K is still refitted as the weights move (`k = "fit"` until it settles).
    pub k_refitting: bool,
    pub start: Vec<f64>,
    pub theta: Vec<f64>,
    /// Epochs done (= rows in the θ log, but the final row).
    pub epoch: usize,
    pub finished: bool,
    pub log_bytes: u64,
    pub loss_log_bytes: u64,
    pub adam: AdamState,
}

/// How a gradient run ended.
#[derive(Clone, Debug)]
pub struct GradientOutcome {
    pub theta: Vec<f64>,
    pub start: Vec<f64>,
    pub k: f64,
    pub fitted: Fitted,
    pub seconds: f64,
    /// Whether a validation set chose the epoch whose values are final.
    pub validated: bool,
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::Lbfgs => "lbfgs",
        _ => "gradient",
    }
}

/// The part of the checkpoint only a gradient run has, in a `[gradient]` table of the `#:`
/// lines (the rest is the tuner's own [`RunState`], so `spsa report` reads it like any run's).
#[derive(Serialize, Deserialize)]
struct GradientPart {
    method: String,
    k: f64,
    #[serde(default)]
    k_refitting: bool,
    epoch: usize,
    loss_log_bytes: u64,
    adam: AdamState,
}

#[derive(Deserialize)]
struct GradientTable {
    gradient: GradientPart,
}

fn render_checkpoint(state: &GradientState, vars: &[Variable], epochs: usize) -> Result<String> {
    // The θ log's rows: one per epoch, and the final values once finished.
    let rows = state.epoch as u64 + u64::from(state.finished);
    // An epoch is not an SPSA iteration: no gains to record.
    let schedule = Schedule {
        iterations: if state.finished {
            state.epoch as u64 + 1
        } else {
            epochs as u64
        },
        a: 0.0,
        alpha: 0.0,
        gamma: 0.0,
    };
    let run_state = RunState {
        applied: rows,
        finished: state.finished,
        theta: state.theta.clone(),
        next_fresh: rows,
        log_bytes: state.log_bytes,
        ..RunState::fresh(&state.seed, state.start.clone(), &schedule, 0)
    };
    let mut out = checkpoint::render(&run_state, vars)?;
    let part = GradientPart {
        method: state.method.clone(),
        k: state.k,
        k_refitting: state.k_refitting,
        epoch: state.epoch,
        loss_log_bytes: state.loss_log_bytes,
        adam: state.adam.clone(),
    };
    #[derive(Serialize)]
    struct Wrap<'a> {
        gradient: &'a GradientPart,
    }
    let body =
        toml::to_string(&Wrap { gradient: &part }).context("cannot serialize checkpoint state")?;
    for line in body.lines() {
        out.push_str(STATE_PREFIX);
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

/// Reads a gradient run's checkpoint.
pub fn read_checkpoint(path: &Path) -> Result<GradientState> {
    let common = checkpoint::read(path)?;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read checkpoint", path.display()))?;
    let state_text: String = text
        .lines()
        .filter_map(|l| l.strip_prefix(STATE_PREFIX))
        .flat_map(|l| [l, "\n"])
        .collect();
    let part = toml::from_str::<GradientTable>(&state_text)
        .with_context(|| format!("{}: not an exact-gradient run's checkpoint", path.display()))?
        .gradient;
    let s = common.state;
    Ok(GradientState {
        version: VERSION,
        method: part.method,
        seed: s.seed,
        k: part.k,
        k_refitting: part.k_refitting,
        start: s.start,
        theta: s.theta,
        epoch: part.epoch,
        finished: s.finished,
        log_bytes: s.log_bytes,
        loss_log_bytes: part.loss_log_bytes,
        adam: part.adam,
    })
}

/// Train and validation sets: a validation file, or a seeded fraction held out. The training
/// positions are shuffled (seeded) so mini-batches are contiguous and still random.
fn split(positions: &PositionsConfig, seed: u64) -> Result<(Coefficients, Option<Coefficients>)> {
    let all = super::load(&positions.train)?;
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    match &positions.validation {
        Validation::None => Ok((all.select(&order), None)),
        Validation::File(path) => {
            let v = super::load(path)?;
            if v.variables != all.variables {
                bail!(
                    "{}: its variables differ from those of {}",
                    path.display(),
                    positions.train.display()
                );
            }
            Ok((all.select(&order), Some(v)))
        }
        Validation::Fraction(f) => {
            let held = ((all.len() as f64) * f).round() as usize;
            if held == 0 || held == all.len() {
                bail!(
                    "{}: validation_fraction {f} of {} positions leaves no training or no validation positions",
                    positions.train.display(),
                    all.len()
                );
            }
            let (v, t) = order.split_at(held);
            Ok((all.select(t), Some(all.select(v))))
        }
    }
}

/// Runs (or resumes) the tune from the coefficient file the config names; `stop` is asked
/// after every epoch (Ctrl-C).
pub fn run(run: &GradientRun, stop: &dyn Fn() -> bool) -> Result<GradientOutcome> {
    let p = run.positions;
    let method = p.method;
    if !matches!(method, Method::Gradient | Method::Lbfgs) {
        bail!("an exact-gradient run needs method = \"gradient\" or \"lbfgs\"");
    }
    let load_began = Instant::now();
    let (train, validation) = split(p, run.seed)?;
    let train_obj = Objective::new(&train, run.vars, run.threads)
        .with_context(|| format!("{}", p.train.display()))?;
    let valid_obj = match &validation {
        Some(v) => Some(
            Objective::new(v, run.vars, run.threads)
                .with_context(|| "the validation coefficients".to_string())?,
        ),
        None => None,
    };
    eprintln!(
        "exact gradients ({}): {} training and {} validation positions, {} entries, {:.1} MB, loaded in {:.2} s, {} threads",
        method_name(method),
        train.len(),
        validation.as_ref().map_or(0, |v| v.len()),
        train.entries(),
        (train.heap_bytes() + validation.as_ref().map_or(0, |v| v.heap_bytes())) as f64 / 1e6,
        load_began.elapsed().as_secs_f64(),
        run.threads
    );
    // The objectives hold the data in their own layout: the rows are not needed while tuning.
    drop((train, validation));
    drive(
        run,
        &train_obj,
        valid_obj.as_ref().map(|v| v as &dyn Model),
        &|start| Ok(train_obj.scored(start)),
        stop,
    )
}

/// Runs (or resumes) the tune through UCI engines, for a config without a coefficient file:
/// Adam on SPSA gradient estimates (`gradient`) or L-BFGS on central differences (`lbfgs`).
/// Starts its own tokio runtime: call it from a plain thread, not from async code.
pub fn run_uci(
    run: &GradientRun,
    setup: &EngineSetup,
    settings: EvalSettings,
    stop: &dyn Fn() -> bool,
) -> Result<GradientOutcome> {
    let p = run.positions;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the runtime for the engines")?;
    let (train, validation) = load_sets(p, run.seed)?;
    let names: Vec<String> = run.vars.iter().map(|v| v.name.clone()).collect();
    let evaluator = runtime.block_on(Evaluator::start(setup, settings, &names, run.threads))?;
    let d = run.vars.len();
    let (estimate, how) = match p.method {
        Method::Lbfgs => (
            Estimate::CentralDifferences,
            format!(
                "central differences ({} scorings of the training set per gradient)",
                2 * d + 1
            ),
        ),
        _ => (
            Estimate::Spsa { seed: run.seed },
            "SPSA estimates (2 scorings of the batch per gradient)".to_string(),
        ),
    };
    eprintln!(
        "no coefficient file: gradients are estimated through UCI by {how}, far slower than exact gradients from a coefficient file; {} training and {} validation positions, {} engines",
        train.len(),
        validation.as_ref().map_or(0, |v| v.len()),
        evaluator.len()
    );
    let train_model = UciModel::new(&runtime, &evaluator, &train, run.vars, estimate);
    let valid_model = validation
        .as_ref()
        .map(|v| UciModel::new(&runtime, &evaluator, v, run.vars, estimate));
    let fit_scores = |theta: &[f64]| -> Result<Vec<(Outcome, f64)>> {
        runtime.block_on(scored_through(&evaluator, &train, &names, theta))
    };
    let failed = || {
        train_model
            .take_error()
            .or_else(|| valid_model.as_ref().and_then(|v| v.take_error()))
    };
    let result = drive(
        run,
        &train_model,
        valid_model.as_ref().map(|v| v as &dyn Model),
        &fit_scores,
        &|| stop() || train_model.error.lock().is_ok_and(|e| e.is_some()),
    );
    let searched = train_model
        .searched
        .load(std::sync::atomic::Ordering::Relaxed)
        + valid_model
            .as_ref()
            .map_or(0, |v| v.searched.load(std::sync::atomic::Ordering::Relaxed));
    runtime.block_on(evaluator.quit_all());
    if let Some(e) = failed() {
        return Err(e.context("an engine failed during the estimated-gradient run"));
    }
    let outcome = result?;
    eprintln!(
        "{searched} positions searched ({:.0} per epoch)",
        searched as f64 / outcome.fitted.epochs.max(1) as f64
    );
    Ok(outcome)
}

/// The longest a run goes without a checkpoint (see `drive`).
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The run's loop, whatever the model: K, files, epochs, checkpoints, final values.
fn drive(
    run: &GradientRun,
    train_obj: &dyn Model,
    valid_obj: Option<&dyn Model>,
    fit_scores: &ScoresAt,
    stop: &dyn Fn() -> bool,
) -> Result<GradientOutcome> {
    let began = Instant::now();
    let p = run.positions;
    let method = p.method;
    let loss_log_path = run.files.loss_log();
    let start: Vec<f64> = run.vars.iter().map(|v| v.start).collect();
    let (mut state, mut log, mut loss_log) = if run.resume {
        let state = read_checkpoint(&run.files.checkpoint)?;
        if state.method != method_name(method) || state.start.len() != run.vars.len() {
            bail!(
                "{}: the checkpoint is of another run (method {}, {} variables)",
                run.files.checkpoint.display(),
                state.method,
                state.start.len()
            );
        }
        let log = ThetaLog::resume(&run.files.theta_log, state.log_bytes)?;
        let loss_log = std::fs::OpenOptions::new()
            .write(true)
            .open(&loss_log_path)
            .with_context(|| format!("{}: cannot open to resume", loss_log_path.display()))?;
        loss_log
            .set_len(state.loss_log_bytes)
            .with_context(|| format!("{}: cannot truncate", loss_log_path.display()))?;
        let mut loss_log = loss_log;
        std::io::Seek::seek(&mut loss_log, std::io::SeekFrom::End(0))?;
        eprintln!("resuming at epoch {} (K = {:.4})", state.epoch, state.k);
        (state, log, loss_log)
    } else {
        let k = match p.k {
            KSetting::Fixed(k) => k,
            KSetting::Fit => {
                let kfit = fit_k(p.loss, &fit_scores(&start)?);
                eprintln!(
                    "K = {:.4} (fitted at the start values: training loss {:.6}; refitted every {K_ROUND} epochs as the weights move, until it settles)",
                    kfit.k, kfit.loss
                );
                kfit.k
            }
        };
        let names: Vec<String> = run.vars.iter().map(|v| v.name.clone()).collect();
        let log = ThetaLog::create(&run.files.theta_log, &names)?;
        let mut loss_log = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&loss_log_path)
            .with_context(|| format!("{}: cannot create the loss log", loss_log_path.display()))?;
        loss_log.write_all(HEADER.as_bytes())?;
        let state = GradientState {
            version: VERSION,
            method: method_name(method).into(),
            seed: run.seed.to_string(),
            k,
            k_refitting: p.k == KSetting::Fit,
            start: start.clone(),
            theta: start.clone(),
            epoch: 0,
            finished: false,
            log_bytes: 0,
            loss_log_bytes: HEADER.len() as u64,
            adam: AdamState::new(&start),
        };
        (state, log, loss_log)
    };
    let settings = FitSettings {
        epochs: p.gradient.epochs,
        learning_rate: p.gradient.learning_rate,
        batch: p.gradient.minibatch,
        patience: p.gradient.patience,
        seed: run.seed,
    };
    let mut io_error: Option<anyhow::Error> = None;
    // Epochs take milliseconds and a checkpoint's fsyncs longer: checkpoint at most every
    // CHECKPOINT_EVERY, and when stopping. The rows of the epochs after the last checkpoint are
    // cut off by a resume, which replays those epochs.
    let mut last_checkpoint: Option<Instant> = None;
    let mut on_progress = |progress: Progress, held: &HeldK, state: &mut GradientState| {
        let stopping = stop();
        let result = (|| -> Result<()> {
            let checkpoint_now = match progress {
                Progress::Epoch(e, adam) => {
                    log.append(e.epoch as u64, &e.theta)?;
                    state.log_bytes = log.flush()?;
                    // Full-set losses, as the local search writes them: one "part" of count 1.
                    let line = part_line(e.epoch as u64, e.train, e.train, 1, e.validation);
                    loss_log.write_all(line.as_bytes())?;
                    state.loss_log_bytes += line.len() as u64;
                    state.epoch = e.epoch;
                    state.theta = e.theta.clone();
                    if let Some(a) = adam {
                        state.adam = a.clone();
                    }
                    eprintln!(
                        "epoch {:>4}: training loss {:.6}{}",
                        e.epoch,
                        e.train,
                        e.validation
                            .map(|v| format!(", validation loss {v:.6}"))
                            .unwrap_or_default()
                    );
                    last_checkpoint.is_none_or(|t| t.elapsed() >= CHECKPOINT_EVERY)
                }
                Progress::Refit {
                    epoch,
                    before,
                    loss,
                    adam,
                } => {
                    eprintln!(
                        "K = {:.4} (refitted at the weights of epoch {epoch}, was {before:.4}: training loss {loss:.6}{})",
                        held.k,
                        if held.refitting { "" } else { "; settled" }
                    );
                    state.k = held.k;
                    state.k_refitting = held.refitting;
                    if let Some(a) = adam {
                        state.adam = a.clone();
                    }
                    // Always: a resume must not repeat the epochs of the old K with the new.
                    true
                }
            };
            if stopping || checkpoint_now {
                loss_log.sync_data()?;
                write_atomically(
                    &run.files.checkpoint,
                    render_checkpoint(state, run.vars, p.gradient.epochs)?.as_bytes(),
                )?;
                last_checkpoint = Some(Instant::now());
            }
            Ok(())
        })();
        match result {
            Ok(()) if !stopping => Control::Continue,
            Ok(()) => Control::Stop,
            Err(err) => {
                io_error = Some(err);
                Control::Stop
            }
        }
    };

    let fit_method = match method {
        Method::Lbfgs => GradientMethod::Lbfgs,
        _ => GradientMethod::Adam,
    };
    let mut optimizer = match fit_method {
        GradientMethod::Adam => state.adam.clone(),
        GradientMethod::Lbfgs => AdamState {
            epoch: state.epoch,
            ..AdamState::new(&state.theta)
        },
    };
    let mut held = HeldK {
        k: state.k,
        refitting: state.k_refitting,
    };
    let fitted = fit::fit_holding_k(
        fit_method,
        train_obj,
        valid_obj,
        p.loss,
        run.vars,
        &settings,
        &mut optimizer,
        &mut held,
        fit_scores,
        |progress, held| on_progress(progress, held, &mut state),
    )?;
    if let Some(e) = io_error {
        return Err(e);
    }

    // The θ log's last row holds the final values (the best epoch's, when validation picked it).
    if fitted.finish != Finish::Interrupted {
        let loss = Loss::new(p.loss, state.k);
        let last = (
            train_obj.loss(&loss, &fitted.theta),
            valid_obj.map(|v| v.loss(&loss, &fitted.theta)),
        );
        log.append(state.epoch as u64 + 1, &fitted.theta)?;
        state.log_bytes = log.flush()?;
        let line = part_line(state.epoch as u64 + 1, last.0, last.0, 1, last.1);
        loss_log.write_all(line.as_bytes())?;
        loss_log.sync_data()?;
        state.loss_log_bytes += line.len() as u64;
        state.theta = fitted.theta.clone();
        state.finished = true;
        write_atomically(
            &run.files.checkpoint,
            render_checkpoint(&state, run.vars, p.gradient.epochs)?.as_bytes(),
        )?;
    }
    Ok(GradientOutcome {
        theta: fitted.theta.clone(),
        start: state.start.clone(),
        k: state.k,
        fitted,
        seconds: began.elapsed().as_secs_f64(),
        validated: valid_obj.is_some(),
    })
}

/// The end-of-run text for stdout: the table, the variables CSV and the `setoption` lines.
pub fn final_report(vars: &[Variable], outcome: &GradientOutcome) -> String {
    let why = match outcome.fitted.finish {
        Finish::Done => "all epochs done",
        Finish::EarlyStop => "validation loss stopped improving",
        Finish::Interrupted => "interrupted",
    };
    format!(
        "{} epochs in {:.1} s ({why}); the values of epoch {} ({}); K = {:.4}\n\n{}\n{}\n{}",
        outcome.fitted.epochs,
        outcome.seconds,
        if outcome.validated {
            outcome.fitted.best_epoch
        } else {
            outcome.fitted.epochs
        },
        if outcome.validated {
            "lowest validation loss"
        } else {
            "the last"
        },
        outcome.k,
        final_table(vars, &outcome.start, &outcome.theta, 0),
        render(Format::Csv, vars, &outcome.theta, 0),
        render(Format::Uci, vars, &outcome.theta, 0),
    )
}

/// `spsa run` for `method = "gradient"` or `"lbfgs"`: settles the seed and the files (refusing
/// to overwrite a run unless `fresh`, which keeps the old files as `.bak`, `.bak.1`, …), runs
/// the tune on a plain thread (exact gradients from `coefficients`, else estimates through the
/// `[engine1]` engine), stops cleanly on Ctrl-C, and prints the final values on stdout.
pub async fn command(
    config: &crate::config::Config,
    vars: Vec<Variable>,
    resume: bool,
    fresh: bool,
) -> Result<()> {
    let positions = config
        .positions
        .clone()
        .context("an exact-gradient run needs objective = \"positions\"")?;
    let files = RunFiles {
        theta_log: config.log.clone(),
        checkpoint: config.checkpoint.clone(),
    };
    let resume = resume && files.checkpoint.exists();
    let seed = if resume {
        read_checkpoint(&files.checkpoint)?
            .seed
            .parse::<u64>()
            .context("damaged checkpoint seed")?
    } else {
        let existing: Vec<PathBuf> = [
            files.theta_log.clone(),
            files.loss_log(),
            files.checkpoint.clone(),
        ]
        .into_iter()
        .filter(|p| p.exists())
        .collect();
        if !existing.is_empty() && !fresh {
            return Err(crate::config::ConfigError::InFile {
                path: config.path.clone(),
                message: format!(
                    "{} exists: continue with --resume, or start over with --fresh",
                    existing[0].display()
                ),
            }
            .into());
        }
        for path in existing {
            backup(&path)?;
        }
        config
            .seed
            .unwrap_or_else(|| rand::Rng::next_u64(&mut rand::rng()))
    };
    let engine = match (&positions.gradient.coefficients, &config.games) {
        (Some(_), _) => None,
        (None, Some(games)) => Some((
            crate::arena::engine_setup("Engine1", &games.engine1),
            EvalSettings {
                search: positions.search,
                deadline: std::time::Duration::from_secs(60),
            },
        )),
        (None, None) => bail!("{}: no engine configured", config.path.display()),
    };
    let threads = config.concurrency.max(1);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let worker = {
        let stop = stop.clone();
        let vars = vars.clone();
        std::thread::spawn(move || {
            let run = GradientRun {
                positions: &positions,
                vars: &vars,
                files,
                threads,
                seed,
                resume,
            };
            let stopped = || stop.load(std::sync::atomic::Ordering::Relaxed);
            let result = match &engine {
                None => self::run(&run, &stopped),
                Some((setup, settings)) => run_uci(&run, setup, *settings, &stopped),
            };
            let _ = tx.send(result);
        })
    };
    let mut rx = rx;
    let result = tokio::select! {
        r = &mut rx => r,
        _ = tokio::signal::ctrl_c() => {
            eprintln!("stopping after this epoch (Ctrl-C)");
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            rx.await
        }
    };
    let _ = worker.join();
    let outcome = result.context("the tuning thread ended without a result")??;
    if outcome.fitted.finish == Finish::Interrupted {
        eprintln!(
            "stopped after epoch {}; checkpoint {}; continue with --resume",
            outcome.fitted.epochs,
            config.checkpoint.display()
        );
    }
    print!("{}", final_report(&vars, &outcome));
    Ok(())
}

/// Renames `path` to the first free `path.bak`, `path.bak.1`, … (the tuner's naming).
fn backup(path: &Path) -> Result<()> {
    let target = crate::tuner::backup_name(path);
    std::fs::rename(path, &target)
        .with_context(|| format!("{}: cannot keep as {}", path.display(), target.display()))
}
