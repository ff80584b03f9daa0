//! Throughput shares between shared runs (PostgreSQL started by tests/pg_common on loopback):
//! the database's leasing gives each active run of equal priority games in proportion to its
//! share, a share changed live takes effect at the next lease, a paused, finished or refused
//! run hands its share on at once, and a share out of range is refused before anything is
//! created.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::pg_common;
use crate::run_common;
use pg_common::{Cluster, TestDb, psql_as, sim_config, wait_for};
use run_common::{spsa_in, text};

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");

fn spawn(dir: &Path, args: &[&str]) -> Child {
    Command::new(SPSA)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Owners that only create and follow (killed when the test ends).
struct Owners(Vec<Child>);

impl Drop for Owners {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Create a run of `conf` with `flags`, following it without playing; its id.
fn create(db: &TestDb, dir: &Path, conf: &str, flags: &[&str], owners: &mut Owners) -> i64 {
    let before: i64 = wait_for(db, "SELECT count(*) FROM spsa.runs", |_| true)
        .parse()
        .unwrap_or(0);
    let mut args = vec!["run", conf, "--db", &db.url, "--no-play"];
    args.extend_from_slice(flags);
    owners.0.push(spawn(dir, &args));
    wait_for(db, "SELECT count(*) FROM spsa.runs", |s| {
        s.parse::<i64>().is_ok_and(|n| n > before)
    });
    db.psql("SELECT max(id) FROM spsa.runs").parse().unwrap()
}

/// Lease `units` iterations (2 games each), one call at a time, as worker `name`; how many went
/// to each of `runs`.
fn lease(worker: &str, name: &str, runs: &[i64], units: u32) -> Vec<u32> {
    let ids: Vec<String> = runs.iter().map(i64::to_string).collect();
    let got = psql_as(
        worker,
        &format!(
            "SELECT l.run_id FROM generate_series(1, {units}) g,
                    LATERAL spsa.lease_share('{name}', ARRAY[{}]::bigint[], 2 + 0 * g) l",
            ids.join(",")
        ),
    )
    .unwrap();
    runs.iter()
        .map(|r| got.lines().filter(|l| *l == r.to_string()).count() as u32)
        .collect()
}

/// `spsa modify` of `run` through `url` exits 2 saying `why`.
fn modify_refused(dir: &Path, url: &str, run: i64, why: &str) {
    let run = run.to_string();
    let args = ["modify", "--db", url, "--run", &run, "--throughput", "1"];
    let out = spsa_in(dir, &args);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains(why), "{said}");
}

fn near(got: u32, want: u32) -> bool {
    got.abs_diff(want) <= 1
}

#[test]
fn leases_follow_the_shares_live_and_pass_on_when_a_run_pauses_finishes_or_is_refused() {
    let cluster = Cluster::shared();
    let db = cluster.database("shares_leases");
    let dir = tempfile::tempdir().unwrap();
    let mut owners = Owners(Vec::new());
    sim_config(dir.path(), "a", 2000, 1, 1);
    sim_config(dir.path(), "b", 2000, 2, 1);
    // The TOML key for one, the flag for the other.
    let b_toml = dir.path().join("b.toml");
    let b_text = std::fs::read_to_string(&b_toml).unwrap();
    std::fs::write(&b_toml, format!("throughput = 25\n{b_text}")).unwrap();
    let a = create(
        &db,
        dir.path(),
        "a.toml",
        &["--throughput", "75"],
        &mut owners,
    );
    let b = create(&db, dir.path(), "b.toml", &[], &mut owners);
    assert_eq!(
        db.psql("SELECT string_agg(throughput::text, ',' ORDER BY id) FROM spsa.runs"),
        "75,25"
    );
    let worker = db.worker_role("shares_w", "pws");
    // 75/25 over 40 leases: 30 and 10, within one lease.
    let got = lease(&worker, "w1", &[a, b], 40);
    assert!(near(got[0], 30) && near(got[1], 10), "{got:?}");
    // Several iterations in one call are shared out the same way.
    let one_call = psql_as(
        &worker,
        &format!("SELECT count(*) FILTER (WHERE run_id = {a}), count(*) FILTER (WHERE run_id = {b}) FROM spsa.lease_share('w2', ARRAY[{a}, {b}]::bigint[], 80)"),
    )
    .unwrap();
    let split: Vec<u32> = one_call.split('|').map(|n| n.parse().unwrap()).collect();
    assert!(near(split[0], 30) && near(split[1], 10), "{one_call}");

    // Changed live (as the owner, by `spsa modify`): equal shares split evenly from now on.
    let out = spsa_in(
        dir.path(),
        &[
            "modify",
            "--db",
            &db.url,
            "--run",
            &b.to_string(),
            "--throughput",
            "75",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        format!("run {b} active: priority 0, throughput 75")
    );
    let got = lease(&worker, "w1", &[a, b], 40);
    assert!(near(got[0], 20) && near(got[1], 20), "{got:?}");
    // A worker's role may not change a run, and a run that is not there is named.
    modify_refused(dir.path(), &worker, a, "owns the schema");
    modify_refused(dir.path(), &db.url, 999, "no run 999");

    // Paused: every lease goes to the other run at once.
    db.psql(&format!(
        "UPDATE spsa.runs SET state = 'paused' WHERE id = {a}"
    ));
    assert_eq!(lease(&worker, "w1", &[a, b], 20), [0, 20]);
    // Resumed: level with the other, so it neither swamps it nor waits.
    db.psql(&format!(
        "UPDATE spsa.runs SET state = 'active' WHERE id = {a}"
    ));
    let got = lease(&worker, "w1", &[a, b], 20);
    assert!(near(got[0], 10) && near(got[1], 10), "{got:?}");

    // A worker that refused run a leases only b; another worker still gets both.
    psql_as(
        &worker,
        &format!("SELECT spsa.engine_checked('w3', {a}, 'Engine1', false, '', '', 'wrong engine')"),
    )
    .unwrap();
    assert_eq!(lease(&worker, "w3", &[a, b], 10), [0, 10]);
    let got = lease(&worker, "w1", &[a, b], 20);
    assert!(got[0] >= 10 && got[0] + got[1] == 20, "{got:?}");

    // Finished: the other run gets everything.
    db.psql(&format!(
        "UPDATE spsa.runs SET state = 'finished' WHERE id = {b}"
    ));
    assert_eq!(lease(&worker, "w1", &[a, b], 10), [10, 0]);
    // A higher priority still comes first, whatever the shares.
    db.psql(&format!(
        "UPDATE spsa.runs SET state = 'active', priority = 1 WHERE id = {b}"
    ));
    assert_eq!(lease(&worker, "w1", &[a, b], 10), [0, 10]);
    // `spsa status` shows each run's priority and share.
    let status = spsa_in(dir.path(), &["status", "--db", &worker]);
    let shown = text(&status.stdout);
    assert!(
        shown.contains("priority 0, throughput 75") && shown.contains("priority 1, throughput 75"),
        "{shown}"
    );
}

#[test]
fn four_workers_play_two_runs_at_75_25() {
    let cluster = Cluster::shared();
    let db = cluster.database("shares_play");
    let dir = tempfile::tempdir().unwrap();
    let mut owners = Owners(Vec::new());
    // More iterations than the workers play in the time given, so both runs have work
    // throughout.
    sim_config(dir.path(), "a", 20_000, 1, 1);
    sim_config(dir.path(), "b", 20_000, 2, 1);
    let a = create(
        &db,
        dir.path(),
        "a.toml",
        &["--throughput", "75"],
        &mut owners,
    );
    let b = create(
        &db,
        dir.path(),
        "b.toml",
        &["--throughput", "25"],
        &mut owners,
    );
    let url = db.worker_role("shares_p", "pwp");
    let mut workers = Owners(
        (0..4)
            .map(|i| {
                spawn(
                    dir.path(),
                    &[
                        "worker",
                        "--db",
                        &url,
                        "--concurrency",
                        "2",
                        "--name",
                        &format!("w{i}"),
                    ],
                )
            })
            .collect(),
    );
    let count = |sql: &str| -> u64 { db.psql(sql).parse().unwrap() };
    // Played until 4,000 results and every worker on run a, however fast the machine is
    // today (a fixed time gave a loaded machine few games to measure the share with).
    wait_for(
        &db,
        &format!(
            "SELECT count(*) >= 4000 AND count(DISTINCT worker) FILTER (WHERE run_id = {a}) = 4 FROM spsa.results"
        ),
        |s| s == "t",
    );
    for w in &mut workers.0 {
        let _ = w.kill();
        let _ = w.wait();
    }
    let played_a = count(&format!(
        "SELECT count(*) FROM spsa.results WHERE run_id = {a}"
    ));
    let played_b = count(&format!(
        "SELECT count(*) FROM spsa.results WHERE run_id = {b}"
    ));
    let workers_a = count(&format!(
        "SELECT count(DISTINCT worker) FROM spsa.results WHERE run_id = {a}"
    ));
    let share = played_a as f64 / (played_a + played_b) as f64;
    eprintln!("run a {played_a}, run b {played_b}: {share:.3} of the games to the 75 share");
    assert!(played_b > 0 && played_a < 20_000, "{played_a} {played_b}");
    assert!((share - 0.75).abs() < 0.05, "{share}");
    assert_eq!(workers_a, 4);
}

#[test]
fn a_share_out_of_range_is_refused_before_anything_is_created() {
    let cluster = Cluster::shared();
    let db = cluster.database("shares_bad");
    let dir = tempfile::tempdir().unwrap();
    sim_config(dir.path(), "t", 20, 1, 1);
    let out = spsa_in(
        dir.path(),
        &["run", "t.toml", "--db", &db.url, "--throughput", "0"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--throughput"),
        "{}",
        text(&out.stderr)
    );
    let conf = dir.path().join("t.toml");
    let body = std::fs::read_to_string(&conf).unwrap();
    std::fs::write(&conf, format!("throughput = 5000\n{body}")).unwrap();
    let out = spsa_in(dir.path(), &["run", "t.toml", "--db", &db.url]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let why = text(&out.stderr);
    assert!(
        why.contains("key `throughput`") && why.contains("at most 1000"),
        "{why}"
    );
    // A local run with --throughput has nothing to share.
    std::fs::write(&conf, &body).unwrap();
    let out = spsa_in(dir.path(), &["run", "t.toml", "--throughput", "50"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not a shared run"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'spsa'"),
        "0"
    );
    assert!(!dir.path().join("t.log").exists());
}
