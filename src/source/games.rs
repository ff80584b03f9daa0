//! Real games as a source: a trial of B pairs is 2B games, each a part the pool may put on any
//! slot; game 2j has the θ+ side (side A) as White, game 2j+1 as Black, both from opening
//! `trial.opening + j`. Used by tuning (the sides play the trial's values) and by `spsa match`
//! (the sides play fixed option sets).

use std::path::PathBuf;

use anyhow::{Context, Result};
use futures::future::BoxFuture;
use shakmaty::Color;

use super::{Fault, GameScore, Measurement, OpenRequest, Record, Source, Trial};
use crate::arena::{self, Arena, OptionSet, summarize_options};
use crate::config::{Config, GamesConfig};
use crate::engine::OptionValue;
use crate::game::{Book, BookOrder, BookPart, Holdout, Opening};
use crate::vars::Variable;

/// What each side plays with.
#[derive(Clone, Debug)]
pub enum Sides {
    /// Tuning: side A plays the trial's θ+ values, side B its θ− values, as these options.
    Tuned { names: Vec<String> },
    /// A match: fixed option sets.
    Fixed { a: OptionSet, b: OptionSet },
}

/// Where games are written.
#[derive(Clone, Debug, Default)]
pub struct GameFiles {
    /// Every game as PGN.
    pub pgn: Option<PathBuf>,
    /// A readable line per game, per slot: `$THREAD` becomes the slot number (1-based).
    pub game_log: Option<PathBuf>,
    /// The PGN Event tag.
    pub event: String,
    /// Tags added to every game (after the options).
    pub pgn_tags: Vec<(String, String)>,
}

impl GameFiles {
    fn game_log_for(&self, slot: usize) -> Option<PathBuf> {
        self.game_log.as_ref().map(|t| {
            PathBuf::from(
                t.to_string_lossy()
                    .replace("$THREAD", &(slot + 1).to_string()),
            )
        })
    }
}

/// Games in an [`Arena`].
pub struct GameSource {
    arena: Arena,
    sides: Sides,
    files: GameFiles,
    /// What the live Elo curve's measurements play (`[track]`).
    track: Option<TrackGames>,
}

/// The live curve's games: the held-out openings, and the engine's own values of the tuned
/// options for a measurement against its defaults.
struct TrackGames {
    book: std::sync::Arc<Book>,
    defaults: OptionSet,
}

/// An engine built from source names its commit in every game: `Engine1Source` and
/// `Engine2Source`, `REPOSITORY@COMMIT` (the full commit id once built).
fn source_tags(games: &crate::config::GamesConfig) -> Vec<(String, String)> {
    [
        ("Engine1Source", &games.engine1),
        ("Engine2Source", &games.engine2),
    ]
    .into_iter()
    .filter_map(|(tag, e)| {
        let s = e.source.as_ref()?;
        Some((tag.to_string(), format!("{}@{}", s.git, s.commit)))
    })
    .collect()
}

impl GameSource {
    pub fn new(arena: Arena, sides: Sides, files: GameFiles) -> Self {
        GameSource {
            arena,
            sides,
            files,
            track: None,
        }
    }

    /// The tuning source of a config: load the book, start the engines, and check that every
    /// variable is an option of both engines whose range covers its bounds, before any game.
    pub async fn open(req: &OpenRequest<'_>) -> Result<GameSource> {
        let config = req.config;
        let games = config
            .games
            .as_ref()
            .ok_or_else(|| crate::config::ConfigError::InFile {
                path: config.path.clone(),
                message: "no engines configured".into(),
            })?;
        let arena = start_arena(games, req.seed, req.slots)
            .await
            .map_err(|e| at_config_line(config, e))?;
        check_variables(&arena, req.vars).await?;
        let files = GameFiles {
            pgn: games.pgn.clone(),
            game_log: config.game_log.clone(),
            event: format!("spsa {}", config.path.display()),
            pgn_tags: games
                .limits
                .time_scale
                .map(|f| ("TimeControlScale".to_string(), format!("{f:.2}")))
                .into_iter()
                .chain(source_tags(games))
                .collect(),
        };
        let names: Vec<String> = req.vars.iter().map(|v| v.name.clone()).collect();
        let track = match &config.track {
            Some(plan) => {
                let defaults = if plan
                    .against
                    .contains(&crate::spsa::track::Against::Defaults)
                {
                    arena.declared_defaults(&names).await?
                } else {
                    OptionSet::new()
                };
                Some(TrackGames {
                    book: std::sync::Arc::new(held_out_book(games, req.seed)?),
                    defaults,
                })
            }
            None => None,
        };
        let mut source = GameSource::new(arena, Sides::Tuned { names }, files);
        source.track = track;
        Ok(source)
    }

