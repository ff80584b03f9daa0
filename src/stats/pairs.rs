//! How a simulated game pair scores at a given Elo difference, in the Elo a match measures.
//!
//! The pair's expected score is the logistic curve's (score Elo: a draw counts as half a point,
//! as in `stats::pentanomial`), so a model's Elo is the Elo a match would measure. What draws and
//! correlated openings change is the spread, never the mean: the spread comes from a shape at
//! equal strength, either two independent games with a draw rate or a pentanomial measured on
//! real pairs, and the shape is moved to each Elo by exponential tilting (p_i ∝ q_i·e^{λx_i}, the
//! closest distribution to the shape, in relative entropy, with the required mean). Tilting two
//! independent decisive games gives two independent games again, so at draw rate 0 a pair is
//! what it always was: each game won with the logistic probability.

/// The spread of a simulated pair at equal strength.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PairModel {
    /// Two independent games, each drawn with this probability at equal strength.
    Games { draw_rate: f64 },
    /// The probability of 0, ½, 1, 1½ and 2 points of a pair at equal strength (sums to 1,
    /// mean 1 point).
    Pentanomial([f64; 5]),
}

/// A pair's points in the pentanomial's order.
const PAIR_POINTS: [f64; 5] = [0.0, 0.5, 1.0, 1.5, 2.0];
/// A game's points: loss, draw, win.
const GAME_POINTS: [f64; 3] = [0.0, 0.5, 1.0];

impl From<f64> for PairModel {
    fn from(draw_rate: f64) -> Self {
        PairModel::Games { draw_rate }
    }
}

impl Default for PairModel {
    fn default() -> Self {
        PairModel::Games { draw_rate: 0.0 }
    }
}

impl PairModel {
    /// A pentanomial shape from counts or probabilities (0, ½, 1, 1½, 2 points), centred on
    /// equal strength. `None` when it cannot carry a score both ways: no pairs below 1 point or
    /// none above (every pair drawn, say), or a count that is negative or not finite.
    pub fn pentanomial(counts: [f64; 5]) -> Option<PairModel> {
        if counts.iter().any(|c| !c.is_finite() || *c < 0.0) {
            return None;
        }
        if counts[0] + counts[1] <= 0.0 || counts[3] + counts[4] <= 0.0 {
            return None;
        }
        let total: f64 = counts.iter().sum();
        let shape = counts.map(|c| c / total);
        let mut centred = [0.0; 5];
        tilt(&shape, &PAIR_POINTS, 1.0, &mut centred);
        Some(PairModel::Pentanomial(centred))
    }

    /// [`PairModel::pentanomial`] of a match's pair counts.
    pub fn from_pair_counts(counts: &[u64; 5]) -> Option<PairModel> {
        Self::pentanomial(counts.map(|c| c as f64))
    }

    /// The share of games drawn at equal strength (a pentanomial's 1-point pairs counted as two
    /// draws, its ½ and 1½ as one).
    pub fn draw_rate(&self) -> f64 {
        match *self {
            PairModel::Games { draw_rate } => draw_rate,
            PairModel::Pentanomial(p) => p[2] + (p[1] + p[3]) / 2.0,
        }
    }

    /// For people: `draw rate 0.300`, or the pentanomial's shape and its draw rate.
    pub fn describe(&self) -> String {
        match *self {
            PairModel::Games { draw_rate } => format!("draw rate {draw_rate:.3}"),
            PairModel::Pentanomial(p) => format!(
                "pentanomial pairs {:.3}/{:.3}/{:.3}/{:.3}/{:.3} (draw rate {:.3})",
                p[0],
                p[1],
                p[2],
                p[3],
                p[4],
                self.draw_rate()
            ),
        }
    }

    /// The variance of a pair's points at equal strength: what the noise of one pair is.
    pub fn pair_variance(&self) -> f64 {
        match *self {
            // Two independent games of variance (1 − d)/4 each.
            PairModel::Games { draw_rate } => (1.0 - draw_rate) / 2.0,
            PairModel::Pentanomial(p) => p
                .iter()
                .zip(PAIR_POINTS)
                .map(|(q, x)| q * (x - 1.0) * (x - 1.0))
                .sum(),
        }
    }

