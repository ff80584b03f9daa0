//! Texel's local search over engine options: for each variable try θ_i + step; while that lowers
//! the full training loss keep stepping that way, else try − step the same way; one pass visits
//! every variable; passes repeat until none changes anything. The step is the variable's c_end
//! (at least one unit, as engines take integers). The validation loss is measured after each pass.
//!
//! Every value set's loss is remembered, so the last pass (which confirms that no neighbour is
//! better) re-scores only the neighbours it has not seen.

use std::collections::HashMap;

use anyhow::Result;

use super::eval::Evaluator;
use super::labelled::LabelledPositions;
use super::loss::Loss;

/// What the search tunes: names, steps and bounds per variable.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalProblem {
    pub names: Vec<String>,
    pub steps: Vec<f64>,
    pub min: Vec<f64>,
    pub max: Vec<f64>,
}

/// Something the search reports as it goes (for logs and checkpoints).
#[derive(Clone, Debug, PartialEq)]
pub enum LocalEvent<'a> {
    /// A change was kept: θ now, and the training loss there.
    Accepted { theta: &'a [f64], train_loss: f64 },
    /// A pass ended.
    PassEnd {
        pass: u32,
        theta: &'a [f64],
        train_loss: f64,
        validation_loss: Option<f64>,
        changed: bool,
    },
}

/// How the search ended.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalResult {
    pub theta: Vec<f64>,
    pub train_loss: f64,
    pub validation_loss: Option<f64>,
    pub passes: u32,
    /// Full training-set scorings done (cache misses).
    pub evaluations: u64,
    /// Positions skipped because the engine failed on them, summed over all scorings.
    pub failed_positions: u64,
    /// Stopped early by `keep_going` returning false.
    pub interrupted: bool,
}

/// Run the local search from `start`. `keep_going` is asked before every scoring (Ctrl-C);
/// `report` hears every kept change and every pass end. At most `max_passes` passes.
#[allow(clippy::too_many_arguments)]
pub async fn local_search(
    evaluator: &Evaluator,
    train: &LabelledPositions,
    validation: Option<&LabelledPositions>,
    loss: &Loss,
    problem: &LocalProblem,
    start: &[f64],
    max_passes: u32,
    mut keep_going: impl FnMut() -> bool,
    mut report: impl FnMut(LocalEvent<'_>) -> Result<()>,
) -> Result<LocalResult> {
    let n = problem.names.len();
    let mut cache: HashMap<Vec<i64>, f64> = HashMap::new();
    let mut evaluations = 0u64;
    let mut failed = 0u64;
    let key = |t: &[f64]| -> Vec<i64> { t.iter().map(|v| (v * 1e6).round() as i64).collect() };
    let values = |t: &[f64]| -> Vec<(String, f64)> {
        problem
            .names
            .iter()
            .cloned()
            .zip(t.iter().copied())
            .collect()
    };
    let mut theta: Vec<f64> = start.to_vec();
    let mut interrupted = false;

    let first = evaluator.mean_loss(train, &values(&theta), loss).await?;
    evaluations += 1;
    failed += first.1.faults.len() as u64;
    let mut best = first.0;
    cache.insert(key(&theta), best);
    let mut passes = 0;
    let mut validation_loss = None;
    'passes: while passes < max_passes {
        passes += 1;
        let mut changed = false;
        for i in 0..n {
            let step = problem.steps[i].max(1.0);
            for dir in [1.0, -1.0] {
                let mut moved = false;
                loop {
                    let mut cand = theta.clone();
                    cand[i] = (cand[i] + dir * step).clamp(problem.min[i], problem.max[i]);
                    if cand[i] == theta[i] {
                        break;
                    }
                    let l = match cache.get(&key(&cand)) {
                        Some(&l) => l,
                        None => {
                            if !keep_going() {
                                interrupted = true;
                                break 'passes;
                            }
                            let (l, s) = evaluator.mean_loss(train, &values(&cand), loss).await?;
                            evaluations += 1;
                            failed += s.faults.len() as u64;
                            cache.insert(key(&cand), l);
                            l
                        }
                    };
                    if l < best {
                        best = l;
                        theta = cand;
                        moved = true;
                        changed = true;
                        report(LocalEvent::Accepted {
                            theta: &theta,
                            train_loss: best,
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
        validation_loss = match validation {
            Some(v) => Some(evaluator.mean_loss(v, &values(&theta), loss).await?.0),
            None => None,
        };
        report(LocalEvent::PassEnd {
            pass: passes,
            theta: &theta,
            train_loss: best,
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
        validation_loss,
        passes,
        evaluations,
        failed_positions: failed,
        interrupted,
    })
}
