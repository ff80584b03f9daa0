//! A worker: serves every active run it can play, all at once, with one set of slots. For each
//! run it first opens the run's source with `source::open`, from the run's definition (for
//! engine runs: its own engines, started and checked to offer every variable as an option with
//! the right range; a run it cannot play is refused with the reason, and its work is left to
//! others). Then a lessor keeps the slots fed: whenever fewer parts are leased than there are
//! slots, it leases more iterations of the runs it serves, shared out between them by the
//! database (priority first, then each run's throughput share; see `spsa.lease_within`); the same
//! [`pool`](crate::source::pool) a local run uses plays them part by part on whichever slot is free, so a
//! slot never waits for the rest of a batch. Each finished iteration is reported with its
//! records, leases are kept alive with heartbeats, and on shutdown whatever is still held is
//! given back.
//!
//! Reports and heartbeats go through connections of their own, so neither waits for the other
//! nor for a run's engines to start.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use futures::future::BoxFuture;
use tokio::sync::{Notify, mpsc};
use tokio_postgres::Client;

pub use super::WorkerOptions;
use super::{Db, DbError, RunDefinition, placement};
use crate::config::Config;
use crate::runtime::shutdown::Shutdown;
use crate::source::pool::{self, Ending, Feed};
use crate::source::{self, Measurement, OpenRequest, Source, Trial};
use crate::spsa::driver::Rounding;
use crate::spsa::track::TrackPlan;
use crate::stats::sprt::Sprt;

/// What a worker did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkerSummary {
    pub reported: u64,
    /// Reports the database refused (lease taken back, run finished…).
    pub refused: u64,
    /// Runs this worker could not play, with the reason.
    pub unplayable: Vec<(i64, String)>,
    pub given_back: u64,
}

/// A lease token: a uuid in the database, text here.
type Token = String;

/// A run this worker plays.
struct Served {
    def: RunDefinition,
    rounding: Rounding,
    source: Box<dyn Source>,
    /// The live Elo curve's plan (`[track]`), when the run measures one.
    track: Option<TrackPlan>,
    /// A match: its work rows are pairs, reported by `spsa.report_pair` ([`super::matches`]),
    /// with its SPRT (None inside: no test).
    pair_test: Option<Option<Sprt>>,
    /// Holds the run's config and book while the engines play.
    _files: Option<tempfile::TempDir>,
}

/// A leased iteration, or a measurement of the live Elo curve (a negative iteration: see
/// `spsa.track_results`).
#[derive(Clone, Debug)]
struct Lease {
    run: i64,
    iteration: i64,
    token: Token,
    lease_seconds: f64,
    /// Parts (games) of its trial.
    parts: usize,
    /// A pair of a match with this SPRT (None inside: no test): see [`Served::pair_test`].
    pair_test: Option<Option<Sprt>>,
}

struct Report {
    lease: Lease,
    measurement: Measurement,
}

/// A leased trial as the pool plays it.
struct Playing {
    lease: Lease,
    trial: Arc<Trial>,
    served: Arc<Served>,
}

/// What the lessor, the pool and the heartbeats share.
#[derive(Default)]
struct State {
    served: HashMap<i64, Arc<Served>>,
    /// Leased, not started yet.
    waiting: VecDeque<(Lease, Trial)>,
    /// Started, by the pool's id of the trial (the pool sees each run's iterations under ids
    /// of this worker's own, since two runs share iteration numbers).
    playing: HashMap<u64, Playing>,
    next_id: u64,
    /// Leases to hand back (unfinished when the pool stopped).
    give_back: Vec<Token>,
    /// Runs whose engines failed (the pool stopped on them), with the error and the source
    /// to close (no longer served).
    failed: Vec<(i64, String, Option<Arc<Served>>)>,
    /// Nothing more will be leased: the pool ends once its games are done.
    done: bool,
    /// Runs prepared again after a resume changed their variables: the old sources, closed
    /// once no trial of theirs plays.
    retired: Vec<Arc<Served>>,
}

