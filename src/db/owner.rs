//! The run's owner: installs the schema, creates the run (a work row per iteration of its first
//! [`work_window`], each with the driver's step vector), and follows the applied results
//! through its own driver ([`Mirror`]), checking that the database's θ is the driver's, bit for
//! bit (by its checksum, [`theta_checksum`]), and handing out the next iterations as results
//! are applied. The run envelope writes them to the local files.
//!
//! What the database keeps per iteration is what only that iteration knows: the result, its
//! games and the checksum of θ after it. A step vector lives in a work row only until its result
//! is applied, θ is stored every [`snapshot_every`] results, and everything else follows from
//! the run's definition, seed and ordered results (docs/shared-runs.md, "What a run costs in the
//! database").

use std::path::Path;

use anyhow::{Context, Result, bail};
use tokio_postgres::Client;

use super::records::{self, Destinations};
use super::{Db, DbError, RunDefinition};
use crate::source::{Fault, GameScore, Measurement, Record};
use crate::spsa::checksum::theta_checksum;
use crate::spsa::driver::{Driver, IterationRng, Rounding};
use crate::tuner::reshape::{Reshape, Standing};
use crate::tuner::{StartMode, UserError};

/// Install (or upgrade) the schema; safe to run from several owners at once. A database that
/// holds this very schema already (its text's SHA-256 recorded by the last install, and the
/// workers' group role there) is left as it is: the install's ALTER TABLEs lock the tables
/// every report writes, so an owner re-attaching to a busy run would hold up every worker's
/// report while it waits for them, and deadlock with some (measured: two reports a resume).
///
/// A role that does not own the schema (a member or an approver creating a run) installs
/// nothing: the schema's owner installs and upgrades it, and the functions it calls check it.
pub async fn install_schema(db: &mut Db) -> Result<(), DbError> {
    let sha256 = schema_sha256();
    let installed = db
        .run("read the installed schema", async |c: &Client| {
            let row = c
                .query_one(
                    "SELECT to_regclass('spsa.schema_installed') IS NOT NULL
                            AND to_regclass('spsa.schema_version') IS NOT NULL,
                            (SELECT count(*) = 3 FROM pg_roles
                              WHERE rolname IN ('spsa_worker', 'spsa_member', 'spsa_approver')),
                            coalesce((SELECT NOT pg_has_role(session_user, n.nspowner, 'MEMBER')
                                        FROM pg_namespace n WHERE n.nspname = 'spsa'), false)",
                    &[],
                )
                .await?;
            let (tables, role, not_ours): (bool, bool, bool) = (row.get(0), row.get(1), row.get(2));
            if not_ours {
                return Ok(true);
            }
            if !(tables && role) {
                return Ok(false);
            }
            // A version other than ours (a newer spsa's) goes through the install, which
            // refuses it.
            let row = c
                .query_one(
                    "SELECT (SELECT array_agg(sha256) FROM spsa.schema_installed),
                            (SELECT max(version) FROM spsa.schema_version)",
                    &[],
                )
                .await?;
            let (hashes, version): (Option<Vec<String>>, Option<i32>) = (row.get(0), row.get(1));
            Ok(hashes == Some(vec![sha256.clone()]) && version == Some(super::SCHEMA_VERSION))
        })
        .await?;
    if installed {
        return Ok(());
    }
    let installed = db
        .run("install the spsa schema", async |c: &Client| {
            c.batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock(2117321); {}
             DELETE FROM spsa.schema_installed;
             INSERT INTO spsa.schema_installed (sha256) VALUES ('{sha256}');
             COMMIT;",
                super::SCHEMA
            ))
            .await
        })
        .await;
    match installed {
        // No schema there, and this role may not make one (a member's first run).
        Err(DbError::Refused {
            what,
            code,
            message,
        }) if code == super::conn::NOT_ALLOWED => Err(DbError::Refused {
            what,
            code,
            message: format!(
                "{message}: the database has no spsa schema of this version, and this role cannot install it; the role that owns the database installs it (`spsa status --db URL --install`, or its first `spsa run --db`)"
            ),
        }),
        other => other,
    }
}

