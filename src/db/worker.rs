//! A worker: serves every active run it can play. For each run it first rebuilds the driver and
//! the source from the run's definition (for engine runs: starts its own engines and checks
//! every variable is an option with the right range; a run it cannot play is refused with the
//! reason, and its work is left to others). Then it leases iterations, plays them, reports, and
//! keeps its leases alive with heartbeats. On shutdown it gives back what it still holds.
//!
//! Reports go through their own connection and task, so a slow or restarting database never
//! stalls the games being played.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::mpsc;
use tokio_postgres::Client;

use super::{Db, RunDefinition};
use crate::arena::TuningSource;
use crate::config::Config;
use crate::simulate::Simulator;
use crate::source::{MatchSource, PairOutcome, PairTask};

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Shown in `status` (qualified by the login role there).
    pub name: String,
    /// Pairs played at once.
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
enum Player {
    Simulated(Simulator),
    Games {
        source: Box<TuningSource>,
        /// Holds the run's config and book while the engines play.
        _files: tempfile::TempDir,
    },
}

impl Player {
    async fn play(&self, task: PairTask) -> Result<PairOutcome> {
        match self {
            Player::Simulated(s) => s.play(task).await,
            Player::Games { source, .. } => source.play(task).await,
        }
    }
}

struct Served {
    def: RunDefinition,
    player: Player,
}

/// A leased iteration.
#[derive(Clone, Debug)]
struct Lease {
    run: i64,
    iteration: u64,
    token: Token,
    theta: Vec<f64>,
}

struct Report {
    lease: Lease,
    outcome: PairOutcome,
}

