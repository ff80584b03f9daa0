//! `spsa run CONFIG --db URL`, the database's side: the run's definition, finding or creating it
//! ([`attach`]), and the run process's own worker. The run itself goes through the one run
//! envelope (`method::shared`), like a local run. Ctrl-C stops this process only: the run stays
//! active in the database, other workers carry on, and `--resume` re-attaches.

use std::path::Path;

use anyhow::{Context, Result};

use super::owner;
use super::worker::{self, WorkerOptions, WorkerSummary};
use super::{Db, RunDefinition, VarDef, engines};
use crate::config::Config;
use crate::engine::identity;
use crate::runtime::shutdown::Shutdown;
use crate::tuner::{StartMode, UserError};
use crate::vars::Variable;

/// Settings of a shared run beyond the config.
#[derive(Clone, Debug)]
pub struct SharedRun {
    pub url: String,
    /// Seconds a lease lives without a heartbeat before its work is handed to another worker.
    pub lease_seconds: f64,
    /// Play with the config's Concurrency in this process too (else only create and follow).
    pub play: bool,
    /// The engine speed a clock run's clock is meant for (else measured here at creation).
    pub reference_nps: Option<f64>,
    /// The run's throughput share among runs of its priority (`--throughput`, or the config's
    /// `throughput`; else 100 for a new run, unchanged for a resumed one).
    pub throughput: Option<f64>,
    /// `--author ROLE`: the run is made and found in this member's or approver's name (the
    /// schema's owner only: `spsa serve`'s hosted tunes).
    pub author: Option<String>,
}

/// The run's definition as stored in the database.
pub fn definition(
    config: &Config,
    vars: &[Variable],
    seed: u64,
    lease_seconds: f64,
) -> Result<RunDefinition> {
    let config_text = std::fs::read_to_string(&config.path)
        .with_context(|| format!("{}: cannot read config", config.path.display()))?;
    let book = stored_book(config.games.as_ref().and_then(|g| g.book.as_deref()))?;
    // Drawn as a local tune draws it, from the seed the workers get.
    let split = crate::source::games::recorded_split(config);
    Ok(RunDefinition {
        config_name: file_name(&config.path),
        config_text,
        book,
        holdout: split.map(|s| s.share),
        holdout_openings: split.and_then(|s| s.openings),
        vars: vars.iter().map(VarDef::from_variable).collect(),
        iterations: config.schedule.iterations,
        a: config.schedule.a,
        alpha: config.schedule.alpha,
        gamma: config.schedule.gamma,
        seed,
        pairs: config.pairs_per_iteration.max(1),
        simulate: config.simulate,
        draw_rate: config.draw_rate,
        lease_seconds,
        engines: Vec::new(),
        files: Vec::new(),
        parts: Default::default(),
        earlier: Vec::new(),
        match_def: None,
    })
}

/// A run's or a match's book as the database stores it: its file name and its whole text.
pub(crate) fn stored_book(path: Option<&Path>) -> Result<Option<(String, String)>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the book", path.display()))?;
    Ok(Some((file_name(path), text)))
}

/// The name a run's config or book is stored under: its file name.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into())
}

/// The engine speed a new clock run's clock is meant for: the owner's engine 1, measured
/// here (none, with a warning, when it reports no node counts).
pub async fn reference_speed(games: &crate::config::GamesConfig) -> Option<f64> {
    let setup = crate::arena::engine_setup("Engine1", &games.engine1);
    match crate::engine::bench::measure(setup.spec, &setup.fixed).await {
        Ok(speed) => {
            eprintln!(
                "the run's clock is meant for {:.0} nodes/s (engine 1 measured here; --reference-nps sets it)",
                speed.nps
            );
            Some(speed.nps)
        }
        Err(e) => {
            eprintln!(
                "warning: cannot measure engine 1's speed ({e}); workers play the clock unscaled"
            );
            None
        }
    }
}

/// The run process's own worker plays the owner's engine files (checked like any worker's).
fn own_engines(config: &Config) -> Vec<(String, std::path::PathBuf)> {
    let Some(g) = config.games.as_ref().filter(|_| !config.simulate) else {
        return Vec::new();
    };
    [("Engine1", &g.engine1), ("Engine2", &g.engine2)]
        .into_iter()
        // An engine built from source is built by this worker as by any other, from the run.
        .filter(|(_, e)| e.source.is_none())
        .filter_map(|(side, e)| Some((side.to_string(), identity::resolve(&e.command)?)))
        .collect()
}

/// A shared run found or created in the database, ready to follow.
pub struct Attached {
    pub db: Db,
    pub id: i64,
    /// The run's definition as stored (a resumed run keeps the one it was created with, seed
    /// included).
    pub def: RunDefinition,
}

/// Check a shared run's settings against its config before anything is started: a positions
/// run cannot be shared, and `--reference-nps` needs a clock.
pub fn check(config: &Config, shared: &SharedRun) -> Result<()> {
    super::refuse_positions(config)?;
    let timed = config.games.as_ref().is_some_and(|g| g.limits.is_timed());
    if shared.reference_nps.is_some() && (config.simulate || !timed) {
        return Err(UserError(format!(
            "--reference-nps: {} plays no clock (simulated, or nodes or depth per move), so there is no clock to scale",
            config.path.display()
        ))
        .into());
    }
    Ok(())
}

