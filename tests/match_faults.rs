//! `spsa match` against the misbehaving stand-in engine: every faulty game ends with the right
//! reason and result, the engine is restarted, and the match plays all its pairs; an engine
//! that fails every game stops the match; one that cannot start is a clean exit 2.

use crate::match_common;

use std::process::Output;

use match_common::*;

/// Sparring (side A) against the stand-in with `flags` (side B), `pairs` pairs at depth 1 (or
/// at the clock `extra` sets with `--tc`).
fn versus_standin(flags: &[&str], pairs: u32, extra: &[&str]) -> (Output, String) {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("g.pgn");
    let pairs = pairs.to_string();
    let mut args = vec![
        "match",
        "--engine1",
        sparring(),
        "--engine2",
        standin(),
        "--pairs",
        &pairs,
        "--max-plies",
        "60",
        "--seed",
        "1",
        "--progress",
        "0",
        "--pgn",
        pgn.to_str().unwrap(),
    ];
    if !extra.contains(&"--tc") {
        args.extend(["--depth", "1"]);
    }
    let arg2: Vec<String> = flags.iter().map(|f| format!("--arg2={f}")).collect();
    args.extend(arg2.iter().map(String::as_str));
    args.extend(extra);
    let o = run(&args);
    let text = std::fs::read_to_string(&pgn).unwrap_or_default();
    (o, text)
}

/// Every game ended by the stand-in's fault of `kind`, with `termination` and `comment` in the
/// PGN, and was won by the sparring engine; all pairs were played.
fn assert_every_game_faulted(
    flags: &[&str],
    extra: &[&str],
    kind: &str,
    termination: &str,
    comment: &str,
) {
    let (o, pgn) = versus_standin(flags, 2, &[&["--max-faulty-pairs", "100"], extra].concat());
    let out = stdout(&o);
    assert!(o.status.success(), "{flags:?}: {out}{}", stderr(&o));
    let c = counts(&out);
    assert_consistent(&c);
    assert_eq!(c.pairs, 2, "{flags:?}: all pairs played\n{out}");
    assert_eq!(c.wins, 4, "{flags:?}: the faulting engine loses\n{out}");
    // Only this kind: a fault that left the process unusable and was not restarted would show
    // up as `startup` faults in the following games.
    assert_eq!(
        c.faults,
        format!("uci-standin: {kind} 4"),
        "{flags:?}\n{out}"
    );
    assert_eq!(
        tags(&pgn, "Termination"),
        vec![termination; 4],
        "{flags:?}\n{pgn}"
    );
    let flat = pgn.replace('\n', " ");
    assert_eq!(
        flat.matches(comment).count(),
        4,
        "{flags:?}: `{comment}` in\n{pgn}"
    );
    // Sparring is White in game 1 of each pair, Black in game 2.
    let results = tags(&pgn, "Result");
    let whites = tags(&pgn, "White");
    for (r, w) in results.iter().zip(&whites) {
        let want = if w == "sparring" { "1-0" } else { "0-1" };
        assert_eq!(r, want, "{flags:?}\n{pgn}");
    }
}

#[test]
fn crash_is_a_disconnect_loss_and_the_engine_restarts() {
    assert_every_game_faulted(
        &["--crash-after", "2"],
        &[],
        "crash",
        "abandoned",
        "disconnects}",
    );
}

#[test]
fn hang_is_a_stall_loss_and_the_engine_restarts() {
    assert_every_game_faulted(
        &["--hang-after", "2"],
        &["--stall-timeout", "300"],
        "stall",
        "stalled connection",
        "connection stalls}",
    );
}

/// Clock games keep their rules with blocking reads: a move past the clock and its margin loses
/// on time, and a search that runs on is stopped at the clock's deadline (time left + margin +
/// the 1 s stall slack) and loses as a stall, the engine kept (it obeyed `stop`).
#[test]
fn clock_overruns_lose_on_time_and_long_stalls_are_stopped() {
    assert_every_game_faulted(
        &["--think", "400"],
        &["--tc", "300+0"],
        "time forfeit",
        "time forfeit",
        "loses on time}",
    );
    let t = std::time::Instant::now();
    assert_every_game_faulted(
        &["--think", "5000"],
        &["--tc", "300+0"],
        "stall",
        "stalled connection",
        "connection stalls}",
    );
    // Four games, one after another, each stopped 300 + 50 + 1000 ms into the stand-in's first
    // search (sparring's first move takes ~10 ms): well under the 5 s each search would take.
    assert!(
        t.elapsed() < std::time::Duration::from_secs(12),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn illegal_move_is_a_loss() {
    assert_every_game_faulted(
        &["--illegal-after", "2"],
        &[],
        "illegal move",
        "rules infraction",
        "makes an illegal move",
    );
}

#[test]
fn no_move_with_legal_moves_is_a_loss() {
    assert_every_game_faulted(
        &["--none-after", "2"],
        &[],
        "no move",
        "rules infraction",
        "claims no move while legal moves exist}",
    );
}

#[test]
fn garbage_and_deep_info_are_harmless() {
    for flags in [&["--garbage"][..], &["--deep-info"][..]] {
        let (o, pgn) = versus_standin(flags, 2, &[]);
        let out = stdout(&o);
        assert!(o.status.success(), "{flags:?}: {out}{}", stderr(&o));
        let c = counts(&out);
        assert_consistent(&c);
        assert_eq!(c.pairs, 2, "{flags:?}");
        assert_eq!(c.faults, "none", "{flags:?}\n{out}");
        assert_eq!(tags(&pgn, "Result").len(), 4);
        for t in tags(&pgn, "Termination") {
            assert!(
                t == "normal" || t == "adjudication",
                "{flags:?}: {t}\n{pgn}"
            );
        }
    }
}

#[test]
fn engine_failing_every_game_stops_the_match() {
    let (o, pgn) = versus_standin(&["--crash-after", "0"], 20, &[]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains("every game of the last 5 pairs ended in an engine fault"),
        "{err}"
    );
    // The results so far are still printed, and what was played is what was counted: the
    // fifth faulty pair is in the results as in the PGN (ten games).
    assert!(err.contains("match stopped after 5 of 20 pairs"), "{err}");
    let c = counts(&out);
    assert_consistent(&c);
    assert_eq!(c.pairs, 5);
    assert_eq!(c.faults, "uci-standin: crash 10");
    assert_eq!(tags(&pgn, "Result").len(), 10);
    assert!(tags(&pgn, "Termination").iter().all(|t| t == "abandoned"));
}

#[test]
fn slow_uciok_is_a_clean_startup_error() {
    let (o, _) = versus_standin(
        &["--slow-uciok", "3000"],
        2,
        &["--handshake-timeout", "300"],
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("spsa: cannot start engine `uci-standin`"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");
}
