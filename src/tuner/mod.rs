//! A tuning run: the [`Driver`] decides what to try, the [`pool`] measures trials on a
//! [`Source`], and this module applies each measurement as it finishes and keeps the run on disk:
//! the θ log, the records (PGN, game logs) and the checkpoint. It knows nothing about chess.
//!
//! With Concurrency = C, up to C parts are in flight; a trial is measured at θ as it was when
//! handed out, and its update is applied to θ as it is when it finishes, as the classic tool
//! does. A checkpoint holds θ after the applied updates, exactly which iterations those were,
//! and the length of every file the run appends to; a resume cuts the files back to those
//! lengths and plays exactly the missing iterations, so nothing is lost or written twice.

pub mod checkpoint;
pub mod curve;
pub mod log;

pub mod outputs;
pub mod replay;
pub mod reshape;
pub mod session;
pub mod verification;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::runtime::shutdown::Shutdown;
use crate::source::pool::{self, Feed};
use crate::source::{Measurement, Source, Trial};
use crate::spsa::Schedule;
use crate::spsa::driver::{Driver, Rounding};
use crate::spsa::track::{Point, TrackPlan};
use crate::vars::Variable;
pub use checkpoint::{Counts, RunState};
use curve::Curve;
pub use outputs::Outputs;
pub use pool::Ending;
pub use session::Session;

/// What to do when the log or checkpoint of an earlier run is found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StartMode {
    /// Refuse to start and say how to resume or start fresh.
    #[default]
    New,
    /// Continue from the checkpoint.
    Resume,
    /// Move the old files aside (numbered backups `.bak`, `.bak.1`, …) and start over.
    Fresh,
}

/// Where a run keeps its files and how often it saves.
#[derive(Clone, Debug)]
pub struct RunFiles {
    pub log: PathBuf,
    pub checkpoint: PathBuf,
    pub checkpoint_interval: Duration,
    /// Files the source appends records to (PGN, game logs).
    pub outputs: Vec<PathBuf>,
}

/// How the optimizer plays: everything besides the variables that fixes a run's trajectory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunPlan {
    pub schedule: Schedule,
    pub rounding: Rounding,
    /// Game pairs per iteration.
    pub pairs: u32,
    pub seed: u64,
    pub concurrency: usize,
    /// Stop after this many trials in a row in which every game ended in an engine fault.
    pub max_faulty_trials: u32,
}

impl RunPlan {
    /// The state of a new run of this plan: θ at the variables' start values.
    pub fn fresh_state(&self, vars: &[Variable]) -> RunState {
        let start = vars.iter().map(|v| v.start).collect();
        RunState::fresh(self.seed, start, &self.schedule, self.pairs)
    }
}

pub use crate::error::UserError;

/// Told about every applied update, so progress displays can follow the run. Implementations
/// must be cheap: a simulation calls this a million times a second.
pub trait Observer {
    fn on_update(&mut self, update: &Update<'_>);

    /// A point of the live Elo curve was recorded, with what the curve has gained so far
    /// against the point's opponent.
    fn on_track(&mut self, _point: &Point, _gained: Option<&crate::stats::gain::Gain>) {}
}

/// One applied update.
pub struct Update<'a> {
    pub applied: u64,
    pub total: u64,
    /// The iteration k whose trial produced it.
    pub iteration: u64,
    pub theta: &'a [f64],
    pub measurement: &'a Measurement,
    pub counts: &'a Counts,
}

/// An observer that does nothing.
pub struct Quiet;

impl Observer for Quiet {
    fn on_update(&mut self, _: &Update<'_>) {}
}

/// A run ready to go: state loaded or created, log open.
pub struct Tuner {
    session: Session,
    driver: Driver,
    plan: RunPlan,
    faulty_streak: u32,
    /// The live Elo curve (`[track]`).
    track: Option<Curve>,
}

/// The checkpoint's table of the live Elo curve.
pub const TRACK_PART: &str = "track";

impl Tuner {
    /// Set up a run: a new one (refusing to overwrite an earlier run's files unless `Fresh`), or
    /// a resumed one from its checkpoint. `plan.seed` is used for new runs; a resume keeps the
    /// checkpoint's (the caller reads it first, since it also orders the opening book).
    pub fn prepare(
        vars: Vec<Variable>,
        plan: RunPlan,
        files: RunFiles,
        mode: StartMode,
    ) -> Result<Tuner> {
        Tuner::check_start(&vars, &plan, &files, mode)?;
        let fresh = plan.fresh_state(&vars);
        let session = Session::open(vars, files, mode, fresh)?;
        Tuner::with_session(session, plan)
    }

