//! A team's front door (PostgreSQL started by tests/pg_common on loopback): members and
//! approvers are PostgreSQL roles; a member's run waits, unleased, until an approver approves
//! it (then the workers and the member's own process play it) or rejects it (with a reason the
//! member reads, and it never plays); a member pauses, resumes, stops and shares only its own
//! runs, refused the same through the CLI and by a direct SQL call; a worker creates and
//! approves nothing; the audit trail lists every action with its actor, in order; and a
//! database of schema version 3 is migrated with its run going on.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use crate::pg_common;
use crate::run_common;
use pg_common::{Cluster, TestDb, psql_as, sim_config, wait_for};
use run_common::text;

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");

fn spawn(dir: &Path, args: &[&str]) -> Child {
    Command::new(SPSA)
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn run(dir: &Path, args: &[&str]) -> Output {
    spawn(dir, args).wait_with_output().unwrap()
}

/// A login role `name` in `group`, and its URL on `db`.
fn role(db: &TestDb, name: &str, group: &str) -> String {
    db.psql(&format!(
        "DROP ROLE IF EXISTS {name}; CREATE ROLE {name} LOGIN PASSWORD 'pw-{name}' IN ROLE {group}"
    ));
    db.cluster.url(name, &format!("pw-{name}"), &db.name)
}

/// The schema installed by the database's owner before any member comes (`--install`).
fn install(db: &TestDb, dir: &Path) {
    let out = run(dir, &["status", "--db", &db.url, "--install"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// `args` exit 2 saying `why`.
fn refused(dir: &Path, args: &[&str], why: &str) {
    let out = run(dir, args);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
    assert!(said.contains(why), "{args:?}: {said}");
}

/// `sql` as the role of `url` fails saying `why`.
fn sql_refused(url: &str, sql: &str, why: &str) {
    match psql_as(url, sql) {
        Ok(out) => panic!("`{sql}` was allowed: {out}"),
        Err(e) => assert!(e.contains(why), "`{sql}`: {e}"),
    }
}

/// The audit trail of run `id` as `actor action` pairs, in order, read as `url`'s role.
fn audit(url: &str, id: &str) -> String {
    psql_as(
        url,
        &format!("SELECT string_agg(actor || ' ' || action, ', ' ORDER BY id) FROM spsa.audit_trail({id})"),
    )
    .unwrap()
}

/// Work a worker role leases of run `id` now.
fn leased(worker: &str, id: &str) -> String {
    psql_as(
        worker,
        &format!("SELECT count(*) FROM spsa.lease_share('w', ARRAY[{id}]::bigint[], 100)"),
    )
    .unwrap()
}

#[test]
fn a_members_tune_waits_for_an_approver_then_its_process_and_the_workers_play_it() {
    let cluster = Cluster::shared();
    let db = cluster.database("door_tune");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sim_config(d, "t", 30, 3, 1);
    install(&db, d);
    let alice = role(&db, "door_tune_alice", "spsa_member");
    let bob = role(&db, "door_tune_bob", "spsa_approver");
    let worker = db.worker_role("door_tune_w", "pw");

    let member = spawn(d, &["run", "t.toml", "--db", &alice]);
    let id = wait_for(&db, "SELECT id || ' ' || approval FROM spsa.runs", |s| {
        s.ends_with("waiting")
    });
    let id = id.split(' ').next().unwrap().to_string();
    assert_eq!(
        db.psql(&format!("SELECT author FROM spsa.runs WHERE id = {id}")),
        "door_tune_alice"
    );
    // Waiting: no worker sees it, none leases any of its work.
    assert_eq!(
        psql_as(&worker, "SELECT count(*) FROM spsa.active_runs()").unwrap(),
        "0"
    );
    assert_eq!(leased(&worker, &id), "0");
    let status = run(d, &["status", "--db", &alice]);
    let said = text(&status.stdout);
    assert!(
        said.contains("by door_tune_alice, waits for an approver: spsa approve --db URL"),
        "{said}"
    );
    // Neither the member nor a worker approves it.
    sql_refused(
        &alice,
        &format!("SELECT spsa.approve({id})"),
        "may not approve",
    );
    refused(d, &["approve", "--db", &worker, &id], "permission denied");
    assert_eq!(
        db.psql(&format!("SELECT approval FROM spsa.runs WHERE id = {id}")),
        "waiting"
    );

    let approved = run(d, &["approve", "--db", &bob, &id]);
    assert!(approved.status.success(), "{}", text(&approved.stderr));
    assert!(text(&approved.stdout).contains("approved"));
    // The member's own process plays it to its end (and a worker may help).
    let member = member.wait_with_output().unwrap();
    let said = text(&member.stderr);
    assert!(member.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "run {id} waits for an approver: spsa approve --db URL {id}"
        )),
        "{said}"
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT state, applied FROM spsa.runs WHERE id = {id}"
        )),
        "finished|30"
    );
    assert_eq!(
        run_common::log_iterations(&d.join("t.log")).len(),
        30,
        "the member's θ log"
    );
    assert_eq!(
        audit(&alice, &id),
        "door_tune_alice created, door_tune_bob approved"
    );
    let said = text(&run(d, &["status", "--db", &alice]).stdout);
    assert!(
        said.contains("by door_tune_alice, approved by door_tune_bob"),
        "{said}"
    );
}

