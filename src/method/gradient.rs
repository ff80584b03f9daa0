//! A tune with exact gradients from a coefficient file (`objective = "positions"`,
//! `coefficients = "FILE"`, `method = "gradient"` or `"lbfgs"`), with the outputs of every run:
//! the θ log (one row per epoch, the last row the final values), the loss log beside it (the
//! learning curve `spsa report --plot` draws), a checkpoint after every epoch (resume continues
//! Adam exactly; L-BFGS restarts its history from the checkpointed θ), and the final values as a
//! table, a variables CSV and `setoption` lines.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::arena::EngineSetup;
use crate::coefficients::estimated::{Estimate, UciModel};
use crate::coefficients::fit::{
    self, AdamState, Control, Finish, FitSettings, Fitted, GradientMethod, HeldK, K_ROUND,
    Progress, ScoresAt,
};
use crate::coefficients::objective::{Model, Objective};
use crate::config::positions::{KSetting, Method, PositionsConfig};
use crate::positions::Outcome;
use crate::positions::eval::{EvalSettings, Evaluator};
use crate::positions::loss_log::{HEADER, loss_log_path, part_line};
use crate::positions::{Loss, fit_k};
use crate::report::export::{Format, render};
use crate::report::summary::final_table;
use crate::source::Record;
use crate::source::positions::{load_sets, scored_through};
use crate::spsa::Schedule;
use crate::tuner::checkpoint::{self, Checkpoint, RunState};
use crate::tuner::session::SessionStart;
use crate::tuner::{Session, StartMode, UserError};
use crate::vars::Variable;

/// The checkpoint table that holds what only a gradient run has.
const PART: &str = "gradient";

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

    /// The same files as every run names them (the loss log its one output).
    fn tuner_files(&self) -> crate::tuner::RunFiles {
        crate::tuner::RunFiles {
            log: self.theta_log.clone(),
            checkpoint: self.checkpoint.clone(),
            checkpoint_interval: CHECKPOINT_EVERY,
            outputs: vec![self.loss_log()],
        }
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

/// A gradient run's checkpoint as read back: the run's state and its `[gradient]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct GradientState {
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

/// The part of the checkpoint only a gradient run has, in its `[gradient]` table (the rest is
/// the [`RunState`] of every run, so `spsa report` reads it like any run's).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct GradientPart {
    method: String,
    k: f64,
    #[serde(default)]
    k_refitting: bool,
    epoch: usize,
    /// The loss log's length, kept by checkpoints written before the loss log was one of the
    /// run's tracked outputs; read to cut the loss log back when such a run is resumed.
    #[serde(default, skip_serializing)]
    loss_log_bytes: Option<u64>,
    adam: AdamState,
}

/// Reads a gradient run's checkpoint.
pub fn read_checkpoint(path: &Path) -> Result<GradientState> {
    let ck = checkpoint::read(path)?;
    let part: GradientPart = ck
        .parts
        .get(PART)?
        .with_context(|| format!("{}: not an exact-gradient run's checkpoint", path.display()))?;
    let s = ck.state;
    Ok(GradientState {
        method: part.method,
        seed: s.seed,
        k: part.k,
        k_refitting: part.k_refitting,
        start: s.start,
        theta: s.theta,
        epoch: part.epoch,
        finished: s.finished,
        adam: part.adam,
    })
}

/// The state of a gradient run before its first epoch: an epoch is not an SPSA iteration, so
/// the schedule holds only how many epochs are planned.
fn fresh_state(seed: u64, vars: &[Variable], epochs: usize) -> RunState {
    let schedule = Schedule {
        iterations: epochs as u64,
        a: 0.0,
        alpha: 0.0,
        gamma: 0.0,
    };
    RunState::fresh(seed, vars.iter().map(|v| v.start).collect(), &schedule, 0)
}

/// A checkpoint a gradient run of `method` over `vars` can continue: its own, or one written
/// before its first epoch (no `[gradient]` table yet, nothing applied).
fn check_resume(ck: &Checkpoint, method: Method, vars: &[Variable]) -> Result<()> {
    let part: Option<GradientPart> = ck.parts.get(PART)?;
    let names = |v: &[Variable]| v.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    let same = names(&ck.vars) == names(vars)
        && match &part {
            Some(p) => p.method == method_name(method),
            None => ck.state.applied == 0,
        };
    if !same {
        return Err(UserError(format!(
            "{}: cannot resume: the checkpoint is of another run ({}, variables {}); use --fresh to start a new run (the old files are kept as backups)",
            ck.path.display(),
            part.map_or("not a gradient run".to_string(), |p| format!(
                "method {}",
                p.method
            )),
            names(&ck.vars).join(", ")
        ))
        .into());
    }
    Ok(())
}

