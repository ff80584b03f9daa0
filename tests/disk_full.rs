//! A disk that fills while a run writes (issue 55): a small tmpfs holds the θ log and the
//! checkpoint of a simulated run of many variables, so the log's snapshots fill it within
//! seconds. The run must end with a clear message naming the file and the reason, not a panic,
//! leave a checkpoint that reads, and once there is room a `--resume` must finish the very run
//! an uninterrupted one of the same seed writes.
//!
//! Mounting needs root (or CAP_SYS_ADMIN): without it the test prints a note and passes,
//! except under CI=1, where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run_common::{spsa_in, text};

/// A tmpfs mounted at a folder, unmounted when dropped (also when the test panics).
struct Tmpfs {
    at: PathBuf,
}

impl Tmpfs {
    /// Mount a tmpfs of `kib` KiB at `at`, or `None` when this machine does not let us.
    fn mount(at: &Path, kib: u64) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(at)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { at: at.to_owned() }),
            other => {
                let why = match other {
                    Ok(o) => text(&o.stderr),
                    Err(e) => e.to_string(),
                };
                assert!(
                    std::env::var_os("CI").is_none(),
                    "CI: the disk-full test needs to mount a tmpfs (run as root): {why}"
                );
                eprintln!("skipped: cannot mount a tmpfs (needs root): {why}");
                None
            }
        }
    }

    /// Give the mounted tmpfs `kib` KiB, keeping its files.
    fn grow(&self, kib: u64) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,size={kib}k")])
            .arg(&self.at)
            .output()
            .unwrap();
        assert!(out.status.success(), "remount: {}", text(&out.stderr));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.at).status();
    }
}

const WIDTH: usize = 1000;
const ITERATIONS: u64 = 4000;

fn vars() -> String {
    (0..WIDTH)
        .map(|i| format!("v{i},{},-1000,1000,20,0.002,1\n", (i % 7) as i64 * 10 - 30))
        .collect()
}

fn config(logs: &str, checkpoint_seconds: f64) -> String {
    format!(
        "simulate = true\nvariables = \"t.var\"\nlog = \"{logs}/t.log\"\niterations = {ITERATIONS}\nA = 400\ngamma = 0.101\nalpha = 0.602\nseed = 5\ncheckpoint_seconds = {checkpoint_seconds}\n"
    )
}

fn setup(logs: &str, checkpoint_seconds: f64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.var"), vars()).unwrap();
    std::fs::write(dir.path().join("t.toml"), config(logs, checkpoint_seconds)).unwrap();
    dir
}

/// θ after the last row of a θ log.
fn final_theta(log: &Path) -> Vec<f64> {
    let r = spsa::tuner::replay::LogReader::open(log, None).unwrap();
    let last = r.last_label().expect("a row");
    r.theta_at_label(last).unwrap().expect("the last row's θ")
}

/// The log fills the disk: checkpoints every 50 ms, while the log grows by a snapshot of 8 KB
/// every 64 rows (thousands of rows a second), so the log's write is the one that fails (or, on
/// a machine slow enough, the checkpoint's: either is named).
#[test]
fn a_full_disk_under_the_log_ends_the_run_clearly_and_a_resume_finishes_the_same_run() {
    full_disk_then_resume(
        0.05,
        &[
            "full/t.log: cannot write log: ",
            "full/t.checkpoint.var: cannot write: ",
        ],
    );
}

/// The checkpoint fills the disk: written after every row, its temp file (60 KB, beside the
/// checkpoint it replaces) finds no room long before the log's next write would, and the
/// checkpoint before it stays whole.
#[test]
fn a_full_disk_under_the_checkpoint_ends_the_run_clearly_and_a_resume_finishes_the_same_run() {
    full_disk_then_resume(0.0, &["full/t.checkpoint.var: cannot write: "]);
}

/// A run with its log and checkpoint on a 256 KiB tmpfs: it must stop with a message naming one
/// of `named` and "No space left on device", no panic, a whole checkpoint and no temp file
/// left; after the tmpfs grows, `--resume` finishes, and its log is an uninterrupted run's of
/// the same seed byte for byte (so its final θ too).
fn full_disk_then_resume(checkpoint_seconds: f64, named: &[&str]) {
    let dir = setup("full", checkpoint_seconds);
    // The log of the whole run is about 150 bytes a row plus a snapshot of 8 KB every 64 rows
    // (some 600 KB); the checkpoint about 60 KB, twice while it is renamed over.
    let Some(disk) = Tmpfs::mount(&dir.path().join("full"), 256) else {
        return;
    };
    let out = spsa_in(dir.path(), &["run", "t.toml"]);
    let err = text(&out.stderr);
    assert!(
        !out.status.success(),
        "the run cannot finish on 256 KiB: {err}"
    );
    assert_eq!(out.status.code(), Some(1), "an error, not a crash: {err}");
    assert!(!err.contains("panicked"), "no panic: {err}");
    assert!(
        named
            .iter()
            .any(|n| err.contains(&format!("{n}No space left on device"))),
        "the file and the reason are named ({named:?}): {err}"
    );
    assert!(
        err.contains("checkpoint full/t.checkpoint.var; continue with `spsa run t.toml --resume`"),
        "the way on is named: {err}"
    );

    // The checkpoint left is a whole one that a resume accepts.
    let ck = std::fs::read_to_string(disk.at.join("t.checkpoint.var")).unwrap();
    assert!(ck.ends_with('\n'), "a whole checkpoint");
    assert!(ck.contains("#: finished = false\n"), "{ck:.400}");
    assert!(
        !disk.at.join("t.checkpoint.var.tmp").exists(),
        "no temp file left"
    );

    disk.grow(8 * 1024);
    let resumed = spsa_in(dir.path(), &["run", "t.toml", "--resume"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));

    let whole = setup("logs", checkpoint_seconds);
    let out = spsa_in(whole.path(), &["run", "t.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let (a, b) = (disk.at.join("t.log"), whole.path().join("logs/t.log"));
    assert_eq!(
        final_theta(&a),
        final_theta(&b),
        "the resumed run ends at the uninterrupted run's θ"
    );
    assert!(
        std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
        "the resumed log is the uninterrupted run's, byte for byte"
    );
}
