//! Bad input a new user tries (issue 18's rough edges): each must end the command before any
//! game with exit status 2 and one clear first line that says where the problem is.

use crate::match_common;

use std::path::Path;
use std::process::Output;

use match_common::{sparring, spsa, stderr};

fn first_line(o: &Output) -> String {
    stderr(o).lines().next().unwrap_or_default().to_string()
}

/// A tuning config for the sparring engine with `options` in its `[engine1.options]` table;
/// returns the config's path and the line number of the first option.
fn config_with_options(dir: &Path, options: &str) -> (std::path::PathBuf, usize) {
    std::fs::write(dir.join("v.var"), "KnightValue,320,0,1200,20,0.002,0\n").unwrap();
    let head = format!(
        "variables = \"v.var\"\nlog = \"t.log\"\niterations = 2\nA = 1\ngamma = 0.101\n\
         alpha = 0.602\n[games]\ndepth = 1\npgn = \"games.pgn\"\n[engine1]\ncommand = \"{}\"\n\
         [engine1.options]\n",
        sparring()
    );
    let line = head.lines().count() + 1;
    let path = dir.join("t.toml");
    std::fs::write(&path, format!("{head}{options}\n")).unwrap();
    (path, line)
}

#[test]
fn a_refused_engine_option_is_reported_at_its_config_line() {
    for (option, says) in [
        ("Hash = 999999", "outside its range 1..=1024"),
        ("Nope = 3", "has no option `Nope`"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (config, line) = config_with_options(dir.path(), option);
        let key = option.split(' ').next().unwrap();
        let at = format!("{}:{line}: key `engine1.options.{key}`", config.display());
        let run = spsa()
            .args(["run", config.to_str().unwrap()])
            .output()
            .unwrap();
        let verify = spsa()
            .args(["verify", config.to_str().unwrap(), "--pairs", "1"])
            .args(["--values", dir.path().join("v.var").to_str().unwrap()])
            .output()
            .unwrap();
        for (what, out) in [("run", run), ("verify", verify)] {
            assert_eq!(
                out.status.code(),
                Some(2),
                "{what} {option}: {}",
                stderr(&out)
            );
            let first = first_line(&out);
            assert!(first.starts_with(&format!("spsa: {at}")), "{what}: {first}");
            assert!(first.contains(says), "{what}: {first}");
        }
        assert!(!dir.path().join("games.pgn").exists(), "no game was played");
        assert!(!dir.path().join("t.log").exists(), "nothing was logged");
    }
}

#[test]
fn a_refused_option_flag_is_named() {
    for (flag, value, says) in [
        ("--option1", "Hash=999999", "--option1 Hash: "),
        ("--option2", "Nope=1", "--option2 Nope: "),
        ("--option", "Hash=0", "--option Hash: "),
    ] {
        let out = spsa()
            .args(["match", "--engine1", sparring(), "--depth", "1"])
            .args(["--pairs", "1", flag, value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", stderr(&out));
        let first = first_line(&out);
        assert!(first.starts_with(&format!("spsa: {says}")), "{first}");
        assert!(out.stdout.is_empty(), "no match started: {:?}", out.stdout);
    }
}

#[test]
fn an_unwritable_pgn_is_refused_before_the_engines_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("afile");
    std::fs::write(&file, "").unwrap();
    let pgn = file.join("games.pgn");
    // An engine that would leave a mark if it were started: the check must come first.
    let marker = dir.path().join("started");
    let engine = dir.path().join("engine.sh");
    std::fs::write(
        &engine,
        format!(
            "#!/bin/sh\ntouch '{}'\nexec '{}'\n",
            marker.display(),
            sparring()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&engine).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&engine, perms).unwrap();
    let out = spsa()
        .args([
            "match",
            "--engine1",
            engine.to_str().unwrap(),
            "--depth",
            "1",
        ])
        .args(["--pairs", "1", "--pgn", pgn.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let first = first_line(&out);
    assert!(
        first.starts_with(&format!(
            "spsa: --pgn `{}` cannot be written",
            pgn.display()
        )),
        "{first}"
    );
    assert!(first.contains("is a file, not a folder"), "{first}");
    assert_eq!(
        stderr(&out).lines().count(),
        1,
        "one line: {}",
        stderr(&out)
    );
    assert!(!marker.exists(), "no engine was started");
    assert!(out.stdout.is_empty());
}

/// A shell script engine in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
    path
}

#[test]
fn an_engine_that_exits_at_once_is_named_once_with_its_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    // Exits at once; closes its input first, then exits (our `uci` meets a broken pipe); or
    // reads `uci` and exits without a word.
    let engines = [
        ("/bin/true".into(), "true.1", "exit status: 0"),
        ("/bin/false".into(), "false.1", "exit status: 1"),
        (
            script(dir.path(), "closer", "exec 0<&-\nsleep 0.05\nexit 3"),
            "closer.1",
            "exit status: 3",
        ),
        (
            script(dir.path(), "reader", "read line\nexit 4"),
            "reader.1",
            "exit status: 4",
        ),
    ];
    for (engine, name, status) in engines {
        let engine: std::path::PathBuf = engine;
        let out = spsa()
            .args(["match", "--engine1", engine.to_str().unwrap()])
            .args(["--depth", "1", "--pairs", "1"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("exited before answering `uci`") && err.contains(status),
            "{err}"
        );
        assert_eq!(err.matches(name).count(), 1, "named once: {err}");
        assert!(!err.contains("Broken pipe"), "{err}");
    }
}

#[test]
fn a_database_that_is_not_there_ends_the_command_at_once() {
    // A loopback port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://tuner:hunter2@127.0.0.1:{port}/spsa");
    let dir = tempfile::tempdir().unwrap();
    let vars = Path::new(env!("CARGO_MANIFEST_DIR")).join("vars/simul_1var.var");
    let config = dir.path().join("s.toml");
    std::fs::write(
        &config,
        format!(
            "simulate = true\nvariables = \"{}\"\nlog = \"s.log\"\niterations = 10\nA = 1\n\
             gamma = 0.101\nalpha = 0.602\n",
            vars.display()
        ),
    )
    .unwrap();
    let commands: [Vec<&str>; 3] = [
        vec!["run", config.to_str().unwrap(), "--db", &url],
        vec!["worker", "--db", &url],
        vec!["status", "--db", &url],
    ];
    for args in commands {
        let started = std::time::Instant::now();
        let out = spsa().args(&args).output().unwrap();
        let err = stderr(&out);
        assert!(
            started.elapsed().as_secs() < 5,
            "{args:?} took {:?}",
            started.elapsed()
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "spsa: cannot connect to database postgres://tuner:***@127.0.0.1:{port}/spsa: "
            )) && err.contains("refused"),
            "{err}"
        );
    }
    assert!(!dir.path().join("s.log").exists(), "nothing written");
}

#[test]
fn cargo_install_installs_only_the_tuner_and_the_sparring_engine() {
    // `cargo install --path .` installs every binary target of the package (those without
    // required features); test doubles must be something else (the stand-in is an example).
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let package = &meta["packages"][0];
    let mut installed = Vec::new();
    let mut examples = Vec::new();
    for target in package["targets"].as_array().unwrap() {
        let kinds: Vec<&str> = target["kind"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|k| k.as_str())
            .collect();
        let name = target["name"].as_str().unwrap().to_string();
        let needs_features = target
            .get("required-features")
            .and_then(|f| f.as_array())
            .is_some_and(|f| !f.is_empty());
        if kinds.contains(&"bin") && !needs_features {
            installed.push(name);
        } else if kinds.contains(&"example") {
            examples.push(name);
        }
    }
    installed.sort();
    assert_eq!(installed, ["sparring", "spsa"]);
    assert!(
        examples.contains(&"uci-standin".to_string()),
        "{examples:?}"
    );
}

/// A simulated run's config in `dir` over `vars` (the variables file's text).
fn simulated(dir: &Path, vars: &str, iterations: u64) -> std::path::PathBuf {
    std::fs::write(dir.join("v.var"), vars).unwrap();
    let config = dir.join("x.toml");
    std::fs::write(
        &config,
        format!(
            "simulate = true\nvariables = \"v.var\"\nlog = \"x.log\"\niterations = {iterations}\n\
             A = {A}\ngamma = {GAMMA}\nalpha = {ALPHA}\nconcurrency = 1\nseed = 7\n"
        ),
    )
    .unwrap();
    config
}

const A: f64 = 30.0;
const GAMMA: f64 = 0.101;
const ALPHA: f64 = 0.602;

fn run_ok(config: &Path, extra: &[&str]) {
    let out = spsa().arg("run").arg(config).args(extra).output().unwrap();
    assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
}

/// The θ log's rows as numbers.
fn rows(log: &Path) -> Vec<Vec<f64>> {
    crate::run_common::log_text(log)
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect()
}

#[test]
fn an_extended_run_continues_along_the_same_gain_curves() {
    // (name, start, c_end, R_end, simul_elo); bounds ±1000.
    let vars = [
        ("a", 100.0, 100.0, 0.002, 1.0),
        ("b", -50.0, 40.0, 0.004, 2.0),
    ];
    let text = |n_scale: Option<(f64, f64)>| -> String {
        vars.iter()
            .map(|(name, start, c_end, r_end, elo)| {
                // The same curves planned for N' = 2N: c_end' = c_end·(N/N')^γ and R_end' such
                // that a_i = R_end·c_end²·(A+N)^α is unchanged.
                let (c, r) = match n_scale {
                    None => (*c_end, *r_end),
                    Some((n, n2)) => {
                        let c2 = c_end * (n / n2).powf(GAMMA);
                        let r2 = r_end * (c_end / c2).powi(2) * ((A + n) / (A + n2)).powf(ALPHA);
                        (c2, r2)
                    }
                };
                format!("{name},{start},-1000,1000,{c},{r},{elo}\n")
            })
            .collect()
    };
    let (n, n2) = (300_u64, 600_u64);

    // Planned for N, then extended to 2N in one step.
    let one = tempfile::tempdir().unwrap();
    let config = simulated(one.path(), &text(None), n);
    run_ok(&config, &[]);
    let log = one.path().join("x.log");
    let first = crate::run_common::log_text(&log);
    run_ok(&config, &["--resume", "--iterations", &n2.to_string()]);
    let extended = crate::run_common::log_text(&log);
    assert!(extended.starts_with(&first), "nothing applied changes");
    assert_eq!(rows(&log).len() as u64, n2);
    let checkpoint = std::fs::read_to_string(one.path().join("x.checkpoint.var")).unwrap();
    assert!(
        checkpoint.contains(&format!("#: iterations = {n2}\n")),
        "{checkpoint}"
    );
    assert!(
        checkpoint.contains(&format!("#: curve_iterations = {n}\n")),
        "{checkpoint}"
    );
    assert!(checkpoint.contains("#: finished = true\n"), "{checkpoint}");

    // Extended in two steps, with a plain resume between: the very same run.
    let two = tempfile::tempdir().unwrap();
    let config = simulated(two.path(), &text(None), n);
    run_ok(&config, &[]);
    run_ok(&config, &["--resume", "--iterations", "450"]);
    run_ok(&config, &["--resume"]);
    run_ok(&config, &["--resume", "--iterations", &n2.to_string()]);
    assert_eq!(
        crate::run_common::log_text(&two.path().join("x.log")),
        extended,
        "resuming an extended run is exact"
    );

    // A run planned for 2N from the start with the constants of those curves plays the same
    // games and so takes the same path (to the θ log's 4 decimals).
    let three = tempfile::tempdir().unwrap();
    let config = simulated(three.path(), &text(Some((n as f64, n2 as f64))), n2);
    run_ok(&config, &[]);
    let (got, want) = (rows(&log), rows(&three.path().join("x.log")));
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        for (x, y) in g.iter().zip(w) {
            assert!((x - y).abs() <= 2e-4, "row {}: {g:?} vs {w:?}", g[0]);
        }
    }
    // And the second half moved θ: the extension did something.
    assert_ne!(got[n as usize - 1][1..], got[n2 as usize - 1][1..]);
}
