//! A worker: serves the active runs it can play. For each run it first opens the run's source
//! with `source::open`, from the run's definition (for engine runs: its own engines, started
//! and checked to offer every variable as an option with the right range; a run it cannot play
//! is refused with the reason, and its work is left to others). Then it leases a batch of
//! iterations, measures them through the same [`pool`](crate::pool) a local run uses, reports
//! each as it finishes, and keeps its leases alive with heartbeats. On shutdown it gives back
//! what it still holds.
//!
//! Reports go through their own connection, so a restarting database never stalls the games.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::mpsc;
use tokio_postgres::Client;

use super::{Db, RunDefinition};
use crate::config::Config;
use crate::pool::{self, Feed};
use crate::shutdown::Shutdown;
use crate::source::{self, Measurement, OpenRequest, Source, Trial};
use crate::spsa::driver::Rounding;

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Shown in `status` (qualified by the login role there).
    pub name: String,
    /// Games played at once.
    pub concurrency: usize,
    /// Engine paths on this machine, by the config's engine file name or by Engine1/Engine2.
    pub engines: Vec<(String, PathBuf)>,
    /// Serve only this run (the run process's own worker).
    pub only_run: Option<i64>,
    /// Exit when no active run is left (instead of waiting for new ones).
    pub until_idle: bool,
}

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
    /// Parts (games) per trial: a batch of concurrency/parts trials fills every slot.
    parts: usize,
    /// Holds the run's config and book while the engines play.
    _files: Option<tempfile::TempDir>,
}

/// A leased iteration.
#[derive(Clone, Debug)]
struct Lease {
    run: i64,
    iteration: u64,
    token: Token,
}

struct Report {
    lease: Lease,
    measurement: Measurement,
}

/// The pool's feed: the leased batch; finished trials go to the reporter, unfinished ones are
/// given back.
struct LeaseFeed {
    queue: VecDeque<(Lease, Trial)>,
    playing: HashMap<u64, Lease>,
    reports: mpsc::UnboundedSender<Report>,
    unfinished: Vec<Token>,
}

impl Feed for LeaseFeed {
    fn next_trial(&mut self) -> Option<Trial> {
        let (lease, trial) = self.queue.pop_front()?;
        self.playing.insert(trial.iteration, lease);
        Some(trial)
    }

    fn finished(&mut self, trial: Trial, measurement: Measurement) -> Result<()> {
        if let Some(lease) = self.playing.remove(&trial.iteration) {
            let _ = self.reports.send(Report { lease, measurement });
        }
        Ok(())
    }

    fn unfinished(&mut self, trial: &Trial) {
        if let Some(lease) = self.playing.remove(&trial.iteration) {
            self.unfinished.push(lease.token);
        }
    }
}

/// Serve until `shutdown` is requested (or, with `until_idle`, until no active run is left).
pub async fn serve(url: &str, opts: WorkerOptions, shutdown: &Shutdown) -> Result<WorkerSummary> {
    let mut db = Db::new(url)?;
    db.run("register the worker", async |c: &Client| {
        c.execute("SELECT spsa.hello($1, $2)", &[&opts.name, &"starting"])
            .await
    })
    .await
    .context("register the worker (is this role a member of spsa_worker?)")?;
    let (report_tx, report_rx) = mpsc::unbounded_channel::<Report>();
    let reporter = reporter(Db::new(url)?, opts.name.clone(), report_rx);
    let mut summary = WorkerSummary::default();
    let mut served: HashMap<i64, Served> = HashMap::new();
    let work = async {
        let report_tx = report_tx;
        let mut refused_runs: HashSet<i64> = HashSet::new();
        let mut idle_wait = Duration::from_millis(50);
        loop {
            if shutdown.is_requested() {
                return Ok(());
            }
            let runs = db
                .run("list the active runs", async |c: &Client| {
                    c.query("SELECT id, definition FROM spsa.active_runs()", &[])
                        .await
                })
                .await?;
            let mut active = Vec::new();
            for row in runs {
                let id: i64 = row.get(0);
                if opts.only_run.is_some_and(|only| only != id) || refused_runs.contains(&id) {
                    continue;
                }
                if let std::collections::hash_map::Entry::Vacant(slot) = served.entry(id) {
                    match prepare(row.get(1), &opts, id).await {
                        Ok(s) => {
                            slot.insert(s);
                            note(&mut db, &opts.name, &format!("serving run {id}")).await;
                        }
                        Err(why) => {
                            let why = format!("cannot play run {id}: {why:#}");
                            eprintln!("spsa worker: {why}");
                            note(&mut db, &opts.name, &why).await;
                            refused_runs.insert(id);
                            summary.unplayable.push((id, why));
                            continue;
                        }
                    }
                }
                active.push(id);
            }
            for (id, s) in served.extract_if(|id, _| !active.contains(id)) {
                tracing::info!("run {id} is no longer active");
                s.source.close().await;
            }
            if active.is_empty() && opts.until_idle {
                return Ok(());
            }
            // One run at a time: the first with work to lease.
            let mut played = false;
            for &id in &active {
                let s = &served[&id];
                let want = opts.concurrency.div_ceil(s.parts).max(1) as i32;
                let rows = db
                    .run("lease work", async |c: &Client| {
                        c.query(
                            "SELECT run_id, iteration, token::text, theta FROM spsa.lease($1, ARRAY[$2::bigint], $3)",
                            &[&opts.name, &id, &want],
                        )
                        .await
                    })
                    .await?;
                if rows.is_empty() {
                    continue;
                }
                let mut feed = LeaseFeed {
                    queue: VecDeque::new(),
                    playing: HashMap::new(),
                    reports: report_tx.clone(),
                    unfinished: Vec::new(),
                };
                let mut tokens = Vec::new();
                for row in rows {
                    let lease = Lease {
                        run: row.get(0),
                        iteration: row.get::<_, i64>(1) as u64,
                        token: row.get(2),
                    };
                    let theta: Vec<f64> = row.get(3);
                    let trial = s.def.driver_at(theta, s.rounding).trial(lease.iteration);
                    tokens.push(lease.token.clone());
                    feed.queue.push_back((lease, trial));
                }
                let every = Duration::from_secs_f64((s.def.lease_seconds / 3.0).clamp(0.1, 30.0));
                let heartbeats = async {
                    loop {
                        tokio::time::sleep(every).await;
                        let r = db
                            .run("heartbeat", async |c: &Client| {
                                c.execute(
                                    "SELECT spsa.heartbeat($1, $2::text[]::uuid[])",
                                    &[&opts.name, &tokens],
                                )
                                .await
                            })
                            .await;
                        if let Err(e) = r {
                            tracing::warn!("{e}");
                        }
                    }
                };
                let ended = tokio::select! {
                    ended = pool::run(&*s.source, opts.concurrency.max(1), &mut feed, shutdown) => ended,
                    _ = heartbeats => unreachable!("heartbeats never end"),
                };
                if !feed.unfinished.is_empty() {
                    summary.given_back += give_back(&mut db, &opts.name, &feed.unfinished).await;
                }
                if let Err(e) = ended {
                    // The engines cannot go on: stop serving this run (others may).
                    let why = format!("stopped playing run {id}: {e:#}");
                    eprintln!("spsa worker: {why}");
                    note(&mut db, &opts.name, &why).await;
                    refused_runs.insert(id);
                    summary.unplayable.push((id, why));
                }
                played = true;
                idle_wait = Duration::from_millis(50);
                break;
            }
            if !played {
                // Nothing to lease: wait a little longer each time (at most 1 s).
                tokio::select! {
                    biased;
                    _ = shutdown.wait() => return Ok(()),
                    _ = tokio::time::sleep(idle_wait) => {}
                }
                idle_wait = (idle_wait * 2).min(Duration::from_secs(1));
            }
        }
    };
    let (result, (reported, refused)): (Result<()>, _) = tokio::join!(work, reporter);
    summary.reported = reported;
    summary.refused = refused;
    for (_, s) in served {
        s.source.close().await;
    }
    result.map(|()| summary)
}

