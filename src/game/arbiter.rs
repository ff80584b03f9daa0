//! The arbiter: plays one game between two [`Player`]s from an [`Opening`], owning the real
//! position and checking every move and every end condition.

use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Color, Position};
use tokio::time::Instant;

use super::adjudication::Adjudicator;
use super::opening::Opening;
use super::record::{EndReason, Fault, GameRecord, PlayedMove};
use super::rules::{position_key, rules_end};
use super::settings::{ClockVerdict, Clocks, GameSettings};
use crate::engine::{BestMove, EngineFault, Player, SearchReply};

fn fault_reason(by: Color, fault: &EngineFault) -> EndReason {
    match fault {
        EngineFault::Disconnected(_) => EndReason::Disconnected { by },
        EngineFault::Stalled { .. } => EndReason::Stalled { by },
        EngineFault::Startup(_) => EndReason::StartupFailed { by },
    }
}

/// Play one game: `white` moves first from the opening's start (book moves are played by the
/// arbiter, then the side to move after the book is whoever's turn it is).
///
/// Time is measured by the arbiter itself with [`tokio::time::Instant`] around each `search`
/// call (so it includes the exchange overhead and is under tokio's clock in tests);
/// `SearchReply::elapsed` is not used for the clock.
///
/// Engines receive the opening's start FEN and every move since (book moves included), so
/// they see the same history the arbiter counts repetitions over.
///
/// Never fails: every problem with a player ends the game and is recorded in
/// [`GameRecord::end`] and, for engine faults, [`GameRecord::fault`].
pub async fn play_game<W: Player, B: Player>(
    white: &mut W,
    black: &mut B,
    opening: &Opening,
    settings: &GameSettings,
) -> GameRecord {
    let mut game = Game {
        record: GameRecord {
            white: white.name().to_string(),
            black: black.name().to_string(),
            start_fen: opening.start_fen().to_string(),
            chess960: opening.castling_mode() == CastlingMode::Chess960,
            moves: Vec::new(),
            result: super::record::GameResult::Draw,
            end: EndReason::Stalemate,
            fault: None,
            time_control: settings.time_control.pgn_tag(),
            opening_source: opening.source().to_string(),
        },
    };

    if let Err(fault) = white.new_game().await {
        return game.finish_fault(Color::White, fault);
    }
    if let Err(fault) = black.new_game().await {
        return game.finish_fault(Color::Black, fault);
    }

    let mode = opening.castling_mode();
    let mut pos = opening.start().clone();
    let mut history = vec![position_key(&pos)];
    let mut uci_moves: Vec<String> = Vec::new();
    for m in opening.moves() {
        let uci = m.to_uci(mode).to_string();
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string();
        history.push(position_key(&pos));
        game.record.moves.push(PlayedMove {
            uci: uci.clone(),
            san,
            book: true,
            score: None,
            depth: None,
            elapsed: std::time::Duration::ZERO,
        });
        uci_moves.push(uci);
    }

    let mut clocks = Clocks::new(settings.time_control, settings.time_margin);
    let mut adjudicator = Adjudicator::new(settings.adjudication);
    let mut adjudicated: Option<EndReason> = None;

    loop {
        if let Some(end) = rules_end(&pos, &history) {
            return game.finish(end);
        }
        if let Some(end) = settings.tablebases.as_ref().and_then(|tb| tb.verdict(&pos)) {
            return game.finish(end);
        }
        if settings.max_plies > 0 && game.record.moves.len() >= settings.max_plies as usize {
            return game.finish(EndReason::MaxLength {
                plies: settings.max_plies,
            });
        }
        if let Some(end) = adjudicated.take() {
            return game.finish(end);
        }

        let side = pos.turn();
        let index = match side {
            Color::White => 0,
            Color::Black => 1,
        };
        let go = clocks.go_command();
        let deadline = clocks.deadline(index, settings.stall_slack, settings.stall_timeout);
        let started = Instant::now();
        let reply: Result<SearchReply, EngineFault> = match side {
            Color::White => {
                white
                    .search(opening.start_fen(), &uci_moves, &go, deadline)
                    .await
            }
            Color::Black => {
                black
                    .search(opening.start_fen(), &uci_moves, &go, deadline)
                    .await
            }
        };
        let elapsed = started.elapsed();
        let reply = match reply {
            Ok(reply) => reply,
            Err(fault) => return game.finish_fault(side, fault),
        };
        if clocks.charge(index, elapsed, reply.nodes) == ClockVerdict::Forfeit {
            return game.finish(EndReason::TimeForfeit { by: side });
        }
        let token = match reply.best {
            BestMove::Move(token) => token,
            BestMove::NoMove => {
                // The position is not over (checked above), so legal moves exist.
                return game.finish(EndReason::NoMoveWithLegalMoves { by: side });
            }
        };
        let Ok(uci) = token.trim().parse::<UciMove>() else {
            return game.finish(EndReason::UnparsableMove {
                by: side,
                token: printable(&token),
            });
        };
        let Ok(m) = uci.to_move(&pos) else {
            return game.finish(EndReason::IllegalMove {
                by: side,
                token: printable(&token),
            });
        };
        let fullmove = pos.fullmoves().get();
        // The engine's own token when it is already the game's spelling (as a rule), so no
        // move is formatted again; castling in the other convention (e1h1 in a standard game,
        // e1g1 in a Chess960 one) and the like are respelled.
        let spelled = m.to_uci(mode);
        let uci = if spelled == uci && !token.bytes().any(|b| b.is_ascii_uppercase()) {
            let mut token = token;
            token.truncate(token.trim_end().len());
            token.drain(..token.len() - token.trim_start().len());
            token
        } else {
            spelled.to_string()
        };
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
        history.push(position_key(&pos));
        game.record.moves.push(PlayedMove {
            uci: uci.clone(),
            san,
            book: false,
            score: reply.score,
            depth: reply.depth,
            elapsed,
        });
        uci_moves.push(uci);
        adjudicated = adjudicator.record(side, reply.score, fullmove);
    }
}

/// An engine's token made safe for a PGN comment and a log line.
fn printable(token: &str) -> String {
    let cleaned: String = token
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, '{' | '}'))
        .take(40)
        .collect();
    if cleaned.is_empty() {
        "(empty)".to_string()
    } else {
        cleaned
    }
}

struct Game {
    record: GameRecord,
}

impl Game {
    fn finish(mut self, end: EndReason) -> GameRecord {
        self.record.result = end.result();
        self.record.end = end;
        self.record
    }

    fn finish_fault(mut self, color: Color, fault: EngineFault) -> GameRecord {
        let end = fault_reason(color, &fault);
        self.record.fault = Some(Fault { color, fault });
        self.finish(end)
    }
}

#[cfg(test)]
#[path = "arbiter_tests.rs"]
mod tests;
