//! One UCI engine process: spawn, handshake, options, `position`/`go`, reading `info`/`bestmove`
//! with deadlines. Knows the UCI protocol, never the rules of chess.
//!
//! The [`Player`] trait is the seam between this module and the arbiter in `game/`: the arbiter
//! plays games against anything that implements it (real engines here, scripted fakes in tests).

use std::future::Future;
use std::time::Duration;

pub mod bench;
pub mod build;
pub mod identity;
pub mod log;
pub mod options;
pub mod parse;
mod process;
pub mod setup;
mod watchdog;

pub use log::{EngineLog, LogSeat};
pub use options::{NODESTIME, OptionError, OptionKind, OptionValue, UCI_CHESS960, UciOption};
pub use process::{EngineError, EngineSpec, UciEngine};

/// A search score as the engine reports it, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves; negative when the side to move is being mated.
    Mate(i32),
}

/// Limits for one `go` command. Fields left `None` are not sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoCommand {
    pub wtime_ms: Option<u64>,
    pub btime_ms: Option<u64>,
    pub winc_ms: Option<u64>,
    pub binc_ms: Option<u64>,
    pub movestogo: Option<u32>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    pub movetime_ms: Option<u64>,
}

/// What the engine answered with `bestmove`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BestMove {
    /// The move token exactly as sent (not yet checked for legality: that is the arbiter's job).
    Move(String),
    /// `bestmove (none)` or `bestmove 0000`: the engine claims it has no move.
    NoMove,
}

/// One finished search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchReply {
    pub best: BestMove,
    /// The last score the engine reported during this search, if any.
    pub score: Option<Score>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// Wall time from writing `go` to reading `bestmove`, measured by us.
    pub elapsed: Duration,
}

/// Why an engine could not give a move. Every variant costs the engine the game; the caller
/// restarts the process when [`EngineFault::needs_restart`] says so.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineFault {
    /// The process exited or closed its output.
    #[error("engine disconnected: {0}")]
    Disconnected(String),
    /// No `bestmove` before the deadline (or no `readyok` in time, then with `answered_stop:
    /// false`). `answered_stop` tells whether it obeyed `stop` afterwards.
    #[error("engine stalled (no answer after {waited:?}, answered stop: {answered_stop})")]
    Stalled {
        waited: Duration,
        answered_stop: bool,
    },
    /// The engine could not be started or failed its handshake: `cannot start engine `x`
    /// (path): …`.
    #[error("{0}")]
    Startup(String),
}

/// An engine that does not start (a wrong path, not a UCI engine) is the user's to fix; one
/// that crashes or stalls in a game is not.
impl crate::error::UserFacing for EngineFault {
    fn is_user_error(&self) -> bool {
        matches!(self, EngineFault::Startup(_))
    }
}

impl EngineFault {
    /// Whether the process is no longer usable and must be restarted before the next game.
    pub fn needs_restart(&self) -> bool {
        !matches!(
            self,
            EngineFault::Stalled {
                answered_stop: true,
                ..
            }
        )
    }
}

/// Something that can play chess moves over UCI-like exchanges. Implemented by the real engine
/// process and by test fakes; the arbiter in `game/` is generic over it.
pub trait Player: Send {
    /// A short name for logs and PGN tags.
    fn name(&self) -> &str;

    /// Prepare for a new game (`ucinewgame` + `isready`).
    fn new_game(&mut self) -> impl Future<Output = Result<(), EngineFault>> + Send;

    /// Search the position reached from `start_fen` by `moves` (UCI long algebraic) under `go`.
    /// If no `bestmove` arrives within `deadline`, send `stop`, give the engine a short grace, and
    /// return [`EngineFault::Stalled`].
    fn search(
        &mut self,
        start_fen: &str,
        moves: &[String],
        go: &GoCommand,
        deadline: Duration,
    ) -> impl Future<Output = Result<SearchReply, EngineFault>> + Send;
}
