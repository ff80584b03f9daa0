//! Texel's local search over engine options: for each variable try θ_i + step; while that lowers
//! the full training loss keep stepping that way, else try − step the same way; one pass visits
//! every variable; passes repeat until none changes anything. The step is the variable's c_end
//! (at least one unit, as engines take integers). The validation loss is measured after each pass.
//!
//! Every value set's loss is remembered, so the last pass (which confirms that no neighbour is
//! better) re-scores only the neighbours it has not seen.
//!
//! With K fitted (`fit_k`), every value set is scored at its own best K (the loss profiled over
//! K), and each pass also tries scaling every free variable together by ±1%: that is the
//! direction a fitted K trades against, where single steps stall (from a start whose weights
//! are all too high, K falls to match and no one weight can come down alone).

use std::collections::HashMap;

use anyhow::Result;
use futures::future::LocalBoxFuture;

use super::eval::Evaluator;
use super::labelled::LabelledPositions;
use super::labelled::Outcome;
use super::loss::{Loss, fit_k};

/// Training positions' results and scores at θ, and how many could not be scored.
pub type Scored = (Vec<(Outcome, f64)>, u64);

/// What the search measures at θ: positions scored through a UCI engine ([`UciLoss`]), or
/// coefficient files (`method::local` opens one or the other).
pub trait LocalObjective {
    /// The mean training loss at θ, and how many positions could not be scored.
    fn train_loss<'a>(
        &'a self,
        loss: &'a Loss,
        theta: &'a [f64],
    ) -> LocalBoxFuture<'a, Result<(f64, u64)>>;

    /// Every training position's result and score at θ (those that could be scored), and how
    /// many could not: what a K fit needs.
    fn train_scores<'a>(&'a self, theta: &'a [f64]) -> LocalBoxFuture<'a, Result<Scored>>;

    /// The mean validation loss at θ, when there is a validation set.
    fn validation_loss<'a>(
        &'a self,
        loss: &'a Loss,
        theta: &'a [f64],
    ) -> LocalBoxFuture<'a, Result<Option<f64>>>;
}

/// Positions scored by UCI engines at the values of the named options.
pub struct UciLoss<'a> {
    pub evaluator: &'a Evaluator,
    pub train: &'a LabelledPositions,
    pub validation: Option<&'a LabelledPositions>,
    pub names: &'a [String],
}

impl UciLoss<'_> {
    fn values(&self, theta: &[f64]) -> Vec<(String, f64)> {
        self.names
            .iter()
            .cloned()
            .zip(theta.iter().copied())
            .collect()
    }
}

impl LocalObjective for UciLoss<'_> {
    fn train_loss<'a>(
        &'a self,
        loss: &'a Loss,
        theta: &'a [f64],
    ) -> LocalBoxFuture<'a, Result<(f64, u64)>> {
        Box::pin(async move {
            let (l, s) = self
                .evaluator
                .mean_loss(self.train, &self.values(theta), loss)
                .await?;
            Ok((l, s.faults.len() as u64))
        })
    }

    fn train_scores<'a>(&'a self, theta: &'a [f64]) -> LocalBoxFuture<'a, Result<Scored>> {
        Box::pin(async move {
            let s = self
                .evaluator
                .score_all(self.train, &self.values(theta))
                .await?;
            let scored = (s.scores.iter().enumerate())
                .filter_map(|(i, q)| q.map(|q| (self.train.outcome(i), q)))
                .collect();
            Ok((scored, s.faults.len() as u64))
        })
    }

    fn validation_loss<'a>(
        &'a self,
        loss: &'a Loss,
        theta: &'a [f64],
    ) -> LocalBoxFuture<'a, Result<Option<f64>>> {
        Box::pin(async move {
            Ok(match self.validation {
                Some(v) => Some(
                    self.evaluator
                        .mean_loss(v, &self.values(theta), loss)
                        .await?
                        .0,
                ),
                None => None,
            })
        })
    }
}

/// What the search tunes: names, steps and bounds per variable.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalProblem {
    pub names: Vec<String>,
    pub steps: Vec<f64>,
    pub min: Vec<f64>,
    pub max: Vec<f64>,
    /// Fit K at every value set (else K is the loss's).
    pub fit_k: bool,
}

/// The relative size of the move that scales every free variable together (with K fitted).
pub const SCALE_STEP: f64 = 0.01;

/// Something the search reports as it goes (for logs and checkpoints).
#[derive(Clone, Debug, PartialEq)]
pub enum LocalEvent<'a> {
    /// A change was kept: θ now, the training loss there and the K it was scored with.
    Accepted {
        theta: &'a [f64],
        train_loss: f64,
        k: f64,
    },
    /// A pass ended.
    PassEnd {
        pass: u32,
        theta: &'a [f64],
        train_loss: f64,
        k: f64,
        validation_loss: Option<f64>,
        changed: bool,
    },
}

