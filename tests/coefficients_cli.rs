//! `spsa coefficients IN OUT`: text → binary → text keeps every number; a bad input line exits 2
//! naming the file and line, and writes nothing.

use std::process::Command;

use spsa::coefficients;

const TEXT: &str = "spsa-coefficients 1
scale 800
phase-range 24
variable PawnValue
variable KnightValue
1 0:2 1:-1
0.5 const=-37.5 0:1 1:3
0 phase=18 mg 0:1 1:2 eg 0:3 1:1
";

fn spsa(args: &[&std::path::Path]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spsa"))
        .arg("coefficients")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn converts_both_ways_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("a.coef");
    std::fs::write(&text, TEXT).unwrap();
    let binary = dir.path().join("a.coefb");
    let out = spsa(&[&text, &binary]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        std::fs::read(&binary)
            .unwrap()
            .starts_with(coefficients::BINARY_MAGIC)
    );
    let back = dir.path().join("b.coef");
    let out = spsa(&[&binary, &back]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        std::fs::read_to_string(&back)
            .unwrap()
            .starts_with("spsa-coefficients 1")
    );
    let original = coefficients::load(&text).unwrap();
    assert_eq!(original.len(), 3);
    assert_eq!(coefficients::load(&binary).unwrap(), original);
    assert_eq!(coefficients::load(&back).unwrap(), original);

    let bad = dir.path().join("bad.coef");
    std::fs::write(&bad, TEXT.replace("0.5 const", "0.7 const")).unwrap();
    let target = dir.path().join("never.coefb");
    let out = spsa(&[&bad, &target]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.coef:7"), "{err}");
    assert!(!target.exists());
}
