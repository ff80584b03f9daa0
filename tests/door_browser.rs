//! A team's front door on `spsa serve --db` (issue 65): members sign in with their PostgreSQL
//! role and password, every change posts the session's CSRF token, and what a role may do is
//! the database's to say.
//!
//! - Without a browser: a wrong password, a worker's role and an empty password get no
//!   session; a forged cookie is signed out; a form without its token or with another
//!   session's is refused (403) and changes nothing; the API wants the token too; an idle
//!   session expires; sign-out ends a session.
//! - In Chromium: a member fills in a patch test (two commits of a git repository the test
//!   makes, built by the server and by each worker; a bad SPRT is shown next to its field and
//!   creates nothing), it waits, an approver approves it on its page, two URL-only workers
//!   play it to its SPRT decision, and its pairs are a local `spsa match --git` of the same
//!   seed's, pair for pair. Another member cannot stop it (no button; a forged post, the API
//!   and a direct SQL call are refused); its author stops their own.
//! - In Chromium: a member makes a tune from OpenBench lines (a malformed line and min > max
//!   are shown next to the parameters and make nothing); the server hosts its owner process in
//!   her name, started again with `--resume` by the next server when the server and it are
//!   killed; an approver approves it, a URL-only worker plays it and its verification (a match
//!   in her name), and its page shows author, approver, audit trail and the owner's exit.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use fantoccini::Locator;

use crate::db_match::{NODES, SEED, assert_pairs_are, local_pairs_of, settings};
use crate::db_patch::{BUILD, patch_repo};
use crate::match_common::{self, book, sparring};
use crate::pg_common::{self, Cluster, TestDb, psql_as, wait_for};
use crate::web_browser::{Browser, tools_present};
use crate::web_common::Serve;

