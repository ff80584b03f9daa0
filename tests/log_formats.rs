//! The θ log's formats (issue 45): a run written by the build of before the change (format 1,
//! CSV rows of θ whole, kept in `tests/legacy_format`) reads, reports, plots and resumes; a new
//! run's log (format 2, results replayed between snapshots) gives the checkpoint's θ bit for
//! bit; a changed byte is an error naming the file and the row.

use std::path::Path;

use spsa::tuner::checkpoint;
use spsa::tuner::replay::{Format, LogReader};

use crate::run_common::{spsa_in, text};

/// A copy of the format-1 run in a folder of its own.
fn legacy_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/legacy_format");
    for f in [
        "legacy.var",
        "legacy.toml",
        "legacy.log",
        "legacy.checkpoint.var",
    ] {
        std::fs::copy(from.join(f), dir.path().join(f)).unwrap();
    }
    dir
}

fn bits(theta: &[f64]) -> Vec<u64> {
    theta.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn a_log_of_format_1_reads_reports_plots_and_resumes_in_its_format() {
    let dir = legacy_copy();
    let d = dir.path();
    let r = LogReader::open(&d.join("legacy.log"), None).unwrap();
    assert_eq!(r.format, Format::Csv);
    assert_eq!(r.names, ["Pawn", "Knight \"N\"", "Bishop", "Rook"]);
    assert_eq!(r.rows(), 60);
    let ck = checkpoint::read(&d.join("legacy.checkpoint.var")).unwrap();
    let last = r.theta_at_label(60).unwrap().unwrap();
    for (got, want) in last.iter().zip(&ck.state.theta) {
        assert!(
            (got - want).abs() <= 5e-5,
            "{last:?} vs {:?}",
            ck.state.theta
        );
    }

    let o = spsa_in(d, &["report", "legacy.log", "--plot", "p.svg"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("iteration 60 of 60 (finished)"), "{out}");
    assert!(out.contains("θ log legacy.log: format 1 (CSV"), "{out}");
    assert!(d.join("p.svg").exists());
    let o = spsa_in(d, &["report", "legacy.checkpoint.var", "--format", "uci"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("setoption name Knight \"N\" value 300"),
        "{}",
        text(&o.stdout)
    );

    // Resumed with more iterations, the run goes on in the format it began in.
    let o = spsa_in(d, &["run", "legacy.toml", "--resume", "--iterations", "90"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let r = LogReader::open(&d.join("legacy.log"), None).unwrap();
    assert_eq!(r.format, Format::Csv);
    assert_eq!(
        (0..r.rows()).map(|i| r.label(i)).collect::<Vec<_>>(),
        (1..=90).collect::<Vec<_>>()
    );
}

#[test]
fn a_new_log_replays_to_the_checkpoints_theta_and_a_changed_byte_names_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/legacy_format");
    std::fs::copy(from.join("legacy.var"), d.join("legacy.var")).unwrap();
    let toml = std::fs::read_to_string(from.join("legacy.toml"))
        .unwrap()
        .replace("legacy.log", "new.log")
        .replace("iterations = 60", "iterations = 300");
    std::fs::write(d.join("new.toml"), toml).unwrap();
    let o = spsa_in(d, &["run", "new.toml"]);
    assert!(o.status.success(), "{}", text(&o.stderr));

    let r = LogReader::open(&d.join("new.log"), None).unwrap();
    assert_eq!(r.format, Format::Replay);
    assert_eq!(r.rows(), 300);
    let ck = checkpoint::read(&d.join("new.checkpoint.var")).unwrap();
    let last = r.theta_at_label(300).unwrap().unwrap();
    assert_eq!(
        bits(&last),
        bits(&ck.state.theta),
        "replayed θ is the run's"
    );
    // 25 bytes a row besides the snapshots (every 64 rows), the names and the definition.
    let len = std::fs::metadata(d.join("new.log")).unwrap().len();
    assert!(len < 300 * 25 + 5 * 60 + 600, "{len} bytes");

    let o = spsa_in(d, &["report", "new.log"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("format 2 (results replayed"),
        "{}",
        text(&o.stdout)
    );

    // The last row's signal changed by one bit: the replay's checksum no longer matches.
    let mut bytes = std::fs::read(d.join("new.log")).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 1;
    std::fs::write(d.join("new.log"), &bytes).unwrap();
    let o = spsa_in(d, &["report", "new.log"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(
        err.contains("new.log: row 300 (byte") && err.contains("checksum"),
        "{err}"
    );
}