    /// How pairs are drawn when the first side's expected score per game is `score`.
    pub fn at_score(&self, score: f64) -> PairOdds {
        match *self {
            PairModel::Games { draw_rate } if draw_rate <= 0.0 => PairOdds::Games {
                win: score,
                draw: 0.0,
            },
            PairModel::Games { draw_rate } => {
                let shape = [(1.0 - draw_rate) / 2.0, draw_rate, (1.0 - draw_rate) / 2.0];
                let mut p = [0.0; 3];
                tilt(&shape, &GAME_POINTS, score, &mut p);
                PairOdds::Games {
                    win: p[2],
                    draw: p[1],
                }
            }
            PairModel::Pentanomial(shape) => {
                let mut p = [0.0; 5];
                tilt(&shape, &PAIR_POINTS, 2.0 * score, &mut p);
                PairOdds::Pairs(p)
            }
        }
    }
}

/// The odds of one pair at one Elo difference ([`PairModel::at_score`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PairOdds {
    /// Each game independently: a win with probability `win`, a draw with `draw`.
    Games { win: f64, draw: f64 },
    /// The pair's points: 0, ½, 1, 1½, 2.
    Pairs([f64; 5]),
}

impl PairOdds {
    /// The expected points of the pair (0 to 2).
    pub fn mean(&self) -> f64 {
        match *self {
            PairOdds::Games { win, draw } => 2.0 * (win + draw / 2.0),
            PairOdds::Pairs(p) => p.iter().zip(PAIR_POINTS).map(|(q, x)| q * x).sum(),
        }
    }
}

