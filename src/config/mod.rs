//! The run configuration: the classic INI (`[Main]`/`[Engine]`, loaded unchanged) and a TOML form
//! with the same meaning and more settings. Both become one typed [`Config`]; relative paths are
//! resolved against the config file's folder, and every error names the file and line or key.

mod ini;
pub mod positions;
mod toml_form;

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::spsa::Schedule;
use crate::spsa::rounding::RoundingMode;

/// Everything a run needs to know, already validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The config file itself.
    pub path: PathBuf,
    /// Play simulated games (the quadratic Elo model) instead of real ones.
    pub simulate: bool,
    pub variables: PathBuf,
    /// The per-iteration θ log (CSV).
    pub log: PathBuf,
    /// The checkpoint file (a variables file with the run state in its comment header).
    pub checkpoint: PathBuf,
    /// The per-slot game log, with `$THREAD` still in it (see [`Config::game_log_for`]).
    pub game_log: Option<PathBuf>,
    pub schedule: Schedule,
    /// How many game pairs are in flight at once.
    pub concurrency: usize,
    pub seed: Option<u64>,
    /// How often a checkpoint is written while running; `None`: the default for the mode
    /// (see [`Config::checkpoint_every`]).
    pub checkpoint_interval: Option<Duration>,
    /// Probability that a simulated game is drawn.
    pub draw_rate: f64,
    /// Real-game settings; `None` only when `simulate` is set and no engines were given.
    pub games: Option<GamesConfig>,
    /// `objective = "positions"`: tune from labelled positions (`None`: by games).
    pub positions: Option<positions::PositionsConfig>,
}

/// How real games are played.
#[derive(Clone, Debug, PartialEq)]
pub struct GamesConfig {
    /// The θ+ side.
    pub engine1: EngineConfig,
    /// The θ− side.
    pub engine2: EngineConfig,
    pub book: Option<PathBuf>,
    /// Random (seeded) or file order.
    pub book_random: bool,
    /// For PGN books: play at most this many plies of each game.
    pub book_plies: Option<u32>,
    pub limits: LimitsConfig,
    pub adjudication: AdjudicationConfig,
    /// Declare a draw after this many plies.
    pub max_plies: Option<u32>,
    /// Write every game as PGN here.
    pub pgn: Option<PathBuf>,
    pub rounding: RoundingMode,
}

/// One engine: how to start it and the untuned options to set.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineConfig {
    pub command: PathBuf,
    pub args: Vec<String>,
    pub workdir: Option<PathBuf>,
    /// Options set once after the handshake (Hash, Threads, OwnBook, …), in file order.
    pub options: Vec<(String, String)>,
}

/// The search limits of each move.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LimitsConfig {
    pub base_time_ms: Option<u64>,
    pub inc_time_ms: Option<u64>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    pub movetime_ms: Option<u64>,
    /// Allowed overrun of the clock before a time forfeit.
    pub time_margin_ms: u64,
    /// How long a nodes/depth search may take before the engine is stopped as stalled.
    pub stall_timeout_ms: u64,
}

/// Score adjudication. A limit or move count of 0 disables that rule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AdjudicationConfig {
    pub draw_score_limit: i32,
    pub draw_move_limit: u32,
    /// Draw adjudication only from this full move number on.
    pub draw_min_move: u32,
    pub win_score_limit: i32,
    pub win_move_limit: u32,
    /// The safer form: both engines' reports must agree (cutechess/fastchess style).
    pub both_agree: bool,
}

/// A configuration problem, naming the file and the line or key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read config file: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    AtLine {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    InFile { path: PathBuf, message: String },
}

impl Config {
    /// Load a config file; `.toml` is the TOML form, anything else the classic INI.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let is_toml = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
        if is_toml {
            toml_form::parse(&text, path)
        } else {
            ini::parse(&text, path)
        }
    }

    /// Load a config for its engines and games only (`spsa match`). A TOML file may leave out
    /// the tuning keys (`variables`, `iterations`, `A`, `gamma`, `alpha`); the classic INI must
    /// be complete. The schedule and variables of the result are placeholders then.
    pub fn load_games(path: &Path) -> Result<Config, ConfigError> {
        let is_toml = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
        if !is_toml {
            return Config::load(path);
        }
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        toml_form::parse_games(&text, path)
    }

    /// How often to checkpoint: as configured, else every 5 s in simulation (a million updates
    /// a second) and after every pair with real games (a pair costs far more than an fsync, and
    /// an interrupted run then loses only the pairs in flight).
    pub fn checkpoint_every(&self) -> Duration {
        self.checkpoint_interval.unwrap_or(if self.simulate {
            Duration::from_secs(5)
        } else {
            Duration::ZERO
        })
    }

    /// The game log path for a worker: `$THREAD` replaced by its number.
    pub fn game_log_for(&self, worker: usize) -> Option<PathBuf> {
        self.game_log
            .as_ref()
            .map(|p| PathBuf::from(p.to_string_lossy().replace("$THREAD", &worker.to_string())))
    }
}

/// The checkpoint path that goes with a log: `logs/x.log` → `logs/x.checkpoint.var`.
pub fn default_checkpoint(log: &Path) -> PathBuf {
    let stem = log
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "spsa".into());
    log.with_file_name(format!("{stem}.checkpoint.var"))
}

/// The log used when a config names none: `conf/x.conf` → `conf/x.log`.
pub fn default_log(config: &Path) -> PathBuf {
    config.with_extension("log")
}

/// Resolve a path from the config against the config file's folder (`conf/../logs/x.log`
/// becomes `logs/x.log`, so messages show the path people expect).
pub(crate) fn resolve(config: &Path, value: &str) -> PathBuf {
    let p = Path::new(value);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    let mut out = config.parent().unwrap_or(Path::new("")).to_path_buf();
    for part in p.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Resolve an input file. Classic configs were written with paths relative to the directory the
/// tool ran in, so when the file is not found beside the config but is found from the current
/// directory, that one is used.
pub(crate) fn resolve_input(config: &Path, value: &str) -> PathBuf {
    let beside = resolve(config, value);
    if !beside.exists() && Path::new(value).exists() {
        PathBuf::from(value)
    } else {
        beside
    }
}

/// Resolve an engine command: a bare name is looked up on PATH at spawn time, anything with a
/// folder in it is a path.
pub(crate) fn resolve_command(config: &Path, value: &str) -> PathBuf {
    if value.contains('/') {
        resolve_input(config, value)
    } else {
        PathBuf::from(value)
    }
}

/// Shared value checks: each returns the message to attach to the file/line or key.
pub(crate) mod check {
    pub fn iterations(v: u64) -> Result<u64, String> {
        if v == 0 {
            Err("must be at least 1".into())
        } else {
            Ok(v)
        }
    }

    pub fn non_negative(v: f64) -> Result<f64, String> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(format!("must be a number >= 0, not {v}"))
        }
    }

    pub fn concurrency(v: u64) -> Result<usize, String> {
        if v == 0 || v > 1024 {
            Err(format!("must be between 1 and 1024, not {v}"))
        } else {
            Ok(v as usize)
        }
    }

    pub fn probability(v: f64) -> Result<f64, String> {
        if (0.0..1.0).contains(&v) {
            Ok(v)
        } else {
            Err(format!("must be in [0, 1), not {v}"))
        }
    }
}

#[cfg(test)]
mod tests;
