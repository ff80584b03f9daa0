//! Engines travel with a shared run, and a worker proves what it plays: workers with only a
//! URL fetch the run's engine into their cache (once), another build of the same engine plays,
//! a proxy that changes one evaluation weight is refused with both signatures where users
//! look; bad input (wrong password, an older schema, altered bytes, an unwritable cache, a full
//! disk while fetching, an engine name the run does not use) is refused with one line and nothing written; a worker
//! waits for the first run; Ctrl-C and SIGTERM stop the owner and workers at once, the database
//! there or not; an engine whose signature does not repeat is checked by its hash alone.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use crate::child_common;
use crate::pg_common;
use crate::web_common;
use child_common::stderr_until;
use pg_common::{
    Cluster, TestDb, assert_finished, create_run, engine_config, sim_config, wait_for,
};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");
const SPARRING: &str = env!("CARGO_BIN_EXE_sparring");

/// `spsa ARGS` in `dir` with `cache` as XDG_CACHE_HOME.
fn command(dir: &Path, cache: &Path, args: &[&str]) -> Command {
    pg_common::spsa(dir, cache, args)
}

fn spawn(dir: &Path, cache: &Path, args: &[&str]) -> Child {
    command(dir, cache, args).spawn().unwrap()
}

fn output(dir: &Path, cache: &Path, args: &[&str]) -> Output {
    command(dir, cache, args).output().unwrap()
}

/// An engine run in `dir` whose engine is `engine` (a file only this "machine" has).
fn engine_run(dir: &Path, engine: &Path, iterations: u64) {
    let limits = "depth = 2\nmax_plies = 120";
    engine_config(dir, &engine.display().to_string(), iterations, 1, limits);
}

/// A copy of sparring at `dir/name` (another file: other bytes when `extra` is not empty, the
/// same search).
fn sparring_copy(dir: &Path, name: &str, extra: &[u8]) -> PathBuf {
    let path = dir.join(name);
    let mut bytes = std::fs::read(SPARRING).unwrap();
    bytes.extend_from_slice(extra);
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A UCI proxy that forwards to sparring after lowering one evaluation weight the run does
/// not tune: the same options, another search.
fn proxy(dir: &Path) -> PathBuf {
    let path = dir.join("sparring-proxy");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n{{ echo 'setoption name PawnValue value 90'; cat; }} | exec {SPARRING}\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A worker named `name` that serves until idle with `path` as its own build of `engine`: what
/// it said (it must exit successfully).
fn own_build(dir: &Path, cache: &Path, url: &str, name: &str, engine: &str, path: &Path) -> String {
    let flag = format!("{engine}={}", path.display());
    let args = [
        "worker",
        "--db",
        url,
        "--until-idle",
        "--name",
        name,
        "--engine",
        &flag,
    ];
    let out = output(dir, cache, &args);
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    said
}

/// The one cached engine file under `cache`.
fn cached(cache: &Path) -> Vec<PathBuf> {
    let root = cache.join("spsa/engines");
    let mut found = Vec::new();
    for dir in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            found.push(f.path());
        }
    }
    found
}

