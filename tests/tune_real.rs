//! `spsa run` on real engine processes: the sparring engine, the misbehaving stand-in, and
//! Debian's Toga II and Glaurung.

use crate::standin;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SPARRING: &str = env!("CARGO_BIN_EXE_sparring");
const BOOK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/openings/balanced_6ply.epd");

use crate::run_common;
use run_common::{log_iterations, spsa_in as spsa, text};

/// A TOML config in a fresh folder, with `engine2` and `games` tables given by the caller.
fn setup(vars: &str, iterations: u64, concurrency: usize, tables: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.var"), vars).unwrap();
    std::fs::write(
        dir.path().join("t.toml"),
        format!(
            "simulate = false\nvariables = \"t.var\"\nlog = \"logs/t.log\"\ngame_log = \"logs/game_$THREAD.log\"\niterations = {iterations}\nA = 10\ngamma = 0.101\nalpha = 0.602\nconcurrency = {concurrency}\nseed = 5\n{tables}"
        ),
    )
    .unwrap();
    dir
}

fn sparring_tables(extra_games: &str) -> String {
    format!(
        "[engine1]\ncommand = \"{SPARRING}\"\n[games]\nbook = \"{BOOK}\"\ndepth = 1\nmax_plies = 300\npgn = \"logs/t.pgn\"\n{extra_games}"
    )
}

const MINORS: &str = "KnightValue,200,50,700,30,0.01,0\nBishopValue,200,50,700,30,0.01,0\n";

