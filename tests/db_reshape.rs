//! Going on with more (or fewer) variables in a shared run: `spsa run CONFIG --db URL --resume`
//! with a variables file that adds and drops rows, while a worker plays on. The database takes
//! the change in one transaction, the worker prepares the run again, the owner's mirror replays
//! every result in the shape it was applied in (bit for bit, or it stops), and a re-attach
//! without the local files writes the same θ log. What cannot be honoured is refused with its
//! row, exit 2, and the database keeps the run as it was.

use std::path::Path;
use std::process::{Child, Command};

use crate::child_common;
use crate::pg_common;
use crate::run_common;
use pg_common::{Cluster, TestDb, sim_config, wait_for};
use run_common::{log_iterations, spawn_in as spawn, spsa_in, text};

/// The run's variables after the change: y dropped, z added (away from its optimum at 0).
const CHANGED: &str = "x,100,-1000,1000,100,0.002,1\nz,60,-100,100,10,0.002,20\n";

fn count(db: &TestDb, sql: &str) -> i64 {
    db.psql(sql).parse().unwrap()
}

fn interrupt(child: &Child) {
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// The θ log's rows as numbers, header dropped.
fn rows(path: &Path) -> Vec<Vec<f64>> {
    run_common::log_text(path)
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|f| f.parse().unwrap()).collect())
        .collect()
}

