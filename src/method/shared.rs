//! A run shared through PostgreSQL (`spsa run CONFIG --db URL`), in the one run envelope: the
//! same refusal of an earlier run's files, `--fresh` backups, resume, Ctrl-C, summary and
//! `[verify]` as a local SPSA run. Only its results arrive differently: workers play the
//! iterations the database hands out, and the owner's [`Mirror`] of the database is this run's
//! source of results, applied here to the run's θ log, records and checkpoint in the database's
//! order.
//!
//! The database is the run's checkpoint: a resume on a machine without the local files
//! re-attaches and writes them anew (earlier files there kept as backups); a resume with them
//! goes on from the local checkpoint once the mirror has caught up with it.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::future::LocalBoxFuture;

use super::Method;
use super::spsa::{fresh_spsa_state, summary_of};
use crate::config::Config;
use crate::db::owner::{self, Applied, Mirror, measurement_of, placed_measurement, placed_records};
use crate::db::records::Destinations;
use crate::db::run::{self as shared_run, SharedRun};
use crate::report::progress;
use crate::runtime::shutdown::Shutdown;
use crate::tuner::checkpoint::{Checkpoint, RunState};
use crate::tuner::curve::Curve;
use crate::tuner::reshape::Reshape;
use crate::tuner::session::SessionStart;
use crate::tuner::{
    Ending, Observer, RunPlan, Session, StartMode, Update, UserError, check_same_schedule,
};
use crate::vars::Variable;

/// Results read from the database in one go (see [`Mirror::pull`]); a smaller batch means the
/// mirror has caught up, and it waits a moment before asking again.
const PULL_BATCH: usize = 5000;

/// A shared SPSA run, as the run envelope drives it.
pub struct SharedTune {
    config: Config,
    vars: Vec<Variable>,
    plan: RunPlan,
    shared: SharedRun,
    mode: StartMode,
    /// Where the workers' records (PGN, game logs) go.
    destinations: Destinations,
    /// The run's id in the database, once attached.
    run_id: Option<i64>,
}

impl SharedTune {
    /// A shared run of `config`; refuses settings a shared run cannot take before anything
    /// starts.
    pub fn new(
        config: &Config,
        vars: &[Variable],
        plan: RunPlan,
        shared: SharedRun,
        mode: StartMode,
    ) -> Result<SharedTune> {
        shared_run::check(config, &shared)?;
        Ok(SharedTune {
            config: config.clone(),
            vars: vars.to_vec(),
            plan,
            shared,
            mode,
            destinations: Destinations::of(config),
            run_id: None,
        })
    }
}

impl SharedTune {
    /// A resume whose variables file has rows the local checkpoint lacks (or a resume without
    /// one) may add variables to the run: the engines are started here and every option the
    /// file names is checked, as a local run checks them, before the database takes the change.
    /// A row the engines lack would otherwise have every worker refuse the run, and a variable
    /// once added stays in the run (held when dropped). Engines built from source are each
    /// worker's to build, and are not checked here.
    async fn check_new_rows(&self, start: &SessionStart) -> Result<()> {
        let Some(games) = self.config.games.as_ref() else {
            return Ok(());
        };
        let built = games.engine1.source.is_some() || games.engine2.source.is_some();
        let new_rows = start.checkpoint().is_none_or(|ck| {
            self.vars
                .iter()
                .any(|v| !ck.vars.iter().any(|w| w.name == v.name))
        });
        if self.mode != StartMode::Resume || self.config.simulate || built || !new_rows {
            return Ok(());
        }
        let source = crate::source::open(&crate::source::OpenRequest {
            config: &self.config,
            vars: &self.vars,
            seed: self.plan.seed,
            slots: 1,
        })
        .await?;
        source.close().await;
        Ok(())
    }
}

impl Method for SharedTune {
    /// The variables may change on a resume: the database takes the change (see
    /// `db::owner::attach`) and the local files follow it; the schedule may not.
    fn check_resume(&self, ck: &Checkpoint) -> Result<()> {
        check_same_schedule(ck, &self.plan)
    }

    fn resumes_without_checkpoint(&self) -> bool {
        true
    }

    /// The database decides, not the local checkpoint: a resume of a finished run attaches
    /// first (a pruned run is refused there), catches up, and ends as finished.
    fn finished(&self, _state: &RunState) -> bool {
        false
    }

    /// Every iteration is handed out to the database when the run is created; the held-out
    /// split is drawn as a local tune draws it (the database's definition decides on a
    /// re-attach).
    fn fresh_state(&self) -> RunState {
        RunState {
            next_fresh: self.plan.schedule.iterations + 1,
            ..fresh_spsa_state(&self.config, &self.vars, &self.plan)
        }
    }