#[test]
fn workers_with_only_a_url_fetch_the_engine_and_a_proxy_with_another_weight_is_refused() {
    let cluster = Cluster::shared();
    let db = cluster.database("engines_travel");
    let owner_dir = tempfile::tempdir().unwrap();
    let caches = tempfile::tempdir().unwrap();
    let cache = |name: &str| caches.path().join(name);
    let engine = sparring_copy(owner_dir.path(), "sparring", b"");
    engine_run(owner_dir.path(), &engine, 6);
    let (owner, run) = create_run(&db, owner_dir.path(), &cache("owner"), &[]);
    let url = db.worker_role("travel_w", "pwt");
    // The engine now exists only in the database.
    std::fs::remove_file(&engine).unwrap();
    let (sha, size) = {
        let row = db.psql("SELECT sha256, size FROM spsa.artifacts");
        let (s, n) = row.split_once('|').unwrap();
        (s.to_string(), n.parse::<u64>().unwrap())
    };
    assert_eq!(size, std::fs::metadata(SPARRING).unwrap().len());
    assert_eq!(
        db.psql(&format!(
            "SELECT count(*) FROM spsa.run_engines WHERE run_id = {run} AND sha256 = '{sha}'"
        )),
        "2"
    );

    // A proxy that lowers one weight the run does not tune: refused, nothing leased.
    let elsewhere = tempfile::tempdir().unwrap();
    let proxy = proxy(elsewhere.path());
    let said = own_build(
        elsewhere.path(),
        &cache("proxy"),
        &url,
        "proxied",
        "sparring",
        &proxy,
    );
    assert!(
        said.contains(&format!("cannot play run {run}: Engine1: signature depth "))
            && said.contains("here, the run's depth"),
        "{said}"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM spsa.work WHERE worker = 'travel_w/proxied'"),
        "0"
    );

    // Two workers in empty folders with only the URL, and one with another build of the same
    // engine (other bytes, the same search), play the run together.
    let (empty1, empty2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let other = sparring_copy(elsewhere.path(), "sparring-other-build", b"\0another build");
    let started = Instant::now();
    let workers = [
        spawn(
            empty1.path(),
            &cache("a"),
            &["worker", "--db", &url, "--until-idle", "--name", "a"],
        ),
        spawn(
            empty2.path(),
            &cache("b"),
            &["worker", "--db", &url, "--until-idle", "--name", "b"],
        ),
        spawn(
            elsewhere.path(),
            &cache("c"),
            &[
                "worker",
                "--db",
                &url,
                "--until-idle",
                "--name",
                "own",
                "--engine",
                &format!("sparring={}", other.display()),
            ],
        ),
    ];
    for w in workers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    eprintln!(
        "three workers played 6 iterations in {:?}",
        started.elapsed()
    );
    assert_finished(
        &db,
        owner,
        &run,
        6,
        &["travel_w/a", "travel_w/b", "travel_w/own"],
    );
    for name in ["a", "b"] {
        let files = cached(&cache(name));
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(
            files[0],
            cache(name).join(format!("spsa/engines/{sha}/sparring"))
        );
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "executable");
        assert_eq!(
            std::fs::read(&files[0]).unwrap(),
            std::fs::read(SPARRING).unwrap()
        );
    }
    assert!(
        cached(&cache("c")).is_empty(),
        "an own build fetches nothing"
    );
    let checked = db.psql(&format!(
        "SELECT worker, side, own_build, refused IS NULL FROM spsa.worker_engines WHERE run_id = {run} ORDER BY 1, 2"
    ));
    assert_eq!(
        checked,
        "travel_w/a|Engine1|f|t\ntravel_w/a|Engine2|f|t\ntravel_w/b|Engine1|f|t\ntravel_w/b|Engine2|f|t\n\
         travel_w/own|Engine1|t|t\ntravel_w/own|Engine2|t|t\n\
         travel_w/proxied|Engine1|t|f\ntravel_w/proxied|Engine2|t|f"
    );

    // A second run of the same engine: stored once, and a worker's cache is hit (the file is
    // not written again).
    let file = cached(&cache("a")).remove(0);
    let written = std::fs::metadata(&file).unwrap().modified().unwrap();
    let second = tempfile::tempdir().unwrap();
    let engine = sparring_copy(second.path(), "sparring", b"");
    engine_run(second.path(), &engine, 1);
    let (owner, run2) = create_run(&db, second.path(), &cache("owner"), &[]);
    let out = output(
        empty1.path(),
        &cache("a"),
        &["worker", "--db", &url, "--until-idle", "--name", "a"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(owner.wait_with_output().unwrap().status.success());
    assert_eq!(db.psql("SELECT count(*) FROM spsa.artifacts"), "1");
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        written
    );
    assert_eq!(
        db.psql(&format!("SELECT applied FROM spsa.runs WHERE id = {run2}")),
        "1"
    );

    // `spsa status` (as a worker's role) and the run page say which engine each worker plays
    // and why the proxy was refused, with both signatures.
    let status = output(Path::new("."), &cache("x"), &["status", "--db", &url]);
    let shown = text(&status.stdout);
    assert!(status.status.success(), "{}", text(&status.stderr));
    let short = &sha[..12];
    assert!(
        shown.contains(&format!("    travel_w/a Engine1: fetched {short}, depth ")),
        "{shown}"
    );
    assert!(
        shown.contains("    travel_w/own Engine1: own build "),
        "{shown}"
    );
    let proxy_line = shown
        .lines()
        .find(|l| l.contains("travel_w/proxied Engine1"))
        .unwrap_or_default();
    assert!(
        proxy_line.contains("REFUSED: Engine1: signature depth ")
            && proxy_line.matches("nodes ").count() == 3,
        "{shown}"
    );
    let serve = web_common::Serve::start(&["--db", &db.url]);
    let (code, page) = web_common::http(&serve.url, "GET", &format!("/api/runs/db-{run}"), &[], "");
    assert_eq!(code, 200, "{page}");
    let page: serde_json::Value = serde_json::from_str(&page).unwrap();
    let engines = page["engines"].as_array().unwrap();
    let refused: Vec<&serde_json::Value> =
        engines.iter().filter(|e| !e["refused"].is_null()).collect();
    assert_eq!(refused.len(), 2, "{page}");
    assert_eq!(refused[0]["worker"], "travel_w/proxied");
    assert!(
        refused[0]["refused"]
            .as_str()
            .unwrap()
            .contains("here, the run's depth")
    );
    let (code, html) = web_common::http(&serve.url, "GET", &format!("/runs/db-{run}"), &[], "");
    assert_eq!(code, 200);
    assert!(
        html.contains("<table id=\"engines\">") && html.contains("refused: Engine1: signature"),
        "{html}"
    );
}

/// One line on stderr, and it contains `want`.
fn one_line(out: &Output, want: &str) {
    let err = text(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(want), "{err}");
}

#[test]
fn bad_input_is_refused_with_one_line_and_nothing_written() {
    let cluster = Cluster::shared();
    let db = cluster.database("engines_bad_input");
    let dir = tempfile::tempdir().unwrap();
    let caches = tempfile::tempdir().unwrap();
    let engine = sparring_copy(dir.path(), "sparring", b"");
    engine_run(dir.path(), &engine, 2);
    let (mut owner, run) = create_run(&db, dir.path(), caches.path(), &[]);
    let url = db.worker_role("bad_w", "pwb");
    let workers = || db.psql("SELECT count(*) FROM spsa.workers");
    let empty = tempfile::tempdir().unwrap();
    let worker = |cache: &Path, url: &str, extra: &[&str]| {
        let mut args = vec!["worker", "--db", url, "--until-idle", "--name", "bad"];
        args.extend(extra);
        output(empty.path(), cache, &args)
    };

    // A wrong password.
    let wrong = url.replace("pwb", "nope");
    let out = worker(&caches.path().join("1"), &wrong, &[]);
    assert_eq!(out.status.code(), Some(2));
    one_line(&out, "password authentication failed");
    assert!(!text(&out.stderr).contains("nope"));

    // An --engine name the run does not use.
    let out = worker(
        &caches.path().join("2"),
        &url,
        &["--engine", "stockfish=/usr/games/stockfish"],
    );
    assert_eq!(out.status.code(), Some(2));
    one_line(
        &out,
        "--engine stockfish=/usr/games/stockfish: no active run plays an engine named `stockfish`",
    );

    // A cache folder that cannot be written (a file is in the way).
    let blocked = caches.path().join("a-file");
    std::fs::write(&blocked, "").unwrap();
    let out = worker(&blocked, &url, &[]);
    assert_eq!(out.status.code(), Some(2));
    one_line(&out, "a-file/spsa/engines");
    assert_eq!(workers(), "0", "nothing registered");

    // A full disk while fetching: a worker whose writes fail past 64 KiB (RLIMIT_FSIZE, with
    // SIGXFSZ ignored so a write gets EFBIG as on a full disk) refuses the run, naming the
    // cache file and why; nothing is left in the cache and nothing is leased.
    let cache = caches.path().join("full");
    let out = Command::new("bash")
        .args(["-c", "trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\"", SPSA])
        .args(["worker", "--db", &url, "--until-idle", "--name", "full"])
        .current_dir(empty.path())
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    let sha = db.psql(&format!(
        "SELECT sha256 FROM spsa.run_engines WHERE run_id = {run} AND side = 'Engine1'"
    ));
    let file = cache.join(format!("spsa/engines/{sha}/sparring"));
    let refusal: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("cannot play run"))
        .collect();
    assert_eq!(refusal.len(), 1, "{said}");
    assert!(
        refusal[0].contains(&format!(
            "cannot play run {run}: Engine1: cannot cache it as {}: File too large",
            file.display()
        )),
        "{said}"
    );
    assert!(cached(&cache).is_empty(), "{:?}", cached(&cache));
    assert_eq!(
        db.psql("SELECT count(*) FROM spsa.work WHERE worker IS NOT NULL"),
        "0"
    );

    // An artifact whose bytes were altered in the database: the run is refused there, nothing
    // is cached or leased.
    db.psql("UPDATE spsa.artifacts SET bytes = bytes || '\\x00'::bytea");
    let cache = caches.path().join("3");
    let out = worker(&cache, &url, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    let refusal: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("cannot play run"))
        .collect();
    assert_eq!(refusal.len(), 1, "{said}");
    assert!(
        refusal[0].contains(&format!(
            "cannot play run {run}: Engine1: the stored engine"
        )) && refusal[0].contains("was altered"),
        "{said}"
    );
    assert!(cached(&cache).is_empty());
    assert_eq!(
        db.psql("SELECT count(*) FROM spsa.work WHERE worker IS NOT NULL"),
        "0"
    );
    assert!(db.psql("SELECT refused FROM spsa.worker_engines WHERE worker = 'bad_w/bad' AND side = 'Engine1'").contains("was altered"));

    // A schema older than the worker (a function it needs is missing).
    owner.kill().unwrap();
    owner.wait().unwrap();
    db.psql("DROP FUNCTION spsa.engine_checked(text, bigint, text, boolean, text, text, text)");
    let before = workers();
    let out = worker(&caches.path().join("4"), &url, &[]);
    assert_eq!(out.status.code(), Some(2));
    one_line(
        &out,
        "its spsa schema is older than this worker (no spsa.engine_checked)",
    );
    assert_eq!(workers(), before);
}

