//! Held-out openings end to end with the sparring engine: a tune plays only its part of the
//! book, its verification only the other part (by seed, across a resume that changed the
//! config, with `--iteration K`), checked on the openings the PGN files show were played.

use crate::match_common;

use std::collections::BTreeSet;
use std::path::Path;

use match_common::*;

const MINORS: &str = "KnightValue,150,50,700,30,0.01,0\nBishopValue,150,50,700,30,0.01,0\n";

/// A folder with a 10-opening book, `minors.var` and `t.toml` (sparring at depth 1, seed 5),
/// `extra` appended to its `[games]` table.
fn setup(iterations: u64, pairs: u64, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_book(d, "ten.epd", 10);
    std::fs::write(d.join("minors.var"), MINORS).unwrap();
    std::fs::write(
        d.join("t.toml"),
        format!(
            "variables = \"minors.var\"\nlog = \"t.log\"\niterations = {iterations}\n\
             pairs_per_iteration = {pairs}\nA = 10\ngamma = 0.101\nalpha = 0.602\nconcurrency = 2\n\
             seed = 5\n[engine1]\ncommand = {:?}\n[games]\nbook = \"ten.epd\"\ndepth = 1\n\
             max_plies = 120\npgn = \"tuning.pgn\"\n{extra}",
            sparring()
        ),
    )
    .unwrap();
    dir
}

/// The start positions (FEN tags) of the games in a PGN file.
fn openings_played(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    tags(&text, "FEN").into_iter().collect()
}

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}{}", stdout(o), stderr(o));
    stdout(o)
}