impl State {
    fn parts_held(&self) -> usize {
        let waiting: usize = self.waiting.iter().map(|(l, _)| l.parts).sum();
        waiting + self.playing.values().map(|p| p.lease.parts).sum::<usize>()
    }

    fn tokens(&self) -> Vec<Token> {
        self.waiting
            .iter()
            .map(|(l, _)| l.token.clone())
            .chain(self.playing.values().map(|p| p.lease.token.clone()))
            .collect()
    }

    fn holds_run(&self, run: i64) -> bool {
        self.waiting.iter().any(|(l, _)| l.run == run)
            || self.playing.values().any(|p| p.lease.run == run)
    }
}

/// Every served run as one source and one feed for the pool.
#[derive(Clone)]
struct Hub {
    state: Arc<Mutex<State>>,
    /// Told when work was leased (or leasing ended).
    more: Arc<Notify>,
    /// Told when a trial finished (a slot may be free).
    freed: Arc<Notify>,
    /// Requested when the lessor is done: the heartbeats stop waiting.
    leasing_over: Shutdown,
    /// Taken (closed) when the pool is done, which ends the reporter.
    reports: Arc<Mutex<Option<mpsc::UnboundedSender<Report>>>>,
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn playing(&self, id: u64) -> Option<(Arc<Served>, Arc<Trial>, i64)> {
        let st = self.lock();
        let p = st.playing.get(&id)?;
        Some((p.served.clone(), p.trial.clone(), p.lease.run))
    }
}

impl Source for Hub {
    fn parts(&self, trial: &Trial) -> usize {
        self.lock()
            .playing
            .get(&trial.iteration)
            .map_or(1, |p| p.lease.parts)
    }

    fn run_part<'a>(
        &'a self,
        slot: usize,
        trial: &'a Trial,
        part: usize,
    ) -> BoxFuture<'a, Result<Measurement>> {
        let found = self.playing(trial.iteration);
        Box::pin(async move {
            let (served, real, run) =
                found.with_context(|| format!("trial {} is not leased", trial.iteration))?;
            let result = served.source.run_part(slot, &real, part).await;
            if let Err(e) = &result {
                let mut st = self.lock();
                let removed = st.served.remove(&run);
                st.failed.push((run, format!("{e:#}"), removed));
            }
            result
        })
    }
}

impl Feed for Hub {
    fn next_trial(&mut self) -> Option<Trial> {
        let mut st = self.lock();
        if st.done {
            // Leasing ended (shutdown, or the lessor failed): what waits goes back.
            return None;
        }
        while let Some((lease, trial)) = st.waiting.pop_front() {
            let Some(served) = st.served.get(&lease.run).cloned() else {
                st.give_back.push(lease.token);
                continue;
            };
            st.next_id += 1;
            let id = st.next_id;
            let shown = Trial {
                iteration: id,
                ..trial.clone()
            };
            st.playing.insert(
                id,
                Playing {
                    lease,
                    trial: Arc::new(trial),
                    served,
                },
            );
            return Some(shown);
        }
        None
    }

    fn finished(&mut self, trial: Trial, measurement: Measurement) -> Result<()> {
        let played = self.lock().playing.remove(&trial.iteration);
        if let Some(p) = played
            && let Some(tx) = self
                .reports
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
        {
            let _ = tx.send(Report {
                lease: p.lease,
                measurement,
            });
        }
        self.freed.notify_one();
        Ok(())
    }

    fn unfinished(&mut self, trial: &Trial) {
        let mut st = self.lock();
        if let Some(p) = st.playing.remove(&trial.iteration) {
            st.give_back.push(p.lease.token);
        }
        self.freed.notify_one();
    }

    fn wakeup(&self) -> Option<Arc<Notify>> {
        (!self.lock().done).then(|| self.more.clone())
    }
}

