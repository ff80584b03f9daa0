//! The flags more than one command takes, and the flag groups a command flattens into its own:
//! `spsa run`'s (which `spsa simulate` takes too), the game flags of `spsa match` and `spsa
//! verify`, and the flags of engines built from source (`spsa match --source1 REV`). A command's
//! file imports these and the library, never another command's file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::config::{EngineConfig, EngineSource, GamesConfig, Overrides, SourceLines};
use crate::engine::build::BuildError;
use crate::error::user_error;
use crate::matchrun::MatchSettings;
use crate::method::launch::Launch;
use crate::tuner::StartMode;

/// `--concurrency`: at least 1, rejected the same way by every command.
pub fn concurrency_flag(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!(
            "must be a whole number from 1 to 1024, not `{text}`"
        )),
    }
}

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
    #[arg(long, value_parser = concurrency_flag)]
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
    /// With --db, for the role that owns the schema only: make (or, with --resume, find) the
    /// run in the name of member or approver ROLE, who is then its author: it waits for an
    /// approver unless ROLE is one, and its audit trail says the owner made it for them. The
    /// database refuses it to any other caller, and for a role in neither group. `spsa serve`
    /// starts the owner process of a tune created in the browser so.
    #[arg(long, value_name = "ROLE", requires = "db")]
    pub author: Option<String>,
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

    /// How the run is started, for the command typed (`run`, `simulate`).
    pub fn launch(&self, verb: &'static str) -> Launch {
        Launch {
            verb,
            config: self.config.clone(),
            mode: self.mode(),
            db: self.db.clone(),
            lease_seconds: self.lease_timeout,
            play: !self.no_play,
            reference_nps: self.reference_nps,
            throughput: self.throughput,
            author: self.author.clone(),
            users_to_fix: |e| super::exit::exit_code(e) == 2,
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

/// How games are played: shared by `spsa match` and `spsa verify`.
#[derive(Args, Clone, Debug, Default)]
pub struct MatchFlags {
    /// Game pairs to play, each opening twice with colours reversed (default 100).
    #[arg(long)]
    pub pairs: Option<u64>,
    /// Pairs in flight at once, each with its own two engine processes (default: the config's
    /// concurrency, else 1).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Opening book: EPD/FEN (one position a line) or PGN.
    #[arg(long, value_name = "FILE")]
    pub book: Option<PathBuf>,
    /// Take openings in file order instead of a seeded shuffle.
    #[arg(long)]
    pub sequential: bool,
    /// Castling rules: `standard`, `chess960` (Chess960 and DFRC: X-FEN or Shredder-FEN
    /// castling, `UCI_Chess960` set), or `auto` (the book decides; the default).
    #[arg(long, value_name = "VARIANT", value_parser = parse_variant)]
    pub variant: Option<crate::game::Variant>,
    /// Search limit: fixed depth per move.
    #[arg(long, group = "limit")]
    pub depth: Option<u32>,
    /// Search limit: fixed nodes per move.
    #[arg(long, group = "limit")]
    pub nodes: Option<u64>,
    /// Search limit: fixed time per move in milliseconds.
    #[arg(long, group = "limit", value_name = "MS")]
    pub movetime: Option<u64>,
    /// Search limit: a clock per side, BASE_MS+INC_MS in milliseconds (e.g. 10000+100).
    #[arg(long, group = "limit", value_name = "BASE_MS+INC_MS")]
    pub tc: Option<String>,
    /// With a clock: count it in nodes, N nodes a millisecond (Stockfish's `nodestime` option,
    /// set on both engines), so machine load cannot change a game. N is the engine's speed on
    /// the machine the clock is meant for, in nodes per millisecond (its `bench` nodes/second
    /// over 1,000).
    #[arg(long, value_name = "N")]
    pub nodestime: Option<u64>,
    /// Draw a game after this many plies (book moves included).
    #[arg(long)]
    pub max_plies: Option<u32>,
    /// Clock overrun allowed before a time forfeit.
    #[arg(long, value_name = "MS")]
    pub time_margin: Option<u64>,
    /// How long a depth/nodes search may take before the engine counts as stalled.
    #[arg(long, value_name = "MS")]
    pub stall_timeout: Option<u64>,
    /// How long an engine may take to answer `uci` with `uciok`.
    #[arg(long, value_name = "MS")]
    pub handshake_timeout: Option<u64>,
    /// Stop after this many pairs in a row in which every game ended in an engine fault.
    #[arg(long, default_value_t = 5)]
    pub max_faulty_pairs: u32,
    /// End a game by the Syzygy tables in this folder once it reaches a position they cover.
    #[arg(long, value_name = "DIR")]
    pub tb: Option<PathBuf>,
    /// Append every game to this PGN file.
    #[arg(long, value_name = "FILE")]
    pub pgn: Option<PathBuf>,
    /// Append every line sent to and read from each engine to this file, with a timestamp (ms),
    /// the slot, the engine's name and the direction (`>` to it, `<` from it).
    #[arg(long, value_name = "FILE")]
    pub engine_log: Option<PathBuf>,
    /// Do not bind each game slot and its engines to cores of their own (done by default when
    /// the slots fill the machine's cores exactly; see docs/speed.md).
    #[arg(long)]
    pub no_bind_cores: bool,
    /// Keep the match's live record (JSON: counts, Elo, SPRT state; rewritten after every
    /// pair, for `spsa serve`) in this file. Default: beside the PGN file, `NAME.match.json`
    /// for `NAME.pgn`; no record without either.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Seed for the book order (random when not given; the header line shows it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Stop early by a sequential probability ratio test on the pair counts: ELO0,ELO1 in
    /// normalised Elo (the fishtest/fastchess pentanomial model), optionally ,ALPHA,BETA
    /// (default 0.05 each). --pairs is then the most to play (default 1000000).
    #[arg(long, value_name = "ELO0,ELO1[,ALPHA,BETA]")]
    pub sprt: Option<String>,
    /// Seconds between progress lines on stderr (0: none).
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub progress: f64,
    /// Go on with this match where its record (--record, or beside --pgn) left it: the same
    /// command and flags play the pairs the record does not hold, and the counts, Elo and SPRT
    /// take in the earlier pairs. The record must be of the same match (engines, options,
    /// limits, seed, book, SPRT); --pairs may change.
    #[arg(long)]
    pub resume: bool,
}

impl MatchFlags {
    /// What the flags ask of the match beyond its games config.
    pub fn settings(&self) -> MatchSettings {
        MatchSettings {
            pairs: self.pairs,
            concurrency: self.concurrency,
            seed: self.seed,
            sprt: self.sprt.clone(),
            handshake_timeout: self.handshake_timeout.map(Duration::from_millis),
            pgn_flag: self.pgn.is_some(),
            engine_log_flag: self.engine_log.is_some(),
            record: self.record.clone(),
            max_faulty_pairs: self.max_faulty_pairs,
            resume: self.resume,
        }
    }
}

/// `BASE_MS+INC_MS` or `BASE_MS`.
pub fn parse_tc(text: &str) -> Result<(u64, u64)> {
    let (base, inc) = text.split_once('+').unwrap_or((text, "0"));
    match (base.trim().parse::<u64>(), inc.trim().parse::<u64>()) {
        (Ok(b), Ok(i)) if b > 0 => Ok((b, i)),
        _ => Err(user_error(format!(
            "--tc `{text}`: expected BASE_MS+INC_MS in milliseconds, e.g. 10000+100"
        ))),
    }
}

/// Apply the shared game flags to a games config (limits, book, plies, timeouts, PGN).
pub fn apply_flags(games: &mut GamesConfig, f: &MatchFlags) -> Result<()> {
    let limit_flag =
        f.depth.is_some() || f.nodes.is_some() || f.movetime.is_some() || f.tc.is_some();
    if limit_flag {
        let l = &mut games.limits;
        l.base_time_ms = None;
        l.inc_time_ms = None;
        l.nodes = f.nodes;
        l.depth = f.depth;
        l.movetime_ms = f.movetime;
        l.nodestime = None;
        if let Some(tc) = &f.tc {
            let (base, inc) = parse_tc(tc)?;
            l.base_time_ms = Some(base);
            l.inc_time_ms = Some(inc);
        }
    }
    if let Some(n) = f.nodestime {
        if games.limits.base_time_ms.is_none() {
            return Err(user_error(format!(
                "--nodestime {n}: counts a clock in nodes, so it needs a clock (--tc BASE_MS+INC_MS, or the config's base_time_ms)"
            )));
        }
        if n == 0 {
            return Err(user_error(
                "--nodestime: nodes per millisecond must be at least 1",
            ));
        }
        games.limits.nodestime = Some(n);
    }
    if games.limits.chosen().is_empty() {
        return Err(user_error(
            "no search limit: give --depth N, --nodes N, --movetime MS or --tc BASE_MS+INC_MS",
        ));
    }
    if let Some(ms) = f.time_margin {
        games.limits.time_margin_ms = ms;
    }
    if let Some(ms) = f.stall_timeout {
        games.limits.stall_timeout_ms = ms;
    }
    if f.book.is_some() {
        games.book = f.book.clone();
    }
    if f.sequential {
        games.book_random = false;
    }
    if let Some(v) = f.variant {
        games.variant = v;
    }
    if f.max_plies.is_some() {
        games.max_plies = f.max_plies;
    }
    if f.pgn.is_some() {
        games.pgn = f.pgn.clone();
    }
    if f.engine_log.is_some() {
        games.engine_log = f.engine_log.clone();
    }
    if f.no_bind_cores {
        games.bind_cores = false;
    }
    if f.tb.is_some() {
        games.adjudication.tb_path = f.tb.clone();
    }
    Ok(())
}

/// The progress interval from the flags.
pub fn progress_every(f: &MatchFlags) -> Option<Duration> {
    (f.progress > 0.0 && f.progress.is_finite()).then(|| Duration::from_secs_f64(f.progress))
}

/// `--variant`: the config key's spellings.
fn parse_variant(s: &str) -> std::result::Result<crate::game::Variant, String> {
    crate::game::Variant::parse(s)
        .ok_or_else(|| format!("`{s}` is not a variant: standard, chess960 (or dfrc) or auto"))
}

/// `spsa match --git REPO --source1 REV --source2 REV --build CMD --binary PATH`: a patch test,
/// each side an engine built from a revision of one repository. A side so given is what a
/// config's `[engineN.source]` table makes (a `config::EngineSource`, checked by the same
/// [`EngineSource::new`]), built by the same `engine::build` here and, in the database, on
/// every worker; with `--config`, `--source1/--source2` change the revision of the config's
/// tables and `--git`, `--build`, `--binary` their other keys.
#[derive(Args, Clone, Debug, Default)]
pub struct SourceFlags {
    /// Engine 1 built from this revision (commit, branch or tag) of the --git repository with
    /// --build and --binary, instead of --engine1; with --config, the revision of its
    /// `[engine1.source]` table.
    #[arg(long, value_name = "REV", conflicts_with = "engine1")]
    pub source1: Option<String>,
    /// Engine 2 built from this revision of the --git repository, instead of --engine2; with
    /// --config, the revision of its `[engine2.source]` table.
    #[arg(long, value_name = "REV", conflicts_with = "engine2")]
    pub source2: Option<String>,
    /// The repository of --source1 and --source2: a folder or any URL `git fetch` takes.
    #[arg(long, value_name = "REPO")]
    pub git: Option<String>,
    /// The command that builds the engine, run with `sh -c` in the checked-out tree of each
    /// revision (e.g. "make -j2").
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// The built executable's path in the tree (e.g. "src/stockfish").
    #[arg(long, value_name = "PATH")]
    pub binary: Option<String>,
}

impl SourceFlags {
    /// The revision flag of side `n` (1 or 2).
    fn rev(&self, n: usize) -> Option<&str> {
        if n == 1 {
            self.source1.as_deref()
        } else {
            self.source2.as_deref()
        }
    }

    /// `--git`, `--build` or `--binary` without a side built from source is a mistake.
    pub fn check(&self) -> Result<()> {
        if self.source1.is_some() || self.source2.is_some() {
            return Ok(());
        }
        let stray = [
            ("--git", self.git.is_some()),
            ("--build", self.build.is_some()),
            ("--binary", self.binary.is_some()),
        ];
        match stray.iter().find(|(_, given)| *given) {
            Some((flag, _)) => Err(user_error(format!(
                "{flag}: says how to build the engines of --source1 REV and --source2 REV; give one of them (a commit, branch or tag)"
            ))),
            None => Ok(()),
        }
    }

    /// Side `n`'s engine built from the revision its flag names, if one does: its source made
    /// of the flags, and of its config's `source` table for what they leave out; its command
    /// the binary's path in the tree until it is built. Its args and options stay.
    pub fn side(&self, n: usize, engine: &mut EngineConfig) -> Result<()> {
        let Some(rev) = self.rev(n) else {
            return Ok(());
        };
        let configured = engine.source.as_ref();
        let flag = format!("--source{n}");
        let key = |value: &Option<String>, name: &str, of: fn(&EngineSource) -> &String| match (
            value, configured,
        ) {
            (Some(v), _) => Ok(v.clone()),
            (None, Some(s)) => Ok(of(s).clone()),
            (None, None) => Err(user_error(format!(
                "{flag} {rev}: give {name} too (engine {n} has no `source` table to take it from)"
            ))),
        };
        let git = key(&self.git, "--git REPO", |s| &s.git)?;
        let build = key(&self.build, "--build CMD", |s| &s.build)?;
        let binary = key(&self.binary, "--binary PATH", |s| &s.binary)?;
        let timeout = configured.map_or(EngineSource::DEFAULT_TIMEOUT, |s| s.timeout);
        let mut source =
            EngineSource::new([&git, rev, &build, &binary], timeout, |g| PathBuf::from(g))
                .map_err(|(key, message)| user_error(format!("{}: {message}", flag_of(n, key))))?;
        source.table = format!("engine{n}");
        // A key from the config keeps its line; one from a flag has none, and its errors name
        // the flag.
        if let Some(c) = configured {
            let line = |flag: &Option<String>, line: usize| if flag.is_some() { 0 } else { line };
            source.lines = SourceLines {
                git: line(&self.git, c.lines.git),
                commit: 0,
                build: line(&self.build, c.lines.build),
                binary: line(&self.binary, c.lines.binary),
            };
        }
        engine.command = PathBuf::from(&source.binary);
        engine.workdir = None;
        engine.source = Some(source);
        Ok(())
    }
}

/// The flag that gives `key` (`git`, `commit`, `build`, `binary`) of side `n`'s source.
fn flag_of(n: usize, key: &str) -> String {
    match key {
        "git" => "--git".into(),
        "commit" => format!("--source{n}"),
        "build" => "--build".into(),
        _ => "--binary".into(),
    }
}

/// A source that could not be fetched or built: the config's error at the line of the key it is
/// about, or a user error naming the flag that gave the key.
pub fn build_error(config: Option<&Path>, s: &EngineSource, e: BuildError) -> anyhow::Error {
    let key = e.key();
    match config.filter(|_| s.lines.of(key) > 0) {
        Some(path) => s.error(path, key, e.to_string()).into(),
        None => {
            let n = if s.table == "engine2" { 2 } else { 1 };
            user_error(format!("{}: {e}", flag_of(n, key)))
        }
    }
}