    pub fn arena(&self) -> &Arena {
        &self.arena
    }

    /// The option values each side plays for this trial.
    pub fn option_sets(&self, trial: &Trial) -> (OptionSet, OptionSet) {
        match &self.sides {
            Sides::Fixed { a, b } => (a.clone(), b.clone()),
            Sides::Tuned { names } => {
                let set = |values: &[f64]| -> OptionSet {
                    names
                        .iter()
                        .zip(values)
                        .map(|(n, v)| (n.clone(), OptionValue::Number(*v)))
                        .collect()
                };
                match (trial.track, &self.track) {
                    (Some(u), Some(t)) if u.against == crate::spsa::track::Against::Defaults => {
                        (set(&trial.plus), t.defaults.clone())
                    }
                    _ => (set(&trial.plus), set(&trial.minus)),
                }
            }
        }
    }
}

impl Source for GameSource {
    fn parts(&self, trial: &Trial) -> usize {
        2 * trial.pairs.max(1) as usize
    }

    fn run_part<'a>(
        &'a self,
        slot: usize,
        trial: &'a Trial,
        part: usize,
    ) -> BoxFuture<'a, Result<Measurement>> {
        Box::pin(async move {
            let (a, b) = self.option_sets(trial);
            let a_white = part.is_multiple_of(2);
            let opening = trial.opening + (part / 2) as u64;
            let (played, round, event) = match (trial.track, &self.track) {
                (Some(u), Some(t)) => (
                    self.arena
                        .play_game_in(slot, &t.book, opening, a_white, &a, &b)
                        .await?,
                    format!("{}.{}", u.point, part + 1),
                    format!("{} track vs {}", self.files.event, u.against.name()),
                ),
                (Some(_), None) => {
                    anyhow::bail!("a live-curve measurement without held-out openings")
                }
                (None, _) => (
                    self.arena.play_game(slot, opening, a_white, &a, &b).await?,
                    format!("{}.{}", trial.iteration, part + 1),
                    self.files.event.clone(),
                ),
            };
            let g = &played.record;
            let a_color = if a_white { Color::White } else { Color::Black };
            let (white_options, black_options) = if a_white { (&a, &b) } else { (&b, &a) };
            let mut records = Vec::new();
            if let Some(path) = self.files.game_log_for(slot) {
                let note = match self.sides {
                    Sides::Tuned { .. } => format!(
                        "θ+ {}; θ− {}",
                        summarize_options(&a, " "),
                        summarize_options(&b, " ")
                    ),
                    Sides::Fixed { .. } => String::new(),
                };
                records.push(Record {
                    path,
                    text: arena::game_log_line(g, &round, slot, &note),
                });
            }
            if let Some(path) = &self.files.pgn {
                records.push(Record {
                    path: path.clone(),
                    text: arena::pgn_text(
                        g,
                        &event,
                        &round,
                        white_options,
                        black_options,
                        &self.files.pgn_tags,
                    ),
                });
            }
            Ok(Measurement {
                games: vec![GameScore::from_value(g.value_for(a_color))],
                faulted_games: u32::from(g.end.fault_kind().is_some()),
                faults: played
                    .faults
                    .into_iter()
                    .map(|(side, kind)| Fault { side, kind })
                    .collect(),
                engine_moves: g.moves.iter().filter(|m| !m.book).count() as u64,
                overhead_us: played.overhead.as_micros() as u64,
                loss: None,
                records,
            })
        })
    }

    fn outputs(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self.files.pgn.iter().cloned().collect();
        out.extend((0..self.arena.slots()).filter_map(|s| self.files.game_log_for(s)));
        out
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.arena.quit_all())
    }
}

