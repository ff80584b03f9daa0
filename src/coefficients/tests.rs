use std::path::Path;

use super::*;
use crate::positions::Outcome::*;

const SAMPLE: &str = "\
spsa-coefficients 1
# a comment
scale 4
phase-range 24

variable PawnValue
variable Knight Value   # names may hold spaces
variable Tempo
1 0:2 1:-1
0.5 const=-37.5 0:1 1:3 0:1
0-1 phase=18 mg 0:1 2:2 eg 0:3 1:1 # trailing comment
1/2-1/2 2:0
";

fn sample() -> Coefficients {
    parse_text(SAMPLE, Path::new("sample.coef")).unwrap()
}

#[test]
fn text_form_scores_follow_the_spec() {
    let c = sample();
    assert_eq!(c.variables, ["PawnValue", "Knight Value", "Tempo"]);
    assert_eq!(c.len(), 4);
    assert_eq!(c.results, [WhiteWins, Draw, BlackWins, Draw]);
    let w = [100.0, 300.0, 10.0];
    // untapered: (2·100 − 300)/4
    assert_eq!(c.score(0, &w), -25.0);
    // const and a repeated index: (−37.5 + 2·100 + 3·300)/4
    assert_eq!(c.score(1, &w), (-37.5 + 200.0 + 900.0) / 4.0);
    // tapered: (18·(100 + 2·10) + 6·(3·100 + 300))/24/4
    assert_eq!(c.score(2, &w), (18.0 * 120.0 + 6.0 * 600.0) / 24.0 / 4.0);
    // a zero coefficient is dropped, not stored
    assert_eq!(c.row(3).0.len(), 0);
    assert_eq!(c.score(3, &w), 0.0);
}

#[test]
fn text_and_binary_forms_round_trip() {
    let c = sample();
    let mut text = Vec::new();
    write_text(&c, &mut text).unwrap();
    let back = parse_text(std::str::from_utf8(&text).unwrap(), Path::new("t")).unwrap();
    assert_eq!(back, c);
    let mut bin = Vec::new();
    write_binary(&c, &mut bin).unwrap();
    let back = read_binary(&bin[..], Path::new("b")).unwrap();
    assert_eq!(back, c);
    // A cut-off binary file is an error naming the array, not a panic.
    for cut in [4, 30, bin.len() - 1] {
        let e = read_binary(&bin[..cut], Path::new("b")).unwrap_err();
        assert!(e.to_string().starts_with("b: "), "{e}");
    }
}

#[test]
fn load_tells_the_forms_apart_by_their_magic() {
    let dir = tempfile::tempdir().unwrap();
    let c = sample();
    let t = dir.path().join("a.coef");
    let b = dir.path().join("a.coefb");
    write_text(&c, std::fs::File::create(&t).unwrap()).unwrap();
    write_binary(&c, std::fs::File::create(&b).unwrap()).unwrap();
    assert_eq!(load(&t).unwrap(), c);
    assert_eq!(load(&b).unwrap(), c);
    let e = load(&dir.path().join("missing")).unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
}

#[test]
fn errors_name_file_line_and_field() {
    let cases: &[(&str, &str)] = &[
        ("", "x.coef:1: header"),
        ("hello\n", "x.coef:1: header"),
        ("spsa-coefficients 2\n", "x.coef:1: version"),
        ("spsa-coefficients 1\n1 0:1\n", "x.coef:2: variable"),
        (
            "spsa-coefficients 1\nvariable A\nvariable a\n",
            "x.coef:3: variable: `a` is named twice",
        ),
        ("spsa-coefficients 1\nscale -1\n", "x.coef:2: scale"),
        ("spsa-coefficients 1\nvariable A\n", "x.coef:2: positions"),
        (
            "spsa-coefficients 1\nvariable A\n2 0:1\n",
            "x.coef:3: result",
        ),
        (
            "spsa-coefficients 1\nvariable A\n1 1:1\n",
            "x.coef:3: 1:1: index `1`",
        ),
        ("spsa-coefficients 1\nvariable A\n1 0:x\n", "x.coef:3: 0:x"),
        (
            "spsa-coefficients 1\nvariable A\n1 0:1 bogus\n",
            "x.coef:3: bogus",
        ),
        (
            "spsa-coefficients 1\nvariable A\n1 mg 0:1\n",
            "x.coef:3: phase",
        ),
        (
            "spsa-coefficients 1\nvariable A\n1 phase=0.5 0:1\n",
            "x.coef:3: mg",
        ),
        (
            "spsa-coefficients 1\nvariable A\n1 phase=2 mg 0:1\n",
            "x.coef:3: phase",
        ),
        (
            "spsa-coefficients 1\nvariable A\n1 const=nan\n",
            "x.coef:3: const",
        ),
        (
            "spsa-coefficients 1\nvariable A\n1 0:1\nvariable B\n",
            "x.coef:4: variable",
        ),
    ];
    for (text, want) in cases {
        let e = parse_text(text, Path::new("x.coef"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(want), "{text:?}: got {e:?}, want {want:?}");
    }
}

#[test]
fn select_keeps_rows_whole() {
    let c = sample();
    let s = c.select(&[2, 0]);
    let w = [100.0, 300.0, 10.0];
    assert_eq!(s.len(), 2);
    assert_eq!(s.score(0, &w), c.score(2, &w));
    assert_eq!(s.score(1, &w), c.score(0, &w));
    assert_eq!(s.results, [BlackWins, WhiteWins]);
    assert_eq!(s.constants.as_deref(), Some(&[0.0f32, 0.0][..]));
}