#[test]
fn a_rejected_match_shows_its_reason_and_never_plays() {
    let cluster = Cluster::shared();
    let db = cluster.database("door_reject");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    install(&db, d);
    let alice = role(&db, "door_rej_alice", "spsa_member");
    let bob = role(&db, "door_rej_bob", "spsa_approver");
    let worker = db.worker_role("door_rej_w", "pw");
    let sparring = env!("CARGO_BIN_EXE_sparring");
    let member = spawn(
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
            &alice,
        ],
    );
    let id = wait_for(
        &db,
        "SELECT id || ' ' || approval FROM spsa.runs WHERE kind = 'match'",
        |s| s.ends_with("waiting"),
    );
    let id = id.split(' ').next().unwrap().to_string();
    // A worker finds nothing to play and stops (`--until-idle`).
    let idle = run(
        d,
        &["worker", "--db", &worker, "--until-idle", "--name", "w"],
    );
    assert!(idle.status.success(), "{}", text(&idle.stderr));
    assert_eq!(leased(&worker, &id), "0");
    refused(
        d,
        &["reject", "--db", &bob, &id, "--reason", " "],
        "needs a reason",
    );
    let reason = "<b>depth 1 tells nothing</b>";
    let rejected = run(d, &["reject", "--db", &bob, &id, "--reason", reason]);
    assert!(rejected.status.success(), "{}", text(&rejected.stderr));
    // The member's process ends with the reason (exit 2: it is the member's to fix).
    let member = member.wait_with_output().unwrap();
    let said = text(&member.stderr);
    assert_eq!(member.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!("match {id} waits for an approver")),
        "{said}"
    );
    assert!(
        said.contains(&format!("run {id} was rejected by door_rej_bob: {reason}")),
        "{said}"
    );
    let said = text(&run(d, &["status", "--db", &alice]).stdout);
    assert!(
        said.contains(&format!(
            "by door_rej_alice, rejected by door_rej_bob: {reason}"
        )),
        "{said}"
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT state, match_reported FROM spsa.runs WHERE id = {id}"
        )),
        "stopped|0"
    );
    assert_eq!(leased(&worker, &id), "0");
    refused(d, &["approve", "--db", &bob, &id], "rejected already");
    assert_eq!(
        audit(&bob, &id),
        "door_rej_alice created, door_rej_bob rejected"
    );
}

