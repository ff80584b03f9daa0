//! The engine log (`--engine-log FILE`, `[games] engine_log`): every line to and from every
//! engine, with a timestamp, the slot, the engine's name and the direction, from `spsa match`
//! with two slots, `spsa run` (config key and flag) and `spsa verify`; an unwritable path is
//! refused before any game.

use crate::match_common;

use std::collections::BTreeSet;
use std::path::Path;

use match_common::*;

/// One parsed line of the log.
#[derive(Debug)]
struct Entry {
    ms: f64,
    slot: usize,
    engine: String,
    to_engine: bool,
    text: String,
}

/// Every line of the log, each checked for its form: a header line (`# spsa engine log ...`)
/// before the entries of each session, then `ms slot engine >|< line`, with the times not going
/// back within a session.
fn read_log(path: &Path) -> (Vec<Entry>, usize) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "whole lines only");
    let mut entries = Vec::new();
    let mut sessions = 0;
    let mut last_ms = 0.0;
    for line in text.lines() {
        if line.starts_with('#') {
            assert!(
                line.starts_with("# spsa engine log, opened at Unix time "),
                "{line}"
            );
            sessions += 1;
            last_ms = 0.0;
            continue;
        }
        assert!(sessions > 0, "an entry before the header: {line}");
        let f: Vec<&str> = line.splitn(5, ' ').collect();
        assert_eq!(f.len(), 5, "five fields: {line}");
        let ms: f64 = f[0].parse().unwrap_or_else(|_| panic!("time: {line}"));
        assert!(
            ms >= 0.0 && f[0].split_once('.').is_some_and(|(_, d)| d.len() == 3),
            "{line}"
        );
        // Lines of different threads may reach the file a little out of order; by more than a
        // second would be a broken clock.
        assert!(ms + 1000.0 >= last_ms, "time goes back: {line}");
        last_ms = last_ms.max(ms);
        let slot: usize = f[1].parse().unwrap_or_else(|_| panic!("slot: {line}"));
        assert!(slot >= 1, "{line}");
        assert!(!f[2].is_empty(), "{line}");
        assert!(f[3] == ">" || f[3] == "<", "direction: {line}");
        assert!(!f[4].contains('\r'), "{line}");
        entries.push(Entry {
            ms,
            slot,
            engine: f[2].to_string(),
            to_engine: f[3] == ">",
            text: f[4].to_string(),
        });
    }
    (entries, sessions)
}

/// Each engine of each slot sent and received the whole protocol of a game: `uci`/`uciok`,
/// `position`, `go`, `bestmove`.
fn assert_every_exchange(entries: &[Entry], slots: usize, engines: &[&str]) {
    for slot in 1..=slots {
        for engine in engines {
            let of = |to_engine: bool, word: &str| {
                entries.iter().any(|e| {
                    e.slot == slot
                        && e.engine == *engine
                        && e.to_engine == to_engine
                        && e.text.split(' ').next() == Some(word)
                })
            };
            for (to_engine, word) in [
                (true, "uci"),
                (false, "uciok"),
                (true, "isready"),
                (false, "readyok"),
                (true, "ucinewgame"),
                (true, "position"),
                (true, "go"),
                (false, "info"),
                (false, "bestmove"),
            ] {
                assert!(
                    of(to_engine, word),
                    "slot {slot}, {engine}: no `{word}` {}",
                    if to_engine { "sent" } else { "read" }
                );
            }
        }
    }
}

#[test]
fn a_match_logs_every_line_of_both_engines_in_both_slots() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("engines.log");
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--option2",
        "KnightValue=200",
        "--pairs",
        "2",
        "--concurrency",
        "2",
        "--book",
        book().to_str().unwrap(),
        "--depth",
        "2",
        "--seed",
        "3",
        "--engine-log",
        log.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let (entries, sessions) = read_log(&log);
    assert_eq!(sessions, 1);
    let slots: BTreeSet<usize> = entries.iter().map(|e| e.slot).collect();
    assert_eq!(slots, BTreeSet::from([1, 2]));
    let engines: BTreeSet<&str> = entries.iter().map(|e| e.engine.as_str()).collect();
    assert_eq!(engines, BTreeSet::from(["sparring.1", "sparring.2"]));
    assert_every_exchange(&entries, 2, &["sparring.1", "sparring.2"]);
    // The options as sent, and the quit at the end.
    assert!(
        entries
            .iter()
            .any(|e| e.engine == "sparring.2" && e.text == "setoption name KnightValue value 200"),
        "side B's option"
    );
    assert!(
        !entries
            .iter()
            .any(|e| e.engine == "sparring.1" && e.to_engine && e.text.contains("KnightValue")),
        "side A plays the defaults"
    );
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.to_engine && e.text == "quit")
            .count(),
        4,
        "each of the four engines quits once"
    );
    // Every game's moves: as many `bestmove` lines as `go` lines.
    let count = |to_engine: bool, prefix: &str| {
        entries
            .iter()
            .filter(|e| e.to_engine == to_engine && e.text.starts_with(prefix))
            .count()
    };
    assert_eq!(count(true, "go "), count(false, "bestmove "));
    assert!(entries.iter().all(|e| e.ms < 600_000.0));
}

