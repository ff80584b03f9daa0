//! What a shared run keeps in the database (schema version 2): result rows with a checksum of θ
//! instead of θ, θ in snapshots every so many results, work rows handed out a window ahead and
//! emptied of their arrays once applied; a database of version 1 migrated and read bit for bit,
//! one of a newer version refused.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use crate::pg_common;
use crate::run_common;
use pg_common::{Cluster, TestDb, wait_for};
use run_common::text;

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");

/// `spsa args` in `dir`, its output piped, with `env` set.
fn spawn_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    Command::new(SPSA)
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

fn count(db: &TestDb, sql: &str) -> i64 {
    db.psql(sql).parse().unwrap_or_else(|_| panic!("{sql}"))
}

/// A simulated run of `n` iterations over `vars` variables in `dir` (`t.toml`, `t.var`).
fn config(dir: &Path, vars: usize, n: u64) {
    let rows: String = (0..vars)
        .map(|i| format!("v{i},{},-1000,1000,100,0.002,1\n", 100 + (i % 7) as i64))
        .collect();
    std::fs::write(dir.join("t.var"), rows).unwrap();
    std::fs::write(
        dir.join("t.toml"),
        format!(
            "simulate = true\nvariables = \"t.var\"\nlog = \"t.log\"\niterations = {n}\nA = {}\ngamma = 0.101\nalpha = 0.602\nconcurrency = 1\nseed = 11\n",
            n / 10
        ),
    )
    .unwrap();
}

/// A simulated run of `n` iterations over 2 variables in `dir`, played to its end in `db` by
/// its owner alone.
fn finished_run(db: &TestDb, dir: &Path, n: u64) {
    config(dir, 2, n);
    let made = finish(spawn_with(dir, &["run", "t.toml", "--db", &db.url], &[]));
    assert!(made.status.success(), "{}", text(&made.stderr));
}

/// The checksum is the same function in SQL and in Rust (the values pinned in
/// `spsa::checksum`'s unit test).
#[test]
fn the_database_computes_the_checksum_of_theta_as_spsa_does() {
    let cluster = Cluster::shared();
    let db = cluster.database("checksum");
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), 2, 4);
    // The schema is installed by an owner: a run created and followed without playing.
    let owner = spawn_with(
        dir.path(),
        &["run", "t.toml", "--db", &db.url, "--no-play"],
        &[],
    );
    pg_common::wait_for_run(&db);
    assert_eq!(
        db.psql("SELECT spsa.theta_checksum('{1.0,-2.5}'), spsa.theta_checksum('{}')"),
        format!(
            "{}|{}",
            0xf6cf_2457_29bf_73f7_u64 as i64, 0xe3b0_c442_98fc_1c14_u64 as i64
        )
    );
    assert_eq!(
        db.psql("SELECT spsa.theta_checksum('{0}') <> spsa.theta_checksum('{-0}')"),
        "t"
    );
    let mut owner = owner;
    owner.kill().unwrap();
    owner.wait().unwrap();
}

