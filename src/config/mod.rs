//! The run configuration: the classic INI (`[Main]`/`[Engine]`, loaded unchanged) and a TOML form
//! with the same meaning and more settings. Both become one typed [`Config`]; relative paths are
//! resolved against the config file's folder, and every error names the file and line or key.

pub mod from_engine;
mod ini;
pub mod positions;
mod toml_form;

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::spsa::Schedule;
use crate::spsa::rounding::RoundingMode;

/// What the command line changes in a config ([`Config::load_with`]).
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
    /// How many games (parts of trials) are in flight at once.
    pub concurrency: usize,
    /// Game pairs per iteration: one δ, B pairs on different openings, one update with their
    /// summed result (TOML `pairs_per_iteration`; the classic INI always plays 1).
    pub pairs_per_iteration: u32,
    pub seed: Option<u64>,
    /// How often a checkpoint is written while running; `None`: the default for the mode
    /// (see [`Config::checkpoint_every`]).
    pub checkpoint_interval: Option<Duration>,
    /// Probability that a simulated game is drawn (`[simulation] draw_rate`).
    pub draw_rate: f64,
    /// `[simulation] pentanomial`: a simulated pair's points at equal strength (checked: five
    /// counts, some below 1 point and some above); replaces the draw rate.
    pub pentanomial: Option<[f64; 5]>,
    /// Real-game settings; `None` only when `simulate` is set and no engines were given.
    pub games: Option<GamesConfig>,
    /// `objective = "positions"`: tune from labelled positions (`None`: by games).
    pub positions: Option<positions::PositionsConfig>,
    /// `database = "URL"` (TOML): share the run through PostgreSQL, as `spsa run --db URL`.
    pub database: Option<String>,
    /// `throughput = P` (TOML): a shared run's share of the workers among runs of its priority.
    pub throughput: Option<f64>,
    /// Where each engine option was set (TOML only), so that a value an engine refuses can be
    /// reported at its line ([`Config::option_error`]).
    pub option_origins: Vec<OptionOrigin>,
    /// `[verify]` or `[[verify]]` (TOML): the match, or the ladder of matches, `spsa run` plays
    /// once the tune has finished, in order, stopping at the first failed step. Empty: none.
    pub verify: Vec<VerifyConfig>,
    /// `[track]` (TOML): the live Elo curve measured while the run tunes.
    pub track: Option<crate::spsa::track::TrackPlan>,
}

/// One step of `[verify]`: after the last iteration, `spsa run` plays the tuned values against
/// the start (or the engine's own defaults), prints the verdict with the summary and records it
/// beside the θ log, so that a tune ends with a tested claim rather than a number. A `[verify]`
/// table is one step; an array of tables, `[[verify]]`, is a ladder of steps played in order
/// (docs/tuning.md, "The confirmation ladder").
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyConfig {
    /// Pairs to play; with `sprt`, the most to play.
    pub pairs: Option<u64>,
    /// `elo0,elo1[,alpha,beta]`, as `spsa match --sprt` takes it (already checked).
    pub sprt: Option<String>,
    pub against: Against,
    /// The step's search limit: the tune's own, or a clock, nodes or depth of its own.
    pub limit: VerifyLimit,
    /// A step of a fixed number of pairs (no SPRT) fails when its 95% interval lies wholly
    /// below this Elo (`fail_below`, default 0: the tuned values shown worse).
    pub fail_below: f64,
}

/// The search limit of a verification step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VerifyLimit {
    /// The tune's own limit (`[games]`).
    Tune,
    /// A clock per side: base and increment in ms (`base_time_ms`, `inc_time_ms`).
    Clock(u64, u64),
    Nodes(u64),
    Depth(u32),
}

