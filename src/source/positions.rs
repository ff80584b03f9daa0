//! SPSA on a loss over labelled positions: the per-trial work. Iteration k evaluates one batch of
//! training positions at θ+ and at θ− (the same positions: common random numbers); the batch is
//! split into parts, one per engine process. The tuner turns the loss sums into the signal
//! −(L+ − L−)/2, so θ ← θ − a_k·(L+ − L−)/(2·c_k·δ).
//!
//! Opening the source loads the data, splits off validation positions, starts the engines and
//! fixes K (fitted at the start values on the training set unless the config gives it).

use std::path::PathBuf;

use anyhow::{Result, bail};
use futures::future::BoxFuture;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::arena::{EngineSetup, engine_setup};
use crate::config::positions::{KSetting, PositionsConfig, Validation};
use crate::positions::eval::{EvalSettings, Evaluator, FenBatch, PairedLoss};
use crate::positions::labelled::{LabelledPositions, Outcome};
use crate::positions::loss::{KFit, Loss, LossKind, fit_k};
use crate::positions::loss_log::{HEADER, loss_log_path, part_line};
use crate::source::{Fault, LossSums, Measurement, OpenRequest, Record, Source, Trial};

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

/// Every training position's (result, score) at the values `theta` of `names`, scored through
/// the engines; the positions an engine failed on are left out. What a K fit needs.
pub async fn scored_through(
    evaluator: &Evaluator,
    train: &LabelledPositions,
    names: &[String],
    theta: &[f64],
) -> Result<Vec<(Outcome, f64)>> {
    let values: Vec<(String, f64)> = names.iter().cloned().zip(theta.iter().copied()).collect();
    let scores = evaluator.score_all(train, &values).await?;
    Ok(scores
        .scores
        .iter()
        .enumerate()
        .filter_map(|(i, q)| q.map(|q| (train.outcome(i), q)))
        .collect())
}

