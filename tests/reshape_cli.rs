//! Going on with more (or fewer) variables: `spsa run CONFIG --resume` with a variables file
//! that adds or drops rows, end to end in simulation. A joined variable follows its own curve,
//! a dropped one is held, the resume after the change is exact across kill -9, and what cannot
//! be honoured is refused with its row, exit 2, nothing written.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::run_common;
use run_common::{log_iterations, spsa_in as run, text};

const TWO: &str = "x,100,-1000,1000,100,0.002,1\ny,-50,-200,200,20,0.002,10\n";
/// TWO with a row added: z starts away from the simulated optimum at 0.
const THREE: &str =
    "x,100,-1000,1000,100,0.002,1\ny,-50,-200,200,20,0.002,10\nz,60,-100,100,10,0.002,20\n";

fn toml(iterations: u64) -> String {
    format!(
        "simulate = true\nvariables = \"t.var\"\nlog = \"logs/t.log\"\niterations = {iterations}\nA = 5000\ngamma = 0.101\nalpha = 0.602\nseed = 9\ncheckpoint_seconds = 0.05\n"
    )
}

/// A folder with a finished run of `TWO` over `first` iterations, its config set to `total`
/// and its variables file to `vars`, ready for `--resume`.
fn after_first_part(first: u64, total: u64, vars: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.var"), TWO).unwrap();
    std::fs::write(dir.path().join("t.toml"), toml(first)).unwrap();
    let o = run(dir.path(), &["run", "t.toml"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::write(dir.path().join("t.toml"), toml(total)).unwrap();
    std::fs::write(dir.path().join("t.var"), vars).unwrap();
    dir
}

fn read(dir: &Path, file: &str) -> String {
    if file.ends_with(".log") {
        return run_common::log_text(&dir.join(file));
    }
    std::fs::read_to_string(dir.join(file)).unwrap()
}

/// The θ log as rows of numbers, header dropped.
fn rows(dir: &Path) -> Vec<Vec<f64>> {
    read(dir, "logs/t.log")
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|f| f.parse().unwrap()).collect())
        .collect()
}

