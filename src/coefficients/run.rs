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
use super::fit::{self, AdamState, Control, Epoch, Finish, FitSettings, Fitted, Problem};
use super::objective::Objective;
use crate::config::positions::{KSetting, Method, PositionsConfig, Validation};
use crate::positions::{Loss, fit_k};
use crate::report::export::{Format, render};
use crate::report::loss_curve::{HEADER, LossRow, loss_log_path};
use crate::report::summary::final_table;
use crate::tuner::checkpoint::write_atomically;
use crate::tuner::log::ThetaLog;
use crate::vars::{self, Variable};

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

fn render_checkpoint(state: &GradientState, vars: &[Variable]) -> Result<String> {
    let mut out = String::from(
        "# spsa checkpoint (exact-gradient run): a variables file whose start column is θ.\n\
         # Continue with `spsa run CONFIG --resume`; the `#:` lines are its state.\n",
    );
    let body = toml::to_string(state).context("cannot serialize checkpoint state")?;
    for line in body.lines() {
        out.push_str(STATE_PREFIX);
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&vars::to_csv(vars, &state.theta));
    Ok(out)
}

/// Reads a gradient run's checkpoint.
pub fn read_checkpoint(path: &Path) -> Result<GradientState> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read checkpoint", path.display()))?;
    let state_text: String = text
        .lines()
        .filter_map(|l| l.strip_prefix(STATE_PREFIX))
        .flat_map(|l| [l, "\n"])
        .collect();
    let state: GradientState = toml::from_str(&state_text)
        .with_context(|| format!("{}: not an exact-gradient run's checkpoint", path.display()))?;
    if state.version != VERSION {
        bail!(
            "{}: checkpoint version {} is not supported",
            path.display(),
            state.version
        );
    }
    Ok(state)
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

/// Runs (or resumes) the tune; `stop` is asked after every epoch (Ctrl-C).
pub fn run(run: &GradientRun, stop: &dyn Fn() -> bool) -> Result<GradientOutcome> {
    let began = Instant::now();
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
                let kfit = fit_k(p.loss, &train_obj.scored(&start));
                eprintln!(
                    "K = {:.4} (fitted at the start values: training loss {:.6})",
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
    let loss = Loss::new(p.loss, state.k);
    let settings = FitSettings {
        epochs: p.gradient.epochs,
        learning_rate: p.gradient.learning_rate,
        batch: p.gradient.minibatch,
        patience: p.gradient.patience,
        seed: run.seed,
    };
    let problem = Problem {
        train: &train_obj,
        validation: valid_obj.as_ref(),
        loss,
        vars: run.vars,
    };

    let mut io_error: Option<anyhow::Error> = None;
    let mut on_epoch = |e: &Epoch, adam: Option<&AdamState>, state: &mut GradientState| {
        let result = (|| -> Result<()> {
            log.append(e.epoch as u64, &e.theta)?;
            state.log_bytes = log.flush()?;
            let row = LossRow {
                iteration: e.epoch as u64,
                train: Some(e.train),
                validation: e.validation,
            };
            let line = row.line();
            loss_log.write_all(line.as_bytes())?;
            loss_log.sync_data()?;
            state.loss_log_bytes += line.len() as u64;
            state.epoch = e.epoch;
            state.theta = e.theta.clone();
            if let Some(a) = adam {
                state.adam = a.clone();
            }
            write_atomically(
                &run.files.checkpoint,
                render_checkpoint(state, run.vars)?.as_bytes(),
            )?;
            Ok(())
        })();
        eprintln!(
            "epoch {:>4}: training loss {:.6}{}",
            e.epoch,
            e.train,
            e.validation
                .map(|v| format!(", validation loss {v:.6}"))
                .unwrap_or_default()
        );
        match result {
            Ok(()) if !stop() => Control::Continue,
            Ok(()) => Control::Stop,
            Err(err) => {
                io_error = Some(err);
                Control::Stop
            }
        }
    };

    let fitted = match method {
        Method::Lbfgs => {
            let from = state.theta.clone();
            let first = state.epoch;
            let mut st = state.clone();
            let f = fit::lbfgs(problem, &settings, &from, first, |e| {
                on_epoch(e, None, &mut st)
            });
            state = st;
            f
        }
        _ => {
            let mut adam = state.adam.clone();
            let mut st = state.clone();
            let f = fit::adam(problem, &settings, &mut adam, |e, a| {
                on_epoch(e, Some(a), &mut st)
            });
            state = st;
            f
        }
    };
    if let Some(e) = io_error {
        return Err(e);
    }

    // The θ log's last row holds the final values (the best epoch's, when validation picked it).
    if fitted.finish != Finish::Interrupted {
        let last = problem_record(&train_obj, valid_obj.as_ref(), &loss, &fitted.theta);
        log.append(state.epoch as u64 + 1, &fitted.theta)?;
        state.log_bytes = log.flush()?;
        let line = LossRow {
            iteration: state.epoch as u64 + 1,
            train: Some(last.0),
            validation: last.1,
        }
        .line();
        loss_log.write_all(line.as_bytes())?;
        loss_log.sync_data()?;
        state.loss_log_bytes += line.len() as u64;
        state.theta = fitted.theta.clone();
        state.finished = true;
        write_atomically(
            &run.files.checkpoint,
            render_checkpoint(&state, run.vars)?.as_bytes(),
        )?;
    }
    Ok(GradientOutcome {
        theta: fitted.theta.clone(),
        start: state.start.clone(),
        k: state.k,
        fitted,
        seconds: began.elapsed().as_secs_f64(),
        validated: validation.is_some(),
    })
}

fn problem_record(
    train: &Objective,
    validation: Option<&Objective>,
    loss: &Loss,
    theta: &[f64],
) -> (f64, Option<f64>) {
    (
        train.loss(loss, theta),
        validation.map(|v| v.loss(loss, theta)),
    )
}

/// The end-of-run text for stdout: the table, the variables CSV and the `setoption` lines.
pub fn final_report(vars: &[Variable], outcome: &GradientOutcome) -> String {
    let why = match outcome.fitted.finish {
        Finish::Done => "all epochs done",
        Finish::EarlyStop => "validation loss stopped improving",
        Finish::Interrupted => "interrupted",
    };
    format!(
        "{} epochs in {:.1} s ({why}); the values of epoch {} ({})\n\n{}\n{}\n{}",
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
        final_table(vars, &outcome.start, &outcome.theta, 0),
        render(Format::Csv, vars, &outcome.theta, 0),
        render(Format::Uci, vars, &outcome.theta, 0),
    )
}
