//! The delayed-update state machine: which iterations have been handed out, which are in flight,
//! which were applied. Pure: no I/O, no clocks, no async; every random draw is derived from the
//! run's seed and the iteration number, so an iteration handed out again (after a resume, or by
//! another worker) gets exactly the same δ, rounding and game seed.
//!
//! One driver serves a local run, `simulate --runs`, and a run shared by remote workers: hand out
//! a [`Trial`] with [`Driver::next_trial`], apply its measured signal with [`Driver::apply`] when
//! it finishes (in any order), or give it back with [`Driver::abandon`]. [`Driver::state`] is
//! what a checkpoint stores: θ and exactly which iterations were applied, so a resume after
//! kill -9 plays exactly the missing ones.

use std::collections::{BTreeSet, HashSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::Spsa;
use super::rounding::{RoundingMode, round_pair};

/// One iteration as handed to a source: everything the core decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// The 1-based SPSA iteration k.
    pub iteration: u64,
    /// δ: +1.0 or −1.0 per variable.
    pub delta: Vec<f64>,
    /// c_k per variable: the perturbation size the core used (not re-derived from θ±).
    pub c_k: Vec<f64>,
    /// Values for the θ+ side, one per variable: clipped to bounds and rounded as the run plays
    /// them (integers for engines; continuous in simulation).
    pub plus: Vec<f64>,
    /// Values for the θ− side.
    pub minus: Vec<f64>,
    /// The first opening of this trial in the source's book order; pair j plays `opening + j`.
    pub opening: u64,
    /// Game pairs to play with these values (pairs per iteration).
    pub pairs: u32,
    /// A random number for the source's own draws (simulated games), fixed by (seed, k).
    pub seed: u64,
}

/// How θ± are turned into the values a source plays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rounding {
    /// Play θ± as they are (simulation, or engines taking fractional values).
    #[default]
    Continuous,
    /// Round to integers, as spin options take them.
    Integer(RoundingMode),
}

/// What a checkpoint stores of the driver: θ, and exactly which iterations were applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriverState {
    pub theta: Vec<f64>,
    /// Every iteration below this one was handed out at some point.
    pub next_fresh: u64,
    /// Iterations below `next_fresh` that were not applied (in flight or given back), ascending.
    pub missing: Vec<u64>,
}

impl DriverState {
    /// A run that has not played anything yet.
    pub fn start(theta: Vec<f64>) -> Self {
        DriverState {
            theta,
            next_fresh: 1,
            missing: Vec::new(),
        }
    }

    /// How many iterations were applied.
    pub fn applied(&self) -> u64 {
        (self.next_fresh - 1).saturating_sub(self.missing.len() as u64)
    }

    /// Whether iteration k was applied.
    pub fn is_applied(&self, k: u64) -> bool {
        k >= 1 && k < self.next_fresh && self.missing.binary_search(&k).is_err()
    }
}

/// Why [`Driver::apply`] refused a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApplyError {
    #[error("iteration {0} is not part of this run")]
    OutOfRange(u64),
    #[error("iteration {0} was already applied")]
    AlreadyApplied(u64),
    #[error("iteration {0} was never handed out")]
    NotHandedOut(u64),
    #[error("the measured signal {0} is not a finite number")]
    NotFinite(f64),
}

/// The SPSA bookkeeping of one run.
#[derive(Clone, Debug)]
pub struct Driver {
    spsa: Spsa,
    rounding: Rounding,
    pairs: u32,
    seed_rng: ChaCha8Rng,
    theta: Vec<f64>,
    next_fresh: u64,
    /// Not applied and not in flight: handed out again first, smallest first.
    pending: BTreeSet<u64>,
    in_flight: HashSet<u64>,
    applied: u64,
}

impl Driver {
    /// A driver at `state` (use [`DriverState::start`] for a new run). `seed` fixes every draw.
    pub fn new(spsa: Spsa, rounding: Rounding, pairs: u32, seed: u64, state: DriverState) -> Self {
        let applied = state.applied();
        Driver {
            spsa,
            rounding,
            pairs: pairs.max(1),
            seed_rng: ChaCha8Rng::seed_from_u64(seed),
            theta: state.theta,
            next_fresh: state.next_fresh.max(1),
            pending: state.missing.into_iter().collect(),
            in_flight: HashSet::new(),
            applied,
        }
    }

    pub fn spsa(&self) -> &Spsa {
        &self.spsa
    }

    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// Planned iterations N.
    pub fn total(&self) -> u64 {
        self.spsa.schedule().iterations
    }