    /// The tuner of an open run: a new one, or a resumed one whose checkpoint was checked
    /// against `plan` (see [`Tuner::check_start`]).
    pub fn with_session(mut session: Session, plan: RunPlan) -> Result<Tuner> {
        let state = &mut session.state;
        // More iterations than the checkpoint's total extend the run (never shorten it); the
        // gains keep the curve of the N the run was planned with.
        if plan.schedule.iterations > state.iterations {
            state.extend(plan.schedule.iterations);
        }
        let schedule = Schedule {
            iterations: state.iterations,
            ..plan.schedule
        };
        let seed = state.seed()?;
        let (pairs, at) = (state.pairs_per_iteration, state.driver_state());
        let spsa = session.state.spsa(session.vars());
        session.define_replay(seed, &spsa)?;
        let driver = Driver::new(spsa, plan.rounding, pairs, seed, at);
        Ok(Tuner {
            session,
            driver,
            plan: RunPlan {
                seed,
                schedule,
                ..plan
            },
            faulty_streak: 0,
            track: None,
        })
    }

    /// Measure the live Elo curve as the run tunes, into `file` (which the session tracks as an
    /// output): its state comes from the checkpoint's `[track]` table, a new run's file gets
    /// its header row.
    pub fn with_track(mut self, plan: TrackPlan, file: PathBuf) -> Result<Tuner> {
        let p = &self.plan;
        let curve = Curve::open(&mut self.session, plan, p.pairs, p.seed, p.rounding, file)?;
        self.track = Some(curve);
        self.save()?;
        Ok(self)
    }

    /// Refuse a start the user must fix, before anything is started or written: an earlier
    /// run's files without --resume/--fresh, a resume without a checkpoint, or a resume whose
    /// variables or schedule differ from the checkpoint's.
    pub fn check_start(
        vars: &[Variable],
        plan: &RunPlan,
        files: &RunFiles,
        mode: StartMode,
    ) -> Result<()> {
        Session::check_start(files, mode, |ck| check_same_run(ck, vars, plan)).map(|_| ())
    }

    pub fn state(&self) -> &RunState {
        &self.session.state
    }

    pub fn vars(&self) -> &[Variable] {
        self.session.vars()
    }

    /// The open run, for what is done with it after the tune (the summary).
    pub fn into_session(self) -> Session {
        self.session
    }

    /// Flush the log and the records and write a checkpoint that holds them.
    pub fn save(&mut self) -> Result<()> {
        let d = self.driver.state();
        let state = &mut self.session.state;
        state.theta = d.theta;
        state.next_fresh = d.next_fresh;
        state.missing = d.missing;
        state.applied = self.driver.applied();
        if let Some(curve) = &self.track {
            curve.keep(&mut self.session)?;
        }
        self.session.save()
    }

    /// Measure trials until every iteration is applied or `shutdown` is requested. A source
    /// error ends the run with a final checkpoint and is returned.
    pub async fn run(
        &mut self,
        source: &dyn Source,
        shutdown: &Shutdown,
        observer: &mut dyn Observer,
    ) -> Result<Ending> {
        let concurrency = self.plan.concurrency;
        // Trials of a source that waits (games, positions) take far longer than a clock read;
        // one measured at once (simulation) takes less than one, so the clock is read every
        // CLOCK_STRIDE of its updates.
        // Such a source also hands its θ log rows to a writer thread, which formats them on
        // the other core while this one measures.
        let clock_stride = if source.at_once().is_some() {
            self.session.log_in_background()?;
            CLOCK_STRIDE
        } else {
            1
        };
        let mut feed = TunerFeed {
            tuner: self,
            observer,
            last_save: Instant::now(),
            clock_stride,
            since_clock: 0,
            spare: None,
        };
        let result = pool::run(source, concurrency, &mut feed, shutdown).await;
        let total = self.driver.total();
        let track_done = self.track.as_ref().is_none_or(|c| c.track.is_done(total));
        let stopped = self.track.as_ref().is_some_and(|c| c.track.stopped());
        if (self.driver.is_finished() && track_done) || stopped {
            self.session.state.finished = true;
        }
        self.save()?;
        result
    }

