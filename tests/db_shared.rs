//! Shared runs through a real PostgreSQL cluster (started by tests/pg_common on loopback):
//! workers finishing a run, kill -9 of a worker and of the run process, a database restart, a
//! worker without the right engine, a role without rights, forged results, and statistics
//! against local simulated runs.

use std::path::Path;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use crate::child_common;
use crate::pg_common;
use crate::run_common;
use crate::web_common;
use pg_common::{Cluster, TestDb, engine_config, psql_as, sim_config, wait_for};
use run_common::{log_iterations, spsa_in, text};

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");
const SPARRING: &str = env!("CARGO_BIN_EXE_sparring");

fn spawn(dir: &Path, args: &[&str]) -> Child {
    run_common::spawn_in(dir, args)
}

fn finish(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

fn count(db: &TestDb, sql: &str) -> u64 {
    db.psql(sql).parse().unwrap()
}

/// Every iteration applied exactly once, in seq order 1..=n, the θ log agreeing.
fn assert_exactly_once(db: &TestDb, run: &str, n: u64, log: &Path) {
    let rows = count(
        db,
        &format!("SELECT count(*) FROM spsa.results WHERE run_id = {run}"),
    );
    let distinct = count(
        db,
        &format!("SELECT count(DISTINCT iteration) FROM spsa.results WHERE run_id = {run}"),
    );
    let seqs = count(
        db,
        &format!(
            "SELECT count(*) FROM spsa.results WHERE run_id = {run} AND seq BETWEEN 1 AND {n}"
        ),
    );
    assert_eq!((rows, distinct, seqs), (n, n, n));
    assert_eq!(
        db.psql(&format!(
            "SELECT applied, state FROM spsa.runs WHERE id = {run}"
        )),
        format!("{n}|finished")
    );
    assert_eq!(log_iterations(log), (1..=n).collect::<Vec<_>>());
}

fn run_id(db: &TestDb) -> String {
    pg_common::wait_for_run(db)
}

#[test]
fn three_workers_finish_a_simulated_run() {
    let cluster = Cluster::shared();
    let db = cluster.database("three_workers");
    let dir = tempfile::tempdir().unwrap();
    let n = 400;
    sim_config(dir.path(), "t", n, 3, 1);
    let owner = spawn(dir.path(), &["run", "t.toml", "--db", &db.url, "--no-play"]);
    let run = run_id(&db);
    let worker_url = db.worker_role("three_w", "pw3");
    let workers: Vec<Child> = (0..3)
        .map(|i| {
            spawn(
                dir.path(),
                &[
                    "worker",
                    "--db",
                    &worker_url,
                    "--until-idle",
                    "--concurrency",
                    "2",
                    "--name",
                    &format!("w{i}"),
                ],
            )
        })
        .collect();
    for w in workers {
        let out = finish(w);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(!text(&out.stderr).contains("pw3"), "no password in logs");
    }
    let out = finish(owner);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains('x'), "{}", text(&out.stdout));
    assert_exactly_once(&db, &run, n, &dir.path().join("t.log"));
    // All three took part, and the status shows it without any password.
    let busy = count(&db, "SELECT count(*) FROM spsa.workers WHERE pairs > 0");
    assert_eq!(busy, 3);
    let status = Command::new(SPSA)
        .args(["status", "--db", &worker_url])
        .output()
        .unwrap();
    let shown = text(&status.stdout);
    assert!(status.status.success(), "{}", text(&status.stderr));
    assert!(shown.contains(&format!("{n}/{n} iterations")), "{shown}");
    assert!(
        shown.contains(" games/s, games +") && shown.contains("θ x="),
        "{shown}"
    );
    assert!(
        shown.contains("three_w/w0") && !shown.contains("pw3"),
        "{shown}"
    );
    // The local checkpoint holds the database's θ exactly.
    let theta = db.psql(&format!("SELECT theta[1] FROM spsa.runs WHERE id = {run}"));
    let ck = std::fs::read_to_string(dir.path().join("t.checkpoint.var")).unwrap();
    let x: f64 = theta.parse().unwrap();
    assert!(ck.contains("#: applied = 400"), "{ck}");
    assert!(
        ck.contains(&format!("{x}")) || ck.contains(&format!("{x:?}")),
        "θ {x} in {ck}"
    );
}

/// An engine run of `iterations` iterations of `pairs` game pairs each.
fn games_config(dir: &Path, iterations: u64, pairs: u64) {
    games_config_limited(dir, iterations, pairs, "depth = 2\nmax_plies = 200");
}

/// The same with other `[games]` limits.
fn games_config_limited(dir: &Path, iterations: u64, pairs: u64, limits: &str) {
    engine_config(dir, SPARRING, iterations, pairs, limits);
}