#[test]
fn sparring_run_survives_kill_9_and_resumes_to_a_complete_log() {
    let n = 30;
    let dir = setup(MINORS, n, 2, &sparring_tables(""));
    let mut child = Command::new(env!("CARGO_BIN_EXE_spsa"))
        .args(["run", "t.toml"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let log = dir.path().join("logs/t.log");
    let t = Instant::now();
    while !log.exists() || log_iterations(&log).len() < 6 {
        assert!(t.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let ck = std::fs::read_to_string(dir.path().join("logs/t.checkpoint.var")).unwrap();
    let applied: u64 = ck
        .lines()
        .find_map(|l| l.strip_prefix("#: applied = "))
        .unwrap()
        .parse()
        .unwrap();
    // A real run checkpoints after every pair: nothing but the pairs in flight is lost.
    assert!(
        applied + 2 >= log_iterations(&log).len() as u64,
        "checkpoint at {applied}"
    );

    let out = spsa(dir.path(), &["run", "t.toml", "--resume"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(log_iterations(&log), (1..=n).collect::<Vec<_>>());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("KnightValue") && stdout.contains("games: +"),
        "{stdout}"
    );
    // Every iteration's two games appear exactly once, in the PGN and in the game logs, and
    // no half-written line survived the kill.
    let pgn = std::fs::read_to_string(dir.path().join("logs/t.pgn")).unwrap();
    assert_eq!(pgn.matches("[Result ").count(), 2 * n as usize);
    for k in 1..=n {
        for g in [1, 2] {
            assert_eq!(
                pgn.matches(&format!("[Round \"{k}.{g}\"]")).count(),
                1,
                "round {k}.{g}"
            );
        }
    }
    assert!(pgn.contains("[WhiteOptions \"KnightValue="));
    let mut lines = 0;
    for slot in [1, 2] {
        let g = std::fs::read_to_string(dir.path().join(format!("logs/game_{slot}.log"))).unwrap();
        assert!(g.contains("θ+ KnightValue="), "game log {slot}: {g}");
        assert!(g.ends_with('\n'));
        for line in g.lines() {
            assert!(line.starts_with('[') && line.contains(" plies"), "{line}");
            lines += 1;
        }
    }
    assert_eq!(lines, 2 * n as usize, "one game-log line per game");
}

#[test]
fn a_crashing_engine_costs_games_not_the_run() {
    let tables = format!(
        "[engine2]\ncommand = \"{}\"\nargs = [\"--crash-after\", \"12\", \"--spin\", \"KnightValue=320:0:1000\", \"--spin\", \"BishopValue=330:0:1000\"]\n{}",
        standin::standin(),
        sparring_tables("")
    );
    let dir = setup(MINORS, 8, 1, &tables);
    let out = spsa(dir.path(), &["run", "t.toml"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("faults: crash "), "{stdout}");
    assert_eq!(log_iterations(&dir.path().join("logs/t.log")).len(), 8);
    let pgn = std::fs::read_to_string(dir.path().join("logs/t.pgn")).unwrap();
    assert!(
        pgn.contains("[Termination \"abandoned\"]"),
        "a crash ends a game as abandoned"
    );
    assert!(
        pgn.contains("[Termination \"normal\"]") || pgn.contains("[Termination \"adjudication\"]")
    );
}

#[test]
fn an_engine_that_fails_every_game_stops_the_run_with_a_checkpoint() {
    let tables = format!(
        "[engine2]\ncommand = \"{}\"\nargs = [\"--illegal-after\", \"0\", \"--spin\", \"KnightValue=320:0:1000\", \"--spin\", \"BishopValue=330:0:1000\"]\n{}",
        standin::standin(),
        sparring_tables("")
    );
    let dir = setup(MINORS, 50, 1, &tables);
    let out = spsa(dir.path(), &["run", "t.toml"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("every game of the last 5 pairs ended in an engine fault"),
        "{stderr}"
    );
    assert!(stderr.contains("--resume"), "{stderr}");
    let ck = std::fs::read_to_string(dir.path().join("logs/t.checkpoint.var")).unwrap();
    // The fifth faulty pair is applied, counted and written before the stop: five pairs,
    // ten faults, ten games in the PGN.
    assert!(
        ck.contains("applied = 5\n") && ck.contains("\"illegal move\" = 10"),
        "{ck}"
    );
    let pgn = std::fs::read_to_string(dir.path().join("logs/t.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Result ").count(),
        10,
        "every game written was counted"
    );
}

#[test]
fn bad_engines_and_options_are_rejected_before_any_file_is_written() {
    let missing = setup(
        MINORS,
        5,
        1,
        &sparring_tables("").replace(SPARRING, "/nonexistent/engine"),
    );
    let out = spsa(missing.path(), &["run", "t.toml"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/nonexistent/engine"), "{err}");
    assert!(!missing.path().join("logs").exists());

    let unknown = setup(
        "NoSuchWeight,5,0,10,1,0.002,0\n",
        5,
        1,
        &sparring_tables(""),
    );
    let out = spsa(unknown.path(), &["run", "t.toml"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("NoSuchWeight") && err.contains("KnightValue"),
        "names the option and lists the engine's: {err}"
    );
    assert!(!unknown.path().join("logs").exists());

    let out_of_range = setup(
        "KnightValue,200,50,5000,30,0.01,0\n",
        5,
        1,
        &sparring_tables(""),
    );
    let out = spsa(out_of_range.path(), &["run", "t.toml"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(!out_of_range.path().join("logs").exists());
}

fn require(engine: &str) {
    assert!(
        Path::new(engine).exists() || std::env::var_os("SPSA_SKIP_REAL_ENGINES").is_some(),
        "{engine} is not installed (apt-get install toga2 glaurung stockfish), or set SPSA_SKIP_REAL_ENGINES=1"
    );
}

#[test]
fn toga_ii_tunes_at_a_fixed_depth() {
    require("/usr/games/toga2");
    if !Path::new("/usr/games/toga2").exists() {
        return;
    }
    let tables = format!(
        "[engine1]\ncommand = \"/usr/games/toga2\"\n[engine1.options]\nOwnBook = false\nHash = 4\n[games]\nbook = \"{BOOK}\"\ndepth = 2\nmax_plies = 200\n[adjudication]\nwin_score_limit = 500\nwin_move_limit = 3\n"
    );
    let dir = setup(
        "King Safety,100,0,400,8,0.002,0\nPassed Pawns,100,0,400,8,0.002,0\n",
        3,
        2,
        &tables,
    );
    let out = spsa(dir.path(), &["run", "t.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("King Safety") && !stdout.contains("faults"),
        "{stdout}"
    );
    assert_eq!(log_iterations(&dir.path().join("logs/t.log")).len(), 3);
}

#[test]
fn glaurung_tunes_on_a_short_clock() {
    require("/usr/games/glaurung");
    if !Path::new("/usr/games/glaurung").exists() {
        return;
    }
    let tables = format!(
        "[engine1]\ncommand = \"/usr/games/glaurung\"\n[engine1.options]\nThreads = 1\nPonder = false\nOwnBook = false\nHash = 4\n[games]\nbook = \"{BOOK}\"\nbase_time_ms = 600\ninc_time_ms = 10\ntime_margin_ms = 200\nmax_plies = 160\n[adjudication]\nwin_score_limit = 500\nwin_move_limit = 3\ndraw_score_limit = 10\ndraw_move_limit = 6\n"
    );
    let dir = setup(
        "Mobility (Middle Game),100,0,200,8,0.002,0\nCowardice,100,0,200,8,0.002,0\n",
        2,
        2,
        &tables,
    );
    let out = spsa(dir.path(), &["run", "t.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Mobility (Middle Game)"), "{stdout}");
    assert_eq!(log_iterations(&dir.path().join("logs/t.log")).len(), 2);
}