/// The hex SHA-256 of this spsa's schema text.
fn schema_sha256() -> String {
    use sha2::Digest;
    sha2::Sha256::digest(super::SCHEMA.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The layout version of the database's schema (see `spsa.schema_version` in the schema): 1
/// for a database made before versions were recorded.
pub async fn schema_version(db: &mut Db) -> Result<i32, DbError> {
    db.run("read the schema's version", async |c: &Client| {
        let recorded: bool = c
            .query_one("SELECT to_regclass('spsa.schema_version') IS NOT NULL", &[])
            .await?
            .get(0);
        if !recorded {
            return Ok(1);
        }
        let v: Option<i32> = c
            .query_one("SELECT max(version) FROM spsa.schema_version", &[])
            .await?
            .get(0);
        Ok(v.unwrap_or(1))
    })
    .await
}

/// Refuse a database whose schema this spsa does not read (it only reads
/// [`super::SCHEMA_VERSION`]): an older one until its owner migrates it, a newer one at all.
pub async fn check_schema_version(db: &mut Db) -> Result<()> {
    let v = schema_version(db).await?;
    let ours = super::SCHEMA_VERSION;
    if v < ours {
        return Err(UserError(format!(
            "database {}: its spsa schema is version {v}, from an older spsa; this one reads version {ours}. The run's owner migrates it by starting this spsa on it (`spsa run CONFIG --db URL --resume`, or `spsa prune --db URL --dry-run`), as the role that owns the schema",
            db.url()
        ))
        .into());
    }
    if v > ours {
        return Err(UserError(format!(
            "database {}: its spsa schema is version {v}, made by a newer spsa than this one (which reads version {ours}): update spsa on this machine",
            db.url()
        ))
        .into());
    }
    Ok(())
}

/// How a run is served, beyond its definition: set when it is created, and (the reference
/// speed and the share, when given) when it is resumed.
#[derive(Clone, Debug)]
pub struct Serving {
    /// Seconds a lease lives without a heartbeat.
    pub lease_seconds: f64,
    /// A clock run's reference engine speed.
    pub reference_nps: Option<f64>,
    /// Its throughput share among runs of its priority (None: 100, or unchanged on resume).
    pub throughput: Option<f64>,
    /// The live Elo curve's points, when the run measures one.
    pub track: Option<CurveShape>,
    /// The member or approver the run is made and found for, when that is not the caller
    /// (`spsa run --author ROLE`: the schema's owner only, which `spsa.author_for` checks).
    pub author: Option<String>,
}

/// How the database adds a run's curve points (see `spsa.track_results`): a point every
/// `interval` applied results and at the last, of `units` work rows (one per opponent) of
/// `pairs` pairs each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurveShape {
    pub interval: u64,
    /// The opponents, in slot order.
    pub against: Vec<String>,
    pub pairs: u32,
}

impl CurveShape {
    pub fn of(plan: &crate::spsa::track::TrackPlan, pairs_per_iteration: u32) -> CurveShape {
        CurveShape {
            interval: plan.interval(pairs_per_iteration),
            against: plan.against.iter().map(|a| a.name().to_string()).collect(),
            pairs: plan.pairs,
        }
    }

    /// The columns as the database keeps them (NULL interval: no curve).
    fn columns(shape: Option<&CurveShape>) -> (Option<i64>, i32, i32, Vec<String>) {
        match shape {
            Some(s) => (
                Some(s.interval as i64),
                s.against.len() as i32,
                s.pairs as i32,
                s.against.clone(),
            ),
            None => (None, 0, 0, Vec::new()),
        }
    }
}

/// Find or create the run named `name` as `mode` says; returns its id.
/// A resume whose variables file (`vars_path`) changed reshapes the run (see [`reshape`]).
pub async fn attach(
    db: &mut Db,
    name: &str,
    def: &RunDefinition,
    vars_path: &Path,
    mode: StartMode,
    serving: Serving,
) -> Result<i64> {
    let existing: Option<(i64, String, Option<String>)> = db
        .run("find the run", async |c: &Client| {
            let row = c
                .query_opt(
                    "SELECT id, state, pruned FROM spsa.find_run_as($1, $2)",
                    &[&name, &serving.author],
                )
                .await?;
            Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
        })
        .await?;
    match (mode, existing) {
        (StartMode::Resume, Some((id, state, Some(pruned)))) => Err(UserError(format!(
            "run {id} of {name} ({state}) was pruned on {pruned} (`spsa prune`): its results are gone, so it cannot be resumed; use --fresh to start a new run"
        ))
        .into()),
        (StartMode::Resume, Some((id, _, None))) => {
            let stored: serde_json::Value = db
                .run("read the run", async |c: &Client| {
                    Ok(c.query_one("SELECT spsa.run_definition($1)", &[&id])
                        .await?
                        .get(0))
                })
                .await?;
            let stored: RunDefinition =
                serde_json::from_value(stored).context("the stored run definition")?;
            if stored.schedule() != def.schedule() {
                return Err(UserError(format!(
                    "run {id} in the database was created with another schedule; use --fresh to start a new run"
                ))
                .into());
            }
            if stored.vars != def.vars {
                reshape(db, id, &def.variables(), vars_path).await?;
            }
            let (interval, units, pairs, against) = CurveShape::columns(serving.track.as_ref());
            let same_curve: bool = db
                .run("read the run's curve", async |c: &Client| {
                    Ok(c.query_one(
                        "SELECT track_interval IS NOT DISTINCT FROM $2 AND track_units = $3 AND track_pairs = $4
                                AND track_against = $5
                           FROM spsa.run_curve($1)",
                        &[&id, &interval, &units, &pairs, &against],
                    )
                    .await?
                    .get(0))
                })
                .await?;
            if !same_curve {
                return Err(UserError(format!(
                    "run {id} in the database was created with another [track] (its share, opponents or pairs, or none): its workers measure that one; use --fresh to start a new run"
                ))
                .into());
            }
            if serving.reference_nps.is_some() {
                db.run("store the reference speed", async |c: &Client| {
                    c.execute(
                        "UPDATE spsa.runs SET reference_nps = $2 WHERE id = $1",
                        &[&id, &serving.reference_nps],
                    )
                    .await
                })
                .await?;
            }
            if serving.throughput.is_some() {
                db.run("store the share", async |c: &Client| {
                    c.execute(
                        "SELECT spsa.set_share($1, NULL, $2)",
                        &[&id, &serving.throughput],
                    )
                    .await
                })
                .await?;
            }
            Ok(id)
        }
        (StartMode::Resume, None) => Err(UserError(format!(
            "no run of {name} in the database to resume; start it without --resume"
        ))
        .into()),
        (StartMode::New, Some((id, state, _))) => Err(UserError(format!(
            "the database holds run {id} of {name} ({state}); add --resume to continue it, or --fresh to start over"
        ))
        .into()),
        (StartMode::Fresh, Some((id, _, _))) => {
            db.run("stop the old run", async |c: &Client| {
                c.execute("SELECT spsa.stop($1)", &[&id]).await
            })
            .await?;
            create(db, name, def, serving).await
        }
        (_, None) => create(db, name, def, serving).await,
    }
}

/// Create the run and all its work rows in one transaction, its reference speed and share with
/// it (a worker that reads the run must never see it without the speed its clock is scaled to).
async fn create(db: &mut Db, name: &str, def: &RunDefinition, serving: Serving) -> Result<i64> {
    let vars = def.variables();
    let start: Vec<f64> = vars.iter().map(|v| v.start).collect();
    // The first iterations are handed out to the database now (the mirror hands out the rest as
    // results come); the step a_k/c_k·δ is all the report needs to apply a result (see the
    // module docs of `db`).
    let first = work_window(vars.len(), def.iterations).min(def.iterations);
    let iterations: Vec<i64> = (1..=first as i64).collect();
    let steps = steps_of(def, &iterations);
    let snapshots = snapshot_every(vars.len()) as i64;
    let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
    let lo: Vec<f64> = vars.iter().map(|v| v.min).collect();
    let hi: Vec<f64> = vars.iter().map(|v| v.max).collect();
    let definition = serde_json::to_value(def)?;
    let n_vars = vars.len() as i32;
    let pairs = def.pairs as i32;
    let total = def.iterations as i64;
    let engines: Vec<(String, String)> = def
        .engines
        .iter()
        .map(|e| (e.side.clone(), e.sha256.clone()))
        .chain(def.files.iter().map(|f| (f.key(), f.sha256.clone())))
        .collect();
    let id = db
        .run("create the run", async |c: &Client| {
            super::conn::in_transaction(c, async {
                let (id, _) = insert_run(
                    c,
                    &NewRow {
                        kind: "tune",
                        name,
                        definition: &definition,
                        names: &names,
                        lo: &lo,
                        hi: &hi,
                        start: &start,
                        total,
                        serving: &serving,
                        snapshot_every: snapshots,
                        engines: &engines,
                        sprt: None,
                        match_window: 0,
                    },
                )
                .await?;
                insert_work(c, id, 0, &iterations, &steps, n_vars, pairs).await?;
                Ok(id)
            })
            .await
        })
        .await?;
    Ok(id)
}

/// A run to create with `spsa.new_run_as` (one call for a tune and a match, the owner's and a
/// member's alike, in the caller's name or the one `serving.author` gives): its row's columns.
pub(super) struct NewRow<'a> {
    /// 'tune' or 'match'.
    pub kind: &'a str,
    pub name: &'a str,
    pub definition: &'a serde_json::Value,
    pub names: &'a [String],
    pub lo: &'a [f64],
    pub hi: &'a [f64],
    pub start: &'a [f64],
    pub total: i64,
    pub serving: &'a Serving,
    pub snapshot_every: i64,
    /// (side or file key, SHA-256) of what it plays, stored already.
    pub engines: &'a [(String, String)],
    /// A match's SPRT and its window of pairs.
    pub sprt: Option<Vec<f64>>,
    pub match_window: i32,
}

