//! The commands behind the command line: load the inputs, pick the match source, run the tuner,
//! print the results. `main.rs` only parses arguments and calls these.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::config::{Config, ConfigError};
use crate::report::{ReportError, progress, summary};
use crate::simulate::Simulator;
use crate::tuner::{Ending, RunFiles, StartMode, StartRefused, Tuner};
use crate::vars::{self, VarsError};

/// What `spsa run` and `spsa simulate` were asked to do.
#[derive(Clone, Debug, Default)]
pub struct RunRequest {
    pub config: PathBuf,
    pub mode: StartMode,
    pub seed: Option<u64>,
    pub iterations: Option<u64>,
    pub concurrency: Option<usize>,
    /// `spsa simulate`: use the model whatever the config says.
    pub force_simulate: bool,
}

/// Exit status for an error: 2 for input the user must fix, 1 for everything else.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    let user = err.chain().any(|e| {
        e.is::<ConfigError>()
            || e.is::<VarsError>()
            || e.is::<StartRefused>()
            || e.is::<ReportError>()
    });
    if user { 2 } else { 1 }
}

/// Load and override the config as the request says.
pub fn load_config(req: &RunRequest) -> Result<Config> {
    let mut config = Config::load(&req.config)?;
    if let Some(n) = req.iterations {
        if n == 0 {
            return Err(ConfigError::InFile {
                path: req.config.clone(),
                message: "--iterations must be at least 1".into(),
            }
            .into());
        }
        config.schedule.iterations = n;
    }
    if let Some(c) = req.concurrency {
        config.concurrency = c.max(1);
    }
    if req.seed.is_some() {
        config.seed = req.seed;
    }
    if req.force_simulate {
        config.simulate = true;
    }
    Ok(config)
}

/// Run (or resume) a tuning run to its end or until Ctrl-C / SIGTERM.
pub async fn run(req: RunRequest) -> Result<()> {
    let config = load_config(&req)?;
    let vars = vars::load(&config.variables)?;
    let files = RunFiles {
        log: config.log.clone(),
        checkpoint: config.checkpoint.clone(),
        checkpoint_interval: config.checkpoint_interval,
    };
    if !config.simulate {
        anyhow::bail!(
            "{}: real games are not wired into the tuner yet; set Simulate = 1 or use `spsa simulate`",
            config.path.display()
        );
    }
    let source = Simulator::new(&vars, config.draw_rate);
    let mut tuner = Tuner::prepare(
        vars,
        config.schedule,
        files,
        config.concurrency,
        config.seed,
        req.mode,
    )?;
    if tuner.state().finished {
        eprintln!(
            "{}: the run had already finished",
            config.checkpoint.display()
        );
    } else {
        let mut progress = progress::for_terminal(Duration::from_secs(5));
        let ending = tuner
            .run(&source, shutdown_signal(), &mut *progress)
            .await?;
        drop(progress);
        if ending == Ending::Interrupted {
            eprintln!(
                "stopped after {} of {} iterations; checkpoint {}; continue with `spsa run {} --resume`",
                tuner.state().applied,
                tuner.state().iterations,
                config.checkpoint.display(),
                req.config.display()
            );
        }
    }
    let state = tuner.state();
    let decimals = if config.simulate { 2 } else { 0 };
    print!(
        "{}",
        summary::final_table(tuner.vars(), &state.start, &state.theta, decimals)
    );
    Ok(())
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => ctrl_c.await,
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}

/// Make sure a path exists before it is used, with the path in the message.
pub fn require_file(path: &Path, what: &str) -> Result<()> {
    std::fs::metadata(path)
        .map(|_| ())
        .with_context(|| format!("{}: {what} not found", path.display()))
}