/// How the search ended.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalResult {
    pub theta: Vec<f64>,
    pub train_loss: f64,
    /// The K the final values were scored with.
    pub k: f64,
    pub validation_loss: Option<f64>,
    pub passes: u32,
    /// Full training-set scorings done (cache misses).
    pub evaluations: u64,
    /// Positions skipped because the engine failed on them, summed over all scorings.
    pub failed_positions: u64,
    /// Stopped early by `keep_going` returning false.
    pub interrupted: bool,
}

/// One way to step from θ.
#[derive(Clone, Copy)]
enum Move {
    /// One variable by its step.
    One(usize),
    /// Every free variable scaled together by [`SCALE_STEP`] (with K fitted).
    Scale,
}

impl LocalProblem {
    /// θ moved one step in direction `dir` (±1), rounded and within the bounds.
    fn stepped(&self, theta: &[f64], mv: Move, dir: f64) -> Vec<f64> {
        let mut cand = theta.to_vec();
        match mv {
            Move::One(i) => {
                cand[i] = (theta[i] + dir * self.steps[i].max(1.0)).clamp(self.min[i], self.max[i]);
            }
            Move::Scale => {
                for (i, v) in cand.iter_mut().enumerate() {
                    if self.min[i] < self.max[i] {
                        *v = (*v * (1.0 + dir * SCALE_STEP))
                            .round()
                            .clamp(self.min[i], self.max[i]);
                    }
                }
            }
        }
        cand
    }
}

/// Run the local search from `start`. `keep_going` is asked before every scoring (Ctrl-C);
/// `report` hears every kept change and every pass end. At most `max_passes` passes. With
/// `problem.fit_k` every value set is scored at its own best K; else at `loss.k`.
pub async fn local_search(
    objective: &dyn LocalObjective,
    loss: &Loss,
    problem: &LocalProblem,
    start: &[f64],
    max_passes: u32,
    mut keep_going: impl FnMut() -> bool,
    mut report: impl FnMut(LocalEvent<'_>) -> Result<()>,
) -> Result<LocalResult> {
    let n = problem.names.len();
    // (loss, K) of every value set scored.
    let mut cache: HashMap<Vec<i64>, (f64, f64)> = HashMap::new();
    let mut evaluations = 0u64;
    let mut failed = 0u64;
    let key = |t: &[f64]| -> Vec<i64> { t.iter().map(|v| (v * 1e6).round() as i64).collect() };
    let score = |theta: &[f64]| {
        let theta = theta.to_vec();
        async move {
            if problem.fit_k {
                let (scored, f) = objective.train_scores(&theta).await?;
                let fit = fit_k(loss.kind, &scored);
                anyhow::Ok(((fit.loss, fit.k), f))
            } else {
                let (l, f) = objective.train_loss(loss, &theta).await?;
                Ok(((l, loss.k), f))
            }
        }
    };
    let mut moves: Vec<Move> = (0..n).map(Move::One).collect();
    if problem.fit_k {
        moves.push(Move::Scale);
    }
    let mut theta: Vec<f64> = start.to_vec();
    let mut interrupted = false;

    let ((mut best, mut k), first_failed) = score(&theta).await?;
    evaluations += 1;
    failed += first_failed;
    cache.insert(key(&theta), (best, k));
    let mut passes = 0;
    let mut validation_loss = None;
    'passes: while passes < max_passes {
        passes += 1;
        let mut changed = false;
        for &mv in &moves {
            for dir in [1.0, -1.0] {
                let mut moved = false;
                loop {
                    let cand = problem.stepped(&theta, mv, dir);
                    if cand == theta {
                        break;
                    }
                    let (l, cand_k) = match cache.get(&key(&cand)) {
                        Some(&found) => found,
                        None => {
                            if !keep_going() {
                                interrupted = true;
                                break 'passes;
                            }
                            let (found, f) = score(&cand).await?;
                            evaluations += 1;
                            failed += f;
                            cache.insert(key(&cand), found);
                            found
                        }
                    };
                    if l < best {
                        (best, k) = (l, cand_k);
                        theta = cand;
                        moved = true;
                        changed = true;
                        report(LocalEvent::Accepted {
                            theta: &theta,
                            train_loss: best,
                            k,
                        })?;
                    } else {
                        break;
                    }
                }
                if moved {
                    break;
                }
            }
        }
        validation_loss = objective
            .validation_loss(&Loss::new(loss.kind, k), &theta)
            .await?;
        report(LocalEvent::PassEnd {
            pass: passes,
            theta: &theta,
            train_loss: best,
            k,
            validation_loss,
            changed,
        })?;
        if !changed {
            break;
        }
    }
    Ok(LocalResult {
        theta,
        train_loss: best,
        k,
        validation_loss,
        passes,
        evaluations,
        failed_positions: failed,
        interrupted,
    })
}
