//! `method = "local"` as a run: Texel's local search ([`super::local`]) kept on disk with the same
//! files as a tune by SPSA, so `--resume`, `--fresh`, Ctrl-C, `spsa report`, `--plot` and
//! `spsa verify` work unchanged. The θ log gets a row for every kept change (its last row holds
//! the final values), the loss log a row for every pass, and the checkpoint (θ, how many changes)
//! is written after every kept change; a resume starts a new pass from the checkpoint's θ.
//!
//! The losses come from positions scored through the config's engine, or, with
//! `coefficients = FILE`, from the evaluation terms an engine exported (no engine is started).

use anyhow::{Context, Result};
use futures::future::LocalBoxFuture;

use crate::arena::engine_setup;
use crate::coefficients::objective::Objective;
use crate::config::Config;
use crate::config::positions::{KSetting, PositionsConfig};
use crate::method::Method;
use crate::positions::eval::EvalSettings;
use crate::positions::local::{
    LocalEvent, LocalObjective, LocalProblem, Scored, UciLoss, local_search,
};
use crate::positions::loss::{KFit, Loss, LossKind, fit_k, k_still_moving, start_loss};
use crate::positions::loss_log::{HEADER, loss_log_path, part_line};
use crate::report::summary::final_table;
use crate::runtime::shutdown::Shutdown;
use crate::source::Record;
use crate::source::positions::{PositionSource, fit_k_through};
use crate::tuner::checkpoint::{Checkpoint, RunState};
use crate::tuner::session::SessionStart;
use crate::tuner::{Ending, RunPlan, Session, check_same_run};
use crate::vars::Variable;

/// Passes at most (each pass that changes something is followed by another).
const MAX_PASSES: u32 = 1000;

/// `method = "local"` as the run loop drives it.
pub struct LocalSearch {
    config: Config,
    positions: PositionsConfig,
    vars: Vec<Variable>,
    plan: RunPlan,
}

impl LocalSearch {
    pub fn new(config: &Config, vars: &[Variable], plan: RunPlan) -> Result<LocalSearch> {
        let positions = config
            .positions
            .clone()
            .context("a local search needs objective = \"positions\"")?;
        Ok(LocalSearch {
            config: config.clone(),
            positions,
            vars: vars.to_vec(),
            plan,
        })
    }
}

impl Method for LocalSearch {
    fn check_resume(&self, ck: &Checkpoint) -> Result<()> {
        check_same_run(ck, &self.vars, &self.plan)
    }

    fn fresh_state(&self) -> RunState {
        self.plan.fresh_state(&self.vars)
    }

    fn run<'a>(
        &'a mut self,
        start: SessionStart,
        shutdown: &'a Shutdown,
    ) -> LocalBoxFuture<'a, Result<(Session, Ending)>> {
        Box::pin(search(self, start, shutdown))
    }

    fn progress(&self, state: &RunState) -> String {
        format!("{} kept changes", state.applied)
    }

    fn summary(&self, session: &Session) -> String {
        let s = &session.state;
        final_table(&self.vars, &s.start, &s.theta, 0)
    }
}

/// Where the search's losses come from (one per run: the size of its variants does not matter).
#[allow(clippy::large_enum_variant)]
enum Data {
    /// Positions scored by the config's engines.
    Uci(PositionSource),
    /// Coefficient files: the loss at θ from the exported terms, no engine.
    Coefficients {
        train: Objective,
        validation: Option<Objective>,
    },
}

impl LocalObjective for Data {
    fn train_loss<'a>(
        &'a self,
        loss: &'a Loss,
        theta: &'a [f64],
    ) -> LocalBoxFuture<'a, Result<(f64, u64)>> {
        match self {
            Data::Uci(source) => Box::pin(async move { uci(source).train_loss(loss, theta).await }),
            Data::Coefficients { train, .. } => {
                let l = train.loss(loss, theta);
                Box::pin(async move { Ok((l, 0)) })
            }
        }
    }

    fn train_scores<'a>(&'a self, theta: &'a [f64]) -> LocalBoxFuture<'a, Result<Scored>> {
        match self {
            Data::Uci(source) => Box::pin(async move { uci(source).train_scores(theta).await }),
            Data::Coefficients { train, .. } => {
                let scored = train.scored(theta);
                Box::pin(async move { Ok((scored, 0)) })
            }
        }
    }

    fn validation_loss<'a>(
        &'a self,
        loss: &'a Loss,
        theta: &'a [f64],
    ) -> LocalBoxFuture<'a, Result<Option<f64>>> {
        match self {
            Data::Uci(source) => {
                Box::pin(async move { uci(source).validation_loss(loss, theta).await })
            }
            Data::Coefficients { validation, .. } => {
                let l = validation.as_ref().map(|v| v.loss(loss, theta));
                Box::pin(async move { Ok(l) })
            }
        }
    }
}

/// The engines' view of a positions source.
fn uci(source: &PositionSource) -> UciLoss<'_> {
    UciLoss {
        evaluator: &source.evaluator,
        train: &source.train,
        validation: source.validation.as_ref(),
        names: &source.names,
    }
}