/// Serve until `shutdown` is requested (or, with `until_idle`, until no active run is left).
pub async fn serve(url: &str, opts: WorkerOptions, shutdown: &Shutdown) -> Result<WorkerSummary> {
    let mut db = Db::new(url)?;
    db.stop_on(Some(shutdown));
    // The first connection decides whether there is a database at all (exit 2 if not).
    match db.client().await {
        Err(e @ DbError::Stopped { .. }) => return stopped(e.into()),
        r => r?,
    };
    match wait_for_schema(&mut db, shutdown).await {
        Ok(true) => {}
        Ok(false) => return Ok(WorkerSummary::default()),
        Err(e) => return stopped(e),
    }
    // A misspelt --engine name is refused before this worker is registered anywhere. Only at
    // the start: a long-running worker whose runs end and others begin keeps serving.
    if opts.only_run.is_none() && !opts.engines.is_empty() {
        let defs = db
            .run("list the active runs", async |c: &Client| {
                c.query("SELECT definition FROM spsa.active_runs()", &[])
                    .await
            })
            .await?;
        placement::check_engine_names(defs.iter().map(|r| r.get(0)), &opts.engines)?;
    }
    db.run("register the worker", async |c: &Client| {
        c.execute("SELECT spsa.hello($1, $2)", &[&opts.name, &"starting"])
            .await
    })
    .await
    .context("register the worker (is this role a member of spsa_worker?)")?;
    let (report_tx, report_rx) = mpsc::unbounded_channel::<Report>();
    let reporter = reporter(db.sibling(), opts.name.clone(), report_rx);
    let hub = Hub {
        state: Arc::default(),
        more: Arc::new(Notify::new()),
        freed: Arc::new(Notify::new()),
        leasing_over: Shutdown::new(),
        reports: Arc::new(Mutex::new(Some(report_tx))),
    };
    let slots = opts.concurrency.max(1);
    let mut summary = WorkerSummary::default();
    let mut feed = hub.clone();
    let play = async {
        loop {
            let ended = pool::run(&hub, slots, &mut feed, shutdown).await;
            match ended {
                Ok(Ending::Finished) | Ok(Ending::Interrupted) => break,
                // A run's engines failed: the lessor stops serving it; the others go on.
                Err(e) => tracing::info!("pool stopped: {e:#}"),
            }
            if shutdown.is_requested() || hub.lock().done {
                break;
            }
        }
        // Close the report channel: the reporter ends once it delivered everything.
        hub.reports.lock().unwrap_or_else(|e| e.into_inner()).take();
    };
    let heartbeats = heartbeats(db.sibling(), &opts.name, &hub);
    let lessor = lessor(&mut db, &opts, &hub, shutdown, &mut summary);
    let (result, (), (), (reported, refused)) = tokio::join!(
        async {
            let r = lessor.await;
            let mut st = hub.lock();
            st.done = true;
            drop(st);
            hub.more.notify_one();
            hub.leasing_over.request();
            r
        },
        play,
        heartbeats,
        reporter
    );
    // Whatever the pool did not start, or gave back, goes back to the database.
    let back: Vec<Token> = {
        let mut st = hub.lock();
        let mut back = std::mem::take(&mut st.give_back);
        back.extend(st.waiting.drain(..).map(|(l, _)| l.token));
        back
    };
    if !back.is_empty() {
        // Given back even after a stop, but only until 0.7 s after it: a server that does not
        // answer by then lets the leases run out instead, and the stop stays under a second.
        db.stop_on(None);
        let back = give_back(&mut db, &opts.name, &back);
        summary.given_back += if shutdown.is_requested() {
            tokio::select! {
                n = back => n,
                () = shutdown.wait_grace(Duration::from_millis(700)) => 0,
            }
        } else {
            back.await
        };
    }
    let served: Vec<Arc<Served>> = {
        let mut st = hub.lock();
        let retired = std::mem::take(&mut st.retired);
        st.served.drain().map(|(_, s)| s).chain(retired).collect()
    };
    for s in served {
        s.source.close().await;
    }
    summary.reported = reported;
    summary.refused = refused;
    match result {
        Err(e) if DbError::is_stop(&e) => {
            eprintln!("spsa worker: stopped while waiting on the database");
            Ok(summary)
        }
        r => r.map(|()| summary),
    }
}