/// Deliver reports in order; a refused one is logged and dropped (its work is someone else's
/// now), a lost connection is retried by [`Db::run`].
async fn reporter(mut db: Db, name: String, mut rx: mpsc::UnboundedReceiver<Report>) -> (u64, u64) {
    let (mut reported, mut refused) = (0, 0);
    while let Some(r) = rx.recv().await {
        let m = &r.measurement;
        let (mut wins, mut draws, mut losses) = (0i32, 0i32, 0i32);
        for g in &m.games {
            match g.value() {
                1 => wins += 1,
                0 => draws += 1,
                _ => losses += 1,
            }
        }
        let mut penta = vec![0i32; 5];
        for bucket in m.pentanomial() {
            penta[bucket] += 1;
        }
        let faults: Vec<String> = m
            .faults
            .iter()
            .map(|f| format!("{}: {}", f.side, f.kind))
            .collect();
        let signal = m.signal();
        let records = super::records::encode(&m.records);
        let iteration = r.lease.iteration as i64;
        let done = db
            .run("report a result", async |c: &Client| {
                c.query_one(
                    "SELECT spsa.report($1, $2, $3, $4::text::uuid, $5, $6, $7, $8, $9, $10, $11)",
                    &[
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
                    ],
                )
                .await
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

/// Open a run's source on this machine: the simulator, or this machine's engines (started and
/// checked against the variables' ranges by `source::open`).
async fn prepare(def: serde_json::Value, opts: &WorkerOptions, id: i64) -> Result<Served> {
    let def: RunDefinition =
        serde_json::from_value(def).context("the run's definition is not one this spsa reads")?;
    let vars = def.variables();
    // The config is parsed here from its text, in a folder of its own with the book beside it.
    let dir = tempfile::tempdir().context("a temporary folder for the run's config")?;
    let config_path = dir.path().join(&def.config_name);
    std::fs::write(&config_path, &def.config_text)?;
    let mut config = Config::load(&config_path)?;
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
        if let Some((name, text)) = &def.book {
            let book = dir.path().join(name);
            std::fs::write(&book, text)?;
            games.book = Some(book);
        }
        for (side, engine) in [
            ("Engine1", &mut games.engine1),
            ("Engine2", &mut games.engine2),
        ] {
            let file = engine
                .command
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some((_, path)) = opts
                .engines
                .iter()
                .find(|(name, _)| *name == file || name == side)
            {
                engine.command = path.clone();
                engine.workdir = None;
            } else if !engine.command.exists() {
                anyhow::bail!(
                    "{side} `{file}` is not at {} on this machine; pass --engine {file}=PATH",
                    engine.command.display()
                );
            }
        }
    }
    let source = source::open(&OpenRequest {
        config: &config,
        vars: &vars,
        seed: def.seed,
        slots: opts.concurrency.max(1),
    })
    .await?;
    let start = vars.iter().map(|v| v.start).collect();
    let parts = source
        .parts(&def.driver_at(start, rounding).trial(1))
        .max(1);
    Ok(Served {
        def,
        rounding,
        source,
        parts,
        _files: Some(dir),
    })
}
