//! `spsa plan --measure` end to end: the pilot measures a real curvature on the sparring engine
//! and plans from it; a variable the engine ignores is named and keeps the file's value; an
//! engine that crashes during the pilot stops it with the variable named and nothing written.

use crate::match_common;

use std::path::Path;

use match_common::*;

/// A games config in `dir` over `vars` for `engine` (with `args`), depth 1.
fn setup(dir: &Path, vars: &str, engine: &str, args: &[&str]) -> String {
    std::fs::write(dir.join("m.var"), vars).unwrap();
    let conf = dir.join("m.toml");
    std::fs::write(
        &conf,
        format!(
            "variables = \"m.var\"\nlog = \"m.log\"\niterations = 500\nA = 50\ngamma = 0.101\nalpha = 0.602\n\
             concurrency = 2\nseed = 11\n[engine1]\ncommand = {engine:?}\nargs = {args:?}\n[games]\nbook = {:?}\ndepth = 1\nmax_plies = 200\n",
            book().display().to_string()
        ),
    )
    .unwrap();
    conf.to_str().unwrap().to_string()
}

/// `spsa plan CONF --measure --pairs PAIRS --seed 1 --runs 4 -o OUT`.
fn measure(conf: &str, pairs: &str, out: &Path) -> std::process::Output {
    run(&[
        "plan",
        conf,
        "--measure",
        "--pairs",
        pairs,
        "--seed",
        "1",
        "--runs",
        "4",
        "-o",
        out.to_str().unwrap(),
    ])
}

fn column7(var_file: &str, name: &str) -> f64 {
    var_file
        .lines()
        .find(|l| l.starts_with(&format!("{name},")))
        .and_then(|l| l.rsplit(',').next())
        .unwrap_or_else(|| panic!("no {name} in {var_file}"))
        .parse()
        .unwrap()
}

#[test]
fn the_pilot_measures_a_curvature_on_sparring_and_plans_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The knight at sparring's own value, moved ±210: both sides lose clearly, so the curvature
    // is positive and measurable. Tempo starts at its bound: measured one-sided at +6 and +12.
    // The pawn is fixed.
    let conf = setup(
        d,
        "KnightValue,320,0,1200,70,0.002,5\nTempo,0,0,50,2,0.002,7\nPawnValue,100,100,100,4,0.002,0\n",
        sparring(),
        &[],
    );
    let out = d.join("out.var");
    let o = measure(&conf, "30", &out);
    let (so, se) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{so}{se}");
    let row = |name: &str| {
        so.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in {so}"))
            .to_string()
    };
    assert!(row("KnightValue").contains("-210 / +210"), "{so}");
    assert!(row("Tempo").contains("+6 / +12"), "{so}");
    assert!(
        row("PawnValue").contains("min = max, nothing to measure"),
        "{so}"
    );
    assert!(so.contains("pilot: 120 pairs in "), "{so}");
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.starts_with("# spsa plan "), "{written}");
    assert!(
        written
            .lines()
            .next()
            .unwrap()
            .contains("--measure --pairs 30"),
        "{written}"
    );
    // The measured knight curvature replaced the file's guess of 5 and is what was planned with.
    let knight = column7(&written, "KnightValue");
    assert!(knight > 5.0 && knight < 1000.0, "{written}\n{so}");
    // The table shows the same value (rounded to 0.1): the token before the third `±`.
    let knight_row = row("KnightValue");
    let tokens: Vec<&str> = knight_row.split_whitespace().collect();
    let third = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| **t == "±")
        .nth(2)
        .unwrap()
        .0;
    let shown: f64 = tokens[third - 1].parse().unwrap();
    assert!(
        (shown - knight).abs() <= 0.1 * knight.abs().max(1.0),
        "{shown} vs {knight}\n{so}"
    );
    assert_eq!(column7(&written, "PawnValue"), 0.0);
    // The plan's model puts the optimum where the pilot's matches do (the knight measured on
    // both sides of its own value: an estimate inside the range; the fixed pawn: the range).
    assert!(
        so.contains("model optimum: from the pilot's matches for 2 of 3 variables"),
        "{so}"
    );
    let estimate: f64 = tokens
        .last()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{so}"));
    assert!((0.0..=1200.0).contains(&estimate), "{so}");

    // Every match is kept beside the plan; the same command again plays none of them and
    // plans the same.
    let memo = std::fs::read_to_string(d.join("out.pilot.csv")).unwrap();
    assert_eq!(memo.lines().count(), 2 + 4, "{memo}");
    assert!(memo.contains("\nKnightValue,320,-210,"), "{memo}");
    let again = d.join("again.var");
    std::fs::copy(d.join("out.pilot.csv"), d.join("again.pilot.csv")).unwrap();
    let o = measure(&conf, "30", &again);
    let (so2, se2) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{so2}{se2}");
    assert!(
        se2.contains("pilot: 4 matches already played, taken from"),
        "{se2}"
    );
    assert!(!se2.contains("pilot: KnightValue-210: Elo"), "{se2}");
    assert_eq!(
        column7(&std::fs::read_to_string(&again).unwrap(), "KnightValue"),
        knight
    );
    // Other settings (more pairs) refuse the memo, exit 2, and leave it as it was.
    let o = measure(&conf, "40", &again);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("holds pilot matches of other settings"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(d.join("again.pilot.csv")).unwrap(),
        memo
    );
}

#[test]
fn an_ignored_option_is_named_and_a_crashing_engine_stops_the_pilot() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The stand-in ignores its spin option: every pilot pair scores the same.
    let vars = "Dummy,50,0,100,5,0.002,12\n";
    let conf = setup(d, vars, standin(), &["--spin", "Dummy=50:0:100"]);
    let out = d.join("out.var");
    let o = measure(&conf, "12", &out);
    let (so, se) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{so}{se}");
    assert!(
        se.contains("warning: `Dummy`: no measurable effect")
            && se.contains("keeping the file's simul_elo 12"),
        "{se}"
    );
    assert_eq!(
        column7(&std::fs::read_to_string(&out).unwrap(), "Dummy"),
        12.0
    );

    // An engine that crashes at its third move in every game: the pilot stops, names the
    // variable and the point, and writes nothing.
    let conf = setup(
        d,
        vars,
        standin(),
        &["--spin", "Dummy=50:0:100", "--crash-after", "2"],
    );
    let out = d.join("crash.var");
    let o = run(&[
        "plan",
        &conf,
        "--measure",
        "--pairs",
        "12",
        "-o",
        out.to_str().unwrap(),
    ]);
    let se = stderr(&o);
    assert!(!o.status.success(), "{se}");
    assert!(
        se.contains("pilot: `Dummy` at 35 (start 50, offset -15)"),
        "{se}"
    );
    assert!(!out.exists());

    // Bad input: too few pairs for an interval, and an output in a missing-folder-under-a-file.
    let o = run(&[
        "plan",
        &conf,
        "--measure",
        "--pairs",
        "3",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--pairs 3"), "{}", stderr(&o));
    let o = run(&[
        "plan",
        &conf,
        "--measure",
        "-o",
        d.join("m.var/x.var").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!out.exists());
}