/// A worker stopped before it started: fine when the stop was a signal's.
fn stopped(e: anyhow::Error) -> Result<WorkerSummary> {
    if DbError::is_stop(&e) {
        eprintln!("spsa worker: stopped while waiting on the database");
        return Ok(WorkerSummary::default());
    }
    Err(e)
}

/// The functions this worker calls; a schema without one of them is older than this spsa.
const WORKER_FUNCTIONS: [&str; 11] = [
    "hello",
    "active_runs",
    "lease_share",
    "heartbeat",
    "give_back",
    "report",
    "report_track",
    "report_pair",
    "count_pairs",
    "artifact",
    "engine_checked",
];

/// Wait (with backoff, 1 s doubling to 30 s, said once) until the database has the spsa
/// schema: a worker may be started before the first run is created. A schema without the
/// functions this worker needs is refused (exit 2). False when stopped while waiting.
async fn wait_for_schema(db: &mut Db, shutdown: &Shutdown) -> Result<bool> {
    let mut wait = Duration::from_secs(1);
    let mut said = false;
    loop {
        // The catalogs are readable by every role, even one without rights on the schema.
        let (schema, found): (bool, Vec<String>) = db
            .run("look for the spsa schema", async |c: &Client| {
                let row = c
                    .query_one(
                        "SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = 'spsa'),
                                ARRAY(SELECT p.proname::text FROM pg_proc p
                                        JOIN pg_namespace n ON n.oid = p.pronamespace
                                       WHERE n.nspname = 'spsa')",
                        &[],
                    )
                    .await?;
                Ok((row.get(0), row.get(1)))
            })
            .await?;
        if schema {
            let missing: Vec<&str> = WORKER_FUNCTIONS
                .iter()
                .copied()
                .filter(|f| !found.iter().any(|x| x == f))
                .collect();
            if missing.is_empty() {
                if said {
                    eprintln!("spsa worker: the database has runs now");
                }
                return Ok(true);
            }
            return Err(crate::error::UserError(format!(
                "database {}: its spsa schema is older than this worker (no spsa.{}); run `spsa run CONFIG --db URL` of this version once as the owner to upgrade it",
                db.url(),
                missing.join(", spsa.")
            ))
            .into());
        }
        if !said {
            eprintln!(
                "spsa worker: database {} has no runs yet (no spsa schema); waiting for one (checking every {} s at most)",
                db.url(),
                MAX_IDLE_WAIT.as_secs()
            );
            said = true;
        }
        tokio::select! {
            biased;
            _ = shutdown.wait() => return Ok(false),
            _ = tokio::time::sleep(wait) => {}
        }
        wait = (wait * 2).min(MAX_IDLE_WAIT);
    }
}

/// The longest wait between two looks for work.
const MAX_IDLE_WAIT: Duration = Duration::from_secs(30);

