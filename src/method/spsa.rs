//! SPSA as the run loop drives it, over whatever source the config names (games, simulated
//! games, positions through UCI): the [`Tuner`] applies each measurement as it finishes.

use std::time::Duration;

use anyhow::Result;
use futures::future::LocalBoxFuture;

use super::Method;
use crate::config::Config;
use crate::report::{progress, summary};
use crate::runtime::shutdown::Shutdown;
use crate::source::{self, OpenRequest};
use crate::tuner::checkpoint::{Checkpoint, RunState};
use crate::tuner::reshape::Reshape;
use crate::tuner::session::SessionStart;
use crate::tuner::{Ending, RunPlan, Session, Tuner, check_same_schedule};
use crate::vars::Variable;

/// A tune by SPSA.
pub struct SpsaTune {
    config: Config,
    vars: Vec<Variable>,
    plan: RunPlan,
}

impl SpsaTune {
    pub fn new(config: &Config, vars: &[Variable], plan: RunPlan) -> SpsaTune {
        SpsaTune {
            config: config.clone(),
            vars: vars.to_vec(),
            plan,
        }
    }
}

impl Method for SpsaTune {
    /// The variables may change on a resume (see [`Method::reshape`]); the schedule may not.
    fn check_resume(&self, ck: &Checkpoint) -> Result<()> {
        check_same_schedule(ck, &self.plan)
    }

    fn reshape(&self, ck: &Checkpoint) -> Result<Option<Reshape>> {
        let iterations = self.plan.schedule.iterations.max(ck.state.iterations);
        Reshape::between(ck, &self.vars, &self.config.variables, iterations)
    }

    /// A tune of games records its held-out share (0 with a separate `verify_book`), so resume
    /// and verification draw the same split from the run's seed.
    fn fresh_state(&self) -> RunState {
        fresh_spsa_state(&self.config, &self.vars, &self.plan)
    }

    /// A finished run asked for more iterations than it had is extended, not finished.
    fn finished(&self, state: &RunState) -> bool {
        state.finished && self.plan.schedule.iterations <= state.iterations
    }

    fn run<'a>(
        &'a mut self,
        mut start: SessionStart,
        shutdown: &'a Shutdown,
    ) -> LocalBoxFuture<'a, Result<(Session, Ending)>> {
        Box::pin(async move {
            // The run's variables: the file's, or the checkpoint's reshaped by it.
            let source = source::open(&OpenRequest {
                config: &self.config,
                vars: start.vars(),
                seed: self.plan.seed,
                slots: self.config.concurrency,
            })
            .await?;
            start.add_outputs(source.outputs());
            if self.config.track.is_some() {
                start.add_outputs([self.config.track_file()]);
            }
            let tuner = start.open().and_then(|mut session| {
                if session.is_new_run() {
                    for header in source.headers() {
                        session.record(&header)?;
                    }
                    session.save()?;
                }
                let tuner = Tuner::with_session(session, self.plan)?;
                match &self.config.track {
                    Some(plan) => tuner.with_track(plan.clone(), self.config.track_file()),
                    None => Ok(tuner),
                }
            });
            let mut tuner = match tuner {
                Ok(tuner) => tuner,
                Err(e) => {
                    source.close().await;
                    return Err(e);
                }
            };
            let mut progress = progress::for_terminal(Duration::from_secs(5));
            let ending = tuner.run(&*source, shutdown, &mut *progress).await;
            drop(progress);
            source.close().await;
            Ok((tuner.into_session(), ending?))
        })
    }

    fn progress(&self, state: &RunState) -> String {
        format!("{} of {} iterations", state.applied, state.iterations)
    }

    fn summary(&self, session: &Session) -> String {
        summary_of(&self.config, session)
    }
}

/// The state of a new SPSA run, local or shared: θ at the start values, and for a tune of
/// games the held-out share it records (0 with a separate `verify_book`), so resume and
/// verification draw the same split from the run's seed.
pub fn fresh_spsa_state(config: &Config, vars: &[Variable], plan: &RunPlan) -> RunState {
    let mut state = plan.fresh_state(vars);
    if let Some(split) = source::games::recorded_split(config) {
        state.holdout = Some(split.share);
        state.holdout_openings = split.openings;
    }
    if let Some(g) = config.games.as_ref().filter(|_| !config.simulate) {
        state.sources = [("Engine1", &g.engine1), ("Engine2", &g.engine2)]
            .into_iter()
            .filter_map(|(side, e)| {
                let s = e.source.as_ref()?;
                Some(format!("{side} {}@{}", s.git, s.commit))
            })
            .collect();
    }
    state
}

/// The closing text of an SPSA run, local or shared: each variable's start and final value,
/// the games' tally for a tune of games, and the live Elo curve's last points (with a stop
/// rule's reason) when the run measured one.
pub fn summary_of(config: &Config, session: &Session) -> String {
    let state = &session.state;
    let decimals = if config.simulate { 2 } else { 0 };
    let mut text = summary::final_table(session.vars(), &state.start, &state.theta, decimals);
    if !config.simulate && config.positions.is_none() {
        text.push_str(&summary::games_line(&state.counts));
    }
    if let Ok(Some(track)) = session
        .parts
        .get::<crate::spsa::track::TrackState>(crate::tuner::TRACK_PART)
    {
        text.push_str(&summary::track_lines(&track));
    }
    text
}
