//! `method = "local"` as a run: Texel's local search ([`super::local`]) kept on disk with the same
//! files as a tune by SPSA, so `--resume`, `--fresh`, Ctrl-C, `spsa report`, `--plot` and
//! `spsa verify` work unchanged. The θ log gets a row for every kept change (its last row holds
//! the final values), the loss log a row for every pass, and the checkpoint (θ, how many changes)
//! is written after every kept change; a resume starts a new pass from the checkpoint's θ.

use anyhow::{Context, Result};
use futures::future::LocalBoxFuture;

use crate::arena::engine_setup;
use crate::config::Config;
use crate::config::positions::{KSetting, PositionsConfig};
use crate::config::vars::Variable;
use crate::method::Method;
use crate::positions::eval::EvalSettings;
use crate::positions::local::{LocalEvent, LocalProblem, local_search};
use crate::positions::loss::{Loss, k_still_moving};
use crate::report::loss_curve::{loss_log_path, part_line};
use crate::report::summary::final_table;
use crate::runtime::shutdown::Shutdown;
use crate::source::Record;
use crate::source::positions::{PositionSource, fit_k_through};
use crate::tuner::checkpoint::{Checkpoint, RunState};
use crate::tuner::session::SessionStart;
use crate::tuner::{Ending, RunPlan, Session, check_same_run};

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

/// The search with the run's files: engines first, then the files, then passes until no step
/// helps (and, with `k = "fit"`, until K settles).
async fn search(
    method: &LocalSearch,
    mut start: SessionStart,
    shutdown: &Shutdown,
) -> Result<(Session, Ending)> {
    let (config, p, vars) = (&method.config, &method.positions, &method.vars);
    let loss_log = loss_log_path(&config.log);
    start.add_outputs([loss_log.clone()]);
    let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
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
        start.theta(),
        method.plan.seed,
        config.concurrency,
    )
    .await?;
    let mut session = match start.open() {
        Ok(session) => session,
        Err(e) => {
            source.evaluator.quit_all().await;
            return Err(e);
        }
    };
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
        let from = session.state.theta.clone();
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
                            let state = &mut session.state;
                            state.applied += 1;
                            state.theta = theta.to_vec();
                            state.next_fresh = state.applied + 1;
                            let applied = state.applied;
                            session.log_theta(applied, theta)?;
                            eprintln!("change {applied}: training loss {train_loss:.6}");
                            session.save()?;
                        }
                        LocalEvent::PassEnd {
                            pass,
                            train_loss,
                            validation_loss,
                            changed,
                            ..
                        } => {
                            let n = source.train.len() as f64;
                            session.record(&Record {
                                path: loss_log.clone(),
                                text: part_line(
                                    session.state.applied,
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