/// Keep the slots fed: list the active runs (opening the source of each new one, closing the
/// ones that ended), lease iterations of them whenever fewer parts are held than there are
/// slots (the database picks the runs by priority and share), and hand back what the pool gave
/// up.
async fn lessor(
    db: &mut Db,
    opts: &WorkerOptions,
    hub: &Hub,
    shutdown: &Shutdown,
    summary: &mut WorkerSummary,
) -> Result<()> {
    let slots = opts.concurrency.max(1);
    let mut refused_runs: HashSet<i64> = HashSet::new();
    let mut active: Vec<i64> = Vec::new();
    let mut idle_wait = Duration::from_millis(50);
    let mut listed_at: Option<tokio::time::Instant> = None;
    // How often the runs are listed: every half second while some are served, else less and
    // less often (1 s doubling to 30 s), so idle workers cost the database little.
    let mut list_every = Duration::from_millis(500);
    let mut last_note = String::new();
    let mut said_idle = false;
    loop {
        if shutdown.is_requested() {
            return Ok(());
        }
        // Runs whose engines failed are not served any more.
        let failed = std::mem::take(&mut hub.lock().failed);
        for (id, e, source) in failed {
            if refused_runs.insert(id) {
                let why = format!("stopped playing run {id}: {e}");
                eprintln!("spsa worker: {why}");
                summary.unplayable.push((id, why));
            }
            if let Some(s) = source {
                s.source.close().await;
            }
        }
        let back = std::mem::take(&mut hub.lock().give_back);
        if !back.is_empty() {
            summary.given_back += give_back(db, &opts.name, &back).await;
        }
        // The list of runs, at most every half second.
        if listed_at.is_none_or(|t| t.elapsed() >= list_every) {
            listed_at = Some(tokio::time::Instant::now());
            let rows = db
                .run("list the active runs", async |c: &Client| {
                    c.query("SELECT id, definition FROM spsa.active_runs()", &[])
                        .await
                })
                .await?;
            active.clear();
            for row in rows {
                let id: i64 = row.get(0);
                if opts.only_run.is_some_and(|only| only != id) || refused_runs.contains(&id) {
                    continue;
                }
                let (known, failed) = {
                    let st = hub.lock();
                    (
                        st.served.contains_key(&id),
                        st.failed.iter().any(|f| f.0 == id),
                    )
                };
                if failed {
                    continue;
                }
                let shape = shape_of(&row.get::<_, serde_json::Value>(1));
                let reshaped = known
                    && hub
                        .lock()
                        .served
                        .get(&id)
                        .is_some_and(|s| s.def.earlier.len() != shape);
                if reshaped {
                    // A resume changed the run's variables: what waits goes back (it was drawn
                    // in the old shape), what plays finishes with the old source.
                    let mut st = hub.lock();
                    let (back, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut st.waiting)
                        .into_iter()
                        .partition(|(l, _)| l.run == id);
                    st.waiting = keep.into();
                    st.give_back.extend(back.into_iter().map(|(l, _)| l.token));
                    let old = st.served.remove(&id);
                    st.retired.extend(old);
                    eprintln!("spsa worker: run {id} changed its variables; preparing it again");
                }
                if !known || reshaped {
                    match prepare(db, row.get(1), opts, id).await {
                        Ok(s) => {
                            hub.lock().served.insert(id, Arc::new(s));
                        }
                        Err(why) => {
                            let why = format!("cannot play run {id}: {why:#}");
                            eprintln!("spsa worker: {why}");
                            refused_runs.insert(id);
                            summary.unplayable.push((id, why));
                            continue;
                        }
                    }
                }
                active.push(id);
            }
            // Runs that ended (or failed here) are closed once nothing of theirs is held.
            let ended: Vec<Arc<Served>> = {
                let mut st = hub.lock();
                let gone: Vec<i64> = st
                    .served
                    .keys()
                    .copied()
                    .filter(|id| !active.contains(id) && !st.holds_run(*id))
                    .collect();
                gone.iter().filter_map(|id| st.served.remove(id)).collect()
            };
            for s in ended {
                tracing::info!("a run is no longer active");
                s.source.close().await;
            }
            // Sources of a run's earlier shape close once nothing of theirs plays.
            let unheld = take_unheld(&mut hub.lock().retired);
            for s in unheld {
                s.source.close().await;
            }
            // What `spsa status` shows for this worker: the runs it serves, and why not others.
            let mut serving: Vec<i64> = hub.lock().served.keys().copied().collect();
            serving.sort();
            let mut said: Vec<String> = Vec::new();
            if !serving.is_empty() {
                let ids: Vec<String> = serving.iter().map(i64::to_string).collect();
                said.push(format!("serving run {}", ids.join(", ")));
            }
            said.extend(summary.unplayable.iter().map(|(_, why)| why.clone()));
            let said = if said.is_empty() {
                "idle".to_string()
            } else {
                said.join("; ")
            };
            if said != last_note {
                note(db, &opts.name, &said).await;
                last_note = said;
            }
            if active.is_empty() && !said_idle && !opts.until_idle {
                eprintln!(
                    "spsa worker: no run to play yet; waiting for one (looking again after 1 s, 2 s, … up to every {} s)",
                    MAX_IDLE_WAIT.as_secs()
                );
                said_idle = true;
            } else if !active.is_empty() {
                said_idle = false;
            }
            list_every = if active.is_empty() {
                (list_every * 2).clamp(Duration::from_secs(1), MAX_IDLE_WAIT)
            } else {
                Duration::from_millis(500)
            };
            if active.is_empty() && opts.until_idle {
                let st = hub.lock();
                if st.waiting.is_empty() && st.playing.is_empty() {
                    return Ok(());
                }
            }
        }
        // Lease while fewer parts are held than there are slots: the database shares them out
        // between the runs by priority and throughput (`spsa.lease_share`).
        let mut leased = 0;
        let (free, runs) = {
            let st = hub.lock();
            let runs: Vec<i64> = active
                .iter()
                .copied()
                .filter(|id| st.served.contains_key(id))
                .collect();
            (slots.saturating_sub(st.parts_held()), runs)
        };
        if free > 0 && !runs.is_empty() {
            let want = i32::try_from(free).unwrap_or(i32::MAX);
            let rows = db
                .run("lease work", async |c: &Client| {
                    c.query(
                        "SELECT run_id, iteration, token::text, theta FROM spsa.lease_share($1, $2, $3)",
                        &[&opts.name, &runs, &want],
                    )
                    .await
                })
                .await?;
            let mut st = hub.lock();
            for row in rows {
                let run: i64 = row.get(0);
                let iteration: i64 = row.get(1);
                let theta: Vec<f64> = row.get(3);
                let Some((s, trial)) = st
                    .served
                    .get(&run)
                    .and_then(|s| Some((s.clone(), s.trial(iteration, theta)?)))
                else {
                    // Not served here, or its θ is of another shape than the one prepared
                    // (the run changed its variables since it was listed): back, and list again.
                    st.give_back.push(row.get(2));
                    listed_at = None;
                    continue;
                };
                let lease = Lease {
                    run,
                    iteration,
                    token: row.get(2),
                    lease_seconds: s.def.lease_seconds,
                    parts: s.source.parts(&trial).max(1),
                    pair_test: s.pair_test,
                };
                st.waiting.push_back((lease, trial));
                leased += 1;
            }
            drop(st);
            if leased > 0 {
                hub.more.notify_one();
            }
        }
        if leased > 0 {
            idle_wait = Duration::from_millis(50);
        }
        let full = hub.lock().parts_held() >= slots;
        // Wait for a free slot when full; else (nothing to lease) a little longer each time.
        let wait = if full {
            Duration::from_secs(1)
        } else {
            idle_wait
        };
        tokio::select! {
            biased;
            _ = shutdown.wait() => return Ok(()),
            _ = hub.freed.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
        if !full && leased == 0 {
            idle_wait = (idle_wait * 2).min(Duration::from_secs(1));
        }
    }
}

/// Keep every held lease alive (a third of the shortest lease time between beats) until the
/// lessor is done and nothing is held.
async fn heartbeats(mut db: Db, name: &str, hub: &Hub) {
    loop {
        let (tokens, every, done) = {
            let st = hub.lock();
            let shortest = st
                .waiting
                .iter()
                .map(|(l, _)| l.lease_seconds)
                .chain(st.playing.values().map(|p| p.lease.lease_seconds))
                .fold(f64::INFINITY, f64::min);
            let every = if shortest.is_finite() {
                (shortest / 3.0).clamp(0.1, 30.0)
            } else {
                0.1
            };
            (st.tokens(), Duration::from_secs_f64(every), st.done)
        };
        if done && hub.lock().playing.is_empty() {
            return;
        }
        // Once leasing is over, the beats go on (quicker) only until the last game ends.
        if done {
            tokio::time::sleep(every.min(Duration::from_millis(200))).await;
        } else {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = hub.leasing_over.wait() => continue,
            }
        }
        if tokens.is_empty() {
            continue;
        }
        let r = db
            .run("heartbeat", async |c: &Client| {
                c.execute(
                    "SELECT spsa.heartbeat($1, $2::text[]::uuid[])",
                    &[&name, &tokens],
                )
                .await
            })
            .await;
        if let Err(e) = r {
            tracing::warn!("{e}");
        }
    }
}

