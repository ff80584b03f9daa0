//! The run's owner: installs the schema, creates the run (one work row per iteration, with the
//! driver's step vector), and follows the applied results through its own driver ([`Mirror`]),
//! checking that the database's θ is the driver's, bit for bit. The run envelope writes them
//! to the local files.

use anyhow::{Context, Result, bail};
use tokio_postgres::Client;

use super::records::{self, Destinations};
use super::{Db, DbError, RunDefinition};
use crate::source::{Fault, GameScore, Measurement, Record};
use crate::spsa::driver::{Driver, Rounding};
use crate::tuner::{StartMode, UserError};

/// Install (or upgrade) the schema; safe to run from several owners at once.
pub async fn install_schema(db: &mut Db) -> Result<(), DbError> {
    db.run("install the spsa schema", async |c: &Client| {
        c.batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock(2117321); {} COMMIT;",
            super::SCHEMA
        ))
        .await
    })
    .await
}

/// How a run is served, beyond its definition: set when it is created, and (the reference
/// speed and the share, when given) when it is resumed.
#[derive(Clone, Copy, Debug)]
pub struct Serving {
    /// Seconds a lease lives without a heartbeat.
    pub lease_seconds: f64,
    /// A clock run's reference engine speed.
    pub reference_nps: Option<f64>,
    /// Its throughput share among runs of its priority (None: 100, or unchanged on resume).
    pub throughput: Option<f64>,
}

