//! `spsa init`: variables files from real engines' spin options (the bundled sparring engine and
//! Toga II), loaded back by the variables reader; bad option names are user errors that write
//! nothing.

mod match_common;

use std::path::Path;

use match_common::*;

#[test]
fn sparring_spins_become_variables_by_the_tune_rule() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.var");
    let o = run(&["init", "--engine", sparring(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("skipped"), "Hash is an engine control");
    let vars = spsa::config::vars::load(&out).unwrap();
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
    let vars = spsa::config::vars::load(&out).unwrap();
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
    // A range of 3 gives c_end = 3/20, which floating point holds as 0.15000000000000002 (as
    // Glaurung's `Minimum Split Depth` 4..7 and Toga II's `NullMove Reduction` do).
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
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.lines()
            .any(|l| l == "Minimum Split Depth,4,4,7,0.15,0.002,0"),
        "{text}"
    );
    assert!(
        stdout(&o).contains("Minimum Split Depth: start 4, [4, 7], c_end 0.15, R_end 0.002"),
        "{}",
        stdout(&o)
    );
    let vars = spsa::config::vars::load(&out).unwrap();
    assert!((vars[0].c_end - 0.15).abs() < 1e-12);
}
