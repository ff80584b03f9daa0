//! Issue 67: a damaged checkpoint, θ log or track file is bad input. `spsa report` and
//! `spsa run --resume` alike refuse it with exit 2 and one line naming the file (and the line
//! or byte where it can): bytes that are not UTF-8, a field missing or mistyped, an array that
//! lost a comma, a cut anywhere, a flipped bit. Before, six of forty such runs ended in exit 1,
//! two of them without naming the file.

use std::path::Path;

use crate::run_common::{spsa_in, text};

const VARS: &str = "x,800,-1000,1000,50,0.05,1\ny,-150,-200,200,20,0.05,10\n";

/// A finished simulated run of 200 iterations with a live Elo curve, in its own folder.
fn finished_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.var"), VARS).unwrap();
    std::fs::write(
        dir.path().join("t.toml"),
        "simulate = true\nvariables = \"t.var\"\nlog = \"logs/t.log\"\niterations = 200\n\
         A = 20\ngamma = 0.101\nalpha = 0.602\nseed = 5\n\
         [simulation]\ndraw_rate = 0.3\n[track]\nshare = 0.5\npairs = 16\n",
    )
    .unwrap();
    let out = spsa_in(dir.path(), &["run", "t.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for f in ["t.log", "t.checkpoint.var", "t.track.csv"] {
        assert!(dir.path().join("logs").join(f).exists(), "{f}");
    }
    dir
}

