//! A run's engines on this worker: each side placed (the worker's own build, the run's stored
//! engine fetched into the cache, or the config's path), checked against the run's hash and
//! search signature (refused, and recorded where `spsa status` and the page read it, when it
//! differs), and a clock scaled to this machine's speed.

use std::path::PathBuf;

use anyhow::{Context, Result};
use tokio_postgres::Client;

use super::{Db, RunDefinition, WorkerOptions, engines};
use crate::engine::bench::Signature;
use crate::engine::identity::{self, EngineRefusal};

/// Every `--engine` name must be one an active run plays (its engine's file name, or
/// Engine1 / Engine2): a misspelt name would otherwise leave the worker fetching instead.
/// Runs from before engines travelled with runs say nothing of their names and pass.
pub(super) fn check_engine_names(
    defs: impl Iterator<Item = serde_json::Value>,
    given: &[(String, PathBuf)],
) -> Result<(), crate::error::UserError> {
    if given.is_empty() {
        return Ok(());
    }
    let mut used: Vec<String> = Vec::new();
    for def in defs {
        let Ok(def) = serde_json::from_value::<RunDefinition>(def) else {
            continue;
        };
        if def.simulate {
            continue;
        }
        if def.engines.is_empty() {
            return Ok(());
        }
        for e in def.engines {
            for name in [e.side, e.file] {
                if !used.contains(&name) {
                    used.push(name);
                }
            }
        }
    }
    if used.is_empty() {
        return Ok(());
    }
    match given.iter().find(|(name, _)| !used.contains(name)) {
        Some((name, path)) => Err(crate::error::UserError(format!(
            "--engine {name}={}: no active run plays an engine named `{name}` (they play: {})",
            path.display(),
            used.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Put each side's engine in place: the worker's own build (`--engine`), else the run's stored
/// engine fetched into the cache, else (a run created before engines travelled with runs) the
/// config's path. Then check what will play against the run's hash and signature, and record
/// it (or the refusal) where `spsa status` and the page read it.
pub(super) async fn place_engines(
    db: &mut Db,
    def: &RunDefinition,
    opts: &WorkerOptions,
    id: i64,
    games: &mut crate::config::GamesConfig,
) -> Result<()> {
    // Each side's check: its engine's hash, whether it is this worker's own build, and the
    // signature measured here or why the side is refused.
    type Check = (String, bool, String, Result<Signature, EngineRefusal>);
    let mut checks: Vec<Check> = Vec::new();
    let mut own_build = [false, false];
    // The last engine built from source here, and its outcome.
    let mut built: Option<(crate::engine::build::Recipe, Result<PathBuf, EngineRefusal>)> = None;
    for (i, (side, engine)) in [
        ("Engine1", &mut games.engine1),
        ("Engine2", &mut games.engine2),
    ]
    .into_iter()
    .enumerate()
    {
        let file = engine
            .command
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stored = def.engines.iter().find(|e| e.side == side);
        let own = opts.engines.iter().find(|(name, _)| {
            *name == file || name == side || stored.is_some_and(|e| e.file == *name)
        });
        own_build[i] = own.is_some();
        match (own, stored) {
            (Some((_, path)), _) => {
                engine.command = path.clone();
                engine.workdir = None;
            }
            (None, Some(e)) if e.source.is_some() => {
                // Built here from the run's commit: this worker's own build, as status says.
                own_build[i] = true;
                // Engine 2 built from engine 1's recipe is built (or refused) once.
                let done = built.as_ref().filter(|(r, _)| e.source.as_ref() == Some(r));
                let result = match done {
                    Some((_, Ok(path))) => {
                        point_at(engine, e, path.clone());
                        Ok(())
                    }
                    Some((_, Err(refusal))) => Err(refusal.for_side(side)),
                    None => build_from_source(opts, id, e, engine).await,
                };
                if let Some(recipe) = &e.source {
                    let path = match &result {
                        Ok(()) => Ok(engine.command.clone()),
                        Err(refusal) => Err(refusal.clone()),
                    };
                    built = Some((recipe.clone(), path));
                }
                if let Err(refusal) = result {
                    checks.push((side.into(), true, String::new(), Err(refusal)));
                }
            }
            (None, Some(e)) => {
                let fetched = match &opts.cache {
                    Some(root) => engines::fetch(db, root, e).await,
                    None => Err(EngineRefusal::Artifact {
                        side: side.into(),
                        message: "no engine cache on this machine; pass --engine".into(),
                    }),
                };
                match fetched {
                    Ok(path) => {
                        engine.command = path;
                        engine.workdir = None;
                    }
                    Err(refusal) => {
                        checks.push((side.into(), false, e.sha256.clone(), Err(refusal)))
                    }
                }
            }
            (None, None) if identity::resolve(&engine.command).is_none() => {
                anyhow::bail!(
                    "{side} `{file}` is not at {} on this machine; pass --engine {file}=PATH",
                    engine.command.display()
                );
            }
            (None, None) => {}
        }
    }
    // The files the engines read through an option: fetched, and the option pointed at the copy
    // (before the signature is measured, which reads them). A file that cannot be had refuses
    // its side as a wrong engine does.
    for f in &def.files {
        let engine = match f.side.as_str() {
            "Engine1" => &mut games.engine1,
            _ => &mut games.engine2,
        };
        let label = format!("file {}", f.option);
        let stored = engines::Stored {
            side: &f.side,
            what: &label,
            sha256: &f.sha256,
            file: &f.file,
            executable: false,
        };
        let fetched = match &opts.cache {
            Some(root) => engines::fetch_stored(db, root, &stored).await,
            None => Err(EngineRefusal::Artifact {
                side: f.side.clone(),
                message: format!("{label}: no cache on this machine to fetch it into"),
            }),
        };
        match fetched {
            Ok(path) => {
                let value = path.display().to_string();
                match engine.options.iter_mut().find(|(o, _)| *o == f.option) {
                    Some(o) => o.1 = value,
                    None => engine.options.push((f.option.clone(), value)),
                }
            }
            Err(refusal) if !checks.iter().any(|c| c.0 == f.side) => {
                let own = own_build[usize::from(f.side != "Engine1")];
                checks.push((f.side.clone(), own, f.sha256.clone(), Err(refusal)));
            }
            Err(_) => {}
        }
    }
    let vars = def.variables();
    for (i, (side, engine)) in [("Engine1", &games.engine1), ("Engine2", &games.engine2)]
        .into_iter()
        .enumerate()
    {
        let Some(e) = def.engines.iter().find(|e| e.side == side) else {
            continue;
        };
        if checks.iter().any(|c| c.0 == side) {
            continue;
        }
        let (sha, _) = identity::sha256_file(&engine.command)
            .with_context(|| format!("{side} {}", engine.command.display()))?;
        // Engine 2 configured as engine 1, on the same file, is checked once.
        let first = checks.first().filter(|c| {
            i == 1
                && games.engine1 == games.engine2
                && c.2 == sha
                && def
                    .engines
                    .first()
                    .is_some_and(|f| f.signature == e.signature)
        });
        let verdict = match first.map(|c| &c.3) {
            Some(Ok(sig)) => Ok(sig.clone()),
            Some(Err(refusal)) => Err(refusal.for_side(side)),
            None => match identity::verify(e, engine, &vars).await {
                Ok(v) => v,
                Err(err) => Err(EngineRefusal::Artifact {
                    side: side.into(),
                    message: format!("cannot measure its search signature: {err:#}"),
                }),
            },
        };
        checks.push((side.into(), own_build[i], sha, verdict));
    }
    let mut refusals = Vec::new();
    for (side, own, sha, verdict) in &checks {
        let (signature, refused) = match verdict {
            Ok(sig) => (sig.to_string(), None),
            Err(r) => {
                refusals.push(r.to_string());
                let here = match r {
                    EngineRefusal::Signature { here, .. } => here.to_string(),
                    _ => String::new(),
                };
                (here, Some(r.to_string()))
            }
        };
        let recorded = db
            .run("record the engine check", async |c: &Client| {
                c.execute(
                    "SELECT spsa.engine_checked($1, $2, $3, $4, $5, $6, $7)",
                    &[&opts.name, &id, side, own, sha, &signature, &refused],
                )
                .await
            })
            .await;
        if let Err(e) = recorded {
            tracing::warn!("{e}");
        }
    }
    if !refusals.is_empty() {
        anyhow::bail!("{}", refusals.join("; "));
    }
    Ok(())
}

/// A run's engine built from its source on this machine (`engine::build`: fetched and built
/// once per commit into the cache, reused after), and the side pointed at it; a repository,
/// commit or build that fails refuses the side, with the build's last lines.
async fn build_from_source(
    opts: &WorkerOptions,
    id: i64,
    e: &identity::RunEngine,
    engine: &mut crate::config::EngineConfig,
) -> Result<(), EngineRefusal> {
    let Some(recipe) = &e.source else {
        return Ok(());
    };
    let refuse = |message: String| EngineRefusal::Artifact {
        side: e.side.clone(),
        message,
    };
    let root = opts
        .cache
        .as_ref()
        .ok_or_else(|| refuse("no cache on this machine to build the engine's source in".into()))?
        .join("source");
    let built = crate::engine::build::obtain(&root, recipe)
        .await
        .map_err(|err| refuse(format!("cannot build it from source: {err}")))?;
    if built.recipe.commit != recipe.commit {
        return Err(refuse(format!(
            "the run's commit {} resolved to {} here",
            recipe.commit, built.recipe.commit
        )));
    }
    eprintln!(
        "spsa worker: run {id}: {} from {} at {} ({})",
        e.side,
        recipe.git,
        recipe.commit,
        built.cost()
    );
    point_at(engine, e, built.binary);
    Ok(())
}

/// Point a side at its engine built from the run's recipe (the commit its games name).
fn point_at(engine: &mut crate::config::EngineConfig, e: &identity::RunEngine, binary: PathBuf) {
    engine.command = binary;
    engine.workdir = None;
    if let (Some(s), Some(recipe)) = (engine.source.as_mut(), &e.source) {
        s.git = recipe.git.clone();
        s.commit = recipe.commit.clone();
    }
}

/// A run with a clock: this machine's engine speed (measured, or `--nps`) against the run's
/// reference (stored by its creator, else the first worker's), and the clock scaled by their
/// ratio, so a slow machine plays the engine its clock was meant for. An engine whose speed
/// cannot be measured plays the clock as it is.
pub(super) async fn scale_clock(
    db: &mut Db,
    opts: &WorkerOptions,
    id: i64,
    games: &mut crate::config::GamesConfig,
) -> Result<()> {
    let nps = match opts.nps {
        Some(nps) => nps,
        None => {
            let setup = crate::arena::engine_setup("Engine1", &games.engine1);
            match crate::engine::bench::measure(setup.spec, &setup.fixed).await {
                Ok(speed) => speed.nps,
                Err(e) => {
                    eprintln!(
                        "spsa worker: run {id}: cannot measure the engine's speed ({e}); its clock is not scaled"
                    );
                    return Ok(());
                }
            }
        }
    };
    let reference: Option<f64> = db
        .run("read the run's reference speed", async |c: &Client| {
            Ok(
                c.query_one("SELECT spsa.reference_nps($1, $2)", &[&id, &nps])
                    .await?
                    .get(0),
            )
        })
        .await?;
    let Some(reference) = reference else {
        eprintln!(
            "spsa worker: run {id}: its owner set no reference speed; the clock is not scaled"
        );
        return Ok(());
    };
    let (lo, hi) = crate::engine::bench::PLAUSIBLE_SPEED;
    if !(nps >= reference * lo && nps <= reference * hi) {
        anyhow::bail!(
            "the engine searches {nps:.0} nodes/s here, outside {lo}× to {hi}× the run's reference {reference:.0} nodes/s (another engine, or a broken measurement)"
        );
    }
    let scale = crate::engine::bench::clock_scale(reference, nps);
    let before = crate::arena::time_control(&games.limits).describe();
    games.limits.scale_time(scale);
    let after = crate::arena::time_control(&games.limits).describe();
    db.run("record the clock scale", async |c: &Client| {
        c.execute(
            "SELECT spsa.clock_scaled($1, $2, $3, $4)",
            &[&opts.name, &id, &nps, &scale],
        )
        .await
    })
    .await?;
    eprintln!(
        "spsa worker: run {id}: engine at {nps:.0} nodes/s here, the run's reference {reference:.0}: clock {before} × {scale:.2} = {after}"
    );
    Ok(())
}