/// An option the engine refuses in a fixed-options table is reported at the config line that
/// set it (file, line, key), with the engine's own explanation.
fn at_config_line(config: &Config, err: anyhow::Error) -> anyhow::Error {
    arena::option_error_at(err, ["Engine1", "Engine2"], |side, option, message| {
        config
            .option_error(side, option, message)
            .map(anyhow::Error::from)
    })
}

/// Load the book's tuning part and start the engine pairs of a config.
pub async fn start_arena(games: &GamesConfig, seed: u64, slots: usize) -> Result<Arena> {
    let book = tuning_book(games, seed)?;
    let setups = [
        arena::engine_setup("Engine1", &games.engine1),
        arena::engine_setup("Engine2", &games.engine2),
    ];
    let log = arena::open_engine_log(games.engine_log.as_deref())?;
    let settings = arena::game_settings(games)?;
    Arena::start(setups, slots, book, settings, log, games.bind_cores).await
}

/// The openings a tune plays: the book less its held-out part (drawn with the run's seed), or
/// all of it with `verify_book` or `holdout = 0`; the start position without a book.
pub fn tuning_book(games: &GamesConfig, seed: u64) -> Result<Book> {
    let Some(path) = &games.book else {
        return Book::from_openings(vec![Opening::start_position()], BookOrder::Sequential, seed)
            .context("empty book");
    };
    let book = Book::load(path, &arena::book_options(games, seed))?;
    if games.verify_book.is_some() {
        return Ok(book);
    }
    let holdout = Holdout {
        share: games.holdout,
        seed,
    };
    Ok(book.part(holdout, BookPart::Tuning)?)
}

/// The openings the live Elo curve measures on, which the tune never plays: `verify_book`, or
/// the book's held-out part (the split [`tuning_book`] leaves out). The config refuses
/// `[track]` without either.
pub fn held_out_book(games: &GamesConfig, seed: u64) -> Result<Book> {
    let options = arena::book_options(games, seed);
    if let Some(path) = &games.verify_book {
        return Ok(Book::load(path, &options)?);
    }
    let Some(path) = &games.book else {
        anyhow::bail!("the live Elo curve needs held-out openings: a [games] book");
    };
    let holdout = Holdout {
        share: games.holdout,
        seed,
    };
    if holdout.share <= 0.0 {
        anyhow::bail!("the live Elo curve needs held-out openings: games.holdout above 0");
    }
    Ok(Book::load(path, &options)?.part(holdout, BookPart::HeldOut)?)
}

/// The split of its book a tune of games records with its seed (see
/// [`crate::tuner::checkpoint::RunState::holdout`]), so resume and verification draw the same one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecordedSplit {
    /// The held-out share: the config's, or 0 with a separate `verify_book` (no split).
    pub share: f64,
    /// How many openings the book has (`None` without a split, or if it cannot be read: the
    /// run's start reports that).
    pub openings: Option<u64>,
}

/// The split a tune of `config` records: `None` for a run without a book, or simulated.
pub fn recorded_split(config: &Config) -> Option<RecordedSplit> {
    let g = config.games.as_ref().filter(|_| !config.simulate)?;
    let path = g.book.as_ref()?;
    let share = if g.verify_book.is_some() {
        0.0
    } else {
        g.holdout
    };
    let openings = if share > 0.0 {
        Book::load(path, &arena::book_options(g, 0))
            .ok()
            .map(|b| b.len() as u64)
    } else {
        None
    };
    Some(RecordedSplit { share, openings })
}

/// Every variable must be an option of both engines whose range covers its bounds.
async fn check_variables(arena: &Arena, vars: &[Variable]) -> Result<()> {
    for end in [0, 1] {
        let wishes: OptionSet = vars
            .iter()
            .map(|v| {
                let value = if end == 0 { v.min } else { v.max };
                (v.name.clone(), OptionValue::Number(value.round()))
            })
            .collect();
        arena.validate(&wishes, &wishes).await?;
    }
    Ok(())
}