    fn run<'a>(
        &'a mut self,
        mut start: SessionStart,
        shutdown: &'a Shutdown,
    ) -> LocalBoxFuture<'a, Result<(Session, Ending)>> {
        Box::pin(async move {
            self.check_new_rows(&start).await?;
            let attached = shared_run::attach(
                &self.config,
                &self.vars,
                self.mode,
                &self.shared,
                self.plan.seed,
                shutdown,
            )
            .await?;
            let (mut db, id, def) = (attached.db, attached.id, attached.def);
            self.run_id = Some(id);
            if let Some(ck) = start.checkpoint()
                && ck.state.seed != def.seed.to_string()
            {
                return Err(UserError(format!(
                    "{}: the checkpoint is of another run than run {id} (seed {} vs {}); use --fresh to start over",
                    ck.path.display(),
                    ck.state.seed,
                    def.seed
                ))
                .into());
            }
            // The run's variables are the database's (a resume may have changed them there).
            start.take_shape(&Reshape {
                vars: def.variables(),
                joining: Vec::new(),
                dropping: Vec::new(),
                iterations: def.iterations,
                held: def.parts.held.clone(),
                joined: def.parts.joined.clone(),
            });
            start.add_outputs(self.destinations.paths());
            if self.config.track.is_some() {
                start.add_outputs([self.config.track_file()]);
            }
            let mut session = start.open()?;
            if session.is_new_run() {
                // The database's definition decides: a re-attach takes its seed and split.
                session.state.seed = def.seed.to_string();
                session.state.holdout = def.holdout;
                session.state.holdout_openings = def.holdout_openings;
                session.save()?;
            }
            let curve = match &self.config.track {
                Some(plan) => {
                    let file = self.config.track_file();
                    let curve = Curve::open(
                        &mut session,
                        plan.clone(),
                        def.pairs,
                        def.seed,
                        self.plan.rounding,
                        file,
                    )?;
                    curve.keep(&mut session)?;
                    session.save()?;
                    Some(curve)
                }
                None => None,
            };
            let mut follow = Follow {
                caught_up: session.state.applied,
                mirror: Mirror::new(id, def, session.state.applied),
                session,
                curve,
                stop_sent: false,
                destinations: &self.destinations,
            };
            let stop_worker = Shutdown::new();
            let worker = shared_run::own_worker(&self.config, &self.shared, id, &stop_worker);
            let followed = async {
                let ended = follow.run(&mut db, shutdown).await;
                stop_worker.request();
                ended
            };
            let (worked, ending) = tokio::join!(worker, followed);
            if let Err(e) = worked {
                eprintln!("spsa: this process's worker stopped: {e:#}");
            }
            let ending = match ending {
                Ok(ending) => ending,
                Err(e) => {
                    // What was applied stays: the checkpoint holds it.
                    if let Err(saved) = follow.save() {
                        eprintln!("spsa: cannot write the checkpoint: {saved:#}");
                    }
                    return Err(e);
                }
            };
            follow.save()?;
            Ok((follow.session, ending))
        })
    }

    fn progress(&self, state: &RunState) -> String {
        format!("{} of {} iterations", state.applied, state.iterations)
    }

    fn stopped(&self, state: &RunState) -> String {
        match self.run_id {
            Some(id) => format!(
                "stopped following run {id} after {}; other workers carry on",
                self.progress(state)
            ),
            None => format!("stopped after {}", self.progress(state)),
        }
    }

    fn summary(&self, session: &Session) -> String {
        summary_of(&self.config, session)
    }

    /// The run's workers play its ladder, each step a match in its database.
    fn venue(&self) -> super::ladder::Venue {
        match self.run_id {
            Some(run) => super::ladder::Venue::Workers {
                shared: self.shared.clone(),
                run,
            },
            None => super::ladder::Venue::Here,
        }
    }
}

/// The mirror of the database and the session it writes to.
struct Follow<'a> {
    mirror: Mirror,
    session: Session,
    /// Results up to here are in the session already (the local checkpoint of a resume).
    caught_up: u64,
    /// The live Elo curve, when the run measures one: its points are handed out as the
    /// results that make them due are applied, and recorded as the workers' measurements come.
    curve: Option<Curve>,
    /// The curve's stop rule ended the run in the database.
    stop_sent: bool,
    destinations: &'a Destinations,
}

