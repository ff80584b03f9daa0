//! The live Elo curve (`[track]`) in a run shared through a real PostgreSQL cluster: its
//! measurements are work that URL-only workers lease and report exactly once, the owner's curve
//! survives kill -9 and re-attaches bit for bit, each point measures the θ the tune had when it
//! became due, the stop rule ends the run in the database, and a resume with another `[track]`
//! is refused.

use std::path::Path;
use std::process::{Child, Output};

use crate::match_common;
use crate::pg_common;
use crate::run_common;
use crate::web_common;
use match_common::{small_book, sparring};
use pg_common::{Cluster, TestDb, engine_config, sim_config};
use run_common::{log_iterations, spsa_in, text};

fn spawn(dir: &Path, args: &[&str]) -> Child {
    run_common::spawn_in(dir, args)
}

fn finish(child: Child) -> Output {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

fn count(db: &TestDb, sql: &str) -> u64 {
    db.psql(sql).parse().unwrap()
}

/// A simulated run `t` of `n` iterations measuring its curve with `track` (a `[track]` body).
fn config(dir: &Path, n: u64, track: &str) {
    sim_config(dir, "t", n, 7, 1);
    let toml = std::fs::read_to_string(dir.join("t.toml")).unwrap();
    std::fs::write(
        dir.join("t.toml"),
        format!("{toml}[simulation]\ndraw_rate = 0.3\n[track]\n{track}"),
    )
    .unwrap();
}

/// Two workers with only the URL, each in an empty folder, serving until no run is left.
fn workers(url: &str) -> Vec<(Child, tempfile::TempDir)> {
    (0..2)
        .map(|i| {
            let empty = tempfile::tempdir().unwrap();
            let child = spawn(
                empty.path(),
                &[
                    "worker",
                    "--db",
                    url,
                    "--until-idle",
                    "--concurrency",
                    "2",
                    "--name",
                    &format!("w{i}"),
                ],
            );
            (child, empty)
        })
        .collect()
}

#[test]
fn a_shared_curve_is_measured_by_workers_once_and_survives_kill_9_of_the_owner() {
    let cluster = Cluster::shared();
    let db = cluster.database("track_shared");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A point every round(16 · 0.8 / 0.2) = 64 iterations, and one at the end: 47 points.
    let n = 3000;
    config(d, n, "share = 0.2\npairs = 16\n");
    // Checkpoints every 50 ms, so the kill below lands after some (a simulated run's default,
    // 5 s, outlasts the owner here, whose resume would then always start from the first one).
    let toml = std::fs::read_to_string(d.join("t.toml")).unwrap();
    std::fs::write(
        d.join("t.toml"),
        format!("checkpoint_seconds = 0.05\n{toml}"),
    )
    .unwrap();
    let owner = spawn(d, &["run", "t.toml", "--db", &db.url, "--no-play"]);
    let run = pg_common::wait_for_run(&db);
    let url = db.worker_role("track_w", "pwt");
    let workers = workers(&url);
    // The owner is killed once it has recorded a few points and checkpointed results, while
    // the workers play on. The resume goes on from a checkpoint with results in it, whose start
    // column holds θ, not the start values (a resume once took that for a change of the
    // variables and wrote the θ log anew from there).
    let track = d.join("t.track.csv");
    let checkpointed = || {
        std::fs::read_to_string(d.join("t.checkpoint.var"))
            .is_ok_and(|ck| ck.contains("#: applied = ") && !ck.contains("#: applied = 0\n"))
    };
    let t = std::time::Instant::now();
    while std::fs::read_to_string(&track).map_or(0, |s| s.lines().count()) < 4 || !checkpointed() {
        assert!(t.elapsed().as_secs() < 90, "no points recorded");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut owner = owner;
    owner.kill().unwrap();
    owner.wait().unwrap();
    let resumed = spawn(
        d,
        &["run", "t.toml", "--db", &db.url, "--no-play", "--resume"],
    );
    for (w, _) in workers {
        finish(w);
    }
    let out = finish(resumed);
    assert!(
        text(&out.stdout).contains("track: 47 measurements, 752 pairs on held-out openings"),
        "{}",
        text(&out.stdout)
    );

    // In the database: every iteration and every unit once, and the run finished.
    assert_eq!(
        db.psql(&format!(
            "SELECT applied, track_reported, state FROM spsa.runs WHERE id = {run}"
        )),
        format!("{n}|47|finished")
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT count(*), count(DISTINCT unit), min(unit), max(unit), min(seq), max(seq)
               FROM spsa.track_results WHERE run_id = {run}"
        )),
        "47|47|0|46|1|47"
    );
    assert_eq!(
        count(&db, "SELECT count(*) FROM spsa.workers WHERE pairs > 0"),
        2,
        "both workers played"
    );

    // The owner's curve: points 1..=47 once each, each at the θ the tune had after the result
    // that made it due (the θ log's row of that iteration, which the file names and does not
    // copy), every point at 16 pairs.
    let text_of = std::fs::read_to_string(&track).unwrap();
    let rows: Vec<Vec<&str>> = text_of
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let mut points: Vec<u64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    points.sort();
    assert_eq!(points, (1..=47).collect::<Vec<_>>());
    assert_eq!(
        log_iterations(&d.join("t.log")),
        (1..=n).collect::<Vec<_>>()
    );
    // θ after each result, as the database applied it (full precision; the θ log rounds): a
    // snapshot per result at this size.
    let applied: std::collections::HashMap<u64, Vec<f64>> = db
        .psql(&format!(
            "SELECT seq, array_to_string(theta, ',') FROM spsa.snapshots WHERE run_id = {run}"
        ))
        .lines()
        .map(|l| {
            let (seq, theta) = l.split_once('|').unwrap();
            let theta = theta.split(',').map(|v| v.parse().unwrap()).collect();
            (seq.parse().unwrap(), theta)
        })
        .collect();
    // The owner's θ log gives each point's θ back (`--format history`, 4 decimals).
    let history = text(&spsa_in(d, &["report", "t.log", "--format", "history"]).stdout);
    let logged: std::collections::HashMap<u64, Vec<f64>> = history
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<f64> = l.split(',').map(|v| v.parse().unwrap()).collect();
            (f[0] as u64, f[2..].to_vec())
        })
        .collect();
    for r in &rows {
        let point: u64 = r[0].parse().unwrap();
        let iteration: u64 = r[1].parse().unwrap();
        assert_eq!(iteration, (point * 64).min(n), "{r:?}");
        assert_eq!(r[3], "16", "{r:?}");
        assert_eq!(r.len(), 12, "no θ in the curve's file: {r:?}");
        let theta = &logged[&iteration];
        assert_eq!(theta.len(), applied[&iteration].len(), "point {point}");
        for (a, b) in theta.iter().zip(&applied[&iteration]) {
            assert!(
                (a - b).abs() <= 5e-5,
                "point {point}: {a} in the log, {b} applied"
            );
        }
    }

    // `spsa status` (as a worker's role) and the run page show the curve from the database.
    let status = spsa_in(d, &["status", "--db", &url]);
    let shown = text(&status.stdout);
    let last = rows.iter().find(|r| r[0] == "47").unwrap();
    assert!(
        shown.contains(&format!("    track: iteration {n} vs start: Elo "))
            && shown.contains("    track: 47 measurements, 752 pairs on held-out openings\n"),
        "{shown}"
    );
    let serve = web_common::Serve::start(&["--db", &db.url]);
    let (code, page) = web_common::http(&serve.url, "GET", &format!("/api/runs/db-{run}"), &[], "");
    assert_eq!(code, 200, "{page}");
    let page: serde_json::Value = serde_json::from_str(&page).unwrap();
    let curve = page["track"].as_array().unwrap();
    assert_eq!(curve.len(), 47);
    // What the shared run gained so far, from the database's points (issue 46): in the
    // status and on the page, pooled over the second half's points.
    assert!(shown.contains("    track: vs start: gained "), "{shown}");
    let gained = &page["gained"][0];
    assert_eq!(gained["against"], "start", "{page}");
    assert!(gained["points"].as_u64().unwrap() >= 20, "{gained}");
    assert!(
        gained["low"].as_f64().unwrap() <= gained["elo"].as_f64().unwrap()
            && gained["elo"].as_f64().unwrap() <= gained["high"].as_f64().unwrap(),
        "{gained}"
    );
    let shown_last = curve.iter().find(|p| p["iteration"] == n).unwrap();
    assert_eq!(shown_last["against"], "start");
    assert_eq!(shown_last["pairs"], 16);
    let elo: f64 = last[9].parse().unwrap();
    assert!(
        (shown_last["elo"].as_f64().unwrap() - elo).abs() < 0.01,
        "{shown_last} {last:?}"
    );

    // A measurement cannot be reported as an iteration (it would move θ by an empty step), nor
    // an iteration as a measurement.
    let forged = [
        (
            format!(
                "SELECT spsa.report('w0', {run}, -1, gen_random_uuid(), 0, 1, 0, 1, '{{0,0,16,0,0}}', '{{}}', '')"
            ),
            "is a measurement of the curve",
        ),
        (
            format!(
                "SELECT spsa.report_track('w0', {run}, 5, gen_random_uuid(), 16, 0, 16, '{{0,0,16,0,0}}', '{{}}', '')"
            ),
            "is not a measurement of the curve",
        ),
    ];
    for (sql, why) in forged {
        let err = pg_common::psql_as(&url, &sql).expect_err(&sql);
        assert!(err.contains(why), "{err}");
    }

    // Re-attached without the files (as on another machine), the curve is rebuilt bit for bit.
    let log = std::fs::read(d.join("t.log")).unwrap();
    for f in ["t.log", "t.track.csv", "t.checkpoint.var"] {
        std::fs::remove_file(d.join(f)).unwrap();
    }
    let out = spsa_in(
        d,
        &["run", "t.toml", "--db", &db.url, "--no-play", "--resume"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&track).unwrap(), text_of);
    let again = std::fs::read(d.join("t.log")).unwrap();
    if again != log {
        let at = again.iter().zip(&log).take_while(|(a, b)| a == b).count();
        panic!(
            "the re-attached θ log differs from the run's from byte {at} ({} bytes against {})",
            again.len(),
            log.len()
        );
    }
}

