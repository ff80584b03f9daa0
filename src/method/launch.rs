//! A run's set-up, from a loaded config to its end: which envelope (local, or shared through
//! the database the flags or the config name), the files and engines checked, engines built
//! from source, the seed and the held-out openings settled (a resumed run keeps its own), then
//! [`super::check`], [`super::run`] and [`super::close`]. `spsa run` and `spsa simulate` each
//! turn their flags into one [`Launch`] and call [`tune`].

use std::path::PathBuf;

use anyhow::Result;
use rand::Rng;

use crate::config::{Config, ConfigError};
use crate::db::run::SharedRun;
use crate::runtime::shutdown::Shutdown;
use crate::spsa::driver::Rounding;
use crate::tuner::checkpoint::RunState;
use crate::tuner::{RunFiles, RunPlan, StartMode};
use crate::vars;

use super::shared::SharedTune;

/// How a run is started, as its command's flags say.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The command typed (`run`, `simulate`), for messages; only `run` shares a run.
    pub verb: &'static str,
    /// The config file as typed, for the resume hint.
    pub config: PathBuf,
    pub mode: StartMode,
    /// `--db URL`: share the run through this database (else the config's `database`, if any).
    pub db: Option<String>,
    /// Seconds a lease lives without a heartbeat.
    pub lease_seconds: f64,
    /// Play iterations in this process too (not `--no-play`).
    pub play: bool,
    pub reference_nps: Option<f64>,
    /// `--throughput`: only a shared run has a share.
    pub throughput: Option<f64>,
    /// `--author ROLE`: a shared run made and found in that member's name (the schema's owner
    /// only).
    pub author: Option<String>,
    /// The exit policy's answer (`cli::exit`): whether an error is the user's to fix. A
    /// refusal stopped nothing, so it is said without the resume hint.
    pub users_to_fix: fn(&anyhow::Error) -> bool,
}