/// Deliver reports in order; a refused one is logged and dropped (its work is someone else's
/// now), a lost connection is retried by [`Db::run`].
async fn reporter(mut db: Db, name: String, mut rx: mpsc::UnboundedReceiver<Report>) -> (u64, u64) {
    let (mut reported, mut refused) = (0, 0);
    while let Some(r) = rx.recv().await {
        let m = &r.measurement;
        if let Some(sprt) = r.lease.pair_test {
            let l = &r.lease;
            match super::matches::report(&mut db, &name, l.run, l.iteration, &l.token, sprt, m)
                .await
            {
                Ok(()) => reported += 1,
                Err(e) => {
                    refused += 1;
                    eprintln!(
                        "spsa worker: result of match {} pair {} not taken: {e}",
                        l.run, l.iteration
                    );
                }
            }
            continue;
        }
        let (wins, draws, losses, penta, faults, records) = super::records::report_fields(m);
        let signal = m.signal();
        let iteration = r.lease.iteration;
        // A measurement of the curve has no signal: it moves no θ.
        let (what, call) = if iteration < 0 {
            (
                "report a measurement of the curve",
                "SELECT spsa.report_track($1, $2, $3, $4::text::uuid, $5, $6, $7, $8, $9, $10)",
            )
        } else {
            (
                "report a result",
                "SELECT spsa.report($1, $2, $3, $4::text::uuid, $5, $6, $7, $8, $9, $10, $11)",
            )
        };
        let done = db
            .run(what, async |c: &Client| {
                let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![
                    &name,
                    &r.lease.run,
                    &iteration,
                    &r.lease.token,
                    &signal,
                    &wins,
                    &draws,
                    &losses,
                    &penta,
                    &faults,
                    &records,
                ];
                if iteration < 0 {
                    params.remove(4);
                }
                c.query_one(call, &params).await
            })
            .await;
        match done {
            Ok(_) => reported += 1,
            Err(e) => {
                refused += 1;
                eprintln!(
                    "spsa worker: result of run {} iteration {} not taken: {e}",
                    r.lease.run, r.lease.iteration
                );
            }
        }
    }
    (reported, refused)
}

