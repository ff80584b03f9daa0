//! The delayed-update state machine: which iterations have been handed out, which are in flight,
//! which were applied. Pure: no I/O, no clocks, no async; every random draw is derived from the
//! run's seed and the iteration number, so an iteration handed out again (after a resume, or by
//! another worker) gets exactly the same δ, rounding and game seed.
//!
//! Iteration k's draws come from [`IterationRng`]: SplitMix64 keyed by (seed, k). It is a few
//! instructions per word (a ChaCha stream per iteration cost a block refill per trial and made
//! simulated studies about 3x slower), its output is fixed by this file alone, and its words
//! are plenty for ±1 signs and uniform rounding draws.
//!
//! One driver serves a local run, `simulate --runs`, and a run shared by remote workers: hand out
//! a [`Trial`] with [`Driver::next_trial`], apply its measured signal with [`Driver::apply`] when
//! it finishes (in any order), or give it back with [`Driver::abandon`]. [`Driver::state`] is
//! what a checkpoint stores: θ and exactly which iterations were applied, so a resume after
//! kill -9 plays exactly the missing ones.

use std::collections::BTreeSet;

use std::convert::Infallible;

use rand::{Rng, TryRng};
use serde::{Deserialize, Serialize};

use super::rounding::{RoundingMode, round_pair};
use super::{Factors, Perturbation, Spsa, signs};

/// One iteration as handed to a source: everything the core decided.
#[derive(Clone, Debug, Default, PartialEq)]
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
    /// A measurement of the live Elo curve (see `spsa::track`), not an iteration: played
    /// on the held-out openings, and never applied to θ.
    pub track: Option<super::unit::TrackUnit>,
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

/// A result the driver refuses is a bug or a corrupt store, not the user's to fix.
impl crate::error::UserFacing for ApplyError {
    fn is_user_error(&self) -> bool {
        false
    }
}

/// The SPSA bookkeeping of one run.
#[derive(Clone, Debug)]
pub struct Driver {
    spsa: Spsa,
    rounding: Rounding,
    pairs: u32,
    seed: u64,
    theta: Vec<f64>,
    next_fresh: u64,
    /// Not applied and not in flight: handed out again first, smallest first.
    pending: BTreeSet<u64>,
    /// Handed out and not yet applied, with the schedule's factors computed when it was (so an
    /// update costs no powers). As many as trials in flight, a handful: a list beats a map.
    in_flight: Vec<(u64, Factors)>,
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
            seed,
            theta: state.theta,
            next_fresh: state.next_fresh.max(1),
            pending: state.missing.into_iter().collect(),
            in_flight: Vec::new(),
            applied,
        }
    }

    pub fn spsa(&self) -> &Spsa {
        &self.spsa
    }

    /// Go on over changed variables (a resume that added or dropped some): `spsa` is the
    /// run's optimizer from now on, and θ gains the start values (`start`, of every variable)
    /// of those it adds at the end. What is in flight stays in flight, and its update follows
    /// the new parts: no step for a variable held, or not yet joined at its iteration.
    pub fn reshape(&mut self, spsa: Spsa, start: &[f64]) {
        self.theta = super::padded(&self.theta, start);
        self.spsa = spsa;
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
            .chain(self.in_flight.iter().map(|&(k, _)| k))
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
        let mut trial = Trial::default();
        self.next_trial_into(&mut trial).then_some(trial)
    }

    /// [`Driver::next_trial`] into `trial`, reusing its vectors (a finished trial handed back);
    /// false, with `trial` untouched, when there is nothing to hand out.
    pub fn next_trial_into(&mut self, trial: &mut Trial) -> bool {
        let k = match self.pending.pop_first() {
            Some(k) => k,
            None if self.next_fresh <= self.total() => {
                self.next_fresh += 1;
                self.next_fresh - 1
            }
            None => return false,
        };
        let f = self.spsa.factors(k);
        self.in_flight.push((k, f));
        self.trial_into(k, f, trial);
        true
    }

    /// The trial for iteration k at the current θ (without handing it out).
    pub fn trial(&self, k: u64) -> Trial {
        let mut trial = Trial::default();
        self.trial_into(k, self.spsa.factors(k), &mut trial);
        trial
    }

    fn trial_into(&self, k: u64, f: Factors, trial: &mut Trial) {
        let mut rng = self.rng_for(k);
        let mut p = Perturbation {
            iteration: k,
            delta: std::mem::take(&mut trial.delta),
            plus: std::mem::take(&mut trial.plus),
            minus: std::mem::take(&mut trial.minus),
        };
        self.spsa
            .perturb_into(&self.theta, f, &mut rng, &mut p, &mut trial.c_k);
        let (mut plus, mut minus) = (p.plus, p.minus);
        if let Rounding::Integer(mode) = self.rounding {
            for i in 0..plus.len() {
                let (rp, rm) = round_pair(
                    plus[i],
                    minus[i],
                    trial.c_k[i],
                    self.spsa.bounds(i),
                    mode,
                    unit_interval(rng.next_u64()),
                );
                plus[i] = rp as f64;
                minus[i] = rm as f64;
            }
        }
        trial.iteration = k;
        trial.delta = p.delta;
        trial.plus = plus;
        trial.minus = minus;
        trial.opening = (k - 1) * u64::from(self.pairs);
        trial.pairs = self.pairs;
        trial.seed = rng.next_u64();
        trial.track = None;
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
        let f = match self.take_in_flight(k) {
            Some(f) => f,
            None if self.pending.remove(&k) => self.spsa.factors(k),
            None => {
                return Err(if k < self.next_fresh {
                    ApplyError::AlreadyApplied(k)
                } else {
                    ApplyError::NotHandedOut(k)
                });
            }
        };
        step(&self.spsa, self.seed, &mut self.theta, f, signal);
        self.applied += 1;
        Ok(())
    }

    /// Give iteration k back (its result will never come): it is handed out again first.
    pub fn abandon(&mut self, k: u64) {
        if self.take_in_flight(k).is_some() {
            self.pending.insert(k);
        }
    }

    /// Remove iteration k from the trials in flight; its factors if it was there.
    fn take_in_flight(&mut self, k: u64) -> Option<Factors> {
        let at = self.in_flight.iter().position(|&(i, _)| i == k)?;
        Some(self.in_flight.swap_remove(at).1)
    }

    /// The random stream of iteration k: δ first, then rounding draws, then the trial's seed.
    fn rng_for(&self, k: u64) -> IterationRng {
        IterationRng::new(self.seed, k)
    }
}

