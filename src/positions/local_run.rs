//! `method = "local"` as a run: Texel's local search ([`super::local`]) kept on disk with the same
//! files as a tune by SPSA, so `--resume`, `--fresh`, Ctrl-C, `spsa report`, `--plot` and
//! `spsa verify` work unchanged. The θ log gets a row for every kept change (its last row holds
//! the final values), the loss log a row for every pass, and the checkpoint (θ, how many changes)
//! is written after every kept change; a resume starts a new pass from the checkpoint's θ.

use anyhow::{Context, Result};

use super::eval::EvalSettings;
use super::local::{LocalEvent, LocalProblem, local_search};
use super::loss::{Loss, k_still_moving};
use super::source::{PositionSource, fit_k_through};
use crate::arena::engine_setup;
use crate::config::Config;
use crate::config::positions::{KSetting, PositionsConfig};
use crate::report::loss_curve::{loss_log_path, part_line};
use crate::shutdown::Shutdown;
use crate::source::Record;
use crate::tuner::checkpoint::{self, RunState};
use crate::tuner::log::ThetaLog;
use crate::tuner::{Outputs, RunFiles, RunPlan, StartMode, Tuner, backup_name};
use crate::vars::Variable;

/// How a local run ended.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalRunEnd {
    pub start: Vec<f64>,
    pub theta: Vec<f64>,
    pub interrupted: bool,
    pub passes: u32,
}

/// Passes at most (each pass that changes something is followed by another).
const MAX_PASSES: u32 = 1000;