async fn give_back(db: &mut Db, name: &str, tokens: &[Token]) -> u64 {
    let tokens = tokens.to_vec();
    db.run("give leases back", async |c: &Client| {
        c.query_one(
            "SELECT spsa.give_back($1, $2::text[]::uuid[])",
            &[&name, &tokens],
        )
        .await
        .map(|r| r.get::<_, i64>(0) as u64)
    })
    .await
    .unwrap_or(0)
}

async fn note(db: &mut Db, name: &str, text: &str) {
    let r = db
        .run("update the worker note", async |c: &Client| {
            c.execute("SELECT spsa.hello($1, $2)", &[&name, &text])
                .await
        })
        .await;
    if let Err(e) = r {
        tracing::warn!("{e}");
    }
}

/// How many times a resume changed the variables of the run whose definition is `def` (see
/// `RunDefinition::earlier`), read without parsing the rest.
fn shape_of(def: &serde_json::Value) -> usize {
    def.get("earlier")
        .and_then(|e| e.as_array())
        .map_or(0, Vec::len)
}

/// The sources in `retired` that no trial holds any more, taken out.
fn take_unheld(retired: &mut Vec<Arc<Served>>) -> Vec<Arc<Served>> {
    let (free, held): (Vec<_>, Vec<_>) = std::mem::take(retired)
        .into_iter()
        .partition(|s| Arc::strong_count(s) == 1);
    *retired = held;
    free
}

