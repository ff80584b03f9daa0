//! The one run loop, and the seam every way of tuning plugs into.
//!
//! A [`Method`] pairs an optimizer with an objective: SPSA over any [`crate::source::Source`]
//! (games, simulated games, positions through UCI, coefficient files), Texel's local search and
//! Adam or L-BFGS-B over positions through UCI or coefficient files. It decides what to measure next, measures
//! it and applies the result. [`run`] owns everything around it, the same for every method:
//! refusing an earlier run's files or keeping them as backups, the checkpoint a resume
//! continues from, the run's files ([`Session`]: θ log, loss log, records, checkpoint), Ctrl-C
//! and SIGTERM, the message that says how to continue, and ([`close`]) the closing summary and
//! a finished tune's `[verify]` ladder ([`ladder`]).
//!
//! A new method is one module here implementing [`Method`] and one arm in [`for_config`], where
//! `spsa run` picks the method for a config. A run shared through PostgreSQL is a method too
//! ([`shared::SharedTune`]): its results come from the database instead of a pool, and
//! everything around them is this same code.

use anyhow::Result;
use futures::future::LocalBoxFuture;

use crate::config::Config;
use crate::config::positions::Method as PositionsMethod;
use crate::runtime::shutdown::Shutdown;
use crate::tuner::RunPlan;
use crate::tuner::checkpoint::{Checkpoint, RunState};
use crate::tuner::reshape::Reshape;
use crate::tuner::session::SessionStart;
use crate::tuner::{Ending, RunFiles, Session, StartMode};
use crate::vars::Variable;

pub mod gradient;
pub mod ladder;
pub mod launch;
pub mod local;
pub mod shared;
pub mod spsa;

use gradient::GradientTune;
use local::LocalSearch;
use spsa::SpsaTune;

/// One way of tuning, as the run loop drives it.
pub trait Method {
    /// Refuse a checkpoint this method cannot continue (another run's, or one whose variables
    /// or schedule changed): a user error that names the difference.
    fn check_resume(&self, checkpoint: &Checkpoint) -> Result<()>;

    /// A resume whose variables file changed in a way this method continues (rows added or
    /// dropped, a bound moved): the run's new shape, or a user error naming the row that
    /// cannot be honoured. A method that continues only its own variables refuses any change
    /// in [`Method::check_resume`] and keeps this default.
    fn reshape(&self, _checkpoint: &Checkpoint) -> Result<Option<Reshape>> {
        Ok(None)
    }

    /// The state of a run of this method before its first step.
    fn fresh_state(&self) -> RunState;

    /// Whether a resume may start without a local checkpoint: a shared run's database holds
    /// the run, so a resume on a machine without its files re-attaches and writes them anew
    /// (files found there are kept as numbered backups, as with `--fresh`).
    fn resumes_without_checkpoint(&self) -> bool {
        false
    }

    /// Whether a run with this checkpoint state has nothing left to do.
    fn finished(&self, state: &RunState) -> bool {
        state.finished
    }

    /// Tune: start what measures, open the run's files from `start` once nothing can fail on
    /// the user's input any more (so a bad data file or an engine that will not start leaves no
    /// files behind), then step until the run is done or `shutdown` is requested, writing rows
    /// and checkpoints to the session as it goes. Everything the method started is stopped
    /// before it returns. An error after the session opened has been checkpointed.
    fn run<'a>(
        &'a mut self,
        start: SessionStart,
        shutdown: &'a Shutdown,
    ) -> LocalBoxFuture<'a, Result<(Session, Ending)>>;

    /// Where a stopped run stands, for the message that says how to continue ("8 of 1000
    /// iterations", "epoch 12 of 400").
    fn progress(&self, state: &RunState) -> String;

    /// The first words of the message a run stopped by Ctrl-C or SIGTERM leaves.
    fn stopped(&self, state: &RunState) -> String {
        format!("stopped after {}", self.progress(state))
    }

    /// The closing text on stdout: the values found and what else the method reports.
    fn summary(&self, session: &Session) -> String;

    /// Where a finished tune's `[verify]` ladder is played: here, unless the run's results
    /// come from elsewhere.
    fn venue(&self) -> ladder::Venue {
        ladder::Venue::Here
    }
}

/// How [`run`] ended.
pub struct RunEnd {
    pub session: Session,
    pub ending: Ending,
}

/// Check the start of a run of `method` over `files`: an earlier run's files without
/// `--resume`/`--fresh`, a resume without a checkpoint or of another run's, are refused here,
/// before anything is started or written.
pub fn check(
    method: &dyn Method,
    vars: Vec<Variable>,
    files: RunFiles,
    mode: StartMode,
) -> Result<SessionStart> {
    let mode = match mode {
        StartMode::Resume if method.resumes_without_checkpoint() && !files.checkpoint.exists() => {
            StartMode::Fresh
        }
        mode => mode,
    };
    let mut start = SessionStart::check(vars, files, mode, method.fresh_state(), |ck| {
        method.check_resume(ck)
    })?;
    if let Some(reshape) = start
        .checkpoint()
        .map(|ck| method.reshape(ck))
        .transpose()?
        .flatten()
    {
        start.reshape(&reshape);
    }
    Ok(start)
}

/// Run `method` from a checked start until it is done or `shutdown` is requested.
pub async fn run(
    method: &mut dyn Method,
    start: SessionStart,
    shutdown: &Shutdown,
) -> Result<RunEnd> {
    if let Some(ck) = start.checkpoint()
        && method.finished(&ck.state)
    {
        eprintln!("{}: the run had already finished", ck.path.display());
        return Ok(RunEnd {
            session: start.open()?,
            ending: Ending::Finished,
        });
    }
    let (session, ending) = method.run(start, shutdown).await?;
    Ok(RunEnd { session, ending })
}

/// The end of a run of `method`: the message a stopped run leaves (`resume_hint` says how to
/// continue), the summary on stdout, and for a finished tune its `[verify]` step or ladder
/// ([`ladder::play`]), local or shared alike; `resume` is the command that continues the run.
pub async fn close(
    method: &dyn Method,
    end: &RunEnd,
    config: &Config,
    shutdown: &Shutdown,
    resume_hint: &str,
    resume: &str,
) -> Result<()> {
    if end.ending == Ending::Interrupted {
        eprintln!("{}; {resume_hint}", method.stopped(&end.session.state));
    }
    crate::out!("{}", method.summary(&end.session))?;
    if end.session.state.finished {
        ladder::play(config, shutdown, resume, &method.venue()).await?;
    }
    Ok(())
}

/// The method a config asks for: one arm per method (see [`crate::method`]).
pub fn for_config(config: &Config, vars: &[Variable], plan: RunPlan) -> Result<Box<dyn Method>> {
    let method = config.positions.as_ref().map(|p| p.method);
    Ok(match method {
        Some(PositionsMethod::Gradient | PositionsMethod::Lbfgs) => {
            Box::new(GradientTune::new(config, vars, plan.seed)?)
        }
        Some(PositionsMethod::Local) => Box::new(LocalSearch::new(config, vars, plan)?),
        _ => Box::new(SpsaTune::new(config, vars, plan)),
    })
}