/// Send `signal` to `child` and return how long it took to exit, with its output. The signal
/// is sent from this process: starting a `kill` program first would count its own start (slow
/// on a loaded machine) in the time.
fn stop(child: Child, signal: &str) -> (Duration, Output) {
    let sig = match signal {
        "INT" => libc::SIGINT,
        "TERM" => libc::SIGTERM,
        other => panic!("no signal {other} here"),
    };
    let t = Instant::now();
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
    let out = child.wait_with_output().unwrap();
    (t.elapsed(), out)
}

#[test]
fn a_worker_waits_for_the_first_run_then_plays_it_and_stops_at_once() {
    let cluster = Cluster::shared();
    let db = cluster.database("engines_wait");
    let dir = tempfile::tempdir().unwrap();
    let caches = tempfile::tempdir().unwrap();
    // No schema yet: the worker waits (as the admin: no worker role exists before the schema).
    // The run is created once it said so, not after a fixed time (a loaded machine may start
    // it late, and then it would never see the database without a schema).
    let mut worker = spawn(
        dir.path(),
        caches.path(),
        &["worker", "--db", &db.url, "--name", "early"],
    );
    let stderr = stderr_until(&mut worker, "has no runs yet (no spsa schema); waiting");
    sim_config(dir.path(), "s", 30, 3, 1);
    let (owner, run) = create_run_named(&db, dir.path(), caches.path(), "s.toml");
    let owner = owner.wait_with_output().unwrap();
    assert!(owner.status.success(), "{}", text(&owner.stderr));
    assert_eq!(
        db.psql(&format!(
            "SELECT count(*) FROM spsa.results WHERE run_id = {run} AND worker LIKE '%/early'"
        )),
        "30",
        "the waiting worker played the whole run"
    );
    let (took, out) = stop(worker, "TERM");
    let said = text(&stderr.join().unwrap());
    assert!(out.status.success(), "{said}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert_eq!(
        said.matches("has no runs yet (no spsa schema); waiting")
            .count(),
        1,
        "{said}"
    );
}

