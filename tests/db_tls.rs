//! Certificate verification against a real server: a throwaway CA (made with the `openssl`
//! command) signs the cluster's certificate for `localhost`, and each `sslmode` is checked
//! against it, as libpq defines them. The failures are what prove verification happens: a
//! client that skipped it would connect to 127.0.0.1 under `verify-full` and with a wrong CA.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::pg_common;
use crate::run_common;
use pg_common::{Cluster, sim_config};
use run_common::{spsa_in, text};

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");

/// Run `openssl ARGS` (split at spaces) in `dir`.
fn openssl(dir: &Path, args: &str) {
    let out = Command::new("openssl")
        .args(args.split(' '))
        .current_dir(dir)
        .output()
        .expect("the openssl command (apt-get install openssl)");
    assert!(
        out.status.success(),
        "openssl {args}: {}",
        text(&out.stderr)
    );
}

/// A new P-256 key, for `openssl req`.
const NEW_KEY: &str = "-new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1";

/// A self-signed CA `NAME.crt`/`NAME.key` in `dir`.
fn make_ca(dir: &Path, name: &str) -> PathBuf {
    openssl(
        dir,
        &format!(
            "req -x509 {NEW_KEY} -days 2 -subj /CN={name} -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -keyout {name}.key -out {name}.crt"
        ),
    );
    dir.join(format!("{name}.crt"))
}

/// `server.crt`/`server.key` for CN and SAN `localhost` only, signed by the CA `ca`.
fn make_server_cert(dir: &Path, ca: &str) -> (PathBuf, PathBuf) {
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName = DNS:localhost\nbasicConstraints = CA:FALSE\nkeyUsage = digitalSignature, keyEncipherment\nextendedKeyUsage = serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &format!("req {NEW_KEY} -subj /CN=localhost -keyout server.key -out server.csr"),
    );
    openssl(
        dir,
        &format!(
            "x509 -req -in server.csr -CA {ca}.crt -CAkey {ca}.key -CAcreateserial -days 2 -extfile server.ext -out server.crt"
        ),
    );
    (dir.join("server.crt"), dir.join("server.key"))
}

/// The failure of a command that must not connect: exit status 2, the reason on stderr, and
/// no password in it.
fn refused(out: &Output, password: &str) -> String {
    let why = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{why}");
    assert!(!why.contains(password), "password shown: {why}");
    why
}

