//! Conventions of a well-made command-line tool: a reader that stops early (`| head -1`) is a
//! quiet end (exit 0, no panic), whatever the command, when the output is past the pipe's buffer.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Run `spsa ARGS` in `dir`, read one line of its stdout, close the pipe (as `head -1` does) and
/// return the first line, the exit code and stderr.
fn first_line_then_close(dir: &Path, args: &[&str]) -> (String, Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        reader.read_line(&mut first).unwrap();
    } // the read end is dropped here: later writes meet a closed pipe
    let out = child.wait_with_output().unwrap();
    (
        first,
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A simulated run of 5,000 variables: its final table and its reports are far past the 64 KiB
/// of a pipe's buffer.
fn many_variables(dir: &Path) {
    let mut vars = String::from("# name, start, min, max, c_end, R_end, simul_elo\n");
    for i in 0..5000 {
        vars.push_str(&format!("Weight{i},100,0,200,5,0.002,1\n"));
    }
    std::fs::write(dir.join("many.var"), vars).unwrap();
    std::fs::write(
        dir.join("many.conf"),
        "[Main]\nSimulate = 1\nVariables = many.var\nLog = many.log\nIterations = 20\nA = 2\nGamma = 0.101\nAlpha = 0.602\n",
    )
    .unwrap();
}

fn assert_quiet_end(what: &str, (first, code, stderr): (String, Option<i32>, String)) {
    assert!(!first.is_empty(), "{what}: printed nothing");
    assert_eq!(code, Some(0), "{what}: exit {code:?}, stderr:\n{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe") && !stderr.contains("bug"),
        "{what}: stderr:\n{stderr}"
    );
}

#[test]
fn every_command_piped_into_head_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    many_variables(dir.path());
    let sim = first_line_then_close(dir.path(), &["simulate", "many.conf", "--seed", "1"]);
    assert_quiet_end("simulate", sim);
    // The run was written whole before stdout closed: the reports read it.
    assert!(dir.path().join("many.log").exists());
    for format in ["table", "uci", "csv", "tune", "openbench"] {
        let r = first_line_then_close(dir.path(), &["report", "many.log", "--format", format]);
        assert_quiet_end(&format!("report --format {format}"), r);
    }
}

#[test]
fn a_full_disk_on_stdout_is_an_error_not_a_quiet_end() {
    // /dev/full refuses every write with ENOSPC: that is a failure the user must hear about.
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return; // not on this system
    };
    let dir = tempfile::tempdir().unwrap();
    many_variables(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(["simulate", "many.conf", "--seed", "1"])
        .current_dir(dir.path())
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains("cannot write to standard output"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn spsa_stdout(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every command, named in each shell's completion script and in the manual page: the scripts
/// and the page come from the parser's own definitions.
const COMMANDS: [&str; 17] = [
    "run",
    "simulate",
    "init",
    "plan",
    "report",
    "match",
    "verify",
    "positions",
    "coefficients",
    "worker",
    "status",
    "serve",
    "prune",
    "approve",
    "reject",
    "completions",
    "man",
];

#[test]
fn completions_and_the_manual_page_cover_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let script = spsa_stdout(&["completions", shell]);
        for c in COMMANDS {
            assert!(script.contains(c), "{shell}: no `{c}` in\n{script}");
        }
        // Flags too, e.g. run's --resume and match's --sprt.
        assert!(
            script.contains("resume") && script.contains("sprt"),
            "{shell}"
        );
    }
    let bash = spsa_stdout(&["completions", "bash"]);
    assert!(bash.contains("complete -F"), "{bash}");
    let out = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );

    let page = spsa_stdout(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH spsa"),
        "{page}"
    );
    assert!(page.contains(".TH spsa 1"), "{page}");
    for c in COMMANDS {
        assert!(page.contains(c), "no `{c}` in the page");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run_page = std::fs::read_to_string(dir.path().join("spsa-run.1")).unwrap();
    assert!(run_page.contains("\\-\\-resume"), "{run_page}");
    assert!(dir.path().join("spsa.1").exists());
    // A folder that is not there is the user's to fix: exit 2, nothing written.
    let out = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(["man", "--dir"])
        .arg(dir.path().join("missing"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a folder"));
}
