//! A throwaway PostgreSQL cluster for tests, started through `.ci/pg` (the same script CI uses).
//!
//! [`Cluster::start`] gives a test its own cluster (stopped on drop, even when the test fails);
//! [`Cluster::shared`] starts one per test binary. Both are watched by the script's watchdog,
//! which stops the server and deletes its folder when this process ends however it ends, so a
//! panicking or killed test binary never leaves a server behind. Tests isolate themselves in
//! the shared cluster with [`Cluster::database`].
#![allow(dead_code)]

mod kept;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// A simulated run's config and variables in `dir`.
pub fn sim_config(dir: &Path, name: &str, iterations: u64, seed: u64, concurrency: usize) {
    std::fs::write(
        dir.join(format!("{name}.var")),
        "x,100,-1000,1000,100,0.002,1\ny,-50,-1000,1000,100,0.002,4\n",
    )
    .unwrap();
    std::fs::write(
        dir.join(format!("{name}.toml")),
        format!(
            "simulate = true\nvariables = \"{name}.var\"\nlog = \"{name}.log\"\niterations = {iterations}\nA = {}\ngamma = 0.101\nalpha = 0.602\nconcurrency = {concurrency}\nseed = {seed}\n",
            iterations / 10
        ),
    )
    .unwrap();
}