/// 300 variables, a window of 10 iterations, two workers with only the URL: the owner killed
/// with SIGKILL, the workers stop at the window's end, the owner re-attaches and every
/// iteration is applied once; the database keeps no array per applied result beyond the
/// snapshots, and a re-attach elsewhere writes the θ log byte for byte.
#[test]
fn a_wide_run_keeps_a_window_of_work_and_a_checksum_per_result() {
    let cluster = Cluster::shared();
    let db = cluster.database("layout_wide");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n: i64 = 120;
    config(d, 300, n as u64);
    let window = [("SPSA_WORK_WINDOW", "10")];
    let owner = spawn_with(d, &["run", "t.toml", "--db", &db.url, "--no-play"], &window);
    let run = pg_common::wait_for_run(&db);
    let q = |sql: &str| count(&db, &sql.replace("RUN", &run));
    // Created with the first 10 iterations handed out, a snapshot every 19 results
    // (300 × 8 bytes over 128).
    assert_eq!(
        db.psql(&format!(
            "SELECT snapshot_every, (SELECT max(iteration) FROM spsa.work WHERE run_id = {run}) <= 10 FROM spsa.runs WHERE id = {run}"
        )),
        "19|t"
    );
    let url = db.worker_role("layout_w", "pwl");
    let workers: Vec<Child> = (1..=2)
        .map(|i| {
            spawn_with(
                d,
                &[
                    "worker",
                    "--db",
                    &url,
                    "--until-idle",
                    "--concurrency",
                    "1",
                    "--name",
                    &format!("w{i}"),
                ],
                &[],
            )
        })
        .collect();
    wait_for(
        &db,
        &format!("SELECT applied >= 30 FROM spsa.runs WHERE id = {run}"),
        |s| s == "t",
    );
    let mut owner = owner;
    pg_common::kill_owner(&db, &mut owner);
    // Without the owner the workers play what was handed out, and no further.
    let handed = q("SELECT max(iteration) FROM spsa.work WHERE run_id = RUN");
    assert!(handed < n, "handed out {handed} of {n}");
    wait_for(
        &db,
        &format!("SELECT applied = {handed} FROM spsa.runs WHERE id = {run}"),
        |s| s == "t",
    );
    assert_eq!(
        q("SELECT max(iteration) FROM spsa.work WHERE run_id = RUN"),
        handed
    );
    // The owner re-attaches with its local checkpoint and hands out the rest.
    let owner = spawn_with(
        d,
        &["run", "t.toml", "--db", &db.url, "--no-play", "--resume"],
        &window,
    );
    let said = finish(owner);
    assert!(said.status.success(), "{}", text(&said.stderr));
    for w in workers {
        let out = finish(w);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }

    // Exactly once, in order, by the workers (one or both: a worker with --until-idle that
    // finds every handed-out iteration leased may leave, which a fast machine made happen;
    // several workers sharing a run are db_shared's tests).
    assert_eq!(
        db.psql(&format!(
            "SELECT applied, state FROM spsa.runs WHERE id = {run}"
        )),
        format!("{n}|finished")
    );
    assert_eq!(
        q(
            "SELECT count(DISTINCT iteration) FROM spsa.results WHERE run_id = RUN AND seq BETWEEN 1 AND 120"
        ),
        n
    );
    let by = q("SELECT count(DISTINCT worker) FROM spsa.results WHERE run_id = RUN");
    assert!((1..=2).contains(&by), "results by {by} workers");
    // No work row keeps an array once done; never more than the window was out.
    assert_eq!(
        q(
            "SELECT count(*) FROM spsa.work WHERE run_id = RUN AND (state <> 'done' OR step IS NOT NULL OR leased_theta IS NOT NULL)"
        ),
        0
    );
    // Snapshots every 19 results and after the last, each agreeing with its result's
    // checksum; the run's θ is the last result's.
    assert_eq!(
        db.psql(&format!(
            "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM spsa.snapshots WHERE run_id = {run}"
        )),
        "19,38,57,76,95,114,120"
    );
    assert_eq!(
        q("SELECT count(*) FROM spsa.results x JOIN spsa.snapshots s USING (run_id, seq)
            WHERE x.run_id = RUN AND x.theta_sum = spsa.theta_checksum(s.theta) AND array_length(s.theta, 1) = 300"),
        7
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT x.theta_sum = spsa.theta_checksum(r.theta) FROM spsa.runs r JOIN spsa.results x ON x.run_id = r.id AND x.seq = r.applied WHERE r.id = {run}"
        )),
        "t"
    );
    // The θ log is binary (format 2): its rows through the reader, its bytes compared below.
    assert_eq!(run_common::log_iterations(&d.join("t.log")).len() as i64, n);
    let log = std::fs::read(d.join("t.log")).unwrap();

    // A re-attach on another machine (no local files) writes the same θ log from the database.
    let elsewhere = tempfile::tempdir().unwrap();
    for f in ["t.toml", "t.var"] {
        std::fs::copy(d.join(f), elsewhere.path().join(f)).unwrap();
    }
    db.psql(&format!(
        "UPDATE spsa.runs SET name = '{}' WHERE id = {run}",
        std::fs::canonicalize(elsewhere.path().join("t.toml"))
            .unwrap()
            .display()
    ));
    let again = finish(spawn_with(
        elsewhere.path(),
        &["run", "t.toml", "--db", &db.url, "--no-play", "--resume"],
        &[],
    ));
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(
        std::fs::read(elsewhere.path().join("t.log")).unwrap() == log,
        "the re-attached θ log differs"
    );
}