/// Create the run (as the caller, its author unless `serving.author` names another): its id,
/// and whether it waits for an approver (a member's that is not an approver's).
pub(super) async fn insert_run(
    c: &Client,
    row: &NewRow<'_>,
) -> Result<(i64, bool), tokio_postgres::Error> {
    let (interval, units, track_pairs, against) = CurveShape::columns(row.serving.track.as_ref());
    let (sides, shas): (Vec<String>, Vec<String>) = row.engines.iter().cloned().unzip();
    let got = c
        .query_one(
            "SELECT id, approval FROM spsa.new_run_as($21, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                                                      $13, $14, $15, $16, $17, $18, $19, $20)",
            &[&row.kind, &row.name, row.definition, &row.names, &row.lo, &row.hi, &row.start, &row.total,
              &row.serving.lease_seconds, &row.serving.reference_nps, &row.serving.throughput,
              &interval, &units, &track_pairs, &against, &row.snapshot_every, &sides, &shas,
              &row.sprt, &row.match_window, &row.serving.author],
        )
        .await?;
    let approval: String = got.get(1);
    Ok((got.get(0), approval == "waiting"))
}

/// How many iterations not yet done the owner keeps handed out (work rows with their steps):
/// as many as 32 MiB of step vectors hold, at least 64, all of a small run (8 variables: 524,288
/// iterations). The run goes on while its owner is down until these are played; at 10,000
/// variables that is 419 iterations. `SPSA_WORK_WINDOW=N` sets it (tests).
pub fn work_window(n_vars: usize, iterations: u64) -> u64 {
    if let Some(n) = std::env::var("SPSA_WORK_WINDOW")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&n| n > 0)
    {
        return n;
    }
    let budget = 32 * 1024 * 1024 / (8 * n_vars.max(1) as u64);
    budget.max(64).min(iterations.max(1))
}

