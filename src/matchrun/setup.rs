//! What a match plays: both engines' setups and option sets, the book, the limits, the pairs,
//! the SPRT, where the games and the record go, checked before any engine starts. Built by
//! `spsa match` and `spsa verify` from their flags (`cli::match`, `cli::verify`) and by the
//! pilot of `spsa plan --measure` ([`crate::plan::pilot`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::arena::option_error_at;
use crate::arena::{self, Arena, EngineSetup, OptionSet};
use crate::config::{Config, EngineConfig, GamesConfig};
use crate::error::user_error;
use crate::game::GameSettings;
use crate::game::{Book, BookOrder, Opening};
use crate::source::games::{GameFiles, GameSource, Sides};
use crate::stats::sprt::Sprt;

/// The name a side plays under: its binary's file stem, and for one built from source `@` and
/// the commit's first 8 digits (`eng@1a2b3c4d`), so two commits of one program differ.
pub fn engine_name(engine: &EngineConfig) -> String {
    let command = &engine.command;
    let stem = command
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| command.display().to_string());
    match &engine.source {
        Some(s) => format!("{stem}@{}", s.commit.get(..8).unwrap_or(&s.commit)),
        None => stem,
    }
}

/// The settings of a match beyond its games config: what the flags (or the pilot) ask for.
#[derive(Clone, Debug, Default)]
pub struct MatchSettings {
    /// Game pairs to play (default: the caller's, or the SPRT's ceiling).
    pub pairs: Option<u64>,
    /// Pairs in flight at once (default: the config's concurrency, else 1).
    pub concurrency: Option<usize>,
    /// The book order's seed (default: the config's, else random).
    pub seed: Option<u64>,
    /// `ELO0,ELO1[,ALPHA,BETA]`: stop when this test decides.
    pub sprt: Option<String>,
    /// How long an engine may take to answer `uci`.
    pub handshake_timeout: Option<Duration>,
    /// The PGN file was named by `--pgn` (not by the config), for the message if it cannot be
    /// written.
    pub pgn_flag: bool,
    /// The engine log was named by `--engine-log` (not by the config), for the same message.
    pub engine_log_flag: bool,
    /// The match record's file (default: beside the PGN file).
    pub record: Option<PathBuf>,
    /// Stop after this many pairs in a row in which every game ended in an engine fault.
    pub max_faulty_pairs: u32,
    /// Go on with the match the record holds (`--resume`).
    pub resume: bool,
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
    /// Bind slots to cores of their own when they fill the cores (`games.bind_cores`).
    pub bind_cores: bool,
    /// The match record's file ([`super::record`]).
    pub record: Option<PathBuf>,
    /// The earlier run of this match to go on with (`--resume`), checked against this plan.
    pub resumed: Option<super::MatchRecord>,
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
            return Some(user_error(format!("--option {option}: {message}")));
        }
        self.config
            .as_ref()?
            .option_error(side, option, message)
            .map(anyhow::Error::from)
    }

    /// A side's own option refused: at its flag.
    fn side(&self, side: usize, option: &str, message: &str) -> Option<anyhow::Error> {
        let flag = self.side_flags[side - 1]?;
        Some(user_error(format!("{flag} {option}: {message}")))
    }
}

impl Plan {
    /// The match record to keep, when the plan has a place for one: nothing played yet, or
    /// the resumed match's record.
    pub fn recording(&self) -> Option<super::Recording> {
        let path = self.record.clone()?;
        if let Some(earlier) = &self.resumed {
            return Some(super::Recording {
                path,
                record: earlier.clone(),
                resumed: true,
            });
        }
        Some(super::Recording {
            path,
            resumed: false,
            record: self.fresh_record(),
        })
    }

    /// The record this match starts with when nothing was played.
    fn fresh_record(&self) -> super::MatchRecord {
        let (a, b) = self.names();
        super::MatchRecord::start(
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
        )
    }

