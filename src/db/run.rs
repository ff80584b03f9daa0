//! `spsa run CONFIG --db URL`: create (or re-attach to) the shared run, take part as a worker
//! with the config's Concurrency, and mirror the run into the local θ log and checkpoint until
//! every iteration is applied. Ctrl-C stops this process only: the run stays active in the
//! database, other workers carry on, and `--resume` re-attaches.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rand::Rng;

use super::owner::{self, Mirror, MirrorFiles};
use super::records::Destinations;
use super::worker::{self, WorkerOptions};
use super::{Db, RunDefinition, VarDef, engines};
use crate::config::Config;
use crate::config::vars::{self, Variable};
use crate::engine::identity;
use crate::report::{progress, summary};
use crate::runtime::shutdown::Shutdown;
use crate::tuner::{StartMode, UserError};

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
    let book = match config.games.as_ref().and_then(|g| g.book.as_ref()) {
        Some(path) => Some((
            file_name(path),
            std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the book", path.display()))?,
        )),
        None => None,
    };
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
    })
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into())
}

/// The engine speed a new clock run's clock is meant for: the owner's engine 1, measured
/// here (none, with a warning, when it reports no node counts).
async fn reference_speed(games: &crate::config::GamesConfig) -> Option<f64> {
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
        .filter_map(|(side, e)| Some((side.to_string(), identity::resolve(&e.command)?)))
        .collect()
}

/// Run (or resume) a shared run to its end or until Ctrl-C / SIGTERM; true when every
/// iteration is applied (the caller then plays the config's `[verify]`, as after a local run).
pub async fn run(config: &Config, mode: StartMode, shared: &SharedRun) -> Result<bool> {
    super::refuse_positions(config)?;
    let timed = config.games.as_ref().is_some_and(|g| g.limits.is_timed());
    if shared.reference_nps.is_some() && (config.simulate || !timed) {
        return Err(UserError(format!(
            "--reference-nps: {} plays no clock (simulated, or nodes or depth per move), so there is no clock to scale",
            config.path.display()
        ))
        .into());
    }
    let vars = vars::load(&config.variables)?;
    config.check_outputs()?;
    let records = Destinations::of(config);
    // Local files follow the local rules: a new run never overwrites an earlier one's.
    let found = config.log.exists() || config.checkpoint.exists();
    match mode {
        StartMode::New if found => {
            return Err(UserError(format!(
                "{} or {} exists from an earlier run; add --resume to continue it, or --fresh to start over",
                config.log.display(),
                config.checkpoint.display()
            ))
            .into());
        }
        StartMode::Fresh => {
            let all = [config.log.clone(), config.checkpoint.clone()]
                .into_iter()
                .chain(records.paths());
            for path in all.filter(|p| p.exists()) {
                let bak = crate::tuner::backup_name(&path);
                std::fs::rename(&path, &bak).with_context(|| {
                    format!("{}: cannot move aside to {}", path.display(), bak.display())
                })?;
            }
        }
        _ => {}
    }
    let seed = config.seed.unwrap_or_else(|| rand::rng().next_u64());
    let mut def = definition(config, &vars, seed, shared.lease_seconds)?;
    // A new run's engines are hashed and measured before anything is stored; a resumed run
    // keeps the engines it was created with.
    let games = config.games.as_ref().filter(|_| !config.simulate);
    let measured = match games {
        Some(g) if mode != StartMode::Resume => {
            identity::measure_run_engines([("Engine1", &g.engine1), ("Engine2", &g.engine2)], &vars)
                .await?
        }
        _ => Vec::new(),
    };
    def.engines = measured.iter().map(|m| m.engine.clone()).collect();
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
    // Ctrl-C and SIGTERM stop this process within a second, the database reachable or not.
    let signals = Shutdown::on_signals();
    db.stop_on(Some(&signals));
    owner::install_schema(&mut db).await?;
    engines::store_artifacts(&mut db, &measured).await?;
    let id = owner::attach(
        &mut db,
        &name,
        &def,
        mode,
        shared.lease_seconds,
        reference_nps,
    )
    .await?;
    crate::tuner::set_aside_old_verification(config, mode)?;
    // A resumed run keeps the definition (seed included) it was created with.
    let stored: serde_json::Value = db
        .run("read the run", async |c: &tokio_postgres::Client| {
            Ok(
                c.query_one("SELECT definition FROM spsa.runs WHERE id = $1", &[&id])
                    .await?
                    .get(0),
            )
        })
        .await?;
    let def: RunDefinition = serde_json::from_value(stored)?;
    eprintln!("run {id} in database {}", db.url());

    let files = MirrorFiles {
        log: config.log.clone(),
        checkpoint: config.checkpoint.clone(),
        records,
    };
    let mut mirror = Mirror::new(id, def, &files, mode)?;
    let stop = Shutdown::new();
    let own_worker = async {
        if !shared.play {
            return Ok(Default::default());
        }
        let opts = WorkerOptions {
            name: format!("run-{id}-{}", std::process::id()),
            concurrency: config.concurrency.max(1),
            engines: own_engines(config),
            only_run: Some(id),
            until_idle: true,
            nps: None,
            cache: engines::cache_root().ok(),
        };
        worker::serve(&shared.url, opts, &stop).await
    };
    let follow = async {
        let mut progress = progress::for_terminal(Duration::from_secs(5));
        let mut last_save = Instant::now();
        let every = config.checkpoint_every();
        let signal = signals.wait();
        tokio::pin!(signal);
        let interrupted = loop {
            let n = tokio::select! {
                biased;
                _ = &mut signal => break true,
                n = mirror.pull(&mut db, &mut *progress) => n?,
            };
            if mirror.is_finished() {
                break false;
            }
            if last_save.elapsed() >= every {
                mirror.save()?;
                last_save = Instant::now();
            }
            if n < 5000 {
                tokio::select! {
                    biased;
                    _ = &mut signal => break true,
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
            }
        };
        stop.request();
        mirror.save()?;
        anyhow::Ok(interrupted)
    };
    let (worked, followed) = tokio::join!(own_worker, follow);
    let interrupted = followed?;
    if let Err(e) = worked {
        eprintln!("spsa: this process's worker stopped: {e:#}");
    }
    let state = mirror.state();
    if interrupted {
        eprintln!(
            "stopped following run {id} after {} of {} iterations; other workers carry on; re-attach with `spsa run {} --db URL --resume`",
            state.applied,
            state.iterations,
            config.path.display()
        );
    }
    let decimals = if config.simulate { 2 } else { 0 };
    crate::out!(
        "{}",
        summary::final_table(mirror.vars(), &state.start, &state.theta, decimals)
    )?;
    if !config.simulate && config.positions.is_none() {
        crate::out!("{}", summary::games_line(&state.counts))?;
    }
    Ok(!interrupted && mirror.is_finished())
}
