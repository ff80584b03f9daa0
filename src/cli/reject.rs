//! `spsa reject --db URL RUN --reason TEXT`: an approver rejects a member's waiting run or
//! match; it is stopped, never played, and its author reads the reason in `spsa status`.

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct RejectArgs {
    /// The database URL, as an approver's role.
    #[arg(long, value_name = "URL")]
    db: String,
    /// The waiting run or match (its id, as `spsa status` shows it).
    #[arg(value_name = "RUN")]
    run: i64,
    /// Why, for its author (shown by `spsa status` and on the page).
    #[arg(long, value_name = "TEXT")]
    reason: String,
}

pub async fn command(args: RejectArgs) -> Result<()> {
    let decision = crate::db::admin::Decision::Reject {
        reason: args.reason,
    };
    crate::out!(
        "{}",
        crate::db::admin::decide(&args.db, args.run, &decision).await?
    )?;
    Ok(())
}
