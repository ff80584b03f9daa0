//! The quadratic Elo model as a [`Source`]: games without engines, so users can choose
//! c_end and R_end (and tests can check the tuner) in milliseconds.
//!
//! A variable at distance x from its optimum (0) costs 0.0001·simul_elo·x² Elo, in score Elo (the
//! Elo a match measures, a draw half a point). The θ+ side scores 1/(1+10^(−ΔElo/400)) a game on
//! average, where ΔElo is its Elo minus the θ− side's; how a pair spreads around that mean is the
//! config's [`PairModel`]: independent games with a draw rate (at draw rate 0, each game won
//! with that probability, as the classic tool played), or a pentanomial of real pairs. Draws lower
//! the noise of a pair, never its Elo (`stats::pairs`).

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use futures::future::BoxFuture;

use super::{AtOnce, GameScore, Measurement, Source, Trial};
use crate::stats::pairs::{PairModel, PairOdds};
use crate::vars::Variable;

/// The simulated opponent pair.
#[derive(Clone, Debug)]
pub struct Simulator {
    /// 0.0001·simul_elo per variable: Elo lost per unit² of distance from the optimum.
    weights: Vec<f64>,
    pairs: PairModel,
}

impl Simulator {
    /// The model of `vars` (their simul_elo column), pairs spread as `pairs` says (a draw rate
    /// converts into independent games).
    pub fn new(vars: &[Variable], pairs: impl Into<PairModel>) -> Self {
        Simulator {
            weights: vars.iter().map(|v| 0.0001 * v.simul_elo).collect(),
            pairs: pairs.into(),
        }
    }

    /// The model's Elo of a parameter vector, relative to the optimum (always ≤ 0).
    pub fn elo(&self, theta: &[f64]) -> f64 {
        -self
            .weights
            .iter()
            .zip(theta)
            .map(|(w, x)| w * x * x)
            .sum::<f64>()
    }

    /// The Elo each variable costs at θ (its share of −[`Simulator::elo`]).
    pub fn losses(&self, theta: &[f64]) -> Vec<f64> {
        self.weights
            .iter()
            .zip(theta)
            .map(|(w, x)| w * x * x)
            .collect()
    }

    /// Expected score of a player `delta_elo` stronger than its opponent, a game.
    pub fn win_probability(delta_elo: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf(-delta_elo / 400.0))
    }

    /// One simulated pair at the trial's values, seeded by `seed` (reproducible).
    pub fn play_pair(&self, plus: &[f64], minus: &[f64], seed: u64) -> [GameScore; 2] {
        play(&self.odds(plus, minus), seed)
    }

    /// How a pair of θ+ (`plus`) against θ− (`minus`) is drawn.
    fn odds(&self, plus: &[f64], minus: &[f64]) -> PairOdds {
        self.pairs
            .at_score(Self::win_probability(self.elo(plus) - self.elo(minus)))
    }

    /// All of a trial's pairs (pair j seeded by the trial's seed + j).
    pub fn measure(&self, trial: &Trial) -> Measurement {
        let mut m = Measurement::default();
        self.measure_into(trial, &mut m);
        m
    }

    /// [`Simulator::measure`] into `out`, reusing its vectors.
    pub fn measure_into(&self, trial: &Trial, out: &mut Measurement) {
        out.clear();
        let odds = self.odds(&trial.plus, &trial.minus);
        for j in 0..u64::from(trial.pairs) {
            out.games.extend(play(&odds, trial.seed.wrapping_add(j)));
        }
    }
}

/// One pair drawn from `odds`, seeded by `seed`. Independent games take one uniform draw each
/// (at draw rate 0 the draws the simulator has always made: a win below the win probability); a
/// pentanomial pair takes one for its points and one for which game of a 1½ or ½ pair was drawn,
/// and plays a 1-point pair as two draws (the pair's sum is all SPSA and the Elo statistics read).
fn play(odds: &PairOdds, seed: u64) -> [GameScore; 2] {
    let mut rng = SmallRng::seed_from_u64(seed);
    match *odds {
        PairOdds::Games { win, draw } => {
            let mut game = || {
                let u = rng.random::<f64>();
                if u < win {
                    GameScore::Win
                } else if u < win + draw {
                    GameScore::Draw
                } else {
                    GameScore::Loss
                }
            };
            [game(), game()]
        }
        PairOdds::Pairs(p) => {
            let u = rng.random::<f64>();
            let mut bin = 4;
            let mut below = 0.0;
            for (i, q) in p.iter().enumerate() {
                below += q;
                if u < below {
                    bin = i;
                    break;
                }
            }
            use GameScore::{Draw, Loss, Win};
            let pair = match bin {
                0 => [Loss, Loss],
                1 => [Loss, Draw],
                2 => [Draw, Draw],
                3 => [Win, Draw],
                _ => [Win, Win],
            };
            if rng.random::<bool>() {
                [pair[1], pair[0]]
            } else {
                pair
            }
        }
    }
}

impl Source for Simulator {
    fn parts(&self, _: &Trial) -> usize {
        1
    }

    fn run_part<'a>(
        &'a self,
        _slot: usize,
        trial: &'a Trial,
        _part: usize,
    ) -> BoxFuture<'a, anyhow::Result<Measurement>> {
        let m = self.measure(trial);
        Box::pin(std::future::ready(Ok(m)))
    }

    fn at_once(&self) -> Option<&dyn AtOnce> {
        Some(self)
    }
}

impl AtOnce for Simulator {
    fn measure(&self, trial: &Trial) -> anyhow::Result<Measurement> {
        Ok(Simulator::measure(self, trial))
    }

