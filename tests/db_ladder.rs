//! A shared run's confirmation ladder played by its workers (issue 57): after the tune, each
//! `[[verify]]` step is a match in the run's database that URL-only workers play on the openings
//! held out of the tune; a kill -9 of the owner during a step leaves its match playing, and the
//! resumed owner follows that match instead of making another; the verdicts reach the summary
//! and the verification record; each step's counts equal those of a local `spsa verify` of the
//! same values, openings and seed, and so do those of `spsa verify --db`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::pg_common::{Cluster, TestDb, kill_owner, wait_for};
use crate::run_common::{spsa_in, text};

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");

const STEP1: &str =
    "10 pairs (fails when the Elo interval lies below -1000) at 300 nodes against the start";
const STEP2: &str = "SPRT [0,30] (at most 400 pairs) at the tune's limit against the defaults";

/// `db_heldout`'s run (ten openings of the bundled book, minor pieces worth 150 where
/// sparring's defaults are 320 and 330, holdout 0.2) with a two-step ladder: 10 pairs at 300
/// nodes against the start that pass (only an interval below -1000 Elo fails), and an SPRT
/// against the engine's defaults that must accept H0 (four iterations cannot repair 150).
fn setup() -> tempfile::TempDir {
    crate::db_heldout::held_out_run(
        "[[verify]]\npairs = 10\nnodes = 300\nfail_below = -1000\n\
         [[verify]]\nsprt = \"0,30\"\npairs = 400\nagainst = \"defaults\"\n",
    )
}