impl Data {
    /// Open the data and settle the loss at `theta` (K fitted there with `k = "fit"`): from the
    /// coefficient files when the config names them, else by starting the engines.
    async fn open(method: &LocalSearch, theta: &[f64]) -> Result<(Data, Loss)> {
        let (config, p, vars) = (&method.config, &method.positions, &method.vars);
        if p.gradient.coefficients.is_some() {
            let (train, validation) = crate::coefficients::split_sets(p, method.plan.seed)?;
            let threads = config.concurrency.max(1);
            let objective = |data, what: &str| {
                Objective::new(data, vars, threads).with_context(|| what.to_string())
            };
            let train_obj = objective(&train, &format!("{}", p.train.display()))?;
            let valid_obj = match &validation {
                Some(v) => Some(objective(v, "the validation coefficients")?),
                None => None,
            };
            eprintln!(
                "local search on coefficient files: {} training and {} validation positions",
                train.len(),
                validation.as_ref().map_or(0, |v| v.len()),
            );
            let loss = start_loss(p.loss, p.k, || train_obj.scored(theta));
            let data = Data::Coefficients {
                train: train_obj,
                validation: valid_obj,
            };
            return Ok((data, loss));
        }
        let games = config
            .games
            .as_ref()
            .context("a tune from positions needs [engine1]")?;
        let settings = EvalSettings {
            search: p.search,
            deadline: std::time::Duration::from_millis(games.limits.stall_timeout_ms),
        };
        let mut setup = engine_setup("engine1", &games.engine1);
        setup.log_to(games.engine_log.as_deref())?;
        let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
        let source = PositionSource::open(
            p,
            &setup,
            settings,
            names,
            theta,
            method.plan.seed,
            config.concurrency,
        )
        .await?;
        let loss = source.loss;
        Ok((Data::Uci(source), loss))
    }

    /// K refitted at θ, and how many training positions were scored for it.
    async fn refit_k(&self, kind: LossKind, theta: &[f64]) -> Result<(KFit, usize)> {
        match self {
            Data::Uci(source) => {
                fit_k_through(&source.evaluator, &source.train, &source.names, kind, theta).await
            }
            Data::Coefficients { train, .. } => {
                Ok((fit_k(kind, &train.scored(theta)), train.len()))
            }
        }
    }

    fn train_len(&self) -> usize {
        match self {
            Data::Uci(source) => source.train.len(),
            Data::Coefficients { train, .. } => train.len(),
        }
    }

    /// Stop the engines, if any.
    async fn close(&self) {
        if let Data::Uci(source) = self {
            source.evaluator.quit_all().await;
        }
    }
}

/// The search with the run's files: the data (engines or coefficient files) first, then the
/// files, then passes until no step helps (and, with `k = "fit"`, until K settles).
async fn search(
    method: &LocalSearch,
    mut start: SessionStart,
    shutdown: &Shutdown,
) -> Result<(Session, Ending)> {
    let (config, p, vars) = (&method.config, &method.positions, &method.vars);
    let loss_log = loss_log_path(&config.log);
    start.add_outputs([loss_log.clone()]);
    let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
    // K (`k = "fit"`) is fitted at the values the search starts from: the start, or on a resume
    // the checkpoint's θ, as refitting would have left it there.
    let (data, mut loss) = Data::open(method, start.theta()).await?;
    let mut session = match start.open() {
        Ok(session) => session,
        Err(e) => {
            data.close().await;
            return Err(e);
        }
    };
    if session.is_new_run() {
        session.record(&Record {
            path: loss_log.clone(),
            text: HEADER.into(),
        })?;
    }
    let problem = LocalProblem {
        names,
        steps: vars.iter().map(|v| v.c_end.round().max(1.0)).collect(),
        min: vars.iter().map(|v| v.min).collect(),
        max: vars.iter().map(|v| v.max).collect(),
        fit_k: p.k == KSetting::Fit,
    };
    // With `k = "fit"`, the search scores every value set at its own K (a K fitted once at a
    // bad start would scale the weights), so it ends at values and the K that fits them. A refit
    // on the training set at those values confirms it; should it move by more than K_SETTLED
    // (positions the engine failed on during the search scored now), the search goes on.
    let mut refitting = p.k == KSetting::Fit;
    let mut failure = None;
    let result = loop {
        let from = session.state.theta.clone();
        let result = local_search(
            &data,
            &loss,
            &problem,
            &from,
            MAX_PASSES,
            || !shutdown.is_requested(),
            |event| {
                let r = (|| -> Result<()> {
                    match event {
                        LocalEvent::Accepted {
                            theta,
                            train_loss,
                            k,
                        } => {
                            let state = &mut session.state;
                            state.applied += 1;
                            state.theta = theta.to_vec();
                            state.next_fresh = state.applied + 1;
                            let applied = state.applied;
                            session.log_theta(applied, theta)?;
                            let k = if problem.fit_k {
                                format!(" (K = {k:.4})")
                            } else {
                                String::new()
                            };
                            eprintln!("change {applied}: training loss {train_loss:.6}{k}");
                            session.save()?;
                        }
                        LocalEvent::PassEnd {
                            pass,
                            train_loss,
                            validation_loss,
                            changed,
                            ..
                        } => {
                            let n = data.train_len() as f64;
                            session.record(&Record {
                                path: loss_log.clone(),
                                text: part_line(
                                    session.state.applied,
                                    train_loss * n,
                                    train_loss * n,
                                    data.train_len() as u64,
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
                            session.save()?;
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
                // Each value set was scored at its own K: the search ends at the K of its values.
                loss = Loss::new(p.loss, r.k);
                let refit = data.refit_k(p.loss, &r.theta).await;
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
    data.close().await;
    let result = result.with_context(|| failure.unwrap_or_default())?;
    if !result.interrupted {
        session.state.finished = true;
    }
    session.save()?;
    let ending = if result.interrupted {
        Ending::Interrupted
    } else {
        Ending::Finished
    };
    Ok((session, ending))
}