/// Checks the start of a gradient run over its files: new, or resumed from its checkpoint.
fn session_start(run: &GradientRun) -> Result<SessionStart> {
    let mode = if run.resume {
        StartMode::Resume
    } else {
        StartMode::New
    };
    let method = run.positions.method;
    SessionStart::check(
        run.vars.to_vec(),
        run.files.tuner_files(),
        mode,
        fresh_state(run.seed, run.vars, run.positions.gradient.epochs),
        |ck| check_resume(ck, method, run.vars),
    )
}

/// Opens the run's files from a checked start.
fn open_session(run: &GradientRun, start: SessionStart) -> Result<Session> {
    if let Some(ck) = start.checkpoint() {
        cut_untracked_loss_log(ck, &run.files.loss_log())?;
    }
    start.open()
}

/// A checkpoint from before the loss log was a tracked output keeps its length in the
/// `[gradient]` table: cut the loss log back to it, as a resume cuts every tracked file.
fn cut_untracked_loss_log(ck: &Checkpoint, loss_log: &Path) -> Result<()> {
    let tracked = ck
        .state
        .outputs
        .contains_key(loss_log.to_string_lossy().as_ref());
    let kept = ck
        .parts
        .get::<GradientPart>(PART)?
        .and_then(|p| p.loss_log_bytes);
    if let (false, Some(len)) = (tracked, kept) {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(loss_log)
            .with_context(|| format!("{}: cannot open to resume", loss_log.display()))?;
        file.set_len(len)
            .with_context(|| format!("{}: cannot truncate", loss_log.display()))?;
    }
    Ok(())
}

/// Runs (or resumes) the tune from the coefficient file the config names; `stop` is asked
/// after every epoch (Ctrl-C).
pub fn run(run: &GradientRun, stop: &dyn Fn() -> bool) -> Result<GradientOutcome> {
    exact(run, session_start(run)?, stop).map(|(_, outcome)| outcome)
}

/// [`run`] over a checked start: the data are loaded before the run's files are opened.
fn exact(
    run: &GradientRun,
    start: SessionStart,
    stop: &dyn Fn() -> bool,
) -> Result<(Session, GradientOutcome)> {
    let p = run.positions;
    let method = p.method;
    if !matches!(method, Method::Gradient | Method::Lbfgs) {
        bail!("an exact-gradient run needs method = \"gradient\" or \"lbfgs\"");
    }
    let load_began = Instant::now();
    let (train, validation) = crate::coefficients::split_sets(p, run.seed)?;
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
    let mut session = open_session(run, start)?;
    let outcome = drive(
        run,
        &mut session,
        &train_obj,
        valid_obj.as_ref().map(|v| v as &dyn Model),
        &|start| Ok(train_obj.scored(start)),
        stop,
    )?;
    Ok((session, outcome))
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
    through_uci(run, session_start(run)?, setup, settings, stop).map(|(_, outcome)| outcome)
}

/// [`run_uci`] over a checked start: the run's files are opened once the engines run.
fn through_uci(
    run: &GradientRun,
    start: SessionStart,
    setup: &EngineSetup,
    settings: EvalSettings,
    stop: &dyn Fn() -> bool,
) -> Result<(Session, GradientOutcome)> {
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
    let result = open_session(run, start).and_then(|mut session| {
        drive(
            run,
            &mut session,
            &train_model,
            valid_model.as_ref().map(|v| v as &dyn Model),
            &fit_scores,
            &|| stop() || train_model.error.lock().is_ok_and(|e| e.is_some()),
        )
        .map(|outcome| (session, outcome))
    });
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
    let (session, outcome) = result?;
    eprintln!(
        "{searched} positions searched ({:.0} per epoch)",
        searched as f64 / outcome.fitted.epochs.max(1) as f64
    );
    Ok((session, outcome))
}

/// The longest a run goes without a checkpoint (see `drive`).
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Keeps the run's checkpoint state in step with a fit: θ, rows, K and Adam's state.
fn note_epoch(session: &mut Session, part: &mut GradientPart, epoch: usize, theta: &[f64]) {
    part.epoch = epoch;
    session.state.theta = theta.to_vec();
    session.state.applied = epoch as u64;
    session.state.next_fresh = epoch as u64;
}

