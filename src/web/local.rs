//! Local runs: read from their files (checkpoint, θ log, loss log) through the same
//! [`report::command::load`](crate::report::command::load) as `spsa report`, again whenever one
//! of them changed, while the run writes them.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use anyhow::Result;

use super::model::{self, LossPoint, MatchSummary, RATE_SAMPLES, RunDetail, RunSummary, Series};
use crate::matchrun::record::MatchRecord;

/// The span of a local run's current rate, in seconds.
const RATE_WINDOW: f64 = 300.0;
use crate::report::command::{Loaded, load};
use crate::report::history::{self, RunPaths};
use crate::report::status::current;

/// One local run and what was last read of it.
pub struct LocalRun {
    pub id: String,
    paths: RunPaths,
    /// The files' (length, modified) when last read.
    stamp: Vec<Option<(u64, SystemTime)>>,
    loaded: Option<Loaded>,
    /// (when, applied) at each reload that found more rows: the rate over time.
    samples: VecDeque<(SystemTime, Instant, u64)>,
}

impl LocalRun {
    /// A run named by a θ log, a checkpoint or a config; its files must be readable now.
    pub fn open(id: String, path: &Path) -> Result<LocalRun> {
        let is_config = path
            .extension()
            .is_some_and(|e| e == "conf" || e == "toml" || e == "ini");
        let paths = if is_config {
            if !path.exists() {
                return Err(
                    crate::report::ReportError(format!("{}: not found", path.display())).into(),
                );
            }
            history::locate(None, Some(path))?
        } else {
            history::locate(Some(path), None)?
        };
        let mut run = LocalRun {
            id,
            paths,
            stamp: Vec::new(),
            loaded: None,
            samples: VecDeque::new(),
        };
        run.refresh()?;
        Ok(run)
    }

    fn files(&self) -> [PathBuf; 5] {
        [
            self.paths.log.clone(),
            self.paths.checkpoint.clone(),
            crate::positions::loss_log::loss_log_path(&self.paths.log),
            crate::spsa::track::file_for(&self.paths.log),
            crate::tuner::verification::file_for(&self.paths.log),
        ]
    }