impl VerifyConfig {
    /// The step in words, for its header and its place in the verification record:
    /// `SPRT [0.5, 2.5] at 60000+600 ms against the start`.
    pub fn describe(&self) -> String {
        let test = match (&self.sprt, self.pairs) {
            (Some(s), Some(p)) => format!("SPRT [{s}] (at most {p} pairs)"),
            (Some(s), None) => format!("SPRT [{s}]"),
            (None, p) => format!(
                "{} pairs (fails when the Elo interval lies below {})",
                p.unwrap_or(100),
                self.fail_below
            ),
        };
        let limit = match self.limit {
            VerifyLimit::Tune => "the tune's limit".to_string(),
            VerifyLimit::Clock(b, i) => format!("{b}+{i} ms"),
            VerifyLimit::Nodes(n) => format!("{n} nodes"),
            VerifyLimit::Depth(d) => format!("depth {d}"),
        };
        format!("{test} at {limit} against the {}", self.against.name())
    }
}

/// What the tuned values are verified (and the live curve measured) against.
pub use crate::spsa::track::Against;

/// The place in the config file that set one engine option.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionOrigin {
    /// 1 for the θ+ engine (`engine1`), 2 for the θ− engine.
    pub side: usize,
    /// The table the key is in: `engine2`, or `engine1` when engine 2 copies engine 1.
    pub table: String,
    pub name: String,
    pub line: usize,
}

/// How real games are played.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// Standard chess, Chess960 (and DFRC), or decided by the book (`games.variant`).
    pub variant: crate::game::Variant,
    /// The share of the book held out of tuning for verification (`games.holdout`, in [0, 1);
    /// 0: no split). The classic INI takes the default.
    pub holdout: f64,
    /// A separate verification book (`games.verify_book`): the tune plays all of `book` and
    /// verification all of this one.
    pub verify_book: Option<PathBuf>,
    pub limits: LimitsConfig,
    pub adjudication: AdjudicationConfig,
    /// Declare a draw after this many plies.
    pub max_plies: Option<u32>,
    /// Write every game as PGN here.
    pub pgn: Option<PathBuf>,
    /// Log every line to and from the engines here (`games.engine_log`; `--engine-log`).
    pub engine_log: Option<PathBuf>,
    /// Give each concurrency slot and its engines cores of their own when the slots fill the
    /// machine's cores exactly (`games.bind_cores`, default true; `--no-bind-cores`).
    pub bind_cores: bool,
    pub rounding: RoundingMode,
}

impl GamesConfig {
    /// Games between these engines with what a form that cannot say more gets (the classic INI,
    /// `spsa match`'s flags): no book, random order, the variant the book decides, the default
    /// held-out share, a 50 ms time margin, a 10 s stall timeout, no adjudication, no PGN.
    pub fn with_engines(engine1: EngineConfig, engine2: EngineConfig) -> GamesConfig {
        GamesConfig {
            engine1,
            engine2,
            book: None,
            book_random: true,
            book_plies: None,
            variant: crate::game::Variant::Auto,
            holdout: crate::game::DEFAULT_HOLDOUT,
            verify_book: None,
            limits: LimitsConfig {
                time_margin_ms: 50,
                stall_timeout_ms: 10_000,
                ..LimitsConfig::default()
            },
            adjudication: AdjudicationConfig::default(),
            max_plies: None,
            pgn: None,
            engine_log: None,
            bind_cores: true,
            rounding: RoundingMode::default(),
        }
    }
}

/// One engine: how to start it and the untuned options to set.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EngineConfig {
    pub command: PathBuf,
    pub args: Vec<String>,
    pub workdir: Option<PathBuf>,
    /// Options set once after the handshake (Hash, Threads, OwnBook, …), in file order.
    pub options: Vec<(String, String)>,
    /// Options among `options` whose value is a file's path (`files = { EvalFile = "nn.bin" }`
    /// in TOML): a shared run stores the file with the run, and each worker points the option
    /// at its fetched copy.
    pub files: Vec<String>,
    /// `source = { git, commit, build, binary }` (TOML): the engine is built from this commit of
    /// its repository (`engine::build`), and `command` is the built binary once it is built.
    pub source: Option<EngineSource>,
}

