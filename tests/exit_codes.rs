//! Every command's user errors exit with status 2 and one clear line on stderr that names what
//! to fix (the file, the line, the field or the flag): a missing file, a bad field, a bad flag
//! value, a database that cannot be reached, an engine that does not exist.

use std::path::Path;
use std::process::Command;

/// Run `spsa ARGS` in `dir`; returns the exit code and stderr.
fn spsa(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(args)
        .current_dir(dir)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exit 2 and one line, `spsa: ...`, naming every one of `needles`, with no part said twice
/// (an error that prints its cause in its own message and again as its source).
fn assert_user_error(dir: &Path, args: &[&str], needles: &[&str]) {
    let (code, stderr) = spsa(dir, args);
    let what = format!("spsa {}", args.join(" "));
    assert_eq!(code, Some(2), "{what}: stderr:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: not one line:\n{stderr}");
    let line = lines[0];
    assert!(line.starts_with("spsa: "), "{what}: {line}");
    for needle in needles {
        assert!(line.contains(needle), "{what}: `{needle}` not in: {line}");
    }
    let parts: Vec<&str> = line.split(": ").collect();
    for pair in parts.windows(2) {
        assert_ne!(pair[0], pair[1], "{what}: said twice: {line}");
    }
}

/// A flag value the parser refuses: exit 2, its first line naming the flag.
fn assert_usage_error(dir: &Path, args: &[&str], flag: &str) {
    let (code, stderr) = spsa(dir, args);
    let what = format!("spsa {}", args.join(" "));
    assert_eq!(code, Some(2), "{what}: stderr:\n{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: ") && first.contains(flag),
        "{what}: {stderr}"
    );
}

/// A folder with a simulated config and its variables file, and a few bad inputs.
fn inputs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "sim.var",
            "# name, start, min, max, c_end, R_end, simul_elo\nA,50,0,100,5,0.002,1\n",
        ),
        (
            "sim.conf",
            "[Main]\nSimulate = 1\nVariables = sim.var\nLog = sim.log\nIterations = 20\nA = 2\nGamma = 0.101\nAlpha = 0.602\n",
        ),
        (
            "bad_field.conf",
            "[Main]\nSimulate = 1\nVariables = sim.var\nLog = bad.log\nIterations = many\n",
        ),
        (
            "bad_field.toml",
            "simulate = true\nvariables = \"sim.var\"\nlog = \"bad.log\"\niterations = \"many\"\nA = 2\ngamma = 0.101\nalpha = 0.602\n",
        ),
        (
            "no_vars.conf",
            "[Main]\nSimulate = 1\nVariables = gone.var\nLog = gone.log\nIterations = 20\nA = 2\nGamma = 0.101\nAlpha = 0.602\n",
        ),
        ("bad.var", "A,50,0,100,5,0.002,1\nB,fifty,0,100,5,0.002,1\n"),
        ("empty.coef", "this is not a coefficient file\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn run_and_simulate() {
    let dir = inputs();
    let d = dir.path();
    assert_user_error(
        d,
        &["run", "missing.toml"],
        &["missing.toml", "cannot read"],
    );
    assert_user_error(
        d,
        &["run", "bad_field.toml"],
        &["bad_field.toml:4", "\"many\""],
    );
    assert_user_error(d, &["run", "no_vars.conf"], &["gone.var"]);
    assert_usage_error(
        d,
        &["run", "sim.conf", "--concurrency", "0"],
        "--concurrency",
    );
    assert_user_error(
        d,
        &["simulate", "bad_field.conf"],
        &["bad_field.conf:5", "Iterations"],
    );
    assert_user_error(
        d,
        &["simulate", "sim.conf", "--iterations", "0"],
        &["sim.conf", "--iterations"],
    );
    assert_usage_error(
        d,
        &["simulate", "sim.conf", "--engine-log", "e.log"],
        "--engine-log",
    );
}

#[test]
fn plan_and_report() {
    let dir = inputs();
    let d = dir.path();
    assert_user_error(
        d,
        &["plan", "missing.conf", "-o", "out.var"],
        &["missing.conf"],
    );
    assert_user_error(
        d,
        &["plan", "sim.conf", "--runs", "1", "-o", "out.var"],
        &["sim.conf", "--runs"],
    );
    assert_user_error(
        d,
        &["plan", "sim.conf", "--probe-loss", "0", "-o", "out.var"],
        &["sim.conf", "--probe-loss 0: must be a positive number"],
    );
    assert_user_error(
        d,
        &[
            "plan",
            "sim.conf",
            "--variables",
            "missing.var",
            "-o",
            "out.var",
        ],
        &["missing.var"],
    );
    assert_user_error(
        d,
        &[
            "plan",
            "sim.conf",
            "--variables",
            "bad.var",
            "-o",
            "out.var",
        ],
        &["bad.var:2", "start"],
    );
    assert!(
        !d.join("out.var").exists(),
        "nothing is written on bad input"
    );
    assert_user_error(d, &["report", "missing.log"], &["missing.log"]);
    assert_usage_error(d, &["report", "sim.log", "--format", "yaml"], "--format");
}

