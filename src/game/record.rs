//! What a finished game leaves behind: the moves, the result, and why it ended.

use std::fmt;
use std::time::Duration;

use shakmaty::Color;

use crate::engine::{EngineFault, Score};

/// The game's result, as in the PGN `Result` tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    WhiteWins,
    BlackWins,
    Draw,
}

impl GameResult {
    /// A win for `winner`.
    pub fn win_for(winner: Color) -> GameResult {
        match winner {
            Color::White => GameResult::WhiteWins,
            Color::Black => GameResult::BlackWins,
        }
    }

    /// `1-0`, `0-1` or `1/2-1/2`.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    /// +1 (win), 0 (draw) or −1 (loss) from `color`'s point of view.
    pub fn value_for(self, color: Color) -> i32 {
        match (self, color) {
            (GameResult::Draw, _) => 0,
            (GameResult::WhiteWins, Color::White) | (GameResult::BlackWins, Color::Black) => 1,
            _ => -1,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pgn())
    }
}

/// Why a game ended. `Display` gives the exact reason written as the PGN's final comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The side to move is checkmated; `winner` delivered mate.
    Checkmate {
        winner: Color,
    },
    Stalemate,
    /// The same position (placement, side to move, castling, legal en passant) occurred a third
    /// time, counting the opening's book moves from its start.
    ThreefoldRepetition,
    /// 100 plies without a capture or pawn move.
    FiftyMoveRule,
    InsufficientMaterial,
    /// A well-formed UCI move that is not legal in the position: loss for `by`.
    IllegalMove {
        by: Color,
        token: String,
    },
    /// A `bestmove` token that is not UCI move syntax at all: loss for `by`.
    UnparsableMove {
        by: Color,
        token: String,
    },
    /// `bestmove (none)`/`0000` while legal moves exist: loss for `by`.
    NoMoveWithLegalMoves {
        by: Color,
    },
    /// The clock fell below −margin (or a movetime search overran by more than the margin).
    TimeForfeit {
        by: Color,
    },
    /// The engine process went away (or failed `ucinewgame`): loss for `by`.
    Disconnected {
        by: Color,
    },
    /// No `bestmove` before the stall deadline: loss for `by`.
    Stalled {
        by: Color,
    },
    /// The engine could not be (re)started: loss for `by`.
    StartupFailed {
        by: Color,
    },
    /// The game reached the configured maximum number of plies: draw.
    MaxLength {
        plies: u32,
    },
    /// Draw adjudication by score.
    DrawAdjudication,
    /// Win/resign adjudication by score.
    WinAdjudication {
        winner: Color,
    },
    /// The Syzygy tables say the side `winner` wins the position reached.
    TablebaseWin {
        winner: Color,
    },
    /// The Syzygy tables say the position reached is drawn (cursed wins and blessed losses
    /// included: the 50-move rule saves them).
    TablebaseDraw,
}

fn name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

impl EndReason {
    /// The result this end implies.
    pub fn result(&self) -> GameResult {
        use EndReason::*;
        match self {
            Checkmate { winner } | WinAdjudication { winner } | TablebaseWin { winner } => {
                GameResult::win_for(*winner)
            }
            Stalemate
            | ThreefoldRepetition
            | FiftyMoveRule
            | InsufficientMaterial
            | MaxLength { .. }
            | DrawAdjudication
            | TablebaseDraw => GameResult::Draw,
            IllegalMove { by, .. }
            | UnparsableMove { by, .. }
            | NoMoveWithLegalMoves { by }
            | TimeForfeit { by }
            | Disconnected { by }
            | Stalled { by }
            | StartupFailed { by } => GameResult::win_for(!*by),
        }
    }