/// An engine named by its source: a git repository, a commit, the command that builds it in the
/// checked-out tree and where the binary is then (`[engine1] source = { … }`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EngineSource {
    /// A local folder (made absolute) or any URL `git fetch` takes.
    pub git: String,
    /// The revision as configured; the full commit id once resolved (`engine::build`).
    pub commit: String,
    /// Run with `sh -c` in the checked-out tree.
    pub build: String,
    /// The built binary's path in the tree.
    pub binary: String,
    /// How long the build may take before it is killed (`build_timeout_s`, default 30 min).
    pub timeout: Duration,
    /// The table that set it (`engine1`, or `engine2`) and the line of each key, for messages.
    pub table: String,
    pub lines: SourceLines,
}

/// The line of each key of an engine's `source`, so a repository, commit, build or binary that
/// fails is reported at its line.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SourceLines {
    pub git: usize,
    pub commit: usize,
    pub build: usize,
    pub binary: usize,
}

impl EngineSource {
    /// The build's default time limit.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

    /// A source from its four texts as written (in a config's table or by `spsa match`'s
    /// flags), checked: none empty, none but `build` starting with `-`, the binary a path inside
    /// the tree. A `git` that is no URL (`https://…`, `ssh://…`, `file://…`, scp-like
    /// `host:path`) is a folder, made absolute from `folder`'s path for it. A problem is the key
    /// it is about and what is wrong; the caller says where the key was given and fills in
    /// `table` and `lines`.
    pub fn new(
        [git, commit, build, binary]: [&str; 4],
        timeout: Duration,
        folder: impl Fn(&str) -> PathBuf,
    ) -> Result<EngineSource, (&'static str, String)> {
        for (key, value) in [
            ("git", git),
            ("commit", commit),
            ("build", build),
            ("binary", binary),
        ] {
            let v = value.trim();
            if v.is_empty() {
                return Err((key, "is empty".into()));
            }
            if key != "build" && v.starts_with('-') {
                return Err((key, format!("`{v}` must not start with `-`")));
            }
        }
        let path = Path::new(binary);
        if path.is_absolute() || path.components().any(|c| matches!(c, Component::ParentDir)) {
            return Err((
                "binary",
                format!(
                    "`{}` must be a path inside the repository's tree (relative, without `..`)",
                    path.display()
                ),
            ));
        }
        let git = git.trim();
        let is_url = git.contains("://")
            || git
                .split_once(':')
                .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
        let git = if is_url {
            git.to_string()
        } else {
            let dir = folder(git);
            std::fs::canonicalize(&dir)
                .or_else(|_| std::path::absolute(&dir))
                .unwrap_or(dir)
                .display()
                .to_string()
        };
        Ok(EngineSource {
            git,
            commit: commit.trim().to_string(),
            build: build.to_string(),
            binary: binary.to_string(),
            timeout,
            table: String::new(),
            lines: SourceLines::default(),
        })
    }

    /// A problem with `key` of this source (`git`, `commit`, `build`, `binary`) at its line.
    pub fn error(&self, config: &Path, key: &str, message: String) -> ConfigError {
        ConfigError::AtLine {
            path: config.to_path_buf(),
            line: self.lines.of(key),
            message: format!("key `{}.source.{key}`: {message}", self.table),
        }
    }
}

impl SourceLines {
    /// The line of `key` (`git`, `commit`, `build`, `binary`); 0 when no file gave it.
    pub fn of(&self, key: &str) -> usize {
        match key {
            "git" => self.git,
            "commit" => self.commit,
            "build" => self.build,
            _ => self.binary,
        }
    }
}

