//! `spsa report PATH|--config CONF [--format …] [--plot FILE] [--normalized]`.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::export::{self, Format};
use super::history::{self, History, RunPaths};
use super::{ReportError, elo_curve, history_csv, loss_curve, plot, status};
use crate::tuner::checkpoint::Checkpoint;

/// What `spsa report` was asked to do.
#[derive(Clone, Debug)]
pub struct ReportRequest {
    /// A θ log or a checkpoint.
    pub path: Option<PathBuf>,
    /// A config naming the log and checkpoint.
    pub config: Option<PathBuf>,
    pub format: Format,
    /// Decimals for `uci` and `pairs` (0: integers, as spin options take).
    pub decimals: usize,
    /// The part of the log the trend is measured over (0 < f ≤ 1).
    pub window: f64,
    pub plot: Option<PathBuf>,
    /// Plot only the normalized panel.
    pub normalized: bool,
    /// `--every` and `--variables`, for `--format history`.
    pub history: history_csv::Selection,
}

/// Run `spsa report`: the table or an export on stdout, the plot to its file.
pub fn run(req: &ReportRequest) -> Result<()> {
    if !(req.window > 0.0 && req.window <= 1.0) {
        return Err(ReportError(format!("--window must be in (0, 1], not {}", req.window)).into());
    }
    let history = req.format == Format::History;
    if !history && req.history != history_csv::Selection::default() {
        return Err(ReportError("--every and --variables go with --format history".into()).into());
    }
    if history && req.history.every == Some(0) {
        return Err(ReportError("--every must be 1 or more".into()).into());
    }
    let paths = history::locate(req.path.as_deref(), req.config.as_deref())?;
    if history && req.plot.is_none() {
        // The history alone needs only the log: no status, no sampled history in memory.
        return history_csv::write(&paths, &req.history);
    }
    let loaded = load(paths)?;
    let (paths, ck) = (&loaded.paths, &loaded.ck);
    if let Some(file) = &req.plot {
        let Some(h) = &loaded.log else {
            return Err(ReportError(format!("{}: no θ log to plot", paths.log.display())).into());
        };
        plot::draw(file, ck, h, &paths.log, req.normalized)?;
        eprintln!("wrote {}", file.display());
    }
    if let (Some(file), Some(rows)) = (&req.plot, &loaded.losses) {
        let curve = loss_curve::plot_path(file);
        let loss_log = loss_curve::loss_log_path(&paths.log);
        let title = format!("{}: training and validation loss", loss_log.display());
        loss_curve::draw(&curve, rows, &title)?;
        eprintln!("wrote {}", curve.display());
    }
    if let (Some(file), Some(points)) = (&req.plot, &loaded.track) {
        let curve = elo_curve::plot_path(file);
        let title = format!(
            "{}: Elo against the iteration, held-out openings",
            crate::spsa::track::file_for(&paths.log).display()
        );
        elo_curve::draw(&curve, points, &title)?;
        eprintln!("wrote {}", curve.display());
    }
    let st = loaded.status(req.window);
    match req.format {
        Format::Table => {
            crate::out!("{}", status::render(&st, req.window))?;
            for source in &ck.state.sources {
                crate::outln!("built from source: {source}")?;
            }
            if let Some(rows) = &loaded.losses {
                crate::out!("{}", loss_curve::summary(rows))?;
            }
            if let Some(points) = &loaded.track {
                crate::out!("{}", elo_curve::table(points))?;
            }
            if let Some(last) = loaded.verification.last() {
                crate::out!(
                    "{}",
                    crate::tuner::verification::summary(&loaded.verification, last.of)
                )?;
            }
            if let Some(format) = loaded.log.as_ref().and_then(|h| h.format) {
                crate::outln!("θ log {}: {}", paths.log.display(), format.describe())?;
            }
        }
        Format::History => history_csv::write(paths, &req.history)?,
        f => crate::out!("{}", export::render(f, &ck.vars, &st.theta, req.decimals))?,
    }
    Ok(())
}