    /// With `--resume`: read the match's record and check that it is this match, before any
    /// engine starts. A missing record, or one of another match, is the user's to fix.
    fn take_resumed(&mut self) -> Result<()> {
        let Some(path) = &self.record else {
            return Err(user_error(
                "--resume goes on with a match from its record: give --record FILE or --pgn FILE (the record is then beside it)",
            ));
        };
        if !path.exists() {
            return Err(user_error(format!(
                "--resume: no match record at {} to go on with",
                path.display()
            )));
        }
        let earlier =
            super::MatchRecord::read(path).map_err(|e| user_error(format!("--resume: {e:#}")))?;
        let earlier = earlier
            .resume_as(&self.fresh_record())
            .map_err(|why| user_error(format!("--resume: {}: {why}", path.display())))?;
        self.resumed = Some(earlier);
        Ok(())
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
            self.bind_cores,
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

/// Load the book (or the start position when there is none).
pub fn load_book(games: &GamesConfig, seed: u64) -> Result<Book> {
    match &games.book {
        Some(path) => {
            if std::fs::metadata(path).is_err() {
                return Err(user_error(format!("{}: book not found", path.display())));
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
        return Err(user_error(format!(
            "{which}: {}: engine not found",
            c.display()
        )));
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
    settings: &MatchSettings,
    default_pairs: u64,
    config_concurrency: Option<usize>,
    config_seed: Option<u64>,
    event: String,
) -> Result<Plan> {
    check_command(&games.engine1, "engine 1")?;
    check_command(&games.engine2, "engine 2")?;
    let sprt = settings
        .sprt
        .as_deref()
        .map(Sprt::parse)
        .transpose()
        .map_err(user_error)?;
    let default_pairs = if sprt.is_some() {
        SPRT_MAX_PAIRS
    } else {
        default_pairs
    };
    let pairs = settings.pairs.unwrap_or(default_pairs);
    if pairs == 0 {
        return Err(user_error("--pairs must be at least 1"));
    }
    let concurrency = settings.concurrency.or(config_concurrency).unwrap_or(1);
    if !(1..=1024).contains(&concurrency) {
        return Err(user_error(format!(
            "--concurrency must be between 1 and 1024, not {concurrency}"
        )));
    }
    let seed = settings
        .seed
        .or(config_seed)
        .unwrap_or_else(rand::random::<u64>);
    let mut setups = [
        arena::engine_setup(&names[0], &games.engine1),
        arena::engine_setup(&names[1], &games.engine2),
    ];
    if let Some(timeout) = settings.handshake_timeout {
        for s in &mut setups {
            s.spec.handshake_timeout = timeout;
        }
    }
    let book = load_book(games, seed)?;
    let game = arena::game_settings(games)?;
    // Outputs are checked before any engine starts, as `spsa run` does.
    if let Some(pgn) = &games.pgn {
        check_output(pgn, settings.pgn_flag, "--pgn", "the PGN file")?;
    }
    if let Some(log) = &games.engine_log {
        check_output(
            log,
            settings.engine_log_flag,
            "--engine-log",
            "the engine log",
        )?;
    }
    let record = super::record::default_path(settings.record.as_deref(), games.pgn.as_deref());
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
    let mut plan = Plan {
        setups,
        a_options,
        b_options,
        pairs,
        concurrency,
        book: Some(book),
        game,
        pgn: games.pgn.clone(),
        engine_log: games.engine_log.clone(),
        bind_cores: games.bind_cores,
        record,
        resumed: None,
        event,
        max_faulty_pairs: settings.max_faulty_pairs.max(1),
        seed,
        description,
        sprt,
        option_places: OptionPlaces::default(),
    };
    if settings.resume {
        plan.take_resumed()?;
    }
    Ok(plan)
}

/// An output file the plan writes, refused before any engine starts (exit 2) when it cannot be
/// written; named by its flag when `by_flag`, else as `what`.
fn check_output(path: &Path, by_flag: bool, flag: &str, what: &str) -> Result<()> {
    crate::config::check_writable(path).map_err(|problem| {
        let from = if by_flag { flag } else { what };
        user_error(format!(
            "{from} `{}` cannot be written: {problem}",
            path.display()
        ))
    })
}

/// The most pairs an SPRT match plays when --pairs does not say.
const SPRT_MAX_PAIRS: u64 = 1_000_000;

/// Options as `A=1 B=2`, or `defaults`.
pub fn describe_options(set: &OptionSet) -> String {
    if set.is_empty() {
        return "defaults".into();
    }
    crate::arena::describe_options(set, " ")
}