#[test]
fn a_stop_rule_ends_a_shared_run_in_the_database() {
    let cluster = Cluster::shared();
    let db = cluster.database("track_stop");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 6000;
    // The gain so far is surely above −1000 Elo as soon as the rule reads it (20 pooled points,
    // the second half of 38 points of 64 iterations): the run stops near iteration 2432.
    config(
        d,
        n,
        "share = 0.2\npairs = 16\nstop_when_lower_above = -1000\n",
    );
    let owner = spawn(d, &["run", "t.toml", "--db", &db.url, "--no-play"]);
    pg_common::wait_for_run(&db);
    let url = db.worker_role("track_s", "pws");
    let workers = workers(&url);
    let out = finish(owner);
    for (w, _) in workers {
        finish(w);
    }
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains("stop_when_lower_above"), "{said}");
    let (applied, state) = {
        let row = db.psql("SELECT applied, state FROM spsa.runs");
        let (a, s) = row.split_once('|').unwrap();
        (a.parse::<u64>().unwrap(), s.to_string())
    };
    assert_eq!(state, "finished");
    assert!((64..n).contains(&applied), "stopped early, at {applied}");
    let checkpoint = std::fs::read_to_string(d.join("t.checkpoint.var")).unwrap();
    assert!(checkpoint.contains("finished = true"), "{checkpoint}");
    assert!(checkpoint.contains("stop_when_lower_above"), "{checkpoint}");
    // The θ log holds every result the database applied, the stopped run's last included.
    assert_eq!(
        log_iterations(&d.join("t.log")),
        (1..=applied).collect::<Vec<_>>()
    );
}

