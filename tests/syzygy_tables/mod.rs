//! The real 3-4-piece Syzygy tables for tests, fetched once by `tests/fetch_syzygy.sh` into
//! `target/syzygy/regular` (never committed). Shared by the unit tests (through `#[path]`) and
//! the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The table folder, fetching it on first use. When the tables cannot be had (no network, no
/// pip), a test run with `CI` set fails here with the reason; elsewhere the reason is printed on
/// stderr and `None` tells the caller to skip its tablebase checks.
pub fn tables() -> Option<PathBuf> {
    static TABLES: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match TABLES.get_or_init(fetch) {
        Ok(dir) => Some(dir.clone()),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("Syzygy test tables unavailable in CI: {why}")
        }
        Err(why) => {
            eprintln!("SKIPPING tablebase checks: Syzygy test tables unavailable: {why}");
            None
        }
    }
}

fn fetch() -> Result<PathBuf, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fetch_syzygy.sh");
    let out = Command::new(&script)
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if dir.join("KQvK.rtbw").is_file() {
        Ok(dir)
    } else {
        Err(format!("{}: no KQvK.rtbw after fetching", dir.display()))
    }
}