/// Run (or resume) the local search of `config` with the run's files.
pub async fn run(
    config: &Config,
    p: &PositionsConfig,
    vars: Vec<Variable>,
    plan: RunPlan,
    mode: StartMode,
    shutdown: &Shutdown,
) -> Result<LocalRunEnd> {
    let loss_log = loss_log_path(&config.log);
    let files = RunFiles {
        log: config.log.clone(),
        checkpoint: config.checkpoint.clone(),
        checkpoint_interval: config.checkpoint_every(),
        outputs: vec![loss_log.clone()],
    };
    Tuner::check_start(&vars, &plan, &files, mode)?;
    let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
    let start: Vec<f64> = vars.iter().map(|v| v.start).collect();
    let (mut state, mut log, mut outputs) = match mode {
        StartMode::Resume => {
            let ck = checkpoint::read(&files.checkpoint)?;
            let log = ThetaLog::resume(&files.log, ck.state.log_bytes)?;
            let outputs = Outputs::resume(&ck.state.outputs)?;
            (ck.state, log, outputs)
        }
        _ => {
            if mode == StartMode::Fresh {
                for path in [&files.log, &files.checkpoint, &loss_log] {
                    if path.exists() {
                        let bak = backup_name(path);
                        std::fs::rename(path, &bak).with_context(|| {
                            format!("{}: cannot move aside to {}", path.display(), bak.display())
                        })?;
                    }
                }
            }
            let log = ThetaLog::create(&files.log, &names)?;
            let state = RunState::fresh(plan.seed, start.clone(), &plan.schedule, plan.pairs);
            (state, log, Outputs::new(&files.outputs))
        }
    };
    let save = |state: &mut RunState, log: &mut ThetaLog, outputs: &mut Outputs| -> Result<()> {
        state.log_bytes = log.flush()?;
        outputs.sync()?;
        state.outputs = outputs.lengths();
        state.next_fresh = state.applied + 1;
        checkpoint::write(&files.checkpoint, state, &vars)
    };
    save(&mut state, &mut log, &mut outputs)?;
    if state.finished {
        eprintln!(
            "{}: the run had already finished",
            files.checkpoint.display()
        );
        return Ok(LocalRunEnd {
            start: state.start.clone(),
            theta: state.theta.clone(),
            interrupted: false,
            passes: 0,
        });
    }

    let games = config
        .games
        .as_ref()
        .context("a tune from positions needs [engine1]")?;
    let settings = EvalSettings {
        search: p.search,
        deadline: std::time::Duration::from_millis(games.limits.stall_timeout_ms),
    };
    let setup = engine_setup("engine1", &games.engine1);
    // K (`k = "fit"`) is fitted at the values the search starts from: the start, or on a resume
    // the checkpoint's θ, as refitting would have left it there.
    let source = PositionSource::open(
        p,
        &setup,
        settings,
        names.clone(),
        &state.theta,
        plan.seed,
        config.concurrency,
    )
    .await?;
    let problem = LocalProblem {
        names,
        steps: vars.iter().map(|v| v.c_end.round().max(1.0)).collect(),
        min: vars.iter().map(|v| v.min).collect(),
        max: vars.iter().map(|v| v.max).collect(),
    };
    // With `k = "fit"`, K and the weights take turns: the search runs until no step helps at
    // this K, K is refitted at the values found, and the search goes on from there until a refit
    // moves K by less than K_SETTLED (a K fitted once at a bad start would scale the weights).
    let mut loss = source.loss;
    let mut refitting = p.k == KSetting::Fit;
    let mut failure = None;
    let result = loop {
        let from = state.theta.clone();
        let result = local_search(
            &source.evaluator,
            &source.train,
            source.validation.as_ref(),
            &loss,
            &problem,
            &from,
            MAX_PASSES,
            || !shutdown.is_requested(),
            |event| {
                let r = (|| -> Result<()> {
                    match event {
                        LocalEvent::Accepted { theta, train_loss } => {
                            state.applied += 1;
                            state.theta = theta.to_vec();
                            log.append(state.applied, theta)?;
                            eprintln!("change {}: training loss {train_loss:.6}", state.applied);
                            save(&mut state, &mut log, &mut outputs)?;
                        }
                        LocalEvent::PassEnd {
                            pass,
                            train_loss,
                            validation_loss,
                            changed,
                            ..
                        } => {
                            let n = source.train.len() as f64;
                            outputs.append(&Record {
                                path: loss_log.clone(),
                                text: part_line(
                                    state.applied,
                                    train_loss * n,
                                    train_loss * n,
                                    source.train.len() as u64,
                                    validation_loss,
                                ),
                            })?;
                            eprintln!(
                                "pass {pass}: training loss {train_loss:.6}{}{}",
                                validation_loss
                                    .map(|v| format!(", validation loss {v:.6}"))
                                    .unwrap_or_default(),
                                if changed { "" } else { " (no change: done)" }
                            );
                            save(&mut state, &mut log, &mut outputs)?;
                        }
                    }
                    Ok(())
                })();
                if let Err(e) = &r {
                    failure = Some(format!("{e:#}"));
                }
                r
            },
        )
        .await;
        match result {
            Ok(r) if refitting && !r.interrupted => {
                let refit = fit_k_through(
                    &source.evaluator,
                    &source.train,
                    &source.names,
                    p.loss,
                    &r.theta,
                )
                .await;
                let (fit, scored) = match refit {
                    Ok(found) => found,
                    Err(e) => break Err(e), // the engines are still to be stopped
                };
                refitting = k_still_moving(loss.k, fit.k);
                eprintln!(
                    "K = {:.4} (refitted on {scored} training positions at the values found, was {:.4}: {} loss {:.6}{})",
                    fit.k,
                    loss.k,
                    p.loss.name(),
                    fit.loss,
                    if refitting {
                        "; searching again"
                    } else {
                        "; settled"
                    }
                );
                if !refitting {
                    break Ok(r);
                }
                loss = Loss::new(p.loss, fit.k);
            }
            other => break other,
        }
    };
    source.evaluator.quit_all().await;
    let result = result.with_context(|| failure.unwrap_or_default())?;
    if !result.interrupted {
        state.finished = true;
    }
    save(&mut state, &mut log, &mut outputs)?;
    Ok(LocalRunEnd {
        start: state.start.clone(),
        theta: state.theta.clone(),
        interrupted: result.interrupted,
        passes: result.passes,
    })
}
