//! `spsa modify --db URL --run ID [--throughput P] [--priority N] [--stop]`: change a shared run
//! while it goes on, or stop a match (as the owner's role); workers follow at their next lease.

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct ModifyArgs {
    /// The database URL, as the role that owns the schema (the one that runs `spsa run --db`).
    #[arg(long, value_name = "URL")]
    db: String,
    /// The run to change (its id, as `spsa status` shows it).
    #[arg(long, value_name = "ID")]
    run: i64,
    /// Its throughput share among the active runs of its priority (above 0, at most 1000):
    /// workers give each run games in proportion to its share.
    #[arg(long, value_name = "P", value_parser = crate::config::check::throughput_text,
          required_unless_present_any = ["priority", "stop"])]
    throughput: Option<f64>,
    /// Its priority: the active runs of the highest priority are served first.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    priority: Option<i32>,
    /// Stop a match (`spsa match --db`): no pair is leased any more; pairs in flight are
    /// recorded when reported, not counted.
    #[arg(long)]
    stop: bool,
}

pub async fn command(args: ModifyArgs) -> Result<()> {
    let change = crate::db::admin::Change {
        throughput: args.throughput,
        priority: args.priority,
        stop: args.stop,
    };
    crate::out!(
        "{}",
        crate::db::admin::modify(&args.db, args.run, change).await?
    )?;
    Ok(())
}
