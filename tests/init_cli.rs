//! `spsa init`: variables files from real engines' spin options (the bundled sparring engine and
//! Toga II), loaded back by the variables reader; bad option names are user errors that write
//! nothing.

use crate::match_common;

use std::path::Path;

use match_common::*;

#[test]
fn sparring_spins_become_variables_by_the_tune_rule() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.var");
    let o = run(&["init", "--engine", sparring(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("skipped"), "Hash is an engine control");
    let vars = spsa::vars::load(&out).unwrap();
    let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    assert!(!names.contains(&"Hash"), "{names:?}");
    assert_eq!(names.len(), 14, "{names:?}");
    let knight = vars.iter().find(|v| v.name == "KnightValue").unwrap();
    // Sparring declares KnightValue default 320, min 0, max 1200.
    assert_eq!(
        (
            knight.start,
            knight.min,
            knight.max,
            knight.c_end,
            knight.r_end
        ),
        (320.0, 0.0, 1200.0, 60.0, 0.002)
    );
    assert!(stdout(&o).contains("wrote 14 variables"), "{}", stdout(&o));
}

#[test]
fn toga_named_options_and_unknown_names() {
    let toga = "/usr/games/toga2";
    if !Path::new(toga).exists() {
        eprintln!("skipped: {toga} is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.var");
    let o = run(&[
        "init",
        "--engine",
        toga,
        "--option",
        "king safety",
        "--option",
        "Futility Margin",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let vars = spsa::vars::load(&out).unwrap();
    assert_eq!(vars.len(), 2);
    // The engine's spelling; Toga declares `King Safety` 100 in [0, 400].
    assert_eq!(vars[0].name, "King Safety");
    assert_eq!(
        (vars[0].start, vars[0].max, vars[0].c_end),
        (100.0, 400.0, 20.0)
    );
    assert_eq!(vars[1].name, "Futility Margin");
    assert_eq!(vars[1].c_end, 25.0);

    let bad = dir.path().join("bad.var");
    let o = run(&[
        "init",
        "--engine",
        toga,
        "--option",
        "Ponder",
        "-o",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is not a spin option"),
        "{}",
        stderr(&o)
    );
    assert!(!bad.exists(), "nothing written");
    let o = run(&[
        "init",
        "--engine",
        "/nonexistent/engine",
        "-o",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!bad.exists());
}

#[test]
fn settings_are_written_rounded_without_float_noise() {
    // A range of 17 gives c_end = 17/20, which floating point holds as 0.8500000000000001. A
    // range of 3 (Glaurung's `Minimum Split Depth` 4..7, Toga II's `NullMove Reduction`) gives
    // 3/20 = 0.15, below the rule's floor: OpenBench's lines keep half a unit, and so does init.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.var");
    let o = run(&[
        "init",
        "--engine",
        standin(),
        "--arg",
        "--spin",
        "--arg",
        "Minimum Split Depth=4:4:7",
        "--arg",
        "--spin",
        "--arg",
        "Split Width=20:3:20",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    for line in [
        "Minimum Split Depth,4,4,7,0.5,0.002,0",
        "Split Width,20,3,20,0.85,0.002,0",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in {text}");
    }
    assert!(
        stdout(&o).contains("Split Width: start 20, [3, 20], c_end 0.85, R_end 0.002"),
        "{}",
        stdout(&o)
    );
    let vars = spsa::vars::load(&out).unwrap();
    assert_eq!(vars[0].c_end, 0.5);
    assert!((vars[1].c_end - 0.85).abs() < 1e-12);
}

/// From an engine to a running tune in two commands: `spsa init --config` writes a config that
/// loads, names the engine's fixed options, the bundled book beside it, the limit, this
/// machine's cores and a [verify] SPRT, and plays as it is (its [verify] cut short here).
#[test]
fn init_writes_a_ready_config_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = spsa()
        .args([
            "init",
            "--engine",
            sparring(),
            "-o",
            "s.var",
            "--config",
            "tune.toml",
        ])
        .args(["--depth", "1", "--iterations", "4"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("spsa run tune.toml"), "{}", stdout(&o));
    let book = std::fs::read_to_string(d.join("balanced_8ply_large.epd")).unwrap();
    assert_eq!(
        book,
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("openings/balanced_8ply_large.epd")
        )
        .unwrap()
    );
    let text = std::fs::read_to_string(d.join("tune.toml")).unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    for want in [
        "\"Hash\" = 16".to_string(),
        "depth = 1".into(),
        "iterations = 4".into(),
        format!("concurrency = {cores}"),
        "sprt = \"0,5\"".into(),
        "book = \"balanced_8ply_large.epd\"".into(),
    ] {
        assert!(text.contains(&want), "no `{want}` in\n{text}");
    }
    // Every key has its comment.
    for line in text
        .lines()
        .filter(|l| l.contains(" = ") && !l.starts_with('"'))
    {
        if !line.starts_with("command") {
            assert!(line.contains('#'), "uncommented: {line}");
        }
    }
    let config = spsa::config::Config::load(&d.join("tune.toml")).unwrap();
    assert_eq!(config.schedule.iterations, 4);
    // Played as written, with its [verify] cut to a few pairs.
    std::fs::write(
        d.join("tune.toml"),
        text.replace("pairs = 2000", "pairs = 3"),
    )
    .unwrap();
    let o = spsa()
        .args(["run", "tune.toml"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let log = crate::run_common::log_text(&d.join("logs/tune.log"));
    assert_eq!(log.lines().count(), 1 + 4, "{log}");
    assert!(stdout(&o).contains("verdict"), "{}", stdout(&o));

    // Never overwritten; a different file where the book would go is refused; nothing written.
    let again = spsa()
        .args([
            "init",
            "--engine",
            sparring(),
            "-o",
            "t.var",
            "--config",
            "tune.toml",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("not overwritten"),
        "{}",
        stderr(&again)
    );
    assert!(
        !d.join("t.var").exists(),
        "checked before anything is written"
    );
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("balanced_8ply_large.epd"),
        "8/8/8/8/8/8/8/K6k w - -\n",
    )
    .unwrap();
    let o = spsa()
        .args([
            "init",
            "--engine",
            sparring(),
            "-o",
            "s.var",
            "--config",
            "t.toml",
        ])
        .current_dir(other.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!other.path().join("t.toml").exists() && !other.path().join("s.var").exists());
    // A bad clock is a usage error naming the flag.
    let o = spsa()
        .args([
            "init",
            "--engine",
            sparring(),
            "-o",
            "u.var",
            "--config",
            "u.toml",
            "--tc",
            "fast",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--tc `fast`"), "{}", stderr(&o));
    assert!(!d.join("u.toml").exists() && !d.join("u.var").exists());
}

/// A tune of 750 options on a real UCI engine, in the two commands a user types: `spsa init`
/// of the sparring engine with `--pst` (its 14 weights and its piece-square tables, 736
/// entries) and `spsa run` of the config it writes. Every game is played, every option reaches
/// the engines, and the tuned values of all 750 come out.
#[test]
fn a_tune_of_seven_hundred_fifty_options_plays_its_games() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = spsa()
        .args(["init", "--engine", sparring(), "--arg", "--pst"])
        .args(["-o", "s.var", "--config", "tune.toml"])
        .args(["--depth", "1", "--iterations", "3"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let vars = spsa::vars::load(&d.join("s.var")).unwrap();
    assert_eq!(vars.len(), 750);
    let knight_e4 = vars.iter().find(|v| v.name == "PstKnightMgE4").unwrap();
    // The built-in knight table has 18 on e4 (and 20 on e5), declared in [-300, 300].
    assert_eq!(
        (knight_e4.start, knight_e4.min, knight_e4.max),
        (18.0, -300.0, 300.0)
    );
    let text = std::fs::read_to_string(d.join("tune.toml")).unwrap();
    let text = text
        .replace("pairs = 2000", "pairs = 1")
        .replace("[games]\n", "[games]\npgn = \"games.pgn\"\n");
    std::fs::write(d.join("tune.toml"), text).unwrap();
    let o = spsa()
        .args(["run", "tune.toml", "--engine-log", "engines.log"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let log = std::fs::read_to_string(d.join("engines.log")).unwrap();
    let results = log.lines().filter(|l| l.contains(" < bestmove ")).count();
    assert!(results > 0, "no game was played");
    // The first game's engines get all 750 options; every one of them goes out.
    for v in &vars {
        let sent = format!("> setoption name {} value ", v.name);
        assert!(log.contains(&sent), "never sent: {}", v.name);
    }
    assert!(
        !log.contains("unknown option"),
        "the engine refused an option"
    );
    assert!(
        !log.contains("clamped"),
        "a value out of the declared range"
    );
    // Each game's PGN names 16 of the 750 values and counts the rest (the θ log has them).
    let pgn = std::fs::read_to_string(d.join("games.pgn")).unwrap();
    let white = pgn
        .lines()
        .find(|l| l.starts_with("[WhiteOptions "))
        .unwrap();
    assert!(white.ends_with("… and 734 more\"]"), "{white}");
    let o = spsa()
        .args(["report", "logs/tune.log", "--format", "csv"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = stdout(&o)
        .lines()
        .filter(|l| l.starts_with("Pst") || vars.iter().any(|v| l.starts_with(&v.name)))
        .count();
    assert_eq!(rows, 750, "{}", stdout(&o));
}