    /// The next trial: a measurement of the curve when one is due, else an iteration; none
    /// once a stop rule ended the run.
    fn next_trial_into(&mut self, trial: &mut Trial) -> bool {
        if let Some(Curve { track: t, .. }) = &mut self.track {
            let (applied, total) = (self.driver.applied(), self.driver.total());
            if t.next_trial_into(applied, total, self.driver.theta(), trial) {
                return true;
            }
            if t.stopped() {
                return false;
            }
        }
        self.driver.next_trial_into(trial)
    }

    /// Apply one finished trial: θ, counts, records, the θ log row, the fault streak.
    fn apply(&mut self, trial: &Trial, m: &Measurement) -> Result<()> {
        let signal = m.signal();
        self.driver
            .apply(trial.iteration, signal)
            .with_context(|| format!("iteration {}", trial.iteration))?;
        let c = &mut self.session.state.counts;
        c.add(&m.tally());
        for f in &m.faults {
            *c.faults.entry(f.kind.clone()).or_default() += 1;
        }
        for r in &m.records {
            self.session.record(r)?;
        }
        let applied = self.driver.applied();
        self.session.state.applied = applied;
        let k = trial.iteration;
        self.session
            .log_step(applied, k, signal, self.driver.theta())?;
        self.faulty_streak = if m.all_faulty() {
            self.faulty_streak + 1
        } else {
            0
        };
        if self.faulty_streak >= self.plan.max_faulty_trials.max(1) {
            let last = m.faults.last().map(|f| f.kind.as_str()).unwrap_or("fault");
            bail!(
                "every game of the last {} pairs ended in an engine fault (last: {last}); stopping",
                self.faulty_streak
            );
        }
        Ok(())
    }
}

/// Updates between two clock reads (θ log flush, checkpoint) when trials are measured at once.
const CLOCK_STRIDE: u32 = 64;

/// The tuner as the pool's feed.
struct TunerFeed<'a> {
    tuner: &'a mut Tuner,
    observer: &'a mut dyn Observer,
    last_save: Instant,
    /// Updates between clock reads: 1, or [`CLOCK_STRIDE`] for a source measured at once.
    clock_stride: u32,
    since_clock: u32,
    /// The last applied trial, whose vectors the next trial reuses.
    spare: Option<Trial>,
}

impl Feed for TunerFeed<'_> {
    fn next_trial(&mut self) -> Option<Trial> {
        let mut trial = self.spare.take().unwrap_or_default();
        if self.tuner.next_trial_into(&mut trial) {
            Some(trial)
        } else {
            self.spare = Some(trial);
            None
        }
    }

    fn next_trial_into(&mut self, trial: &mut Trial) -> bool {
        self.tuner.next_trial_into(trial)
    }

    fn finished(&mut self, mut trial: Trial, mut m: Measurement) -> Result<()> {
        self.finished_in_place(&mut trial, &mut m)?;
        self.spare = Some(trial);
        Ok(())
    }

    fn finished_in_place(&mut self, trial: &mut Trial, m: &mut Measurement) -> Result<()> {
        let t = &mut *self.tuner;
        if let Some(unit) = trial.track {
            let recorded = match &mut t.track {
                Some(curve) => {
                    curve.record(&mut t.session, unit, m.tally().pentanomial, &m.records)?
                }
                None => None,
            };
            if let Some(point) = recorded {
                let gained = t.track.as_ref().and_then(|c| {
                    crate::spsa::track::gained(&c.track.state().points, point.against)
                });
                self.observer.on_track(&point, gained.as_ref());
            }
        } else {
            t.apply(trial, m)?;
            self.observer.on_update(&Update {
                applied: t.session.state.applied,
                total: t.driver.total(),
                iteration: trial.iteration,
                theta: t.driver.theta(),
                measurement: m,
                counts: &t.session.state.counts,
            });
        }
        self.since_clock += 1;
        if self.since_clock >= self.clock_stride {
            self.since_clock = 0;
            let now = Instant::now();
            if now.saturating_duration_since(self.last_save)
                >= t.session.files().checkpoint_interval
            {
                t.save()?;
                self.last_save = Instant::now();
            } else {
                t.session.flush_log_if_due(now)?;
            }
        }
        Ok(())
    }

    fn unfinished(&mut self, trial: &Trial) {
        match (trial.track, &mut self.tuner.track) {
            (Some(unit), Some(curve)) => curve.track.abandon(unit),
            _ => self.tuner.driver.abandon(trial.iteration),
        }
    }
}

