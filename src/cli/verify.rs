//! `spsa verify`: a run's tuned values against its start values, with the config's engines.

use anyhow::Result;

use crate::matchrun::VerifyArgs;

pub async fn command(args: VerifyArgs) -> Result<()> {
    crate::matchrun::verify::run_verify(args).await
}