#[test]
fn match_and_verify() {
    let dir = inputs();
    let d = dir.path();
    let sparring = env!("CARGO_BIN_EXE_sparring");
    assert_user_error(
        d,
        &["match", "--engine1", "/nowhere/engine", "--depth", "1"],
        &["/nowhere/engine", "engine not found"],
    );
    assert_user_error(
        d,
        &[
            "match",
            "--engine1",
            "no_such_engine_xyz",
            "--depth",
            "1",
            "--progress",
            "0",
        ],
        &["no_such_engine_xyz", "cannot start engine"],
    );
    assert_user_error(
        d,
        &[
            "match",
            "--engine1",
            sparring,
            "--tc",
            "soon",
            "--progress",
            "0",
        ],
        &["--tc `soon`"],
    );
    assert_user_error(
        d,
        &[
            "match",
            "--engine1",
            sparring,
            "--depth",
            "1",
            "--book",
            "missing.epd",
        ],
        &["missing.epd", "book not found"],
    );
    // An option the engine does not have, sent once at start (it comes back through the
    // engine's transparent error): named at its flag. The message lists the engine's options
    // on the lines after the first.
    let (code, stderr) = spsa(
        d,
        &[
            "match",
            "--engine1",
            sparring,
            "--option",
            "NoSuchOption=1",
            "--depth",
            "1",
            "--pairs",
            "1",
            "--progress",
            "0",
        ],
    );
    assert_eq!(code, Some(2), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("spsa: --option NoSuchOption: "),
        "{stderr}"
    );
    assert_user_error(d, &["verify", "missing.toml"], &["missing.toml"]);
    assert_user_error(
        d,
        &["verify", "sim.conf"],
        &["sim.conf", "no engines configured"],
    );
    assert_usage_error(
        d,
        &["verify", "sim.conf", "--against", "nobody"],
        "--against",
    );
}

#[test]
fn database_commands_with_no_server_there() {
    let dir = inputs();
    let d = dir.path();
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let url = "postgres://spsa@127.0.0.1:1/spsa";
    for args in [
        vec!["worker", "--db", url],
        vec!["status", "--db", url],
        vec!["prune", "--db", url, "--older-than", "3"],
        vec!["modify", "--db", url, "--run", "1", "--throughput", "50"],
        vec!["approve", "--db", url, "1"],
        vec!["reject", "--db", url, "1", "--reason", "no"],
        vec!["run", "sim.conf", "--db", url],
    ] {
        assert_user_error(d, &args, &["127.0.0.1:1", "cannot connect"]);
    }
    assert_user_error(d, &["status", "--db", "mysql://x"], &["mysql://x"]);
    assert_usage_error(
        d,
        &["prune", "--db", url, "--older-than", "soon"],
        "--older-than",
    );
    for share in ["0", "-5", "1001", "lots"] {
        let flag = format!("--throughput={share}");
        assert_usage_error(
            d,
            &["modify", "--db", url, "--run", "1", &flag],
            "--throughput",
        );
        assert_usage_error(d, &["run", "sim.conf", "--db", url, &flag], "--throughput");
    }
}

#[test]
fn serve_init_positions_coefficients_completions_man() {
    let dir = inputs();
    let d = dir.path();
    assert_user_error(d, &["serve", "missing.log"], &["missing.log"]);
    assert_user_error(
        d,
        &["serve", "sim.conf", "--listen", "nowhere"],
        &["--listen", "nowhere"],
    );
    assert_user_error(
        d,
        &["init", "--engine", "/nowhere/engine", "-o", "x.var"],
        &["/nowhere/engine", "cannot start engine"],
    );
    assert_user_error(
        d,
        &[
            "init",
            "--engine",
            env!("CARGO_BIN_EXE_sparring"),
            "-o",
            "x.var",
            "--depth",
            "3",
        ],
        &["--config"],
    );
    assert_user_error(
        d,
        &["positions", "missing.pgn", "-o", "x.epd"],
        &["missing.pgn"],
    );
    assert_user_error(
        d,
        &["coefficients", "missing.coef", "out.coefb"],
        &["missing.coef"],
    );
    assert_user_error(
        d,
        &["coefficients", "empty.coef", "out.coefb"],
        &["empty.coef"],
    );
    assert_usage_error(d, &["completions", "tcsh"], "tcsh");
    assert_user_error(
        d,
        &["man", "--dir", "missing"],
        &["--dir missing", "not a folder"],
    );
}
