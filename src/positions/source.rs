//! SPSA on a loss over labelled positions: the per-trial work. Iteration k evaluates one batch of
//! training positions at θ+ and at θ− (the same positions: common random numbers); the batch is
//! split into parts, one per engine process. The tuner turns the loss sums into the signal
//! −(L+ − L−)/2, so θ ← θ − a_k·(L+ − L−)/(2·c_k·δ).
//!
//! Opening the source loads the data, splits off validation positions, starts the engines and
//! fixes K (fitted at the start values on the training set unless the config gives it).

use anyhow::Result;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::eval::{EvalSettings, Evaluator, PairedLoss, paired_loss};
use super::labelled::LabelledPositions;
use super::loss::{Loss, fit_k};
use crate::arena::EngineSetup;
use crate::config::positions::{KSetting, PositionsConfig, Validation};

/// The batch of iteration k (1-based): positions [(k−1)·B, k·B) of a seeded permutation of the
/// training set, a new permutation for every pass over the set (epoch). A pure function of
/// (n, B, seed, k), so a resumed or re-run iteration measures the same positions.
pub fn batch_indices(n: usize, batch: usize, seed: u64, k: u64) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let batch = batch.min(n);
    let start = (k.saturating_sub(1)).saturating_mul(batch as u64);
    let mut out = Vec::with_capacity(batch);
    let mut epoch_cache: Option<(u64, Vec<usize>)> = None;
    for j in 0..batch as u64 {
        let at = start + j;
        let epoch = at / n as u64;
        let within = (at % n as u64) as usize;
        if epoch_cache.as_ref().is_none_or(|(e, _)| *e != epoch) {
            let mut p: Vec<usize> = (0..n).collect();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(epoch);
            p.shuffle(&mut rng);
            epoch_cache = Some((epoch, p));
        }
        out.push(epoch_cache.as_ref().expect("filled above").1[within]);
    }
    out
}

/// Part `part` of `parts` of a batch: a contiguous chunk (sizes differ by at most one).
pub fn part_of(indices: &[usize], part: usize, parts: usize) -> &[usize] {
    let n = indices.len();
    let parts = parts.max(1);
    &indices[n * part / parts..n * (part + 1) / parts]
}

/// The training and validation sets a config names.
pub fn load_sets(
    p: &PositionsConfig,
    seed: u64,
) -> Result<(LabelledPositions, Option<LabelledPositions>)> {
    let all = LabelledPositions::load(&p.train)?;
    Ok(match &p.validation {
        Validation::None => (all, None),
        Validation::File(f) => (all, Some(LabelledPositions::load(f)?)),
        Validation::Fraction(f) => {
            let (t, v) = all.split_validation(*f, seed);
            (t, Some(v))
        }
    })
}

/// Labelled positions scored through engines, for SPSA.
pub struct PositionSource {
    pub train: LabelledPositions,
    pub validation: Option<LabelledPositions>,
    pub names: Vec<String>,
    pub loss: Loss,
    pub batch: usize,
    /// Orders the batches.
    pub seed: u64,
    pub evaluator: Evaluator,
}

impl PositionSource {
    /// Load the data, start `slots` engines, and fix K (fitting it at `start` values when the
    /// config says `k = "fit"`; the fit is reported on stderr).
    pub async fn open(
        p: &PositionsConfig,
        setup: &EngineSetup,
        settings: EvalSettings,
        names: Vec<String>,
        start: &[f64],
        seed: u64,
        slots: usize,
    ) -> Result<PositionSource> {
        let (train, validation) = load_sets(p, seed)?;
        let evaluator = Evaluator::start(setup, settings, &names, slots).await?;
        let loss = match p.k {
            KSetting::Fixed(k) => Loss::new(p.loss, k),
            KSetting::Fit => {
                let values: Vec<(String, f64)> =
                    names.iter().cloned().zip(start.iter().copied()).collect();
                let scores = evaluator.score_all(&train, &values).await?;
                let scored: Vec<_> = scores
                    .scores
                    .iter()
                    .enumerate()
                    .filter_map(|(i, q)| q.map(|q| (train.outcome(i), q)))
                    .collect();
                let fit = fit_k(p.loss, &scored);
                eprintln!(
                    "K fitted on {} training positions at the start values: K = {:.4} ({} loss {:.6})",
                    scored.len(),
                    fit.k,
                    p.loss.name(),
                    fit.loss
                );
                Loss::new(p.loss, fit.k)
            }
        };
        Ok(PositionSource {
            train,
            validation,
            names,
            loss,
            batch: p.batch,
            seed,
            evaluator,
        })
    }

    /// How many parts a trial is split into: one per engine.
    pub fn parts(&self) -> usize {
        self.evaluator.len().min(self.batch).max(1)
    }

    /// Measure part `part` of iteration k's batch on engine `slot`: (L+, L−, failures) as sums.
    pub async fn run_part(
        &self,
        slot: usize,
        iteration: u64,
        plus: &[f64],
        minus: &[f64],
        part: usize,
    ) -> Result<PairedLoss> {
        let batch = batch_indices(self.train.len(), self.batch, self.seed, iteration);
        let mine = part_of(&batch, part, self.parts());
        let named = |t: &[f64]| -> Vec<(String, f64)> {
            self.names.iter().cloned().zip(t.iter().copied()).collect()
        };
        let mut engine = self.evaluator.engine(slot).lock().await;
        paired_loss(
            &mut engine,
            &self.train,
            mine,
            &named(plus),
            &named(minus),
            &self.loss,
        )
        .await
    }

    /// Mean loss of a whole set at θ (training or validation losses for the log).
    pub async fn set_loss(&self, set: &LabelledPositions, theta: &[f64]) -> Result<f64> {
        let values: Vec<(String, f64)> = self
            .names
            .iter()
            .cloned()
            .zip(theta.iter().copied())
            .collect();
        Ok(self.evaluator.mean_loss(set, &values, &self.loss).await?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_each_epoch_once_and_are_seeded() {
        let n = 10;
        let mut epoch: Vec<usize> = (1..=5).flat_map(|k| batch_indices(n, 2, 9, k)).collect();
        epoch.sort_unstable();
        assert_eq!(epoch, (0..10).collect::<Vec<_>>());
        assert_eq!(batch_indices(n, 3, 9, 4), batch_indices(n, 3, 9, 4));
        assert_ne!(batch_indices(n, 10, 9, 1), batch_indices(n, 10, 9, 2));
        assert_ne!(batch_indices(n, 10, 9, 1), batch_indices(n, 10, 8, 1));
        // A batch larger than the set is the whole set.
        assert_eq!(batch_indices(3, 7, 1, 1).len(), 3);
        assert!(batch_indices(0, 7, 1, 1).is_empty());
        let b: Vec<usize> = (0..10).collect();
        let parts: Vec<&[usize]> = (0..3).map(|p| part_of(&b, p, 3)).collect();
        assert_eq!(parts.concat(), b);
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), [3, 3, 4]);
    }
}
