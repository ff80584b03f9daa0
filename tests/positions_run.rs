//! `spsa run` with `objective = "positions"`, as a process, on the sparring engine: SPSA through
//! the tuner (θ log, loss log, checkpoint, resume, report and its learning curve) and the local
//! search with the same files; bad data is a clear error with exit status 2.

use crate::run_common;

use std::path::Path;

use run_common::{log_iterations, spsa_in, text};

/// The first `n` positions of the shipped training set.
fn head(n: usize) -> String {
    let all = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/sf3000_train.epd"
    ))
    .unwrap();
    all.lines().take(n).map(|l| format!("{l}\n")).collect()
}

fn setup(dir: &Path, method: &str, iterations: u64) {
    std::fs::write(dir.join("train.epd"), head(60)).unwrap();
    std::fs::write(
        dir.join("v.var"),
        "KnightValue,200,50,700,20,2500,0\nBishopValue,250,50,700,20,2500,0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("p.toml"),
        format!(
            "objective = \"positions\"\nvariables = \"v.var\"\nlog = \"run.log\"\niterations = {iterations}\nA = 1\ngamma = 0.101\nalpha = 0.602\nconcurrency = 2\nseed = 3\n\
             [engine1]\ncommand = \"{}\"\n[engine1.options]\nHash = 1\n\
             [positions]\ntrain = \"train.epd\"\nvalidation_fraction = 0.25\ndepth = 1\nmethod = \"{method}\"\nbatch = 20\n",
            env!("CARGO_BIN_EXE_sparring")
        ),
    )
    .unwrap();
}

#[test]
fn spsa_on_positions_runs_through_the_tuner() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    setup(d, "spsa", 4);
    let out = spsa_in(d, &["run", "p.toml"]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("K fitted on 45 training positions"), "{err}");
    assert_eq!(log_iterations(&d.join("run.log")), [1, 2, 3, 4]);
    // Loss log: two parts per iteration (two engines), validation at iteration 1 (and every
    // round(15 / (0.2·20)) = 4th).
    let loss = std::fs::read_to_string(d.join("run.loss.csv")).unwrap();
    let rows: Vec<&str> = loss.lines().collect();
    // A header row first, as every method's loss log has, then the parts.
    assert_eq!(
        rows[0],
        spsa::report::loss_curve::HEADER.trim_end(),
        "{loss}"
    );
    let rows = &rows[1..];
    assert_eq!(rows.len(), 4 * 2 + 2, "{loss}");
    assert_eq!(
        rows.iter().filter(|r| !r.ends_with(',')).count(),
        2,
        "{loss}"
    );
    // A resume of a finished run plays nothing more; the report shows the losses and draws the
    // learning curve.
    let out = spsa_in(d, &["run", "p.toml", "--resume"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(log_iterations(&d.join("run.log")), [1, 2, 3, 4]);
    let out = spsa_in(d, &["report", "run.log", "--plot", "t.png"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("training loss:") && stdout.contains("validation loss:"),
        "{stdout}"
    );
    assert!(std::fs::metadata(d.join("t.loss.png")).unwrap().len() > 1000);
    // Starting again without --fresh is refused; --fresh keeps the old files as backups.
    let out = spsa_in(d, &["run", "p.toml"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn local_search_keeps_the_run_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    setup(d, "local", 100);
    let out = spsa_in(d, &["run", "p.toml"]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("pass 1: training loss"), "{err}");
    assert!(err.contains("(no change: done)"), "{err}");
    let loss = std::fs::read_to_string(d.join("run.loss.csv")).unwrap();
    assert!(loss.starts_with(spsa::report::loss_curve::HEADER), "{loss}");
    let passes = loss.lines().count() - 1;
    assert!(passes >= 1);
    // Every pass row has a validation loss.
    assert!(loss.lines().all(|r| !r.ends_with(',')), "{loss}");
    // The checkpoint's θ is the last θ-log row; the run is finished, a resume does nothing.
    let log = run_common::log_text(&d.join("run.log"));
    let ck = std::fs::read_to_string(d.join("run.checkpoint.var")).unwrap();
    if let Some(last) = log.lines().skip(1).last() {
        let knight = last.split(',').nth(1).unwrap();
        assert!(
            ck.contains(&format!("KnightValue,{knight}")),
            "{last}\n{ck}"
        );
    }
    let out = spsa_in(d, &["run", "p.toml", "--resume"]);
    let err = text(&out.stderr);
    assert!(
        out.status.success() && err.contains("already finished"),
        "{err}"
    );
}

/// `--engine-log` on a tune from positions: the evaluating engines of every method write the
/// log, each engine process as a slot of its own, with the whole exchange of a scoring.
#[test]
fn every_method_writes_the_engine_log() {
    for method in ["spsa", "local", "gradient"] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        setup(d, method, 2);
        if method == "gradient" {
            let mut conf = std::fs::read_to_string(d.join("p.toml")).unwrap();
            conf.push_str("epochs = 1\n");
            std::fs::write(d.join("p.toml"), conf).unwrap();
        }
        let out = spsa_in(d, &["run", "p.toml", "--engine-log", "logs/engines.log"]);
        assert!(out.status.success(), "{method}: {}", text(&out.stderr));
        let log = std::fs::read_to_string(d.join("logs/engines.log")).unwrap();
        assert!(log.starts_with("# spsa engine log, opened at "), "{log}");
        // `ms slot engine >|< line`
        let entries: Vec<Vec<&str>> = log
            .lines()
            .skip(1)
            .map(|l| l.splitn(5, ' ').collect())
            .collect();
        assert!(entries.iter().all(|f| f.len() == 5), "{method}: {log}");
        for slot in ["1", "2"] {
            for (arrow, word) in [
                (">", "uci"),
                ("<", "uciok"),
                (">", "ucinewgame"),
                (">", "position"),
                (">", "go"),
                ("<", "bestmove"),
            ] {
                assert!(
                    entries.iter().any(|f| f[1] == slot
                        && f[3] == arrow
                        && f[4].split(' ').next() == Some(word)),
                    "{method}: slot {slot} has no `{arrow} {word}`"
                );
            }
        }
    }
}

#[test]
fn bad_position_data_is_an_input_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    setup(d, "spsa", 4);
    let mut bad = head(5);
    bad.push_str("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - c9 \"2-0\";\n");
    std::fs::write(d.join("train.epd"), bad).unwrap();
    let out = spsa_in(d, &["run", "p.toml"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("train.epd:6: unreadable result"), "{err}");
}