#[test]
fn verify_ca_and_verify_full_check_the_servers_certificate() {
    let pki = tempfile::tempdir().unwrap();
    let ca = make_ca(pki.path(), "ca");
    let wrong_ca = make_ca(pki.path(), "other-ca");
    let (cert, key) = make_server_cert(pki.path(), "ca");
    let cluster = Cluster::start_with_certificate(&cert, &key);
    let db = cluster.database("tls_verify");
    let worker_password = "pw-tls-w";
    let url = |user: &str, password: &str, host: &str, query: &str| {
        format!(
            "postgres://{user}:{password}@{host}:{}/{}?{query}",
            cluster.port, db.name
        )
    };
    let admin = |host: &str, query: &str| url("spsa_admin", &cluster.password, host, query);
    let worker = |host: &str, query: &str| url("tls_w", worker_password, host, query);
    let ca_shown = ca.display().to_string();
    let full = format!("sslmode=verify-full&sslrootcert={ca_shown}");
    let chain_only = format!("sslmode=verify-ca&sslrootcert={ca_shown}");

    // verify-full with the right CA and the name on the certificate: a whole run goes through.
    let dir = tempfile::tempdir().unwrap();
    let n = 30;
    sim_config(dir.path(), "t", n, 5, 1);
    let owner = Command::new(SPSA)
        .args([
            "run",
            "t.toml",
            "--no-play",
            "--db",
            &admin("localhost", &full),
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while db.psql("SELECT to_regclass('spsa.runs') IS NOT NULL") != "t"
        || db.psql("SELECT count(*) FROM spsa.runs") == "0"
    {
        assert!(t.elapsed() < Duration::from_secs(60), "no run created");
        std::thread::sleep(Duration::from_millis(50));
    }
    db.worker_role("tls_w", worker_password);
    // verify-ca checks the chain only, so 127.0.0.1 (not on the certificate) is fine.
    let out = spsa_in(
        dir.path(),
        &[
            "worker",
            "--db",
            &worker("127.0.0.1", &chain_only),
            "--until-idle",
            "--name",
            "tls",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = owner.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let applied = db.psql("SELECT applied FROM spsa.runs");
    assert_eq!(applied, n.to_string());
    let status = spsa_in(dir.path(), &["status", "--db", &worker("localhost", &full)]);
    let shown = text(&status.stdout);
    assert!(status.status.success(), "{}", text(&status.stderr));
    assert!(shown.contains(&format!("{n}/{n} iterations")), "{shown}");
    assert!(shown.contains("tls_w/tls"), "{shown}");
    // The CA file's path stays in the URL shown, the password does not.
    assert!(
        shown.contains(&format!("tls_w:***@localhost:{}", cluster.port))
            && shown.contains(&ca_shown)
            && !shown.contains(worker_password),
        "{shown}"
    );

    // verify-full to an address the certificate does not name is refused.
    let out = spsa_in(dir.path(), &["status", "--db", &worker("127.0.0.1", &full)]);
    let why = refused(&out, worker_password);
    assert!(
        why.contains("certificate verify failed") && why.contains("does not name this host"),
        "{why}"
    );
    assert!(
        why.contains("verify-full") && why.contains("`127.0.0.1`") && why.contains(&ca_shown),
        "{why}"
    );

    // A CA that did not sign the server's certificate is refused, with either mode.
    for mode in ["verify-ca", "verify-full"] {
        let wrong = format!("sslmode={mode}&sslrootcert={}", wrong_ca.display());
        let out = spsa_in(
            dir.path(),
            &["status", "--db", &worker("localhost", &wrong)],
        );
        let why = refused(&out, worker_password);
        assert!(why.contains("certificate verify failed"), "{mode}: {why}");
        assert!(
            why.contains(&wrong_ca.display().to_string()),
            "{mode}: {why}"
        );
    }
    // `require` with the wrong CA file given verifies the chain, as libpq does.
    let wrong = format!("sslmode=require&sslrootcert={}", wrong_ca.display());
    let out = spsa_in(
        dir.path(),
        &["status", "--db", &worker("localhost", &wrong)],
    );
    assert!(
        refused(&out, worker_password).contains("certificate verify failed"),
        "require with a CA file must verify"
    );

    // `require` without a CA encrypts without checking: it connects.
    let out = spsa_in(
        dir.path(),
        &["status", "--db", &worker("127.0.0.1", "sslmode=require")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("{n}/{n} iterations")));

    // A CA file that is not there is named before anything is tried.
    let missing = pki.path().join("missing-ca.crt");
    let query = format!("sslmode=verify-full&sslrootcert={}", missing.display());
    let out = spsa_in(
        dir.path(),
        &["worker", "--db", &worker("localhost", &query)],
    );
    let why = refused(&out, worker_password);
    assert!(
        why.contains(&format!("sslrootcert {}", missing.display())) && why.contains("cannot read"),
        "{why}"
    );
}

/// TLS is rustls: the dependency tree holds no OpenSSL to build against (`libssl-dev` and
/// `pkg-config` are not needed to install), in the library or the tests.
#[test]
fn no_openssl_in_the_dependency_tree() {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap();
    for crate_name in ["openssl-sys", "openssl", "native-tls"] {
        assert!(
            !lock.contains(&format!("name = \"{crate_name}\"\n")),
            "{crate_name} is in Cargo.lock"
        );
    }
    assert!(
        lock.contains("name = \"rustls\"\n"),
        "rustls is the TLS client"
    );
}