/// K fitted at the values `theta` of `names` ([`scored_through`], then the 1-D fit of
/// [`fit_k`]). Also says on how many positions.
pub async fn fit_k_through(
    evaluator: &Evaluator,
    train: &LabelledPositions,
    names: &[String],
    kind: LossKind,
    theta: &[f64],
) -> Result<(KFit, usize)> {
    let scored = scored_through(evaluator, train, names, theta).await?;
    Ok((fit_k(kind, &scored), scored.len()))
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
    /// The loss log the parts' rows go to (`None`: not logged).
    pub loss_log: Option<PathBuf>,
    /// The validation loss is measured every this many iterations (and at iteration 1).
    pub validation_every: u64,
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
                let (fit, scored) =
                    fit_k_through(&evaluator, &train, &names, p.loss, start).await?;
                eprintln!(
                    "K fitted on {scored} training positions at the start values: K = {:.4} ({} loss {:.6})",
                    fit.k,
                    p.loss.name(),
                    fit.loss
                );
                Loss::new(p.loss, fit.k)
            }
        };
        // Validation every few iterations, costing about a tenth of the training evaluations.
        let validation_every = validation.as_ref().map_or(1, |v| {
            (v.len() as f64 / (0.2 * p.batch as f64)).round().max(1.0) as u64
        });
        Ok(PositionSource {
            train,
            validation,
            names,
            loss,
            batch: p.batch,
            seed,
            evaluator,
            loss_log: None,
            validation_every,
        })
    }

    /// Whether iteration k measures the validation loss (in an extra part).
    fn validates(&self, k: u64) -> bool {
        self.validation.is_some() && (k == 1 || k.is_multiple_of(self.validation_every))
    }

    /// How many parts a trial's batch is split into: one per engine.
    pub fn batch_parts(&self) -> usize {
        self.evaluator.len().min(self.batch).max(1)
    }

    /// Measure part `part` of iteration k's batch on engine `slot`: (L+, L−, failures) as sums.
    pub async fn measure_part(
        &self,
        slot: usize,
        iteration: u64,
        plus: &[f64],
        minus: &[f64],
        part: usize,
    ) -> Result<PairedLoss> {
        let batch = batch_indices(self.train.len(), self.batch, self.seed, iteration);
        let mine = part_of(&batch, part, self.batch_parts());
        if mine.is_empty() {
            return Ok(PairedLoss::default());
        }
        let named = |t: &[f64]| -> Vec<(String, f64)> {
            self.names.iter().cloned().zip(t.iter().copied()).collect()
        };
        self.evaluator
            .paired_loss(
                slot,
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

impl Source for PositionSource {
    /// The batch's parts, plus one that scores the validation set when due.
    fn parts(&self, trial: &Trial) -> usize {
        self.batch_parts() + usize::from(self.validates(trial.iteration))
    }

    fn run_part<'a>(
        &'a self,
        slot: usize,
        trial: &'a Trial,
        part: usize,
    ) -> BoxFuture<'a, Result<Measurement>> {
        Box::pin(async move {
            let k = trial.iteration;
            if part >= self.batch_parts() {
                // The validation part: the whole validation set at the trial's midpoint.
                let Some(valid) = &self.validation else {
                    bail!("no validation set for part {part}");
                };
                let mid: Vec<f64> = trial
                    .plus
                    .iter()
                    .zip(&trial.minus)
                    .map(|(p, m)| ((p + m) / 2.0).round())
                    .collect();
                let values: Vec<(String, f64)> = self.names.iter().cloned().zip(mid).collect();
                let all: Vec<usize> = (0..valid.len()).collect();
                let s = self
                    .evaluator
                    .score(slot, FenBatch::of(valid, &all), &values)
                    .await?;
                let l = self.loss.mean(
                    s.scores
                        .iter()
                        .enumerate()
                        .filter_map(|(i, q)| q.map(|q| (valid.outcome(i), q))),
                );
                return Ok(Measurement {
                    faults: faults(&s.faults),
                    records: self.record(part_line(k, 0.0, 0.0, 0, Some(l))),
                    ..Measurement::default()
                });
            }
            let p = self
                .measure_part(slot, k, &trial.plus, &trial.minus, part)
                .await?;
            if p.count == 0 && p.failed >= 10 {
                bail!(
                    "the engine failed on all {} positions of part {part} of iteration {k} (last: {})",
                    p.failed,
                    p.faults.last().map_or("?", String::as_str)
                );
            }
            Ok(Measurement {
                loss: Some(LossSums {
                    plus: p.plus,
                    minus: p.minus,
                    count: p.count,
                    failed: p.failed,
                }),
                faults: faults(&p.faults),
                records: self.record(part_line(k, p.plus, p.minus, p.count, None)),
                ..Measurement::default()
            })
        })
    }

    fn outputs(&self) -> Vec<PathBuf> {
        self.loss_log.iter().cloned().collect()
    }

    fn headers(&self) -> Vec<Record> {
        self.record(HEADER.into())
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.evaluator.quit_all())
    }
}

impl PositionSource {
    fn record(&self, line: String) -> Vec<Record> {
        match &self.loss_log {
            Some(path) => vec![Record {
                path: path.clone(),
                text: line,
            }],
            None => Vec::new(),
        }
    }
}

fn faults(kinds: &[String]) -> Vec<Fault> {
    kinds
        .iter()
        .map(|k| Fault {
            side: "engine1".into(),
            kind: k.clone(),
        })
        .collect()
}

/// Open the source a positions config asks for: the engine is `[engine1]`, `concurrency`
/// processes share the evaluations, the loss log sits beside the θ log, and the engines write
/// the engine log when the config or `--engine-log` names one.
pub async fn open(req: &OpenRequest<'_>, p: &PositionsConfig) -> Result<PositionSource> {
    let config = req.config;
    let Some(games) = &config.games else {
        bail!(
            "{}: a tune from positions needs [engine1]",
            config.path.display()
        );
    };
    let mut setup = engine_setup("engine1", &games.engine1);
    setup.log_to(games.engine_log.as_deref())?;
    let settings = EvalSettings {
        search: p.search,
        deadline: std::time::Duration::from_millis(games.limits.stall_timeout_ms),
    };
    let names: Vec<String> = req.vars.iter().map(|v| v.name.clone()).collect();
    let start: Vec<f64> = req.vars.iter().map(|v| v.start).collect();
    let mut source =
        PositionSource::open(p, &setup, settings, names, &start, req.seed, req.slots).await?;
    source.loss_log = Some(loss_log_path(&config.log));
    Ok(source)
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
