//! The flags of `spsa match` (and the game flags `spsa verify` shares), and how they combine
//! with a config file into what the [`Arena`] needs. Flags override the config.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use super::UserError;
use crate::arena::{self, Arena, EngineSetup, OptionSet};
use crate::config::{AdjudicationConfig, Config, EngineConfig, GamesConfig, LimitsConfig};
use crate::engine::OptionValue;
use crate::game::GameSettings;
use crate::game::{Book, BookOrder, Opening};
use crate::source::games::{GameFiles, GameSource, Sides, option_error_at};
use crate::stats::sprt::Sprt;

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
}

/// Everything needed to start the arena and play.
pub struct Plan {
    pub setups: [EngineSetup; 2],
    pub a_options: OptionSet,
    pub b_options: OptionSet,
    pub pairs: u64,
    pub concurrency: usize,
    /// Taken by [`Plan::start_source`].
    pub book: Option<Book>,
    pub game: GameSettings,
    pub pgn: Option<PathBuf>,
    /// Every line to and from the engines (`--engine-log`, `games.engine_log`).
    pub engine_log: Option<PathBuf>,
    /// The match record's file ([`super::record`]).
    pub record: Option<PathBuf>,
    pub event: String,
    pub max_faulty_pairs: u32,
    pub seed: u64,
    /// What is played, for the header line: `depth=2, book openings/x.epd (random order)`.
    pub description: String,
    /// Stop when this test decides (`--sprt`).
    pub sprt: Option<Sprt>,
    /// Where the options came from, to report a refused one at its place.
    pub option_places: OptionPlaces,
}

/// Where a match's options were set: the config's lines, `--option` (both engines' fixed
/// options), and the flag of each side's own set (`--option1`, `--option2`).
#[derive(Clone, Debug, Default)]
pub struct OptionPlaces {
    pub config: Option<Config>,
    /// Names given by `--option`.
    pub fixed_flag: Vec<String>,
    pub side_flags: [Option<&'static str>; 2],
}

impl OptionPlaces {
    /// A fixed option (sent once at start) refused: at its config line or its `--option` flag.
    fn fixed(&self, side: usize, option: &str, message: &str) -> Option<anyhow::Error> {
        if self
            .fixed_flag
            .iter()
            .any(|n| n.eq_ignore_ascii_case(option))
        {
            return Some(bad(format!("--option {option}: {message}")));
        }
        self.config
            .as_ref()?
            .option_error(side, option, message)
            .map(anyhow::Error::from)
    }

    /// A side's own option refused: at its flag.
    fn side(&self, side: usize, option: &str, message: &str) -> Option<anyhow::Error> {
        let flag = self.side_flags[side - 1]?;
        Some(bad(format!("{flag} {option}: {message}")))
    }
}

impl Plan {
    /// The match record to keep, when the plan has a place for one: nothing played yet.
    pub fn recording(&self) -> Option<super::Recording> {
        let path = self.record.clone()?;
        let (a, b) = self.names();
        Some(super::Recording {
            path,
            record: super::MatchRecord::start(
                &self.event,
                [a.to_string(), b.to_string()],
                [
                    describe_options(&self.a_options),
                    describe_options(&self.b_options),
                ],
                self.game.time_control.describe(),
                self.description.clone(),
                self.pairs,
                self.sprt.as_ref(),
            ),
        })
    }

    pub fn names(&self) -> (&str, &str) {
        (&self.setups[0].spec.name, &self.setups[1].spec.name)
    }

    /// Start the engines, check both sides' options, and make the games source (once: the
    /// book moves into the arena).
    pub async fn start_source(&mut self) -> Result<GameSource> {
        let book = self
            .book
            .take()
            .context("the engines were started already")?;
        let names = [
            self.setups[0].spec.name.as_str(),
            self.setups[1].spec.name.as_str(),
        ];
        let places = &self.option_places;
        let log = arena::open_engine_log(self.engine_log.as_deref())?;
        let arena = Arena::start(
            self.setups.clone(),
            self.concurrency,
            book,
            self.game.clone(),
            log,
        )
        .await
        .map_err(|e| option_error_at(e, names, |s, o, m| places.fixed(s, o, m)))?;
        arena
            .validate(&self.a_options, &self.b_options)
            .await
            .map_err(|e| option_error_at(e, names, |s, o, m| places.side(s, o, m)))?;
        let sides = Sides::Fixed {
            a: self.a_options.clone(),
            b: self.b_options.clone(),
        };
        let files = GameFiles {
            pgn: self.pgn.clone(),
            game_log: None,
            event: self.event.clone(),
            ..GameFiles::default()
        };
        Ok(GameSource::new(arena, sides, files))
    }
}

fn bad(message: impl Into<String>) -> anyhow::Error {
    UserError(message.into()).into()
}

/// `NAME=VALUE` → an option wish; `flag` names the flag in the message.
pub fn parse_option(text: &str, flag: &str) -> Result<(String, OptionValue)> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((
            name.trim().to_string(),
            OptionValue::Text(value.trim().to_string()),
        )),
        _ => Err(bad(format!("{flag} `{text}`: expected NAME=VALUE"))),
    }
}

