//! The commands behind the command line: load the inputs, pick the match source, run the tuner,
//! print the results. `main.rs` only parses arguments and calls these.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use rand::Rng;

use crate::arena::{self, Arena, ArenaSettings, TuningSource};
use crate::config::{Config, ConfigError, GamesConfig};
use crate::engine::{EngineFault, OptionError};
use crate::game::{Book, BookError, BookOrder, Opening};
use crate::report::{ReportError, progress, summary};
use crate::simulate::Simulator;
use crate::source::MatchSource;
use crate::tuner::{Ending, RunFiles, StartMode, StartRefused, Tuner};
use crate::vars::{self, VarsError};

/// What `spsa run` and `spsa simulate` were asked to do.
#[derive(Clone, Debug, Default)]
pub struct RunRequest {
    pub config: PathBuf,
    pub mode: StartMode,
    pub seed: Option<u64>,
    pub iterations: Option<u64>,
    pub concurrency: Option<usize>,
    /// `spsa simulate`: use the model whatever the config says.
    pub force_simulate: bool,
}

/// Exit status for an error: 2 for input the user must fix, 1 for everything else.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    let user = err.chain().any(|e| {
        e.is::<ConfigError>()
            || e.is::<VarsError>()
            || e.is::<StartRefused>()
            || e.is::<ReportError>()
            || e.is::<BookError>()
            || e.is::<OptionError>()
            || e.is::<crate::matchrun::MatchInputError>()
            || e.is::<crate::positions::PositionsError>()
            || e.is::<crate::coefficients::CoefficientError>()
            || e.is::<crate::coefficients::objective::MappingError>()
            || e.is::<crate::positions::extract::ExtractError>()
            || matches!(
                e.downcast_ref::<EngineFault>(),
                Some(EngineFault::Startup(_))
            )
    });
    if user { 2 } else { 1 }
}

/// Load and override the config as the request says.
pub fn load_config(req: &RunRequest) -> Result<Config> {
    let mut config = Config::load(&req.config)?;
    if let Some(n) = req.iterations {
        if n == 0 {
            return Err(ConfigError::InFile {
                path: req.config.clone(),
                message: "--iterations must be at least 1".into(),
            }
            .into());
        }
        config.schedule.iterations = n;
    }
    if let Some(c) = req.concurrency {
        config.concurrency = c.max(1);
    }
    if req.seed.is_some() {
        config.seed = req.seed;
    }
    if req.force_simulate {
        config.simulate = true;
    }
    Ok(config)
}

/// Run (or resume) a tuning run to its end or until Ctrl-C / SIGTERM.
pub async fn run(req: RunRequest) -> Result<()> {
    let config = load_config(&req)?;
    let vars = vars::load(&config.variables)?;
    if let Some(p) = &config.positions
        && matches!(
            p.method,
            crate::config::positions::Method::Gradient | crate::config::positions::Method::Lbfgs
        )
    {
        let (resume, fresh) = (
            matches!(req.mode, StartMode::Resume),
            matches!(req.mode, StartMode::Fresh),
        );
        return crate::coefficients::run::command(&config, vars, resume, fresh).await;
    }
    let files = RunFiles {
        log: config.log.clone(),
        checkpoint: config.checkpoint.clone(),
        checkpoint_interval: config.checkpoint_every(),
    };
    // The seed is settled before anything starts: a resumed run keeps its own, so its opening
    // order is the same as before the interruption.
    let seed = match req.mode {
        StartMode::Resume if config.checkpoint.exists() => {
            crate::tuner::checkpoint::read(&config.checkpoint)?
                .state
                .seed()?
        }
        _ => config.seed.unwrap_or_else(|| rand::rng().next_u64()),
    };
    if config.simulate {
        let source = Simulator::new(&vars, config.draw_rate);
        return tune(&req, &config, vars, files, seed, &source).await;
    }
    let games = config.games.as_ref().ok_or_else(|| ConfigError::InFile {
        path: config.path.clone(),
        message: "no engines configured".into(),
    })?;
    let arena = start_arena(&config, games, seed, config.concurrency).await?;
    let source = TuningSource::new(arena, &vars, games.rounding).await?;
    tune(&req, &config, vars, files, seed, &source).await
}

/// Load the book and start the engine pairs of a config.
pub async fn start_arena(
    config: &Config,
    games: &GamesConfig,
    seed: u64,
    slots: usize,
) -> Result<Arena> {
    let book = match &games.book {
        Some(path) => Book::load(path, &arena::book_options(games, seed))?,
        None => Book::from_openings(vec![Opening::start_position()], BookOrder::Sequential, seed)
            .context("empty book")?,
    };
    let settings = ArenaSettings {
        game: arena::game_settings(games),
        game_log: config.game_log.clone(),
        pgn: games.pgn.clone(),
        max_faulty_pairs: 5,
        event: format!("spsa {}", config.path.display()),
    };
    let setups = [
        arena::engine_setup("Engine1", &games.engine1),
        arena::engine_setup("Engine2", &games.engine2),
    ];
    Arena::start(setups, slots, book, settings).await
}

async fn tune<M: MatchSource>(
    req: &RunRequest,
    config: &Config,
    vars: Vec<crate::vars::Variable>,
    files: RunFiles,
    seed: u64,
    source: &M,
) -> Result<()> {
    let mut tuner = Tuner::prepare(
        vars,
        config.schedule,
        files,
        config.concurrency,
        seed,
        req.mode,
    )?;
    if tuner.state().finished {
        eprintln!(
            "{}: the run had already finished",
            config.checkpoint.display()
        );
    } else {
        let mut progress = progress::for_terminal(Duration::from_secs(5));
        let ending = tuner.run(source, shutdown_signal(), &mut *progress).await;
        drop(progress);
        let resume_hint = format!(
            "checkpoint {}; continue with `spsa run {} --resume`",
            config.checkpoint.display(),
            req.config.display()
        );
        match ending {
            Ok(Ending::Interrupted) => eprintln!(
                "stopped after {} of {} iterations; {resume_hint}",
                tuner.state().applied,
                tuner.state().iterations,
            ),
            Ok(Ending::Finished) => {}
            Err(e) => return Err(e.context(format!("run stopped; {resume_hint}"))),
        }
    }
    let state = tuner.state();
    let decimals = if config.simulate { 2 } else { 0 };
    print!(
        "{}",
        summary::final_table(tuner.vars(), &state.start, &state.theta, decimals)
    );
    let c = &state.counts;
    if !config.simulate {
        println!(
            "games: +{} ={} -{} (θ+ view), pentanomial {:?}{}",
            c.wins,
            c.draws,
            c.losses,
            c.pentanomial,
            progress::faults_suffix(c)
        );
    }
    Ok(())
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => ctrl_c.await,
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}
