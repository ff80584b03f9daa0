//! Held-out openings in a shared run (PostgreSQL started by tests/pg_common): its workers play
//! only the tuning part of the book, and the split is recorded with the run, so the owner's
//! checkpoint (rebuilt on another machine by `--resume`) makes `spsa verify` and `[verify]`
//! play only the openings no worker was given.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::pg_common;
use crate::run_common;
use pg_common::{Cluster, wait_for};
use run_common::{log_iterations, spsa_in, text};

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");
const SPARRING: &str = env!("CARGO_BIN_EXE_sparring");

/// A folder with the first 10 openings of the bundled book (`ten.epd`), `minors.var` and
/// `t.toml`: sparring at depth 1, seed 5, holdout 0.2, 4 iterations of 2 pairs, a `[verify]`.
fn setup() -> tempfile::TempDir {
    held_out_run("[verify]\npairs = 3\n")
}

/// [`setup`]'s folder with `verify` (TOML: a `[verify]` table or a `[[verify]]` ladder) as the
/// config's verification.
pub fn held_out_run(verify: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("openings/balanced_6ply.epd");
    let text = std::fs::read_to_string(bundled).unwrap();
    let ten: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .take(10)
        .collect();
    std::fs::write(d.join("ten.epd"), ten.join("\n") + "\n").unwrap();
    std::fs::write(
        d.join("minors.var"),
        "KnightValue,150,50,700,30,0.01,0\nBishopValue,150,50,700,30,0.01,0\n",
    )
    .unwrap();
    std::fs::write(
        d.join("t.toml"),
        format!(
            "variables = \"minors.var\"\nlog = \"t.log\"\niterations = 4\npairs_per_iteration = 2\n\
             A = 10\ngamma = 0.101\nalpha = 0.602\nconcurrency = 1\nseed = 5\n\
             [engine1]\ncommand = {SPARRING:?}\n[games]\nbook = \"ten.epd\"\nholdout = 0.2\n\
             depth = 1\nmax_plies = 120\npgn = \"t.pgn\"\n{verify}"
        ),
    )
    .unwrap();
    dir
}

/// The start positions (FEN tags) of the games in a PGN file.
fn openings_played(path: &Path) -> BTreeSet<String> {
    let pgn = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    pgn.lines()
        .filter_map(|l| l.strip_prefix("[FEN \"")?.strip_suffix("\"]"))
        .map(str::to_string)
        .collect()
}

fn checkpoint(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("t.checkpoint.var")).unwrap()
}