/// Open a run's source on this machine: the simulator, or this machine's engines (started and
/// checked against the variables' ranges by `source::open`).
async fn prepare(
    db: &mut Db,
    def: serde_json::Value,
    opts: &WorkerOptions,
    id: i64,
) -> Result<Served> {
    let def: RunDefinition =
        serde_json::from_value(def).context("the run's definition is not one this spsa reads")?;
    if let Some(spec) = &def.match_def {
        let pair_test = Some(spec.sprt());
        let (source, dir) = super::matches::open_source(db, &def, opts, id).await?;
        return Ok(Served {
            def,
            rounding: Rounding::Continuous,
            source: Box::new(source),
            track: None,
            pair_test,
            _files: Some(dir),
        });
    }
    let vars = def.variables();
    // The config is parsed here from its text, in a folder of its own with the book beside it.
    let dir = tempfile::tempdir().context("a temporary folder for the run's config")?;
    let config_path = dir.path().join(&def.config_name);
    std::fs::write(&config_path, &def.config_text)?;
    let mut config = Config::load(&config_path)?;
    super::refuse_positions(&config)?;
    config.simulate = def.simulate;
    config.draw_rate = def.draw_rate;
    // Records go back with the report under placeholder names (see `db::records`), and the
    // PGN's Event tag names the config as the owner typed it, not this temporary folder.
    super::records::use_placeholders(&mut config);
    config.path = PathBuf::from(&def.config_name);
    let mut rounding = Rounding::Continuous;
    if !def.simulate {
        let games = config
            .games
            .as_mut()
            .with_context(|| format!("run {id} has no engines"))?;
        rounding = Rounding::Integer(games.rounding);
        // The owner's engine log is a path on the owner's machine.
        games.engine_log = None;
        if let Some((name, text)) = &def.book {
            let book = dir.path().join(name);
            std::fs::write(&book, text)?;
            games.book = Some(book);
        }
        // The run's recorded split, not this copy of its config, says which openings are
        // the tune's (the same rule a resumed local run follows).
        if let Some(share) = def.holdout {
            games.holdout = share;
            if share > 0.0 {
                games.verify_book = None;
            }
        }
        placement::place_engines(db, &def, opts, id, games).await?;
        if games.limits.is_timed() {
            placement::scale_clock(db, opts, id, games).await?;
        }
    }
    let source = source::open(&OpenRequest {
        config: &config,
        vars: &vars,
        seed: def.seed,
        slots: opts.concurrency.max(1),
    })
    .await?;
    Ok(Served {
        def,
        rounding,
        source,
        track: config.track.clone(),
        pair_test: None,
        _files: Some(dir),
    })
}

impl Served {
    /// The trial of a leased work row at the θ the lease returned: iteration k's, or (a
    /// negative iteration) the curve's unit −(k + 1) at its point's θ. None for a measurement
    /// of a run that measures no curve here.
    fn trial(&self, iteration: i64, theta: Vec<f64>) -> Option<Trial> {
        if self.pair_test.is_some() {
            return super::matches::trial(iteration);
        }
        if theta.len() != self.def.vars.len() {
            return None;
        }
        let Ok(index) = u64::try_from(-iteration - 1) else {
            return Some(
                self.def
                    .driver_at(theta, self.rounding)
                    .trial(iteration as u64),
            );
        };
        let plan = self.track.as_ref()?;
        let unit = plan.unit(index);
        // The iterations applied when the point was added (see `spsa.report`).
        let at = (unit.point * plan.interval(self.def.pairs)).min(self.def.iterations);
        let start: Vec<f64> = self.def.vars.iter().map(|v| v.start).collect();
        let mut trial = Trial::default();
        plan.fill(
            self.def.seed,
            &start,
            self.rounding,
            unit,
            at,
            &theta,
            &mut trial,
        );
        Some(trial)
    }
}
