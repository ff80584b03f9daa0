//! `spsa serve` in a real browser: headless Chromium driven through chromedriver (WebDriver, by
//! fantoccini). A local run's page shows its current values, its charts have one point per log
//! row (or the stated downsample), a value changes on the open page when rows are appended, a
//! variable named `<script>alert(1)</script>` runs no script; a shared run's page changes when
//! a worker reports, and admin actions need the token. Screenshots go to
//! `target/web-screenshots/`.
//!
//! Without Chromium the tests are skipped, unless CI is set: then they fail.

use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use spsa::report::status::significant;
use spsa::tuner::checkpoint::{self, Counts, RunState, VERSION};
use spsa::vars;

use crate::pg_common;
use crate::web_common;
use pg_common::Cluster;
use web_common::{Serve, http};

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Chromium and chromedriver, or `None` (skip) when they are missing outside CI.
pub(crate) fn tools_present() -> bool {
    let present = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "{CHROMIUM} or {CHROMEDRIVER} missing: .ci/run installs Debian's chromium and chromium-driver"
        );
        eprintln!("skipped: no {CHROMIUM} / {CHROMEDRIVER}");
    }
    present
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// chromedriver and one headless Chromium session. The driver is killed on drop.
pub(crate) struct Browser {
    driver: Child,
    client: Option<Client>,
    _profile: tempfile::TempDir,
}