/// A copy of the run's folder with `file` (under logs/) replaced by `bytes`.
fn damaged(run: &Path, file: &str, bytes: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    for name in ["t.var", "t.toml"] {
        std::fs::copy(run.join(name), dir.path().join(name)).unwrap();
    }
    for entry in std::fs::read_dir(run.join("logs")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(
            entry.path(),
            dir.path().join("logs").join(entry.file_name()),
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("logs").join(file), bytes).unwrap();
    dir
}

/// The command refuses with exit 2 and one line `spsa: ...` holding every one of `needles`.
fn refused(dir: &Path, args: &[&str], needles: &[&str], what: &str) {
    let out = spsa_in(dir, args);
    let stderr = text(&out.stderr);
    let cmd = format!("{what}: spsa {}", args.join(" "));
    assert_eq!(out.status.code(), Some(2), "{cmd}: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("spsa: ")).collect();
    assert_eq!(lines.len(), 1, "{cmd}: {stderr}");
    for n in needles {
        assert!(lines[0].contains(n), "{cmd}: `{n}` not in {}", lines[0]);
    }
}

const REPORT: &[&str] = &["report", "logs/t.log", "--format", "csv"];
/// A resume that goes on (the run extended), so it reads every file it continues.
const RESUME: &[&str] = &["run", "t.toml", "--resume", "--iterations", "300"];

/// The 1-based line of the first line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    1 + text.lines().position(|l| l.starts_with(prefix)).unwrap()
}

#[test]
fn a_damaged_checkpoint_is_refused_with_exit_2_naming_it() {
    let run = finished_run();
    let ck = std::fs::read_to_string(run.path().join("logs/t.checkpoint.var")).unwrap();
    let file = "logs/t.checkpoint.var";
    let theta = line_of(&ck, "#: theta");
    let at = ck.find("#: theta").unwrap() + 3;
    let mut invalid = ck.clone().into_bytes();
    invalid[at] = 0xff;
    let no_applied: String = ck
        .lines()
        .filter(|l| !l.starts_with("#: applied"))
        .flat_map(|l| [l, "\n"])
        .collect();
    let applied = line_of(&ck, "#: applied");
    let mistyped = ck.replacen("#: applied = ", "#: applied = \"many\" #", 1);
    // θ's array with a comma lost at a line break.
    let comma = ck.replacen("#: theta = [", "#: theta = [0.5\n#: ", 1);
    let forms: Vec<(&str, Vec<u8>, Vec<String>)> = vec![
        (
            "not UTF-8",
            invalid,
            vec![format!("{file}:{theta}: byte {at}: not UTF-8 text")],
        ),
        (
            "a field missing",
            no_applied.into_bytes(),
            vec![format!("{file}:"), "missing field `applied`".into()],
        ),
        (
            "a field mistyped",
            mistyped.into_bytes(),
            vec![format!(
                "{file}:{applied}: damaged checkpoint state: invalid type: string \"many\""
            )],
        ),
        (
            "a comma lost",
            comma.into_bytes(),
            vec![format!(
                "{file}:{}: damaged checkpoint state: missing comma between array elements",
                theta + 1
            )],
        ),
    ];
    for (what, bytes, needles) in forms {
        let d = damaged(run.path(), "t.checkpoint.var", &bytes);
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        refused(d.path(), REPORT, &needles, what);
        refused(d.path(), RESUME, &needles, what);
    }
    // Cut anywhere: eight places through the state and the variables.
    let bytes = ck.as_bytes();
    for i in 1..8 {
        let cut = bytes.len() * i / 8;
        let d = damaged(run.path(), "t.checkpoint.var", &bytes[..cut]);
        let what = format!("cut at byte {cut}");
        refused(d.path(), REPORT, &[file], &what);
        refused(d.path(), RESUME, &[file], &what);
    }
    // The live curve's table in the checkpoint, which a resume reads.
    let track = ck.replacen("#: handed = ", "#: handed = \"x\" #", 1);
    assert_ne!(track, ck, "the checkpoint keeps the curve's table");
    let d = damaged(run.path(), "t.checkpoint.var", track.as_bytes());
    refused(
        d.path(),
        RESUME,
        &[&format!(
            "{file}: damaged [track] in the checkpoint: invalid type"
        )],
        "the curve's table",
    );
}

#[test]
fn a_damaged_theta_log_is_refused_with_exit_2_naming_it() {
    let run = finished_run();
    let log = std::fs::read(run.path().join("logs/t.log")).unwrap();
    // A flipped bit in the middle of the results: the replay's checksum finds it.
    let mut flipped = log.clone();
    let mid = log.len() / 2;
    flipped[mid] ^= 0x10;
    let d = damaged(run.path(), "t.log", &flipped);
    refused(d.path(), REPORT, &["logs/t.log", "byte "], "a flipped bit");
    refused(d.path(), RESUME, &["logs/t.log"], "a flipped bit");
    // Cut anywhere: shorter than the checkpoint recorded.
    for i in 1..8 {
        let cut = log.len() * i / 8;
        let d = damaged(run.path(), "t.log", &log[..cut]);
        let what = format!("cut at byte {cut}");
        refused(d.path(), REPORT, &["logs/t.log", "cut short"], &what);
        refused(d.path(), RESUME, &["logs/t.log", "cut short"], &what);
    }
}

#[test]
fn a_damaged_track_file_is_refused_with_exit_2_naming_it() {
    let run = finished_run();
    let track = std::fs::read_to_string(run.path().join("logs/t.track.csv")).unwrap();
    assert!(track.lines().count() > 2, "{track}");
    let file = "logs/t.track.csv";
    let mut invalid = track.clone().into_bytes();
    let at = track.find('\n').unwrap() + 3;
    invalid[at] = 0xc3;
    invalid[at + 1] = b'(';
    let d = damaged(run.path(), "t.track.csv", &invalid);
    refused(
        d.path(),
        REPORT,
        &[&format!("{file}:2: byte {at}: not UTF-8 text")],
        "not UTF-8",
    );
    let mut lines: Vec<String> = track.lines().map(str::to_string).collect();
    let mut row: Vec<&str> = lines[1].split(',').collect();
    row[4] = "eight";
    lines[1] = row.join(",");
    let mistyped: String = lines.iter().flat_map(|l| [l.as_str(), "\n"]).collect();
    let d = damaged(run.path(), "t.track.csv", mistyped.as_bytes());
    refused(
        d.path(),
        REPORT,
        &[&format!("{file}: line 2: ")],
        "a field mistyped",
    );
    // Cut anywhere: shorter than the checkpoint recorded.
    let bytes = track.as_bytes();
    for i in 1..6 {
        let cut = bytes.len() * i / 6;
        let d = damaged(run.path(), "t.track.csv", &bytes[..cut]);
        let what = format!("cut at byte {cut}");
        refused(d.path(), REPORT, &[file, "cut short"], &what);
        refused(d.path(), RESUME, &[file, "cut short"], &what);
    }
}