fn create_run_named(db: &TestDb, dir: &Path, cache: &Path, config: &str) -> (Child, String) {
    let owner = spawn(dir, cache, &["run", config, "--db", &db.url, "--no-play"]);
    let run = wait_for(db, "SELECT max(id) FROM spsa.runs", |s| !s.is_empty());
    (owner, run)
}

#[test]
fn the_owner_and_a_worker_stop_at_once_when_their_database_is_gone() {
    let cluster = Cluster::start();
    let db = cluster.database("engines_gone");
    let dir = tempfile::tempdir().unwrap();
    let caches = tempfile::tempdir().unwrap();
    let engine = sparring_copy(dir.path(), "sparring", b"");
    engine_run(dir.path(), &engine, 1000);
    let (mut owner, _run) = create_run(&db, dir.path(), caches.path(), &[]);
    let mut worker = spawn(
        dir.path(),
        caches.path(),
        &["worker", "--db", &db.url, "--name", "gone"],
    );
    wait_for(&db, "SELECT count(*) > 0 FROM spsa.results", |s| s == "t");
    cluster.stop();
    // Each is signalled once it says it lost the database and waits to retry (not after a
    // fixed time, which a loaded machine can make too short).
    let owner_err = stderr_until(&mut owner, "; retrying in");
    let worker_err = stderr_until(&mut worker, "; retrying in");
    for (child, err, signal, said) in [
        (owner, owner_err, "INT", "stopped following run"),
        (worker, worker_err, "TERM", "stopped"),
    ] {
        let (took, out) = stop(child, signal);
        assert!(out.stderr.is_empty());
        let err = text(&err.join().unwrap());
        eprintln!("SIG{signal} stopped it in {took:?}");
        assert!(took < Duration::from_secs(1), "{took:?}: {err}");
        assert!(out.status.success(), "{err}");
        assert!(err.contains(said), "{err}");
    }
    // The owner's files are consistent: its checkpoint holds the θ log it wrote.
    let ck = std::fs::read_to_string(dir.path().join("g.checkpoint.var")).unwrap();
    assert!(ck.contains("KnightValue"), "{ck}");
}