    /// The kind of engine fault that ended the game, for fault counts; `None` for a game that
    /// ended by the rules or by adjudication.
    pub fn fault_kind(&self) -> Option<&'static str> {
        use EndReason::*;
        match self {
            IllegalMove { .. } | UnparsableMove { .. } => Some("illegal move"),
            NoMoveWithLegalMoves { .. } => Some("no move"),
            TimeForfeit { .. } => Some("time forfeit"),
            Disconnected { .. } => Some("crash"),
            Stalled { .. } => Some("stall"),
            StartupFailed { .. } => Some("startup"),
            _ => None,
        }
    }

    /// The colour whose engine faulted, when [`EndReason::fault_kind`] is `Some`.
    pub fn faulted(&self) -> Option<Color> {
        use EndReason::*;
        match self {
            IllegalMove { by, .. }
            | UnparsableMove { by, .. }
            | NoMoveWithLegalMoves { by }
            | TimeForfeit { by }
            | Disconnected { by }
            | Stalled { by }
            | StartupFailed { by } => Some(*by),
            _ => None,
        }
    }

    /// The PGN `Termination` tag value.
    pub fn termination(&self) -> &'static str {
        use EndReason::*;
        match self {
            Checkmate { .. }
            | Stalemate
            | ThreefoldRepetition
            | FiftyMoveRule
            | InsufficientMaterial => "normal",
            IllegalMove { .. } | UnparsableMove { .. } | NoMoveWithLegalMoves { .. } => {
                "rules infraction"
            }
            TimeForfeit { .. } => "time forfeit",
            Disconnected { .. } | StartupFailed { .. } => "abandoned",
            Stalled { .. } => "stalled connection",
            MaxLength { .. }
            | DrawAdjudication
            | WinAdjudication { .. }
            | TablebaseWin { .. }
            | TablebaseDraw => "adjudication",
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use EndReason::*;
        match self {
            Checkmate { winner } => write!(f, "{} mates", name(*winner)),
            Stalemate => f.write_str("Draw by stalemate"),
            ThreefoldRepetition => f.write_str("Draw by 3-fold repetition"),
            FiftyMoveRule => f.write_str("Draw by fifty moves rule"),
            InsufficientMaterial => f.write_str("Draw by insufficient mating material"),
            IllegalMove { by, token } => write!(f, "{} makes an illegal move: {token}", name(*by)),
            UnparsableMove { by, token } => {
                write!(f, "{} sends an unparsable move: {token}", name(*by))
            }
            NoMoveWithLegalMoves { by } => {
                write!(f, "{} claims no move while legal moves exist", name(*by))
            }
            TimeForfeit { by } => write!(f, "{} loses on time", name(*by)),
            Disconnected { by } => write!(f, "{} disconnects", name(*by)),
            Stalled { by } => write!(f, "{}'s connection stalls", name(*by)),
            StartupFailed { by } => write!(f, "{} fails to start", name(*by)),
            MaxLength { plies } => write!(f, "Draw by maximum game length ({plies} plies)"),
            DrawAdjudication => f.write_str("Draw by adjudication"),
            WinAdjudication { winner } => write!(f, "{} wins by adjudication", name(*winner)),
            TablebaseWin { winner } => write!(f, "{} wins by tablebase", name(*winner)),
            TablebaseDraw => f.write_str("Draw by tablebase"),
        }
    }
}

/// An engine fault that ended the game, with the colour of the engine that faulted, so the
/// caller can restart that engine (see [`EngineFault::needs_restart`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub color: Color,
    pub fault: EngineFault,
}

/// One move of the game, book or engine.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayedMove {
    /// UCI long algebraic, as sent to engines.
    pub uci: String,
    /// Standard algebraic notation with check/mate suffix.
    pub san: String,
    /// True for the opening's book moves (no engine searched them).
    pub book: bool,
    /// The mover's reported score (its own point of view).
    pub score: Option<Score>,
    pub depth: Option<u32>,
    /// Time charged to the mover (the arbiter's own measurement around the search call).
    pub elapsed: Duration,
}

/// A finished game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    pub white: String,
    pub black: String,
    /// The FEN the game (including its book moves) starts from.
    pub start_fen: String,
    /// Played with Chess960 castling (`start_fen` in X-FEN, UCI castling king-takes-rook).
    pub chess960: bool,
    /// Book moves first (`book == true`), then the engines' moves.
    pub moves: Vec<PlayedMove>,
    pub result: GameResult,
    pub end: EndReason,
    /// Set when an engine fault ended the game.
    pub fault: Option<Fault>,
    /// The PGN `TimeControl` tag value for the limit played.
    pub time_control: String,
    /// Where the opening came from (`file:line`), for logs.
    pub opening_source: String,
}

impl GameRecord {
    /// +1/0/−1 for the engine that played `color`.
    pub fn value_for(&self, color: Color) -> i32 {
        self.result.value_for(color)
    }

    /// Number of plies in the game including book moves (the PGN `PlyCount`).
    pub fn ply_count(&self) -> usize {
        self.moves.len()
    }
}