    fn measure_into(&self, trial: &Trial, out: &mut Measurement) -> anyhow::Result<()> {
        Simulator::measure_into(self, trial, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(elos: &[f64]) -> Vec<Variable> {
        elos.iter()
            .enumerate()
            .map(|(i, &e)| Variable {
                name: format!("v{i}"),
                start: 0.0,
                min: -1000.0,
                max: 1000.0,
                c_end: 1.0,
                r_end: 0.0,
                simul_elo: e,
            })
            .collect()
    }

    #[test]
    fn elo_is_quadratic_around_zero() {
        let sim = Simulator::new(&vars(&[1.0, 4.0]), 0.0);
        assert_eq!(sim.elo(&[0.0, 0.0]), 0.0);
        // simul_elo is the loss at ±100.
        assert!((sim.elo(&[100.0, 0.0]) + 1.0).abs() < 1e-12);
        assert!((sim.elo(&[-100.0, 50.0]) + 2.0).abs() < 1e-12);
    }

    #[test]
    fn win_rate_matches_the_logistic_model() {
        // ΔElo = elo(0) − elo(1000) = 100 with simul_elo 1 → p = 0.6401.
        let sim = Simulator::new(&vars(&[1.0]), 0.0);
        let p = Simulator::win_probability(100.0);
        assert!((p - 0.640_065).abs() < 1e-5);
        let n = 20_000u64;
        let mut wins = 0;
        for seed in 0..n {
            let o = sim.play_pair(&[0.0], &[1000.0], seed);
            wins += o.iter().filter(|g| **g == GameScore::Win).count();
        }
        let rate = wins as f64 / (2 * n) as f64;
        // 4 standard errors of a binomial proportion over 40 000 games.
        let se = (p * (1.0 - p) / (2 * n) as f64).sqrt();
        assert!((rate - p).abs() < 4.0 * se, "rate {rate}, p {p}");
    }

    #[test]
    fn draw_rate_is_honoured_and_seed_reproducible() {
        let sim = Simulator::new(&vars(&[1.0]), 0.3);
        let n = 10_000u64;
        let draws: usize = (0..n)
            .map(|s| {
                sim.play_pair(&[0.0], &[0.0], s)
                    .iter()
                    .filter(|g| **g == GameScore::Draw)
                    .count()
            })
            .sum();
        let rate = draws as f64 / (2 * n) as f64;
        assert!((rate - 0.3).abs() < 0.015, "draw rate {rate}");
        let a = sim.play_pair(&[1.0], &[2.0], 99);
        let b = sim.play_pair(&[1.0], &[2.0], 99);
        assert_eq!(a, b);
    }

    /// `spsa plan --measure` fits simul_elo from the pilot's matches, whose Elo is score Elo
    /// (`stats::pentanomial`, a draw half a point), and then simulates with the pilot's pairs:
    /// the simulator must play that Elo at any draw rate, or the plan would see (1 − d) of the
    /// measured curvature (it did: 39 Elo instead of 100 at d = 0.6, before the model spoke
    /// score Elo).
    #[test]
    fn the_pilots_score_elo_is_what_the_simulator_plays_at_the_pilots_draw_rate() {
        for model in [
            PairModel::Games { draw_rate: 0.6 },
            PairModel::pentanomial([0.0001, 0.25, 0.5, 0.25, 0.0001]).unwrap(),
        ] {
            let counts = pentanomial_of(&Simulator::new(&vars(&[100.0]), model));
            let measured = crate::stats::pentanomial(&counts).expect("an estimate").elo;
            assert!(
                (measured - 100.0).abs() < 6.0,
                "{model:?}: the pilot would measure {measured:.1} score Elo where the model's curve has 100"
            );
        }
    }

    /// The pentanomial counts of 20,000 pairs of the optimum against 100 from it (100 Elo apart).
    fn pentanomial_of(sim: &Simulator) -> [u64; 5] {
        let mut counts = [0u64; 5];
        for seed in 0..20_000u64 {
            // The optimum (θ+) against 100 from it: 100 Elo apart under the model.
            let pair = sim.play_pair(&[0.0], &[100.0], seed);
            let points: i32 = pair.iter().map(|g| g.value() + 1).sum();
            counts[points as usize] += 1;
        }
        counts
    }

    #[test]
    fn a_pentanomial_pair_has_the_shapes_spread_and_draws() {
        // vondele's pentamodel: at equal strength nearly every pair scores ½, 1 or 1½.
        let model = PairModel::pentanomial([0.0001, 0.25, 0.5, 0.25, 0.0001]).unwrap();
        let sim = Simulator::new(&vars(&[1.0]), model);
        let mut counts = [0u64; 5];
        let mut draws = 0;
        for seed in 0..20_000u64 {
            let pair = sim.play_pair(&[0.0], &[0.0], seed);
            draws += pair.iter().filter(|g| **g == GameScore::Draw).count();
            counts[pair.iter().map(|g| g.value() + 1).sum::<i32>() as usize] += 1;
        }
        assert!(counts[0] + counts[4] < 20, "{counts:?}");
        assert!(
            (counts[2] as f64 / 20_000.0 - 0.5).abs() < 0.02,
            "{counts:?}"
        );
        assert!((draws as f64 / 40_000.0 - 0.75).abs() < 0.02, "{draws}");
        assert_eq!(
            sim.play_pair(&[3.0], &[9.0], 7),
            sim.play_pair(&[3.0], &[9.0], 7)
        );
    }
}