/// A UCI engine whose node counts are random: its search cannot identify it.
fn random_engine(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/bash\n{extra}\nwhile read -r line; do\n  case \"$line\" in\n    uci) echo 'id name random-nodes'; \
             echo 'option name KnightValue type spin default 300 min 0 max 1000'; \
             echo 'option name BishopValue type spin default 300 min 0 max 1000'; echo uciok;;\n    \
             isready) echo readyok;;\n    go*) echo \"info depth 1 nodes $RANDOM$RANDOM\"; echo 'bestmove e2e4';;\n    \
             quit) exit 0;;\n  esac\ndone\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn an_engine_whose_signature_does_not_repeat_is_checked_by_its_hash_only() {
    let cluster = Cluster::shared();
    let db = cluster.database("engines_random");
    let dir = tempfile::tempdir().unwrap();
    let caches = tempfile::tempdir().unwrap();
    let engine = random_engine(dir.path(), "random-nodes", "");
    engine_run(dir.path(), &engine, 2);
    let (mut owner, run) = create_run(&db, dir.path(), caches.path(), &[]);
    let url = db.worker_role("random_w", "pwr");

    // Another file of "the same" engine cannot be told from another program: refused.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = random_engine(elsewhere.path(), "random-nodes", "# another build");
    let cache = caches.path().join("own");
    let said = own_build(
        elsewhere.path(),
        &cache,
        &url,
        "own",
        "random-nodes",
        &other,
    );
    assert!(
        said.contains(&format!(
            "cannot play run {run}: Engine1: {} has SHA-256 ",
            other.display()
        )) && said.contains("its signature is not repeatable, so only the same file can play"),
        "{said}"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM spsa.work WHERE worker = 'random_w/own'"),
        "0"
    );

    // The run's own file, fetched, is accepted on its hash.
    let fetcher = spawn(
        elsewhere.path(),
        &caches.path().join("fetch"),
        &["worker", "--db", &url, "--name", "fetch"],
    );
    wait_for(
        &db,
        "SELECT count(*) FROM spsa.worker_engines WHERE worker = 'random_w/fetch' AND refused IS NULL",
        |s| s == "2",
    );
    let (_, out) = stop(fetcher, "TERM");
    assert!(out.status.success(), "{}", text(&out.stderr));
    owner.kill().unwrap();
    let owner = owner.wait_with_output().unwrap();
    let warned = text(&owner.stderr);
    assert!(
        warned.contains(&format!(
            "warning: Engine1 {}: two measurements of its search signature differ (threads or randomness?); workers will check its SHA-256 only",
            engine.display()
        )),
        "{warned}"
    );
}