#[test]
fn a_shared_run_goes_on_with_an_added_and_a_dropped_variable_exactly() {
    let cluster = Cluster::shared();
    let db = cluster.database("reshape");
    let dir = tempfile::tempdir().unwrap();
    let n: i64 = 4000;
    sim_config(dir.path(), "t", n as u64, 7, 1);
    let mut owner = spawn(dir.path(), &["run", "t.toml", "--db", &db.url, "--no-play"]);
    let run = pg_common::wait_for_run(&db);
    let url = db.worker_role("reshape_w", "pwr");
    let worker = spawn(
        dir.path(),
        &["worker", "--db", &url, "--concurrency", "2", "--name", "w"],
    );
    wait_for(
        &db,
        &format!("SELECT applied > 300 FROM spsa.runs WHERE id = {run}"),
        |s| s == "t",
    );
    owner.kill().unwrap();
    owner.wait().unwrap();
    // The worker is stopped while the owner is away (SIGSTOP, seen in /proc; it holds no
    // transaction open between its statements), so that it cannot play the whole run before
    // the owner is back: a simulated iteration takes microseconds, and under load the owner's
    // start once took so long that z had a handful of iterations left to move in.
    child_common::stop(&worker);

    // The owner comes back with y dropped and z added; the worker goes on with the leases it
    // holds, then sees the change.
    std::fs::write(dir.path().join("t.var"), CHANGED).unwrap();
    let owner = spawn(
        dir.path(),
        &["run", "t.toml", "--db", &db.url, "--no-play", "--resume"],
    );
    let changed_at = wait_for(
        &db,
        &format!("SELECT definition->'earlier'->0->>'until' FROM spsa.runs WHERE id = {run}"),
        |s| !s.is_empty(),
    );
    child_common::go_on(&worker);
    let changed_at: i64 = changed_at.parse().unwrap();
    assert!(
        changed_at > 300 && changed_at < n,
        "changed at {changed_at}"
    );
    let owner = owner.wait_with_output().unwrap();
    let said = text(&owner.stderr);
    assert!(owner.status.success(), "{said}");
    assert!(said.contains("`z` joined the run"), "{said}");
    assert!(said.contains("`y` held at their θ"), "{said}");
    interrupt(&worker);
    let worker = worker.wait_with_output().unwrap();
    let worker_said = text(&worker.stderr);
    assert!(worker.status.success(), "{worker_said}");
    assert!(
        worker_said.contains(&format!("run {run} changed its variables")),
        "the worker prepared the run again: {worker_said}"
    );

    // Every iteration once, in order; the run's shape as the database keeps it.
    let q = |sql: &str| count(&db, &sql.replace("RUN", &run));
    assert_eq!(q("SELECT applied FROM spsa.runs WHERE id = RUN"), n);
    assert_eq!(
        q(
            "SELECT count(DISTINCT iteration) FROM spsa.results WHERE run_id = RUN AND seq BETWEEN 1 AND 4000"
        ),
        n
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT state, var_names, definition->'held', definition->'joined'->0->>'name' FROM spsa.runs WHERE id = {run}"
        )),
        "finished|{x,y,z}|[\"y\"]|z"
    );
    let after =
        q("SELECT (definition->'joined'->0->>'after')::bigint FROM spsa.runs WHERE id = RUN");
    // z joined after the last iteration leased before the change: none played after it had
    // been leased before.
    assert_eq!(
        q(&format!(
            "SELECT count(*) FROM spsa.results WHERE run_id = RUN AND seq <= {changed_at} AND iteration > {after}"
        )),
        0
    );
    // θ after every result (a snapshot per result at this size, spsa.snapshots), each agreeing
    // with the result's checksum. Before the change θ has two columns, after it three; y never moves again, z stands at
    // its start until an iteration past its join is applied, then moves.
    assert_eq!(
        q(&format!(
            "SELECT count(*) FROM spsa.snapshots WHERE run_id = RUN AND array_length(theta, 1) <> CASE WHEN seq <= {changed_at} THEN 2 ELSE 3 END"
        )),
        0
    );
    assert_eq!(
        q(
            "SELECT count(*) FROM spsa.results x JOIN spsa.snapshots s USING (run_id, seq)
            WHERE x.run_id = RUN AND x.theta_sum = spsa.theta_checksum(s.theta)"
        ),
        n
    );
    let y_at_change = db.psql(&format!(
        "SELECT theta[2] FROM spsa.snapshots WHERE run_id = {run} AND seq = {changed_at}"
    ));
    assert_eq!(
        db.psql(&format!(
            "SELECT string_agg(DISTINCT theta[2]::text, ',') FROM spsa.snapshots WHERE run_id = {run} AND seq > {changed_at}"
        )),
        y_at_change,
        "a dropped variable is held at its θ"
    );
    let first_move = q(&format!(
        "SELECT min(seq) FROM spsa.snapshots WHERE run_id = RUN AND seq > {changed_at} AND theta[3] <> 60"
    ));
    assert!(
        q(&format!(
            "SELECT iteration FROM spsa.results WHERE run_id = RUN AND seq = {first_move}"
        )) > after,
        "z first moved on an iteration after its join"
    );
    let z: f64 = db
        .psql(&format!("SELECT theta[3] FROM spsa.runs WHERE id = {run}"))
        .parse()
        .unwrap();
    assert!(z < 58.0, "z went towards its optimum at 0 from 60: {z}");

    // The owner's files: every result once, its θ log with z at its start before the change.
    let log = dir.path().join("t.log");
    assert_eq!(log_iterations(&log), (1..=n as u64).collect::<Vec<_>>());
    let header = run_common::log_text(&log);
    assert!(
        header.lines().next().unwrap().ends_with(",x,y,z"),
        "{header}"
    );
    let rows = rows(&log);
    assert!(rows[..changed_at as usize].iter().all(|r| r[3] == 60.0));

    // A re-attach without the local checkpoint (a machine without the run's files: what is
    // there is kept as a backup) writes the same θ log from the database.
    // The same rows of θ (the file itself may differ in where the change is recorded).
    let written = run_common::log_text(&log);
    std::fs::remove_file(dir.path().join("t.checkpoint.var")).unwrap();
    let again = spsa_in(dir.path(), &["run", "t.toml", "--db", &db.url, "--resume"]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(run_common::log_text(&log), written);
}