#[test]
fn a_resume_with_another_track_is_refused() {
    let cluster = Cluster::shared();
    let db = cluster.database("track_changed");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    config(d, 200, "share = 0.2\npairs = 16\n");
    // Created and left (no worker plays it).
    let mut owner = spawn(d, &["run", "t.toml", "--db", &db.url, "--no-play"]);
    run_common::wait_for(&d.join("t.checkpoint.var"));
    owner.kill().unwrap();
    owner.wait().unwrap();
    let toml = std::fs::read_to_string(d.join("t.toml")).unwrap();
    std::fs::write(d.join("t.toml"), toml.replace("pairs = 16", "pairs = 20")).unwrap();
    let before = std::fs::read(d.join("t.log")).unwrap();
    let out = spsa_in(
        d,
        &["run", "t.toml", "--db", &db.url, "--no-play", "--resume"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("was created with another [track]"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(d.join("t.log")).unwrap(), before);
}

/// Each game of a PGN file: its Event and FEN tags.
fn games(path: &Path) -> Vec<(String, String)> {
    match_common::pgn_events_and_fens(path)
}

#[test]
fn a_shared_runs_curve_plays_held_out_openings_on_a_worker_with_only_the_url() {
    let cluster = Cluster::shared();
    let db = cluster.database("track_engine");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_book(d, "ten.epd", 10);
    engine_config(
        d,
        sparring(),
        12,
        1,
        "depth = 1\nmax_plies = 120\nbook = \"ten.epd\"\nholdout = 0.2",
    );
    let toml = std::fs::read_to_string(d.join("g.toml")).unwrap();
    std::fs::write(
        d.join("g.toml"),
        format!("{toml}[track]\nshare = 0.5\nagainst = [\"start\", \"defaults\"]\npairs = 10\n"),
    )
    .unwrap();
    // Only a worker in an empty folder plays: the owner creates and follows.
    let owner = spawn(d, &["run", "g.toml", "--db", &db.url, "--no-play"]);
    pg_common::wait_for_run(&db);
    let url = db.worker_role("track_e", "pwe");
    let empty = tempfile::tempdir().unwrap();
    let worker = spawn(
        empty.path(),
        &["worker", "--db", &url, "--until-idle", "--concurrency", "2"],
    );
    let out = finish(owner);
    finish(worker);
    let said = text(&out.stdout);
    assert!(said.contains("vs defaults: Elo"), "{said}");
    let games = games(&d.join("g.pgn"));
    let (track, tune): (Vec<_>, Vec<_>) = games.iter().partition(|(e, _)| e.contains(" track vs "));
    let tuning: std::collections::BTreeSet<&String> = tune.iter().map(|(_, f)| f).collect();
    let measured: std::collections::BTreeSet<&String> = track.iter().map(|(_, f)| f).collect();
    // 12 iterations of one pair, and one point at the end (its interval is 20): 10 pairs
    // against each opponent, on the 2 held-out openings only.
    assert_eq!((tune.len(), track.len()), (24, 40), "{games:?}");
    assert_eq!(measured.len(), 2, "the held-out part");
    assert!(
        tuning.len() <= 8 && tuning.is_disjoint(&measured),
        "{tuning:?} {measured:?}"
    );
    let rows = std::fs::read_to_string(d.join("g.track.csv")).unwrap();
    assert!(
        rows.contains("1,12,start,10,") && rows.contains("1,12,defaults,10,"),
        "{rows}"
    );
}
