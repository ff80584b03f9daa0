//! `spsa run CONFIG [--resume|--fresh] [--seed N] [--concurrency N]`: a tuning run, on whatever
//! source the config names, to its end or until Ctrl-C / SIGTERM.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use rand::Rng;

use crate::config::{Config, ConfigError};
use crate::db::run::SharedRun;
use crate::method;
use crate::method::shared::SharedTune;
use crate::runtime::shutdown::Shutdown;
use crate::spsa::driver::Rounding;
use crate::tuner::checkpoint::RunState;
use crate::tuner::{RunFiles, RunPlan, StartMode};
use crate::vars;

#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    /// The config file: classic INI (.conf) or TOML (.toml).
    pub config: PathBuf,
    /// Continue the earlier run from its checkpoint.
    #[arg(long, conflicts_with = "fresh")]
    pub resume: bool,
    /// Start over; the earlier run's files are kept as numbered backups (.bak, .bak.1, …).
    #[arg(long)]
    pub fresh: bool,
    /// Seed the run for exact reproducibility (with Concurrency 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Iterations to run in all (overrides the config's Iterations). With --resume, more than
    /// the checkpoint's total extends the run: c_k and a_k go on along the curves of the N the
    /// run was planned with, so nothing already applied changes.
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
    /// Games in flight at once (overrides the config's Concurrency).
    #[arg(long, value_parser = super::concurrency_flag)]
    pub concurrency: Option<usize>,
    /// Append every line sent to and read from each engine to this file, with a timestamp (ms),
    /// the slot, the engine's name and the direction (overrides the config's
    /// `games.engine_log`).
    #[arg(long, value_name = "FILE", conflicts_with = "db")]
    pub engine_log: Option<PathBuf>,
    /// Share the run through this PostgreSQL database: workers anywhere can serve it.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// With --db: seconds a lease lives without a heartbeat before its work is handed on.
    #[arg(long, default_value_t = crate::db::LEASE_SECONDS, requires = "db")]
    pub lease_timeout: f64,
    /// With --db: create and follow the run, but play nothing in this process.
    #[arg(long, requires = "db")]
    pub no_play: bool,
    /// With --db, for a run with a clock: the engine speed (nodes per second, as the worker
    /// benchmark measures it) the clock is meant for; each worker scales its clock by this over
    /// its own speed, and refuses to play at under 1/20 or over 20 times it. Default: engine 1's
    /// speed measured on this machine when the run is created.
    #[arg(long, value_name = "NPS", requires = "db", value_parser = nps_flag)]
    pub reference_nps: Option<f64>,
    /// For a shared run: its throughput share among the active runs of its priority (above 0,
    /// at most 1000; default 100, or the config's `throughput`): workers give each run games in
    /// proportion to its share. Given with --resume, it replaces the run's share.
    #[arg(long, value_name = "P", value_parser = crate::config::check::throughput_text)]
    pub throughput: Option<f64>,
}

/// A speed in nodes per second: a positive number.
pub fn nps_flag(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok(n),
        _ => Err(format!(
            "must be a speed in nodes per second above 0, not `{text}`"
        )),
    }
}

impl RunArgs {
    pub fn mode(&self) -> StartMode {
        match (self.resume, self.fresh) {
            (true, _) => StartMode::Resume,
            (_, true) => StartMode::Fresh,
            _ => StartMode::New,
        }
    }

    /// The config overrides these flags carry.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            iterations: self.iterations,
            concurrency: self.concurrency,
            seed: self.seed,
            engine_log: self.engine_log.clone(),
            ..Overrides::default()
        }
    }
}

/// What the command line changes in a config.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub iterations: Option<u64>,
    pub concurrency: Option<usize>,
    pub seed: Option<u64>,
    /// Replace games by the Elo model whatever the config says.
    pub simulate: bool,
    /// Log the engines' lines here (`--engine-log`).
    pub engine_log: Option<PathBuf>,
}

/// The config at `path` as the flags override it.
pub fn load_config(path: &Path, flags: &Overrides) -> Result<Config> {
    let mut config = Config::load(path)?;
    if let Some(n) = flags.iterations {
        if n == 0 {
            return Err(ConfigError::InFile {
                path: path.to_path_buf(),
                message: "--iterations must be at least 1".into(),
            }
            .into());
        }
        config.schedule.iterations = n;
    }
    if let Some(c) = flags.concurrency {
        config.concurrency = c;
    }
    if flags.seed.is_some() {
        config.seed = flags.seed;
    }
    if flags.simulate {
        config.simulate = true;
    }
    if let Some(log) = &flags.engine_log {
        let games = config.games.as_mut().ok_or_else(|| ConfigError::InFile {
            path: path.to_path_buf(),
            message: format!(
                "--engine-log {}: the config names no engines to log",
                log.display()
            ),
        })?;
        games.engine_log = Some(log.clone());
    }
    Ok(config)
}

pub async fn command(args: RunArgs) -> Result<()> {
    let config = load_config(&args.config, &args.overrides())?;
    tune(&args, config, "run").await
}

/// Run (or resume) a tuning run of `config`, local or shared through the database the flags or
/// the config name (one envelope for both); `verb` is the command typed, for messages.
pub async fn tune(args: &RunArgs, mut config: Config, verb: &str) -> Result<()> {
    let shared = match args.db.as_ref().or(config.database.as_ref()) {
        Some(url) if verb == "run" => Some(SharedRun {
            url: url.clone(),
            lease_seconds: args.lease_timeout,
            play: !args.no_play,
            reference_nps: args.reference_nps,
            throughput: args.throughput.or(config.throughput),
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
        return Err(crate::config::ConfigError::InFile {
            path: config.path.clone(),
            message: "key `track`: a shared run's curve measures on the book's held-out part, which travels to the workers (a verify_book stays on this machine): give games.holdout above 0".into(),
        }
        .into());
    }
    if shared.is_none()
        && let Some(p) = args.throughput
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
    crate::db::engines::build_sources(&mut config).await?;
    let mode = args.mode();
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
    let mut method: Box<dyn method::Method> = match shared {
        Some(shared) => Box::new(SharedTune::new(&config, &vars, plan, shared, mode)?),
        None => method::for_config(&config, &vars, plan)?,
    };
    // Refuse a mismatched or unwanted start before any engine is started.
    let start = method::check(&*method, vars, files, mode)?;
    crate::tuner::set_aside_old_verification(&config, mode)?;
    let shutdown = Shutdown::on_signals();
    let db_flag = if args.db.is_some() { " --db URL" } else { "" };
    let resume = format!("spsa {verb} {}{db_flag} --resume", args.config.display());
    let resume_hint = format!(
        "checkpoint {}; continue with `{resume}`",
        config.checkpoint.display()
    );
    let end = method::run(&mut *method, start, &shutdown)
        .await
        .map_err(|e| {
            // Only a run that got as far as its checkpoint can be continued, and a refusal
            // (the user's to fix: a reshape refused with nothing changed) stopped nothing, so
            // it is said as it is, without the resume hint.
            if config.checkpoint.exists() && crate::cli::exit::exit_code(&e) != 2 {
                e.context(format!("run stopped; {resume_hint}"))
            } else {
                e
            }
        })?;
    method::close(&*method, &end, &config, &shutdown, &resume_hint, &resume).await
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