/// Saves the run with its `[gradient]` table.
fn save(session: &mut Session, part: &GradientPart) -> Result<()> {
    session.parts.set(PART, part)?;
    session.save()
}

/// The run's loop, whatever the model: K, epochs, θ and loss rows, checkpoints, final values.
fn drive(
    run: &GradientRun,
    session: &mut Session,
    train_obj: &dyn Model,
    valid_obj: Option<&dyn Model>,
    fit_scores: &ScoresAt,
    stop: &dyn Fn() -> bool,
) -> Result<GradientOutcome> {
    let began = Instant::now();
    let p = run.positions;
    let method = p.method;
    let loss_log = run.files.loss_log();
    let mut part = match session.parts.get::<GradientPart>(PART)? {
        Some(part) => {
            eprintln!("resuming at epoch {} (K = {:.4})", part.epoch, part.k);
            part
        }
        None => {
            let start = session.state.start.clone();
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
            session.record(&Record {
                path: loss_log.clone(),
                text: HEADER.into(),
            })?;
            let part = GradientPart {
                method: method_name(method).into(),
                k,
                k_refitting: p.k == KSetting::Fit,
                epoch: 0,
                loss_log_bytes: None,
                adam: AdamState::new(&start),
            };
            save(session, &part)?;
            part
        }
    };
    let settings = FitSettings {
        epochs: p.gradient.epochs,
        learning_rate: p.gradient.learning_rate,
        batch: p.gradient.minibatch,
        patience: p.gradient.patience,
        seed: run.seed,
        ..FitSettings::default()
    };
    let mut io_error: Option<anyhow::Error> = None;
    // Epochs take milliseconds and a checkpoint's fsyncs longer: checkpoint at most every
    // CHECKPOINT_EVERY, and when stopping. The rows of the epochs after the last checkpoint are
    // cut off by a resume, which replays those epochs.
    let mut last_checkpoint: Option<Instant> = None;
    let mut on_progress = |progress: Progress,
                           held: &HeldK,
                           session: &mut Session,
                           part: &mut GradientPart| {
        let stopping = stop();
        let result = (|| -> Result<()> {
            let checkpoint_now = match progress {
                Progress::Epoch(e, adam) => {
                    session.log_theta(e.epoch as u64, &e.theta)?;
                    // Full-set losses, as the local search writes them: one "part" of count 1.
                    session.record(&Record {
                        path: loss_log.clone(),
                        text: part_line(e.epoch as u64, e.train, e.train, 1, e.validation),
                    })?;
                    note_epoch(session, part, e.epoch, &e.theta);
                    if let Some(a) = adam {
                        part.adam = a.clone();
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
                    part.k = held.k;
                    part.k_refitting = held.refitting;
                    if let Some(a) = adam {
                        part.adam = a.clone();
                    }
                    // Always: a resume must not repeat the epochs of the old K with the new.
                    true
                }
            };
            if stopping || checkpoint_now {
                save(session, part)?;
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
        GradientMethod::Adam => part.adam.clone(),
        GradientMethod::Lbfgs => AdamState {
            epoch: part.epoch,
            ..AdamState::new(&session.state.theta)
        },
    };
    let mut held = HeldK {
        k: part.k,
        refitting: part.k_refitting,
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
        |progress, held| on_progress(progress, held, session, &mut part),
    )?;
    if let Some(e) = io_error {
        return Err(e);
    }

    // The θ log's last row holds the final values (the best epoch's, when validation picked it).
    if fitted.finish != Finish::Interrupted {
        let loss = Loss::new(p.loss, part.k);
        let last = (
            train_obj.loss(&loss, &fitted.theta),
            valid_obj.map(|v| v.loss(&loss, &fitted.theta)),
        );
        let row = part.epoch as u64 + 1;
        session.log_theta(row, &fitted.theta)?;
        session.record(&Record {
            path: loss_log.clone(),
            text: part_line(row, last.0, last.0, 1, last.1),
        })?;
        let state = &mut session.state;
        state.theta = fitted.theta.clone();
        state.applied = row;
        state.next_fresh = row;
        state.iterations = row;
        state.finished = true;
        save(session, &part)?;
    }
    Ok(GradientOutcome {
        theta: fitted.theta.clone(),
        start: session.state.start.clone(),
        k: part.k,
        fitted,
        seconds: began.elapsed().as_secs_f64(),
        // L-BFGS-B keeps its last iterate; only Adam's values are chosen by validation.
        validated: valid_obj.is_some() && fit_method == GradientMethod::Adam,
    })
}

/// The end-of-run text for stdout: the table, the variables CSV and the `setoption` lines.
pub fn final_report(vars: &[Variable], outcome: &GradientOutcome) -> String {
    let why = match outcome.fitted.finish {
        Finish::Done => "all epochs done".to_string(),
        Finish::Stopped(stop) => format!("stopped: {stop}"),
        Finish::EarlyStop => "validation loss stopped improving".to_string(),
        Finish::Interrupted => "interrupted".to_string(),
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

/// `method = "gradient"` or `"lbfgs"` as the run loop drives it: Adam or L-BFGS-B with exact
/// gradients from the coefficient file the config names, or with gradients estimated through
/// its `[engine1]` engine. The fit runs on a plain thread (it keeps both cores busy, and the
/// estimates drive engines on a runtime of their own); Ctrl-C stops it after the epoch under way.
pub struct GradientTune {
    positions: PositionsConfig,
    vars: Vec<Variable>,
    files: RunFiles,
    threads: usize,
    seed: u64,
    engine: Option<(EngineSetup, EvalSettings)>,
    /// Where the engines log their lines (`games.engine_log`): opened when the run starts, so a
    /// refused start leaves no trace.
    engine_log: Option<PathBuf>,
    outcome: Option<GradientOutcome>,
}

impl GradientTune {
    pub fn new(config: &crate::config::Config, vars: &[Variable], seed: u64) -> Result<Self> {
        let positions = config
            .positions
            .clone()
            .context("an exact-gradient run needs objective = \"positions\"")?;
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
        Ok(GradientTune {
            positions,
            vars: vars.to_vec(),
            files: RunFiles {
                theta_log: config.log.clone(),
                checkpoint: config.checkpoint.clone(),
            },
            threads: config.concurrency.max(1),
            seed,
            engine,
            engine_log: config.games.as_ref().and_then(|g| g.engine_log.clone()),
            outcome: None,
        })
    }
}

impl crate::method::Method for GradientTune {
    fn check_resume(&self, ck: &Checkpoint) -> Result<()> {
        check_resume(ck, self.positions.method, &self.vars)
    }

    fn fresh_state(&self) -> RunState {
        fresh_state(self.seed, &self.vars, self.positions.gradient.epochs)
    }

    fn run<'a>(
        &'a mut self,
        mut start: SessionStart,
        shutdown: &'a crate::runtime::shutdown::Shutdown,
    ) -> futures::future::LocalBoxFuture<'a, Result<(Session, crate::tuner::Ending)>> {
        start.add_outputs([self.files.loss_log()]);
        Box::pin(async move {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let (positions, vars, files) = (
                self.positions.clone(),
                self.vars.clone(),
                self.files.clone(),
            );
            let (threads, seed, mut engine) = (self.threads, self.seed, self.engine.clone());
            if let Some((setup, _)) = &mut engine {
                setup.log_to(self.engine_log.as_deref())?;
            }
            let shutdown = shutdown.clone();
            let worker = std::thread::spawn(move || {
                let run = GradientRun {
                    positions: &positions,
                    vars: &vars,
                    files,
                    threads,
                    seed,
                    resume: false,
                };
                let stop = || shutdown.is_requested();
                let result = match &engine {
                    None => exact(&run, start, &stop),
                    Some((setup, settings)) => through_uci(&run, start, setup, *settings, &stop),
                };
                let _ = tx.send(result);
            });
            let result = rx.await;
            // The thread has sent its result: it ends at once.
            let _ = worker.join();
            let (session, outcome) =
                result.context("the tuning thread ended without a result")??;
            let ending = match outcome.fitted.finish {
                Finish::Interrupted => crate::tuner::Ending::Interrupted,
                _ => crate::tuner::Ending::Finished,
            };
            self.outcome = Some(outcome);
            Ok((session, ending))
        })
    }

    fn progress(&self, state: &RunState) -> String {
        format!("epoch {} of {}", state.applied, state.iterations)
    }

    fn summary(&self, session: &Session) -> String {
        match &self.outcome {
            Some(outcome) => final_report(&self.vars, outcome),
            None => {
                let theta = &session.state.theta;
                format!(
                    "{}\n{}\n{}",
                    final_table(&self.vars, &session.state.start, theta, 0),
                    render(Format::Csv, &self.vars, theta, 0),
                    render(Format::Uci, &self.vars, theta, 0),
                )
            }
        }
    }
}
