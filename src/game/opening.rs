//! One opening (a start position and the moves after it, checked against the rules) and why
//! one could not be used: what the book (`book.rs`) and its readers (`epd.rs`, `pgn_read.rs`)
//! share, so that neither reader needs the book.

use std::io;
use std::path::{Path, PathBuf};

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use super::rules::{position_key, rules_end};

/// The standard start position.
pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// Why an opening or a book could not be used.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    #[error("{path}: {cause}")]
    Io { path: PathBuf, cause: io::Error },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A position that reads only with Chess960 castling, in a book read as standard chess.
    #[error(
        "{path}:{line}: {message}: a Chess960 position in a book read as standard chess; set \
         `variant = \"chess960\"` under [games] (or leave `variant` out and let the book decide)"
    )]
    NeedsChess960 {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: the book has no openings")]
    Empty { path: PathBuf },
    #[error(
        "{path}: {len} opening(s) cannot be split into tuning and held-out openings (holdout = \
         {share}); give a book of at least 2 openings, `verify_book = FILE`, or `holdout = 0` to \
         verify on the tune's own openings"
    )]
    TooSmallToSplit {
        path: PathBuf,
        len: usize,
        share: f64,
    },
    #[error(
        "{path}: the book has {len} openings, but the run's split was drawn from {drawn_from}: \
         the same seed would now hold out other openings; restore the book, or give \
         --book FILE to verify, or start the tune anew (--fresh)"
    )]
    Changed {
        path: PathBuf,
        len: usize,
        drawn_from: u64,
    },
}

/// A book that cannot be read or used (or no longer matches the run's split) is the user's to
/// fix.
impl crate::error::UserFacing for BookError {
    fn is_user_error(&self) -> bool {
        true
    }
}

/// A validated opening: a start position and book moves from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Opening {
    /// Standard or Chess960 castling: how moves are spelled in UCI and FENs read.
    pub(super) mode: CastlingMode,
    start: Chess,
    start_fen: String,
    moves: Vec<Move>,
    moves_uci: Vec<String>,
    source: String,
    id: Option<String>,
}

impl Opening {
    /// Build and validate an opening: `fen` must be a legal standard-chess position, every move
    /// (UCI) legal in turn, and the final position must not be over (mate, stalemate,
    /// insufficient material, 50-move rule or threefold repetition). The error is a message
    /// without location; [`Book::load`] adds file and line.
    pub fn new(
        fen: &str,
        moves_uci: &[&str],
        source: impl Into<String>,
    ) -> Result<Opening, String> {
        Opening::new_in(CastlingMode::Standard, fen, moves_uci, source)
    }

    /// [`Opening::new`] with `mode`'s castling: Chess960 reads X-FEN and Shredder-FEN castling
    /// fields and spells castling king-takes-rook.
    pub fn new_in(
        mode: CastlingMode,
        fen: &str,
        moves_uci: &[&str],
        source: impl Into<String>,
    ) -> Result<Opening, String> {
        let start = parse_position(fen, mode).map_err(PositionError::into_message)?;
        let mut moves = Vec::new();
        let mut pos = start.clone();
        for token in moves_uci {
            let m = token
                .parse::<UciMove>()
                .map_err(|_| format!("unparsable move {token:?}"))?
                .to_move(&pos)
                .map_err(|_| format!("illegal move {token:?}"))?;
            pos.play_unchecked(m);
            moves.push(m);
        }
        Opening::from_moves(mode, start, moves, source.into(), None)
    }

    pub(super) fn from_moves(
        mode: CastlingMode,
        start: Chess,
        moves: Vec<Move>,
        source: String,
        id: Option<String>,
    ) -> Result<Opening, String> {
        let start_fen = Fen::from_position(&start, EnPassantMode::Legal).to_string();
        let mut pos = start.clone();
        let mut hashes = vec![position_key(&pos)];
        let mut moves_uci = Vec::new();
        for m in &moves {
            moves_uci.push(m.to_uci(mode).to_string());
            pos.play_unchecked(*m);
            hashes.push(position_key(&pos));
        }
        if let Some(end) = rules_end(&pos, &hashes) {
            return Err(format!("the opening position is already over: {end}"));
        }
        Ok(Opening {
            mode,
            start,
            start_fen,
            moves,
            moves_uci,
            source,
            id,
        })
    }

    /// The standard start position with no book moves.
    pub fn start_position() -> Opening {
        Opening::from_moves(
            CastlingMode::Standard,
            Chess::default(),
            Vec::new(),
            "startpos".into(),
            None,
        )
        .unwrap_or_else(|_| unreachable!("the start position is not over"))
    }

    /// Standard or Chess960 castling.
    pub fn castling_mode(&self) -> CastlingMode {
        self.mode
    }

    /// The FEN the opening starts from (what engines get in `position fen`; X-FEN castling
    /// for Chess960 positions).
    pub fn start_fen(&self) -> &str {
        &self.start_fen
    }

    pub(crate) fn start(&self) -> &Chess {
        &self.start
    }

    pub(crate) fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The book moves in UCI notation, from [`Opening::start_fen`].
    pub fn moves_uci(&self) -> &[String] {
        &self.moves_uci
    }

    /// The position after the book moves.
    pub fn position(&self) -> Chess {
        let mut pos = self.start.clone();
        for m in &self.moves {
            pos.play_unchecked(*m);
        }
        pos
    }

    /// The position after the book moves as FEN.
    pub fn fen(&self) -> String {
        Fen::from_position(&self.position(), EnPassantMode::Legal).to_string()
    }

    /// Where the opening was read: `file:line`.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The EPD `id` opcode, if any.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// Why a FEN is not a start position in the mode asked for.
#[derive(Debug)]
pub(super) enum PositionError {
    Invalid(String),
    /// Illegal as standard chess, legal with Chess960 castling.
    NeedsChess960(String),
}

impl PositionError {
    fn into_message(self) -> String {
        match self {
            PositionError::Invalid(m) | PositionError::NeedsChess960(m) => m,
        }
    }

    pub(super) fn at(self, path: &Path, line: usize) -> BookError {
        match self {
            PositionError::Invalid(m) => invalid(path, line, m),
            PositionError::NeedsChess960(message) => BookError::NeedsChess960 {
                path: path.to_path_buf(),
                line,
                message,
            },
        }
    }
}

pub(super) fn parse_position(fen: &str, mode: CastlingMode) -> Result<Chess, PositionError> {
    let parsed: Fen = fen
        .parse()
        .map_err(|e| PositionError::Invalid(format!("bad FEN {fen:?}: {e}")))?;
    parsed.clone().into_position(mode).map_err(|e| {
        let message = format!("illegal position {fen:?}: {e}");
        if mode == CastlingMode::Standard
            && parsed
                .into_position::<Chess>(CastlingMode::Chess960)
                .is_ok()
        {
            PositionError::NeedsChess960(message)
        } else {
            PositionError::Invalid(message)
        }
    })
}

/// A book error at `path`, line `line`.
pub(super) fn invalid(path: &Path, line: usize, message: impl Into<String>) -> BookError {
    BookError::Invalid {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}
