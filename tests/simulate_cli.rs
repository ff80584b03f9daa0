//! End-to-end runs of the `spsa` binary in simulation: bad input, refusing to overwrite,
//! resuming after kill -9 and after Ctrl-C, reproducibility.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::run_common;
use run_common::{kill_9_midway, log_iterations, spsa_in as run, text};

fn spsa() -> Command {
    Command::new(env!("CARGO_BIN_EXE_spsa"))
}

fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

const VARS: &str = "# test\nx,100,-1000,1000,100,0.002,1\ny,-50,-200,200,20,0.002,10\n";

fn conf(iterations: u64) -> String {
    format!(
        "[Main]\nSimulate = 1\nVariables = t.var\nLog = logs/t.log\nIterations = {iterations}\nA = 500\nGamma = 0.101\nAlpha = 0.602\n"
    )
}

fn setup(conf_text: &str, vars_text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.conf"), conf_text).unwrap();
    std::fs::write(dir.path().join("t.var"), vars_text).unwrap();
    dir
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walk(dir);
    v.sort();
    v
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|e| {
            let p = e.unwrap().path();
            if p.is_dir() { walk(&p) } else { vec![p] }
        })
        .collect()
}

#[test]
fn every_bad_input_is_rejected_with_file_line_and_nothing_written() {
    let good = conf(100);
    let cases: Vec<(String, String, &str)> = vec![
        (
            good.clone(),
            VARS.replace("x,100", "x,abc"),
            "t.var:2: field `start` of `x`: `abc` is not a finite number",
        ),
        (
            good.clone(),
            VARS.replace(",1\ny", "\ny"),
            "t.var:2: expected 7 comma-separated fields",
        ),
        (
            good.clone(),
            VARS.replace("-1000,1000", "1000,-1000"),
            "t.var:2: `x`: min (1000) is greater than max (-1000)",
        ),
        (
            good.clone(),
            VARS.replace("x,100,", "x,5000,"),
            "t.var:2: `x`: start (5000) is outside [min, max]",
        ),
        (
            good.clone(),
            VARS.replace("1000,100,0.002", "1000,0,0.002"),
            "t.var:2: `x`: c_end (0) must be > 0",
        ),
        (
            good.clone(),
            VARS.replace("0.002,1\n", "-0.1,1\n"),
            "t.var:2: `x`: R_end (-0.1) must be >= 0",
        ),
        (
            good.clone(),
            VARS.replace("y,", "x,"),
            "t.var:3: duplicate variable name `x`",
        ),
        (
            good.replace("Iterations = 100", "Iterations = 0"),
            VARS.into(),
            "t.conf:5: [Main] Iterations: must be at least 1",
        ),
        (
            good.replace("A = 500", "A = five"),
            VARS.into(),
            "t.conf:6: [Main] A: `five` is not a number",
        ),
        (
            good.replace("Gamma", "Gama"),
            VARS.into(),
            "t.conf:7: unknown key `Gama` in [Main]",
        ),
        (
            good.replace("Alpha = 0.602\n", ""),
            VARS.into(),
            "t.conf: [Main] is missing required key `Alpha`",
        ),
        (
            good.replace("Simulate = 1", "Simulate = 0"),
            VARS.into(),
            "t.conf: [Engine] is missing required key `Engine1` (needed when Simulate = 0)",
        ),
        (
            good.replace("t.var", "missing.var"),
            VARS.into(),
            "missing.var: cannot read variables file",
        ),
    ];
    for (conf_text, vars_text, want) in cases {
        let dir = setup(&conf_text, &vars_text);
        let before = files(dir.path());
        let out = run(dir.path(), &["run", "t.conf", "--seed", "1"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{want}: {err}");
        assert!(err.contains(want), "want {want:?} in {err:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
        assert_eq!(files(dir.path()), before, "{want}: nothing written");
    }
    let dir = setup(&conf(100), VARS);
    let out = run(dir.path(), &["run", "nope.conf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("nope.conf: cannot read config file"));
}

#[test]
fn refuses_to_overwrite_then_resumes_or_starts_fresh() {
    let dir = setup(&conf(300), VARS);
    let first = run(dir.path(), &["run", "t.conf", "--seed", "3"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let log = run_common::log_text(&dir.path().join("logs/t.log"));
    assert_eq!(log.lines().count(), 301);

    let again = run(dir.path(), &["run", "t.conf", "--seed", "3"]);
    assert_eq!(again.status.code(), Some(2));
    let err = stderr(&again);
    assert!(
        err.contains("holds a finished run (300 iterations)"),
        "{err}"
    );
    assert!(err.contains("--resume") && err.contains("--fresh"), "{err}");
    assert_eq!(
        run_common::log_text(&dir.path().join("logs/t.log")),
        log,
        "log untouched"
    );

    let resumed = run(dir.path(), &["run", "t.conf", "--resume"]);
    assert!(resumed.status.success());
    assert!(stderr(&resumed).contains("already finished"));

    let fresh = run(dir.path(), &["run", "t.conf", "--fresh", "--seed", "3"]);
    assert!(fresh.status.success());
    assert_eq!(
        run_common::log_text(&dir.path().join("logs/t.log.bak")),
        log
    );
    assert_eq!(
        run_common::log_text(&dir.path().join("logs/t.log")),
        log,
        "same seed, same run"
    );
    assert!(dir.path().join("logs/t.checkpoint.var.bak").exists());

    let nothing = setup(&conf(10), VARS);
    let out = run(nothing.path(), &["run", "t.conf", "--resume"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no checkpoint to resume from"));
}

#[test]
fn same_seed_same_trajectory_and_final_table() {
    let a = setup(&conf(2000), VARS);
    let b = setup(&conf(2000), VARS);
    let oa = run(a.path(), &["simulate", "t.conf", "--seed", "42"]);
    let ob = run(b.path(), &["simulate", "t.conf", "--seed", "42"]);
    assert!(oa.status.success() && ob.status.success());
    assert_eq!(oa.stdout, ob.stdout);
    let stdout = String::from_utf8_lossy(&oa.stdout);
    assert!(
        stdout.starts_with("variable  start   final    min   max\nx           100"),
        "{stdout}"
    );
    let la = std::fs::read(a.path().join("logs/t.log")).unwrap();
    assert_eq!(la, std::fs::read(b.path().join("logs/t.log")).unwrap());
    let c = setup(&conf(2000), VARS);
    run(c.path(), &["simulate", "t.conf", "--seed", "43"]);
    assert_ne!(la, std::fs::read(c.path().join("logs/t.log")).unwrap());
}

fn long_toml(iterations: u64) -> String {
    format!(
        "simulate = true\nvariables = \"t.var\"\nlog = \"logs/t.log\"\niterations = {iterations}\nA = 5000\ngamma = 0.101\nalpha = 0.602\nseed = 9\ncheckpoint_seconds = 0.05\n"
    )
}

#[test]
fn kill_9_then_resume_finishes_with_the_same_complete_log() {
    let n = 400_000;
    let dir = setup("", VARS);
    std::fs::write(dir.path().join("t.toml"), long_toml(n)).unwrap();
    kill_9_midway(dir.path());
    let ck = std::fs::read_to_string(dir.path().join("logs/t.checkpoint.var")).unwrap();
    assert!(ck.contains("finished = false"), "killed mid-run:\n{ck}");

    let resumed = run(dir.path(), &["run", "t.toml", "--resume"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let its = log_iterations(&dir.path().join("logs/t.log"));
    assert_eq!(
        its,
        (1..=n).collect::<Vec<_>>(),
        "every iteration once, in order"
    );

    // With Concurrency 1 the resumed run is the uninterrupted run, byte for byte.
    let whole = setup("", VARS);
    std::fs::write(whole.path().join("t.toml"), long_toml(n)).unwrap();
    assert!(run(whole.path(), &["run", "t.toml"]).status.success());
    assert!(
        std::fs::read(dir.path().join("logs/t.log")).unwrap()
            == std::fs::read(whole.path().join("logs/t.log")).unwrap(),
        "resumed log differs from an uninterrupted run"
    );
}

#[test]
fn sigint_stops_cleanly_with_a_checkpoint_and_resume_completes() {
    let n = 1_000_000;
    let dir = setup("", VARS);
    std::fs::write(dir.path().join("t.toml"), long_toml(n)).unwrap();
    let mut child = spsa()
        .args(["run", "t.toml"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ctrl-C once the run is checkpointed and some way in, as seen while it is stopped.
    let log = dir.path().join("logs/t.log");
    run_common::ctrl_c_when(
        &mut child,
        &dir.path().join("logs/t.checkpoint.var"),
        |_| std::fs::metadata(&log).is_ok_and(|m| m.len() > 64 * 1024),
    );
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "clean stop: {}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("stopped after") && err.contains("--resume"),
        "{err}"
    );
    let its = log_iterations(&dir.path().join("logs/t.log"));
    let ck = std::fs::read_to_string(dir.path().join("logs/t.checkpoint.var")).unwrap();
    assert!(
        ck.contains(&format!("applied = {}\n", its.len())),
        "checkpoint holds every logged row"
    );
    assert!((its.len() as u64) < n);

    let resumed = run(
        dir.path(),
        &["run", "t.toml", "--resume", "--concurrency", "3"],
    );
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let its = log_iterations(&dir.path().join("logs/t.log"));
    assert_eq!(its.len() as u64, n);
    assert_eq!(*its.last().unwrap(), n);
}

/// A simulation's θ log is formatted and written by a thread of its own. A write that fails
/// (here the file-size limit, as a full disk would) still stops the run with the log's name and
/// the reason, the checkpoint holds only rows that reached the file, and once there is room a
/// resume finishes the same log an uninterrupted run writes.
#[test]
fn a_log_write_that_fails_stops_the_run_with_the_files_name_and_resume_completes() {
    let n = 200_000;
    let dir = setup("", VARS);
    std::fs::write(dir.path().join("t.toml"), long_toml(n)).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        // 256 blocks of 512 bytes (or of 1 KiB): the log outgrows it, the checkpoint never.
        .arg(format!(
            "trap '' XFSZ; ulimit -f 256; exec '{}' run t.toml --concurrency 4",
            env!("CARGO_BIN_EXE_spsa")
        ))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("logs/t.log: cannot write log: File too large"),
        "{err}"
    );
    let ck = std::fs::read_to_string(dir.path().join("logs/t.checkpoint.var")).unwrap();
    let at: u64 = ck
        .lines()
        .find_map(|l| l.strip_prefix("#: log_bytes = "))
        .unwrap()
        .parse()
        .unwrap();
    let written = std::fs::metadata(dir.path().join("logs/t.log"))
        .unwrap()
        .len();
    assert!(
        at <= written,
        "checkpoint claims {at} bytes, the log has {written}"
    );

    let resumed = run(dir.path(), &["run", "t.toml", "--resume"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let its = log_iterations(&dir.path().join("logs/t.log"));
    assert_eq!(its.len() as u64, n, "every iteration once");
    let mut sorted = its.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (1..=n).collect::<Vec<_>>());
}