/// One update, as the driver applies it and as a θ log replays it: iteration `f.k`'s signs
/// drawn again from its stream (as its trial drew them), then θ += a_k/c_k·signal·δ, clipped.
/// The one place this arithmetic is written, so a replay is the run's θ bit for bit.
pub fn step(spsa: &Spsa, seed: u64, theta: &mut [f64], f: Factors, signal: f64) {
    let mut rng = IterationRng::new(seed, f.k);
    let delta = signs(&mut rng, spsa.len());
    spsa.apply_at(theta, f, delta, signal);
}

/// SplitMix64 keyed by (run seed, iteration): iteration k's own reproducible stream.
#[derive(Clone, Debug)]
pub struct IterationRng {
    state: u64,
}

impl IterationRng {
    pub fn new(seed: u64, k: u64) -> Self {
        // Mix the key first, so neighbouring seeds and iterations start far apart.
        let mut key = IterationRng {
            state: seed ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03),
        };
        IterationRng {
            state: key.next_word() ^ k,
        }
    }

    fn next_word(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl TryRng for IterationRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.next_word() >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next_word())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let word = self.next_word().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
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
    fn iteration_streams_are_balanced_and_independent() {
        let mut ones = 0u32;
        let mut same_as_next = 0u32;
        for k in 1..=2000u64 {
            let a = IterationRng::new(42, k).next_u64();
            let b = IterationRng::new(42, k + 1).next_u64();
            ones += a.count_ones();
            same_as_next += (a ^ b).count_zeros();
        }
        // 128 000 bits each: mean 64 000, sd 179.
        assert!((ones as i64 - 64_000).abs() < 900, "{ones}");
        assert!((same_as_next as i64 - 64_000).abs() < 900, "{same_as_next}");
        assert_ne!(
            IterationRng::new(1, 5).next_u64(),
            IterationRng::new(2, 5).next_u64()
        );
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