/// Every how many results the database keeps θ (`spsa.snapshots`): about 128 bytes of
/// snapshot per result, so every result up to 16 variables, every 625th at 10,000.
pub fn snapshot_every(n_vars: usize) -> u64 {
    (8 * n_vars as u64).div_ceil(128).max(1)
}

/// The steps a_k/c_k·δ_k of iterations `ks` in the run's shape now, one vector after another
/// (δ drawn from each iteration's own stream, as the driver draws it).
fn steps_of(def: &RunDefinition, ks: &[i64]) -> Vec<f64> {
    let spsa = def.spsa();
    let mut steps = Vec::with_capacity(ks.len() * spsa.len());
    for &k in ks {
        let k = k as u64;
        let delta = spsa.draw_delta(&mut IterationRng::new(def.seed, k));
        steps.extend(step_vector(&spsa, k, &delta));
    }
    steps
}

/// Work rows per statement: about 16 MB of steps, at most 2,000 rows.
fn rows_per_statement(n_vars: i32) -> usize {
    (2_000_000 / n_vars.max(1) as usize).clamp(1, 2000)
}

/// Insert the work rows of iterations `ks` with their steps (in a transaction the caller began),
/// if run `id` is still in the shape they were computed in (`shape`: how many shapes came
/// before it, see `RunDefinition::earlier`) and is not over; an iteration already there is left
/// as it is. The run's row is held (shared) until the caller commits, so a reshape, which adds
/// a shape and changes the steps of the rows not done, comes before or after, not between.
async fn insert_work(
    c: &Client,
    id: i64,
    shape: i32,
    ks: &[i64],
    steps: &[f64],
    n_vars: i32,
    pairs: i32,
) -> Result<bool, tokio_postgres::Error> {
    // `spsa.hand_out` checks the caller (the run's author or the owner) and the shape, and
    // holds the run's row until the caller commits.
    let per = rows_per_statement(n_vars);
    for (ks, st) in ks.chunks(per).zip(steps.chunks(per * n_vars as usize)) {
        let current: bool = c
            .query_one(
                "SELECT spsa.hand_out($1, $2, $3, $4, $5, $6)",
                &[&id, &shape, &ks, &st, &n_vars, &pairs],
            )
            .await?
            .get(0);
        if !current {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Hand out run `id`'s iterations up to `through` (work rows with their steps, in the shape of
/// `def`, which must be the run's definition now): returns the last iteration handed out, or
/// `None` when the run's definition changed or the run is over (nothing inserted).
async fn hand_out(db: &mut Db, id: i64, def: &RunDefinition, through: u64) -> Result<Option<u64>> {
    let shape = def.earlier.len() as i32;
    let n_vars = def.vars.len() as i32;
    let pairs = def.pairs as i32;
    let last: i64 = db
        .run("read the work handed out", async |c: &Client| {
            Ok(c.query_one("SELECT spsa.handed_out($1)", &[&id])
                .await?
                .get(0))
        })
        .await?;
    let ks: Vec<i64> = (last + 1..=through as i64).collect();
    if ks.is_empty() {
        return Ok(Some(last.max(0) as u64));
    }
    let steps = steps_of(def, &ks);
    let current = db
        .run("hand out iterations", async |c: &Client| {
            c.batch_execute("BEGIN").await?;
            let done = insert_work(c, id, shape, &ks, &steps, n_vars, pairs).await;
            match &done {
                Ok(_) => c.batch_execute("COMMIT").await?,
                Err(_) => {
                    let _ = c.batch_execute("ROLLBACK").await;
                }
            }
            done
        })
        .await?;
    Ok(current.then_some(through))
}

/// Go on with the variables `file` (read from `vars_path`) in run `id`: rows added join, rows
/// dropped are held at their θ, a bound moved that still holds θ is taken, and what cannot be
/// honoured is refused with the row that asks for it (the rules of a local resume, in
/// [`Reshape`]), with nothing changed.
///
/// One transaction holds every work row not yet done, then the run's row (the order a report
/// takes them in, so no report or lease interleaves). A variable joins after the last
/// iteration any worker leased, so every iteration after it is still open and is played in
/// the new shape; one leased before plays on as it was drawn, without the added variables
/// (its step gives them none, and none to a dropped one). The definition gains the new shape
/// and keeps the old one with the results applied in it, for the owner's mirror; θ, its
/// bounds and the start values gain the added columns; every iteration not done gets its step
/// in the new shape, and every measurement of the curve not made gets the added variables at
/// their start values. Workers see the changed definition at their next listing of the runs.
async fn reshape(
    db: &mut Db,
    id: i64,
    file: &[crate::vars::Variable],
    vars_path: &Path,
) -> Result<()> {
    let outcome = db
        .run("change the run's variables", async |c: &Client| {
            c.batch_execute("BEGIN").await?;
            let done = reshape_within(c, id, file, vars_path).await;
            match &done {
                Ok(Ok(Some(_))) => c.batch_execute("COMMIT").await?,
                _ => {
                    let _ = c.batch_execute("ROLLBACK").await;
                }
            }
            done
        })
        .await??;
    if let Some(r) = outcome {
        let list = |names: &[String]| {
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !r.joining.is_empty() {
            eprintln!("run {id}: {} joined the run", list(&r.joining));
        }
        if !r.dropping.is_empty() {
            eprintln!(
                "run {id}: {} held at their θ from now on",
                list(&r.dropping)
            );
        }
    }
    Ok(())
}

/// [`reshape`]'s transaction, begun by the caller: the change made, `None` when the file
/// changes nothing, or the refusal (the caller rolls back).
async fn reshape_within(
    c: &Client,
    id: i64,
    file: &[crate::vars::Variable],
    vars_path: &Path,
) -> Result<Result<Option<Reshape>>, tokio_postgres::Error> {
    // Iterations first, then the curve's points (negative): only the iterations get steps.
    let todo: Vec<i64> = c
        .query(
            "SELECT iteration FROM spsa.work WHERE run_id = $1 AND state <> 'done' ORDER BY iteration FOR UPDATE",
            &[&id],
        )
        .await?
        .iter()
        .map(|r| r.get::<_, i64>(0))
        .filter(|&k| k > 0)
        .collect();
    let row = c
        .query_one(
            "SELECT definition, theta, applied,
                    coalesce((SELECT max(iteration) FROM spsa.work
                               WHERE run_id = $1 AND iteration > 0 AND attempts > 0), 0)
               FROM spsa.runs WHERE id = $1 FOR UPDATE",
            &[&id],
        )
        .await?;
    let stored: RunDefinition = match serde_json::from_value(row.get(0)) {
        Ok(d) => d,
        Err(e) => {
            return Ok(Err(
                anyhow::Error::from(e).context("the stored run definition")
            ));
        }
    };
    let theta: Vec<f64> = row.get(1);
    let applied: i64 = row.get(2);
    let after: i64 = row.get(3);
    let vars = stored.variables();
    let standing = Standing {
        run: format!("run {id} in the database"),
        vars: &vars,
        theta: &theta,
        held: &stored.parts.held,
        joined: &stored.parts.joined,
        after: after.max(0) as u64,
        extends: false,
    };
    let reshape = match Reshape::from(&standing, file, vars_path, stored.iterations) {
        Ok(Some(r)) => r,
        other => return Ok(other),
    };
    let mut def = stored.clone();
    def.earlier.push(super::Shape {
        until: applied.max(0) as u64,
        vars: stored.vars.clone(),
        parts: stored.parts.clone(),
    });
    def.vars = reshape
        .vars
        .iter()
        .map(super::VarDef::from_variable)
        .collect();
    def.parts = super::Parts {
        held: reshape.held.clone(),
        joined: reshape.joined.clone(),
    };
    let n = def.vars.len();
    for ks in todo.chunks(rows_per_statement(n as i32)) {
        let steps = steps_of(&def, ks);
        c.execute(
            "UPDATE spsa.work w SET step = ($3::float8[])[(t.i - 1) * $4::int + 1 : t.i * $4::int]
               FROM unnest($2::bigint[]) WITH ORDINALITY AS t(k, i)
              WHERE w.run_id = $1 AND w.iteration = t.k",
            &[&id, &ks, &steps, &(n as i32)],
        )
        .await?;
    }
    let names: Vec<String> = def.vars.iter().map(|v| v.name.clone()).collect();
    let lo: Vec<f64> = def.vars.iter().map(|v| v.min).collect();
    let hi: Vec<f64> = def.vars.iter().map(|v| v.max).collect();
    let start: Vec<f64> = def.vars.iter().map(|v| v.start).collect();
    // A point of the curve not yet measured plays the added variables at their start values.
    c.execute(
        "UPDATE spsa.work SET leased_theta = leased_theta || ($2::float8[])[coalesce(array_length(leased_theta, 1), 0) + 1 : $3::int]
          WHERE run_id = $1 AND iteration < 0 AND state <> 'done'",
        &[&id, &start, &(n as i32)],
    )
    .await?;
    let definition = match serde_json::to_value(&def) {
        Ok(v) => v,
        Err(e) => return Ok(Err(e.into())),
    };
    let change = format!(
        "variables: {} joined, {} held",
        reshape.joining.join(" "),
        reshape.dropping.join(" ")
    );
    c.execute(
        "INSERT INTO spsa.audit (run_id, actor, action, detail) VALUES ($1, session_user, 'modified', $2)",
        &[&id, &change],
    )
    .await?;
    c.execute(
        "UPDATE spsa.runs
            SET definition = $2, var_names = $3, lo = $4, hi = $5, start_theta = $6,
                theta = theta || ($6::float8[])[coalesce(array_length(theta, 1), 0) + 1 : $7::int],
                updated = now()
          WHERE id = $1",
        &[&id, &definition, &names, &lo, &hi, &start, &(n as i32)],
    )
    .await?;
    Ok(Ok(Some(reshape)))
}

/// a_k/c_k·δ_i per variable: what `Spsa::apply` multiplies by the signal (0 for a variable
/// held at iteration k, which `Spsa::apply` leaves as it is).
fn step_vector(spsa: &crate::spsa::Spsa, k: u64, delta: &[f64]) -> Vec<f64> {
    let f = spsa.factors(k);
    (0..spsa.len())
        .map(|i| {
            if !spsa.moves_at(i, f) {
                return 0.0;
            }
            let g = spsa.gains_at(i, f);
            g.a_k / g.c_k * delta[i]
        })
        .collect()
}

/// One measurement of the live Elo curve as the database recorded it.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Its place among the run's measurements (`track_results.seq`).
    pub seq: u64,
    /// The unit measured (see `TrackPlan::unit`).
    pub unit: u64,
    pub pentanomial: [u64; 5],
    pub records: String,
    pub worker: String,
}

/// Where a run stands in the database, as far as a crash cannot take it back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Durable {
    /// Results applied.
    pub applied: i64,
    /// Measurements of the curve recorded.
    pub track: i64,
    /// The run has finished (every iteration and point, or a stop rule).
    pub finished: bool,
    /// An approver rejected the run (a member's): it will never be played.
    pub rejected: bool,
}

/// One applied result as the database recorded it.
#[derive(Clone, Debug)]
pub struct Applied {
    pub seq: u64,
    pub iteration: u64,
    pub signal: f64,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub pentanomial: [u64; 5],
    pub faults: Vec<String>,
    pub records: String,
    /// Who reported it (qualified by its role).
    pub worker: String,
    /// θ after it: the mirror's own, once its checksum matched the database's
    /// (`results.theta_sum`).
    pub theta: Vec<f64>,
    /// The seed and the optimizer the mirror's driver applied it with (the run's shape then):
    /// with them a θ log replays it, as a local run's (`Session::log_result`).
    pub definition: (u64, std::sync::Arc<crate::spsa::Spsa>),
}

/// The owner's view of a shared run's results: a driver fed with the database's applied results
/// in their order, checking that the database's θ is the driver's, bit for bit. It writes no
/// file: the run envelope (`method::shared`) puts what it applies into the run's θ log, records
/// and checkpoint, as it does for a local run's results.
pub struct Mirror {
    pub run_id: i64,
    /// The run's definition as it now stands: the shape new iterations are handed out in.
    def: RunDefinition,
    /// Iterations not yet done kept handed out (see [`work_window`]).
    window: u64,
    /// The last iteration known handed out (0: not yet read).
    handed_out: u64,
    driver: Driver,
    /// The driver's optimizer (the shape in force), shared with the results it applies.
    spsa: std::sync::Arc<crate::spsa::Spsa>,
    /// The shapes still to come (a resume changed the variables), each with the results
    /// applied before it took effect, and every variable's start value.
    reshapes: std::collections::VecDeque<(u64, crate::spsa::Spsa, Vec<f64>)>,
    applied: u64,
    /// Results up to this seq already have their records in the files (a resume's checkpoint):
    /// their records are not fetched again.
    written_through: u64,
    /// The database's counts at the last pull.
    durable: Durable,
}

impl Mirror {
    /// Follow run `run_id` from its first result; the records of results up to
    /// `written_through` are in the local files already.
    pub fn new(run_id: i64, def: RunDefinition, written_through: u64) -> Mirror {
        let mut reshapes: std::collections::VecDeque<_> = def.shapes().into();
        let (_, spsa, start) = reshapes.pop_front().expect("a run has a shape");
        let shared = std::sync::Arc::new(spsa.clone());
        let mut driver = def.driver_of(spsa, start, Rounding::Continuous);
        // Every iteration is the database's to hand out (in order, a window ahead of the
        // results: see `Mirror::pull`).
        while driver.next_trial().is_some() {}
        Mirror {
            run_id,
            window: work_window(def.vars.len(), def.iterations),
            handed_out: 0,
            def,
            driver,
            spsa: shared,
            reshapes,
            applied: 0,
            written_through,
            durable: Durable::default(),
        }
    }

    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The database said the run finished, and every result it applied is applied here (the
    /// curve's measurements are the follower's to count: see [`Mirror::durable`]).
    pub fn is_finished(&self) -> bool {
        self.durable.finished && self.applied as i64 >= self.durable.applied
    }

    /// The database's counts at the last pull.
    pub fn durable(&self) -> Durable {
        self.durable
    }

    /// The driver's bookkeeping, for the checkpoint.
    pub fn driver_state(&self) -> crate::spsa::driver::DriverState {
        self.driver.state()
    }

    /// Fetch the results the database applied since the last call, in their order, each
    /// applied to the driver and checked; at most 5,000 a call. First the next iterations are
    /// handed out, so [`work_window`] of them stay not done ahead of the results.
    pub async fn pull(&mut self, db: &mut Db) -> Result<Vec<Applied>> {
        let (run, after) = (self.run_id, self.applied as i64);
        let written = self.written_through as i64;
        self.durable = durable_applied(db, run).await?;
        let durable = self.durable.applied;
        let through = (durable.max(0) as u64 + self.window).min(self.def.iterations);
        if !self.durable.finished && through > self.handed_out {
            match hand_out(db, run, &self.def, through).await? {
                Some(last) => self.handed_out = last,
                // Another process changed the run's variables (its owner, resumed elsewhere):
                // this one leaves the handing out to it.
                None => self.handed_out = self.def.iterations,
            }
        }
        if durable <= after {
            return Ok(Vec::new());
        }
        let rows = db
            .run("read results", async |c: &Client| {
                // Records already in the files are not fetched again.
                c.query(
                    "SELECT seq, iteration, signal, wins, draws, losses, pentanomial, faults,
                            records, theta_sum, worker
                       FROM spsa.run_results($1, $2, $3, $4)",
                    &[&run, &after, &written, &durable],
                )
                .await
            })
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let pentanomial = pentanomial(row.get(6));
            let theta_sum: i64 = row.get(9);
            let mut applied = Applied {
                seq: row.get::<_, i64>(0) as u64,
                iteration: row.get::<_, i64>(1) as u64,
                signal: row.get(2),
                wins: row.get::<_, i32>(3).max(0) as u32,
                draws: row.get::<_, i32>(4).max(0) as u32,
                losses: row.get::<_, i32>(5).max(0) as u32,
                pentanomial,
                faults: row.get(7),
                records: row.get(8),
                theta: Vec::new(),
                worker: row.get(10),
                definition: (self.def.seed, self.spsa.clone()),
            };
            self.apply(&mut applied, theta_sum as u64)?;
            out.push(applied);
        }
        Ok(out)
    }

    /// The curve's measurements after the first `after`, in their order, up to what the last
    /// [`Mirror::pull`] found durable; at most 1,000 a call.
    pub async fn pull_track(&self, db: &mut Db, after: u64) -> Result<Vec<Measured>> {
        let (run, after, durable) = (self.run_id, after as i64, self.durable.track);
        if durable <= after {
            return Ok(Vec::new());
        }
        let rows = db
            .run("read the curve's measurements", async |c: &Client| {
                c.query(
                    "SELECT seq, unit, pentanomial, records, worker
                       FROM spsa.run_measurements($1, $2, $3)",
                    &[&run, &after, &durable],
                )
                .await
            })
            .await?;
        Ok(rows
            .iter()
            .map(|row| Measured {
                seq: row.get::<_, i64>(0) as u64,
                unit: row.get::<_, i64>(1) as u64,
                pentanomial: pentanomial(row.get(2)),
                records: row.get(3),
                worker: row.get(4),
            })
            .collect())
    }

    /// Apply `a` to the driver and check the database's checksum of θ after it (`theta_sum`)
    /// against the driver's θ; `a.theta` becomes the driver's θ.
    fn apply(&mut self, a: &mut Applied, theta_sum: u64) -> Result<()> {
        if a.seq != self.applied + 1 {
            bail!(
                "run {}: result {} arrived after {} (the database skipped or repeated one)",
                self.run_id,
                a.seq,
                self.applied
            );
        }
        // A resume changed the variables after the results applied so far.
        while self
            .reshapes
            .front()
            .is_some_and(|(from, ..)| *from <= self.applied)
        {
            let (_, spsa, start) = self.reshapes.pop_front().expect("checked");
            self.spsa = std::sync::Arc::new(spsa.clone());
            self.driver.reshape(spsa, &start);
        }
        self.driver
            .apply(a.iteration, a.signal)
            .with_context(|| format!("run {}: result {}", self.run_id, a.seq))?;
        let ours = self.driver.theta();
        let sum = theta_checksum(ours);
        if sum != theta_sum {
            bail!(
                "run {}: after result {} (iteration {}) the database's θ (checksum {theta_sum:016x}) differs from the driver's (checksum {sum:016x}) {:?}",
                self.run_id,
                a.seq,
                a.iteration,
                ours
            );
        }
        a.theta = ours.to_vec();
        a.definition.1 = self.spsa.clone();
        self.applied = a.seq;
        Ok(())
    }
}

/// Pair counts as the database keeps them (int[5]), negative ones read as 0.
pub(super) fn pentanomial(counts: Vec<i32>) -> [u64; 5] {
    let mut out = [0u64; 5];
    for (slot, v) in out.iter_mut().zip(counts) {
        *slot = v.max(0) as u64;
    }
    out
}

/// A result's records (PGN games, game-log lines), each placed in one of this run's files. A
/// record under a name this run does not write is dropped with a warning (a worker cannot make
/// the owner write elsewhere), and so are undecodable records.
pub fn placed_records(run_id: i64, a: &Applied, destinations: &Destinations) -> Vec<Record> {
    let what = format!(
        "result {} (iteration {}, worker {})",
        a.seq, a.iteration, a.worker
    );
    place(run_id, &what, &a.records, destinations)
}

/// A measurement's records, placed as a result's are (see [`placed_records`]).
pub fn placed_measurement(run_id: i64, m: &Measured, destinations: &Destinations) -> Vec<Record> {
    let what = format!(
        "measurement {} (unit {}, worker {})",
        m.seq, m.unit, m.worker
    );
    place(run_id, &what, &m.records, destinations)
}

fn place(run_id: i64, what: &str, encoded: &str, destinations: &Destinations) -> Vec<Record> {
    let records = match records::decode(encoded) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("spsa: run {run_id} {what}: {e:#}; its records are dropped");
            return Vec::new();
        }
    };
    records
        .into_iter()
        .filter_map(|r| match destinations.place(&r.path) {
            Some(path) => Some(Record { path, text: r.text }),
            None => {
                tracing::warn!(
                    "run {run_id} {what}: a record for `{}` is not one of this run's files",
                    r.path.display()
                );
                None
            }
        })
        .collect()
}