#[test]
fn a_shared_runs_workers_play_tuning_openings_and_its_verification_the_held_out_ones() {
    let cluster = Cluster::shared();
    let db = cluster.database("heldout_shared");
    let dir = setup();
    let d = dir.path();
    let owner = Command::new(SPSA)
        .args(["run", "t.toml", "--db", &db.url, "--no-play"])
        .current_dir(d)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&db, "SELECT coalesce(max(id), 0) FROM spsa.runs", |s| {
        !s.is_empty() && s != "0"
    });
    // A worker that has nothing but the URL: it fetches the engine and plays every pair, the
    // tune's and then its `[verify]` match's.
    let url = db.worker_role("held_w", "pwh");
    let mut worker = Command::new(SPSA)
        .args(["worker", "--db", &url, "--name", "w1"])
        .env("XDG_CACHE_HOME", d.join("cache"))
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = owner.wait_with_output().unwrap();
    worker.kill().unwrap();
    worker.wait().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        db.psql("SELECT count(*) FROM spsa.match_pairs WHERE worker = 'held_w/w1'"),
        "3",
        "the worker played the [verify] match"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM spsa.results WHERE worker = 'held_w/w1'"),
        "4",
        "the worker played every iteration"
    );
    assert_eq!(log_iterations(&d.join("t.log")), vec![1, 2, 3, 4]);
    // The owner's checkpoint records the split as a local run's does.
    let ck = checkpoint(d);
    assert!(
        ck.contains("#: holdout = 0.2\n") && ck.contains("#: holdout_openings = 10\n"),
        "{ck}"
    );
    // 8 pairs over the 8 tuning openings: one pass of the order covers all of them.
    let tuning = openings_played(&d.join("t.pgn"));
    assert_eq!(tuning.len(), 8, "{tuning:?}");
    // `[verify]` at the end of the shared run plays the held-out openings and says so.
    let shown = text(&out.stdout);
    assert!(
        shown.contains("ten.epd, 3 pairs play each about 1.5 times: held out of the tune by holdout 0.2 and seed 5 (the split recorded in ")
            && shown.contains("openings: 2 of 2 used"),
        "{shown}"
    );

    // The owner re-attaches on another machine (no checkpoint) with a config that now asks
    // for another share: the run's stored split wins.
    std::fs::remove_file(d.join("t.checkpoint.var")).unwrap();
    std::fs::remove_file(d.join("t.verify.txt")).unwrap();
    let conf = std::fs::read_to_string(d.join("t.toml"))
        .unwrap()
        .replace("holdout = 0.2", "holdout = 0.5");
    std::fs::write(d.join("t.toml"), conf).unwrap();
    let resumed = spsa_in(d, &["run", "t.toml", "--db", &db.url, "--resume"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let ck = checkpoint(d);
    assert!(
        ck.contains("#: holdout = 0.2\n") && ck.contains("#: holdout_openings = 10\n"),
        "{ck}"
    );
    assert_eq!(openings_played(&d.join("t.pgn")), tuning);
    assert!(
        text(&resumed.stdout).contains("held out of the tune by holdout 0.2 and seed 5"),
        "{}",
        text(&resumed.stdout)
    );

    // `spsa verify` plays only the two openings no worker was given.
    let pgn = d.join("v.pgn");
    let verified = spsa_in(
        d,
        &[
            "verify",
            "t.toml",
            "--pairs",
            "4",
            "--progress",
            "0",
            "--pgn",
            pgn.to_str().unwrap(),
        ],
    );
    let shown = text(&verified.stdout);
    assert!(verified.status.success(), "{}", text(&verified.stderr));
    let held = openings_played(&pgn);
    assert_eq!(held.len(), 2, "{held:?}");
    assert!(tuning.is_disjoint(&held), "{tuning:?} {held:?}");
    assert!(
        shown.contains("openings: 2 of 10 in ")
            && shown
                .contains("held out of the tune by holdout 0.2 and seed 5 (the split recorded in "),
        "{shown}"
    );
}

/// A summary or verdict with its numbers taken out: what two runs of one config share when
/// their games differ.
fn form(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let mut in_number = false;
    while let Some(ch) = chars.next() {
        let next_digit = chars.peek().is_some_and(char::is_ascii_digit);
        if ch.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else if next_digit
            && (if in_number {
                ch == '.'
            } else {
                matches!(ch, '+' | '-' | '−')
            })
        {
            // A decimal point inside a number, or a sign before one: part of the number.
        } else if ch == ' ' {
            in_number = false;
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            in_number = false;
            out.push(ch);
        }
    }
    out
}

/// One envelope for every run: a local run and a shared run of the same config print the same
/// summary and the same `[verify]` verdict line (numbers aside), and a second start over the
/// first one's files is refused with the same message, exit 2, before the database is asked.
#[test]
fn a_local_and_a_shared_run_of_one_config_go_through_one_envelope() {
    let cluster = Cluster::shared();
    let db = cluster.database("envelope");
    let (local, shared) = (setup(), setup());
    let runs: [(&Path, Vec<&str>); 2] = [
        (local.path(), vec!["run", "t.toml"]),
        (shared.path(), vec!["run", "t.toml", "--db", &db.url]),
    ];
    let mut outputs = Vec::new();
    let mut refusals = Vec::new();
    for (dir, args) in &runs {
        let first = spsa_in(dir, args);
        assert!(first.status.success(), "{}", text(&first.stderr));
        let out = text(&first.stdout);
        assert!(out.contains("KnightValue"), "{out}");
        let verdicts: Vec<&str> = out.lines().filter(|l| l.contains("verdict")).collect();
        assert_eq!(verdicts.len(), 1, "one [verify] verdict: {out}");
        assert_eq!(log_iterations(&dir.join("t.log")).len(), 4);
        // Where the verification's results came from shows in its result block alone: a
        // local match counts its faults, a match in the database its pairs.
        let kept: String = out
            .lines()
            .filter(|l| {
                !(l.starts_with("faults: ")
                    || (l.starts_with("match ") && l.contains(" pairs counted")))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        outputs.push(form(&kept));
        let again = spsa_in(dir, args);
        assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
        let said = text(&again.stderr).replace(dir.to_str().unwrap(), "DIR");
        assert!(
            said.contains("holds a finished run (4 iterations)"),
            "{said}"
        );
        refusals.push(said);
    }
    assert_eq!(
        outputs[0], outputs[1],
        "the summary and verdict differ in form"
    );
    assert_eq!(refusals[0], refusals[1], "the refusals differ");
}