/// `BASE_MS+INC_MS` or `BASE_MS`.
pub fn parse_tc(text: &str) -> Result<(u64, u64)> {
    let (base, inc) = text.split_once('+').unwrap_or((text, "0"));
    match (base.trim().parse::<u64>(), inc.trim().parse::<u64>()) {
        (Ok(b), Ok(i)) if b > 0 => Ok((b, i)),
        _ => Err(bad(format!(
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
    }
}

/// A readable engine name from its command: the file stem.
fn stem(command: &Path) -> String {
    command
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| command.display().to_string())
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
        if let Some(tc) = &f.tc {
            let (base, inc) = parse_tc(tc)?;
            l.base_time_ms = Some(base);
            l.inc_time_ms = Some(inc);
        }
    }
    if games.limits.chosen().is_empty() {
        return Err(bad(
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
    if f.max_plies.is_some() {
        games.max_plies = f.max_plies;
    }
    if f.pgn.is_some() {
        games.pgn = f.pgn.clone();
    }
    if f.engine_log.is_some() {
        games.engine_log = f.engine_log.clone();
    }
    if f.tb.is_some() {
        games.adjudication.tb_path = f.tb.clone();
    }
    Ok(())
}

/// A games config from flags alone (no config file): engine 1 is required.
fn games_from_flags(a: &MatchArgs) -> Result<GamesConfig> {
    let Some(e1) = &a.engine1 else {
        return Err(bad(
            "no engine: give --engine1 PATH (and --engine2 PATH) or --config FILE",
        ));
    };
    let engine1 = engine_from_flag(e1, &a.args1);
    let engine2 = match &a.engine2 {
        Some(e2) => engine_from_flag(e2, &a.args2),
        None if !a.args2.is_empty() => engine_from_flag(e1, &a.args2),
        None => engine1.clone(),
    };
    Ok(GamesConfig {
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
        rounding: Default::default(),
    })
}

/// Load the book (or the start position when there is none).
pub fn load_book(games: &GamesConfig, seed: u64) -> Result<Book> {
    match &games.book {
        Some(path) => {
            if std::fs::metadata(path).is_err() {
                return Err(bad(format!("{}: book not found", path.display())));
            }
            Ok(Book::load(path, &arena::book_options(games, seed))?)
        }
        None => Book::from_openings(vec![Opening::start_position()], BookOrder::Sequential, seed)
            .context("empty book"),
    }
}

/// Check that an engine command exists before trying to start it, for a one-line message.
fn check_command(e: &EngineConfig, which: &str) -> Result<()> {
    let c = &e.command;
    if c.components().count() > 1 && std::fs::metadata(c).is_err() {
        return Err(bad(format!("{which}: {}: engine not found", c.display())));
    }
    Ok(())
}

/// The common part of planning a match or a verification: engines named, settings built,
/// book loaded, options parsed.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    games: &GamesConfig,
    names: [String; 2],
    a_options: OptionSet,
    b_options: OptionSet,
    flags: &MatchFlags,
    default_pairs: u64,
    config_concurrency: Option<usize>,
    config_seed: Option<u64>,
    event: String,
) -> Result<Plan> {
    check_command(&games.engine1, "engine 1")?;
    check_command(&games.engine2, "engine 2")?;
    let sprt = flags
        .sprt
        .as_deref()
        .map(Sprt::parse)
        .transpose()
        .map_err(bad)?;
    let default_pairs = if sprt.is_some() {
        SPRT_MAX_PAIRS
    } else {
        default_pairs
    };
    let pairs = flags.pairs.unwrap_or(default_pairs);
    if pairs == 0 {
        return Err(bad("--pairs must be at least 1"));
    }
    let concurrency = flags.concurrency.or(config_concurrency).unwrap_or(1);
    if !(1..=1024).contains(&concurrency) {
        return Err(bad(format!(
            "--concurrency must be between 1 and 1024, not {concurrency}"
        )));
    }
    let seed = flags
        .seed
        .or(config_seed)
        .unwrap_or_else(rand::random::<u64>);
    let mut setups = [
        arena::engine_setup(&names[0], &games.engine1),
        arena::engine_setup(&names[1], &games.engine2),
    ];
    if let Some(ms) = flags.handshake_timeout {
        for s in &mut setups {
            s.spec.handshake_timeout = Duration::from_millis(ms);
        }
    }
    let book = load_book(games, seed)?;
    let game = arena::game_settings(games)?;
    // Outputs are checked before any engine starts, as `spsa run` does.
    if let Some(pgn) = &games.pgn {
        check_output(pgn, flags.pgn.is_some(), "--pgn", "the PGN file")?;
    }
    if let Some(log) = &games.engine_log {
        let by_flag = flags.engine_log.is_some();
        check_output(log, by_flag, "--engine-log", "the engine log")?;
    }
    let record = super::record::default_path(flags.record.as_deref(), games.pgn.as_deref());
    if let Some(path) = &record {
        check_output(path, false, "", "the match record")?;
    }
    let description = format!(
        "{}, seed {seed}, book {}",
        game.time_control.describe(),
        match &games.book {
            Some(b) => format!(
                "{} ({} openings, {} order)",
                b.display(),
                book.len(),
                if games.book_random { "random" } else { "file" }
            ),
            None => "none (every pair starts from the initial position)".into(),
        }
    );
    Ok(Plan {
        setups,
        a_options,
        b_options,
        pairs,
        concurrency,
        book: Some(book),
        game,
        pgn: games.pgn.clone(),
        engine_log: games.engine_log.clone(),
        record,
        event,
        max_faulty_pairs: flags.max_faulty_pairs.max(1),
        seed,
        description,
        sprt,
        option_places: OptionPlaces::default(),
    })
}

/// An output file the plan writes, refused before any engine starts (exit 2) when it cannot be
/// written; named by its flag when `by_flag`, else as `what`.
fn check_output(path: &Path, by_flag: bool, flag: &str, what: &str) -> Result<()> {
    crate::config::check_writable(path).map_err(|problem| {
        let from = if by_flag { flag } else { what };
        bad(format!(
            "{from} `{}` cannot be written: {problem}",
            path.display()
        ))
    })
}

/// The most pairs an SPRT match plays when --pairs does not say.
const SPRT_MAX_PAIRS: u64 = 1_000_000;

impl MatchArgs {
    /// Combine the config (if any) and the flags into a plan.
    pub fn plan(&self) -> Result<Plan> {
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
                g
            }
            None if config.is_some() && self.engine1.is_none() => {
                return Err(bad(format!(
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
        let (s1, s2) = (stem(&games.engine1.command), stem(&games.engine2.command));
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
            &self.flags,
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
        Ok(plan)
    }
}

/// Options as `A=1 B=2`, or `defaults`.
pub fn describe_options(set: &OptionSet) -> String {
    if set.is_empty() {
        return "defaults".into();
    }
    crate::arena::describe_options(set, " ")
}

/// Run `spsa match` to its end or Ctrl-C and print the results.
pub async fn run_match(args: MatchArgs) -> Result<()> {
    let mut plan = args.plan()?;
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

/// The progress interval from the flags.
/// Play a planned match to its end (or Ctrl-C), quit the engines, and print the results.
pub async fn play_to_end(
    source: &GameSource,
    plan: &Plan,
    flags: &MatchFlags,
) -> anyhow::Result<()> {
    super::finish(play_collect(source, plan, flags).await)
}

/// Play a planned match to its end (or Ctrl-C), quit the engines and print the speed; the
/// outcome is the caller's to print.
pub async fn play_collect(
    source: &GameSource,
    plan: &Plan,
    flags: &MatchFlags,
) -> super::MatchOutcome {
    let out = super::play(
        source,
        plan.concurrency,
        plan.pairs,
        plan.sprt.as_ref(),
        plan.max_faulty_pairs,
        &crate::runtime::shutdown::Shutdown::on_signals(),
        progress_every(flags),
        plan.recording(),
    )
    .await;
    source.arena().quit_all().await;
    print_speed(&out);
    out
}

pub fn progress_every(f: &MatchFlags) -> Option<Duration> {
    (f.progress > 0.0 && f.progress.is_finite()).then(|| Duration::from_secs_f64(f.progress))
}

/// Games per minute and the median time between games, on stderr.
pub fn print_speed(out: &super::MatchOutcome) {
    let games = out.tally.games();
    let minutes = out.elapsed.as_secs_f64() / 60.0;
    eprintln!(
        "{games} games in {}, {:.1} games/min, median overhead per game {:.1} ms",
        crate::report::progress::format_duration(out.elapsed.as_secs_f64()),
        if minutes > 0.0 {
            games as f64 / minutes
        } else {
            0.0
        },
        out.median_overhead().as_secs_f64() * 1000.0
    );
}