    /// Read the files again if any changed. A file caught half-written keeps the last reading.
    pub fn refresh(&mut self) -> Result<()> {
        let stamp: Vec<_> = self.files().iter().map(|f| stamp(f)).collect();
        if self.loaded.is_some() && stamp == self.stamp {
            return Ok(());
        }
        match load(self.paths.clone()) {
            Ok(loaded) => {
                let applied = current(&loaded.ck, loaded.log.as_ref()).0;
                if self.samples.back().is_none_or(|s| s.2 != applied) {
                    if self.samples.len() == RATE_SAMPLES {
                        self.samples.pop_front();
                    }
                    self.samples
                        .push_back((SystemTime::now(), Instant::now(), applied));
                }
                self.loaded = Some(loaded);
                self.stamp = stamp;
                Ok(())
            }
            Err(e) if self.loaded.is_some() => {
                tracing::debug!(
                    "{}: keeping the last reading: {e:#}",
                    self.paths.log.display()
                );
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn is_positions(&self) -> bool {
        self.loaded.as_ref().is_some_and(|l| l.losses.is_some())
    }

    /// Games (or evaluations) per iteration: pairs · 2 for games; positions count their rows.
    fn work_per_iteration(&self) -> f64 {
        let Some(l) = &self.loaded else { return 2.0 };
        let s = &l.ck.state;
        if s.applied > 0 && s.counts.pairs > 0 {
            2.0 * s.counts.pairs as f64 / s.applied as f64
        } else {
            2.0 * s.pairs_per_iteration.max(1) as f64
        }
    }

    /// (unix seconds, rate) between successive samples.
    fn rate_history(&self) -> Vec<(f64, f64)> {
        let per = self.work_per_iteration();
        self.samples
            .iter()
            .zip(self.samples.iter().skip(1))
            .filter_map(|(a, b)| {
                let dt = b.1.duration_since(a.1).as_secs_f64();
                let unix =
                    b.0.duration_since(SystemTime::UNIX_EPOCH)
                        .ok()?
                        .as_secs_f64();
                (dt > 0.0).then(|| (unix, (b.2.saturating_sub(a.2)) as f64 * per / dt))
            })
            .collect()
    }

    /// The rate over the last [`RATE_WINDOW`] seconds up to now (so it falls to 0 when the
    /// run stops): from the oldest reading in the window, or the one just before it.
    fn recent_rate(&self) -> Option<f64> {
        let last = self.samples.back()?;
        let now = Instant::now();
        let within = self
            .samples
            .iter()
            .position(|s| now.duration_since(s.1).as_secs_f64() <= RATE_WINDOW)
            .unwrap_or(self.samples.len() - 1);
        let from = &self.samples[within.min(self.samples.len().saturating_sub(2))];
        let dt = now.duration_since(from.1).as_secs_f64();
        (from.2 < last.2 && dt > 0.0)
            .then(|| (last.2 - from.2) as f64 * self.work_per_iteration() / dt)
            .or(Some(0.0))
            .filter(|_| self.samples.len() >= 2)
    }

    pub fn summary(&self) -> RunSummary {
        let l = self
            .loaded
            .as_ref()
            .expect("a local run is read when opened");
        let (applied, _) = current(&l.ck, l.log.as_ref());
        let total = l.ck.state.iterations;
        let rate = self.recent_rate();
        let finished = applied >= total || l.ck.state.finished;
        let seconds_left = rate
            .filter(|&r| r > 0.0 && !finished)
            .map(|r| (total - applied.min(total)) as f64 * self.work_per_iteration() / r);
        let last = std::fs::metadata(&self.paths.log)
            .or_else(|_| std::fs::metadata(&self.paths.checkpoint))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .map(|d| d.as_secs_f64());
        let positions = self.is_positions();
        RunSummary {
            id: self.id.clone(),
            name: self.paths.log.display().to_string(),
            objective: if positions { "positions" } else { "games" }.into(),
            state: if finished { "finished" } else { "running" }.into(),
            applied,
            total,
            rate,
            rate_unit: if positions {
                "evaluations/s"
            } else {
                "games/s"
            }
            .into(),
            seconds_left,
            faults: l.ck.state.counts.faults.values().sum(),
            last_activity_seconds: last,
            priority: None,
            throughput: None,
        }
    }

    pub fn detail(&self) -> RunDetail {
        let l = self
            .loaded
            .as_ref()
            .expect("a local run is read when opened");
        detail_of(
            l,
            self.summary(),
            self.paths.log.display().to_string(),
            self.rate_history(),
        )
    }
}

/// A run page's data from a run read back from its files.
pub fn detail_of(
    l: &Loaded,
    summary: RunSummary,
    source: String,
    rate_history: Vec<(f64, f64)>,
) -> RunDetail {
    let (applied, theta) = crate::report::status::current(&l.ck, l.log.as_ref());
    let vars = &l.ck.vars;
    let spsa = model::spsa_of(vars, &l.ck.state);
    let mut series = Series::default();
    if let Some(h) = &l.log {
        let rows = model::downsample(h.rows(), model::MAX_POINTS);
        series.rows = h.log_rows.max(h.rows()) as u64;
        series.iterations = rows.iter().map(|&r| h.iterations[r]).collect();
        series.values = h
            .values
            .iter()
            .map(|col| rows.iter().map(|&r| col[r]).collect())
            .collect();
        (series.band_points, series.band) = model::band(&spsa, vars.len(), &series.iterations);
    }
    let loss = l
        .losses
        .as_ref()
        .map(|rows| {
            model::downsample(rows.len(), model::MAX_POINTS)
                .into_iter()
                .map(|i| LossPoint {
                    iteration: rows[i].iteration,
                    train: rows[i].train,
                    validation: rows[i].validation,
                })
                .collect()
        })
        .unwrap_or_default();
    let counts = &l.ck.state.counts;
    let (uci, csv) = model::exports(vars, &theta);
    RunDetail {
        summary,
        source,
        vars: model::var_views(vars, &spsa, &l.ck.state.start, &theta, applied),
        series,
        loss,
        track: l
            .track
            .iter()
            .flatten()
            .map(model::TrackPoint::of)
            .collect(),
        gained: model::GainView::of(l.track.as_deref().unwrap_or_default()),
        verification: l.verification.clone(),
        pentanomial: counts.pentanomial,
        wdl: [counts.wins, counts.draws, counts.losses],
        rate_history,
        workers: Vec::new(),
        reference_nps: None,
        engines: Vec::new(),
        uci,
        csv,
        var_page: Default::default(),
    }
}

/// A match read from its record file (`spsa match --pgn` or `--record`), again whenever the
/// file changed.
pub struct LocalMatch {
    pub id: String,
    path: PathBuf,
    stamp: Option<(u64, SystemTime)>,
    record: MatchRecord,
}

impl LocalMatch {
    /// A match named by its record; the file must be a readable record now.
    pub fn open(id: String, path: &Path) -> Result<LocalMatch> {
        let record =
            MatchRecord::read(path).map_err(|e| crate::error::UserError(format!("{e:#}")))?;
        Ok(LocalMatch {
            id,
            path: path.to_path_buf(),
            stamp: stamp(path),
            record,
        })
    }

    /// Read the record again if it changed; a reading that fails keeps the last one.
    pub fn refresh(&mut self) {
        let now = stamp(&self.path);
        if now == self.stamp {
            return;
        }
        match MatchRecord::read(&self.path) {
            Ok(r) => {
                self.record = r;
                self.stamp = now;
            }
            Err(e) => tracing::debug!("keeping the last reading: {e:#}"),
        }
    }

    pub fn summary(&self) -> MatchSummary {
        MatchSummary::of(
            self.id.clone(),
            self.path.display().to_string(),
            self.record.clone(),
        )
    }
}

/// A file's (length, modified), `None` when it cannot be read.
fn stamp(path: &Path) -> Option<(u64, SystemTime)> {
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
}