/// A measurement for progress displays, from the counts the database recorded (the games'
/// order within the iteration is not kept).
pub fn measurement_of(a: &Applied) -> Measurement {
    let games = std::iter::repeat_n(GameScore::Win, a.wins as usize)
        .chain(std::iter::repeat_n(GameScore::Draw, a.draws as usize))
        .chain(std::iter::repeat_n(GameScore::Loss, a.losses as usize))
        .collect();
    let faults = a
        .faults
        .iter()
        .map(|f| {
            let (side, kind) = f.split_once(": ").unwrap_or(("", f));
            Fault {
                side: side.to_string(),
                kind: kind.to_string(),
            }
        })
        .collect();
    Measurement {
        games,
        faults,
        ..Default::default()
    }
}

/// How many results and measurements of run `run` the database has recorded, and whether it
/// finished, read so that a crash cannot take any of them back: a mirror applies nothing past
/// these counts.
pub async fn durable_applied(db: &mut Db, run: i64) -> Result<Durable> {
    // Reports commit asynchronously (see `spsa.report`): only results a crash cannot take
    // back are mirrored. The results applied when this transaction reads the count were
    // committed before it, so their commit records precede its own in the log, and its
    // synchronous commit flushes the log through them. PostgreSQL flushes at commit only
    // for a transaction that wrote to the log before its commit record (a transaction id
    // alone does not: measured on 15, the flush LSN stayed behind), hence the transactional
    // message, which writes a record and takes an id; any role may emit one.
    let durable = db
        .run("read the durable result count", async |c: &Client| {
            c.batch_execute("BEGIN; SET LOCAL synchronous_commit = on")
                .await?;
            let read = c
                .query_one(
                    "SELECT applied, track_reported, finished, approval = 'rejected',
                            pg_logical_emit_message(true, 'spsa', 'durable')
                       FROM spsa.run_progress($1)",
                    &[&run],
                )
                .await;
            match read {
                Ok(row) => {
                    c.batch_execute("COMMIT").await?;
                    Ok(Durable {
                        applied: row.get(0),
                        track: row.get(1),
                        finished: row.get(2),
                        rejected: row.get(3),
                    })
                }
                Err(e) => {
                    let _ = c.batch_execute("ROLLBACK").await;
                    Err(e)
                }
            }
        })
        .await?;
    Ok(durable)
}

/// End run `run` by its curve's stop rule: it finishes now, and its workers' reports after this
/// are refused (their games are lost, not applied twice). A run finished already stays so.
pub async fn finish_by_stop_rule(db: &mut Db, run: i64) -> Result<()> {
    db.run("finish the run by its stop rule", async |c: &Client| {
        c.execute(
            "UPDATE spsa.runs SET state = 'finished', updated = now()
              WHERE id = $1 AND state IN ('active', 'paused')",
            &[&run],
        )
        .await
    })
    .await?;
    Ok(())
}