fn spawn(d: &Path, args: &[&str]) -> Child {
    Command::new(SPSA)
        .args(args)
        .env("XDG_CACHE_HOME", d.join("owner-cache"))
        .current_dir(d)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A worker that knows only the URL, with a cache of its own.
fn worker(d: &Path, url: &str, name: &str) -> Child {
    Command::new(SPSA)
        .args(["worker", "--db", url, "--name", name])
        .env("XDG_CACHE_HOME", d.join(format!("cache-{name}")))
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The `games: … pentanomial …` line of a result block.
fn games_line(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("games: "))
        .unwrap_or_else(|| panic!("no result block: {out}"))
}

/// The `games:` line of the match in the database with this `verify_of` step.
fn db_games_line(db: &TestDb, step: usize) -> String {
    let row = db.psql(&format!(
        "SELECT wins, draws, losses, pentanomial FROM spsa.runs WHERE kind = 'match' \
         AND (definition->'match'->'verify_of'->>'step')::int = {step}"
    ));
    let f: Vec<&str> = row.split('|').collect();
    assert_eq!(f.len(), 4, "{row}");
    let (w, dr, l): (u64, u64, u64) = (
        f[0].parse().unwrap(),
        f[1].parse().unwrap(),
        f[2].parse().unwrap(),
    );
    let p: Vec<u64> = f[3]
        .trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    format!(
        "games: {} (+{w} ={dr} -{l}), pairs: {}, pentanomial [0, 0.5, 1, 1.5, 2]: [{}, {}, {}, {}, {}]",
        w + dr + l,
        p.iter().sum::<u64>(),
        p[0],
        p[1],
        p[2],
        p[3],
        p[4]
    )
}

#[test]
fn a_shared_runs_ladder_is_played_by_its_workers_and_followed_again_after_a_kill() {
    let cluster = Cluster::shared();
    let db = cluster.database("ladder_workers");
    let dir = setup();
    let d = dir.path();
    let record = d.join("t.verify.txt");

    let mut owner = spawn(d, &["run", "t.toml", "--db", &db.url, "--no-play"]);
    wait_for(&db, "SELECT coalesce(max(id), 0) FROM spsa.runs", |s| {
        !s.is_empty() && s != "0"
    });
    let run: i64 = db.psql("SELECT min(id) FROM spsa.runs").parse().unwrap();
    let url = db.worker_role("ladder_w", "pwl");
    let mut workers = [worker(d, &url, "a"), worker(d, &url, "b")];

    // The owner is killed once step 1 is recorded and step 2's match exists.
    let t = Instant::now();
    loop {
        let recorded = std::fs::read_to_string(&record).unwrap_or_default();
        let matches = db.psql("SELECT count(*) FROM spsa.runs WHERE kind = 'match'");
        if recorded.contains("step 1 of 2 passed") && matches == "2" {
            break;
        }
        if let Some(status) = owner.try_wait().unwrap() {
            let o = owner.wait_with_output().unwrap();
            panic!(
                "the owner ended ({status}) before step 2 began: {}{}",
                text(&o.stdout),
                text(&o.stderr)
            );
        }
        assert!(t.elapsed() < Duration::from_secs(180), "no step 2");
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_owner(&db, &mut owner);
    let first = text(&owner.wait_with_output().unwrap().stdout);
    assert!(
        first.contains(&format!("step 1 of 2: {STEP1}\n")),
        "{first}"
    );
    assert!(first.contains("openings: 2 of 10 in "), "{first}");
    assert!(
        first.contains("step 1 of 2 passed: "),
        "step 1's verdict reaches the owner's output: {first}"
    );
    // Each step's match says which run and step it confirms, and a judged step its verdict.
    let names = |id: &str| db.psql(&format!("SELECT name FROM spsa.runs WHERE id = {id}"));
    let steps =
        db.psql("SELECT string_agg(id::text, ' ' ORDER BY id) FROM spsa.runs WHERE kind = 'match'");
    let steps: Vec<&str> = steps.split(' ').collect();
    assert!(
        names(steps[0]).starts_with(&format!(
            "verify run {run}, step 1 of 2: tuned vs start, passed: "
        )),
        "{}",
        names(steps[0])
    );
    assert_eq!(
        names(steps[1]),
        format!("verify run {run}, step 2 of 2: tuned vs defaults")
    );

    // The resumed owner follows step 2's match (made before the kill), not a new one.
    let o = spsa_in(
        d,
        &["run", "t.toml", "--db", &db.url, "--resume", "--no-play"],
    );
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}{err}");
    assert!(err.contains("made for this step earlier"), "{err}");
    assert_eq!(
        db.psql("SELECT count(*) FROM spsa.runs WHERE kind = 'match'"),
        "2"
    );
    assert!(out.contains("step 1 of 2 passed: "), "{out}");
    assert!(out.contains(&format!("step 2 of 2: {STEP2}\n")), "{out}");
    assert!(
        !out.contains(&format!("step 1 of 2: {STEP1}")),
        "replayed: {out}"
    );
    let verdict = out
        .lines()
        .find(|l| l.starts_with("step 2 of 2 failed: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(verdict.contains("accepted H0"), "{verdict}");
    assert!(
        out.contains("verification: failed at step 2 of 2\n"),
        "{out}"
    );
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert_eq!(recorded.matches("verdict: ").count(), 2, "{recorded}");
    assert!(recorded.ends_with("step 2 of 2 failed\n"), "{recorded}");
    for w in &mut workers {
        w.kill().unwrap();
        w.wait().unwrap();
    }
    // Step 2's verdict, where the team looks: its match's name in `spsa status`.
    let o = spsa_in(d, &["status", "--db", &db.url]);
    let said = text(&o.stdout);
    assert!(o.status.success(), "{said}{}", text(&o.stderr));
    let named = said
        .lines()
        .find(|l| {
            l.contains(&format!(
                "verify run {run}, step 2 of 2: tuned vs defaults, failed: "
            ))
        })
        .unwrap_or_else(|| panic!("{said}"));
    assert!(named.contains("accepted H0"), "{named}");
    // Every pair of both steps was played by the two workers, each reported once.
    let by =
        db.psql("SELECT string_agg(DISTINCT worker, ',' ORDER BY worker) FROM spsa.match_pairs");
    assert!(
        by.split(',').all(|w| w.starts_with("ladder_w/")) && !by.is_empty(),
        "{by}"
    );

    // Each step's counts are a local verification's of the same values and openings.
    let local = |args: &[&str]| {
        let mut all = vec!["verify", "t.toml", "--progress", "0"];
        all.extend_from_slice(args);
        let o = spsa_in(d, &all);
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let one = local(&["--pairs", "10", "--nodes", "300"]);
    assert_eq!(games_line(&one), db_games_line(&db, 1), "{one}");
    assert!(one.contains("openings: 2 of 10 in "), "{one}");
    let two = local(&["--sprt", "0,30", "--pairs", "400", "--against", "defaults"]);
    assert_eq!(games_line(&two), db_games_line(&db, 2), "{two}");

    // `spsa verify --db`: the same verification played by a worker, with the local counts.
    let mut w = worker(d, &url, "c");
    let o = spsa_in(
        d,
        &[
            "verify",
            "t.toml",
            "--pairs",
            "10",
            "--nodes",
            "300",
            "--progress",
            "0",
            "--db",
            &db.url,
        ],
    );
    w.kill().unwrap();
    w.wait().unwrap();
    let shown = text(&o.stdout);
    assert!(o.status.success(), "{shown}{}", text(&o.stderr));
    assert_eq!(games_line(&shown), games_line(&one), "{shown}");
    assert!(shown.contains("verdict: "), "{shown}");
    assert_eq!(
        db.psql(
            "SELECT count(*) FROM spsa.match_pairs m JOIN spsa.runs r ON r.id = m.run_id \
             WHERE r.name LIKE 'verify t.toml:%' AND m.worker = 'ladder_w/c'"
        ),
        "10"
    );
}
