//! `spsa coefficients IN OUT`: converts a coefficient file between its text and binary forms
//! (the binary form loads an order of magnitude faster; docs/gradients.md, "The coefficient file").

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::coefficients::{self, CoefficientError};

/// The command's arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct CoefficientsArgs {
    /// A coefficient file in either form.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// Where to write it: the binary form when the name ends in `.coefb`, else the text form.
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
}

/// Reads `IN` whole (errors name its file and line), then writes `OUT` atomically.
pub fn command(args: &CoefficientsArgs) -> Result<()> {
    let data = coefficients::load(&args.input)?;
    let binary = args
        .output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("coefb"));
    let mut bytes = Vec::with_capacity(data.heap_bytes() + 1024);
    if binary {
        coefficients::write_binary(&data, &mut bytes)
    } else {
        coefficients::write_text(&data, &mut bytes)
    }
    .map_err(|e| CoefficientError::Io {
        path: args.output.clone(),
        source: e,
    })?;
    crate::tuner::checkpoint::write_atomically(&args.output, &bytes)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    eprintln!(
        "{} positions, {} variables, {} entries: {} form, {} bytes to {}",
        data.len(),
        data.variables.len(),
        data.entries(),
        if binary { "binary" } else { "text" },
        bytes.len(),
        args.output.display()
    );
    Ok(())
}