#[test]
fn a_change_that_cannot_be_honoured_is_refused_with_its_row_and_the_run_kept() {
    let cluster = Cluster::shared();
    let db = cluster.database("reshape_refused");
    let dir = tempfile::tempdir().unwrap();
    sim_config(dir.path(), "t", 200, 3, 2);
    let made = spsa_in(dir.path(), &["run", "t.toml", "--db", &db.url]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let run = pg_common::wait_for_run(&db);
    let kept = |db: &TestDb| {
        db.psql(&format!(
            "SELECT md5(definition::text || theta::text || lo::text || hi::text || var_names::text) FROM spsa.runs WHERE id = {run}"
        ))
    };
    let before = kept(&db);
    let log_before = std::fs::read(dir.path().join("t.log")).unwrap();
    let x: f64 = db
        .psql(&format!("SELECT theta[1] FROM spsa.runs WHERE id = {run}"))
        .parse()
        .unwrap();
    let refused = [
        // x's bounds shut out its θ.
        (
            format!(
                "x,{0},-1000,{0},100,0.002,1\ny,-50,-1000,1000,100,0.002,4\n",
                x.floor() - 1.0
            ),
            vec!["t.var:1", "`x`", "shut out its θ"],
        ),
        // y renamed.
        (
            "x,100,-1000,1000,100,0.002,1\nw,-50,-1000,1000,100,0.002,4\n".to_string(),
            vec!["t.var:2", "`w`", "renamed"],
        ),
        // A row added to a run with no iteration left.
        (
            "x,100,-1000,1000,100,0.002,1\ny,-50,-1000,1000,100,0.002,4\nz,0,-10,10,1,0.002,1\n"
                .to_string(),
            vec!["t.var:3", "`z`", "no iterations left"],
        ),
    ];
    for (vars, words) in refused {
        std::fs::write(dir.path().join("t.var"), &vars).unwrap();
        let o = spsa_in(dir.path(), &["run", "t.toml", "--db", &db.url, "--resume"]);
        let said = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{said}");
        for w in words {
            assert!(said.contains(w), "`{w}` in: {said}");
        }
        assert!(
            said.contains(&format!("run {run} in the database")),
            "{said}"
        );
        assert_eq!(kept(&db), before, "the run is as it was");
        assert_eq!(std::fs::read(dir.path().join("t.log")).unwrap(), log_before);
    }
}

#[test]
fn a_row_the_engines_lack_is_refused_before_the_database_takes_it() {
    let cluster = Cluster::shared();
    let db = cluster.database("reshape_option");
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    pg_common::engine_config(
        dir.path(),
        env!("CARGO_BIN_EXE_sparring"),
        50,
        1,
        "depth = 1",
    );
    let (mut owner, run) = pg_common::create_run(&db, dir.path(), &cache, &[]);
    wait_for(
        &db,
        &format!("SELECT count(*) FROM spsa.work WHERE run_id = {run}"),
        |s| s == "50",
    );
    owner.kill().unwrap();
    owner.wait().unwrap();
    let before = db.psql(&format!(
        "SELECT md5(definition::text || var_names::text) FROM spsa.runs WHERE id = {run}"
    ));
    let vars = std::fs::read_to_string(dir.path().join("g.var")).unwrap();
    std::fs::write(
        dir.path().join("g.var"),
        format!("{vars}NoSuchOption,10,0,100,5,0.002,0\n"),
    )
    .unwrap();
    let o = pg_common::spsa(
        dir.path(),
        &cache,
        &["run", "g.toml", "--db", &db.url, "--no-play", "--resume"],
    )
    .output()
    .unwrap();
    let said = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(said.contains("no option `NoSuchOption`"), "{said}");
    assert_eq!(
        db.psql(&format!(
            "SELECT md5(definition::text || var_names::text) FROM spsa.runs WHERE id = {run}"
        )),
        before,
        "the run is as it was"
    );
}