/// `out` = `shape` tilted (p_i ∝ q_i·e^{λx_i}) to the mean `mean`, which is clamped inside the
/// shape's support. The mean rises strictly with λ (its derivative is the variance), so a
/// Newton step kept inside a shrinking bracket finds λ in a few steps.
fn tilt(shape: &[f64], points: &[f64], mean: f64, out: &mut [f64]) {
    let support = || shape.iter().zip(points).filter(|(q, _)| **q > 0.0);
    let lo = support().map(|(_, x)| *x).fold(f64::INFINITY, f64::min);
    let hi = support().map(|(_, x)| *x).fold(f64::NEG_INFINITY, f64::max);
    if hi <= lo {
        out.copy_from_slice(shape);
        return;
    }
    let span = hi - lo;
    let target = mean.clamp(lo + 1e-12 * span, hi - 1e-12 * span);
    // Weights relative to the largest exponent, so no λ overflows.
    let tilted = |lambda: f64, out: &mut [f64]| -> (f64, f64) {
        let top = support()
            .map(|(_, x)| lambda * x)
            .fold(f64::NEG_INFINITY, f64::max);
        let mut total = 0.0;
        for ((o, q), x) in out.iter_mut().zip(shape).zip(points) {
            *o = if *q > 0.0 {
                q * (lambda * x - top).exp()
            } else {
                0.0
            };
            total += *o;
        }
        let (mut m, mut m2) = (0.0, 0.0);
        for (o, x) in out.iter_mut().zip(points) {
            *o /= total;
            m += *o * x;
            m2 += *o * x * x;
        }
        (m - target, (m2 - m * m).max(0.0))
    };
    // |λ| = 80/span puts all but e^-40 of the weight on one end: past any clamped target.
    let (mut a, mut b) = (-80.0 / span, 80.0 / span);
    let mut lambda = 0.0;
    for _ in 0..200 {
        let (f, var) = tilted(lambda, out);
        if f.abs() <= 1e-14 * span {
            return;
        }
        if f > 0.0 {
            b = lambda;
        } else {
            a = lambda;
        }
        let newton = lambda - f / var;
        lambda = if var > 0.0 && newton > a && newton < b {
            newton
        } else {
            (a + b) / 2.0
        };
    }
    tilted(lambda, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logistic(elo: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf(-elo / 400.0))
    }

    #[test]
    fn every_model_scores_the_logistic_mean_at_every_elo() {
        let models = [
            PairModel::Games { draw_rate: 0.0 },
            PairModel::Games { draw_rate: 0.3 },
            PairModel::Games { draw_rate: 0.9 },
            // vondele's pentamodel at Elo 0, as fishtest's SPSA laboratory states it.
            PairModel::pentanomial([0.0001, 0.25, 0.5, 0.25, 0.0001]).unwrap(),
            PairModel::pentanomial([3.0, 40.0, 120.0, 30.0, 1.0]).unwrap(),
        ];
        for m in models {
            for elo in [-800.0, -100.0, -2.0, 0.0, 0.5, 35.0, 400.0, 1500.0] {
                let s = logistic(elo);
                let odds = m.at_score(s);
                assert!(
                    (odds.mean() - 2.0 * s).abs() < 1e-9,
                    "{m:?} at {elo}: {} points, not {}",
                    odds.mean(),
                    2.0 * s
                );
                let total: f64 = match odds {
                    PairOdds::Games { win, draw } => {
                        assert!(win >= 0.0 && draw >= 0.0 && win + draw <= 1.0 + 1e-12);
                        1.0
                    }
                    PairOdds::Pairs(p) => {
                        assert!(p.iter().all(|q| *q >= 0.0));
                        p.iter().sum()
                    }
                };
                assert!((total - 1.0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn draws_lower_the_variance_and_keep_the_draw_rate_at_equal_strength() {
        let decisive = PairModel::Games { draw_rate: 0.0 };
        let drawish = PairModel::Games { draw_rate: 0.6 };
        assert!((decisive.pair_variance() - 0.5).abs() < 1e-12);
        assert!((drawish.pair_variance() - 0.2).abs() < 1e-12);
        match drawish.at_score(0.5) {
            PairOdds::Games { win, draw } => {
                assert!((draw - 0.6).abs() < 1e-12 && (win - 0.2).abs() < 1e-12)
            }
            other => panic!("{other:?}"),
        }
        let penta = PairModel::pentanomial([0.0001, 0.25, 0.5, 0.25, 0.0001]).unwrap();
        assert!(penta.pair_variance() < 0.13);
        assert!((penta.draw_rate() - 0.75).abs() < 1e-3);
    }

    #[test]
    fn tilted_decisive_games_are_independent_games_at_the_logistic_odds() {
        // Tilting binomial pairs gives binomial pairs: the classic model is unchanged.
        let p = logistic(120.0);
        let m = PairModel::pentanomial([1.0, 0.0, 2.0, 0.0, 1.0]).unwrap();
        let PairOdds::Pairs(q) = m.at_score(p) else {
            panic!()
        };
        let want = [(1.0 - p) * (1.0 - p), 0.0, 2.0 * p * (1.0 - p), 0.0, p * p];
        for (a, b) in q.iter().zip(want) {
            assert!((a - b).abs() < 1e-9, "{q:?} against {want:?}");
        }
    }

    #[test]
    fn a_shape_that_cannot_move_is_refused() {
        assert_eq!(PairModel::pentanomial([0.0, 0.0, 5.0, 0.0, 0.0]), None);
        assert_eq!(PairModel::pentanomial([1.0, 2.0, 5.0, 0.0, 0.0]), None);
        assert_eq!(PairModel::pentanomial([1.0, -2.0, 5.0, 1.0, 0.0]), None);
        assert_eq!(PairModel::pentanomial([1.0, f64::NAN, 5.0, 1.0, 0.0]), None);
        // An uncentred measurement (a stronger first side) is centred on equal strength.
        let m = PairModel::from_pair_counts(&[1, 10, 50, 60, 20]).unwrap();
        assert!((m.at_score(0.5).mean() - 1.0).abs() < 1e-12);
        let PairModel::Pentanomial(p) = m else {
            panic!()
        };
        assert!((p.iter().zip(PAIR_POINTS).map(|(q, x)| q * x).sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
