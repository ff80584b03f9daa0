//! Score adjudication: the running streaks behind [`Adjudication`]'s rules.

use shakmaty::Color;

use super::record::EndReason;
use super::settings::Adjudication;
use crate::engine::Score;

/// A mate score, as a centipawn value beyond any limit.
const MATE_VALUE: i64 = 1_000_000;

/// The mover's score as a number from its own view; mates are ±[`MATE_VALUE`].
fn value(score: Score) -> i64 {
    match score {
        Score::Cp(cp) => cp as i64,
        Score::Mate(n) if n > 0 => MATE_VALUE,
        Score::Mate(_) => -MATE_VALUE,
    }
}

/// Tracks consecutive engine reports during one game.
#[derive(Clone, Debug)]
pub struct Adjudicator {
    rules: Adjudication,
    draw_streak: u32,
    win_streak: u32,
    win_side: Option<Color>,
}

impl Adjudicator {
    pub fn new(rules: Adjudication) -> Adjudicator {
        Adjudicator {
            rules,
            draw_streak: 0,
            win_streak: 0,
            win_side: None,
        }
    }

    /// Record one engine move by `mover`, which reported `score` (its own view) while searching
    /// in a position with full-move number `fullmove`. Returns the adjudicated end, if any.
    pub fn record(
        &mut self,
        mover: Color,
        score: Option<Score>,
        fullmove: u32,
    ) -> Option<EndReason> {
        let v = score.map(value);

        let win = self.rules.win;
        if win.score_cp > 0 && win.moves > 0 {
            let limit = win.score_cp as i64;
            let vote = match v {
                Some(v) if v >= limit => Some(mover),
                Some(v) if v <= -limit => Some(!mover),
                _ => None,
            };
            match vote {
                None => {
                    self.win_streak = 0;
                    self.win_side = None;
                }
                Some(side) if self.win_side == Some(side) => self.win_streak += 1,
                Some(side) => {
                    self.win_side = Some(side);
                    self.win_streak = 1;
                }
            }
            let needed = if win.both_sides {
                win.moves.saturating_mul(2)
            } else {
                win.moves
            };
            if let Some(winner) = self.win_side
                && self.win_streak >= needed
            {
                return Some(EndReason::WinAdjudication { winner });
            }
        }

        let draw = self.rules.draw;
        if draw.score_cp > 0 && draw.moves > 0 {
            match v {
                Some(v) if v.abs() <= draw.score_cp as i64 => self.draw_streak += 1,
                _ => self.draw_streak = 0,
            }
            let needed = if draw.both_sides {
                draw.moves.saturating_mul(2)
            } else {
                draw.moves
            };
            if self.draw_streak >= needed && fullmove >= draw.min_fullmove {
                return Some(EndReason::DrawAdjudication);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::settings::{DrawAdjudication, WinAdjudication};
    use Color::{Black, White};

    fn feed(adj: &mut Adjudicator, reports: &[(Color, Option<Score>)]) -> Vec<Option<EndReason>> {
        reports
            .iter()
            .enumerate()
            .map(|(i, (c, s))| adj.record(*c, *s, 10 + i as u32 / 2))
            .collect()
    }

    #[test]
    fn classic_draw_counts_engine_moves_and_resets() {
        let mut a = Adjudicator::new(Adjudication::classic(10, 3, 0, 0));
        let r = feed(
            &mut a,
            &[
                (White, Some(Score::Cp(5))),
                (Black, Some(Score::Cp(-10))),
                (White, Some(Score::Cp(11))), // breaks
                (Black, Some(Score::Cp(0))),
                (White, None), // no score breaks
                (Black, Some(Score::Cp(0))),
                (White, Some(Score::Cp(3))),
                (Black, Some(Score::Cp(-3))),
            ],
        );
        assert_eq!(r[..7], [None, None, None, None, None, None, None]);
        assert_eq!(r[7], Some(EndReason::DrawAdjudication));
    }

    #[test]
    fn mate_score_never_counts_as_drawish() {
        let mut a = Adjudicator::new(Adjudication::classic(10, 2, 0, 0));
        assert_eq!(a.record(White, Some(Score::Cp(0)), 1), None);
        assert_eq!(a.record(Black, Some(Score::Mate(0)), 1), None);
        assert_eq!(a.record(White, Some(Score::Cp(0)), 2), None);
        assert_eq!(
            a.record(Black, Some(Score::Cp(0)), 2),
            Some(EndReason::DrawAdjudication)
        );
    }

    #[test]
    fn classic_win_needs_consistent_votes() {
        let mut a = Adjudicator::new(Adjudication::classic(0, 0, 500, 3));
        // White says +600 (votes White), Black says -600 (votes White), White +499 breaks.
        assert_eq!(a.record(White, Some(Score::Cp(600)), 1), None);
        assert_eq!(a.record(Black, Some(Score::Cp(-600)), 1), None);
        assert_eq!(a.record(White, Some(Score::Cp(499)), 2), None);
        assert_eq!(a.record(Black, Some(Score::Cp(-500)), 2), None);
        assert_eq!(a.record(White, Some(Score::Cp(500)), 3), None);
        // Black claims it is winning: the vote changes side, streak restarts at 1.
        assert_eq!(a.record(Black, Some(Score::Cp(700)), 3), None);
        assert_eq!(a.record(White, Some(Score::Cp(-700)), 4), None);
        assert_eq!(
            a.record(Black, Some(Score::Cp(800)), 4),
            Some(EndReason::WinAdjudication { winner: Black })
        );
    }

    #[test]
    fn mate_score_counts_beyond_any_win_limit() {
        let mut a = Adjudicator::new(Adjudication::classic(0, 0, 30_000, 2));
        assert_eq!(a.record(White, Some(Score::Mate(7)), 1), None);
        assert_eq!(
            a.record(Black, Some(Score::Mate(-6)), 1),
            Some(EndReason::WinAdjudication { winner: White })
        );
    }

    #[test]
    fn zero_disables() {
        for rules in [
            Adjudication::classic(0, 5, 0, 5),
            Adjudication::classic(10, 0, 10, 0),
        ] {
            let mut a = Adjudicator::new(rules);
            for i in 0..50 {
                let mover = if i % 2 == 0 { White } else { Black };
                assert_eq!(a.record(mover, Some(Score::Cp(0)), i), None);
                assert_eq!(a.record(mover, Some(Score::Mate(1)), i), None);
            }
        }
    }

    #[test]
    fn both_sides_draw_needs_both_engines_and_min_move() {
        let rules = Adjudication {
            draw: DrawAdjudication {
                score_cp: 10,
                moves: 2,
                both_sides: true,
                min_fullmove: 20,
            },
            ..Adjudication::default()
        };
        let mut a = Adjudicator::new(rules);
        // Three drawish plies are not enough (need 2 moves of each side = 4 plies).
        assert_eq!(a.record(White, Some(Score::Cp(0)), 20), None);
        assert_eq!(a.record(Black, Some(Score::Cp(0)), 20), None);
        assert_eq!(a.record(White, Some(Score::Cp(0)), 21), None);
        assert_eq!(
            a.record(Black, Some(Score::Cp(0)), 21),
            Some(EndReason::DrawAdjudication)
        );
        // Before the minimum move number nothing is adjudicated, however long the streak.
        let mut a = Adjudicator::new(rules);
        for n in 1..20 {
            assert_eq!(a.record(White, Some(Score::Cp(0)), n), None);
            assert_eq!(a.record(Black, Some(Score::Cp(0)), n), None);
        }
        assert_eq!(
            a.record(White, Some(Score::Cp(0)), 20),
            Some(EndReason::DrawAdjudication)
        );
    }

    #[test]
    fn both_sides_resign_needs_agreement() {
        let rules = Adjudication {
            win: WinAdjudication {
                score_cp: 400,
                moves: 2,
                both_sides: true,
            },
            ..Adjudication::default()
        };
        let mut a = Adjudicator::new(rules);
        // The loser (Black) keeps saying it is fine: no adjudication however sure White is.
        for n in 1..10 {
            assert_eq!(a.record(White, Some(Score::Cp(900)), n), None);
            assert_eq!(a.record(Black, Some(Score::Cp(-100)), n), None);
        }
        assert_eq!(a.record(White, Some(Score::Cp(900)), 10), None);
        assert_eq!(a.record(Black, Some(Score::Cp(-400)), 10), None);
        assert_eq!(a.record(White, Some(Score::Cp(400)), 11), None);
        assert_eq!(
            a.record(Black, Some(Score::Mate(-3)), 11),
            Some(EndReason::WinAdjudication { winner: White })
        );
    }
}
