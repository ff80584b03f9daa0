//! `spsa completions SHELL`: the shell's completion script for every command and flag, made by
//! clap_complete from the same definitions the parser uses, so it cannot fall behind.

use anyhow::Result;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

pub fn command(args: &CompletionsArgs) -> Result<()> {
    let mut cmd = super::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "spsa", &mut script);
    crate::out!("{}", String::from_utf8_lossy(&script))
}
