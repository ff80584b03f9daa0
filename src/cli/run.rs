//! `spsa run CONFIG [--resume|--fresh] [--seed N] [--concurrency N]`: a tuning run, on whatever
//! source the config names, to its end or until Ctrl-C / SIGTERM. Its flags are
//! [`RunArgs`](super::flags::RunArgs) (`spsa simulate` takes them too); the run's set-up is
//! the run envelope's ([`crate::method::launch`]).

use anyhow::Result;

use super::flags::RunArgs;
use crate::config::Config;

pub async fn command(args: RunArgs) -> Result<()> {
    let config = Config::load_with(&args.config, &args.overrides())?;
    crate::method::launch::tune(config, &args.launch("run")).await
}
