//! Games between two [`crate::engine::Player`]s: the arbiter (rules and adjudication with
//! shakmaty), clocks and limits, the opening book, PGN writing. Knows nothing about SPSA.
//!
//! A match runner loads a [`Book`] once, takes `book.opening_for(pair_index)` for each game
//! pair, plays it twice with colours reversed via [`play_game`], writes each [`GameRecord`] with
//! [`write_pgn`], and restarts an engine when [`GameRecord::fault`] names it and
//! [`crate::engine::EngineFault::needs_restart`] says so.
//!
//! ```text
//! let opening = book.opening_for(task.opening);          // pure in (seed, index)
//! let g1 = play_game(&mut plus, &mut minus, opening, &settings).await;   // θ+ White
//! restart_if_needed(&g1, plus_is = White);                // g1.fault: colour + EngineFault
//! let g2 = play_game(&mut minus, &mut plus, opening, &settings).await;   // θ+ Black
//! restart_if_needed(&g2, plus_is = Black);
//! scores = [g1.value_for(White), g2.value_for(Black)]     // +1/0/−1 for θ+
//! ```

mod adjudication;
mod arbiter;
mod book;
pub(crate) mod epd;
pub mod fake;
mod opening;
mod pgn;
pub(crate) mod pgn_read;
mod record;
mod rules;
mod settings;
mod tablebase;

pub use adjudication::Adjudicator;
pub use arbiter::play_game;
pub use book::{
    Book, BookOptions, BookOrder, BookPart, DEFAULT_HOLDOUT, Holdout, Variant, chess960_back_rank,
    chess960_start_fen,
};
pub use opening::{BookError, Opening, START_FEN};
pub use pgn::{PgnOptions, write_pgn};
pub use record::{EndReason, Fault, GameRecord, GameResult, PlayedMove};
pub use settings::{
    Adjudication, ClockVerdict, Clocks, DrawAdjudication, GameSettings, TimeControl,
    WinAdjudication,
};
pub use tablebase::{TablebaseError, Tablebases};
