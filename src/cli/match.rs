//! `spsa match`: play game pairs between two engines or two option sets. The flags and the plan
//! live in [`crate::matchrun::args`], shared with `spsa verify`.

use anyhow::Result;

use crate::matchrun::MatchArgs;

pub async fn command(args: MatchArgs) -> Result<()> {
    crate::matchrun::args::run_match(args).await
}