/// psql -f FILE as the database's admin.
fn restore(db: &TestDb, file: &Path) {
    let out = Command::new("/usr/lib/postgresql/15/bin/psql")
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", &db.url, "-f"])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A database made by spsa before schema version 2 (θ in every result row, a step vector in
/// every work row; `tests/db_v1_fixture`, a run stopped after 37 of 60 results): the page refuses
/// it until it is migrated, naming what to do; the owner's resume migrates it, its mirror
/// replays the 37 old results against the checksums the migration computed from their θ, and
/// the run goes on to its end.
#[test]
fn a_database_of_version_1_is_migrated_and_read_bit_for_bit() {
    let cluster = Cluster::shared();
    let db = cluster.database("layout_v1");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/db_v1_fixture");
    restore(&db, &fixture.join("run.sql"));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["t.toml", "t.var"] {
        std::fs::copy(fixture.join(f), d.join(f)).unwrap();
    }
    db.psql(&format!(
        "UPDATE spsa.runs SET name = '{}'",
        std::fs::canonicalize(d.join("t.toml")).unwrap().display()
    ));
    let theta_37 = db.psql("SELECT theta FROM spsa.results WHERE seq = 37");

    // Not yet migrated: the page refuses it, saying what to do.
    let serve = finish(spawn_with(
        d,
        &["serve", "--db", &db.url, "--listen", "127.0.0.1:0"],
        &[],
    ));
    let said = text(&serve.stderr);
    assert_eq!(serve.status.code(), Some(2), "{said}");
    assert!(
        said.contains("its spsa schema is version 1, from an older spsa")
            && said.contains("--resume"),
        "{said}"
    );

    // The owner's resume migrates it and plays the run to its end.
    let owner = finish(spawn_with(
        d,
        &["run", "t.toml", "--db", &db.url, "--resume"],
        &[],
    ));
    assert!(owner.status.success(), "{}", text(&owner.stderr));
    assert_eq!(db.psql("SELECT version FROM spsa.schema_version"), "4");
    assert_eq!(
        db.psql("SELECT applied, state FROM spsa.runs"),
        "60|finished"
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(DISTINCT iteration) FROM spsa.results WHERE seq BETWEEN 1 AND 60"
        ),
        60
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'spsa' AND table_name = 'results' AND column_name = 'theta'"
        ),
        0
    );
    // The old results' θ became snapshots (a run made before snapshots keeps one per result).
    assert_eq!(
        db.psql("SELECT theta FROM spsa.snapshots WHERE seq = 37"),
        theta_37
    );
    assert_eq!(count(&db, "SELECT count(*) FROM spsa.snapshots"), 60);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM spsa.work WHERE step IS NOT NULL OR leased_theta IS NOT NULL"
        ),
        0
    );
    assert_eq!(
        run_common::log_iterations(&d.join("t.log")),
        (1..=60).collect::<Vec<_>>()
    );
    // And the page reads it now.
    let mut serve = spawn_with(
        d,
        &["serve", "--db", &db.url, "--listen", "127.0.0.1:0"],
        &[],
    );
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(serve.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    assert!(first.starts_with("http://"), "{first}");
    serve.kill().unwrap();
    serve.wait().unwrap();
}

/// A database made by spsa before schema version 3 (no matches; `tests/db_v2_fixture`, a
/// finished run of 60 results) is migrated by the first `spsa match --db` on it: the match is
/// created and played beside the old run, whose results, θ and checksums stay as they were, and
/// whose owner re-attaches and replays them bit for bit.
#[test]
fn a_database_of_version_2_is_migrated_by_a_match_and_keeps_its_run() {
    let cluster = Cluster::shared();
    let db = cluster.database("layout_v2");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/db_v2_fixture");
    restore(&db, &fixture.join("run.sql"));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["t.toml", "t.var"] {
        std::fs::copy(fixture.join(f), d.join(f)).unwrap();
    }
    db.psql(&format!(
        "UPDATE spsa.runs SET name = '{}'",
        std::fs::canonicalize(d.join("t.toml")).unwrap().display()
    ));
    assert_eq!(db.psql("SELECT version FROM spsa.schema_version"), "2");
    let before = db.psql(
        "SELECT string_agg(iteration || ':' || theta_sum, ' ' ORDER BY seq) FROM spsa.results",
    );
    let theta = db.psql("SELECT theta FROM spsa.runs");

    let sparring = env!("CARGO_BIN_EXE_sparring");
    let cache = d.join("cache");
    let cache = cache.to_str().unwrap();
    let creator = spawn_with(
        d,
        &[
            "match",
            "--engine1",
            sparring,
            "--option2",
            "KnightValue=60",
            "--depth",
            "1",
            "--pairs",
            "3",
            "--seed",
            "2",
            "--progress",
            "0",
            "--db",
            &db.url,
        ],
        &[("XDG_CACHE_HOME", cache)],
    );
    wait_for(
        &db,
        "SELECT count(*) FROM spsa.runs WHERE kind = 'match'",
        |s| s == "1",
    );
    assert_eq!(db.psql("SELECT version FROM spsa.schema_version"), "4");
    let url = db.worker_role("layout_v2_w", "pwd");
    let worker = finish(spawn_with(
        d,
        &["worker", "--db", &url, "--until-idle", "--name", "w"],
        &[("XDG_CACHE_HOME", cache)],
    ));
    assert!(worker.status.success(), "{}", text(&worker.stderr));
    let creator = finish(creator);
    let said = text(&creator.stdout);
    assert!(creator.status.success(), "{said}{}", text(&creator.stderr));
    assert!(said.contains("pairs: 3, pentanomial"), "{said}");
    assert_eq!(
        db.psql("SELECT applied, state FROM spsa.runs WHERE kind = 'match'"),
        "3|finished"
    );
    // The old run is as it was, and its owner re-attaches to it.
    assert_eq!(
        db.psql(
            "SELECT string_agg(iteration || ':' || theta_sum, ' ' ORDER BY seq) FROM spsa.results"
        ),
        before
    );
    assert_eq!(
        db.psql("SELECT theta FROM spsa.runs WHERE kind = 'tune'"),
        theta
    );
    let owner = finish(spawn_with(
        d,
        &["run", "t.toml", "--db", &db.url, "--resume"],
        &[],
    ));
    assert!(owner.status.success(), "{}", text(&owner.stderr));
    assert_eq!(
        run_common::log_iterations(&d.join("t.log")),
        (1..=60).collect::<Vec<_>>()
    );
}