/// Run (or resume) a tuning run of `config`, local or shared through the database the launch or
/// the config name (one envelope for both).
pub async fn tune(mut config: Config, launch: &Launch) -> Result<()> {
    let shared = match launch.db.as_ref().or(config.database.as_ref()) {
        Some(url) if launch.verb == "run" => Some(SharedRun {
            url: url.clone(),
            lease_seconds: launch.lease_seconds,
            play: launch.play,
            reference_nps: launch.reference_nps,
            throughput: launch.throughput.or(config.throughput),
            author: launch.author.clone(),
        }),
        _ => None,
    };
    // A shared run's workers get the book, whose held-out part the curve measures on; a
    // separate verify_book stays on this machine.
    if shared.is_some()
        && config.track.is_some()
        && let Some(g) = config.games.as_ref().filter(|_| !config.simulate)
        && g.holdout <= 0.0
    {
        return Err(ConfigError::InFile {
            path: config.path.clone(),
            message: "key `track`: a shared run's curve measures on the book's held-out part, which travels to the workers (a verify_book stays on this machine): give games.holdout above 0".into(),
        }
        .into());
    }
    if shared.is_none()
        && let Some(p) = launch.throughput
    {
        return Err(crate::tuner::UserError(format!(
            "--throughput {p}: {} is not a shared run (no --db, and no `database` in the config), so there is nothing to share",
            config.path.display()
        ))
        .into());
    }
    let vars = vars::load(&config.variables)?;
    config.check_engine_files()?;
    config.check_outputs()?;
    crate::engine::build::build_sources(&mut config).await?;
    let mode = launch.mode;
    // The seed and the held-out share are settled before anything starts: a resumed run keeps
    // its own, so its opening order and its split are the same as before the interruption.
    let resumed = match mode {
        StartMode::Resume if config.checkpoint.exists() => {
            Some(crate::tuner::checkpoint::read(&config.checkpoint)?.state)
        }
        _ => None,
    };
    let seed = match &resumed {
        Some(state) => state.seed()?,
        None => config.seed.unwrap_or_else(|| rand::rng().next_u64()),
    };
    settle_openings(&mut config, resumed.as_ref(), seed)?;
    let rounding = match &config.games {
        Some(g) if !config.simulate => Rounding::Integer(g.rounding),
        _ => Rounding::Continuous,
    };
    let plan = RunPlan {
        schedule: config.schedule,
        rounding,
        pairs: config.pairs_per_iteration,
        seed,
        concurrency: config.concurrency,
        max_faulty_trials: 5,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plays_here = shared.as_ref().is_none_or(|s| s.play);
    if !config.simulate && plays_here && config.concurrency > cores {
        eprintln!(
            "warning: Concurrency {} exceeds this machine's {cores} cores: engines will share cores, and games on a clock may be lost on time",
            config.concurrency
        );
    }
    let files = RunFiles {
        log: config.log.clone(),
        checkpoint: config.checkpoint.clone(),
        checkpoint_interval: config.checkpoint_every(),
        outputs: Vec::new(),
    };
    let mut method: Box<dyn super::Method> = match shared {
        Some(shared) => Box::new(SharedTune::new(&config, &vars, plan, shared, mode)?),
        None => super::for_config(&config, &vars, plan)?,
    };
    // Refuse a mismatched or unwanted start before any engine is started.
    let start = super::check(&*method, vars, files, mode)?;
    crate::tuner::verification::set_aside(&config.verify_record(), mode)?;
    let shutdown = Shutdown::on_signals();
    let db_flag = if launch.db.is_some() { " --db URL" } else { "" };
    let resume = format!(
        "spsa {} {}{db_flag} --resume",
        launch.verb,
        launch.config.display()
    );
    let resume_hint = format!(
        "checkpoint {}; continue with `{resume}`",
        config.checkpoint.display()
    );
    let end = super::run(&mut *method, start, &shutdown)
        .await
        .map_err(|e| {
            // Only a run that got as far as its checkpoint can be continued, and a refusal
            // (the user's to fix: a reshape refused with nothing changed) stopped nothing, so
            // it is said as it is, without the resume hint.
            if config.checkpoint.exists() && !(launch.users_to_fix)(&e) {
                e.context(format!("run stopped; {resume_hint}"))
            } else {
                e
            }
        })?;
    super::close(&*method, &end, &config, &shutdown, &resume_hint, &resume).await
}

/// Most times a tune at fixed depth or nodes may play each opening before it is warned: there a
/// game is nearly a function of the values and the opening, so more replays let the tune fit
/// the openings rather than the engine.
pub const REPLAYS_WARNED: f64 = 3.0;

/// The held-out split a tune of games plays by, checked before anything starts: a resumed run
/// keeps its checkpoint's share (none recorded: a checkpoint from before held-out openings,
/// which goes on over the whole book) and refuses a book that changed size; a new one takes the
/// config's. The book must split, a `verify_book` must exist, and a tune that would replay its
/// openings too often is warned.
fn settle_openings(config: &mut Config, resumed: Option<&RunState>, seed: u64) -> Result<()> {
    let path = config.path.clone();
    let total_pairs = config
        .schedule
        .iterations
        .saturating_mul(u64::from(config.pairs_per_iteration));
    let Some(games) = config.games.as_mut() else {
        return Ok(());
    };
    if config.simulate || config.positions.is_some() {
        return Ok(());
    }
    if let Some(vb) = &games.verify_book
        && std::fs::metadata(vb).is_err()
    {
        return Err(ConfigError::InFile {
            path,
            message: format!("key `games.verify_book`: {}: book not found", vb.display()),
        }
        .into());
    }
    match resumed.map(|s| s.holdout) {
        Some(Some(share)) => {
            games.holdout = share;
            // A split tune stays split even if a verify_book was added since.
            if share > 0.0 {
                games.verify_book = None;
            }
        }
        Some(None) if games.book.is_some() => {
            games.holdout = 0.0;
            eprintln!(
                "note: the checkpoint records no held-out openings (a run from before they existed): the tune goes on over the whole book, and its verification plays those openings too unless given `spsa verify --book FILE`"
            );
        }
        Some(None) => games.holdout = 0.0,
        None => {}
    }
    let Some(book_path) = &games.book else {
        return Ok(());
    };
    if std::fs::metadata(book_path).is_err() {
        return Err(ConfigError::InFile {
            path,
            message: format!("{}: book not found", book_path.display()),
        }
        .into());
    }
    if let Some(state) = resumed
        && games.holdout > 0.0
    {
        let options = crate::arena::book_options(games, seed);
        crate::game::Book::load(book_path, &options)?.check_split_size(state.holdout_openings)?;
    }
    let book = crate::source::games::tuning_book(games, seed)?;
    let limit = match (games.limits.depth, games.limits.nodes) {
        (Some(d), _) => format!("depth {d}"),
        (None, Some(n)) => format!("{n} nodes"),
        _ => return Ok(()),
    };
    if let Some(warning) = replay_warning(total_pairs, book.len(), &limit) {
        eprintln!("{warning} ({})", book_path.display());
    }
    Ok(())
}

/// The warning for a tune at a fixed `limit` whose `pairs` replay each of its `openings` more
/// than [`REPLAYS_WARNED`] times, or `None`.
pub fn replay_warning(pairs: u64, openings: usize, limit: &str) -> Option<String> {
    let per_opening = pairs as f64 / openings.max(1) as f64;
    (per_opening > REPLAYS_WARNED).then(|| {
        format!(
            "warning: {pairs} pairs over {openings} tuning openings play each opening about {per_opening:.1} times (more than {REPLAYS_WARNED}) at fixed {limit}, where a replayed opening replays nearly the same game: the tune can fit these openings rather than the engine; use a larger book (openings/balanced_8ply_large.epd has 5000) or fewer pairs"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_beyond_three_per_opening_are_warned_with_the_counts() {
        assert_eq!(replay_warning(720, 240, "depth 6"), None);
        let w = replay_warning(1500, 240, "depth 6").unwrap();
        assert!(
            w.starts_with(
                "warning: 1500 pairs over 240 tuning openings play each opening about 6.2 times (more than 3) at fixed depth 6"
            ),
            "{w}"
        );
        assert!(
            replay_warning(4, 1, "100 nodes")
                .unwrap()
                .contains("about 4.0 times")
        );
    }
}