/// A match created through the SQL API as the role of `url` (as the page will): its id.
fn new_match(url: &str) -> String {
    psql_as(url, &new_match_sql()).unwrap()
}

#[test]
fn members_change_only_their_own_runs_approvers_stop_any_and_workers_nothing() {
    let cluster = Cluster::shared();
    let db = cluster.database("door_roles");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    install(&db, d);
    let alice = role(&db, "door_roles_alice", "spsa_member");
    let carol = role(&db, "door_roles_carol", "spsa_member");
    let bob = role(&db, "door_roles_bob", "spsa_approver");
    let worker = db.worker_role("door_roles_w", "pw");

    let a = new_match(&alice);
    let c = new_match(&carol);
    // An approver's run is approved at creation, and leased.
    let b = new_match(&bob);
    assert_eq!(
        db.psql(&format!("SELECT string_agg(approval, ' ' ORDER BY id) FROM spsa.runs WHERE id IN ({a}, {c}, {b})")),
        "waiting waiting approved"
    );
    assert_eq!(leased(&worker, &b), "4");
    assert_eq!(leased(&worker, &a), "0");

    // A worker creates, approves and stops nothing.
    sql_refused(&worker, &new_match_sql(), "permission denied");
    sql_refused(
        &worker,
        &format!("SELECT spsa.approve({a})"),
        "permission denied",
    );
    sql_refused(
        &worker,
        &format!("SELECT spsa.stop({a})"),
        "permission denied",
    );
    // Members touch no table, whatever they try.
    sql_refused(
        &alice,
        "SELECT count(*) FROM spsa.runs",
        "permission denied",
    );
    sql_refused(
        &alice,
        &format!("UPDATE spsa.runs SET approval = 'approved' WHERE id = {a}"),
        "permission denied",
    );

    let approved = run(d, &["approve", "--db", &bob, &a]);
    assert!(approved.status.success(), "{}", text(&approved.stderr));
    // Carol may not stop, pause or share Alice's run: not through the CLI, not in SQL.
    refused(
        d,
        &["modify", "--db", &carol, "--run", &a, "--stop"],
        &format!("role door_roles_carol may not stop run {a}"),
    );
    refused(
        d,
        &["modify", "--db", &carol, "--run", &a, "--throughput", "5"],
        "may not change the share of",
    );
    for call in ["stop", "pause", "resume"] {
        sql_refused(
            &carol,
            &format!("SELECT spsa.{call}({a})"),
            &format!("may not {call} run {a}"),
        );
    }
    sql_refused(
        &carol,
        &format!("SELECT spsa.set_share({a}, 5, NULL)"),
        "may not change the share of",
    );
    // Nor hand out iterations of it, store bytes for it as a worker, or find it by its name.
    sql_refused(
        &carol,
        &format!("SELECT spsa.hand_out({a}, 0, ARRAY[1]::bigint[], ARRAY[1.0]::float8[], 1, 1)"),
        &format!("may not hand out iterations of run {a}"),
    );
    for (who, call) in [
        (
            &worker,
            format!("SELECT spsa.hand_out({a}, 0, ARRAY[1]::bigint[], ARRAY[1.0]::float8[], 1, 1)"),
        ),
        (
            &worker,
            "SELECT spsa.store_artifact(encode(sha256('x'), 'hex'), 'x')".to_string(),
        ),
        (
            &worker,
            "SELECT count(*) FROM spsa.find_run('a match')".to_string(),
        ),
    ] {
        sql_refused(who, &call, "permission denied");
    }
    let found = |url: &str| {
        psql_as(
            url,
            "SELECT coalesce(string_agg(id::text, ' '), '-') FROM spsa.find_run('a match')",
        )
        .unwrap()
    };
    assert_eq!(found(&alice), a, "alice finds her own run");
    assert_eq!(
        found(&carol),
        c,
        "carol finds hers of that name, not alice's"
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT state, priority FROM spsa.runs WHERE id = {a}"
        )),
        "active|0"
    );
    // Alice pauses, resumes, shares and stops her own.
    assert_eq!(
        psql_as(&alice, &format!("SELECT spsa.pause({a})")).unwrap(),
        "t"
    );
    assert_eq!(leased(&worker, &a), "0");
    assert_eq!(
        psql_as(&alice, &format!("SELECT spsa.resume({a})")).unwrap(),
        "t"
    );
    let shared = run(
        d,
        &[
            "modify",
            "--db",
            &alice,
            "--run",
            &a,
            "--throughput",
            "50",
            "--priority",
            "2",
        ],
    );
    assert!(shared.status.success(), "{}", text(&shared.stderr));
    assert!(text(&shared.stdout).contains("priority 2, throughput 50"));
    let stopped = run(d, &["modify", "--db", &alice, "--run", &a, "--stop"]);
    assert!(stopped.status.success(), "{}", text(&stopped.stderr));
    assert_eq!(leased(&worker, &a), "0");
    // An approver stops anyone's run, waiting or not.
    assert_eq!(
        psql_as(&bob, &format!("SELECT spsa.stop({c})")).unwrap(),
        "t"
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT string_agg(state, ' ' ORDER BY id) FROM spsa.runs WHERE id IN ({a}, {c})"
        )),
        "stopped stopped"
    );
    assert_eq!(
        audit(&carol, &a),
        "door_roles_alice created, door_roles_bob approved, door_roles_alice paused, \
         door_roles_alice resumed, door_roles_alice share changed, door_roles_alice stopped"
    );
    assert_eq!(
        audit(&carol, &c),
        "door_roles_carol created, door_roles_bob stopped"
    );
    assert_eq!(
        psql_as(
            &alice,
            &format!("SELECT detail FROM spsa.audit_trail({a}) WHERE action = 'share changed'")
        )
        .unwrap(),
        "priority 0 → 2, throughput 100 → 50"
    );
}

