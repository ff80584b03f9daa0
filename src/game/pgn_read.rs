//! Reading PGN games (writing them is `pgn.rs`): each game's start position and main line, for
//! books and for extracting labelled positions.

use std::io::{self, Seek};
use std::ops::ControlFlow;
use std::path::Path;

use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use shakmaty::{CastlingMode, Chess, Move, Position};

use super::opening::{BookError, Opening, PositionError, START_FEN, invalid, parse_position};

/// Reads one PGN game: the start position (FEN tag or standard) and its main-line moves.
struct BookVisitor {
    max_plies: Option<usize>,
    /// The book's rules; `None`: each game's own, Chess960 when its `Variant` tag says so,
    /// standard otherwise.
    mode: Option<CastlingMode>,
}

struct GameTags {
    fen: Option<String>,
    variant: Option<String>,
    result: Option<String>,
    termination: Option<String>,
}

/// One PGN game being read: its start position, the current position, the moves so far.
struct PgnGame {
    start: Chess,
    pos: Chess,
    moves: Vec<Move>,
    result: Option<String>,
    termination: Option<String>,
}

impl PgnGame {
    fn new(start: Chess, tags: GameTags) -> PgnGame {
        PgnGame {
            pos: start.clone(),
            start,
            moves: Vec::new(),
            result: tags.result,
            termination: tags.termination,
        }
    }
}

/// One game's main line as read from a PGN file, with the tags that say how it ended (for
/// extracting labelled positions).
pub(crate) struct PgnMainLine {
    pub start: Chess,
    pub moves: Vec<Move>,
    /// The `Result` tag as written.
    pub result: Option<String>,
    /// The `Termination` tag as written (`adjudication` for adjudicated games).
    pub termination: Option<String>,
    /// The line the game starts on.
    pub line: usize,
}

type GameOutput = Result<PgnGame, PositionError>;

impl Visitor for BookVisitor {
    type Tags = GameTags;
    type Movetext = PgnGame;
    type Output = GameOutput;

    fn begin_tags(&mut self) -> ControlFlow<GameOutput, GameTags> {
        ControlFlow::Continue(GameTags {
            fen: None,
            variant: None,
            result: None,
            termination: None,
        })
    }

    fn tag(
        &mut self,
        tags: &mut GameTags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<GameOutput> {
        let value = value.decode_utf8_lossy().into_owned();
        match name {
            b"FEN" => tags.fen = Some(value),
            b"Variant" => tags.variant = Some(value),
            b"Result" => tags.result = Some(value),
            b"Termination" => tags.termination = Some(value),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: GameTags) -> ControlFlow<GameOutput, PgnGame> {
        let chess960 = match tags
            .variant
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("from position") => None,
            Some("standard" | "chess" | "normal") => Some(false),
            Some("chess960" | "chess 960" | "960" | "fischerandom" | "fischer random") => {
                Some(true)
            }
            Some(_) => {
                let v = tags.variant.as_deref().unwrap_or_default();
                return ControlFlow::Break(Err(PositionError::Invalid(format!(
                    "unsupported variant {v:?}"
                ))));
            }
        };
        let mode = self.mode.unwrap_or(if chess960 == Some(true) {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        });
        match (chess960, mode) {
            (Some(true), CastlingMode::Standard) => {
                return ControlFlow::Break(Err(PositionError::NeedsChess960(
                    "the game's Variant tag is Chess960".into(),
                )));
            }
            (Some(false), CastlingMode::Chess960) => {
                return ControlFlow::Break(Err(PositionError::Invalid(
                    "a standard-chess game (its Variant tag) in a Chess960 book: the book \
                     mixes variants"
                        .into(),
                )));
            }
            _ => {}
        }
        let fen = tags.fen.as_deref().unwrap_or(START_FEN);
        match parse_position(fen, mode) {
            Ok(pos) => ControlFlow::Continue(PgnGame::new(pos, tags)),
            Err(e) => ControlFlow::Break(Err(e)),
        }
    }

    fn san(&mut self, game: &mut PgnGame, san: SanPlus) -> ControlFlow<GameOutput> {
        if self.max_plies.is_some_and(|max| game.moves.len() >= max) {
            return ControlFlow::Continue(());
        }
        match san.san.to_move(&game.pos) {
            Ok(m) => {
                game.pos.play_unchecked(m);
                game.moves.push(m);
                ControlFlow::Continue(())
            }
            Err(_) => ControlFlow::Break(Err(PositionError::Invalid(format!(
                "illegal move {} after {} plies",
                san,
                game.moves.len()
            )))),
        }
    }

    fn end_game(&mut self, game: PgnGame) -> GameOutput {
        Ok(game)
    }
}

pub(super) fn parse_pgn(
    path: &Path,
    bytes: &[u8],
    max_plies: Option<usize>,
    mode: CastlingMode,
) -> Result<Vec<Opening>, BookError> {
    let mut openings = Vec::new();
    read_pgn_games(path, bytes, max_plies, Some(mode), |game| {
        let source = format!("{}:{}", path.display(), game.line);
        let opening = Opening::from_moves(mode, game.start, game.moves, source, None)
            .map_err(|m| invalid(path, game.line, m))?;
        openings.push(opening);
        Ok(())
    })?;
    Ok(openings)
}

/// Read every game of a PGN text (at most `max_plies` plies of each) and hand its main line to
/// `each`, in file order, with `mode`'s castling, or (`None`) each game with its own: Chess960
/// when its `Variant` tag is Chess960 (or Fischerandom), standard otherwise. A bad game, or one
/// of another variant, is an error naming the line it starts on.
pub(crate) fn read_pgn_games(
    path: &Path,
    bytes: &[u8],
    max_plies: Option<usize>,
    mode: Option<CastlingMode>,
    mut each: impl FnMut(PgnMainLine) -> Result<(), BookError>,
) -> Result<(), BookError> {
    let bytes = crate::textfile::strip_bom(bytes);
    let mut reader = Reader::new(io::Cursor::new(bytes));
    let mut visitor = BookVisitor { max_plies, mode };
    let io_err = |cause| BookError::Io {
        path: path.to_path_buf(),
        cause,
    };
    loop {
        if !reader.has_more().map_err(io_err)? {
            break;
        }
        // The reader skipped whitespace up to the game's first byte: its line for messages.
        let offset = reader.stream_position().map_err(io_err)? as usize;
        let line = bytes[..offset.min(bytes.len())]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        let Some(game) = reader.read_game(&mut visitor).map_err(io_err)? else {
            break;
        };
        let game = game.map_err(|e| e.at(path, line))?;
        each(PgnMainLine {
            start: game.start,
            moves: game.moves,
            result: game.result,
            termination: game.termination,
            line,
        })?;
    }
    Ok(())
}