/// Find or create the run named `name` as `mode` says; returns its id.
pub async fn attach(
    db: &mut Db,
    name: &str,
    def: &RunDefinition,
    mode: StartMode,
    serving: Serving,
) -> Result<i64> {
    let existing: Option<(i64, String, Option<String>)> = db
        .run("find the run", async |c: &Client| {
            let row = c
                .query_opt(
                    "SELECT id, state, to_char(pruned, 'YYYY-MM-DD HH24:MI TZ') FROM spsa.runs WHERE name = $1 ORDER BY id DESC LIMIT 1",
                    &[&name],
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
                    Ok(c.query_one("SELECT definition FROM spsa.runs WHERE id = $1", &[&id])
                        .await?
                        .get(0))
                })
                .await?;
            let stored: RunDefinition =
                serde_json::from_value(stored).context("the stored run definition")?;
            if stored.vars != def.vars || stored.schedule() != def.schedule() {
                return Err(UserError(format!(
                    "run {id} in the database was created with other variables or another schedule; use --fresh to start a new run"
                ))
                .into());
            }
            if serving.reference_nps.is_some() || serving.throughput.is_some() {
                db.run("store the reference speed and share", async |c: &Client| {
                    c.execute(
                        "UPDATE spsa.runs SET reference_nps = coalesce($2, reference_nps),
                                              throughput = coalesce($3, throughput)
                          WHERE id = $1",
                        &[&id, &serving.reference_nps, &serving.throughput],
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
                c.execute(
                    "UPDATE spsa.runs SET state = 'stopped' WHERE id = $1 AND state IN ('active', 'paused')",
                    &[&id],
                )
                .await
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
    let mut driver = def.driver_at(start.clone(), Rounding::Continuous);
    // Every iteration is handed out to the database now; the step a_k/c_k·δ is all the report
    // needs to apply a result (see the module docs of `db`).
    let mut iterations = Vec::with_capacity(def.iterations as usize);
    let mut steps = Vec::with_capacity(def.iterations as usize * vars.len());
    while let Some(trial) = driver.next_trial() {
        iterations.push(trial.iteration as i64);
        steps.extend(step_vector(&driver, trial.iteration, &trial.delta));
    }
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
            c.batch_execute("BEGIN").await?;
            let done = insert_run(
                c,
                name,
                &definition,
                &names,
                &lo,
                &hi,
                &start,
                total,
                serving,
                &iterations,
                &steps,
                n_vars,
                pairs,
                &engines,
            )
            .await;
            if done.is_err() {
                let _ = c.batch_execute("ROLLBACK").await;
            }
            done
        })
        .await?;
    Ok(id)
}

#[allow(clippy::too_many_arguments)]
async fn insert_run(
    c: &Client,
    name: &str,
    definition: &serde_json::Value,
    names: &[String],
    lo: &[f64],
    hi: &[f64],
    start: &[f64],
    total: i64,
    serving: Serving,
    iterations: &[i64],
    steps: &[f64],
    n_vars: i32,
    pairs: i32,
    engines: &[(String, String)],
) -> Result<i64, tokio_postgres::Error> {
    {
        {
            let id: i64 = c
                .query_one(
                    "INSERT INTO spsa.runs (name, definition, var_names, lo, hi, start_theta, theta, iterations, lease_seconds, reference_nps, throughput)
                     VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, coalesce($10::float8, 100)) RETURNING id",
                    &[&name, definition, &names, &lo, &hi, &start, &total, &serving.lease_seconds, &serving.reference_nps, &serving.throughput],
                )
                .await?
                .get(0);
            for (ks, st) in iterations
                .chunks(2000)
                .zip(steps.chunks(2000 * n_vars as usize))
            {
                c.execute(
                    "INSERT INTO spsa.work (run_id, iteration, step, pairs)
                     SELECT $1, k, ($3::float8[])[(i - 1) * $4::int + 1 : i * $4::int], $5
                       FROM unnest($2::bigint[]) WITH ORDINALITY AS t(k, i)",
                    &[&id, &ks, &st, &n_vars, &pairs],
                )
                .await?;
            }
            for (side, sha256) in engines {
                c.execute(
                    "INSERT INTO spsa.run_engines (run_id, side, sha256) VALUES ($1, $2, $3)",
                    &[&id, side, sha256],
                )
                .await?;
            }
            c.batch_execute("COMMIT").await?;
            Ok(id)
        }
    }
}

/// a_k/c_k·δ_i per variable: what `Spsa::apply` multiplies by the signal.
fn step_vector(driver: &Driver, k: u64, delta: &[f64]) -> Vec<f64> {
    let spsa = driver.spsa();
    (0..spsa.len())
        .map(|i| {
            let g = spsa.gains(i, k);
            g.a_k / g.c_k * delta[i]
        })
        .collect()
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
    pub theta: Vec<f64>,
}

/// The owner's view of a shared run's results: a driver fed with the database's applied results
/// in their order, checking that the database's θ is the driver's, bit for bit. It writes no
/// file: the run envelope (`method::shared`) puts what it applies into the run's θ log, records
/// and checkpoint, as it does for a local run's results.
pub struct Mirror {
    pub run_id: i64,
    def: RunDefinition,
    driver: Driver,
    applied: u64,
    /// Results up to this seq already have their records in the files (a resume's checkpoint):
    /// their records are not fetched again.
    written_through: u64,
}

impl Mirror {
    /// Follow run `run_id` from its first result; the records of results up to
    /// `written_through` are in the local files already.
    pub fn new(run_id: i64, def: RunDefinition, written_through: u64) -> Mirror {
        let start: Vec<f64> = def.variables().iter().map(|v| v.start).collect();
        let mut driver = def.driver_at(start, Rounding::Continuous);
        // Every iteration was handed out to the database when the run was created.
        while driver.next_trial().is_some() {}
        Mirror {
            run_id,
            def,
            driver,
            applied: 0,
            written_through,
        }
    }

    pub fn applied(&self) -> u64 {
        self.applied
    }

    pub fn is_finished(&self) -> bool {
        self.applied >= self.def.iterations
    }

    /// The driver's bookkeeping, for the checkpoint.
    pub fn driver_state(&self) -> crate::spsa::driver::DriverState {
        self.driver.state()
    }

    /// Fetch the results the database applied since the last call, in their order, each
    /// applied to the driver and checked; at most 5,000 a call.
    pub async fn pull(&mut self, db: &mut Db) -> Result<Vec<Applied>> {
        let (run, after) = (self.run_id, self.applied as i64);
        let written = self.written_through as i64;
        let durable = durable_applied(db, run).await?;
        if durable <= after {
            return Ok(Vec::new());
        }
        let rows = db
            .run("read results", async |c: &Client| {
                // Records already in the files are not fetched again.
                c.query(
                    "SELECT seq, iteration, signal, wins, draws, losses, pentanomial, faults,
                            CASE WHEN seq > $3 THEN records ELSE '' END, theta, worker
                       FROM spsa.results WHERE run_id = $1 AND seq > $2 AND seq <= $4
                      ORDER BY seq LIMIT 5000",
                    &[&run, &after, &written, &durable],
                )
                .await
            })
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let penta: Vec<i32> = row.get(6);
            let mut pentanomial = [0u64; 5];
            for (slot, v) in pentanomial.iter_mut().zip(penta) {
                *slot = v.max(0) as u64;
            }
            let applied = Applied {
                seq: row.get::<_, i64>(0) as u64,
                iteration: row.get::<_, i64>(1) as u64,
                signal: row.get(2),
                wins: row.get::<_, i32>(3).max(0) as u32,
                draws: row.get::<_, i32>(4).max(0) as u32,
                losses: row.get::<_, i32>(5).max(0) as u32,
                pentanomial,
                faults: row.get(7),
                records: row.get(8),
                theta: row.get(9),
                worker: row.get(10),
            };
            self.apply(&applied)?;
            out.push(applied);
        }
        Ok(out)
    }

    fn apply(&mut self, a: &Applied) -> Result<()> {
        if a.seq != self.applied + 1 {
            bail!(
                "run {}: result {} arrived after {} (the database skipped or repeated one)",
                self.run_id,
                a.seq,
                self.applied
            );
        }
        self.driver
            .apply(a.iteration, a.signal)
            .with_context(|| format!("run {}: result {}", self.run_id, a.seq))?;
        let ours = self.driver.theta();
        if ours.len() != a.theta.len()
            || ours
                .iter()
                .zip(&a.theta)
                .any(|(x, y)| x.to_bits() != y.to_bits())
        {
            bail!(
                "run {}: after result {} (iteration {}) the database's θ {:?} differs from the driver's {:?}",
                self.run_id,
                a.seq,
                a.iteration,
                a.theta,
                ours
            );
        }
        self.applied = a.seq;
        Ok(())
    }
}

/// A result's records (PGN games, game-log lines), each placed in one of this run's files. A
/// record under a name this run does not write is dropped with a warning (a worker cannot make
/// the owner write elsewhere), and so are undecodable records.
pub fn placed_records(run_id: i64, a: &Applied, destinations: &Destinations) -> Vec<Record> {
    let records = match records::decode(&a.records) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "spsa: run {run_id} result {} (iteration {}, worker {}): {e:#}; its records are dropped",
                a.seq, a.iteration, a.worker
            );
            return Vec::new();
        }
    };
    records
        .into_iter()
        .filter_map(|r| match destinations.place(&r.path) {
            Some(path) => Some(Record { path, text: r.text }),
            None => {
                tracing::warn!(
                    "run {run_id} result {}: a record for `{}` is not one of this run's files",
                    a.seq,
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

/// How many results of run `run` the database has applied, read so that a crash cannot take
/// any of them back: a mirror applies no result past this count.
pub async fn durable_applied(db: &mut Db, run: i64) -> Result<i64> {
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
                    "SELECT applied, pg_logical_emit_message(true, 'spsa', 'durable')
                       FROM spsa.runs WHERE id = $1",
                    &[&run],
                )
                .await;
            match read {
                Ok(row) => {
                    c.batch_execute("COMMIT").await?;
                    Ok(row.get::<_, i64>(0))
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
