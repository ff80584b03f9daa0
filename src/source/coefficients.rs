//! SPSA over coefficient files (`objective = "positions"`, `method = "spsa"`, `coefficients =
//! FILE`): the positions objective with the engine's exported evaluation terms in place of the
//! engine. Iteration k scores the same batch as [`super::positions`] would (positions (k−1)·B …
//! k·B − 1 of a seeded order) at θ+ and θ−, from the terms, exactly; no engine is started. The
//! gradient methods are the better tool on these files; this pairing is here so SPSA's schedule
//! can be checked on exact data, and so the same config runs by SPSA, the local search or the
//! gradient methods with one word changed.

use std::path::PathBuf;

use anyhow::{Context, Result};
use futures::future::BoxFuture;

use super::positions::batch_indices;
use super::{AtOnce, LossSums, Measurement, OpenRequest, Record, Source, Trial};
use crate::coefficients::objective::columns;
use crate::coefficients::{Coefficients, split_sets};
use crate::config::positions::PositionsConfig;
use crate::positions::loss::{Loss, start_loss};
use crate::positions::loss_log::{HEADER, loss_log_path, part_line};

/// Coefficient files as a source of paired losses.
pub struct CoefficientSource {
    train: Coefficients,
    validation: Option<Coefficients>,
    /// The θ index of each of the files' variables.
    column: Vec<usize>,
    loss: Loss,
    batch: usize,
    /// Orders the batches.
    seed: u64,
    loss_log: PathBuf,
    /// The validation loss is measured every this many iterations (and at iteration 1).
    validation_every: u64,
}

impl CoefficientSource {
    /// Load the files and fix K (fitted at the start values with `k = "fit"`, said on stderr).
    pub fn open(req: &OpenRequest<'_>, p: &PositionsConfig) -> Result<CoefficientSource> {
        let (train, validation) = split_sets(p, req.seed)?;
        let column = columns(&train, req.vars).with_context(|| p.train.display().to_string())?;
        let start: Vec<f64> = req.vars.iter().map(|v| v.start).collect();
        let mut source = CoefficientSource {
            train,
            validation,
            column,
            loss: Loss::new(p.loss, 1.0),
            batch: p.batch,
            seed: req.seed,
            loss_log: loss_log_path(&req.config.log),
            validation_every: 1,
        };
        let weights = source.weights(&start);
        source.loss = start_loss(p.loss, p.k, || {
            (0..source.train.len())
                .map(|i| (source.train.results[i], source.train.score(i, &weights)))
                .collect()
        });
        // As for positions through engines: validation costs about a tenth of the training work.
        source.validation_every = source.validation.as_ref().map_or(1, |v| {
            (v.len() as f64 / (0.2 * p.batch as f64)).round().max(1.0) as u64
        });
        eprintln!(
            "SPSA on coefficient files: {} training and {} validation positions, batches of {}",
            source.train.len(),
            source.validation.as_ref().map_or(0, |v| v.len()),
            source.batch.min(source.train.len())
        );
        Ok(source)
    }

    /// θ as the files' weights, in their order.
    fn weights(&self, theta: &[f64]) -> Vec<f64> {
        self.column.iter().map(|&c| theta[c]).collect()
    }

    /// The mean loss of a set at θ.
    fn mean_loss(&self, set: &Coefficients, theta: &[f64]) -> f64 {
        let w = self.weights(theta);
        self.loss
            .mean((0..set.len()).map(|i| (set.results[i], set.score(i, &w))))
    }
}

impl AtOnce for CoefficientSource {
    fn measure(&self, trial: &Trial) -> Result<Measurement> {
        let k = trial.iteration;
        let batch = batch_indices(self.train.len(), self.batch, self.seed, k);
        let (plus_w, minus_w) = (self.weights(&trial.plus), self.weights(&trial.minus));
        let (mut plus, mut minus) = (0.0, 0.0);
        for &i in &batch {
            let outcome = self.train.results[i];
            plus += self.loss.point(outcome, self.train.score(i, &plus_w));
            minus += self.loss.point(outcome, self.train.score(i, &minus_w));
        }
        let validation = match &self.validation {
            Some(v) if k == 1 || k.is_multiple_of(self.validation_every) => {
                let mid: Vec<f64> = (trial.plus.iter().zip(&trial.minus))
                    .map(|(p, m)| (p + m) / 2.0)
                    .collect();
                Some(self.mean_loss(v, &mid))
            }
            _ => None,
        };
        let count = batch.len() as u64;
        Ok(Measurement {
            loss: Some(LossSums {
                plus,
                minus,
                count,
                failed: 0,
            }),
            records: vec![Record {
                path: self.loss_log.clone(),
                text: part_line(k, plus, minus, count, validation),
            }],
            ..Measurement::default()
        })
    }
}

impl Source for CoefficientSource {
    fn parts(&self, _trial: &Trial) -> usize {
        1
    }

    fn run_part<'a>(
        &'a self,
        _slot: usize,
        trial: &'a Trial,
        _part: usize,
    ) -> BoxFuture<'a, Result<Measurement>> {
        Box::pin(async move { self.measure(trial) })
    }

    fn at_once(&self) -> Option<&dyn AtOnce> {
        Some(self)
    }

    fn outputs(&self) -> Vec<PathBuf> {
        vec![self.loss_log.clone()]
    }

    fn headers(&self) -> Vec<Record> {
        vec![Record {
            path: self.loss_log.clone(),
            text: HEADER.into(),
        }]
    }
}