/// A wrapper of sparring with an `EvalFile` option: it plays as sparring when the file it is
/// given holds `weights-v1`, and with a lower pawn value (another search) when not.
fn weights_engine(dir: &Path) -> PathBuf {
    let path = dir.join("nnue-engine");
    std::fs::write(
        &path,
        format!(
            r#"#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    "setoption name EvalFile value "*)
      if [ "$(cat "${{line#setoption name EvalFile value }}" 2>/dev/null)" != weights-v1 ]; then
        echo 'setoption name PawnValue value 90'
      fi ;;
    *) printf '%s\n' "$line" ;;
  esac
  [ "$line" = quit ] && exit 0
done | {SPARRING} | sed -u 's/^uciok$/option name EvalFile type string default none\nuciok/'
"#
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_weights_file_travels_with_the_run_and_a_wrong_one_is_refused() {
    let cluster = Cluster::shared();
    let db = cluster.database("weights_travel");
    let owner_dir = tempfile::tempdir().unwrap();
    let caches = tempfile::tempdir().unwrap();
    let cache = |name: &str| caches.path().join(name);
    let engine = weights_engine(owner_dir.path());
    engine_run(owner_dir.path(), &engine, 4);
    let conf = owner_dir.path().join("g.toml");
    let text_of = std::fs::read_to_string(&conf).unwrap();
    let with_files = |file: &str| {
        text_of.replace(
            "[games]\n",
            &format!("files = {{ EvalFile = \"{file}\" }}\n[games]\n"),
        )
    };
    // A file that is not there is named at its key, nothing created.
    std::fs::write(&conf, with_files("missing.bin")).unwrap();
    let out = output(
        owner_dir.path(),
        &cache("owner"),
        &["run", "g.toml", "--db", &db.url, "--no-play"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let why = text(&out.stderr);
    assert!(
        why.contains("key `engine1.files.EvalFile`: no file at ") && why.contains("missing.bin"),
        "{why}"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'spsa'"),
        "0"
    );

    std::fs::write(owner_dir.path().join("nn.bin"), "weights-v1").unwrap();
    std::fs::write(&conf, with_files("nn.bin")).unwrap();
    let (owner, run) = create_run(&db, owner_dir.path(), &cache("owner"), &[]);
    // The weights now exist only in the database.
    std::fs::remove_file(owner_dir.path().join("nn.bin")).unwrap();
    let file_sha = db.psql(&format!(
        "SELECT sha256 FROM spsa.run_engines WHERE run_id = {run} AND side = 'Engine1 EvalFile'"
    ));
    assert_eq!(
        db.psql(&format!(
            "SELECT convert_from(bytes, 'UTF8') FROM spsa.artifacts WHERE sha256 = '{file_sha}'"
        )),
        "weights-v1"
    );
    let url = db.worker_role("weights_w", "pww");

    // Stored bytes that are not the run's file: refused, nothing leased.
    db.psql(&format!(
        "UPDATE spsa.artifacts SET bytes = 'weights-v2' WHERE sha256 = '{file_sha}'"
    ));
    let empty = tempfile::tempdir().unwrap();
    let out = output(
        empty.path(),
        &cache("wrong"),
        &["worker", "--db", &url, "--until-idle", "--name", "wrong"],
    );
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "cannot play run {run}: Engine1: the stored file EvalFile {file_sha} was altered"
        )),
        "{said}"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM spsa.work WHERE worker = 'weights_w/wrong'"),
        "0"
    );

    // The right bytes: a worker in an empty folder with only the URL fetches engine and
    // weights, points the option at its copy, matches the signature (the wrapper searches
    // otherwise with other weights) and plays the run to its end.
    db.psql(&format!(
        "UPDATE spsa.artifacts SET bytes = 'weights-v1' WHERE sha256 = '{file_sha}'"
    ));
    let out = output(
        empty.path(),
        &cache("right"),
        &["worker", "--db", &url, "--until-idle", "--name", "right"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        db.psql(&format!(
            "SELECT applied, state FROM spsa.runs WHERE id = {run}"
        )),
        "4|finished"
    );
    let copy = cache("right").join(format!("spsa/engines/{file_sha}/nn.bin"));
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "weights-v1");
    assert_eq!(
        db.psql(&format!(
            "SELECT count(*) FROM spsa.worker_engines WHERE run_id = {run} AND worker = 'weights_w/right' AND refused IS NULL"
        )),
        "2"
    );
    let owner = owner.wait_with_output().unwrap();
    assert!(owner.status.success(), "{}", text(&owner.stderr));
}
