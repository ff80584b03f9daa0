//! The rules of chess that both a game and a book opening answer to: when a position repeats,
//! and when the rules alone end the game. Shared by the arbiter (which plays games) and the book
//! (which refuses openings that are already over), so neither depends on the other.

use shakmaty::zobrist::Zobrist128;
use shakmaty::{Chess, EnPassantMode, Position};

use super::record::EndReason;

/// The repetition key of a position: placement, side to move, castling rights and a *legal*
/// en passant square (FIDE's definition of "the same position").
pub(crate) fn position_key(pos: &Chess) -> Zobrist128 {
    pos.zobrist_hash(EnPassantMode::Legal)
}

/// The end of the game by the rules alone, if `pos` (whose history, itself included, is
/// `history`) ends it. Mate and stalemate come before the 50-move rule.
pub(crate) fn rules_end(pos: &Chess, history: &[Zobrist128]) -> Option<EndReason> {
    if pos.legal_moves().is_empty() {
        return Some(if pos.is_check() {
            EndReason::Checkmate {
                winner: !pos.turn(),
            }
        } else {
            EndReason::Stalemate
        });
    }
    if pos.is_insufficient_material() {
        return Some(EndReason::InsufficientMaterial);
    }
    if let Some(current) = history.last()
        && history.iter().filter(|h| *h == current).count() >= 3
    {
        return Some(EndReason::ThreefoldRepetition);
    }
    if pos.halfmoves() >= 100 {
        return Some(EndReason::FiftyMoveRule);
    }
    None
}