/// One HTTP request: (status, head, body).
fn request(
    base: &str,
    method: &str,
    path: &str,
    cookie: Option<&str>,
    extra: &[(&str, &str)],
    form: &str,
) -> (u16, String, String) {
    let host = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n",
        form.len()
    );
    if let Some(c) = cookie {
        req.push_str(&format!("Cookie: spsa_session={c}\r\n"));
    }
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(form);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn form(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A form posted with `cookie`: (status, page).
fn post(serve: &Serve, path: &str, cookie: &str, fields: &[(&str, &str)]) -> (u16, String) {
    let (status, _, body) = request(&serve.url, "POST", path, Some(cookie), &[], &form(fields));
    (status, body)
}

/// An API action with `cookie` and, if given, the token in `X-CSRF-Token`: its status.
fn api(serve: &Serve, path: &str, cookie: &str, token: Option<&str>) -> u16 {
    let header: Vec<(&str, &str)> = token.map(|t| ("X-CSRF-Token", t)).into_iter().collect();
    request(&serve.url, "POST", path, Some(cookie), &header, "").0
}

/// Sign in by hand: the session's cookie, or the refusal's status and page.
fn sign_in(serve: &Serve, role: &str, password: &str) -> Result<String, (u16, String)> {
    let (status, head, body) = request(
        &serve.url,
        "POST",
        "/signin",
        None,
        &[],
        &form(&[("role", role), ("password", password)]),
    );
    let cookie = head
        .lines()
        .find(|l| {
            l.to_ascii_lowercase()
                .starts_with("set-cookie: spsa_session=")
        })
        .map(|l| l.to_string());
    match (status, cookie) {
        (303, Some(line)) => {
            assert!(
                line.contains("HttpOnly") && line.contains("SameSite=Strict"),
                "{line}"
            );
            let v = line.split_once('=').unwrap().1;
            Ok(v.split(';').next().unwrap().to_string())
        }
        (status, cookie) => {
            assert!(cookie.is_none(), "a refused sign-in set a cookie: {head}");
            Err((status, body))
        }
    }
}

/// The CSRF token on the runs list as the session sees it (None: signed out).
fn csrf_of(serve: &Serve, cookie: &str) -> Option<String> {
    let (status, _, body) = request(&serve.url, "GET", "/", Some(cookie), &[], "");
    assert_eq!(status, 200, "{body}");
    let at = body.find("name=\"csrf\" value=\"")? + "name=\"csrf\" value=\"".len();
    Some(body[at..at + body[at..].find('"').unwrap()].to_string())
}

/// Install the schema (a short simulated run of the admin's) and make the team's roles:
/// PREFIX_alice and PREFIX_bob members, PREFIX_carol an approver, PREFIX_w a worker.
fn team(db: &TestDb, dir: &Path, prefix: &str) {
    pg_common::sim_config(dir, "s", 20, 3, 2);
    let out = pg_common::spsa(dir, &dir.join("cache"), &["run", "s.toml", "--db", &db.url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    db.psql(&format!(
        "DROP ROLE IF EXISTS {prefix}_alice; CREATE ROLE {prefix}_alice LOGIN PASSWORD 'alice-pw' IN ROLE spsa_member;
         DROP ROLE IF EXISTS {prefix}_bob; CREATE ROLE {prefix}_bob LOGIN PASSWORD 'bob-pw' IN ROLE spsa_member;
         DROP ROLE IF EXISTS {prefix}_carol; CREATE ROLE {prefix}_carol LOGIN PASSWORD 'carol-pw' IN ROLE spsa_member, spsa_approver;"
    ));
    db.worker_role(&format!("{prefix}_w"), "w-pw");
}

fn state(db: &TestDb, run: &str) -> String {
    db.psql(&format!(
        "SELECT state || ' ' || approval FROM spsa.runs WHERE id = {run}"
    ))
}

#[test]
fn sign_in_needs_the_databases_word_and_every_change_its_sessions_token() {
    let cluster = Cluster::shared();
    let db = cluster.database("web_team_door");
    let dir = tempfile::tempdir().unwrap();
    team(&db, dir.path(), "wt1");
    let files = form_files(dir.path());
    let serve = Serve::start(&[
        "--db",
        &db.url,
        "--session-idle",
        "3",
        "--form-files",
        files.to_str().unwrap(),
        "--form-git",
    ]);

    // No session: a wrong password, an unknown role, an empty password, a worker's role.
    for (role, password) in [
        ("wt1_alice", "wrong"),
        ("wt1_nobody", "alice-pw"),
        ("wt1_alice", ""),
    ] {
        let (status, body) = sign_in(&serve, role, password).unwrap_err();
        assert_eq!(status, 403, "{role}: {body}");
        assert!(body.contains("refused this role and password"), "{body}");
        assert!(!body.contains(password) || password.is_empty(), "{body}");
    }
    let (status, body) = sign_in(&serve, "wt1_w", "w-pw").unwrap_err();
    assert_eq!(status, 403);
    assert!(
        body.contains("neither spsa_member nor spsa_approver"),
        "{body}"
    );

    // A member's session, and the run of someone else (the admin's, finished) it may not touch.
    let alice = sign_in(&serve, "wt1_alice", "alice-pw").unwrap();
    let bob = sign_in(&serve, "wt1_bob", "bob-pw").unwrap();
    let alice_token = csrf_of(&serve, &alice).expect("alice is signed in");
    let bob_token = csrf_of(&serve, &bob).expect("bob is signed in");
    assert_ne!(alice_token, bob_token);
    let (_, _, page) = request(&serve.url, "GET", "/", Some(&alice), &[], "");
    assert!(page.contains("signed in as <b>wt1_alice</b>"), "{page}");

    // A name with HTML in it is shown as text.
    db.psql(
        "DROP ROLE IF EXISTS \"wt1_<i>eve</i>\"; CREATE ROLE \"wt1_<i>eve</i>\" LOGIN PASSWORD 'eve-pw' IN ROLE spsa_member",
    );
    let eve = sign_in(&serve, "wt1_<i>eve</i>", "eve-pw").unwrap();
    let (_, _, page) = request(&serve.url, "GET", "/", Some(&eve), &[], "");
    assert!(
        page.contains("signed in as <b>wt1_&lt;i&gt;eve&lt;/i&gt;</b>"),
        "{page}"
    );

    // A forged cookie is no session: the page says "sign in", a post is refused.
    let forged = "0".repeat(64);
    assert_eq!(csrf_of(&serve, &forged), None);
    let (status, body) = post(
        &serve,
        "/runs/db-1/team",
        &forged,
        &[("csrf", &alice_token), ("action", "pause")],
    );
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("not signed in"), "{body}");

    // Without a token, or with another session's, a form is refused before anything is done.
    db.psql("UPDATE spsa.runs SET state = 'active' WHERE id = 1");
    for token in [None, Some(bob_token.as_str())] {
        let mut fields = vec![("action", "pause")];
        if let Some(t) = token {
            fields.push(("csrf", t));
        }
        let (status, body) = post(&serve, "/runs/db-1/team", &alice, &fields);
        assert_eq!(status, 403, "{body}");
        assert!(
            body.contains("token is missing or not this session's"),
            "{body}"
        );
        assert_eq!(api(&serve, "/api/runs/db-1/pause", &alice, token), 403);
        assert_eq!(state(&db, "1"), "active approved");
    }
    // The forms too: a match and a tune that would be made with her token are refused without
    // it, with another session's, and with no session at all; nothing is made.
    let runs = db.psql("SELECT count(*) FROM spsa.runs");
    let new_match = [
        ("engine1", "sparring"),
        ("limit", "nodes"),
        ("limit_value", "1000"),
        ("pairs", "2"),
    ];
    let new_tune = [
        ("name", "refused"),
        ("params", "KnightValue, int, 300, 150, 450, 20, 0.002"),
        ("engine", "sparring"),
        ("limit", "nodes"),
        ("limit_value", "1000"),
        ("iterations", "2"),
        ("pairs", "1"),
    ];
    for (path, form) in [("/new/match", &new_match[..]), ("/new/tune", &new_tune[..])] {
        for (cookie, token) in [
            (alice.as_str(), None),
            (alice.as_str(), Some(bob_token.as_str())),
            (forged.as_str(), Some(alice_token.as_str())),
        ] {
            let mut fields = form.to_vec();
            if let Some(t) = token {
                fields.push(("csrf", t));
            }
            let (status, body) = post(&serve, path, cookie, &fields);
            assert_eq!(status, 403, "{path} {cookie} {token:?}: {body}");
        }
    }
    assert_eq!(db.psql("SELECT count(*) FROM spsa.runs"), runs);
    assert!(!files.join("tunes").join("refused").exists());
    // With her own token, the database still says no: the run is not hers.
    let (status, body) = post(
        &serve,
        "/runs/db-1/team",
        &alice,
        &[("csrf", &alice_token), ("action", "pause")],
    );
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("refused by the database"), "{body}");
    let status = api(&serve, "/api/runs/db-1/stop", &alice, Some(&alice_token));
    assert_eq!(status, 403);
    assert_eq!(state(&db, "1"), "active approved");

    // Sign-out ends a session; idleness ends another.
    let (status, _) = post(&serve, "/signout", &bob, &[("csrf", &bob_token)]);
    assert_eq!(status, 303);
    assert_eq!(csrf_of(&serve, &bob), None);
    std::thread::sleep(Duration::from_millis(3500));
    assert_eq!(csrf_of(&serve, &alice), None, "an idle session expired");
    let (status, _) = post(
        &serve,
        "/runs/db-1/team",
        &alice,
        &[("csrf", &alice_token), ("action", "pause")],
    );
    assert_eq!(status, 403);
    // A member's match from the CLI waits; an approver rejects it through the API with a
    // reason, which the member's process ends with and the run's page shows.
    let alice_url = cluster.url("wt1_alice", "alice-pw", &db.name);
    let cache = dir.path().join("cache");
    let member = pg_common::spsa(
        dir.path(),
        &cache,
        &[
            "match",
            "--engine1",
            sparring(),
            "--depth",
            "1",
            "--pairs",
            "4",
        ],
    )
    .args(["--progress", "0", "--db", &alice_url])
    .spawn()
    .unwrap();
    let run = wait_for(
        &db,
        "SELECT coalesce(max(id), 0) FROM spsa.runs WHERE author = 'wt1_alice'",
        |s| !s.is_empty() && s != "0",
    );
    let carol = sign_in(&serve, "wt1_carol", "carol-pw").unwrap();
    let token = csrf_of(&serve, &carol).unwrap();
    let reject = format!("/api/runs/db-{run}/reject");
    assert_eq!(api(&serve, &reject, &carol, Some(&token)), 400, "no reason");
    let with_reason = format!("{reject}?reason=too%20few%20pairs");
    assert_eq!(api(&serve, &with_reason, &carol, Some(&token)), 204);
    let out = member.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("too few pairs"), "{said}");
    let (_, _, page) = request(
        &serve.url,
        "GET",
        &format!("/runs/db-{run}"),
        Some(&carol),
        &[],
        "",
    );
    assert!(
        page.contains("rejected by <span id=\"approver\">wt1_carol</span>")
            && page.contains("too few pairs"),
        "{page}"
    );
    // A tune's page has the same part: the admin's run, approved at its creation.
    let (_, _, page) = request(&serve.url, "GET", "/runs/db-1", None, &[], "");
    assert!(
        page.contains("<td id=\"author\">spsa_admin</td>") && page.contains("approved at creation"),
        "{page}"
    );

    // The database saw each member's own connection close.
    wait_for(
        &db,
        "SELECT count(*) FROM pg_stat_activity WHERE usename IN ('wt1_alice', 'wt1_bob')",
        |s| s == "0",
    );
}