impl Browser {
    pub(crate) async fn start() -> Browser {
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let t = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "chromedriver did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap();
        let caps = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1400,1600",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
        });
        let serde_json::Value::Object(caps) = caps else {
            unreachable!()
        };
        // Plain HTTP to chromedriver on loopback: no TLS client needed.
        let http = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(http)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a Chromium session through chromedriver");
        Browser {
            driver,
            client: Some(client),
            _profile: profile,
        }
    }

    pub(crate) fn c(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    pub(crate) async fn text(&self, css: &str) -> String {
        self.c()
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .text()
            .await
            .unwrap()
    }

    /// Wait (30 s at most) until the element's text satisfies `want`; the page is not reloaded.
    pub(crate) async fn wait_text(&self, css: &str, want: impl Fn(&str) -> bool) -> String {
        let t = Instant::now();
        loop {
            let got = match self.c().find(Locator::Css(css)).await {
                Ok(e) => e.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            if want(&got) {
                return got;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "{css} stayed at {got:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    pub(crate) async fn js(&self, script: &str) -> serde_json::Value {
        self.c().execute(script, vec![]).await.unwrap()
    }

    pub(crate) async fn screenshot(&self, name: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/web-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, self.c().screenshot().await.unwrap()).unwrap();
        path
    }

    /// No alert is open: no injected script ran `alert`.
    pub(crate) async fn assert_no_alert(&self) {
        if let Ok(text) = self.c().get_alert_text().await {
            panic!("a script ran: alert({text})");
        }
    }

    pub(crate) async fn close(mut self) {
        if let Some(c) = self.client.take() {
            let _ = c.close().await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

const SCRIPT_NAME: &str = "<script>alert(1)</script>";
const IMG_NAME: &str = "<img src=x onerror=alert(2)>";
const ITERATIONS: u64 = 200;

fn theta_at(k: u64) -> [f64; 3] {
    [
        100.0 + 0.5 * k as f64,
        -(k as f64) * 0.25,
        7.0 + (k % 3) as f64,
    ]
}

fn log_rows(from: u64, to: u64) -> String {
    (from..=to)
        .map(|k| {
            let t = theta_at(k);
            format!("{k},{},{},{}\n", t[0], t[1], t[2])
        })
        .collect()
}

/// A local run of three variables (two with hostile names) stopped after `rows` updates: its
/// θ log and checkpoint in `dir`.
fn write_local_run(dir: &Path, name: &str, rows: u64) -> PathBuf {
    let vars = vars::parse(
        &format!("Knight Value,100,0,1000,20,0.002,0\n{SCRIPT_NAME},0,-500,500,10,0.002,0\n{IMG_NAME},7,0,20,2,0.002,0\n"),
        Path::new("inline"),
    )
    .unwrap();
    let log = dir.join(format!("{name}.log"));
    std::fs::write(
        &log,
        format!(
            "iteration,Knight Value,{SCRIPT_NAME},{IMG_NAME}\n{}",
            log_rows(1, rows)
        ),
    )
    .unwrap();
    let state = RunState {
        version: VERSION,
        seed: "1".into(),
        applied: rows,
        curve_iterations: 0,
        finished: false,
        theta: theta_at(rows).to_vec(),
        start: vec![100.0, 0.0, 7.0],
        next_fresh: rows + 1,
        missing: Vec::new(),
        log_bytes: 0,
        iterations: ITERATIONS.max(rows),
        a: 20.0,
        alpha: 0.602,
        gamma: 0.101,
        pairs_per_iteration: 1,
        holdout: None,
        holdout_openings: None,
        held: Vec::new(),
        outputs: Default::default(),
        counts: Counts {
            pairs: rows,
            wins: rows / 2,
            draws: rows,
            losses: rows / 2,
            pentanomial: [rows / 4, 0, rows / 2, 0, rows - rows / 4 - rows / 2],
            faults: Default::default(),
        },
        joined: Vec::new(),
        sources: Vec::new(),
    };
    checkpoint::write(&dir.join(format!("{name}.checkpoint.var")), &state, &vars).unwrap();
    log
}

/// The number of points of every θ chart on the page: its longest line (the rules and their
/// dashes have two points each).
async fn chart_points(b: &Browser) -> Vec<u64> {
    let v = b
        .js("return Array.from(document.querySelectorAll('.var-chart')).map(c => Math.max(...Array.from(c.querySelectorAll('polyline')).map(p => p.getAttribute('points').trim().split(' ').length)));")
        .await;
    serde_json::from_value(v).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_run_page_shows_values_charts_and_live_rows_and_runs_no_injected_script() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let small = write_local_run(dir.path(), "small", 30);
    let big = write_local_run(dir.path(), "big", 1000);
    // A match whose side A has a hostile name, as its record says.
    let record = dir.path().join("m.match.json");
    spsa::matchrun::MatchRecord::start(
        "spsa match",
        [SCRIPT_NAME.into(), "B".into()],
        ["defaults".into(), IMG_NAME.into()],
        "depth=1".into(),
        String::new(),
        10,
        None,
    )
    .write(&record)
    .unwrap();
    let serve = Serve::start(&[
        small.to_str().unwrap(),
        big.to_str().unwrap(),
        record.to_str().unwrap(),
    ]);
    let b = Browser::start().await;

    // The runs list: both runs with their progress.
    b.c().goto(&format!("{}/", serve.url)).await.unwrap();
    let row = b.text("tr[data-run='local-1'] td.progress").await;
    assert!(row.starts_with("30/200"), "{row}");
    let row = b.text("tr[data-run='local-2'] td.progress").await;
    assert!(row.starts_with("1000/1000"), "{row}");
    // The match under the runs, its names as text.
    assert_eq!(
        b.text("tr[data-match='match-1'] td.engines").await,
        format!("{SCRIPT_NAME} vs B ({IMG_NAME})")
    );
    assert_eq!(b.text("tr[data-match='match-1'] td.pairs").await, "0/10");
    assert_eq!(b.text("tr[data-match='match-1'] td.state").await, "running");
    b.assert_no_alert().await;
    assert_eq!(b.js("return document.images.length").await, json!(0));
    let shot = b.screenshot("runs-list.png").await;
    eprintln!("screenshot {}", shot.display());

    // The run page: current values, names shown as text, no script run.
    b.c()
        .goto(&format!("{}/runs/local-1", serve.url))
        .await
        .unwrap();
    b.assert_no_alert().await;
    let t = theta_at(30);
    for (i, want) in t.iter().enumerate() {
        let got = b
            .text(&format!("#values tr[data-var='{i}'] td.current"))
            .await;
        assert_eq!(got, significant(*want, 5), "variable {i}");
    }
    assert_eq!(
        b.text("#values tr[data-var='1'] td.name").await,
        SCRIPT_NAME
    );
    assert_eq!(b.text("#values tr[data-var='2'] td.name").await, IMG_NAME);
    // Only the page's own script exists; no <img> was made from a name.
    assert_eq!(b.js("return document.scripts.length").await, json!(1));
    assert_eq!(b.js("return document.images.length").await, json!(0));
    let uci = b.js("return document.getElementById('uci').value").await;
    assert_eq!(
        uci.as_str().unwrap(),
        format!(
            "setoption name Knight Value value 115\nsetoption name {SCRIPT_NAME} value -8\nsetoption name {IMG_NAME} value 7\n"
        )
    );
    // One chart per variable, one point per log row.
    assert_eq!(chart_points(&b).await, vec![30, 30, 30]);
    let shot = b.screenshot("run-page.png").await;
    eprintln!("screenshot {}", shot.display());

    // Live: rows appended to the log show up on the open page, without a reload.
    b.js("window.__notReloaded = 42; return 0").await;
    // Elements outside the live part, and the live part's children: the update replaces it.
    const OUTSIDE: &str = "return [document.getElementsByTagName('*').length - document.querySelectorAll('#live *').length, document.getElementById('live').children.length]";
    let nodes_before = b.js(OUTSIDE).await;
    assert_eq!(nodes_before[1], json!(1));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&small)
        .unwrap();
    f.write_all(log_rows(31, 40).as_bytes()).unwrap();
    drop(f);
    let progress = b.wait_text("#progress", |s| s.starts_with("40/200")).await;
    assert!(progress.starts_with("40/200"), "{progress}");
    assert_eq!(
        b.text("#values tr[data-var='0'] td.current").await,
        significant(theta_at(40)[0], 5)
    );
    assert_eq!(chart_points(&b).await, vec![40, 40, 40]);
    assert_eq!(b.js("return window.__notReloaded").await, json!(42));
    // The update replaced the page's part: nothing added around it, one part in it (the
    // charts' own elements follow their data: a tick more or less).
    assert_eq!(b.js(OUTSIDE).await, nodes_before);
    b.assert_no_alert().await;

    // A long log is drawn with the stated downsample.
    b.c()
        .goto(&format!("{}/runs/local-2", serve.url))
        .await
        .unwrap();
    // 1,000 rows read at 400, drawn with one point per pixel column of the plot (about 256).
    let points = chart_points(&b).await;
    assert_eq!(points.len(), 3);
    assert!(
        points.iter().all(|&n| (200..300).contains(&n)),
        "{points:?}"
    );
    let note = b.text("#points-note").await;
    assert!(note.contains("1000 rows") && note.contains("400"), "{note}");

    // The API has the same data, names as they are.
    let (status, body) = http(&serve.url, "GET", "/api/runs/local-1", &[], "");
    assert_eq!(status, 200, "{body}");
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["summary"]["applied"], json!(40));
    assert_eq!(d["vars"][1]["name"], json!(SCRIPT_NAME));
    assert_eq!(d["series"]["iterations"].as_array().unwrap().len(), 40);
    // Read-only: no admin endpoint answers without a token.
    let (status, _) = http(&serve.url, "POST", "/api/runs/local-1/stop", &[], "");
    assert_eq!(status, 403);
    b.close().await;
}

/// A simulated shared run's config (two variables, one named to inject a script).
fn sim_config(dir: &Path, iterations: u64) {
    std::fs::write(
        dir.join("t.var"),
        format!("x,100,-1000,1000,100,0.002,1\n{SCRIPT_NAME},-50,-1000,1000,100,0.002,4\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("t.toml"),
        format!(
            "simulate = true\nvariables = \"t.var\"\nlog = \"t.log\"\niterations = {iterations}\nA = {}\ngamma = 0.101\nalpha = 0.602\nconcurrency = 1\nseed = 5\n",
            iterations / 10
        ),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_run_page_follows_a_worker_and_admin_actions_need_the_token() {
    if !tools_present() {
        return;
    }
    let cluster = Cluster::shared();
    let db = cluster.database("web_page");
    let dir = tempfile::tempdir().unwrap();
    sim_config(dir.path(), 40);
    let mut owner = Command::new(SPSA)
        .args(["run", "t.toml", "--db", &db.url, "--no-play"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let run = loop {
        // The owner installs the schema first: until then there is nothing to ask about.
        if db.psql(
            "SELECT to_regclass('spsa.work') IS NOT NULL AND to_regclass('spsa.runs') IS NOT NULL",
        ) != "t"
        {
            assert!(t.elapsed() < Duration::from_secs(60), "no schema installed");
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        let id = db.psql("SELECT coalesce(max(id), 0) FROM spsa.runs WHERE state = 'active'");
        if db
            .psql(&format!(
                "SELECT count(*) FROM spsa.work WHERE run_id = {id}"
            ))
            .trim()
            == "40"
        {
            break id;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no run created");
        std::thread::sleep(Duration::from_millis(100));
    };
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret-admin-token\n").unwrap();
    let admin = Serve::start(&[
        "--db",
        &db.url,
        "--admin-token-file",
        token.to_str().unwrap(),
    ]);
    let plain = Serve::start(&["--db", &db.url]);
    let page = format!("/runs/db-{run}");

    // Without a token file: no buttons, and every action is forbidden.
    let (status, body) = http(&plain.url, "GET", &page, &[], "");
    assert_eq!(status, 200);
    assert!(!body.contains("class=\"admin\""), "{body}");
    for auth in [None, Some("Bearer s3cret-admin-token")] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", *a)).collect();
        let (status, _) = http(
            &plain.url,
            "POST",
            &format!("/api/runs/db-{run}/pause"),
            &headers,
            "",
        );
        assert_eq!(status, 403);
    }
    // With one: a wrong token is forbidden, the right one pauses, resumes, sets the priority.
    let (status, body) = http(&admin.url, "GET", &page, &[], "");
    assert!(status == 200 && body.contains("class=\"admin\""), "{body}");
    assert!(!body.contains(&cluster.password), "no password in the page");
    let api = |action: &str, token: &str| {
        http(
            &admin.url,
            "POST",
            &format!("/api/runs/db-{run}/{action}"),
            &[("Authorization", &format!("Bearer {token}"))],
            "",
        )
        .0
    };
    assert_eq!(api("pause", "wrong-token-xyz"), 403);
    assert_eq!(api("pause", "s3cret-admin-token"), 204);
    assert_eq!(
        db.psql(&format!("SELECT state FROM spsa.runs WHERE id = {run}")),
        "paused"
    );
    let (status, _) = http(
        &admin.url,
        "POST",
        &format!("/runs/db-{run}/admin"),
        &[("Content-Type", "application/x-www-form-urlencoded")],
        "token=nope&action=resume",
    );
    assert_eq!(status, 403);
    assert_eq!(api("resume", "s3cret-admin-token"), 204);
    assert_eq!(api("priority?value=5", "s3cret-admin-token"), 204);
    assert_eq!(
        db.psql(&format!(
            "SELECT state, priority FROM spsa.runs WHERE id = {run}"
        )),
        "active|5"
    );

    // The page in the browser: values at the start, then a worker's results arrive live.
    let b = Browser::start().await;
    b.c().goto(&format!("{}{page}", plain.url)).await.unwrap();
    assert!(b.text("#progress").await.starts_with("0/40"));
    assert_eq!(b.text("#priority").await, "5");
    assert_eq!(
        b.text("#values tr[data-var='1'] td.name").await,
        SCRIPT_NAME
    );
    assert_eq!(b.text("#values tr[data-var='0'] td.current").await, "100");
    assert_eq!(b.js("return document.scripts.length").await, json!(1));
    let source = b.c().source().await.unwrap();
    assert!(
        !source.contains(&cluster.password),
        "no password in the page"
    );
    b.js("window.__notReloaded = 7; return 0").await;
    let worker_url = db.worker_role("web_w", "pw-web-worker");
    let worker = Command::new(SPSA)
        .args([
            "worker",
            "--db",
            &worker_url,
            "--until-idle",
            "--name",
            "page-worker",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        worker.status.success(),
        "{}",
        String::from_utf8_lossy(&worker.stderr)
    );
    b.wait_text("#progress", |s| s.starts_with("40/40")).await;
    assert_eq!(b.text("#state").await, "finished");
    let theta: f64 = db
        .psql(&format!("SELECT theta[1] FROM spsa.runs WHERE id = {run}"))
        .parse()
        .unwrap();
    assert_eq!(
        b.text("#values tr[data-var='0'] td.current").await,
        significant(theta, 5)
    );
    let workers = b.text("#workers").await;
    assert!(workers.contains("web_w/page-worker"), "{workers}");
    assert_eq!(chart_points(&b).await, vec![40, 40]);
    assert_eq!(b.js("return window.__notReloaded").await, json!(7));
    b.assert_no_alert().await;
    let source = b.c().source().await.unwrap();
    assert!(!source.contains("pw-web-worker") && !source.contains(&cluster.password));
    b.screenshot("shared-run-page.png").await;
    b.c().goto(&format!("{}/", plain.url)).await.unwrap();
    b.screenshot("shared-runs-list.png").await;
    b.close().await;
    owner.kill().unwrap();
    owner.wait().unwrap();
}

#[test]
fn serve_refuses_bad_input_with_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let log = write_local_run(dir.path(), "ok", 5);
    let log = log.to_str().unwrap();
    let missing = dir.path().join("missing.log");
    let token = dir.path().join("no-token");
    let bad_record = dir.path().join("bad.match.json");
    std::fs::write(
        &bad_record,
        "{\"kind\": \"spsa match\", \"version\": 1, \"pairs",
    )
    .unwrap();
    let cases: [(Vec<&str>, &str); 5] = [
        (vec![missing.to_str().unwrap()], "missing.log"),
        (vec![log, "--listen", "localhost"], "--listen localhost"),
        (
            vec![log, "--admin-token-file", token.to_str().unwrap()],
            "--admin-token-file",
        ),
        (vec![], "--db URL"),
        (
            vec![bad_record.to_str().unwrap()],
            "bad.match.json: not a match record",
        ),
    ];
    for (args, want) in cases {
        let out = Command::new(SPSA)
            .arg("serve")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "nothing served: {args:?}");
    }
}

const SPARRING: &str = env!("CARGO_BIN_EXE_sparring");

/// `spsa match` on the sparring engine at depth 1: defaults (A) against minor pieces worth 60
/// (B), with `extra` flags.
fn sparring_match(dir: &Path, extra: &[&str]) -> Command {
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("openings/balanced_6ply.epd");
    let mut c = Command::new(SPSA);
    c.args([
        "match",
        "--engine1",
        SPARRING,
        "--option2",
        "KnightValue=60",
    ])
    .args([
        "--option2",
        "BishopValue=60",
        "--book",
        book.to_str().unwrap(),
    ])
    .args(["--depth", "1", "--seed", "5", "--progress", "0"])
    .args(extra)
    .current_dir(dir);
    c
}

/// The matches `spsa serve` lists.
fn api_matches(serve: &Serve) -> Vec<serde_json::Value> {
    let (status, body) = http(&serve.url, "GET", "/api/matches", &[], "");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// Wait (60 s at most) until `f` holds.
fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn matches_keep_a_live_record_that_serve_lists_with_their_sprt_state() {
    let dir = tempfile::tempdir().unwrap();
    // A long match, followed while it plays, then killed.
    let live = dir.path().join("live.json");
    let mut playing = sparring_match(dir.path(), &["--pairs", "5000", "--record", "live.json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pairs_of =
        |path: &Path| spsa::matchrun::MatchRecord::read(path).map_or(0, |r| r.pairs_played);
    wait_until("the live match's record counts pairs", || {
        pairs_of(&live) >= 2
    });

    // A match decided by its SPRT: its record sits beside its PGN.
    let out = sparring_match(
        dir.path(),
        &[
            "--pairs",
            "300",
            "--concurrency",
            "2",
            "--sprt",
            "0,50",
            "--pgn",
            "sprt.pgn",
        ],
    )
    .output()
    .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(printed.contains("H1 accepted"), "{printed}");
    let record_path = dir.path().join("sprt.match.json");
    let r = spsa::matchrun::MatchRecord::read(&record_path).unwrap();
    let pairs = r.pairs_played;
    assert!(
        printed.contains(&format!(
            "pairs: {pairs}, pentanomial [0, 0.5, 1, 1.5, 2]: [{}, {}, {}, {}, {}]",
            r.pentanomial[0],
            r.pentanomial[1],
            r.pentanomial[2],
            r.pentanomial[3],
            r.pentanomial[4]
        )),
        "{printed}\n{r:?}"
    );
    assert!(
        printed.contains(&format!(
            "games: {} (+{} ={} -{})",
            2 * pairs,
            r.wins,
            r.draws,
            r.losses
        )),
        "{printed}"
    );
    let sprt = r.sprt.as_ref().unwrap();
    assert_eq!(sprt.state, "H1 accepted");
    assert!(
        printed.contains(&format!(
            "SPRT nElo [0, 50], alpha 0.05, beta 0.05: {}",
            sprt.text()
        )),
        "{printed}"
    );
    assert_eq!((r.state.as_str(), r.pairs_planned), ("finished", 300));
    assert_eq!(
        r.engines,
        ["sparring.1".to_string(), "sparring.2".to_string()]
    );
    assert_eq!(r.options[1], "KnightValue=60 BishopValue=60");
    assert_eq!(r.limits, "depth=1");
    assert!(r.elo.unwrap() > 0.0 && r.elo_low.is_some(), "{r:?}");
    let pgn = std::fs::read_to_string(dir.path().join("sprt.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count() as u64, 2 * pairs);

    // `spsa serve` lists both, with the verdict, the counts and the Elo; the live one moves.
    let serve = Serve::start(&[record_path.to_str().unwrap(), live.to_str().unwrap()]);
    let listed = api_matches(&serve);
    assert_eq!(listed.len(), 2);
    let (decided, following) = (&listed[0], &listed[1]);
    assert_eq!(decided["id"], json!("match-1"));
    assert_eq!(decided["state"], json!("H1 accepted"));
    assert_eq!(decided["record"]["pairs_played"], json!(pairs));
    assert_eq!(decided["elo_text"], json!(r.elo_text()));
    assert_eq!(following["state"], json!("running"));
    let (status, page) = http(&serve.url, "GET", "/", &[], "");
    assert_eq!(status, 200);
    let row = page
        .split("<tr data-match=\"match-1\">")
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or_else(|| panic!("no row of match-1: {page}"));
    for want in [
        "sparring.1 vs sparring.2 (KnightValue=60 BishopValue=60)",
        "<td class=\"state\">H1 accepted</td>",
        &format!("{pairs}/300"),
        &format!("nElo [0, 50]: {}", sprt.text()),
        &r.elo_text(),
    ] {
        assert!(row.contains(want), "{want} not in {row}");
    }
    assert!(page.contains("<tr data-match=\"match-2\">"), "{page}");
    // Live: the list's version changes as the record does; the same version is 204.
    let version = |page: &str| {
        page.split("data-version=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string()
    };
    let v0 = version(&page);
    // Counted after the page was served: the record may have moved between the two requests
    // above, and a count taken before the page could already be the one its version shows.
    let before = api_matches(&serve)[1]["record"]["pairs_played"]
        .as_u64()
        .unwrap();
    wait_until("serve follows the live record", || {
        api_matches(&serve)[1]["record"]["pairs_played"]
            .as_u64()
            .unwrap()
            > before
    });
    let (status, fragment) = http(
        &serve.url,
        "GET",
        &format!("/fragment/runs?v={v0}"),
        &[],
        "",
    );
    assert_eq!(status, 200, "a changed list is sent again");
    let v1 = version(&fragment);
    assert_ne!(v0, v1);

    // Killed mid-way: the record stays as it was last written, and shows as stopped.
    playing.kill().unwrap();
    playing.wait().unwrap();
    let r = spsa::matchrun::MatchRecord::read(&live).unwrap();
    assert_eq!(r.state, "running");
    assert!(r.pairs_played < 5000);
    wait_until("the killed match shows as stopped", || {
        api_matches(&serve)[1]["state"] == json!("stopped")
    });
    let (_, page) = http(&serve.url, "GET", "/", &[], "");
    assert!(page.contains("<td class=\"state\">stopped</td>"), "{page}");
}

/// Issue 46: every chart of a run's page has axes a user can read a value off: the θ charts,
/// the moves chart and the live Elo curve (drawn by the plot's own chart code) each show tick
/// labels on both axes, and the Elo chart says what the run has gained so far.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_chart_of_a_run_page_has_tick_labels_to_read() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = write_local_run(dir.path(), "run", 30);
    // A curve of 8 points against the start, 32 pairs each, θ gaining a little each time.
    let mut track = String::from(
        "point,iteration,against,pairs,p0,p1,p2,p3,p4,elo,low,high,Knight Value,x,y\n",
    );
    for k in 1..=8u64 {
        let up = k.min(6);
        let p = [4, 6, 12 - up, 6, 4 + up];
        track.push_str(&format!(
            "{k},{},start,32,{},{},{},{},{},0,,,100,0,7\n",
            3 * k,
            p[0],
            p[1],
            p[2],
            p[3],
            p[4]
        ));
    }
    std::fs::write(dir.path().join("run.track.csv"), track).unwrap();
    let serve = Serve::start(&[log.to_str().unwrap()]);
    let b = Browser::start().await;
    b.c()
        .goto(&format!("{}/runs/local-1", serve.url))
        .await
        .unwrap();
    b.wait_text("#gained-start", |t| t.contains("gained")).await;
    // Every chart of the page comes from the plot's chart code (plotters' SVG): the three θ
    // charts, the moves chart and the Elo curve. Tick labels on y (right-aligned beside the
    // axis) and on x (centred below it), and the axes' names.
    let charts = b
        .js("return Array.from(document.querySelectorAll('#live svg')).map(s => [s.parentElement.id || s.parentElement.className, Array.from(s.querySelectorAll('text')).map(t => [t.getAttribute('text-anchor') || '', t.textContent.trim()])]);")
        .await;
    let charts: Vec<(String, Vec<(String, String)>)> = serde_json::from_value(charts).unwrap();
    let named: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        named,
        [
            "var-chart",
            "var-chart",
            "var-chart",
            "moves-chart",
            "elo-chart"
        ],
        "{charts:?}"
    );
    let number = |t: &str| t.trim_start_matches(['−', '-', '+']).parse::<f64>().ok();
    for (chart, texts) in &charts {
        let ticks = |anchor: &str| -> Vec<f64> {
            texts
                .iter()
                .filter(|(a, _)| a == anchor)
                .filter_map(|(_, t)| number(t))
                .collect()
        };
        let (y, x) = (ticks("end"), ticks("middle"));
        assert!(y.len() >= 2 && x.len() >= 2, "{chart}: {texts:?}");
        assert!(
            texts.iter().any(|(_, t)| t == "iteration"),
            "{chart}: {texts:?}"
        );
        if chart == "var-chart" {
            // A θ chart's x ticks are iterations within the log's 30 rows.
            assert!(x.iter().all(|&t| (1.0..=30.0).contains(&t)), "{x:?}");
            assert!(texts.iter().any(|(_, t)| t == "value"), "{texts:?}");
        }
    }
    // The Elo chart (plotters' SVG): its axis names and an iteration tick.
    let elo = b
        .js("return Array.from(document.querySelectorAll('#elo-chart svg text')).map(t => t.textContent.trim());")
        .await;
    let elo: Vec<String> = serde_json::from_value(elo).unwrap();
    assert!(elo.iter().any(|t| t == "iteration"), "{elo:?}");
    assert!(
        elo.iter().any(|t| t == "Elo against the opponent"),
        "{elo:?}"
    );
    assert!(
        elo.iter().filter(|t| t.parse::<f64>().is_ok()).count() >= 4,
        "tick labels: {elo:?}"
    );
    assert!(
        elo.iter().any(|t| t.contains("gained so far")),
        "the legend: {elo:?}"
    );
    let shot = b.screenshot("run-page-axes.png").await;
    eprintln!("screenshot {}", shot.display());
    b.close().await;
}

/// A match in the database (`spsa match --db`), played by a URL-only worker: the page lists it
/// while it runs, and its LLR and pentanomial read off the page are the database's (the LLR
/// as the counts give it); the JSON API says the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_match_in_the_database_shows_its_llr_and_pentanomial_on_the_page() {
    if !tools_present() {
        return;
    }
    let cluster = Cluster::shared();
    let db = cluster.database("web_match");
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let mut creator = sparring_match(
        dir.path(),
        &[
            "--pairs",
            "5000",
            "--sprt",
            "0,5,0.001,0.001",
            "--db",
            &db.url,
        ],
    )
    .env("XDG_CACHE_HOME", &cache)
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let run = pg_common::wait_for(&db, "SELECT coalesce(max(id), 0) FROM spsa.runs", |s| {
        !s.is_empty() && s != "0"
    });
    let url = db.worker_role("web_match_w", "pwd");
    let mut worker = Command::new(SPSA)
        .args(["worker", "--db", &url, "--name", "w", "--concurrency", "1"])
        .env("XDG_CACHE_HOME", &cache)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    pg_common::wait_for(
        &db,
        &format!("SELECT applied >= 3 FROM spsa.runs WHERE id = {run}"),
        |s| s == "t",
    );
    let serve = Serve::start(&["--db", &db.url]);
    let b = Browser::start().await;
    b.c().goto(&format!("{}/", serve.url)).await.unwrap();
    let row = format!("tr[data-match=\"db-match-{run}\"]");
    let state = b.text(&format!("{row} td.state")).await;
    assert_eq!(state, "running");
    // Stop the worker so that what the page shows and what the database holds are one state.
    worker.kill().unwrap();
    worker.wait().unwrap();
    let penta_db = db.psql(&format!(
        "SELECT array_to_string(pentanomial, ' ') FROM spsa.runs WHERE id = {run}"
    ));
    let llr_db: f64 = db
        .psql(&format!("SELECT llr FROM spsa.runs WHERE id = {run}"))
        .parse()
        .unwrap();
    b.c().refresh().await.unwrap();
    let penta = b.text(&format!("{row} td.penta")).await;
    assert_eq!(penta, penta_db);
    let sprt = b.text(&format!("{row} td.sprt")).await;
    assert!(
        sprt.contains(&format!("LLR {llr_db:.2}")),
        "{sprt} vs {llr_db}"
    );
    b.screenshot("db_match.png").await;
    b.close().await;
    let listed = api_matches(&serve);
    let m = listed
        .iter()
        .find(|m| m["id"] == format!("db-match-{run}"))
        .expect("the API lists the match");
    assert_eq!(m["record"]["state"], "running");
    let p: Vec<String> = m["record"]["pentanomial"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert_eq!(p.join(" "), penta_db);
    let llr_api = m["record"]["sprt"]["llr"].as_f64().unwrap();
    assert!((llr_api - llr_db).abs() < 1e-9, "{llr_api} vs {llr_db}");
    // The match runs on without its creator (stopped here by `spsa modify`).
    creator.kill().unwrap();
    creator.wait().unwrap();
    let stop = Command::new(SPSA)
        .args(["modify", "--db", &db.url, "--run", &run, "--stop"])
        .output()
        .unwrap();
    assert!(
        stop.status.success(),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    assert_eq!(
        db.psql(&format!("SELECT state FROM spsa.runs WHERE id = {run}")),
        "stopped"
    );
}
