//! `spsa status --db URL`: the shared runs (progress, pairs/s, θ) and their workers.

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct StatusArgs {
    /// The database URL (its password is never printed).
    #[arg(long, value_name = "URL")]
    db: String,
    /// First install (or upgrade) the spsa schema and its groups (spsa_worker, spsa_member,
    /// spsa_approver), as the role that owns the database: members can then create runs
    /// before the owner's first `spsa run --db`.
    #[arg(long)]
    install: bool,
}

pub async fn command(args: StatusArgs) -> Result<()> {
    if args.install {
        crate::db::status::install(&args.db).await?;
    }
    crate::out!("{}", crate::db::status::render(&args.db).await?)?;
    Ok(())
}