#[test]
fn an_added_variable_joins_on_its_own_curve_and_the_resume_is_exact_across_kill_9() {
    let (first, total) = (100_000, 400_000);
    let before = {
        let d = after_first_part(first, total, THREE);
        read(d.path(), "logs/t.log")
    };

    // Uninterrupted: resumed once with the added row, run to the end.
    let whole = after_first_part(first, total, THREE);
    let o = run(whole.path(), &["run", "t.toml", "--resume"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let log = read(whole.path(), "logs/t.log");
    assert!(log.starts_with("iteration,x,y,z\n"), "{}", &log[..40]);
    let ck = read(whole.path(), "logs/t.checkpoint.var");
    assert!(
        ck.contains("name = \"z\"") && ck.contains(&format!("after = {first}")),
        "{ck}"
    );
    // The rows before the join are the first part's, with z at its start value.
    let rows_whole = rows(whole.path());
    for (line, old) in log.lines().zip(before.lines()).skip(1).take(first as usize) {
        assert_eq!(line, format!("{old},60"));
    }
    // z moves from its join on, toward the model's optimum at 0.
    let next: Vec<f64> = rows_whole[first as usize..][..100]
        .iter()
        .map(|r| r[3])
        .collect();
    assert!(
        next.iter().any(|&z| z != 60.0),
        "z moves from its join: {next:?}"
    );
    let z_end = rows_whole.last().unwrap()[3];
    assert!(z_end.abs() < 40.0, "z went from 60 to {z_end}");
    assert_eq!(
        log_iterations(&whole.path().join("logs/t.log")),
        (1..=total).collect::<Vec<_>>()
    );

    // Interrupted: the same resume killed with SIGKILL part way, then resumed again.
    let cut = after_first_part(first, total, THREE);
    let mut child = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(["run", "t.toml", "--resume"])
        .current_dir(cut.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the reshape is checkpointed and before the end, as seen while the run is
    // stopped: no fixed delay for a fast run to finish in.
    let ck_path = cut.path().join("logs/t.checkpoint.var");
    run_common::kill_9_when(&mut child, &ck_path, |ck| ck.contains("name = \"z\""));
    assert!(
        std::fs::read_to_string(&ck_path)
            .unwrap()
            .contains("finished = false"),
        "killed mid-run"
    );
    let o = run(cut.path(), &["run", "t.toml", "--resume"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        read(cut.path(), "logs/t.log") == log,
        "the log after kill -9 and resume differs from the uninterrupted run's"
    );
    assert_eq!(read(cut.path(), "logs/t.checkpoint.var"), ck);
}

#[test]
fn a_dropped_variable_is_held_at_its_theta_and_the_others_go_on() {
    let (first, total) = (2_000, 4_000);
    let dir = after_first_part(first, total, "x,100,-1000,1000,100,0.002,1\n");
    let o = run(dir.path(), &["run", "t.toml", "--resume"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let log = read(dir.path(), "logs/t.log");
    assert!(log.starts_with("iteration,x,y\n"), "y's column stays");
    let rows = rows(dir.path());
    let y_at_drop = rows[first as usize - 1][2];
    assert!(
        rows[first as usize..].iter().all(|r| r[2] == y_at_drop),
        "y held at {y_at_drop}"
    );
    assert_ne!(
        rows[first as usize - 1][1],
        rows.last().unwrap()[1],
        "x goes on"
    );
    let ck = read(dir.path(), "logs/t.checkpoint.var");
    assert!(ck.contains("held = [\"y\"]"), "{ck}");
    // The closing table still names y, at the value it was held at.
    let stdout = text(&o.stdout);
    assert!(stdout.lines().any(|l| l.starts_with('y')), "{stdout}");
    // The report reads the run's variables from its checkpoint and says y is held.
    let o = run(dir.path(), &["report", "--config", "t.toml"]);
    let report = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let y = report.lines().find(|l| l.starts_with("y ")).expect(&report);
    assert!(y.trim_end().ends_with("held"), "{report}");
}

#[test]
fn a_change_that_cannot_be_honoured_is_refused_with_its_row_and_nothing_written() {
    let cases: [(&str, &[&str]); 3] = [
        // y renamed w, with y's bounds and schedule.
        (
            "x,100,-1000,1000,100,0.002,1\nw,-50,-200,200,20,0.002,10\n",
            &["t.var:2", "`w`", "`y`", "renamed"],
        ),
        // x's bounds shut out its θ (min put just above it: see below).
        ("MIN_ABOVE_THETA", &["t.var:1", "`x`", "shut out its θ"]),
        // y's c_end changed.
        (
            "# a comment first\nx,100,-1000,1000,100,0.002,1\ny,-50,-200,200,25,0.002,10\n",
            &["t.var:3", "`y`", "c_end was 20, now 25"],
        ),
    ];
    for (vars, words) in cases {
        let dir = after_first_part(500, 1000, vars);
        if vars == "MIN_ABOVE_THETA" {
            let theta_x: f64 = theta_in_checkpoint(dir.path(), "x");
            let min = theta_x.floor() + 1.0;
            let vars = format!("x,{min},{min},1000,100,0.002,1\ny,-50,-200,200,20,0.002,10\n");
            std::fs::write(dir.path().join("t.var"), vars).unwrap();
        }
        let log = read(dir.path(), "logs/t.log");
        let ck = read(dir.path(), "logs/t.checkpoint.var");
        let o = run(dir.path(), &["run", "t.toml", "--resume"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        for w in words {
            assert!(err.contains(w), "`{w}` not in: {err}");
        }
        assert_eq!(read(dir.path(), "logs/t.log"), log, "log untouched");
        assert_eq!(
            read(dir.path(), "logs/t.checkpoint.var"),
            ck,
            "checkpoint untouched"
        );
    }
}

/// Variable `name`'s θ in the run's checkpoint (its start column).
fn theta_in_checkpoint(dir: &Path, name: &str) -> f64 {
    let ck = read(dir, "logs/t.checkpoint.var");
    let row = ck
        .lines()
        .find(|l| l.split(',').next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in {ck}"));
    row.split(',').nth(1).unwrap().trim().parse().unwrap()
}

/// The live Elo curve's file names each point's θ by its log row and carries none: a variable
/// that joins leaves its rows as they were (an older file with θ in its rows gains the column:
/// `tuner::reshape`'s unit tests).
#[test]
fn the_curves_file_keeps_its_rows_when_a_variable_joins() {
    let track = "[track]\nshare = 0.2\nagainst = [\"start\"]\npairs = 10\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.var"), TWO).unwrap();
    std::fs::write(dir.path().join("t.toml"), toml(400) + track).unwrap();
    let o = run(dir.path(), &["run", "t.toml"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let before = read(dir.path(), "logs/t.track.csv");
    assert!(before.lines().count() > 3, "{before}");
    std::fs::write(dir.path().join("t.toml"), toml(800) + track).unwrap();
    std::fs::write(dir.path().join("t.var"), THREE).unwrap();
    let o = run(dir.path(), &["run", "t.toml", "--resume"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The curve's file keeps no θ (a point's θ is the log's row), so a variable joining
    // changes nothing in it: its rows stay as they were, and more follow.
    let after = read(dir.path(), "logs/t.track.csv");
    assert!(after.starts_with(&before), "{before}\n---\n{after}");
    for (i, line) in after.lines().enumerate() {
        assert_eq!(line.split(',').count(), 12, "row {}: {line}", i + 1);
    }
    assert!(
        after.lines().count() > before.lines().count(),
        "the curve went on"
    );
    // The report reads the curve back.
    let o = run(dir.path(), &["report", "--config", "t.toml"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}
