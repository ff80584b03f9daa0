//! `spsa status --db URL`: the shared runs (progress, pairs/s, θ) and their workers.

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct StatusArgs {
    /// The database URL (its password is never printed).
    #[arg(long, value_name = "URL")]
    db: String,
}

pub async fn command(args: StatusArgs) -> Result<()> {
    crate::out!("{}", crate::db::status::render(&args.db).await?)?;
    Ok(())
}
