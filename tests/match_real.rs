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
