//! `spsa match --sprt`: the test stops a real sparring match as soon as it decides, says which
//! hypothesis it accepted with the LLR and its bounds, and rejects malformed bounds (exit 2).

use crate::match_common;

use match_common::*;

/// Defaults against minor pieces worth 60 centipawns, depth 1; the weak set is side A when
/// `weak_first`.
fn sprt_match(weak_first: bool, sprt: &str) -> std::process::Output {
    let book = book();
    let (o1, o2) = if weak_first {
        ("--option1", "--option1")
    } else {
        ("--option2", "--option2")
    };
    run(&[
        "match",
        "--engine1",
        sparring(),
        o1,
        "KnightValue=60",
        o2,
        "BishopValue=60",
        "--pairs",
        "300",
        "--concurrency",
        "2",
        "--book",
        book.to_str().unwrap(),
        "--depth",
        "1",
        "--seed",
        "5",
        "--sprt",
        sprt,
        "--progress",
        "0",
    ])
}

/// The LLR printed on a result line `SPRT ...: LLR 3.01 [-2.94, 2.94]: H1 accepted`.
fn llr(out: &str) -> f64 {
    let line = out.lines().find(|l| l.starts_with("SPRT ")).unwrap();
    let after = line.split("LLR ").nth(1).unwrap();
    after.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn a_big_difference_is_decided_early_both_ways() {
    let o = sprt_match(false, "0,50");
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let c = counts(&out);
    assert_consistent(&c);
    assert!(
        out.contains("SPRT nElo [0, 50], alpha 0.05, beta 0.05: LLR "),
        "{out}"
    );
    assert!(out.contains("[-2.94, 2.94]: H1 accepted"), "{out}");
    assert!(llr(&out) >= 2.944, "{out}");
    assert!(c.pairs < 300, "stopped early: {out}");
    // The weak side as A: H0 (no gain) is accepted.
    let o = sprt_match(true, "0,50,0.1,0.1");
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("[-2.20, 2.20]: H0 accepted"), "{out}");
    assert!(llr(&out) <= -2.197, "{out}");
    assert!(counts(&out).pairs < 300, "{out}");
}

#[test]
fn malformed_bounds_are_user_errors() {
    for (bad, want) in [
        ("2,0", "elo0 (2) must be less than elo1 (0)"),
        ("0", "expected elo0,elo1"),
        ("0,2,0.05,1", "beta (1) must lie"),
    ] {
        let o = sprt_match(false, bad);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{bad}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "nothing played: {}", stdout(&o));
    }
}