/// A database whose schema a newer spsa made is refused before anything is changed in it.
#[test]
fn a_database_of_a_newer_version_is_refused() {
    let cluster = Cluster::shared();
    let db = cluster.database("layout_newer");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    finished_run(&db, d, 4);
    db.psql("UPDATE spsa.schema_version SET version = 5");
    let resumed = finish(spawn_with(
        d,
        &["run", "t.toml", "--db", &db.url, "--resume"],
        &[],
    ));
    let said = text(&resumed.stderr);
    assert!(!resumed.status.success(), "{said}");
    assert!(
        said.contains(
            "the database's spsa schema is version 5, made by a newer spsa than this one"
        ),
        "{said}"
    );
    assert_eq!(db.psql("SELECT version FROM spsa.schema_version"), "5");
    let serve = finish(spawn_with(
        d,
        &["serve", "--db", &db.url, "--listen", "127.0.0.1:0"],
        &[],
    ));
    let said = text(&serve.stderr);
    assert_eq!(serve.status.code(), Some(2), "{said}");
    assert!(said.contains("update spsa on this machine"), "{said}");
}

/// An owner that re-attaches to a database holding its own schema installs nothing, so it does
/// not wait for the transactions open on the run's tables (a report in flight, a reader): the
/// install's ALTER TABLEs would wait for every one of them, and hold up every report after
/// them. A schema text other than its own is installed again.
#[test]
fn a_reattach_to_its_own_schema_waits_for_no_open_transaction() {
    use std::io::{BufRead, Write};
    let cluster = Cluster::shared();
    let db = cluster.database("layout_reattach");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    finished_run(&db, d, 20);
    assert_eq!(count(&db, "SELECT count(*) FROM spsa.schema_installed"), 1);

    // A reader's transaction, left open on the table of runs.
    let mut reader = Command::new("/usr/lib/postgresql/15/bin/psql")
        .args(["-X", "-q", "-t", "-A", &db.url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = reader.stdin.take().unwrap();
    writeln!(stdin, "BEGIN; SELECT count(*) FROM spsa.runs;").unwrap();
    let mut line = String::new();
    std::io::BufReader::new(reader.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "1");

    // The resume of the finished run ends without waiting for it (it waited until the reader
    // ended when every attach installed the schema).
    let mut resumed = spawn_with(d, &["run", "t.toml", "--db", &db.url, "--resume"], &[]);
    let t = std::time::Instant::now();
    while resumed.try_wait().unwrap().is_none() {
        if t.elapsed().as_secs() >= 60 {
            resumed.kill().unwrap();
            panic!("the resume still waits for a transaction it has nothing to do with");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let resumed = finish(resumed);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    drop(stdin);
    reader.wait().unwrap();

    // Another schema text recorded (an older spsa's): installed again.
    db.psql("UPDATE spsa.schema_installed SET sha256 = 'older'");
    let again = finish(spawn_with(
        d,
        &["run", "t.toml", "--db", &db.url, "--resume"],
        &[],
    ));
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM spsa.schema_installed WHERE sha256 ~ '^[0-9a-f]{64}$'"
        ),
        1
    );
}
