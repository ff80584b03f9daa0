//! `spsa match`: play game pairs between two engines or two option sets. Its flags (the game
//! flags shared with `spsa verify`), how they combine with a config file into a
//! [`Plan`] (flags override the config), and the printing of the outcome.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use super::match_source::engine_name;
use crate::arena::OptionSet;
use crate::config::{Config, EngineConfig, GamesConfig};
use crate::engine::OptionValue;
use crate::error::user_error;
use crate::matchrun::setup::{OptionPlaces, plan};
use crate::matchrun::{MatchSettings, Plan, describe_options};
use crate::source::games::GameSource;

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

/// `spsa match`: two engines, or one engine with two option sets.
#[derive(Args, Clone, Debug, Default)]
pub struct MatchArgs {
    /// Take engines, book, limits and adjudication from this config (TOML or classic INI);
    /// flags override it. A TOML file may leave out the tuning keys.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The first engine (side A).
    #[arg(long, value_name = "PATH")]
    pub engine1: Option<PathBuf>,
    /// The second engine (side B); the first one again when not given.
    #[arg(long, value_name = "PATH")]
    pub engine2: Option<PathBuf>,
    // Boxed: the command line's largest variant stays near the others (clippy).
    #[command(flatten)]
    pub sources: Box<super::match_source::SourceFlags>,
    /// A command-line argument for engine 1 (repeat for several).
    #[arg(long = "arg1", value_name = "ARG", allow_hyphen_values = true)]
    pub args1: Vec<String>,
    /// A command-line argument for engine 2 (repeat for several).
    #[arg(long = "arg2", value_name = "ARG", allow_hyphen_values = true)]
    pub args2: Vec<String>,
    /// An option for both engines, NAME=VALUE (repeatable), e.g. "Hash=16".
    #[arg(long = "option", value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// An option for side A, NAME=VALUE (repeatable), e.g. "KnightValue=150".
    #[arg(long = "option1", value_name = "NAME=VALUE")]
    pub options1: Vec<String>,
    /// An option for side B, NAME=VALUE (repeatable).
    #[arg(long = "option2", value_name = "NAME=VALUE")]
    pub options2: Vec<String>,
    #[command(flatten)]
    pub flags: MatchFlags,
    /// Play the match on the workers of this PostgreSQL database (`spsa worker --db URL`):
    /// this process creates it and follows it; Ctrl-C leaves it running (`spsa status --db
    /// URL` follows it, `spsa modify --db URL --run ID --stop` stops it).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// With --db: seconds a lease lives without a heartbeat before its pair is handed on.
    #[arg(long, default_value_t = crate::db::LEASE_SECONDS, requires = "db")]
    pub lease_timeout: f64,
    /// With --db: the match's throughput share among the active runs of its priority (above
    /// 0, at most 1000; default 100).
    #[arg(long, value_name = "P", requires = "db", value_parser = crate::config::check::throughput_text)]
    pub throughput: Option<f64>,
    /// With --db and a clock: the engine speed (nodes per second) the clock is meant for; each
    /// worker scales it to its own. Default: engine 1 measured here.
    #[arg(long, value_name = "NPS", requires = "db", value_parser = super::run::nps_flag)]
    pub reference_nps: Option<f64>,
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

/// `NAME=VALUE` → an option wish; `flag` names the flag in the message.
pub fn parse_option(text: &str, flag: &str) -> Result<(String, OptionValue)> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((
            name.trim().to_string(),
            OptionValue::Text(value.trim().to_string()),
        )),
        _ => Err(user_error(format!("{flag} `{text}`: expected NAME=VALUE"))),
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

fn engine_from_flag(command: &Path, args: &[String]) -> EngineConfig {
    EngineConfig {
        command: command.to_path_buf(),
        args: args.to_vec(),
        workdir: None,
        options: Vec::new(),
        files: Vec::new(),
        source: None,
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

/// A games config from flags alone (no config file): engine 1 is required (`--engine1`, or
/// `--source1`); engine 2 is engine 1 again unless given (with `--arg2`'s args if any).
fn games_from_flags(a: &MatchArgs) -> Result<GamesConfig> {
    let mut engine1 = match (&a.engine1, &a.sources.source1) {
        (Some(e1), _) => engine_from_flag(e1, &a.args1),
        (None, Some(_)) => engine_from_flag(Path::new(""), &a.args1),
        (None, None) => {
            return Err(user_error(
                "no engine: give --engine1 PATH (and --engine2 PATH), --source1 REV (and --source2 REV) with --git REPO, --build CMD and --binary PATH, or --config FILE",
            ));
        }
    };
    a.sources.side(1, &mut engine1)?;
    let mut engine2 = match &a.engine2 {
        Some(e2) => engine_from_flag(e2, &a.args2),
        None if !a.args2.is_empty() => EngineConfig {
            args: a.args2.clone(),
            ..engine1.clone()
        },
        None => engine1.clone(),
    };
    a.sources.side(2, &mut engine2)?;
    Ok(GamesConfig::with_engines(engine1, engine2))
}

impl MatchArgs {
    /// Combine the config (if any) and the flags into a plan.
    pub async fn plan(&self) -> Result<Plan> {
        Ok(self.plan_and_games().await?.0)
    }

    /// The plan, and the games config it was made of (what a match in the database stores).
    pub async fn plan_and_games(&self) -> Result<(Plan, GamesConfig)> {
        self.sources.check()?;
        let config = match &self.config {
            Some(path) => Some(Config::load_games(path)?),
            None => None,
        };
        let mut games = match config.as_ref().and_then(|c| c.games.clone()) {
            Some(mut g) => {
                if let Some(e1) = &self.engine1 {
                    g.engine1 = engine_from_flag(e1, &self.args1);
                } else if !self.args1.is_empty() {
                    g.engine1.args = self.args1.clone();
                }
                if let Some(e2) = &self.engine2 {
                    g.engine2 = engine_from_flag(e2, &self.args2);
                } else if !self.args2.is_empty() {
                    g.engine2.args = self.args2.clone();
                }
                self.sources.side(1, &mut g.engine1)?;
                self.sources.side(2, &mut g.engine2)?;
                g
            }
            None if config.is_some() && self.engine1.is_none() => {
                return Err(user_error(format!(
                    "{}: no engines configured; give --engine1 PATH",
                    self.config
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                )));
            }
            None => games_from_flags(self)?,
        };
        apply_flags(&mut games, &self.flags)?;
        // The engines named by their source (the config's tables, --source1/--source2), built
        // here before anything else is done.
        let config_path = self.config.as_deref();
        crate::db::engines::build_games(&mut games, |s, e| {
            super::match_source::build_error(config_path, s, e)
        })
        .await?;
        for text in &self.options {
            let (name, value) = parse_option(text, "--option")?;
            let value = match value {
                OptionValue::Text(t) => t,
                other => other.to_string(),
            };
            games.engine1.options.push((name.clone(), value.clone()));
            games.engine2.options.push((name, value));
        }
        let fixed_flag = self
            .options
            .iter()
            .filter_map(|t| t.split_once('=').map(|(n, _)| n.trim().to_string()))
            .collect();
        let a_options = self
            .options1
            .iter()
            .map(|t| parse_option(t, "--option1"))
            .collect::<Result<OptionSet>>()?;
        let b_options = self
            .options2
            .iter()
            .map(|t| parse_option(t, "--option2"))
            .collect::<Result<OptionSet>>()?;
        let (s1, s2) = (engine_name(&games.engine1), engine_name(&games.engine2));
        let names = if s1 == s2 {
            [format!("{s1}.1"), format!("{s2}.2")]
        } else {
            [s1, s2]
        };
        let mut plan = plan(
            &games,
            names,
            a_options,
            b_options,
            &self.flags.settings(),
            100,
            config.as_ref().map(|c| c.concurrency),
            config.as_ref().and_then(|c| c.seed),
            "spsa match".into(),
        )?;
        plan.option_places = OptionPlaces {
            config,
            fixed_flag,
            side_flags: [Some("--option1"), Some("--option2")],
        };
        Ok((plan, games))
    }
}

/// Run `spsa match` to its end or Ctrl-C and print the results.
pub async fn command(args: MatchArgs) -> Result<()> {
    if let Some(url) = args.db.clone() {
        return super::match_db::command(args, &url).await;
    }
    let mut plan = args.plan().await?;
    let source = plan.start_source().await?;
    let (n1, n2) = plan.names();
    crate::outln!(
        "match: {n1} ({}) vs {n2} ({}), {} pairs, concurrency {}, {}",
        describe_options(&plan.a_options),
        describe_options(&plan.b_options),
        plan.pairs,
        plan.concurrency,
        plan.description
    )?;
    play_to_end(&source, &plan, &args.flags).await
}

/// Play a planned match to its end (or Ctrl-C), quit the engines, and print the results.
pub async fn play_to_end(
    source: &GameSource,
    plan: &Plan,
    flags: &MatchFlags,
) -> anyhow::Result<()> {
    let shutdown = crate::runtime::shutdown::Shutdown::on_signals();
    let out = crate::matchrun::play_planned(source, plan, &shutdown, progress_every(flags)).await;
    crate::matchrun::finish(out)
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
