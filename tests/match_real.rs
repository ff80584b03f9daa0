//! `spsa match` with the Debian engines (skipped when not installed): short matches complete
//! with sane counts and no faults.

use crate::match_common;

use std::path::Path;

use match_common::*;

fn installed(path: &str) -> bool {
    let ok = Path::new(path).exists();
    if !ok {
        eprintln!("{path} not installed; skipping");
    }
    ok
}

fn play(args: &[&str], pairs: u64) {
    let book = book();
    let pairs_text = pairs.to_string();
    let mut full = vec![
        "match",
        "--book",
        book.to_str().unwrap(),
        "--pairs",
        &pairs_text,
        "--concurrency",
        "2",
        "--seed",
        "11",
        "--max-plies",
        "300",
        "--progress",
        "0",
    ];
    full.extend(args);
    let o = run(&full);
    let out = stdout(&o);
    assert!(o.status.success(), "{args:?}: {out}{}", stderr(&o));
    let c = counts(&out);
    assert_consistent(&c);
    assert_eq!(c.pairs, pairs, "{out}");
    assert_eq!(c.faults, "none", "{out}");
    assert!(out.lines().any(|l| l.starts_with("Elo: ")), "{out}");
}

#[test]
fn stockfish_vs_stockfish_at_nodes() {
    let sf = "/usr/games/stockfish";
    if !installed(sf) {
        return;
    }
    play(
        &[
            "--engine1",
            sf,
            "--option",
            "Threads=1",
            "--option",
            "Hash=16",
            "--option1",
            "Skill Level=20",
            "--option2",
            "Skill Level=10",
            "--nodes",
            "2000",
        ],
        3,
    );
}

#[test]
fn toga_at_fixed_depth() {
    let toga = "/usr/games/toga2";
    if !installed(toga) {
        return;
    }
    // Toga II ignores `go nodes`: depth-limited games, its own book off.
    play(
        &[
            "--engine1",
            toga,
            "--option",
            "OwnBook=false",
            "--option",
            "Hash=16",
            "--depth",
            "4",
        ],
        2,
    );
}

#[test]
fn glaurung_one_thread_short_clock() {
    let glaurung = "/usr/games/glaurung";
    if !installed(glaurung) {
        return;
    }
    play(
        &[
            "--engine1",
            glaurung,
            "--option",
            "Threads=1",
            "--option",
            "Ponder=false",
            "--option",
            "OwnBook=false",
            "--option",
            "Hash=16",
            "--tc",
            "2000+20",
            // Glaurung spends its clock to the last few milliseconds; on a loaded machine (both
            // games of the pair run at once) a 50 ms margin is not always enough.
            "--time-margin",
            "1000",
        ],
        1,
    );
}

#[test]
fn stockfish_counts_a_clock_in_nodes_and_replays_the_same_games() {
    let sf = "/usr/games/stockfish";
    if !installed(sf) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let book = book();
    let mut games = Vec::new();
    for round in 0..2 {
        let pgn = dir.path().join(format!("nt{round}.pgn"));
        let log = dir.path().join(format!("nt{round}.log"));
        // A 0.3 s + 3 ms clock counted as 300 nodes a millisecond: about 100,000 nodes a game
        // for each side, whatever else the machine is doing.
        let o = run(&[
            "match",
            "--engine1",
            sf,
            "--option",
            "Threads=1",
            "--option",
            "Hash=16",
            "--tc",
            "300+3",
            "--nodestime",
            "300",
            "--book",
            book.to_str().unwrap(),
            "--pairs",
            "1",
            "--concurrency",
            "1",
            "--seed",
            "5",
            "--max-plies",
            "200",
            "--progress",
            "0",
            "--pgn",
            pgn.to_str().unwrap(),
            "--engine-log",
            log.to_str().unwrap(),
        ]);
        let out = stdout(&o);
        assert!(o.status.success(), "{out}{}", stderr(&o));
        assert!(out.contains("0.3+0.003 nodestime=300"), "{out}");
        assert_eq!(counts(&out).faults, "none", "{out}");
        let log = std::fs::read_to_string(&log).unwrap();
        assert!(
            log.lines()
                .filter(|l| l.contains("> setoption name nodestime value 300"))
                .count()
                >= 2,
            "both engines get the option: {log}"
        );
        assert_eq!(counts(&out).games, 2, "{out}");
        games.push(pgn_words_without_times(&pgn));
    }
    // The clock follows the nodes searched, not the wall time: the same games again.
    assert_eq!(games[0], games[1]);
}

#[test]
fn a_clock_in_nodes_refuses_an_engine_without_nodestime() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("m.pgn");
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--tc",
        "1000+10",
        "--nodestime",
        "300",
        "--pairs",
        "1",
        "--progress",
        "0",
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("does not declare the `nodestime` option"),
        "{err}"
    );
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--nodes",
        "100",
        "--nodestime",
        "300",
        "--pairs",
        "1",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--nodestime 300: counts a clock in nodes"),
        "{err}"
    );
}