/// Wait until `path` holds at least `games` PGN games (90 s at most).
fn wait_for_games(path: &Path, games: usize) {
    let t = Instant::now();
    while std::fs::read_to_string(path)
        .unwrap_or_default()
        .matches("[Result ")
        .count()
        < games
    {
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "{} stayed short",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The PGN has every round k.g (g = 1..=2B) of iterations 1..=n exactly once, the game log one
/// line per game, and the games' scores (θ+ plays White in odd g) are the counts of the
/// database and of the owner's checkpoint.
fn assert_records_agree(db: &TestDb, run: &str, n: u64, pairs: u64, dir: &Path) {
    let pgn = std::fs::read_to_string(dir.join("g.pgn")).unwrap();
    let games: Vec<&str> = pgn.split("[Event ").skip(1).collect();
    assert_eq!(games.len(), (2 * pairs * n) as usize, "{pgn}");
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    for k in 1..=n {
        for g in 1..=2 * pairs {
            let tag = format!("[Round \"{k}.{g}\"]");
            let found: Vec<&&str> = games.iter().filter(|x| x.contains(&tag)).collect();
            assert_eq!(found.len(), 1, "{tag} in\n{pgn}");
            let white = if found[0].contains("[Result \"1-0\"]") {
                1
            } else if found[0].contains("[Result \"0-1\"]") {
                -1
            } else {
                0
            };
            match if g % 2 == 1 { white } else { -white } {
                1 => wins += 1,
                0 => draws += 1,
                _ => losses += 1,
            }
        }
    }
    let log = std::fs::read_to_string(dir.join("g_1.log")).unwrap();
    assert_eq!(log.lines().count(), (2 * pairs * n) as usize, "{log}");
    assert_eq!(
        db.psql(&format!(
            "SELECT wins, draws, losses FROM spsa.runs WHERE id = {run}"
        )),
        format!("{wins}|{draws}|{losses}")
    );
    let ck = std::fs::read_to_string(dir.join("g.checkpoint.var")).unwrap();
    for (key, v) in [("wins", wins), ("draws", draws), ("losses", losses)] {
        assert!(
            ck.contains(&format!("#: {key} = {v}\n")),
            "{key} {v} in {ck}"
        );
    }
}

#[test]
fn killed_worker_and_owner_lose_no_game_and_a_wrong_engine_takes_nothing() {
    let cluster = Cluster::shared();
    let db = cluster.database("killed_worker");
    let dir = tempfile::tempdir().unwrap();
    // Batches of two pairs: four games per iteration, on whichever slot is free.
    let (n, pairs) = (4, 2);
    games_config(dir.path(), n, pairs);
    let owner_args = [
        "run",
        "g.toml",
        "--db",
        &db.url,
        "--no-play",
        "--lease-timeout",
        "1",
    ];
    let mut owner = spawn(dir.path(), &owner_args);
    let run = run_id(&db);
    let url = db.worker_role("killed_w", "pwk");

    // An engine without the tuned options: the worker says why and leases nothing.
    let wrong = Command::new(SPSA)
        .args(["worker", "--db", &url, "--until-idle", "--name", "wrong"])
        .args(["--engine", "sparring=/usr/games/glaurung"])
        .output()
        .unwrap();
    let why = text(&wrong.stderr);
    assert!(
        why.contains("cannot play run") && why.contains("KnightValue"),
        "{why}"
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM spsa.work WHERE worker LIKE '%/wrong'"
        ),
        0
    );
    assert!(
        db.psql("SELECT note FROM spsa.workers WHERE name = 'killed_w/wrong'")
            .contains("KnightValue")
    );

    // A worker killed with -9 while it holds a lease, after it reported a result.
    let mut victim = spawn(
        dir.path(),
        &[
            "worker",
            "--db",
            &url,
            "--name",
            "victim",
            "--engine",
            &format!("sparring={SPARRING}"),
        ],
    );
    // Killed in a state seen while it is stopped and its sessions idle (no report of it can
    // commit after the look): it holds a lease and has reported a result. A fixed moment after
    // a look at a running worker could be after it reported its last lease.
    let holds =
        "SELECT count(*) > 0 FROM spsa.work WHERE worker = 'killed_w/victim' AND state = 'leased'
           AND EXISTS (SELECT FROM spsa.results WHERE worker = 'killed_w/victim')";
    wait_for(&db, holds, |s| s == "t");
    let t = Instant::now();
    loop {
        child_common::stop(&victim);
        let idle = db.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'killed_w' AND state <> 'idle'",
        ) == "0";
        if idle && db.psql(holds) == "t" {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "never caught holding a lease"
        );
        child_common::go_on(&victim);
        std::thread::sleep(Duration::from_millis(20));
    }
    victim.kill().unwrap();
    victim.wait().unwrap();
    // A report the victim sent just before it died still commits on the server: read what it
    // held once its sessions are gone.
    wait_for(
        &db,
        "SELECT count(*) FROM pg_stat_activity WHERE usename = 'killed_w'",
        |s| s == "0",
    );
    let lost: Vec<String> = db
        .psql(
            "SELECT iteration FROM spsa.work WHERE worker = 'killed_w/victim' AND state = 'leased'",
        )
        .lines()
        .map(str::to_string)
        .collect();
    assert!(!lost.is_empty());

    // The owner killed with -9 once it wrote the first pair's games.
    wait_for_games(&dir.path().join("g.pgn"), 4);
    owner.kill().unwrap();
    owner.wait().unwrap();

    // Another worker finishes the run, including the lost lease once it timed out.
    let rescuer = Command::new(SPSA)
        .args(["worker", "--db", &url, "--until-idle", "--name", "rescuer"])
        .args(["--engine", &format!("sparring={SPARRING}")])
        .output()
        .unwrap();
    assert!(rescuer.status.success(), "{}", text(&rescuer.stderr));
    for k in lost {
        assert_eq!(
            db.psql(&format!(
                "SELECT r.worker, w.attempts >= 2 FROM spsa.results r JOIN spsa.work w USING (run_id, iteration) WHERE r.run_id = {run} AND r.iteration = {k}"
            )),
            "killed_w/rescuer|t",
            "iteration {k} redone by the rescuer"
        );
    }
    // The owner re-attaches: its files continue from its checkpoint, every game once.
    let mut resume_args = owner_args.to_vec();
    resume_args.push("--resume");
    let out = spsa_in(dir.path(), &resume_args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_exactly_once(&db, &run, n, &dir.path().join("g.log"));
    assert_records_agree(&db, &run, n, pairs, dir.path());
    let shown = text(&out.stdout);
    assert!(
        shown.contains("KnightValue") && shown.contains("games: +"),
        "{shown}"
    );
}

#[test]
fn killed_run_process_workers_carry_on_and_resume_reattaches() {
    let cluster = Cluster::shared();
    let db = cluster.database("killed_run");
    let dir = tempfile::tempdir().unwrap();
    let n = 1500;
    sim_config(dir.path(), "t", n, 5, 2);
    let mut owner = spawn(dir.path(), &["run", "t.toml", "--db", &db.url]);
    let run = run_id(&db);
    wait_for(
        &db,
        &format!("SELECT applied > 100 FROM spsa.runs WHERE id = {run}"),
        |s| s == "t",
    );
    pg_common::kill_owner(&db, &mut owner);
    let at_kill = count(
        &db,
        &format!("SELECT applied FROM spsa.runs WHERE id = {run}"),
    );
    assert!(at_kill < n, "killed before the end");
    // Its own in-flight leases are taken back by the timeout (60 s by default): hand them back
    // as an expired lease would be, so the test need not wait a minute.
    db.psql(
        "UPDATE spsa.work SET lease_expires = now() - interval '1 second' WHERE state = 'leased'",
    );
    let url = db.worker_role("killed_r", "pwr");
    let worker = Command::new(SPSA)
        .args(["worker", "--db", &url, "--until-idle", "--concurrency", "2"])
        .output()
        .unwrap();
    assert!(worker.status.success(), "{}", text(&worker.stderr));
    assert_eq!(
        db.psql(&format!("SELECT state FROM spsa.runs WHERE id = {run}")),
        "finished"
    );
    // A new start without --resume is refused; --resume re-attaches and rebuilds the local files.
    let refused = spsa_in(dir.path(), &["run", "t.toml", "--db", &db.url]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    let resumed = spsa_in(dir.path(), &["run", "t.toml", "--db", &db.url, "--resume"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert_exactly_once(&db, &run, n, &dir.path().join("t.log"));
}

#[test]
fn a_database_restart_or_crash_mid_run_loses_nothing() {
    let cluster = Cluster::start();
    let db = cluster.database("restart");
    let dir = tempfile::tempdir().unwrap();
    let n = 2500;
    sim_config(dir.path(), "t", n, 7, 2);
    // Leases of 5 s, not 60: a report lost in the crash is played again after its lease runs
    // out, and the test should not wait a minute for that.
    let owner = spawn(
        dir.path(),
        &["run", "t.toml", "--db", &db.url, "--lease-timeout", "5"],
    );
    let run = run_id(&db);
    let url = db.worker_role("restart_w", "pwd");
    let worker = spawn(
        dir.path(),
        &["worker", "--db", &url, "--until-idle", "--name", "w"],
    );
    wait_for(
        &db,
        &format!("SELECT applied > 200 FROM spsa.runs WHERE id = {run}"),
        |s| s == "t",
    );
    cluster.restart();
    let before = count(
        &db,
        &format!("SELECT applied FROM spsa.runs WHERE id = {run}"),
    );
    assert!(before < n, "restarted mid-run");
    // Then a crash: reports commit asynchronously, so the last ones may be lost (their leases run
    // out and they are played again); the owner must not have mirrored any of them (it would
    // stop on a θ that differs from the database's).
    wait_for(
        &db,
        &format!(
            "SELECT applied > {} FROM spsa.runs WHERE id = {run}",
            before + 200
        ),
        |s| s == "t",
    );
    cluster.crash();
    let after_crash = count(
        &db,
        &format!("SELECT applied FROM spsa.runs WHERE id = {run}"),
    );
    assert!(after_crash < n, "crashed mid-run");
    let w = finish(worker);
    assert!(w.status.success(), "{}", text(&w.stderr));
    let out = finish(owner);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_exactly_once(&db, &run, n, &dir.path().join("t.log"));
}

/// The count a mirror reads (the owner mirrors no result past it) is flushed: a result the
/// database applied with an asynchronous commit just before is in the log on disk once the
/// count is read, so no crash can take back a result the owner has mirrored. (A transaction
/// that only takes an id commits without a flush: this failed with the count read that way.)
#[test]
fn the_count_a_mirror_reads_is_flushed_through_the_results_it_counts() {
    let cluster = Cluster::start();
    // Nothing else flushes for 10 s: the log writer waits, and no other run is on this server.
    cluster.psql("postgres", "ALTER SYSTEM SET wal_writer_delay = '10s'");
    cluster.psql("postgres", "SELECT pg_reload_conf()");
    let db = cluster.database("durable");
    let dir = tempfile::tempdir().unwrap();
    let (mut owner, run) = quiet_run(&db, dir.path(), "60");
    owner.kill().unwrap();
    owner.wait().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut tried = 0;
    loop {
        // A commit that does not wait for its flush, as a worker's report commits; then where
        // the log ends, its commit record included.
        db.psql(&format!(
            "SET synchronous_commit = off; UPDATE spsa.runs SET updated = now() WHERE id = {run}"
        ));
        let written = db.psql("SELECT pg_current_wal_insert_lsn()");
        let flushed_before = db.psql(&format!("SELECT pg_current_wal_flush_lsn() >= '{written}'"));
        let applied = runtime.block_on(async {
            let mut conn = spsa::db::Db::new(&db.url).unwrap();
            spsa::db::owner::durable_applied(&mut conn, run.parse().unwrap())
                .await
                .unwrap()
                .applied
        });
        assert_eq!(applied, 0);
        if flushed_before == "t" {
            // Something else flushed first (a checkpoint): nothing shown; write again.
            tried += 1;
            assert!(tried < 5, "the log was flushed before every read");
            continue;
        }
        let flushed = db.psql(&format!("SELECT pg_current_wal_flush_lsn() >= '{written}'"));
        assert_eq!(
            flushed, "t",
            "the count was read without flushing the log through {written}"
        );
        break;
    }
}

/// Run `sql` through psql with the given URL; Err carries psql's message.
/// A run with a long lease, created without playing (the owner follows it in the background).
fn quiet_run(db: &TestDb, dir: &Path, lease: &str) -> (Child, String) {
    sim_config(dir, "t", 50, 11, 1);
    let owner = spawn(
        dir,
        &[
            "run",
            "t.toml",
            "--db",
            &db.url,
            "--no-play",
            "--lease-timeout",
            lease,
        ],
    );
    let run = run_id(db);
    (owner, run)
}

#[test]
fn workers_can_only_lease_and_report() {
    let cluster = Cluster::shared();
    let db = cluster.database("rights");
    let dir = tempfile::tempdir().unwrap();
    let (mut owner, run) = quiet_run(&db, dir.path(), "60");
    let worker = db.worker_role("rights_w", "pwx");
    for sql in [
        "SELECT * FROM spsa.runs".to_string(),
        format!("UPDATE spsa.runs SET theta = '{{0,0}}' WHERE id = {run}"),
        "SELECT * FROM spsa.work".to_string(),
        format!(
            "INSERT INTO spsa.results (run_id, iteration, seq, token, worker, signal, wins, draws, losses, pentanomial, faults, records, theta_sum) VALUES ({run}, 1, 1, gen_random_uuid(), 'x', 2, 2, 0, 0, '{{0,0,0,0,1}}', '{{}}', '', 0)"
        ),
        "DELETE FROM spsa.workers".to_string(),
        "CREATE TABLE spsa.mine (x int)".to_string(),
    ] {
        let err = psql_as(&worker, &sql).expect_err(&sql);
        assert!(err.contains("permission denied"), "{sql}: {err}");
    }
    // The functions work for the worker role...
    assert!(psql_as(&worker, "SELECT count(*) FROM spsa.status_runs()").is_ok());
    // ...and not for a role outside spsa_worker.
    db.psql("DROP ROLE IF EXISTS rights_out; CREATE ROLE rights_out LOGIN PASSWORD 'pwo'");
    let outsider = cluster.url("rights_out", "pwo", &db.name);
    let err = psql_as(
        &outsider,
        &format!("SELECT * FROM spsa.lease('o', ARRAY[{run}::bigint], 1)"),
    )
    .unwrap_err();
    assert!(err.contains("permission denied"), "{err}");
    assert_eq!(
        count(
            &db,
            &format!("SELECT applied FROM spsa.runs WHERE id = {run}")
        ),
        0
    );
    owner.kill().unwrap();
    owner.wait().unwrap();
}

#[test]
fn forged_results_are_refused() {
    let cluster = Cluster::shared();
    let db = cluster.database("forged");
    let dir = tempfile::tempdir().unwrap();
    let (mut owner, run) = quiet_run(&db, dir.path(), "1");
    let worker = db.worker_role("forged_w", "pwf");
    let lease = |name: &str| -> (String, String) {
        let row = psql_as(
            &worker,
            &format!("SELECT iteration, token FROM spsa.lease('{name}', ARRAY[{run}::bigint], 1)"),
        )
        .unwrap();
        let (k, token) = row.split_once('|').expect(&row);
        (k.to_string(), token.to_string())
    };
    let report = |name: &str,
                  k: &str,
                  token: &str,
                  signal: i32,
                  w: i32,
                  d: i32,
                  l: i32,
                  penta: &str| {
        psql_as(
            &worker,
            &format!(
                "SELECT spsa.report('{name}', {run}, {k}, '{token}', {signal}, {w}, {d}, {l}, '{penta}', '{{}}', '')"
            ),
        )
    };
    let (k, token) = lease("a");
    let theta_before = db.psql(&format!("SELECT theta FROM spsa.runs WHERE id = {run}"));
    // The iteration's step, which its work row keeps only until the result is applied.
    let step = db.psql(&format!(
        "SELECT step FROM spsa.work WHERE run_id = {run} AND iteration = {k}"
    ));
    assert!(step.starts_with('{'), "{step}");
    let wrong = "00000000-0000-0000-0000-000000000000";
    for (why, r, code) in [
        (
            "wrong token",
            report("a", &k, wrong, 2, 2, 0, 0, "{0,0,0,0,1}"),
            "taken back",
        ),
        (
            "out of range",
            report("a", &k, &token, 5, 2, 0, 0, "{0,0,0,0,1}"),
            "out of range",
        ),
        (
            "inconsistent",
            report("a", &k, &token, 2, 1, 1, 0, "{0,0,0,0,1}"),
            "do not make",
        ),
        (
            "bad pentanomial",
            report("a", &k, &token, 2, 2, 0, 0, "{0,0,0,0,2}"),
            "malformed",
        ),
        (
            "other iteration",
            report("a", "2", &token, 2, 2, 0, 0, "{0,0,0,0,1}"),
            "no current lease",
        ),
        (
            "other worker",
            report("b", &k, &token, 2, 2, 0, 0, "{0,0,0,0,1}"),
            "no current lease",
        ),
    ] {
        let err = r.expect_err(why);
        assert!(err.contains(code), "{why}: {err}");
    }
    assert_eq!(
        db.psql(&format!("SELECT theta FROM spsa.runs WHERE id = {run}")),
        theta_before
    );
    assert_eq!(
        report("a", &k, &token, 2, 2, 0, 0, "{0,0,0,0,1}").unwrap(),
        "1"
    );
    // A retry of the same report returns the same seq; a duplicate with another lease is refused.
    assert_eq!(
        report("a", &k, &token, 2, 2, 0, 0, "{0,0,0,0,1}").unwrap(),
        "1"
    );
    assert_eq!(
        count(
            &db,
            &format!("SELECT applied FROM spsa.runs WHERE id = {run}")
        ),
        1
    );
    // θ moved by exactly step·signal (clipped) — the driver's step, the report's signal; the
    // result keeps θ's checksum, a snapshot θ itself, and the done row no array.
    let moved = db.psql(&format!(
        "SELECT bool_and(r.theta[i] = least(r.hi[i], greatest(r.lo[i], r.start_theta[i] + ('{step}'::float8[])[i] * 2))) FROM spsa.runs r, generate_subscripts(r.theta, 1) i WHERE r.id = {run}"
    ));
    assert_eq!(moved, "t");
    assert_eq!(
        db.psql(&format!(
            "SELECT x.theta_sum = spsa.theta_checksum(r.theta) AND s.theta = r.theta AND w.step IS NULL AND w.leased_theta IS NULL
               FROM spsa.runs r JOIN spsa.results x ON x.run_id = r.id JOIN spsa.snapshots s ON s.run_id = r.id AND s.seq = 1
                    JOIN spsa.work w ON w.run_id = r.id AND w.iteration = {k} WHERE r.id = {run}"
        )),
        "t"
    );
    // A lease taken back (timed out and leased again) cannot be reported by its first holder.
    let (k2, old) = lease("a");
    wait_for(
        &db,
        &format!(
            "SELECT lease_expires < now() FROM spsa.work WHERE run_id = {run} AND iteration = {k2}"
        ),
        |s| s == "t",
    );
    let (k3, _new) = lease("b");
    assert_eq!(k2, k3, "the expired lease went to b");
    let err = report("a", &k2, &old, 0, 1, 0, 1, "{0,0,1,0,0}").unwrap_err();
    assert!(err.contains("taken back"), "{err}");
    assert_eq!(
        count(
            &db,
            &format!("SELECT applied FROM spsa.runs WHERE id = {run}")
        ),
        1
    );
    owner.kill().unwrap();
    owner.wait().unwrap();
}

#[test]
fn tls_is_used_when_the_url_requires_it() {
    let cluster = Cluster::shared();
    let db = cluster.database("tls");
    let dir = tempfile::tempdir().unwrap();
    let (mut owner, run) = quiet_run(&db, dir.path(), "60");
    // The cluster's pg_hba.conf lets spsa_tls_only in over TLS only (see .ci/pg).
    let plain = db.worker_role("spsa_tls_only", "pwt");
    let status = |url: &str| {
        Command::new(SPSA)
            .args(["status", "--db", url])
            .output()
            .unwrap()
    };
    let refused = status(&format!("{plain}?sslmode=disable"));
    assert!(!refused.status.success());
    let why = text(&refused.stderr);
    assert!(
        why.contains("no encryption") || why.contains("pg_hba"),
        "{why}"
    );
    assert!(!why.contains("pwt"), "{why}");
    let out = status(&format!("{plain}?sslmode=require"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains(&format!("run {run} active")), "{shown}");
    assert!(
        shown.contains("spsa_tls_only:***@") && !shown.contains("pwt"),
        "{shown}"
    );
    owner.kill().unwrap();
    owner.wait().unwrap();
}

/// Final (x, y) of a local run of the same config: the driver and the simulator in order, as
/// the local tuner plays with Concurrency 1.
fn local_final(iterations: u64, seed: u64) -> (f64, f64) {
    use spsa::source::simulate::Simulator;
    use spsa::spsa::driver::{Driver, DriverState, Rounding};
    use spsa::spsa::{Schedule, Spsa};
    let vars = spsa::vars::parse(
        "x,100,-1000,1000,100,0.002,1\ny,-50,-1000,1000,100,0.002,4\n",
        Path::new("inline"),
    )
    .unwrap();
    let schedule = Schedule {
        iterations,
        a: (iterations / 10) as f64,
        alpha: 0.602,
        gamma: 0.101,
    };
    let sim = Simulator::new(&vars, 0.0);
    let mut driver = Driver::new(
        Spsa::new(&vars, schedule),
        Rounding::Continuous,
        1,
        seed,
        DriverState::start(vec![100.0, -50.0]),
    );
    while let Some(trial) = driver.next_trial() {
        let signal = sim.measure(&trial).signal();
        driver.apply(trial.iteration, signal).unwrap();
    }
    (driver.theta()[0], driver.theta()[1])
}

#[test]
fn runs_spread_over_workers_agree_with_local_runs() {
    let cluster = Cluster::shared();
    let db = cluster.database("statistics");
    let dir = tempfile::tempdir().unwrap();
    let (n, runs) = (300, 4u64);
    // Four shared runs at once, served by two workers of two slots each.
    let owners: Vec<Child> = (0..runs)
        .map(|i| {
            let name = format!("s{i}");
            sim_config(dir.path(), &name, n, 100 + i, 1);
            spawn(
                dir.path(),
                &["run", &format!("{name}.toml"), "--db", &db.url, "--no-play"],
            )
        })
        .collect();
    wait_for(&db, "SELECT count(*) FROM spsa.runs", |s| {
        s == runs.to_string()
    });
    let url = db.worker_role("stats_w", "pws");
    let workers: Vec<Child> = (0..2)
        .map(|i| {
            spawn(
                dir.path(),
                &[
                    "worker",
                    "--db",
                    &url,
                    "--until-idle",
                    "--concurrency",
                    "2",
                    "--name",
                    &format!("w{i}"),
                ],
            )
        })
        .collect();
    for child in workers.into_iter().chain(owners) {
        let out = finish(child);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    // Each worker served the runs at once, not one after another: every run's results from
    // a worker began before any other run's ended.
    for w in ["stats_w/w0", "stats_w/w1"] {
        let spans = format!(
            "(SELECT run_id, min(reported) AS first, max(reported) AS last FROM spsa.results WHERE worker = '{w}' GROUP BY run_id)"
        );
        assert_eq!(
            db.psql(&format!(
                "SELECT count(*), bool_and(a.first < b.last) FROM {spans} a, {spans} b WHERE a.run_id <> b.run_id"
            )),
            format!("{}|t", runs * (runs - 1)),
            "{w} served the runs together"
        );
    }
    let shared: Vec<(f64, f64)> = db
        .psql("SELECT theta[1] || ',' || theta[2] FROM spsa.runs ORDER BY id")
        .lines()
        .map(|l| {
            let (x, y) = l.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    assert_eq!(shared.len(), runs as usize);
    // The local distribution of the final values over 200 seeds; the shared runs' mean must lie
    // within 4 standard errors of it, for each variable.
    let local: Vec<(f64, f64)> = (0..200).map(|s| local_final(n, 10_000 + s)).collect();
    for (name, pick) in [("x", 0usize), ("y", 1usize)] {
        let get = |p: &(f64, f64)| if pick == 0 { p.0 } else { p.1 };
        let mean = local.iter().map(get).sum::<f64>() / local.len() as f64;
        let var =
            local.iter().map(|p| (get(p) - mean).powi(2)).sum::<f64>() / (local.len() - 1) as f64;
        let shared_mean = shared.iter().map(get).sum::<f64>() / shared.len() as f64;
        let se = (var / shared.len() as f64 + var / local.len() as f64).sqrt();
        assert!(
            (shared_mean - mean).abs() < 4.0 * se,
            "{name}: shared mean {shared_mean:.2} vs local {mean:.2} ± {se:.2}"
        );
    }
}

#[test]
fn a_positions_run_is_refused_before_anything_is_created() {
    let cluster = Cluster::shared();
    let db = cluster.database("positions_refused");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.var"),
        "KnightValue,300,100,600,40,0.002,0\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("p.epd"),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - c9 \"1/2-1/2\";\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("p.toml"),
        format!(
            "# tuned from positions\nobjective = \"positions\"\nvariables = \"p.var\"\nlog = \"p.log\"\niterations = 10\nA = 1\ngamma = 0.101\nalpha = 0.602\n[engine1]\ncommand = \"{SPARRING}\"\n[positions]\ntrain = \"p.epd\"\ndepth = 1\nbatch = 1\nk = 1.0\n"
        ),
    )
    .unwrap();
    let out = spsa_in(dir.path(), &["run", "p.toml", "--db", &db.url]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let why = text(&out.stderr);
    assert!(
        why.contains("p.toml:2: key `objective`") && why.contains("without --db"),
        "{why}"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'spsa'"),
        "0"
    );
    assert!(!dir.path().join("p.log").exists());
}

#[test]
fn a_worker_serves_the_highest_priority_run_first_and_nothing_of_a_paused_run() {
    let cluster = Cluster::shared();
    let db = cluster.database("priorities");
    let dir = tempfile::tempdir().unwrap();
    sim_config(dir.path(), "t", 50, 11, 1);
    sim_config(dir.path(), "u", 50, 12, 1);
    let quiet = |conf: &str| {
        spawn(
            dir.path(),
            &[
                "run",
                conf,
                "--db",
                &db.url,
                "--no-play",
                "--lease-timeout",
                "60",
            ],
        )
    };
    let mut older = quiet("t.toml");
    let a = run_id(&db);
    let mut newer = quiet("u.toml");
    wait_for(&db, "SELECT count(*) FROM spsa.runs", |s| s == "2");
    let b = db.psql("SELECT max(id) FROM spsa.runs");
    let worker = db.worker_role("prio_w", "pwp");
    let lease = |n: u32| -> Vec<(String, String, String)> {
        psql_as(
            &worker,
            &format!("SELECT run_id, iteration, token FROM spsa.lease('w', ARRAY[{a}, {b}]::bigint[], {n})"),
        )
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect()
    };
    let runs = |leases: &[(String, String, String)]| -> Vec<String> {
        leases.iter().map(|l| l.0.clone()).collect()
    };
    // Equal priorities and shares: one each, the older run first.
    assert_eq!(runs(&lease(2)), [a.clone(), b.clone()]);
    // A higher priority wins, whatever the age.
    db.psql(&format!("UPDATE spsa.runs SET priority = 5 WHERE id = {b}"));
    let taken = lease(3);
    assert_eq!(runs(&taken), [b.clone(), b.clone(), b.clone()]);
    // A paused run hands out nothing, but takes the result of a lease given before the pause.
    db.psql(&format!(
        "UPDATE spsa.runs SET state = 'paused' WHERE id = {b}"
    ));
    assert_eq!(runs(&lease(1)), std::slice::from_ref(&a));
    let (_, k, token) = &taken[0];
    let seq = psql_as(
        &worker,
        &format!(
            "SELECT spsa.report('w', {b}, {k}, '{token}', 2, 2, 0, 0, '{{0,0,0,0,1}}', '{{}}', '')"
        ),
    )
    .unwrap();
    assert_eq!(seq, "1");
    // Stopped: no result is taken any more.
    db.psql(&format!(
        "UPDATE spsa.runs SET state = 'stopped' WHERE id = {b}"
    ));
    let (_, k, token) = &taken[1];
    let err = psql_as(
        &worker,
        &format!(
            "SELECT spsa.report('w', {b}, {k}, '{token}', 2, 2, 0, 0, '{{0,0,0,0,1}}', '{{}}', '')"
        ),
    )
    .unwrap_err();
    assert!(err.contains("stopped"), "{err}");
    for owner in [&mut older, &mut newer] {
        owner.kill().unwrap();
        owner.wait().unwrap();
    }
}

#[test]
fn prune_deletes_the_records_of_finished_runs_only() {
    let cluster = Cluster::shared();
    let db = cluster.database("prune");
    let runs_of = |sql: &str| count(&db, sql);
    // Run `done` plays to its end; run `live` is left active half-way (its process killed).
    let done_dir = tempfile::tempdir().unwrap();
    sim_config(done_dir.path(), "a", 20, 3, 1);
    let out = spsa_in(done_dir.path(), &["run", "a.toml", "--db", &db.url]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let done = run_id(&db);
    let live_dir = tempfile::tempdir().unwrap();
    let live_n = 1500;
    sim_config(live_dir.path(), "b", live_n, 4, 2);
    let mut owner = spawn(live_dir.path(), &["run", "b.toml", "--db", &db.url]);
    let live = wait_for(
        &db,
        &format!("SELECT max(id) FROM spsa.runs WHERE id > {done} AND applied > 30"),
        |s| !s.is_empty(),
    );
    // A report the owner sent just before it died still commits on the server: count what was
    // applied once its sessions are gone.
    pg_common::kill_owner(&db, &mut owner);
    let state = |run: &str| db.psql(&format!("SELECT state FROM spsa.runs WHERE id = {run}"));
    assert_eq!(
        (state(&done), state(&live)),
        ("finished".into(), "active".into())
    );
    let results = |run: &str| {
        runs_of(&format!(
            "SELECT count(*) FROM spsa.results WHERE run_id = {run}"
        ))
    };
    let work = |run: &str| {
        runs_of(&format!(
            "SELECT count(*) FROM spsa.work WHERE run_id = {run}"
        ))
    };
    let summary = |run: &str| {
        db.psql(&format!(
            "SELECT state, applied, theta, wins + draws + losses, pentanomial FROM spsa.runs WHERE id = {run}"
        ))
    };
    let done_summary = summary(&done);
    let live_applied = runs_of(&format!("SELECT applied FROM spsa.runs WHERE id = {live}"));
    let prune = |args: &[&str]| {
        let mut all = vec!["prune", "--db", &db.url];
        all.extend(args);
        let out = spsa_in(done_dir.path(), &all);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };

    // Finished seconds ago: not older than a day.
    let shown = prune(&["--older-than", "1"]);
    assert!(
        shown.starts_with("0 runs finished or stopped more than 1 days ago"),
        "{shown}"
    );
    assert_eq!((results(&done), work(&done)), (20, 20));
    // A dry run says what would go and deletes nothing.
    let shown = prune(&["--older-than", "0", "--dry-run"]);
    assert!(
        shown.contains(&format!("run {done} finished "))
            && shown.contains("would delete 20 results")
            && shown.contains("and 20 work rows")
            && shown.contains("nothing deleted")
            && !shown.contains(&format!("run {live} ")),
        "{shown}"
    );
    assert_eq!((results(&done), work(&done)), (20, 20));
    // A worker's role may not prune.
    let worker_url = db.worker_role("prune_w", "pwp");
    let refused = spsa_in(
        done_dir.path(),
        &["prune", "--db", &worker_url, "--older-than", "0"],
    );
    assert!(!refused.status.success());
    assert!(!text(&refused.stderr).contains("pwp"));
    assert_eq!((results(&done), work(&done)), (20, 20));

    let shown = prune(&["--older-than", "0"]);
    assert!(
        shown.contains(&format!("run {done} finished "))
            && shown.contains("deleted 20 results")
            && shown
                .contains("1 runs finished or stopped more than 0 days ago: deleted 20 results"),
        "{shown}"
    );
    assert!(!shown.contains(&format!("run {live} ")), "{shown}");
    // The finished run's records are gone, its summary and final θ are not.
    assert_eq!((results(&done), work(&done)), (0, 0));
    assert_eq!(summary(&done), done_summary);
    // The active run is untouched: a result row for every applied iteration, every work row.
    assert_eq!(results(&live), live_applied);
    assert_eq!(work(&live), live_n);
    assert_eq!(state(&live), "active");
    // Nothing is left to prune; the run still lists; it cannot be resumed.
    assert!(prune(&["--older-than", "0"]).starts_with("0 runs"));
    let status = spsa_in(done_dir.path(), &["status", "--db", &worker_url]);
    let listed = text(&status.stdout);
    assert!(
        listed.contains(&format!("run {done} finished ")) && listed.contains("20/20 iterations"),
        "{listed}"
    );
    // The status says which run was pruned (read as a worker's role), and only that one.
    let pruned_on = db.psql(&format!(
        "SELECT to_char(pruned, 'YYYY-MM-DD HH24:MI TZ') FROM spsa.runs WHERE id = {done}"
    ));
    let after_done = listed
        .split(&format!("run {done} finished "))
        .nth(1)
        .unwrap();
    assert!(
        after_done.lines().nth(1).unwrap()
            == format!(
                "    pruned on {pruned_on} (spsa prune): its results and game records are gone"
            ),
        "{listed}"
    );
    assert_eq!(listed.matches("pruned on").count(), 1, "{listed}");
    let resume = spsa_in(
        done_dir.path(),
        &["run", "a.toml", "--db", &db.url, "--resume"],
    );
    assert_eq!(resume.status.code(), Some(2), "{}", text(&resume.stderr));
    assert!(
        text(&resume.stderr).contains("was pruned on"),
        "{}",
        text(&resume.stderr)
    );
}

#[test]
fn a_clock_run_scales_each_workers_clock_by_its_engine_speed() {
    let cluster = Cluster::shared();
    let db = cluster.database("clock_scale");
    let clock = "base_time_ms = 500\ninc_time_ms = 10\nmax_plies = 60";
    // The role can be made once the schema exists (after the first run is created).
    let worker_url = std::cell::OnceCell::new();
    // A run of one pair created with `run_flags`, played by one worker with `worker_flags`:
    // what the worker said, the owner's PGN, and the run's id.
    let play = |run_flags: &[&str], worker_flags: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        games_config_limited(dir.path(), 1, 1, clock);
        let before = psql_as(&db.url, "SELECT coalesce(max(id), 0) FROM spsa.runs")
            .unwrap_or_else(|_| "0".into());
        let mut args = vec!["run", "g.toml", "--db", &db.url, "--no-play"];
        args.extend(run_flags);
        let owner = spawn(dir.path(), &args);
        let run = wait_for(
            &db,
            &format!("SELECT max(id) FROM spsa.runs WHERE id > {before}"),
            |s| !s.is_empty(),
        );
        let url = worker_url.get_or_init(|| db.worker_role("clock_w", "pwc"));
        let mut args = vec!["worker", "--db", url.as_str(), "--until-idle"];
        args.extend(worker_flags);
        let worker = spsa_in(dir.path(), &args);
        let said = text(&worker.stderr);
        assert!(worker.status.success(), "{said}");
        assert!(finish(owner).status.success());
        let pgn = std::fs::read_to_string(dir.path().join("g.pgn")).unwrap();
        (said, pgn, run)
    };
    // The creator says the clock is meant for 200,000 nodes/s; this worker's machine does
    // 100,000 (forced), so it plays twice the clock.
    let (said, pgn, run) = play(
        &["--reference-nps", "200000"],
        &["--name", "slow", "--nps", "100000"],
    );
    assert!(said.contains("clock 0.5+0.01 × 2.00 = 1+0.02"), "{said}");
    assert_eq!(pgn.matches("[TimeControl \"1+0.02\"]").count(), 2, "{pgn}");
    assert_eq!(
        pgn.matches("[TimeControlScale \"2.00\"]").count(),
        2,
        "{pgn}"
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT worker, nps, scale FROM spsa.worker_clocks WHERE run_id = {run}"
        )),
        "clock_w/slow|100000|2"
    );

    // No reference given: the owner measures engine 1 when it creates the run, and each worker
    // scales the clock by that over its own measurement.
    let (said, pgn, run) = play(&[], &["--name", "first"]);
    let stored = db.psql(&format!(
        "SELECT r.reference_nps > 1000, c.nps / r.reference_nps BETWEEN 0.05 AND 20, to_char(c.scale, 'FM0.00'), c.scale
           FROM spsa.runs r JOIN spsa.worker_clocks c ON c.run_id = r.id WHERE r.id = {run}"
    ));
    let fields: Vec<&str> = stored.split('|').collect();
    assert_eq!(
        &fields[..2],
        ["t", "t"],
        "the owner's speed is the reference: {stored}"
    );
    let (scale_text, scale) = (fields[2], fields[3].parse::<f64>().unwrap());
    assert!(said.contains(&format!("× {scale_text} = ")), "{said}");
    assert_eq!(
        pgn.matches(&format!("[TimeControlScale \"{scale_text}\"]"))
            .count(),
        2,
        "{pgn}"
    );
    // A worker's role cannot set the reference: the function returns the owner's.
    let reference = db.psql(&format!(
        "SELECT reference_nps FROM spsa.runs WHERE id = {run}"
    ));
    assert_eq!(
        psql_as(
            worker_url.get().unwrap(),
            &format!("SELECT spsa.reference_nps({run}, 1e12)")
        )
        .unwrap(),
        reference
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT reference_nps FROM spsa.runs WHERE id = {run}"
        )),
        reference
    );

    // `spsa status` (as the worker's role) shows each clock run's reference speed and each
    // worker's scale, as the run page does.
    let status = spsa_in(
        Path::new("."),
        &["status", "--db", worker_url.get().unwrap()],
    );
    let shown = text(&status.stdout);
    assert!(status.status.success(), "{}", text(&status.stderr));
    assert!(
        shown.contains(
            "    clock for 200000 nodes/s; workers: clock_w/slow ×2.00 (100000 nodes/s)\n"
        ),
        "{shown}"
    );
    let (reference, nps) = {
        let row = db.psql(&format!(
            "SELECT round(r.reference_nps), round(c.nps) FROM spsa.runs r JOIN spsa.worker_clocks c ON c.run_id = r.id WHERE r.id = {run}"
        ));
        let (r, n) = row.split_once('|').unwrap();
        (r.to_string(), n.to_string())
    };
    assert!(
        shown.contains(&format!(
            "    clock for {reference} nodes/s; workers: clock_w/first ×{scale_text} ({nps} nodes/s)\n"
        )),
        "{shown}"
    );
    assert!(!shown.contains("pruned on"), "{shown}");
    // The run page's data comes from the same reading.
    let serve = web_common::Serve::start(&["--db", &db.url]);
    let (status, page) =
        web_common::http(&serve.url, "GET", &format!("/api/runs/db-{run}"), &[], "");
    assert_eq!(status, 200, "{page}");
    let page: serde_json::Value = serde_json::from_str(&page).unwrap();
    assert_eq!(
        page["reference_nps"].as_f64().unwrap().round().to_string(),
        reference
    );
    assert_eq!(page["workers"][0]["name"], "clock_w/first");
    assert_eq!(page["workers"][0]["clock_scale"], scale);

    // A worker whose engine is far slower than the reference (another engine, or a broken
    // measurement) refuses the run, says why, and plays nothing of it.
    let dir = tempfile::tempdir().unwrap();
    games_config_limited(dir.path(), 1, 1, clock);
    let mut owner = spawn(
        dir.path(),
        &[
            "run",
            "g.toml",
            "--db",
            &db.url,
            "--no-play",
            "--reference-nps",
            "200000",
        ],
    );
    let run = wait_for(
        &db,
        &format!("SELECT max(id) FROM spsa.runs WHERE id > {run} AND state = 'active'"),
        |s| !s.is_empty(),
    );
    let url = worker_url.get().unwrap();
    let worker = spsa_in(
        dir.path(),
        &[
            "worker",
            "--db",
            url,
            "--until-idle",
            "--name",
            "implausible",
            "--nps",
            "1000",
        ],
    );
    owner.kill().unwrap();
    owner.wait().unwrap();
    let said = text(&worker.stderr);
    assert!(worker.status.success(), "{said}");
    assert!(
        said.contains(&format!("cannot play run {run}")) && said.contains("outside 0.05× to 20×"),
        "{said}"
    );
    assert_eq!(
        count(
            &db,
            &format!(
                "SELECT count(*) FROM spsa.work WHERE run_id = {run} AND worker LIKE '%/implausible'"
            )
        ),
        0
    );

    // A reference speed for a run without a clock is refused before anything is created.
    let depth = tempfile::tempdir().unwrap();
    games_config(depth.path(), 1, 1);
    let refused = spsa_in(
        depth.path(),
        &[
            "run",
            "g.toml",
            "--db",
            &db.url,
            "--reference-nps",
            "100000",
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("no clock to scale"));
}

/// The owner's θ log follows the results as a local run's does (issue 55): a definition, then
/// one replayable row of 25 bytes per applied result plus a snapshot every K rows, never θ
/// whole per result. At 10,000 variables (θ whole would be 80 KB a result), with one worker
/// playing the iterations in order, the results are a local run's with the same seed, and so is
/// the log, byte for byte, and its history.
#[test]
fn a_shared_runs_owner_log_is_a_local_runs_byte_for_byte() {
    let cluster = Cluster::shared();
    let db = cluster.database("owner_log_size");
    let (shared, local) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (width, n) = (10_000, 200u64);
    for dir in [shared.path(), local.path()] {
        let vars: String = (0..width)
            .map(|i| format!("v{i},{},-1000,1000,20,0.002,1\n", (i % 7) * 10 - 30))
            .collect();
        std::fs::write(dir.join("t.var"), vars).unwrap();
        std::fs::write(
            dir.join("t.toml"),
            format!(
                "simulate = true\nvariables = \"t.var\"\nlog = \"t.log\"\niterations = {n}\nA = 20\ngamma = 0.101\nalpha = 0.602\nseed = 5\n"
            ),
        )
        .unwrap();
    }
    let owner = spawn(
        shared.path(),
        &["run", "t.toml", "--db", &db.url, "--no-play"],
    );
    run_id(&db);
    let worker_url = db.worker_role("owner_log_w", "pwl");
    let out = spsa_in(
        shared.path(),
        &[
            "worker",
            "--db",
            &worker_url,
            "--until-idle",
            "--concurrency",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = finish(owner);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = spsa_in(local.path(), &["run", "t.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let log = std::fs::read(shared.path().join("t.log")).unwrap();
    // Bytes by record kind: names, definition and snapshots apart, what the results add.
    let mut at = log.iter().position(|&b| b == b'\n').unwrap() + 1;
    let (mut beyond, mut rows, mut whole) = (0usize, 0u64, 0u64);
    while at < log.len() {
        let len = 5 + u32::from_le_bytes(log[at + 1..at + 5].try_into().unwrap()) as usize;
        match log[at] {
            b'N' | b'D' | b'S' => {}
            tag => {
                beyond += len;
                rows += 1;
                whole += u64::from(tag == b'T');
            }
        }
        at += len;
    }
    assert_eq!((rows, whole), (n, 0), "one replayable row per result");
    assert!(
        beyond as u64 <= n * 1024,
        "{} bytes a result beyond snapshots",
        beyond as u64 / n
    );
    assert!(
        log == std::fs::read(local.path().join("t.log")).unwrap(),
        "the owner's log is the local run's, byte for byte"
    );
    let history = |dir: &Path| {
        let out = spsa_in(
            dir,
            &["report", "t.log", "--format", "history", "--every", "10"],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        out.stdout
    };
    assert_eq!(history(shared.path()), history(local.path()));
}
