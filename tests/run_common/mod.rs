//! Helpers shared by the tests that drive `spsa run`/`spsa simulate` as a process.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::child_common;

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

/// The iteration column of a θ log (of any format), header skipped.
pub fn log_iterations(path: &Path) -> Vec<u64> {
    let r = spsa::tuner::replay::LogReader::open(path, None).unwrap();
    (0..r.rows()).map(|i| r.label(i)).collect()
}

/// A θ log (of any format) as CSV text: `iteration,<names>`, then θ of every row.
#[allow(dead_code)] // not every test crate that includes this module reads a log's rows
pub fn log_text(path: &Path) -> String {
    spsa::tuner::replay::LogReader::open(path, None)
        .unwrap()
        .to_csv()
        .unwrap()
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

/// `spsa run t.toml` in `dir`, killed with SIGKILL part way: once its checkpoint
/// (`logs/t.checkpoint.var`) says `finished = false` and its θ log has grown past 64 KiB (some
/// thousands of rows), as seen while the run is stopped (see [`kill_9_when`]).
#[allow(dead_code)] // not every test crate that includes this module kills a run
pub fn kill_9_midway(dir: &Path) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(["run", "t.toml"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let log = dir.join("logs/t.log");
    kill_9_when(&mut child, &dir.join("logs/t.checkpoint.var"), |_| {
        std::fs::metadata(&log).is_ok_and(|m| m.len() > 64 * 1024)
    });
}

/// Stop `child` (a run) in a state it can be seen in, and leave it stopped: its checkpoint at
/// `checkpoint` says `finished = false` and `ready(checkpoint text)` holds. The run is looked at
/// only while it is stopped (SIGSTOP, every thread seen stopped in /proc), so what was seen is
/// what the caller's signal finds, however loaded the machine: no fixed delay can let it finish
/// first. Between looks it runs for a few milliseconds. Panics if it ends before it was seen in
/// that state (a run too short for its test), or after 60 s. Returns the checkpoint's text.
#[allow(dead_code)] // not every test crate that includes this module stops a run
pub fn stop_at(
    child: &mut std::process::Child,
    checkpoint: &Path,
    ready: impl Fn(&str) -> bool,
) -> String {
    let t = Instant::now();
    loop {
        child_common::stop(child);
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before it was seen mid-way: make it longer");
        }
        let ck = std::fs::read_to_string(checkpoint).unwrap_or_default();
        if ck.contains("finished = false") && ready(&ck) {
            return ck;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the run never reached the state looked for; checkpoint:\n{ck}"
        );
        child_common::go_on(child);
        std::thread::sleep(Duration::from_millis(3));
    }
}

/// Kill `child` with SIGKILL in the state [`stop_at`] waits for (killed while stopped: it never
/// goes on past what was seen).
#[allow(dead_code)] // not every test crate that includes this module kills a run
pub fn kill_9_when(
    child: &mut std::process::Child,
    checkpoint: &Path,
    ready: impl Fn(&str) -> bool,
) {
    stop_at(child, checkpoint, ready);
    child.kill().unwrap(); // SIGKILL ends a stopped process too
    child.wait().unwrap();
}

/// Send `child` SIGINT (Ctrl-C) in the state [`stop_at`] waits for: sent while it is stopped,
/// taken as it goes on.
#[allow(dead_code)] // not every test crate that includes this module stops a run
pub fn ctrl_c_when(
    child: &mut std::process::Child,
    checkpoint: &Path,
    ready: impl Fn(&str) -> bool,
) {
    stop_at(child, checkpoint, ready);
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    child_common::go_on(child);
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
