//! `spsa init --engine PATH [--option NAME ...] -o VARS.var`: start the engine, read its spin
//! options, write a variables file ([`crate::config::from_engine`] decides the rows).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::config::from_engine::{file_text, select};
use crate::config::vars::format_setting;
use crate::engine::{EngineSpec, UciEngine};

/// `spsa init`'s command line.
#[derive(Args)]
pub struct InitArgs {
    /// The engine to ask for its options.
    #[arg(long, value_name = "PATH")]
    pub engine: PathBuf,
    /// A command-line argument for the engine (repeat for several).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Take only this spin option (repeat for several); default: every spin option except
    /// engine controls such as Hash, Threads, MultiPV, Move Overhead, UCI_* and Syzygy*.
    #[arg(long = "option", value_name = "NAME")]
    pub options: Vec<String>,
    /// Where to write the variables file (not overwritten when anything is wrong).
    #[arg(short = 'o', long = "output", value_name = "VARS.var")]
    pub out: PathBuf,
    /// How long the engine may take to answer `uci`.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub handshake_timeout: u64,
}

/// Run `spsa init`: start the engine, read its options, write the file, list what was taken.
pub async fn command(args: InitArgs) -> Result<()> {
    let shown = args.engine.display().to_string();
    let mut spec = EngineSpec::new(
        args.engine
            .file_stem()
            .map_or(shown.clone(), |s| s.to_string_lossy().into_owned()),
        &args.engine,
    );
    spec.args = args.args.clone();
    spec.handshake_timeout = Duration::from_millis(args.handshake_timeout);
    let mut engine = UciEngine::start(spec).await?;
    let declared = engine.options().to_vec();
    engine.quit().await;
    let (vars, skipped) = select(&shown, &declared, &args.options)?;
    if !skipped.is_empty() {
        eprintln!(
            "skipped (engine controls or no range; name them with --option to take them): {}",
            skipped.join(", ")
        );
    }
    std::fs::write(&args.out, file_text(&shown, &vars))
        .with_context(|| format!("{}: cannot write", args.out.display()))?;
    for v in &vars {
        crate::outln!(
            "{}: start {}, [{}, {}], c_end {}, R_end {}",
            v.name,
            format_setting(v.start),
            format_setting(v.min),
            format_setting(v.max),
            format_setting(v.c_end),
            format_setting(v.r_end)
        )?;
    }
    crate::outln!("wrote {} variables to {}", vars.len(), args.out.display())?;
    Ok(())
}
