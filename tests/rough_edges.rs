//! Bad input a new user tries (issue 18's rough edges): each must end the command before any
//! game with exit status 2 and one clear first line that says where the problem is.

mod match_common;

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