pub(crate) fn refusal(files: &RunFiles) -> UserError {
    let what = match checkpoint::read(&files.checkpoint) {
        Ok(ck) if ck.state.finished => format!(
            "{} holds a finished run ({} iterations)",
            files.checkpoint.display(),
            ck.state.applied
        ),
        Ok(ck) => format!(
            "{} holds an earlier run, stopped after {} of {} iterations",
            files.checkpoint.display(),
            ck.state.applied,
            ck.state.iterations
        ),
        Err(_) if files.checkpoint.exists() => {
            format!("{} exists from an earlier run", files.checkpoint.display())
        }
        Err(_) => format!("{} exists from an earlier run", files.log.display()),
    };
    UserError(format!(
        "{what}; add --resume to continue it, or --fresh to start over (the old files are kept as numbered .bak backups)"
    ))
}

/// A checkpoint only continues the run it came from: same variables, schedule and pairs per
/// iteration. A difference is the user's to fix (exit 2), described field by field. The one
/// exception is the number of iterations: a larger one extends the run (its gains keep their
/// curve), a smaller one leaves the checkpoint's total.
pub fn check_same_run(
    ck: &checkpoint::Checkpoint,
    vars: &[Variable],
    plan: &RunPlan,
) -> Result<()> {
    let path = ck.path.display();
    let refuse = |what: String| -> Result<()> {
        Err(UserError(format!(
            "{path}: cannot resume: {what}; use --fresh to start a new run (the old files are kept as backups)"
        ))
        .into())
    };
    let names = |v: &[Variable]| v.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    if names(&ck.vars) != names(vars) {
        return refuse(format!(
            "the checkpoint's variables are {} but the variables file has {}",
            names(&ck.vars).join(", "),
            names(vars).join(", ")
        ));
    }
    let mut changes = Vec::new();
    for (a, b) in ck.vars.iter().zip(vars) {
        for (field, was, now) in [
            ("min", a.min, b.min),
            ("max", a.max, b.max),
            ("c_end", a.c_end, b.c_end),
            ("R_end", a.r_end, b.r_end),
        ] {
            if was != now {
                changes.push(format!("{} {field} was {was}, now {now}", a.name));
            }
        }
    }
    changes.extend(schedule_changes(ck, plan));
    if !changes.is_empty() {
        return refuse(format!(
            "the run changed since the checkpoint: {}",
            changes.join("; ")
        ));
    }
    Ok(())
}

/// [`check_same_run`] for the schedule alone, for a method that takes a changed variables
/// file as a reshape of the run (see [`reshape`]).
pub fn check_same_schedule(ck: &checkpoint::Checkpoint, plan: &RunPlan) -> Result<()> {
    let changes = schedule_changes(ck, plan);
    if changes.is_empty() {
        return Ok(());
    }
    Err(UserError(format!(
        "{}: cannot resume: the run changed since the checkpoint: {}; use --fresh to start a new run (the old files are kept as backups)",
        ck.path.display(),
        changes.join("; ")
    ))
    .into())
}

/// What differs between the checkpoint's schedule and pairs and `plan`'s, field by field.
fn schedule_changes(ck: &checkpoint::Checkpoint, plan: &RunPlan) -> Vec<String> {
    let (was, now) = (ck.state.schedule(), plan.schedule);
    [
        ("A", was.a, now.a),
        ("Alpha", was.alpha, now.alpha),
        ("Gamma", was.gamma, now.gamma),
        (
            "pairs_per_iteration",
            f64::from(ck.state.pairs_per_iteration),
            f64::from(plan.pairs),
        ),
    ]
    .into_iter()
    .filter(|(_, a, b)| a != b)
    .map(|(field, a, b)| format!("{field} was {a}, now {b}"))
    .collect()
}