/// `spsa run --author ROLE` (what `spsa serve` starts for a tune made in the browser): the
/// schema's owner makes the run in a member's name, where it waits like the member's own and
/// its audit trail names the member and who made it for them; a resume of the owner's finds it
/// again. A member may not name another, and the owner may not name a worker or an unknown role.
#[test]
fn the_owner_makes_a_run_in_a_members_name_and_no_one_else_may() {
    let cluster = Cluster::shared();
    let db = cluster.database("door_as");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sim_config(d, "t", 20, 3, 1);
    install(&db, d);
    let alice = role(&db, "door_as_alice", "spsa_member");
    let carol = role(&db, "door_as_carol", "spsa_approver");
    let worker = db.worker_role("door_as_w", "pw");
    let refusals = [
        (
            as_author(&alice, "door_as_carol"),
            "may not act in the name of role door_as_carol",
        ),
        (as_author(&worker, "door_as_alice"), "permission denied"),
        (
            as_author(&db.url, "door_as_w"),
            "door_as_w is in neither spsa_member nor spsa_approver",
        ),
        (
            as_author(&db.url, "door_as_nobody"),
            "door_as_nobody is in neither",
        ),
    ];
    for (argv, why) in &refusals {
        refused(d, argv, why);
    }
    sql_refused(
        &alice,
        &new_match_sql().replace(
            "spsa.new_run('match'",
            "spsa.new_run_as('door_as_carol', 'match'",
        ),
        "may not act in the name of role door_as_carol",
    );
    assert_eq!(db.psql("SELECT count(*) FROM spsa.runs"), "0");

    // The owner's process, in alice's name: her run waits.
    let argv = as_author(&db.url, "door_as_alice");
    let mut owner = spawn(d, &argv);
    let id = wait_for(&db, "SELECT id || ' ' || approval FROM spsa.runs", |s| {
        s.ends_with("waiting")
    });
    let id = id.split(' ').next().unwrap().to_string();
    assert_eq!(
        db.psql(&format!("SELECT author FROM spsa.runs WHERE id = {id}")),
        "door_as_alice"
    );
    let created = psql_as(
        &alice,
        &format!("SELECT actor || ': ' || detail FROM spsa.audit_trail({id})"),
    )
    .unwrap();
    assert_eq!(
        created,
        "door_as_alice: waits for an approver (made for them by spsa_admin, the schema's owner: spsa serve's hosted tune)"
    );
    // A resume of the owner's finds her run again (no second run).
    owner.kill().unwrap();
    owner.wait().unwrap();
    let mut resumed = argv.clone();
    resumed.push("--resume");
    let owner = spawn(d, &resumed);
    psql_as(&carol, &format!("SELECT spsa.approve({id})")).unwrap();
    let w = pg_common::worker(d, &worker, "w1").output().unwrap();
    assert!(w.status.success(), "{}", text(&w.stderr));
    let owner = owner.wait_with_output().unwrap();
    let said = text(&owner.stderr);
    assert!(owner.status.success(), "{said}");
    assert!(said.contains(&format!("run {id} in database")), "{said}");
    assert_eq!(
        db.psql("SELECT count(*) || ' ' || string_agg(state, ',') FROM spsa.runs"),
        "1 finished"
    );
    assert_eq!(
        audit(&alice, &id),
        "door_as_alice created, door_as_carol approved"
    );
    // An approver's run made for them is approved at its creation.
    let theirs = db.psql(&new_match_sql().replace(
        "SELECT id FROM spsa.new_run('match'",
        "SELECT approval || ' ' || id FROM spsa.new_run_as('door_as_carol', 'match'",
    ));
    assert!(theirs.starts_with("approved "), "{theirs}");
}