/// Serve until `shutdown` resolves (or, with `until_idle`, until no active run is left).
pub async fn serve(
    url: &str,
    opts: WorkerOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<WorkerSummary> {
    let mut db = Db::new(url)?;
    let mut summary = WorkerSummary::default();
    db.run("register the worker", async |c: &Client| {
        c.execute("SELECT spsa.hello($1, $2)", &[&opts.name, &"starting"])
            .await
    })
    .await
    .context("register the worker (is this role a member of spsa_worker?)")?;

    let (report_tx, report_rx) = mpsc::unbounded_channel::<Report>();
    let reporter = reporter(Db::new(url)?, opts.name.clone(), report_rx);

    let mut served: HashMap<i64, Rc<Served>> = HashMap::new();
    let mut refused_runs: HashSet<i64> = HashSet::new();
    let mut held: HashMap<Token, i64> = HashMap::new();
    let mut lease_seconds: f64 = 60.0;
    let mut free_slots: Vec<usize> = (0..opts.concurrency.max(1)).rev().collect();
    let mut in_flight = FuturesUnordered::new();
    let mut last_refresh: Option<Instant> = None;
    let mut last_heartbeat = Instant::now();
    let mut idle_wait = Duration::from_millis(50);
    let mut active_ids: Vec<i64> = Vec::new();
    tokio::pin!(shutdown);

    let main_loop = async {
        // Dropped when the loop ends, which lets the reporter finish its queue and stop.
        let report_tx = report_tx;
        loop {
            // Learn about new runs (and finished ones) now and then.
            let refresh_due = last_refresh.is_none_or(|t| t.elapsed() > Duration::from_secs(2));
            if refresh_due || (in_flight.is_empty() && active_ids.is_empty()) {
                let runs = db
                    .run("list the active runs", async |c: &Client| {
                        c.query("SELECT id, definition FROM spsa.active_runs()", &[])
                            .await
                    })
                    .await?;
                last_refresh = Some(Instant::now());
                active_ids.clear();
                for row in runs {
                    let id: i64 = row.get(0);
                    if opts.only_run.is_some_and(|only| only != id) || refused_runs.contains(&id) {
                        continue;
                    }
                    if let std::collections::hash_map::Entry::Vacant(slot) = served.entry(id) {
                        let def: serde_json::Value = row.get(1);
                        match prepare(def, &opts, id).await {
                            Ok(s) => {
                                slot.insert(Rc::new(s));
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
                    active_ids.push(id);
                }
                served.retain(|id, _| active_ids.contains(id) || held.values().any(|r| r == id));
                lease_seconds = active_ids
                    .iter()
                    .filter_map(|id| served.get(id))
                    .map(|s| s.def.lease_seconds)
                    .fold(60.0, f64::min);
            }

            // Lease for the free slots.
            let mut leased = 0;
            if !free_slots.is_empty() && !active_ids.is_empty() {
                let want = free_slots.len() as i32;
                let ids = active_ids.clone();
                let rows = db
                    .run("lease work", async |c: &Client| {
                        c.query(
                            "SELECT run_id, iteration, token::text, theta FROM spsa.lease($1, $2, $3)",
                            &[&opts.name, &ids, &want],
                        )
                        .await
                    })
                    .await?;
                for row in rows {
                    let lease = Lease {
                        run: row.get(0),
                        iteration: row.get::<_, i64>(1) as u64,
                        token: row.get(2),
                        theta: row.get(3),
                    };
                    let Some(s) = served.get(&lease.run) else {
                        continue;
                    };
                    let Some(slot) = free_slots.pop() else { break };
                    let trial = s.def.driver_at(lease.theta.clone()).trial(lease.iteration);
                    let task = PairTask {
                        iteration: trial.iteration,
                        slot,
                        plus: trial.plus,
                        minus: trial.minus,
                        opening: trial.opening,
                        seed: trial.seed,
                    };
                    held.insert(lease.token.clone(), lease.run);
                    let served_run = s.clone();
                    in_flight.push(async move {
                        let outcome = served_run.player.play(task).await;
                        (lease, slot, outcome)
                    });
                    leased += 1;
                }
            }

            if in_flight.is_empty() {
                if leased == 0 {
                    if opts.until_idle && active_ids.is_empty() {
                        return Ok(());
                    }
                    // Nothing to do: wait a little longer each time (at most 1 s).
                    tokio::select! {
                        biased;
                        _ = &mut shutdown => return Ok(()),
                        _ = tokio::time::sleep(idle_wait) => {}
                    }
                    idle_wait = (idle_wait * 2).min(Duration::from_secs(1));
                    if idle_wait >= Duration::from_millis(400) {
                        last_refresh = None;
                    }
                }
                continue;
            }
            idle_wait = Duration::from_millis(50);

            let heartbeat_every = Duration::from_secs_f64((lease_seconds / 3.0).clamp(0.1, 30.0));
            let next_heartbeat = last_heartbeat + heartbeat_every;
            tokio::select! {
                biased;
                _ = &mut shutdown => return Ok(()),
                Some((lease, slot, outcome)) = in_flight.next() => {
                    free_slots.push(slot);
                    held.remove(&lease.token);
                    match outcome {
                        Ok(outcome) => { let _ = report_tx.send(Report { lease, outcome }); }
                        Err(e) => {
                            // The pair could not be played (engines failing): give it back.
                            eprintln!("spsa worker: run {} iteration {}: {e:#}", lease.run, lease.iteration);
                            let tokens = vec![lease.token.clone()];
                            give_back(&mut db, &opts.name, &tokens).await;
                        }
                    }
                }
                _ = tokio::time::sleep_until(next_heartbeat.into()) => {
                    last_heartbeat = Instant::now();
                    let tokens: Vec<Token> = held.keys().cloned().collect();
                    if !tokens.is_empty() {
                        db.run("heartbeat", async |c: &Client| {
                            c.execute("SELECT spsa.heartbeat($1, $2::text[]::uuid[])", &[&opts.name, &tokens]).await
                        }).await?;
                    }
                }
            }
        }
    };
    let (result, (reported, refused)): (Result<()>, _) = tokio::join!(main_loop, reporter);

    // Whatever is still leased goes back at once, so others need not wait for a timeout.
    drop(in_flight);
    let tokens: Vec<Token> = held.keys().cloned().collect();
    if !tokens.is_empty() {
        summary.given_back = give_back(&mut db, &opts.name, &tokens).await;
    }
    summary.reported = reported;
    summary.refused = refused;
    drop(served);
    result.map(|()| summary)
}

/// Deliver reports in order; a refused one is logged and dropped (its work is someone else's
/// now), a lost connection is retried by [`Db::run`].
async fn reporter(mut db: Db, name: String, mut rx: mpsc::UnboundedReceiver<Report>) -> (u64, u64) {
    let (mut reported, mut refused) = (0, 0);
    while let Some(r) = rx.recv().await {
        let o = &r.outcome;
        let (mut wins, mut draws, mut losses) = (0i32, 0i32, 0i32);
        for g in o.games {
            match g.value() {
                1 => wins += 1,
                0 => draws += 1,
                _ => losses += 1,
            }
        }
        let mut penta = vec![0i32; 5];
        penta[o.pentanomial_bucket()] += 1;
        let signal = f64::from(o.score());
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
                        &o.faults,
                        &"",
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

/// Rebuild a run's player on this machine: the simulator, or this machine's engines (started
/// and checked against the variables' ranges).
async fn prepare(def: serde_json::Value, opts: &WorkerOptions, id: i64) -> Result<Served> {
    let def: RunDefinition =
        serde_json::from_value(def).context("the run's definition is not one this spsa reads")?;
    let vars = def.variables();
    if def.simulate {
        return Ok(Served {
            player: Player::Simulated(Simulator::new(&vars, def.draw_rate)),
            def,
        });
    }
    // The config is parsed here from its text, in a folder of its own with the book beside it.
    let dir = tempfile::tempdir().context("a temporary folder for the run's config")?;
    let config_path = dir.path().join(&def.config_name);
    std::fs::write(&config_path, &def.config_text)?;
    let mut config = Config::load(&config_path)?;
    let games = config
        .games
        .as_mut()
        .with_context(|| format!("run {id} has no engines"))?;
    if let Some((name, text)) = &def.book {
        let book = dir.path().join(name);
        std::fs::write(&book, text)?;
        games.book = Some(book);
    }
    games.pgn = None;
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
    config.game_log = None;
    let games = config.games.clone().expect("checked above");
    let arena = crate::app::start_arena(&config, &games, def.seed, opts.concurrency.max(1)).await?;
    let source = TuningSource::new(arena, &vars, games.rounding).await?;
    Ok(Served {
        player: Player::Games {
            source: Box::new(source),
            _files: dir,
        },
        def,
    })
}
