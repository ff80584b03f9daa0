//! Helpers shared by the tests that drive `spsa run`/`spsa simulate` as a process.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

/// Wait (up to 20 s) until `path` exists: a run started in the background wrote it.
#[allow(dead_code)] // not every test crate that includes this module waits
pub fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `spsa run t.toml` in `dir`, killed with SIGKILL 400 ms after its first checkpoint
/// (`logs/t.checkpoint.var`) appeared.
#[allow(dead_code)] // not every test crate that includes this module kills a run
pub fn kill_9_midway(dir: &Path) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(["run", "t.toml"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&dir.join("logs/t.checkpoint.var"));
    std::thread::sleep(Duration::from_millis(400));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// Start `spsa args` in `dir` in the background, its stdout and stderr piped.
#[allow(dead_code)] // not every test crate that includes this module starts one
pub fn spawn_in(dir: &Path, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}