#[test]
fn an_unwritable_engine_log_is_refused_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("no-such-folder/deeper");
    std::fs::write(dir.path().join("no-such-folder"), "a file, not a folder").unwrap();
    let log = bad.join("engines.log");
    let pgn = dir.path().join("games.pgn");
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--pairs",
        "1",
        "--depth",
        "1",
        "--engine-log",
        log.to_str().unwrap(),
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("--engine-log") && err.contains(log.to_str().unwrap()),
        "{err}"
    );
    assert!(!pgn.exists(), "no game was played");
}

/// The config's `[games] engine_log` in `spsa run` (relative to the config's folder), the
/// `--engine-log` flag overriding it, and the `[verify]` match after the tune logged too.
#[test]
fn spsa_run_logs_through_the_config_key_and_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("conf")).unwrap();
    std::fs::write(d.join("conf/t.var"), "KnightValue,250,50,700,30,0.01,0\n").unwrap();
    let config = format!(
        "variables = \"t.var\"\nlog = \"../logs/t.log\"\niterations = 2\nA = 1\ngamma = 0.101\n\
         alpha = 0.602\nconcurrency = 2\nseed = 5\n\
         [engine1]\ncommand = {:?}\n\
         [games]\nbook = {:?}\ndepth = 1\nmax_plies = 60\nengine_log = \"../logs/engines.log\"\n\
         [verify]\npairs = 1\n",
        sparring(),
        book()
    );
    std::fs::write(d.join("conf/t.toml"), config).unwrap();
    let o = spsa()
        .args(["run", "conf/t.toml"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // The key is relative to the config's folder: logs/ beside conf/.
    let log = d.join("logs/engines.log");
    let (entries, sessions) = read_log(&log);
    assert_eq!(sessions, 2, "the tune, then its verification, appended");
    assert_every_exchange(&entries, 2, &["Engine1", "Engine2"]);
    assert!(
        entries
            .iter()
            .any(|e| e.to_engine && e.text.starts_with("setoption name KnightValue value ")),
        "the tuned option"
    );

    // The flag wins over the key.
    let elsewhere = d.join("flag.log");
    let o = spsa()
        .args(["run", "conf/t.toml", "--fresh", "--engine-log"])
        .arg(&elsewhere)
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (entries, _) = read_log(&elsewhere);
    assert_every_exchange(&entries, 2, &["Engine1", "Engine2"]);
    assert_eq!(read_log(&log).1, 2, "the config's log is left alone");

    // An unwritable key is refused before the run starts, naming the path (exit 2).
    std::fs::write(d.join("logs/engines.log"), "").unwrap();
    let text = std::fs::read_to_string(d.join("conf/t.toml"))
        .unwrap()
        .replace("../logs/engines.log", "../logs/engines.log/inside");
    std::fs::write(d.join("conf/t.toml"), text).unwrap();
    let o = spsa()
        .args(["run", "conf/t.toml", "--fresh"])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("engine log") && stderr(&o).contains("engines.log/inside"),
        "{}",
        stderr(&o)
    );
}

/// `spsa verify --engine-log`.
#[test]
fn spsa_verify_logs_its_games() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("t.var"), "KnightValue,250,50,700,30,0.01,0\n").unwrap();
    std::fs::write(d.join("tuned.var"), "KnightValue,320,50,700,30,0.01,0\n").unwrap();
    std::fs::write(
        d.join("t.toml"),
        format!(
            "variables = \"t.var\"\nlog = \"t.log\"\niterations = 2\nA = 1\ngamma = 0.101\n\
             alpha = 0.602\n[engine1]\ncommand = {:?}\n[games]\nbook = {:?}\ndepth = 1\n\
             max_plies = 60\n",
            sparring(),
            book()
        ),
    )
    .unwrap();
    let o = spsa()
        .args([
            "verify",
            "t.toml",
            "--values",
            "tuned.var",
            "--pairs",
            "1",
            "--all-openings",
            "--engine-log",
            "v.log",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (entries, _) = read_log(&d.join("v.log"));
    let engines: BTreeSet<&str> = entries.iter().map(|e| e.engine.as_str()).collect();
    assert_eq!(engines.len(), 2, "{engines:?}");
    let names: Vec<&str> = engines.into_iter().collect();
    assert_every_exchange(&entries, 1, &names);
    assert!(
        entries
            .iter()
            .any(|e| e.text == "setoption name KnightValue value 320"),
        "the tuned side's value"
    );
}
