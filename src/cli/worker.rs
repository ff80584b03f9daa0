//! `spsa worker --db URL [--concurrency N] [--engine NAME=PATH]...`: serve the shared runs of a
//! database from this machine until Ctrl-C, giving back whatever is still leased.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::db::worker::{WorkerOptions, serve};
use crate::runtime::shutdown::Shutdown;

#[derive(Args)]
pub struct WorkerArgs {
    /// The database, e.g. postgres://worker:PASSWORD@host/spsa; add
    /// ?sslmode=verify-full&sslrootcert=CA.crt to check the server (see docs/shared-runs.md).
    #[arg(long, value_name = "URL")]
    db: String,
    /// Games played at once.
    #[arg(long, default_value_t = 1, value_parser = super::flags::concurrency_flag)]
    concurrency: usize,
    /// Play this machine's own build of an engine instead of fetching the run's: NAME is the
    /// engine's file name (or Engine1 / Engine2), PATH the binary here. It must search as the
    /// run's engine does (same signature), or the run is refused here. Repeatable.
    #[arg(long = "engine", value_name = "NAME=PATH", value_parser = engine_flag)]
    engines: Vec<(String, PathBuf)>,
    /// The name shown in `spsa status` (default: host name and process id).
    #[arg(long)]
    name: Option<String>,
    /// Exit when no active run is left, instead of waiting for new ones.
    #[arg(long)]
    until_idle: bool,
    /// This machine's engine speed in nodes per second, instead of the benchmark a run with a
    /// clock starts with (to pin a machine's speed, or to test the scaling).
    #[arg(long, value_name = "NPS", value_parser = super::flags::nps_flag)]
    nps: Option<f64>,
}

fn engine_flag(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => {
            Ok((name.to_string(), PathBuf::from(path)))
        }
        _ => Err(format!("`{text}`: expected NAME=PATH")),
    }
}

pub async fn command(args: WorkerArgs) -> Result<()> {
    // A worker that fetches engines needs a cache it can write: say so before anything starts.
    let cache = crate::engine::build::cache_root()?;
    if args.engines.is_empty() {
        crate::engine::build::check_cache(&cache)?;
    }
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "host".into());
    let opts = WorkerOptions {
        name: args
            .name
            .unwrap_or_else(|| format!("{}-{}", host.trim(), std::process::id())),
        concurrency: args.concurrency,
        engines: args.engines,
        only_run: None,
        until_idle: args.until_idle,
        nps: args.nps,
        cache: Some(cache),
    };
    let shutdown = Shutdown::on_signals();
    let summary = serve(&args.db, opts, &shutdown).await?;
    eprintln!(
        "worker {}: {} results reported, {} refused, {} leases given back",
        if shutdown.is_requested() {
            "stopped"
        } else {
            "done"
        },
        summary.reported,
        summary.refused,
        summary.given_back
    );
    Ok(())
}