/// Run SQL as the role of `url` through psql: its output, or psql's message. Without TLS
/// unless the URL asks for it (`PGSSLMODE` yields to the URL's `sslmode`): these are roles'
/// rights, not the transport, and a handshake was a third of each psql's time (db_fuzz runs
/// 800; db_tls tests TLS through `spsa`).
pub fn psql_as(url: &str, sql: &str) -> Result<String, String> {
    let out = Command::new("/usr/lib/postgresql/15/bin/psql")
        .env("PGSSLMODE", "disable")
        .args([
            "-X",
            "-q",
            "-t",
            "-A",
            "-v",
            "ON_ERROR_STOP=1",
            url,
            "-c",
            sql,
        ])
        .output()
        .expect("run psql");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Poll `sql` (as the database's admin, over its kept connection: [`kept`]) until its output
/// satisfies `want`. Errors count as empty output: the schema may not exist yet. Every 50 ms at
/// first, then less often (at most every 250 ms): a match's end is waited for through a minute
/// and more of play. The bound, 300 s, is a hang guard, not a speed the test
/// asks for: a whole SPRT match waited for at CI's load took past 90 s once. A timeout names
/// the test's line that waited (`track_caller`), with or without debug info.
#[track_caller]
pub fn wait_for(db: &TestDb, sql: &str, want: impl Fn(&str) -> bool) -> String {
    let t = std::time::Instant::now();
    let mut pause = 50;
    loop {
        let got = kept::query(&db.url, sql).unwrap_or_default();
        if want(&got) {
            return got;
        }
        assert!(
            t.elapsed() < std::time::Duration::from_secs(300),
            "`{sql}` stayed at {got}"
        );
        std::thread::sleep(std::time::Duration::from_millis(pause));
        pause = (pause + 10).min(250);
    }
}

/// Kill an owner (`spsa run --db` as the admin) with SIGKILL and wait until its sessions are
/// gone: a statement it sent just before it died still commits on the server, so what the
/// database holds settles only then. Workers connect as other roles and are not waited for.
pub fn kill_owner(db: &TestDb, owner: &mut std::process::Child) {
    owner.kill().unwrap();
    owner.wait().unwrap();
    wait_for(
        db,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND usename = current_user AND application_name = 'spsa'",
        |s| s == "0",
    );
}

/// The id of the newest run, once an owner started in the background has created one.
pub fn wait_for_run(db: &TestDb) -> String {
    wait_for(db, "SELECT coalesce(max(id), 0) FROM spsa.runs", |s| {
        !s.is_empty() && s != "0"
    })
}

/// An engine run's config (`g.toml`) and variables (`g.var`) in `dir`: sparring's knight and
/// bishop values tuned, `engine` as engine 1, `limits` in `[games]`.
pub fn engine_config(dir: &Path, engine: &str, iterations: u64, pairs: u64, limits: &str) {
    std::fs::write(
        dir.join("g.var"),
        "KnightValue,300,100,600,40,0.002,0\nBishopValue,300,100,600,40,0.002,0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("g.toml"),
        format!(
            "simulate = false\nvariables = \"g.var\"\nlog = \"g.log\"\ngame_log = \"g_$THREAD.log\"\niterations = {iterations}\nA = 10\ngamma = 0.101\nalpha = 0.602\nconcurrency = 1\nseed = 9\npairs_per_iteration = {pairs}\n[engine1]\ncommand = \"{engine}\"\n[games]\n{limits}\npgn = \"g.pgn\"\n"
        ),
    )
    .unwrap();
}

/// `spsa ARGS` in `dir` with `cache` as XDG_CACHE_HOME, its output piped.
pub fn spsa(dir: &Path, cache: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_spsa"));
    c.args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", cache)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

/// `spsa worker --db URL --until-idle --name NAME --concurrency 1` in `dir`, its cache
/// `dir/cache-NAME`: a worker that knows only the URL.
pub fn worker(dir: &Path, url: &str, name: &str) -> Command {
    let cache = dir.join(format!("cache-{name}"));
    let args = [
        "worker",
        "--db",
        url,
        "--until-idle",
        "--name",
        name,
        "--concurrency",
        "1",
    ];
    spsa(dir, &cache, &args)
}

/// Create a run of `dir/g.toml` (owner not playing, `extra` flags added); returns the owner
/// and the run's id once the run is in the database.
pub fn create_run(
    db: &TestDb,
    dir: &Path,
    cache: &Path,
    extra: &[&str],
) -> (std::process::Child, String) {
    let before = psql_as(&db.url, "SELECT coalesce(max(id), 0) FROM spsa.runs")
        .unwrap_or_else(|_| "0".into());
    let mut args = vec!["run", "g.toml", "--db", &db.url, "--no-play"];
    args.extend(extra);
    let owner = spsa(dir, cache, &args).spawn().unwrap();
    let run = wait_for(
        db,
        &format!("SELECT max(id) FROM spsa.runs WHERE id > {before}"),
        |s| !s.is_empty(),
    );
    (owner, run)
}

/// The owner of run `run` ends successfully with the run finished after `iterations`, every
/// result reported by one of `workers`.
pub fn assert_finished(
    db: &TestDb,
    owner: std::process::Child,
    run: &str,
    iterations: u64,
    workers: &[&str],
) {
    let owner = owner.wait_with_output().unwrap();
    assert!(
        owner.status.success(),
        "{}",
        String::from_utf8_lossy(&owner.stderr)
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT applied, state FROM spsa.runs WHERE id = {run}"
        )),
        format!("{iterations}|finished")
    );
    let names: Vec<String> = workers.iter().map(|w| format!("'{w}'")).collect();
    assert_eq!(
        db.psql(&format!(
            "SELECT count(*) FROM spsa.results WHERE run_id = {run} AND worker NOT IN ({})",
            names.join(", ")
        )),
        "0"
    );
}

/// One running cluster.
pub struct Cluster {
    dir: PathBuf,
    /// Started by this process (and stopped by it); false for the CI run's cluster.
    owned: bool,
    /// `postgres://spsa_admin:PASSWORD@127.0.0.1:PORT/postgres`
    pub admin_url: String,
    pub port: u16,
    pub password: String,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/pg")
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Cluster {
    /// initdb + start a new cluster in a fresh temporary folder on a free loopback port, with
    /// fsync off (tests need no durability against power loss).
    pub fn start() -> Cluster {
        Cluster::start_with_fsync(false)
    }

    /// A cluster that syncs its writes as a default PostgreSQL does (`fsync = on`): for
    /// benchmarks whose figures must hold on a real server.
    pub fn start_with_fsync(fsync: bool) -> Cluster {
        Cluster::start_configured(fsync, None)
    }

    /// A cluster whose TLS certificate is `cert` with its private key `key` (PEM files), for
    /// tests of certificate verification with a CA of their own.
    pub fn start_with_certificate(cert: &Path, key: &Path) -> Cluster {
        Cluster::start_configured(false, Some((cert, key)))
    }

    fn start_configured(fsync: bool, certificate: Option<(&Path, &Path)>) -> Cluster {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("spsa-pg-{}-{n}", std::process::id()));
        let mut command = Command::new(script());
        if let Some((cert, key)) = certificate {
            command.env("PG_SSL_CERT", cert).env("PG_SSL_KEY", key);
        }
        let out = command
            .env("PG_FSYNC", if fsync { "on" } else { "off" })
            .arg("start")
            .arg(&dir)
            .arg(std::process::id().to_string())
            .output()
            .expect("run .ci/pg");
        assert!(
            out.status.success(),
            "cannot start PostgreSQL:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let admin_url = String::from_utf8(out.stdout).unwrap().trim().to_string();
        Cluster::at(dir, admin_url, true)
    }

    fn at(dir: PathBuf, admin_url: String, owned: bool) -> Cluster {
        let port = std::fs::read_to_string(dir.join("port"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let password = std::fs::read_to_string(dir.join("password"))
            .unwrap()
            .trim()
            .to_string();
        Cluster {
            dir,
            owned,
            admin_url,
            port,
            password,
        }
    }

    /// The cluster shared by all tests of this binary: the one `.ci/run` started (its
    /// `SPSA_TEST_PG_DIR`/`SPSA_TEST_PG_URL`), else one of our own, stopped by the watchdog
    /// when this process exits.
    pub fn shared() -> &'static Cluster {
        static SHARED: OnceLock<Cluster> = OnceLock::new();
        SHARED.get_or_init(|| {
            match (
                std::env::var("SPSA_TEST_PG_DIR"),
                std::env::var("SPSA_TEST_PG_URL"),
            ) {
                (Ok(dir), Ok(url)) if Path::new(&dir).join("port").exists() => {
                    Cluster::at(PathBuf::from(dir), url, false)
                }
                _ => Cluster::start(),
            }
        })
    }

    /// A URL for `user`/`password` on database `db`.
    pub fn url(&self, user: &str, password: &str, db: &str) -> String {
        format!("postgres://{user}:{password}@127.0.0.1:{}/{db}", self.port)
    }

    /// Create a fresh database (named after the test) and return the admin URL for it. Its
    /// guard prints the server log when the test fails.
    pub fn database(&self, name: &str) -> TestDb<'_> {
        self.psql("postgres", &format!("DROP DATABASE IF EXISTS {name}"));
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        TestDb {
            cluster: self,
            name: name.to_string(),
            url: self.url("spsa_admin", &self.password, name),
        }
    }

    /// Run SQL as the admin, with psql's output (over the database's kept connection:
    /// [`kept`]); panics with the server's message on error.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let url = self.url("spsa_admin", &self.password, db);
        kept::query(&url, sql).unwrap_or_else(|e| panic!("psql `{sql}` failed: {e}"))
    }

    /// `pg_ctl restart` (fast shutdown, same port); returns once it accepts connections.
    pub fn restart(&self) {
        self.script("restart");
    }

    /// Stop the server as a crash would (`pg_ctl -m immediate`) and start it again.
    pub fn crash(&self) {
        self.script("crash");
    }

    /// Stop the server for good (and delete its folder): a database that went away.
    pub fn stop(&self) {
        self.script("stop");
    }

    /// Run `.ci/pg COMMAND DIR` on this cluster; panics with its message when it fails.
    fn script(&self, command: &str) {
        let out = Command::new(script())
            .arg(command)
            .arg(&self.dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{command} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The server log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "--- PostgreSQL log ({})\n{}",
                self.dir.display(),
                self.log()
            );
        }
        if self.owned {
            let _ = Command::new(script()).arg("stop").arg(&self.dir).status();
        }
    }
}

/// A test's own database in a cluster.
pub struct TestDb<'c> {
    pub cluster: &'c Cluster,
    pub name: String,
    /// The admin's URL for this database.
    pub url: String,
}

impl TestDb<'_> {
    /// Create a login role that may only work (member of `spsa_worker`), and return its URL.
    pub fn worker_role(&self, role: &str, password: &str) -> String {
        self.cluster.psql(
            &self.name,
            &format!(
                "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD '{password}' IN ROLE spsa_worker"
            ),
        );
        self.cluster.url(role, password, &self.name)
    }

    pub fn psql(&self, sql: &str) -> String {
        self.cluster.psql(&self.name, sql)
    }
}

impl Drop for TestDb<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.cluster.log();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            eprintln!(
                "--- PostgreSQL log tail for {}:\n{}",
                self.name,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
    }
}
