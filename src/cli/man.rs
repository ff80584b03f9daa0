//! `spsa man`: the manual page (roff), made by clap_mangen from the same definitions the parser
//! uses. To standard output the page of `spsa`; with `--dir DIR` that page and one per command
//! (`spsa-run.1`, ...), as `man` finds them in a `man1` folder.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, CommandFactory};

use crate::error::UserError;

#[derive(Args)]
pub struct ManArgs {
    /// Write spsa.1 and a page per command (spsa-run.1, ...) into this folder instead
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn command(args: &ManArgs) -> Result<()> {
    let cmd = super::Cli::command();
    match &args.dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            crate::out!("{}", String::from_utf8_lossy(&page))
        }
        Some(dir) => {
            if !dir.is_dir() {
                return Err(UserError(format!("--dir {}: not a folder", dir.display())).into());
            }
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("--dir {}: cannot write the pages", dir.display()))?;
            eprintln!("wrote the manual pages to {}", dir.display());
            Ok(())
        }
    }
}