/// The search limits of each move.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LimitsConfig {
    pub base_time_ms: Option<u64>,
    pub inc_time_ms: Option<u64>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    pub movetime_ms: Option<u64>,
    /// With a clock: count it in nodes, `nodestime` nodes a millisecond (Stockfish's option of
    /// that name), so machine load cannot change a game ([`crate::game::TimeControl::NodesClock`]).
    pub nodestime: Option<u64>,
    /// Allowed overrun of the clock before a time forfeit.
    pub time_margin_ms: u64,
    /// How long a nodes/depth search may take before the engine is stopped as stalled.
    pub stall_timeout_ms: u64,
    /// Set by a worker of a shared run that scaled the clock to its machine's speed (see
    /// [`LimitsConfig::scale_time`]); stated in each game's PGN. Never read from a file.
    pub time_scale: Option<f64>,
}

impl LimitsConfig {
    /// Whether moves are limited by time (a clock or a fixed move time), which a slower
    /// machine would turn into a weaker engine; nodes and depth limits, and a clock counted in
    /// nodes (`nodestime`), are the same everywhere.
    pub fn is_timed(&self) -> bool {
        (self.base_time_ms.is_some() && self.nodestime.is_none()) || self.movetime_ms.is_some()
    }

    /// Multiply the clock (base and increment) or the move time by `factor`, to the millisecond.
    pub fn scale_time(&mut self, factor: f64) {
        let scale = |ms: &mut Option<u64>| {
            if let Some(ms) = ms {
                *ms = ((*ms as f64) * factor).round() as u64;
            }
        };
        scale(&mut self.base_time_ms);
        scale(&mut self.inc_time_ms);
        scale(&mut self.movetime_ms);
        self.time_scale = Some(factor);
    }

    /// The search limits that are set, by their TOML key under `[games]` (a clock counts once,
    /// as `base_time_ms`). A game is played under exactly one, so more than one is a mistake
    /// that would otherwise be resolved silently by precedence.
    pub fn chosen(&self) -> Vec<&'static str> {
        [
            ("base_time_ms", self.base_time_ms.is_some()),
            ("nodes", self.nodes.is_some()),
            ("depth", self.depth.is_some()),
            ("movetime_ms", self.movetime_ms.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.then_some(key))
        .collect()
    }
}

/// Score adjudication. A limit or move count of 0 disables that rule.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdjudicationConfig {
    pub draw_score_limit: i32,
    pub draw_move_limit: u32,
    /// Draw adjudication only from this full move number on.
    pub draw_min_move: u32,
    pub win_score_limit: i32,
    pub win_move_limit: u32,
    /// The safer form: both engines' reports must agree (cutechess/fastchess style).
    pub both_agree: bool,
    /// A folder of Syzygy tables: a game reaching a position they cover ends by their verdict.
    pub tb_path: Option<PathBuf>,
}

/// A configuration problem, naming the file and the line or key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read config file: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
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

/// A config that cannot be read or used is the user's to fix.
impl crate::error::UserFacing for ConfigError {
    fn is_user_error(&self) -> bool {
        true
    }
}

impl Config {
    /// How simulated pairs spread around their Elo: the pentanomial if given, else independent
    /// games at the draw rate (0 for a classic config: the classic tool's model).
    pub fn pair_model(&self) -> crate::stats::pairs::PairModel {
        use crate::stats::pairs::PairModel;
        self.pentanomial
            .and_then(PairModel::pentanomial)
            .unwrap_or(PairModel::Games {
                draw_rate: self.draw_rate,
            })
    }