/// Find or create the run of `config` in the database as `mode` says: a new run's engines are
/// hashed and measured, and stored, before the run is; a resumed run keeps the engines it was
/// created with. Stops within a second when `stop` is requested, the database reachable or not.
pub async fn attach(
    config: &Config,
    vars: &[Variable],
    mode: StartMode,
    shared: &SharedRun,
    seed: u64,
    stop: &Shutdown,
) -> Result<Attached> {
    let timed = config.games.as_ref().is_some_and(|g| g.limits.is_timed());
    let mut def = definition(config, vars, seed, shared.lease_seconds)?;
    let games = config.games.as_ref().filter(|_| !config.simulate);
    // The files beside the engines first: one over the cap is refused at once.
    let files = match games {
        Some(g) if mode != StartMode::Resume => engines::run_files(g)?,
        _ => Vec::new(),
    };
    let measured = match games {
        Some(g) if mode != StartMode::Resume => {
            identity::measure_run_engines([("Engine1", &g.engine1), ("Engine2", &g.engine2)], vars)
                .await?
        }
        _ => Vec::new(),
    };
    def.engines = measured.iter().map(|m| m.engine.clone()).collect();
    def.files = files.iter().map(|(f, _)| f.clone()).collect();
    let reference_nps = match (shared.reference_nps, games) {
        (Some(nps), _) => Some(nps),
        (None, Some(g)) if timed && mode != StartMode::Resume => reference_speed(g).await,
        _ => None,
    };
    let name = std::fs::canonicalize(&config.path)
        .unwrap_or_else(|_| config.path.clone())
        .display()
        .to_string();

    let mut db = Db::new(&shared.url)?;
    db.stop_on(Some(stop));
    owner::install_schema(&mut db).await?;
    engines::store_artifacts(&mut db, &measured).await?;
    engines::store_files(&mut db, &files).await?;
    let serving = owner::Serving {
        lease_seconds: shared.lease_seconds,
        reference_nps,
        throughput: shared.throughput,
        track: config
            .track
            .as_ref()
            .map(|t| owner::CurveShape::of(t, config.pairs_per_iteration.max(1))),
        author: shared.author.clone(),
    };
    let id = owner::attach(&mut db, &name, &def, &config.variables, mode, serving).await?;
    let stored: serde_json::Value = db
        .run("read the run", async |c: &tokio_postgres::Client| {
            Ok(c.query_one("SELECT spsa.run_definition($1)", &[&id])
                .await?
                .get(0))
        })
        .await?;
    let def: RunDefinition = serde_json::from_value(stored)?;
    if shared.play {
        check_recipes(config, &def)?;
    }
    eprintln!("run {id} in database {}", db.url());
    let approval = super::admin::approval_of(&mut db, id).await?;
    if let Some(refusal) = approval.rejection(id) {
        return Err(refusal.into());
    }
    if approval.waits() {
        eprintln!("{}", super::admin::waits_line("run", id, &db));
    }
    Ok(Attached { db, id, def })
}

/// The run process's own worker builds only what its config says: a recorded recipe (a resumed
/// run's, read back from the database) whose repository, build command or binary is not the
/// config's is refused before anything is built.
fn check_recipes(config: &Config, def: &RunDefinition) -> Result<(), UserError> {
    let Some(g) = config.games.as_ref() else {
        return Ok(());
    };
    for e in &def.engines {
        let Some(r) = &e.source else {
            continue;
        };
        let engine = if e.side == "Engine1" {
            &g.engine1
        } else {
            &g.engine2
        };
        let same = engine
            .source
            .as_ref()
            .is_some_and(|s| s.git == r.git && s.build == r.build && s.binary == r.binary);
        if !same {
            return Err(UserError(format!(
                "{}: the run builds {} with `{}` ({}), not what {} says; this process builds only what its config says: serve the run with `spsa worker`, or start this config's own with --fresh",
                e.side,
                r.git,
                r.build,
                r.binary,
                config.path.display()
            )));
        }
    }
    Ok(())
}

/// The run process's own worker: serves run `id` with the config's Concurrency until the run
/// has nothing left to play or `stop` is requested (nothing, when the run is not played here).
pub async fn own_worker(
    config: &Config,
    shared: &SharedRun,
    id: i64,
    stop: &Shutdown,
) -> Result<WorkerSummary> {
    if !shared.play {
        return Ok(Default::default());
    }
    // A member's run plays once an approver approved it (the worker would find nothing to
    // lease before, and stop).
    let mut db = Db::new(&shared.url)?;
    db.stop_on(Some(stop));
    match super::admin::wait_for_approval(&mut db, id, stop).await {
        Ok(a) if a.approval == "approved" => {}
        Ok(_) => return Ok(Default::default()),
        Err(e) if super::DbError::is_stop(&e) => return Ok(Default::default()),
        Err(e) => return Err(e),
    }
    let opts = WorkerOptions {
        name: format!("run-{id}-{}", std::process::id()),
        concurrency: config.concurrency.max(1),
        engines: own_engines(config),
        only_run: Some(id),
        until_idle: true,
        nps: None,
        cache: crate::engine::build::cache_root().ok(),
    };
    worker::serve(&shared.url, opts, stop).await
}
