//! The quadratic Elo model as a [`Source`]: games without engines, so users can choose
//! c_end and R_end (and tests can check the tuner) in milliseconds.
//!
//! A variable at distance x from its optimum (0) costs 0.0001·simul_elo·x² Elo. The θ+ side wins
//! each game with probability 1/(1+10^(−ΔElo/400)), where ΔElo is its Elo minus the θ− side's.
//! With a draw rate d, each game is drawn with probability d and otherwise decided as above.

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use futures::future::BoxFuture;

use super::{AtOnce, GameScore, Measurement, Source, Trial};
use crate::vars::Variable;

/// The simulated opponent pair.
#[derive(Clone, Debug)]
pub struct Simulator {
    /// 0.0001·simul_elo per variable: Elo lost per unit² of distance from the optimum.
    weights: Vec<f64>,
    draw_rate: f64,
}

impl Simulator {
    pub fn new(vars: &[Variable], draw_rate: f64) -> Self {
        Simulator {
            weights: vars.iter().map(|v| 0.0001 * v.simul_elo).collect(),
            draw_rate,
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

    /// Expected score of a player `delta_elo` stronger than its opponent, in a decisive game.
    pub fn win_probability(delta_elo: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf(-delta_elo / 400.0))
    }

    /// Play the pair synchronously (the async seam just wraps this).
    /// One simulated pair at the trial's values, seeded by `seed` (reproducible).
    pub fn play_pair(&self, plus: &[f64], minus: &[f64], seed: u64) -> [GameScore; 2] {
        let p = Self::win_probability(self.elo(plus) - self.elo(minus));
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut game = || {
            if self.draw_rate > 0.0 && rng.random::<f64>() < self.draw_rate {
                GameScore::Draw
            } else if rng.random::<f64>() < p {
                GameScore::Win
            } else {
                GameScore::Loss
            }
        };
        [game(), game()]
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
        for j in 0..u64::from(trial.pairs) {
            let pair = self.play_pair(&trial.plus, &trial.minus, trial.seed.wrapping_add(j));
            out.games.extend(pair);
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

    /// Issue 54: `spsa plan --measure` fits simul_elo from the pilot's matches, whose Elo is
    /// score Elo (`stats::pentanomial`, draws counted as half points), and then simulates with
    /// the pilot's draw rate d. The simulator plays simul_elo as the Elo of a decisive game, so
    /// the pairs it plays show (1 − d) of that score Elo: the plan sees (1 − d) of the measured
    /// curvature (a quarter at fishtest's STC draw rates). This measures it the pilot's way and
    /// fails today (about 40 Elo instead of 100 at d = 0.6); ignored until the simulator or the
    /// pilot's hand-over speaks score Elo.
    #[test]
    #[ignore = "issue 54: the simulator's Elo is decisive-game Elo, the pilot's is score Elo"]
    fn the_pilots_score_elo_is_what_the_simulator_plays_at_the_pilots_draw_rate() {
        let draw_rate = 0.6;
        let sim = Simulator::new(&vars(&[100.0]), draw_rate);
        let mut counts = [0u64; 5];
        for seed in 0..20_000u64 {
            // The optimum (θ+) against 100 from it: 100 Elo apart under the model.
            let pair = sim.play_pair(&[0.0], &[100.0], seed);
            let points: i32 = pair.iter().map(|g| g.value() + 1).sum();
            counts[points as usize] += 1;
        }
        let measured = crate::stats::pentanomial(&counts).expect("an estimate").elo;
        assert!(
            (measured - 100.0).abs() < 10.0,
            "the pilot would measure {measured:.1} score Elo where the model's curve has 100"
        );
    }
}
