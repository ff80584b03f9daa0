//! `spsa approve --db URL RUN`: an approver (a role in `spsa_approver`, or the schema's owner)
//! approves a member's waiting run or match; the workers play it from their next lease.

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct ApproveArgs {
    /// The database URL, as an approver's role.
    #[arg(long, value_name = "URL")]
    db: String,
    /// The waiting run or match (its id, as `spsa status` shows it).
    #[arg(value_name = "RUN")]
    run: i64,
}

pub async fn command(args: ApproveArgs) -> Result<()> {
    let decision = crate::db::admin::Decision::Approve;
    crate::out!(
        "{}",
        crate::db::admin::decide(&args.db, args.run, &decision).await?
    )?;
    Ok(())
}