async fn sign_in_browser(b: &Browser, base: &str, role: &str, password: &str) {
    b.c().goto(&format!("{base}/signin")).await.unwrap();
    b.c()
        .find(Locator::Css("#role"))
        .await
        .unwrap()
        .send_keys(role)
        .await
        .unwrap();
    b.c()
        .find(Locator::Css("#password"))
        .await
        .unwrap()
        .send_keys(password)
        .await
        .unwrap();
    b.c()
        .find(Locator::Css("#go"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    b.wait_text(".team", |t| t.contains(&format!("signed in as {role}")))
        .await;
}

async fn goto(b: &Browser, serve: &Serve, path: &str) {
    b.c().goto(&format!("{}{path}", serve.url)).await.unwrap();
}

async fn sign_out_browser(b: &Browser) {
    b.c()
        .find(Locator::Css("#signout"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    b.wait_text(".team", |t| t.contains("sign in")).await;
}

async fn fill(b: &Browser, css: &str, text: &str) {
    let e = b.c().find(Locator::Css(css)).await.unwrap();
    e.clear().await.unwrap();
    e.send_keys(text).await.unwrap();
}

/// The forms' folder: the sparring engine and a book.
fn form_files(d: &Path) -> std::path::PathBuf {
    let files = d.join("files");
    std::fs::create_dir(&files).unwrap();
    std::os::unix::fs::symlink(sparring(), files.join("sparring")).unwrap();
    std::fs::copy(book(), files.join("balanced_6ply.epd")).unwrap();
    files
}

async fn click(b: &Browser, css: &str) {
    b.c()
        .find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// A patch test of the repository `repo` of the forms' folder: side A the patch, side B the
/// base, as `spsa match --git` takes them.
async fn fill_patch(b: &Browser, base: &str, (patch, old): (&str, &str), sprt: &str) {
    b.c().goto(&format!("{base}/new/match")).await.unwrap();
    fill(b, "#git", "repo").await;
    fill(b, "#source1", patch).await;
    fill(b, "#source2", old).await;
    fill(b, "#build", BUILD).await;
    fill(b, "#binary", "eng").await;
    fill(b, "#book", "balanced_6ply.epd").await;
    fill(b, "#limit_value", NODES).await;
    fill(b, "#pairs", "400").await;
    fill(b, "#sprt", sprt).await;
    fill(b, "#seed", SEED).await;
    click(b, "#create").await;
}

/// The match form filled in as `db_match`'s `common` plays it (sparring's defaults against
/// weaker minor pieces, its nodes and seed, SPRT 0,60, at most `pairs` pairs).
async fn fill_match(b: &Browser, base: &str, sprt: &str, pairs: &str) {
    b.c().goto(&format!("{base}/new/match")).await.unwrap();
    fill(b, "#engine1", "sparring").await;
    fill(b, "#options2", "KnightValue=150\nBishopValue=150").await;
    fill(b, "#book", "balanced_6ply.epd").await;
    fill(b, "#limit_value", NODES).await;
    fill(b, "#pairs", pairs).await;
    fill(b, "#sprt", sprt).await;
    fill(b, "#seed", SEED).await;
    click(b, "#create").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_match_from_the_form_is_approved_in_the_browser_and_plays_as_a_local_match() {
    if !tools_present() {
        return;
    }
    let cluster = Cluster::shared();
    let db = cluster.database("web_team_match");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    team(&db, d, "wt2");
    let files = form_files(d);
    let (repo, base, patch) = patch_repo(&files);
    let serve = Serve::start(&[
        "--db",
        &db.url,
        "--form-files",
        files.to_str().unwrap(),
        "--form-git",
    ]);
    let runs = || db.psql("SELECT count(*) FROM spsa.runs");
    let before = runs();

    // The local patch test of the same seed, played meanwhile.
    let pgn = d.join("local.pgn");
    let mut local_args: Vec<String> = [
        "match",
        "--git",
        repo.to_str().unwrap(),
        "--source1",
        &patch,
        "--source2",
        &base,
        "--build",
        BUILD,
        "--binary",
        "eng",
        "--pgn",
        pgn.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    local_args.extend(settings(book().to_str().unwrap()));
    let local = match_common::spsa()
        .args(&local_args)
        .current_dir(d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();

    let b = Browser::start().await;
    sign_in_browser(&b, &serve.url, "wt2_alice", "alice-pw").await;
    // A bad SPRT: the CLI's message next to its field, nothing created; a revision the
    // repository lacks, the same.
    fill_patch(&b, &serve.url, (&patch, &base), "zero").await;
    let said = b.wait_text("#error-sprt", |t| !t.is_empty()).await;
    assert!(said.contains("--sprt"), "{said}");
    assert_eq!(runs(), before);
    fill_patch(&b, &serve.url, ("no-such-branch", &base), "0,60").await;
    let said = b.wait_text("#error-source1", |t| !t.is_empty()).await;
    assert!(said.contains("no-such-branch"), "{said}");
    assert_eq!(runs(), before);
    fill_patch(&b, &serve.url, (&patch, &base), "0,60").await;
    let approval = b.wait_text("#approval", |t| !t.is_empty()).await;
    assert_eq!(approval, "waiting");
    assert_eq!(b.text("#author").await, "wt2_alice");
    let run = db.psql("SELECT max(id) FROM spsa.runs");
    assert_eq!(state(&db, &run), "active waiting");
    // The member cannot approve her own.
    assert!(b.c().find(Locator::Css("#approve")).await.is_err());
    sign_out_browser(&b).await;

    sign_in_browser(&b, &serve.url, "wt2_carol", "carol-pw").await;
    goto(&b, &serve, &format!("/runs/db-{run}")).await;
    b.c()
        .find(Locator::Css("#approve"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    b.wait_text("#approval", |t| t == "approved by wt2_carol")
        .await;
    sign_out_browser(&b).await;

    // Two workers that know only the URL play it to its decision.
    let url = cluster.url("wt2_w", "w-pw", &db.name);
    let workers: Vec<_> = ["w1", "w2"]
        .iter()
        .map(|n| pg_common::worker(d, &url, n).spawn().unwrap())
        .collect();
    wait_for(
        &db,
        &format!("SELECT state FROM spsa.runs WHERE id = {run}"),
        |s| s == "finished",
    );
    for w in workers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let local = local.wait_with_output().unwrap();
    let local_out = String::from_utf8_lossy(&local.stdout).into_owned();
    assert!(local.status.success(), "{local_out}");
    let c = match_common::counts(&local_out);
    // Side A is the patch, named by its commit as `spsa match --git` names a side.
    let side_a = format!("eng@{}", &patch[..8]);
    let pairs = local_pairs_of(&std::fs::read_to_string(&pgn).unwrap(), &side_a);
    assert!(c.pairs >= 20, "decided too soon: {local_out}");
    assert_pairs_are(&db, &run, &pairs);
    // The page shows it: its author, approver, result and audit trail.
    goto(&b, &serve, &format!("/runs/db-{run}")).await;
    assert_eq!(b.text("#state").await, "finished");
    assert_eq!(b.text("#approver").await, "wt2_carol");
    let p = c.penta;
    assert_eq!(
        b.text("#pentanomial").await,
        format!("[{}, {}, {}, {}, {}]", p[0], p[1], p[2], p[3], p[4])
    );
    let audit = b.text("#audit").await;
    assert!(
        audit.contains("wt2_alice") && audit.contains("wt2_carol"),
        "{audit}"
    );
    b.screenshot("team-match.png").await;

    // Another member cannot stop a member's match; its author can.
    sign_in_browser(&b, &serve.url, "wt2_alice", "alice-pw").await;
    fill_match(&b, &serve.url, "", "5000").await;
    b.wait_text("#approval", |t| t == "waiting").await;
    let second = db.psql("SELECT max(id) FROM spsa.runs");
    sign_out_browser(&b).await;
    sign_in_browser(&b, &serve.url, "wt2_bob", "bob-pw").await;
    goto(&b, &serve, &format!("/runs/db-{second}")).await;
    assert!(
        b.c().find(Locator::Css("#stop")).await.is_err(),
        "no stop button for bob"
    );
    // A stop posted anyway, with bob's own token, from the page.
    b.js(&format!(
        "const f = document.createElement('form'); f.method = 'post'; f.action = '/runs/db-{second}/team';
         for (const [k, v] of [['csrf', document.querySelector('input[name=csrf]').value], ['action', 'stop']]) {{
           const i = document.createElement('input'); i.name = k; i.value = v; f.appendChild(i); }}
         document.body.appendChild(f); f.submit(); return null;"
    ))
    .await;
    let said = b.wait_text("#error", |t| !t.is_empty()).await;
    assert!(said.contains("refused by the database"), "{said}");
    assert_eq!(state(&db, &second), "active waiting");
    // The API, with a session of bob's and its token.
    let bob = sign_in(&serve, "wt2_bob", "bob-pw").unwrap();
    let token = csrf_of(&serve, &bob).unwrap();
    assert_eq!(
        api(
            &serve,
            &format!("/api/runs/db-{second}/stop"),
            &bob,
            Some(&token)
        ),
        403
    );
    assert_eq!(state(&db, &second), "active waiting");
    let bob_url = cluster.url("wt2_bob", "bob-pw", &db.name);
    let refused = psql_as(&bob_url, &format!("SELECT spsa.stop({second})")).unwrap_err();
    assert!(refused.contains("ERROR"), "{refused}");
    assert_eq!(state(&db, &second), "active waiting");
    sign_out_browser(&b).await;
    sign_in_browser(&b, &serve.url, "wt2_alice", "alice-pw").await;
    goto(&b, &serve, &format!("/runs/db-{second}")).await;
    b.c()
        .find(Locator::Css("#stop"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    b.wait_text("#state", |t| t == "stopped").await;
    let audit = b.text("#audit").await;
    assert!(audit.contains("stopped"), "{audit}");
    b.c().goto(&format!("{}/", serve.url)).await.unwrap();
    b.screenshot("team-list.png").await;
    b.close().await;
}

/// The tune form filled in with `params` (OpenBench lines), the sparring engine at 1,000 nodes,
/// 4 iterations of 1 pair, a verification of 2 pairs, and posted.
async fn fill_tune(b: &Browser, base: &str, name: &str, params: &str) {
    b.c().goto(&format!("{base}/new/tune")).await.unwrap();
    fill(b, "#name", name).await;
    fill(b, "#params", params).await;
    fill(b, "#engine", "sparring").await;
    fill(b, "#book", "balanced_6ply.epd").await;
    fill(b, "#limit_value", "1000").await;
    fill(b, "#iterations", "4").await;
    fill(b, "#pairs", "1").await;
    fill(b, "#verify_pairs", "2").await;
    click(b, "#create").await;
}

/// A tune made in the browser from OpenBench lines: the server writes its folder, checks it
/// with the CLI's loaders (a malformed line and min > max are shown next to the parameters,
/// and nothing is made), and runs its owner process in the member's name (`spsa run --db
/// --author`); it waits; the server and the owner are killed, and the next server starts the
/// owner again (`--resume`); an approver approves it in the browser, a URL-only worker plays it
/// to its end and its `[verify]` step (a match the owner makes in the member's name), the
/// server reaps its owner process, and the run's page shows the author, the approver, the
/// audit trail and the owner's log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tune_from_openbench_lines_is_hosted_in_its_members_name_and_played_once_approved() {
    if !tools_present() {
        return;
    }
    let cluster = Cluster::shared();
    let db = cluster.database("web_team_tune");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    team(&db, d, "wt3");
    let files = form_files(d);
    let args = ["--db", &db.url, "--form-files", files.to_str().unwrap()];
    let serve = Serve::start(&args);
    let runs = || db.psql("SELECT count(*) FROM spsa.runs");
    let before = runs();
    let tunes = files.join("tunes");
    let hosted = || -> Vec<String> {
        std::fs::read_dir(&tunes)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };

    let b = Browser::start().await;
    sign_in_browser(&b, &serve.url, "wt3_alice", "alice-pw").await;
    b.c()
        .find(Locator::Css("#new-tune"))
        .await
        .expect("a link to the tune form beside new match");
    // A malformed line, then min > max: the variables loader's message next to the parameters,
    // nothing made, no folder left.
    for (params, says) in [
        (
            "KnightValue, int, 300, 200",
            "expected 7 comma-separated fields",
        ),
        (
            "KnightValue, int, 300, 400, 200, 20, 0.002",
            "tune.var:1: `KnightValue`: min (400) is greater than max (200)",
        ),
    ] {
        fill_tune(&b, &serve.url, "minors", params).await;
        let said = b.wait_text("#error-params", |t| !t.is_empty()).await;
        assert!(said.contains(says), "{said}");
        assert!(!said.contains("/tunes/"), "the server's folders: {said}");
        assert_eq!(runs(), before);
        assert_eq!(hosted(), Vec::<String>::new());
    }
    b.screenshot("team-tune-form.png").await;
    fill_tune(
        &b,
        &serve.url,
        "minors",
        "KnightValue, int, 300, 150, 450, 20, 0.002\nBishopValue, int, 300, 150, 450, 20, 0.002",
    )
    .await;
    let approval = b.wait_text("#approval", |t| !t.is_empty()).await;
    assert_eq!(approval, "waiting");
    assert_eq!(b.text("#author").await, "wt3_alice");
    assert!(b.text("#owner-process").await.contains("running"));
    let run = db.psql("SELECT max(id) FROM spsa.runs");
    assert_eq!(state(&db, &run), "active waiting");
    assert_eq!(hosted(), ["minors"]);
    // Waiting: no worker sees it.
    let worker = cluster.url("wt3_w", "w-pw", &db.name);
    assert_eq!(
        psql_as(&worker, "SELECT count(*) FROM spsa.active_runs()").unwrap(),
        "0"
    );

    // The server is killed, and its owner process with it: the next server starts the owner
    // again (--resume), which finds the same run in alice's name.
    drop(serve);
    let owner = std::fs::read_to_string(tunes.join("minors/owner.pid")).unwrap();
    let owner: u32 = owner.trim().parse().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", &owner.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let t = std::time::Instant::now();
    while !spsa::platform::process_ended(owner) {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the owner {owner} lives on"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let serve = Serve::start(&args);

    sign_in_browser(&b, &serve.url, "wt3_carol", "carol-pw").await;
    goto(&b, &serve, &format!("/runs/db-{run}")).await;
    b.c()
        .find(Locator::Css("#approve"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    b.wait_text("#approval", |t| t == "approved by wt3_carol")
        .await;

    // A worker that knows only the URL plays it to its end; the owner process ends with it.
    let out = pg_common::worker(d, &worker, "w1").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for(
        &db,
        &format!("SELECT state || ' ' || applied FROM spsa.runs WHERE id = {run}"),
        |s| s == "finished 4",
    );
    // Its verification, a match the owner makes in alice's name (approved: a step of her
    // approved run), played by a worker too.
    let step = wait_for(
        &db,
        "SELECT coalesce(max(id), 0) FROM spsa.runs WHERE kind = 'match'",
        |s| s != "0",
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT author || ' ' || approval FROM spsa.runs WHERE id = {step}"
        )),
        "wt3_alice approved"
    );
    let out = pg_common::worker(d, &worker, "w2").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = std::time::Instant::now();
    loop {
        goto(&b, &serve, &format!("/runs/db-{run}")).await;
        let owner = b.text("#owner-process").await;
        if owner.contains("exited") {
            assert!(owner.contains("exit status: 0"), "{owner}");
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "{owner}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(b.text("#state").await, "finished");
    assert_eq!(b.text("#author").await, "wt3_alice");
    assert_eq!(b.text("#approver").await, "wt3_carol");
    let audit = b.text("#audit").await;
    for said in [
        "wt3_alice",
        "created",
        "made for them by spsa_admin",
        "wt3_carol",
        "approved",
    ] {
        assert!(audit.contains(said), "{said}: {audit}");
    }
    let log = b.text("#owner-log").await;
    assert!(log.contains("exited: exit status: 0"), "{log}");
    let log = std::fs::read_to_string(tunes.join("minors/owner.log")).unwrap();
    assert!(
        log.contains(&format!(
            "run {run}: owner process started again (--resume)"
        )),
        "{log}"
    );
    // One tune (not two: the resumed owner found it) and its verification's match.
    assert_eq!(runs(), (before.parse::<u32>().unwrap() + 2).to_string());
    assert_eq!(
        db.psql(&format!("SELECT state FROM spsa.runs WHERE id = {step}")),
        "finished"
    );
    assert_eq!(
        crate::run_common::log_iterations(&tunes.join("minors/tune.log")).len(),
        4,
        "the owner's θ log in the run's folder"
    );
    b.screenshot("team-tune.png").await;
    b.close().await;
}
