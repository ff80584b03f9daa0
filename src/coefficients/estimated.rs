//! Gradients through UCI, for engines that do not export coefficients: the same optimisers
//! (Adam, L-BFGS) fed with estimates from engine scores. Far slower than exact gradients: every
//! estimate searches the batch's positions 2 times (SPSA, for Adam) or 2·d + 1 times (central
//! differences, for L-BFGS, which needs a deterministic function), where a coefficient file costs
//! one pass over memory.
//!
//! The model owns no runtime: it blocks on a multi-threaded tokio runtime the caller owns, so the
//! optimisers (synchronous, on the caller's thread) can call it from any thread outside
//! that runtime.

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::{RngExt, SeedableRng};

use super::objective::Model;
use crate::positions::eval::Evaluator;
use crate::positions::{LabelledPositions, Loss};
use crate::vars::Variable;

/// How a gradient is estimated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Estimate {
    /// Simultaneous perturbation: θ ± c∘δ with δ_i = ±1 drawn per estimate, 2 scorings.
    Spsa { seed: u64 },
    /// Central differences per variable, 2·d + 1 scorings.
    CentralDifferences,
}

/// Labelled positions scored through UCI engines, as a [`Model`].
pub struct UciModel<'a> {
    pub runtime: &'a tokio::runtime::Runtime,
    pub evaluator: &'a Evaluator,
    pub set: &'a LabelledPositions,
    pub vars: &'a [Variable],
    pub estimate: Estimate,
    /// Estimates so far (numbers the SPSA draws).
    estimates: AtomicU64,
    /// Positions searched so far.
    pub searched: AtomicU64,
    /// The first engine error (the optimisers see NaN losses; the run reports this).
    pub error: Mutex<Option<anyhow::Error>>,
}

impl<'a> UciModel<'a> {
    pub fn new(
        runtime: &'a tokio::runtime::Runtime,
        evaluator: &'a Evaluator,
        set: &'a LabelledPositions,
        vars: &'a [Variable],
        estimate: Estimate,
    ) -> UciModel<'a> {
        UciModel {
            runtime,
            evaluator,
            set,
            vars,
            estimate,
            estimates: AtomicU64::new(0),
            searched: AtomicU64::new(0),
            error: Mutex::new(None),
        }
    }

    /// Mean loss of `set` at θ (NaN after an engine error, which is kept).
    fn mean(&self, set: &LabelledPositions, loss: &Loss, theta: &[f64]) -> f64 {
        let values: Vec<(String, f64)> = self
            .vars
            .iter()
            .zip(theta)
            .map(|(v, &t)| (v.name.clone(), t.clamp(v.min, v.max)))
            .collect();
        self.searched.fetch_add(set.len() as u64, Ordering::Relaxed);
        match self
            .runtime
            .block_on(self.evaluator.mean_loss(set, &values, loss))
        {
            Ok((l, _)) => l,
            Err(e) => {
                let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
                slot.get_or_insert(e);
                f64::NAN
            }
        }
    }

    /// Takes the engine error, if one happened.
    pub fn take_error(&self) -> Option<anyhow::Error> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl Model for UciModel<'_> {
    fn len(&self) -> usize {
        self.set.len()
    }

    fn loss(&self, loss: &Loss, theta: &[f64]) -> f64 {
        self.mean(self.set, loss, theta)
    }

    fn loss_and_gradient(
        &self,
        loss: &Loss,
        theta: &[f64],
        range: Range<usize>,
        grad: &mut [f64],
    ) -> f64 {
        let batch;
        let set = if range.len() == self.set.len() {
            self.set
        } else {
            batch = self.set.select(range);
            &batch
        };
        let step = |i: usize| self.vars[i].c_end.max(1.0);
        match self.estimate {
            Estimate::Spsa { seed } => {
                let k = self.estimates.fetch_add(1, Ordering::Relaxed);
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ k.rotate_left(32));
                let delta: Vec<f64> = (0..theta.len())
                    .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
                    .collect();
                let plus: Vec<f64> = (0..theta.len())
                    .map(|i| theta[i] + step(i) * delta[i])
                    .collect();
                let minus: Vec<f64> = (0..theta.len())
                    .map(|i| theta[i] - step(i) * delta[i])
                    .collect();
                let (lp, lm) = (self.mean(set, loss, &plus), self.mean(set, loss, &minus));
                for i in 0..theta.len() {
                    grad[i] = (lp - lm) / (2.0 * step(i) * delta[i]);
                }
                (lp + lm) / 2.0
            }
            Estimate::CentralDifferences => {
                let at = self.mean(set, loss, theta);
                let mut probe = theta.to_vec();
                for i in 0..theta.len() {
                    probe[i] = theta[i] + step(i);
                    let lp = self.mean(set, loss, &probe);
                    probe[i] = theta[i] - step(i);
                    let lm = self.mean(set, loss, &probe);
                    probe[i] = theta[i];
                    grad[i] = (lp - lm) / (2.0 * step(i));
                }
                at
            }
        }
    }
}