impl Follow<'_> {
    /// Apply the database's results as they come until every iteration is applied or
    /// `shutdown` is requested, checkpointing as often as the config says.
    async fn run(&mut self, db: &mut crate::db::Db, shutdown: &Shutdown) -> Result<Ending> {
        let mut progress = progress::for_terminal(Duration::from_secs(5));
        let mut last_save = Instant::now();
        let every = self.session.files().checkpoint_interval;
        let signal = shutdown.wait();
        tokio::pin!(signal);
        loop {
            let results = tokio::select! {
                biased;
                _ = &mut signal => return Ok(Ending::Interrupted),
                results = self.mirror.pull(db) => results?,
            };
            if self.mirror.durable().rejected {
                let id = self.mirror.run_id;
                let approval = crate::db::admin::approval_of(db, id).await?;
                if let Some(refusal) = approval.rejection(id) {
                    return Err(refusal.into());
                }
            }
            for a in &results {
                self.apply(a, &mut *progress)?;
            }
            let measured = self.measure(db, &mut *progress).await?;
            if self.finished() {
                return Ok(Ending::Finished);
            }
            if last_save.elapsed() >= every {
                self.save()?;
                last_save = Instant::now();
            }
            if results.len() < PULL_BATCH && measured == 0 {
                tokio::select! {
                    biased;
                    _ = &mut signal => return Ok(Ending::Interrupted),
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
            }
        }
    }

    /// Put one applied result into the session: θ, the counts, its records and its θ log row.
    /// A result the session holds already (a resume catching up) is only checked.
    fn apply(&mut self, a: &Applied, observer: &mut dyn Observer) -> Result<()> {
        let run_id = self.mirror.run_id;
        let state = &mut self.session.state;
        if a.seq < self.caught_up {
            return Ok(());
        }
        // θ before a resume added variables lacks them: they stood at their start values.
        let theta = crate::spsa::padded(&a.theta, &state.start);
        // The mirror's driver had every variable: its result replays in the log (from θ before
        // it, which the log is defined from if it must be), as a local run's. Else θ whole.
        let replayable = a.theta.len() == theta.len() && a.seq == state.applied + 1;
        if a.seq == self.caught_up {
            let same = state.theta.len() == theta.len()
                && state
                    .theta
                    .iter()
                    .zip(&theta)
                    .all(|(x, y)| x.to_bits() == y.to_bits());
            if !same {
                bail!(
                    "run {run_id}: the checkpoint's θ after {} results differs from the database's; use --fresh to start over",
                    a.seq
                );
            }
            return Ok(());
        }
        if replayable {
            let (seed, spsa) = (a.definition.0, &*a.definition.1);
            self.session
                .log_result((seed, spsa), a.seq, a.iteration, a.signal, &theta)?;
        } else {
            self.session.log_theta(a.seq, &theta)?;
        }
        let state = &mut self.session.state;
        let pairs = state.pairs_per_iteration.max(1);
        state.applied = a.seq;
        state.theta.clone_from(&theta);
        let c = &mut state.counts;
        c.pairs += u64::from(pairs);
        c.wins += u64::from(a.wins);
        c.draws += u64::from(a.draws);
        c.losses += u64::from(a.losses);
        for (t, v) in c.pentanomial.iter_mut().zip(a.pentanomial) {
            *t += v;
        }
        let measurement = measurement_of(a);
        for f in &measurement.faults {
            *c.faults.entry(f.kind.clone()).or_default() += 1;
        }
        for record in placed_records(run_id, a, self.destinations) {
            self.session.record(&record)?;
        }
        self.session.flush_log_if_due(Instant::now())?;
        if let Some(curve) = &mut self.curve {
            curve
                .track
                .hand_out(a.seq, self.session.state.iterations, &theta);
        }
        let state = &self.session.state;
        observer.on_update(&Update {
            applied: state.applied,
            total: state.iterations,
            iteration: a.iteration,
            theta: &state.theta,
            measurement: &measurement,
            counts: &state.counts,
        });
        Ok(())
    }

    /// Record the curve's measurements the database holds, in its order, up to the first whose
    /// point is not handed out here yet (its result is still to be applied); end the run in the
    /// database once the stop rule says so. Returns how many were recorded.
    async fn measure(
        &mut self,
        db: &mut crate::db::Db,
        observer: &mut dyn Observer,
    ) -> Result<usize> {
        let Some(curve) = &mut self.curve else {
            return Ok(0);
        };
        let run_id = self.mirror.run_id;
        let after = curve.track.state().points.len() as u64;
        let mut recorded = 0;
        for m in self.mirror.pull_track(db, after).await? {
            let unit = curve.track.plan().unit(m.unit);
            if !curve.track.is_pending(unit) {
                break;
            }
            let records = placed_measurement(run_id, &m, self.destinations);
            if let Some(point) = curve.record(&mut self.session, unit, m.pentanomial, &records)? {
                let gained = crate::spsa::track::gained(&curve.track.state().points, point.against);
                observer.on_track(&point, gained.as_ref());
            }
            recorded += 1;
        }
        if curve.track.stopped() && !self.stop_sent {
            owner::finish_by_stop_rule(db, run_id).await?;
            self.stop_sent = true;
        }
        Ok(recorded)
    }

    /// The database finished the run and everything it recorded is in the session.
    fn finished(&self) -> bool {
        let measured = self
            .curve
            .as_ref()
            .is_none_or(|c| c.track.state().points.len() as i64 >= self.mirror.durable().track);
        self.mirror.is_finished() && measured
    }

    /// Write a checkpoint that holds the files. Before a resumed mirror has caught up with its
    /// old checkpoint, that one stays: it still describes the files exactly.
    fn save(&mut self) -> Result<()> {
        if self.mirror.applied() < self.caught_up {
            return Ok(());
        }
        let finished = self.finished();
        if let Some(curve) = &self.curve {
            curve.keep(&mut self.session)?;
        }
        let state = &mut self.session.state;
        state.finished = finished;
        let d = self.mirror.driver_state();
        state.next_fresh = d.next_fresh;
        state.missing = d.missing;
        self.session
            .save()
            .with_context(|| format!("run {}: the local checkpoint", self.mirror.run_id))
    }
}
