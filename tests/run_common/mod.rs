//! Helpers shared by the tests that drive `spsa run`/`spsa simulate` as a process.

use std::path::Path;
use std::process::{Command, Output};

/// Run the `spsa` binary in `dir` and collect its output.
pub fn spsa_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Process output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The iteration column of a θ log, header skipped.
pub fn log_iterations(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect()
}
