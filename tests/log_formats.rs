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

/// The format-1 run's variables and config as a new run `NAME.toml` writing `NAME.log`, with
/// `iterations` and `concurrency`, run to its end.
fn new_run(d: &Path, name: &str, iterations: u64, concurrency: u32) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/legacy_format");
    std::fs::copy(from.join("legacy.var"), d.join("legacy.var")).unwrap();
    let toml = std::fs::read_to_string(from.join("legacy.toml"))
        .unwrap()
        .replace("legacy.log", &format!("{name}.log"))
        .replace("iterations = 60", &format!("iterations = {iterations}"))
        .replace("concurrency = 3", &format!("concurrency = {concurrency}"));
    std::fs::write(d.join(format!("{name}.toml")), toml).unwrap();
    let o = spsa_in(d, &["run", &format!("{name}.toml")]);
    assert!(o.status.success(), "{}", text(&o.stderr));
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
    new_run(d, "new", 300, 3);

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

/// `spsa report --format history`'s rows: the header, then `row,iteration,θ…` lines.
fn history(dir: &Path, args: &[&str]) -> (String, Vec<String>) {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "history"]);
    let o = spsa_in(dir, &all);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let out = text(&o.stdout);
    let mut lines = out.lines().map(str::to_string);
    let header = lines.next().expect("a header row");
    (header, lines.collect())
}

fn values(line: &str) -> Vec<f64> {
    line.split(',').map(|v| v.parse().unwrap()).collect()
}