/// `spsa run t.toml --no-play --db URL --author AUTHOR`.
fn as_author<'a>(url: &'a str, author: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "t.toml",
        "--no-play",
        "--db",
        url,
        "--author",
        author,
    ]
}

fn new_match_sql() -> String {
    "SELECT id FROM spsa.new_run('match', 'a match', '{}'::jsonb, NULL, NULL, NULL, NULL, 10, 60,
                                 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 4)"
        .to_string()
}

/// A database of schema version 3 (`tests/db_v3_fixture`: a run of 40 iterations with 10
/// applied) is migrated by its owner's resume: the run is the owner's, approved, with a
/// `created` row in its audit trail, and it goes on to its end.
#[test]
fn a_database_of_version_3_is_migrated_and_its_run_goes_on() {
    let cluster = Cluster::shared();
    let db = cluster.database("door_v3");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/db_v3_fixture");
    let out = Command::new("/usr/lib/postgresql/15/bin/psql")
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", &db.url, "-f"])
        .arg(fixture.join("run.sql"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["t.toml", "t.var"] {
        std::fs::copy(fixture.join(f), d.join(f)).unwrap();
    }
    db.psql(&format!(
        "UPDATE spsa.runs SET name = '{}'",
        std::fs::canonicalize(d.join("t.toml")).unwrap().display()
    ));
    assert_eq!(db.psql("SELECT version FROM spsa.schema_version"), "3");
    assert_eq!(db.psql("SELECT applied, state FROM spsa.runs"), "10|active");

    let resumed = run(d, &["run", "t.toml", "--db", &db.url, "--resume"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert_eq!(db.psql("SELECT version FROM spsa.schema_version"), "4");
    assert_eq!(
        db.psql("SELECT applied, state, author = current_user, approval FROM spsa.runs"),
        "40|finished|t|approved"
    );
    assert_eq!(
        db.psql("SELECT string_agg(action || ': ' || detail, ', ' ORDER BY id) FROM spsa.audit"),
        "created: before the audit trail"
    );
    assert_eq!(run_common::log_iterations(&d.join("t.log")).len(), 40);
}
