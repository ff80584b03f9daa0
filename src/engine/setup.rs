//! One side's engine as a run, a match or an identity check starts it: the process to spawn and
//! the options it always plays with, from the typed config.

use std::path::Path;

use anyhow::Result;

use crate::config::EngineConfig;
use crate::engine::{EngineLog, EngineSpec, OptionValue};

/// One side's engine and the options it always plays with (Hash, Threads, OwnBook, …).
#[derive(Clone, Debug)]
pub struct EngineSetup {
    pub spec: EngineSpec,
    pub fixed: Vec<(String, OptionValue)>,
}

impl EngineSetup {
    /// The search threads its fixed `Threads` option asks for (UCI option names are
    /// case-insensitive); 1 without one, or with a value that is not a positive count.
    pub fn threads(&self) -> usize {
        let count = |v: &OptionValue| match v {
            OptionValue::Number(n) if *n >= 1.0 => Some(n.round() as usize),
            OptionValue::Text(t) => t.trim().parse::<usize>().ok().filter(|&n| n >= 1),
            _ => None,
        };
        self.fixed
            .iter()
            .rev()
            .find(|(name, _)| name.eq_ignore_ascii_case("threads"))
            .and_then(|(_, v)| count(v))
            .unwrap_or(1)
    }

    /// Write every line to and from this engine to the engine log at `path` (`None`: no log),
    /// as slot 1; the positions evaluator seats its engines in turn. The file is opened here,
    /// so a path that cannot be written is the user's error before anything runs.
    pub fn log_to(&mut self, path: Option<&Path>) -> Result<()> {
        self.spec.log = open_engine_log(path)?.map(|l| l.seat(1));
        Ok(())
    }
}

/// An engine from the config, named for logs and PGN.
pub fn engine_setup(name: &str, e: &EngineConfig) -> EngineSetup {
    let mut spec = EngineSpec::new(name, &e.command);
    spec.args = e.args.clone();
    spec.working_dir = e.workdir.clone();
    EngineSetup {
        spec,
        fixed: e
            .options
            .iter()
            .map(|(n, v)| (n.clone(), OptionValue::Text(v.clone())))
            .collect(),
    }
}

/// Open the engine log a run or match asks for (`None`: no log). A path that cannot be opened
/// is the user's to fix (exit 2), named in the message.
pub fn open_engine_log(path: Option<&Path>) -> Result<Option<EngineLog>> {
    path.map(|p| {
        EngineLog::open(p).map_err(|e| {
            crate::error::UserError(format!(
                "the engine log `{}` cannot be written: {e}",
                p.display()
            ))
            .into()
        })
    })
    .transpose()
}
