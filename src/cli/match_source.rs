//! `spsa match --git REPO --source1 REV --source2 REV --build CMD --binary PATH`: a patch test,
//! each side an engine built from a revision of one repository. A side so given is what a
//! config's `[engineN.source]` table makes (a `config::EngineSource`, checked by the same
//! [`EngineSource::new`]), built by the same `engine::build` here and, in the database, on
//! every worker; with `--config`, `--source1/--source2` change the revision of the config's
//! tables and `--git`, `--build`, `--binary` their other keys.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use crate::config::{EngineConfig, EngineSource, SourceLines};
use crate::engine::build::BuildError;
use crate::error::user_error;

/// The flags of engines built from source.
#[derive(Args, Clone, Debug, Default)]
pub struct SourceFlags {
    /// Engine 1 built from this revision (commit, branch or tag) of the --git repository with
    /// --build and --binary, instead of --engine1; with --config, the revision of its
    /// `[engine1.source]` table.
    #[arg(long, value_name = "REV", conflicts_with = "engine1")]
    pub source1: Option<String>,
    /// Engine 2 built from this revision of the --git repository, instead of --engine2; with
    /// --config, the revision of its `[engine2.source]` table.
    #[arg(long, value_name = "REV", conflicts_with = "engine2")]
    pub source2: Option<String>,
    /// The repository of --source1 and --source2: a folder or any URL `git fetch` takes.
    #[arg(long, value_name = "REPO")]
    pub git: Option<String>,
    /// The command that builds the engine, run with `sh -c` in the checked-out tree of each
    /// revision (e.g. "make -j2").
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// The built executable's path in the tree (e.g. "src/stockfish").
    #[arg(long, value_name = "PATH")]
    pub binary: Option<String>,
}

impl SourceFlags {
    /// The revision flag of side `n` (1 or 2).
    fn rev(&self, n: usize) -> Option<&str> {
        if n == 1 {
            self.source1.as_deref()
        } else {
            self.source2.as_deref()
        }
    }

    /// `--git`, `--build` or `--binary` without a side built from source is a mistake.
    pub fn check(&self) -> Result<()> {
        if self.source1.is_some() || self.source2.is_some() {
            return Ok(());
        }
        let stray = [
            ("--git", self.git.is_some()),
            ("--build", self.build.is_some()),
            ("--binary", self.binary.is_some()),
        ];
        match stray.iter().find(|(_, given)| *given) {
            Some((flag, _)) => Err(user_error(format!(
                "{flag}: says how to build the engines of --source1 REV and --source2 REV; give one of them (a commit, branch or tag)"
            ))),
            None => Ok(()),
        }
    }

    /// Side `n`'s engine built from the revision its flag names, if one does: its source made
    /// of the flags, and of its config's `source` table for what they leave out; its command
    /// the binary's path in the tree until it is built. Its args and options stay.
    pub fn side(&self, n: usize, engine: &mut EngineConfig) -> Result<()> {
        let Some(rev) = self.rev(n) else {
            return Ok(());
        };
        let configured = engine.source.as_ref();
        let flag = format!("--source{n}");
        let key = |value: &Option<String>, name: &str, of: fn(&EngineSource) -> &String| match (
            value, configured,
        ) {
            (Some(v), _) => Ok(v.clone()),
            (None, Some(s)) => Ok(of(s).clone()),
            (None, None) => Err(user_error(format!(
                "{flag} {rev}: give {name} too (engine {n} has no `source` table to take it from)"
            ))),
        };
        let git = key(&self.git, "--git REPO", |s| &s.git)?;
        let build = key(&self.build, "--build CMD", |s| &s.build)?;
        let binary = key(&self.binary, "--binary PATH", |s| &s.binary)?;
        let timeout = configured.map_or(EngineSource::DEFAULT_TIMEOUT, |s| s.timeout);
        let mut source =
            EngineSource::new([&git, rev, &build, &binary], timeout, |g| PathBuf::from(g))
                .map_err(|(key, message)| user_error(format!("{}: {message}", flag_of(n, key))))?;
        source.table = format!("engine{n}");
        // A key from the config keeps its line; one from a flag has none, and its errors name
        // the flag.
        if let Some(c) = configured {
            let line = |flag: &Option<String>, line: usize| if flag.is_some() { 0 } else { line };
            source.lines = SourceLines {
                git: line(&self.git, c.lines.git),
                commit: 0,
                build: line(&self.build, c.lines.build),
                binary: line(&self.binary, c.lines.binary),
            };
        }
        engine.command = PathBuf::from(&source.binary);
        engine.workdir = None;
        engine.source = Some(source);
        Ok(())
    }
}

/// The flag that gives `key` (`git`, `commit`, `build`, `binary`) of side `n`'s source.
fn flag_of(n: usize, key: &str) -> String {
    match key {
        "git" => "--git".into(),
        "commit" => format!("--source{n}"),
        "build" => "--build".into(),
        _ => "--binary".into(),
    }
}

/// A source that could not be fetched or built: the config's error at the line of the key it is
/// about, or a user error naming the flag that gave the key.
pub fn build_error(config: Option<&Path>, s: &EngineSource, e: BuildError) -> anyhow::Error {
    let key = e.key();
    match config.filter(|_| s.lines.of(key) > 0) {
        Some(path) => s.error(path, key, e.to_string()).into(),
        None => {
            let n = if s.table == "engine2" { 2 } else { 1 };
            user_error(format!("{}: {e}", flag_of(n, key)))
        }
    }
}

/// The name a side plays under: its binary's file stem, and for one built from source `@` and
/// the commit's first 8 digits (`eng@1a2b3c4d`), so two commits of one program differ.
pub fn engine_name(engine: &EngineConfig) -> String {
    let command = &engine.command;
    let stem = command
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| command.display().to_string());
    match &engine.source {
        Some(s) => format!("{stem}@{}", s.commit.get(..8).unwrap_or(&s.commit)),
        None => stem,
    }
}