#[test]
fn verification_never_plays_a_tuning_opening_by_seed_across_resume_and_at_iteration_k() {
    let dir = setup(6, 1, "");
    let d = dir.path();
    let conf = d.join("t.toml");
    let conf = conf.to_str().unwrap();
    ok(&run(&["run", conf]));
    let ck = std::fs::read_to_string(d.join("t.checkpoint.var")).unwrap();
    assert!(ck.contains("#: holdout = 0.2\n"), "{ck}");
    // The resume keeps the checkpoint's split even though the config now asks for another.
    let changed = std::fs::read_to_string(conf)
        .unwrap()
        .replace("[games]\n", "[games]\nholdout = 0.5\n");
    std::fs::write(conf, changed).unwrap();
    ok(&run(&["run", conf, "--resume", "--iterations", "12"]));
    let tuning = openings_played(&d.join("tuning.pgn"));
    // 12 pairs over the 8 tuning openings: the first pass of the order covers all of them.
    assert_eq!(tuning.len(), 8, "{tuning:?}");

    let v1 = d.join("v1.pgn");
    let out = ok(&run(&[
        "verify",
        conf,
        "--pairs",
        "4",
        "--progress",
        "0",
        "--pgn",
        v1.to_str().unwrap(),
    ]));
    let held = openings_played(&v1);
    assert_eq!(held.len(), 2, "{held:?}");
    assert!(tuning.is_disjoint(&held), "{tuning:?} {held:?}");
    assert!(
        out.contains(
            "ten.epd, 4 pairs play each about 2.0 times: held out of the tune by holdout 0.2 and seed 5 (the split recorded in "
        ) && out.contains("openings: 2 of 10 in "),
        "{out}"
    );
    assert!(
        out.contains("openings: 2 of 2 used, each played 2 times"),
        "{out}"
    );

    // A point along the run: the same held-out openings.
    let v2 = d.join("v2.pgn");
    ok(&run(&[
        "verify",
        conf,
        "--iteration",
        "3",
        "--pairs",
        "4",
        "--pgn",
        v2.to_str().unwrap(),
    ]));
    assert_eq!(openings_played(&v2), held);

    // --all-openings plays the tune's own openings too, and says so.
    let v3 = d.join("v3.pgn");
    let out = ok(&run(&[
        "verify",
        conf,
        "--all-openings",
        "--pairs",
        "10",
        "--pgn",
        v3.to_str().unwrap(),
    ]));
    assert!(
        out.contains(
            "ten.epd, 10 pairs play 10 of them once each: --all-openings: the tune's own openings included\n"
        ),
        "{out}"
    );
    let all = openings_played(&v3);
    assert_eq!(all.len(), 10);
    assert!(tuning.is_subset(&all) && held.is_subset(&all));

    // A checkpoint from before held-out openings (no share recorded): its tune played the whole
    // book, so its verification plays the whole book and says why.
    let old: String = ck
        .lines()
        .filter(|l| !l.starts_with("#: holdout"))
        .flat_map(|l| [l, "\n"])
        .collect();
    let old_ck = d.join("old.checkpoint.var");
    std::fs::write(&old_ck, old).unwrap();
    let v4 = d.join("v4.pgn");
    let out = ok(&run(&[
        "verify",
        conf,
        "--checkpoint",
        old_ck.to_str().unwrap(),
        "--pairs",
        "10",
        "--pgn",
        v4.to_str().unwrap(),
    ]));
    assert!(
        out.contains("records no held-out openings (a run from before they were recorded, or a simulated one), so the tune may have played them too"),
        "{out}"
    );
    assert_eq!(openings_played(&v4).len(), 10);

    // The book changed size since the split was drawn: the same seed would hold out other
    // openings, so verification and resume refuse it (exit 2, naming the book).
    assert!(ck.contains("#: holdout_openings = 10\n"), "{ck}");
    small_book(d, "ten.epd", 11);
    for args in [
        vec!["verify", conf, "--pairs", "1"],
        vec!["run", conf, "--resume", "--iterations", "14"],
    ] {
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(
                "ten.epd: the book has 11 openings, but the run's split was drawn from 10"
            ),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn the_verify_table_of_a_run_plays_held_out_openings_and_says_how_many() {
    let dir = setup(4, 1, "[verify]\npairs = 3\n");
    let conf = dir.path().join("t.toml");
    let out = ok(&run(&["run", conf.to_str().unwrap()]));
    assert!(
        out.contains("ten.epd, 3 pairs play each about 1.5 times: held out of the tune by holdout 0.2 and seed 5 (the split recorded in "),
        "{out}"
    );
    assert!(
        out.contains("openings: 2 of 2 used, each played 1-2 times"),
        "{out}"
    );
    let record = std::fs::read_to_string(dir.path().join("t.verify.txt")).unwrap();
    assert!(
        record.contains("ten.epd, 3 pairs play each about 1.5 times: held out of the tune"),
        "{record}"
    );
}

#[test]
fn a_tune_that_replays_its_openings_is_warned_with_the_counts() {
    // 4 iterations of 8 pairs over the 8 tuning openings of a 10-opening book: 4 each.
    let dir = setup(4, 8, "");
    let conf = dir.path().join("t.toml");
    let o = run(&["run", conf.to_str().unwrap()]);
    ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains("warning: 32 pairs over 8 tuning openings play each opening about 4.0 times (more than 3) at fixed depth 1"),
        "{err}"
    );
    // Three each is within bounds: no warning.
    let dir = setup(3, 8, "");
    let conf = dir.path().join("t.toml");
    let o = run(&["run", conf.to_str().unwrap()]);
    ok(&o);
    assert!(
        !stderr(&o).contains("tuning openings play each"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_held_out_settings_exit_2_naming_file_and_key() {
    for (extra, want) in [
        ("holdout = 1.0\n", "key `games.holdout`"),
        ("holdout = -0.1\n", "key `games.holdout`"),
        ("verify_book = \"none.epd\"\n", "key `games.verify_book`"),
    ] {
        let dir = setup(2, 1, extra);
        let conf = dir.path().join("t.toml");
        let o = run(&["run", conf.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra}: {err}");
        assert!(
            err.contains("t.toml") && err.contains(want),
            "{extra}: {err}"
        );
        assert!(
            !dir.path().join("t.log").exists(),
            "{extra}: nothing written"
        );
    }
    // A one-opening book cannot be split: an error naming the book, unless holdout = 0.
    let dir = setup(2, 1, "");
    small_book(dir.path(), "ten.epd", 1);
    let conf = dir.path().join("t.toml");
    let o = run(&["run", conf.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("ten.epd: 1 opening(s) cannot be split") && err.contains("holdout = 0"),
        "{err}"
    );
    let dir = setup(2, 1, "holdout = 0\n");
    small_book(dir.path(), "ten.epd", 1);
    let conf = dir.path().join("t.toml");
    ok(&run(&["run", conf.to_str().unwrap()]));
}

#[test]
fn a_separate_verify_book_is_played_whole_and_named() {
    let dir = setup(2, 1, "verify_book = \"three.epd\"\n");
    let d = dir.path();
    small_book(d, "three.epd", 3);
    let conf = d.join("t.toml");
    let pgn = d.join("v.pgn");
    let out = ok(&run(&[
        "verify",
        conf.to_str().unwrap(),
        "--values",
        d.join("minors.var").to_str().unwrap(),
        "--pairs",
        "3",
        "--sequential",
        "--pgn",
        pgn.to_str().unwrap(),
    ]));
    assert!(
        out.contains("openings: 3 of 3 in ")
            && out.contains(
                "three.epd, 3 pairs play 3 of them once each: verify_book, the tune played "
            ),
        "{out}"
    );
    assert_eq!(openings_played(&pgn).len(), 3);
}

#[test]
fn a_match_says_how_many_openings_it_used_and_how_often() {
    let dir = tempfile::tempdir().unwrap();
    let ten = small_book(dir.path(), "ten.epd", 10);
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--depth",
        "1",
        "--max-plies",
        "60",
        "--pairs",
        "4",
        "--sequential",
        "--book",
        &ten,
        "--progress",
        "0",
    ]);
    let out = ok(&o);
    assert!(
        out.contains("openings: 4 of 10 used, each played once"),
        "{out}"
    );
}
