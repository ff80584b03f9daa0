//! `spsa prune --db URL --older-than DAYS [--dry-run]`: delete the per-iteration records of
//! finished and stopped shared runs idle for longer than DAYS days, keeping each run's summary
//! and final θ (see `crate::db::prune`).

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct PruneArgs {
    /// The database URL, as the role that owns the schema (the one that runs `spsa run --db`).
    #[arg(long, value_name = "URL")]
    db: String,
    /// Prune runs whose last result or state change is more than DAYS days old (0: every
    /// finished or stopped run).
    #[arg(long, value_name = "DAYS", value_parser = days_flag)]
    older_than: f64,
    /// Only print what would be deleted.
    #[arg(long)]
    dry_run: bool,
}

fn days_flag(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(d) if d.is_finite() && d >= 0.0 => Ok(d),
        _ => Err(format!("must be a number of days, 0 or more, not `{text}`")),
    }
}

pub async fn command(args: PruneArgs) -> Result<()> {
    crate::out!(
        "{}",
        crate::db::prune::prune(&args.db, args.older_than, args.dry_run).await?
    )?;
    Ok(())
}