    pub fn applied(&self) -> u64 {
        self.applied
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Every planned iteration has been applied.
    pub fn is_finished(&self) -> bool {
        self.applied >= self.total()
    }

    /// What a checkpoint stores. In-flight iterations count as missing: a resume plays them.
    pub fn state(&self) -> DriverState {
        let mut missing: Vec<u64> = self
            .pending
            .iter()
            .copied()
            .chain(self.in_flight.iter().copied())
            .collect();
        missing.sort_unstable();
        DriverState {
            theta: self.theta.clone(),
            next_fresh: self.next_fresh,
            missing,
        }
    }

    /// The next iteration to play: a missing one first (smallest k), then a new one. `None` when
    /// every iteration is applied or in flight.
    pub fn next_trial(&mut self) -> Option<Trial> {
        let k = match self.pending.pop_first() {
            Some(k) => k,
            None if self.next_fresh <= self.total() => {
                self.next_fresh += 1;
                self.next_fresh - 1
            }
            None => return None,
        };
        self.in_flight.insert(k);
        Some(self.trial(k))
    }

    /// The trial for iteration k at the current θ (without handing it out).
    pub fn trial(&self, k: u64) -> Trial {
        let mut rng = self.rng_for(k);
        let p = self.spsa.perturb(&self.theta, k, &mut rng);
        let c_k: Vec<f64> = (0..self.spsa.len())
            .map(|i| self.spsa.gains(i, k).c_k)
            .collect();
        let (mut plus, mut minus) = (p.plus, p.minus);
        if let Rounding::Integer(mode) = self.rounding {
            for i in 0..plus.len() {
                let (rp, rm) = round_pair(
                    plus[i],
                    minus[i],
                    c_k[i],
                    self.spsa.bounds(i),
                    mode,
                    unit_interval(rng.next_u64()),
                );
                plus[i] = rp as f64;
                minus[i] = rm as f64;
            }
        }
        Trial {
            iteration: k,
            delta: p.delta,
            c_k,
            plus,
            minus,
            opening: (k - 1) * u64::from(self.pairs),
            pairs: self.pairs,
            seed: rng.next_u64(),
        }
    }

    /// Apply iteration k's measured signal (the pair score sum for games, −(L+−L−)/2 for a
    /// loss): θ += a_k/c_k·signal/δ, clipped. Iterations may finish in any order; each is
    /// applied at most once. An iteration missing after a restore may be applied directly (a
    /// remote worker's result for a lease made before the restart).
    pub fn apply(&mut self, k: u64, signal: f64) -> Result<(), ApplyError> {
        if k == 0 || k > self.total() {
            return Err(ApplyError::OutOfRange(k));
        }
        if !signal.is_finite() {
            return Err(ApplyError::NotFinite(signal));
        }
        if !self.in_flight.remove(&k) && !self.pending.remove(&k) {
            return Err(if k < self.next_fresh {
                ApplyError::AlreadyApplied(k)
            } else {
                ApplyError::NotHandedOut(k)
            });
        }
        let delta = self.spsa.draw_delta(&mut self.rng_for(k));
        self.spsa.apply(&mut self.theta, k, &delta, signal);
        self.applied += 1;
        Ok(())
    }

    /// Give iteration k back (its result will never come): it is handed out again first.
    pub fn abandon(&mut self, k: u64) {
        if self.in_flight.remove(&k) {
            self.pending.insert(k);
        }
    }

    /// The random stream of iteration k: δ first, then rounding draws, then the trial's seed.
    fn rng_for(&self, k: u64) -> ChaCha8Rng {
        let mut rng = self.seed_rng.clone();
        rng.set_stream(k);
        rng.set_word_pos(0);
        rng
    }
}

/// A uniform number in [0, 1) from 64 random bits.
fn unit_interval(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spsa::Schedule;
    use crate::vars::Variable;

    fn vars(n: usize) -> Vec<Variable> {
        (0..n)
            .map(|i| Variable {
                name: format!("v{i}"),
                start: 10.0 * i as f64,
                min: -100.0,
                max: 100.0,
                c_end: 2.0,
                r_end: 0.002,
                simul_elo: 1.0,
            })
            .collect()
    }

    fn driver(n_iter: u64, seed: u64) -> Driver {
        let v = vars(3);
        let spsa = Spsa::new(
            &v,
            Schedule {
                iterations: n_iter,
                a: 10.0,
                alpha: 0.602,
                gamma: 0.101,
            },
        );
        let theta = v.iter().map(|v| v.start).collect();
        Driver::new(
            spsa,
            Rounding::Continuous,
            1,
            seed,
            DriverState::start(theta),
        )
    }

    /// A deterministic stand-in for a measurement.
    fn signal(k: u64) -> f64 {
        [2.0, -1.0, 0.0, 1.0, -2.0][(k % 5) as usize]
    }

    #[test]
    fn hands_out_each_iteration_once_and_finishes() {
        let mut d = driver(20, 1);
        let mut seen = Vec::new();
        while let Some(t) = d.next_trial() {
            seen.push(t.iteration);
            d.apply(t.iteration, signal(t.iteration)).unwrap();
        }
        assert_eq!(seen, (1..=20).collect::<Vec<_>>());
        assert!(d.is_finished());
        assert_eq!(d.state().applied(), 20);
        assert_eq!(d.apply(5, 1.0), Err(ApplyError::AlreadyApplied(5)));
        assert_eq!(d.apply(21, 1.0), Err(ApplyError::OutOfRange(21)));
    }

    #[test]
    fn a_trial_depends_only_on_seed_iteration_and_theta() {
        let mut a = driver(100, 7);
        let b = driver(100, 7);
        let t1 = a.next_trial().unwrap();
        assert_eq!(t1, b.trial(1));
        assert_ne!(t1.delta, driver(100, 8).trial(1).delta);
        assert_ne!(b.trial(1).seed, b.trial(2).seed);
        for (i, &d) in t1.delta.iter().enumerate() {
            assert!((t1.plus[i] - (a.theta()[i] + t1.c_k[i] * d)).abs() < 1e-12);
        }
    }

    #[test]
    fn out_of_order_results_resume_exactly_the_missing_iterations() {
        // k = 1..4 in flight; 2 and 4 finish, then the process is killed.
        let mut d = driver(10, 3);
        let trials: Vec<Trial> = (0..4).map(|_| d.next_trial().unwrap()).collect();
        d.apply(2, signal(2)).unwrap();
        d.apply(4, signal(4)).unwrap();
        let saved = d.state();
        assert_eq!(saved.missing, vec![1, 3]);
        assert_eq!(saved.applied(), 2);
        assert!(saved.is_applied(2) && !saved.is_applied(3) && !saved.is_applied(5));

        let v = vars(3);
        let mut resumed = Driver::new(d.spsa().clone(), Rounding::Continuous, 1, 3, saved.clone());
        let again: Vec<u64> = (0..3)
            .map(|_| resumed.next_trial().unwrap().iteration)
            .collect();
        assert_eq!(again, vec![1, 3, 5], "missing first, then new ones");
        // The replayed iteration draws the same δ as before the kill.
        let replay = Driver::new(d.spsa().clone(), Rounding::Continuous, 1, 3, saved).trial(1);
        assert_eq!(replay.delta, trials[0].delta);
        assert_eq!(v.len(), replay.delta.len());
    }

    #[test]
    fn abandon_gives_an_iteration_back_first() {
        let mut d = driver(10, 3);
        let a = d.next_trial().unwrap();
        let b = d.next_trial().unwrap();
        d.abandon(a.iteration);
        assert_eq!(d.next_trial().unwrap().iteration, a.iteration);
        assert_eq!(d.next_trial().unwrap().iteration, 3);
        d.apply(b.iteration, 1.0).unwrap();
        assert_eq!(d.in_flight(), 2);
    }

    #[test]
    fn order_of_application_is_the_only_thing_concurrency_changes() {
        // Applying in hand-out order with one in flight equals the classic sequential loop.
        let mut d = driver(50, 11);
        let spsa = d.spsa().clone();
        let mut theta: Vec<f64> = vars(3).iter().map(|v| v.start).collect();
        while let Some(t) = d.next_trial() {
            let mut theta_plus = theta.clone();
            for i in 0..3 {
                theta_plus[i] = spsa.clip(i, theta[i] + t.c_k[i] * t.delta[i]);
            }
            assert_eq!(t.plus, theta_plus);
            spsa.apply(&mut theta, t.iteration, &t.delta, signal(t.iteration));
            d.apply(t.iteration, signal(t.iteration)).unwrap();
            assert_eq!(d.theta(), &theta[..]);
        }
    }

    #[test]
    fn integer_rounding_uses_the_cores_c_k_at_a_bound() {
        // θ sits on its upper bound: θ+ is clipped, so |θ+ − θ−|/2 understates c_k. Rounding
        // with the true c_k still gives the two sides different values in every trial.
        let mut v = vars(1);
        v[0].start = 100.0;
        v[0].c_end = 0.6;
        let spsa = Spsa::new(
            &v,
            Schedule {
                iterations: 400,
                a: 10.0,
                alpha: 0.602,
                gamma: 0.101,
            },
        );
        let mut d = Driver::new(
            spsa,
            Rounding::Integer(RoundingMode::Stochastic),
            1,
            5,
            DriverState::start(vec![100.0]),
        );
        let mut identical = 0;
        for k in 1..=400 {
            let t = d.trial(k);
            assert_eq!(t.plus[0].fract(), 0.0);
            if t.plus[0] == t.minus[0] {
                identical += 1;
            }
        }
        assert_eq!(identical, 0, "every trial carries a signal");
        assert!(d.next_trial().is_some());
    }

    #[test]
    fn pairs_per_iteration_spaces_the_openings() {
        let v = vars(2);
        let spsa = Spsa::new(
            &v,
            Schedule {
                iterations: 10,
                a: 1.0,
                alpha: 0.602,
                gamma: 0.101,
            },
        );
        let d = Driver::new(
            spsa,
            Rounding::Continuous,
            4,
            1,
            DriverState::start(vec![0.0, 0.0]),
        );
        assert_eq!(d.trial(1).opening, 0);
        assert_eq!(d.trial(3).opening, 8);
        assert_eq!(d.trial(3).pairs, 4);
    }

    #[test]
    fn refuses_non_finite_signals() {
        let mut d = driver(5, 1);
        let t = d.next_trial().unwrap();
        assert_eq!(
            d.apply(t.iteration, f64::NAN).unwrap_err().to_string(),
            "the measured signal NaN is not a finite number"
        );
        assert_eq!(d.apply(3, 1.0), Err(ApplyError::NotHandedOut(3)));
    }
}