    /// Load a config file; `.toml` is the TOML form, anything else the classic INI.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Io {
            path: path.to_path_buf(),
            cause,
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
        let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Io {
            path: path.to_path_buf(),
            cause,
        })?;
        toml_form::parse_games(&text, path)
    }

    /// Load a config file as the command line overrides it (`spsa run`, `simulate`, `plan`).
    pub fn load_with(path: &Path, flags: &Overrides) -> Result<Config, ConfigError> {
        let mut config = Config::load(path)?;
        if let Some(n) = flags.iterations {
            if n == 0 {
                return Err(ConfigError::InFile {
                    path: path.to_path_buf(),
                    message: "--iterations must be at least 1".into(),
                });
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

    /// The files the engines read through an option (`files = { EvalFile = "nn.bin" }`) are
    /// there (checked before a run starts, not when a config is read: a worker reads the config
    /// where the files are not, and fetches them).
    pub fn check_engine_files(&self) -> Result<(), ConfigError> {
        let Some(g) = &self.games else {
            return Ok(());
        };
        for (table, engine) in [("engine1", &g.engine1), ("engine2", &g.engine2)] {
            for option in &engine.files {
                let Some((_, value)) = engine.options.iter().find(|(o, _)| o == option) else {
                    continue;
                };
                if !Path::new(value).is_file() {
                    return Err(ConfigError::InFile {
                        path: self.path.clone(),
                        message: format!("key `{table}.files.{option}`: no file at {value}"),
                    });
                }
            }
        }
        Ok(())
    }

    /// Check, before anything is written or played, that every file the run writes (θ log,
    /// checkpoint, PGN, engine log, the game log of each slot 1..=concurrency) can be written: the path is
    /// not a folder, an existing file opens for appending, and its folder exists or can be
    /// created under a writable folder. Creates none of them (a probe file in the nearest
    /// existing folder is created and removed at once), so a refused start leaves no trace.
    pub fn check_outputs(&self) -> Result<(), ConfigError> {
        let mut outputs = vec![
            ("θ log", self.log.clone()),
            ("checkpoint", self.checkpoint.clone()),
        ];
        if let Some(pgn) = self.games.as_ref().and_then(|g| g.pgn.clone()) {
            outputs.push(("PGN file", pgn));
        }
        if let Some(log) = self.games.as_ref().and_then(|g| g.engine_log.clone()) {
            outputs.push(("engine log", log));
        }
        if !self.verify.is_empty() {
            outputs.push(("verification record", self.verify_record()));
        }
        outputs.extend(
            (1..=self.concurrency)
                .filter_map(|slot| self.game_log_for(slot).map(|p| ("game log", p))),
        );
        let mut seen = std::collections::HashSet::new();
        for (what, path) in outputs {
            if !seen.insert(path.clone()) {
                continue;
            }
            check_writable(&path).map_err(|problem| ConfigError::InFile {
                path: self.path.clone(),
                message: format!(
                    "the {what} `{}` cannot be written: {problem}",
                    path.display()
                ),
            })?;
        }
        Ok(())
    }

    /// An engine's refusal of an option value (`message`, e.g. "`Hash` is a spin option and
    /// cannot take \"big\"") as a config error at the line that set it: `conf/t.toml:9: key
    /// `engine1.options.Hash`: …`. `side` is 1 or 2; `None` when the config did not set that
    /// option for that side (it came from the command line). Option names match without regard
    /// to case, as UCI names do.
    pub fn option_error(&self, side: usize, option: &str, message: &str) -> Option<ConfigError> {
        self.option_origins
            .iter()
            .find(|o| o.side == side && o.name.eq_ignore_ascii_case(option))
            .map(|o| ConfigError::AtLine {
                path: self.path.clone(),
                line: o.line,
                message: format!("key `{}.options.{}`: {message}", o.table, o.name),
            })
    }

    /// Where `spsa run` records the `[verify]` match of a finished tune: beside the θ log,
    /// `x.log` → `x.verify.txt`.
    pub fn verify_record(&self) -> PathBuf {
        self.log.with_extension("verify.txt")
    }

    /// Where the live Elo curve is kept (`[track]`): beside the θ log.
    pub fn track_file(&self) -> PathBuf {
        crate::spsa::track::file_for(&self.log)
    }

    /// The game log path for a worker: `$THREAD` replaced by its number.
    pub fn game_log_for(&self, worker: usize) -> Option<PathBuf> {
        self.game_log
            .as_ref()
            .map(|p| PathBuf::from(p.to_string_lossy().replace("$THREAD", &worker.to_string())))
    }
}

/// Why `path` cannot be written, if it cannot (see [`Config::check_outputs`]).
pub fn check_writable(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err("it is a folder".into());
    }
    if path.exists() {
        return std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| format!("cannot open it for writing: {e}"));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let existing = folder
        .ancestors()
        .find(|a| a.as_os_str().is_empty() || a.exists())
        .filter(|a| !a.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !existing.is_dir() {
        return Err(format!("`{}` is a file, not a folder", existing.display()));
    }
    let probe = existing.join(format!(".spsa-write-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map(|_| {
            let _ = std::fs::remove_file(&probe);
        })
        .map_err(|e| format!("folder `{}` is not writable: {e}", existing.display()))
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

/// Resolve an engine command: a bare name (no `/`) is looked up on PATH at spawn time; anything
/// with a `/` in it (`./eng`, `engines/sf`, `../sf`) is a path relative to the config's folder,
/// always, also when the config was named without a folder (`spsa run aggr.conf`). The result
/// keeps a folder part (`./eng`), or the OS would search PATH for it.
pub(crate) fn resolve_command(config: &Path, value: &str) -> PathBuf {
    if !value.contains('/') {
        return PathBuf::from(value);
    }
    let path = resolve(config, value);
    if path.is_relative() && path.components().count() == 1 {
        Path::new(".").join(path)
    } else {
        path
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

    pub fn pairs_per_iteration(v: u64) -> Result<u32, String> {
        if (1..=10_000).contains(&v) {
            Ok(v as u32)
        } else {
            Err(format!("must be between 1 and 10000, not {v}"))
        }
    }

    pub fn concurrency(v: u64) -> Result<usize, String> {
        if v == 0 || v > 1024 {
            Err(format!("must be between 1 and 1024, not {v}"))
        } else {
            Ok(v as usize)
        }
    }

    /// The largest throughput share: a weight, so only ratios matter; the cap keeps one run
    /// from being given a share that no other could ever be set against.
    pub const THROUGHPUT_MAX: f64 = 1000.0;

    /// A shared run's throughput share: above 0, at most [`THROUGHPUT_MAX`].
    pub fn throughput(v: f64) -> Result<f64, String> {
        if v.is_finite() && v > 0.0 && v <= THROUGHPUT_MAX {
            Ok(v)
        } else {
            Err(format!(
                "a throughput share must be above 0 and at most {THROUGHPUT_MAX} (100 is the default), not {v}"
            ))
        }
    }

    /// A throughput share as typed (a flag, a form).
    pub fn throughput_text(text: &str) -> Result<f64, String> {
        let p: f64 = text
            .trim()
            .parse()
            .map_err(|_| format!("a throughput share must be a number, not `{text}`"))?;
        throughput(p)
    }

    /// A pentanomial shape: five counts or probabilities (0, ½, 1, 1½, 2 points) that can carry
    /// a score both ways, given instead of a draw rate.
    pub fn pentanomial(p: &[f64], draw_rate: f64) -> Result<[f64; 5], String> {
        let shape: [f64; 5] = p.try_into().map_err(|_| {
            format!(
                "expected 5 numbers (pairs scoring 0, 1/2, 1, 3/2 and 2 points), found {}",
                p.len()
            )
        })?;
        if draw_rate != 0.0 {
            return Err(
                "give draw_rate or pentanomial, not both (the pentanomial holds the draws)".into(),
            );
        }
        if let Some(bad) = shape.iter().find(|c| !c.is_finite() || **c < 0.0) {
            return Err(format!("counts must be 0 or more, not {bad}"));
        }
        match crate::stats::pairs::PairModel::pentanomial(shape) {
            Some(_) => Ok(shape),
            None => Err("needs pairs below 1 point (0 or 1/2) and above it (3/2 or 2): a shape without either cannot score an Elo difference".into()),
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