/// A run read back from its files: checkpoint (or the config's stand-in), θ log, loss log.
/// `spsa report` and the local runs of `spsa serve` both read runs through [`load`].
#[derive(Clone, Debug)]
pub struct Loaded {
    pub paths: RunPaths,
    pub ck: Checkpoint,
    pub log: Option<History>,
    /// The loss log of a tune from positions, when there is one.
    pub losses: Option<Vec<loss_curve::LossRow>>,
    /// The live Elo curve, when the run measured one.
    pub track: Option<Vec<crate::spsa::track::Point>>,
    /// The steps of its `[verify]` recorded so far (none before the tune finished).
    pub verification: Vec<crate::tuner::verification::Step>,
}

impl Loaded {
    /// Where the run stands, with the noise measured in its own signals (a tune from positions
    /// in its losses, a tune by games in its pentanomial counts).
    pub fn status(&self, window: f64) -> status::Status {
        let signals: Vec<f64> = self
            .losses
            .iter()
            .flatten()
            .filter_map(|r| r.signal)
            .collect();
        match status::SignalScale::losses(&signals) {
            Some(scale) => status::analyse_scaled(&self.ck, self.log.as_ref(), window, scale),
            None => status::analyse(&self.ck, self.log.as_ref(), window),
        }
    }
}

/// Read a run's files: the checkpoint (a classic run's config stands in for it), the θ log
/// when it exists (checked against the checkpoint's variables), and the loss log beside it.
pub fn load(paths: RunPaths) -> Result<Loaded> {
    // A classic run has a config and a log without header, but no checkpoint: the config's
    // variables name the log's columns and, with its schedule, stand in for the checkpoint.
    let classic = paths
        .config
        .as_ref()
        .filter(|_| !paths.checkpoint.exists() && paths.log.exists());
    let (ck, log) = match classic {
        Some(config) => {
            let vars = crate::vars::load(&config.variables)?;
            let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
            let log = History::read_named(&paths.log, Some(&names))?;
            (history::classic_checkpoint(config, vars, &log), Some(log))
        }
        None => {
            let ck = history::read_checkpoint(&paths)?;
            let names: Vec<String> = ck.vars.iter().map(|v| v.name.clone()).collect();
            // The log and the curve's file only grow past what the checkpoint recorded (a
            // resume cuts them back to it): shorter, they were cut.
            history::not_cut(&paths.log, ck.state.log_bytes, "θ log")?;
            let track = crate::spsa::track::file_for(&paths.log);
            if let Some(&len) = ck.state.outputs.iter().find_map(|(name, len)| {
                (Path::new(name).file_name() == track.file_name()).then_some(len)
            }) {
                history::not_cut(&track, len, "live Elo curve's file")?;
            }
            let log = if paths.log.exists() {
                Some(History::read_named(&paths.log, Some(&names))?)
            } else {
                None
            };
            (ck, log)
        }
    };
    if let Some(h) = &log {
        let names: Vec<&str> = ck.vars.iter().map(|v| v.name.as_str()).collect();
        if h.names != names {
            return Err(ReportError(format!(
                "{}: the log's variables {:?} differ from the checkpoint's {:?} ({})",
                paths.log.display(),
                h.names,
                names,
                paths.checkpoint.display()
            ))
            .into());
        }
    }
    // A tune from positions keeps a loss log beside the θ log.
    let loss_log = loss_curve::loss_log_path(&paths.log);
    let losses = if loss_log.exists() {
        Some(loss_curve::read(&loss_log)?)
    } else {
        None
    };
    let track = elo_curve::read(&paths.log)?;
    let verification =
        crate::tuner::verification::read(&crate::tuner::verification::file_for(&paths.log))?;
    Ok(Loaded {
        paths,
        ck,
        log,
        losses,
        track,
        verification,
    })
}