/// Issue 55: the history of a format-2 log is θ after every applied result, as the replay has
/// it (4 places), its last row the `--format csv` values; `--every` and `--variables` pick rows
/// and columns, and a name the log does not have is the user's error.
#[test]
fn the_history_of_a_new_log_is_its_replay_row_by_row() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_run(d, "new", 200, 3);

    let (header, rows) = history(d, &["new.log"]);
    assert_eq!(
        header,
        "row,iteration,Pawn,\"Knight \"\"N\"\"\",Bishop,Rook"
    );
    assert_eq!(rows.len(), 200);
    let r = LogReader::open(&d.join("new.log"), None).unwrap();
    let all: Vec<usize> = (0..r.rows()).collect();
    let mut moved = false;
    r.replay(&all, |i, label, theta| {
        let got = values(&rows[i]);
        assert_eq!(got[..2], [(i + 1) as f64, label as f64], "row {i}");
        for (g, t) in got[2..].iter().zip(theta) {
            assert!((g - t).abs() <= 0.5e-4 + 1e-9, "row {i}: {g} vs {t}");
        }
        moved |= theta[0] != 100.0;
        Ok(())
    })
    .unwrap();
    assert!(moved, "θ moved during the run");
    // The last row holds the values `--format csv` gives, as written.
    let o = spsa_in(d, &["report", "new.log", "--format", "csv"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // `name,start,min,max,c_end,r_end,simul_elo` (the name may hold a quoted comma).
    let current: Vec<String> = text(&o.stdout)
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').nth(5).unwrap().to_string())
        .collect();
    assert_eq!(current.len(), 4);
    let last: Vec<&str> = rows[199].split(',').skip(2).collect();
    assert_eq!(last, current);

    // Every 30th row and the last, the same lines.
    let (_, every) = history(d, &["new.log", "--every", "30"]);
    let want: Vec<String> = [30, 60, 90, 120, 150, 180, 200]
        .iter()
        .map(|&n| rows[n - 1].clone())
        .collect();
    assert_eq!(every, want);
    // Two columns, in the order asked, from the checkpoint's name too.
    let (header, picked) = history(
        d,
        &[
            "new.checkpoint.var",
            "--variables",
            "Rook,Pawn",
            "--every",
            "50",
        ],
    );
    assert_eq!(header, "row,iteration,Rook,Pawn");
    let want: Vec<String> = [50, 100, 150, 200]
        .iter()
        .map(|&n| {
            let f: Vec<&str> = rows[n - 1].split(',').collect();
            [f[0], f[1], f[5], f[2]].join(",")
        })
        .collect();
    assert_eq!(picked, want);

    // The log alone is enough: no checkpoint beside it.
    std::fs::create_dir(d.join("alone")).unwrap();
    std::fs::copy(d.join("new.log"), d.join("alone/new.log")).unwrap();
    assert_eq!(history(&d.join("alone"), &["new.log"]).1, rows);

    // Mistakes are the user's: exit 2, naming what is wrong.
    for (args, says) in [
        (
            vec![
                "new.log",
                "--format",
                "history",
                "--variables",
                "Pawn,Queen",
            ],
            "new.log: no variable `Queen` in the log (its variables: Pawn,",
        ),
        (
            vec!["new.log", "--format", "history", "--every", "0"],
            "--every must be 1 or more",
        ),
        (
            vec!["new.log", "--format", "csv", "--every", "2"],
            "--every and --variables go with --format history",
        ),
        (
            vec!["gone.log", "--format", "history"],
            "gone.log: not found",
        ),
    ] {
        let mut all = vec!["report"];
        all.extend_from_slice(&args);
        let o = spsa_in(d, &all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(says),
            "{args:?}: {}",
            text(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// The history of the earlier forms: a format-1 log's rows are its own lines, numbered; a
/// classic tool's log (no header row) reads through its config.
#[test]
fn the_history_of_older_logs_is_their_rows() {
    let dir = legacy_copy();
    let d = dir.path();
    let log = std::fs::read_to_string(d.join("legacy.log")).unwrap();
    let mut lines = log.lines();
    let (header, rows) = history(d, &["legacy.log"]);
    assert_eq!(header, format!("row,{}", lines.next().unwrap()));
    let want: Vec<String> = lines
        .enumerate()
        .map(|(i, l)| format!("{},{l}", i + 1))
        .collect();
    assert_eq!(want.len(), 60);
    assert_eq!(rows, want);

    // The classic tool's log: full precision, no header; the config's variables name it.
    std::fs::write(
        d.join("c.var"),
        "Up,10,0,100,2,0.002,0\nFlat,0,-5,5,1,0.1,0\n",
    )
    .unwrap();
    std::fs::write(
        d.join("c.conf"),
        "[Main]\nSimulate = 1\nVariables = c.var\nLog = c.log\nIterations = 100\nA = 10\nGamma = 0.101\nAlpha = 0.602\n",
    )
    .unwrap();
    let classic: String = (1..=40)
        .map(|k| {
            format!(
                "{k},{:.15},{:.15}\n",
                10.0 + k as f64 / 3.0,
                -(k as f64) / 7.0
            )
        })
        .collect();
    std::fs::write(d.join("c.log"), classic + "41,1").unwrap();
    let (header, rows) = history(d, &["--config", "c.conf", "--every", "13"]);
    assert_eq!(header, "row,iteration,Up,Flat");
    let want: Vec<String> = [13, 26, 39, 40]
        .iter()
        .map(|&k| {
            let (up, flat) = (10.0 + k as f64 / 3.0, -(k as f64) / 7.0);
            format!("{k},{k},{},{}", four(up), four(flat))
        })
        .collect();
    assert_eq!(rows, want, "the half row at the end is left out");
}

/// `x` to 4 places, trailing zeros dropped, as the θ log's rows have it.
fn four(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// Issue 55: a log torn anywhere in its last records (past where the checkpoint stands, as a
/// kill leaves it) resumes to the uninterrupted run's log byte for byte and its θ bit for bit;
/// a log cut short of the checkpoint's end is refused, naming the file and the byte.
#[test]
fn a_torn_log_resumes_exactly_or_is_refused_naming_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_run(d, "t", 100, 1);
    let checkpoint = std::fs::read(d.join("t.checkpoint.var")).unwrap();
    let at_checkpoint = std::fs::metadata(d.join("t.log")).unwrap().len() as usize;
    // The uninterrupted run on to 128 (whose last records are results 127 and 128 and the
    // snapshot after 128).
    let resume = ["run", "t.toml", "--resume", "--iterations", "128"];
    let o = spsa_in(d, &resume);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let log = std::fs::read(d.join("t.log")).unwrap();
    let theta = checkpoint::read(&d.join("t.checkpoint.var"))
        .unwrap()
        .state
        .theta;
    let last_records = 2 * 25 + 5 + 16 + 8 * 4;
    for cut in log.len() - last_records..log.len() {
        std::fs::write(d.join("t.log"), &log[..cut]).unwrap();
        std::fs::write(d.join("t.checkpoint.var"), &checkpoint).unwrap();
        let o = spsa_in(d, &resume);
        assert!(o.status.success(), "cut at {cut}: {}", text(&o.stderr));
        assert!(
            std::fs::read(d.join("t.log")).unwrap() == log,
            "cut at {cut}"
        );
        let ck = checkpoint::read(&d.join("t.checkpoint.var")).unwrap();
        assert_eq!(bits(&ck.state.theta), bits(&theta), "cut at {cut}");
    }
    // Cut before the checkpoint's end: the rows it counts on are gone.
    let cut = at_checkpoint - 7;
    std::fs::write(d.join("t.log"), &log[..cut]).unwrap();
    std::fs::write(d.join("t.checkpoint.var"), &checkpoint).unwrap();
    let o = spsa_in(d, &resume);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "t.log: byte {cut}: the log ends before byte {at_checkpoint}"
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.join("t.log")).unwrap(),
        &log[..cut],
        "nothing written"
    );
}
