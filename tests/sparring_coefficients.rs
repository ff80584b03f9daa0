//! The sparring engine's coefficient export (`sparring coefficients IN OUT`) is exact: for every
//! position of a labelled file, the dot product of the exported coefficients (read by `spsa`'s
//! loader) with the option values reproduces the engine's own static evaluation (asked over UCI
//! with its `eval` command) exactly, at the default options and at perturbed ones.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::thread;
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use shakmaty::fen::Fen;
use shakmaty::{Chess, EnPassantMode, Position};

use spsa::coefficients;

use crate::coefficients_common;
use coefficients_common::{export, write_positions};

/// (name, default, min, max) of each spin option but Hash, from the engine's `uci` answer.
type Spin = (String, i64, i64, i64);

/// Runs one engine session: `uci`, then for each option set, the options and `eval` of every
/// position. Returns the options and, per set, (cp, white) per position.
fn engine_evals(
    positions: &[Chess],
    sets: &dyn Fn(&[Spin]) -> Vec<Vec<i64>>,
) -> (Vec<Spin>, Vec<Vec<(i64, i64)>>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparring"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = || {
        rx.recv_timeout(Duration::from_secs(60))
            .expect("engine line")
    };
    writeln!(stdin, "uci").unwrap();
    stdin.flush().unwrap();
    let mut spins = Vec::new();
    loop {
        let line = next();
        if line == "uciok" {
            break;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() == 11 && t[0] == "option" && t[2] != "Hash" && t[4] == "spin" {
            spins.push((
                t[2].to_string(),
                t[6].parse().unwrap(),
                t[8].parse().unwrap(),
                t[10].parse().unwrap(),
            ));
        }
    }
    let mut results = Vec::new();
    for values in sets(&spins) {
        let mut script = String::new();
        for (s, v) in spins.iter().zip(&values) {
            script.push_str(&format!("setoption name {} value {v}\n", s.0));
        }
        for pos in positions {
            let fen = Fen::from_position(pos, EnPassantMode::Legal);
            script.push_str(&format!("position fen {fen}\neval\n"));
        }
        script.push_str("isready\n");
        stdin.write_all(script.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut evals = Vec::new();
        loop {
            let line = next();
            if line == "readyok" {
                break;
            }
            let t: Vec<&str> = line.split_whitespace().collect();
            if let ["info", "string", "eval", "cp", cp, "white", white] = t[..] {
                evals.push((cp.parse().unwrap(), white.parse().unwrap()));
            }
        }
        assert_eq!(evals.len(), positions.len());
        results.push(evals);
    }
    writeln!(stdin, "quit").unwrap();
    child.wait().unwrap();
    (spins, results)
}

#[test]
fn exported_coefficients_reproduce_the_static_evaluation_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let epd = dir.path().join("positions.epd");
    let coef = dir.path().join("positions.coef");
    let positions = write_positions(&epd, 1500);
    export(&epd, &coef);
    let c = coefficients::load(&coef).unwrap();
    assert_eq!(c.len(), positions.len());
    // Tapered integers in 1/800 cp over a phase range of 24: scores in 1/19200 cp.
    assert_eq!(c.scale, 19200.0);

    let sets = |spins: &[Spin]| {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(4);
        let mut sets = vec![spins.iter().map(|s| s.1).collect::<Vec<_>>()];
        for _ in 0..3 {
            // Each option anywhere from 40% to 160% of its default, within its bounds.
            sets.push(
                spins
                    .iter()
                    .map(|s| {
                        let f: f64 = rng.random_range(0.4..1.6);
                        ((s.1 as f64 * f).round() as i64).clamp(s.2, s.3)
                    })
                    .collect(),
            );
        }
        sets
    };
    let (spins, evals) = engine_evals(&positions, &sets);
    let names: Vec<&str> = spins.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        c.variables, names,
        "the file names the engine's options, in order"
    );

    for (values, evals) in sets(&spins).iter().zip(&evals) {
        let w: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        for (p, (pos, &(cp, white))) in positions.iter().zip(evals).enumerate() {
            // Integers below 2^53 throughout: the f64 sum is exact.
            let raw = c.raw_score(p, &w);
            assert_eq!(raw, white as f64, "position {p} at {values:?}");
            let stm = if pos.turn().is_white() { white } else { -white };
            let rounded = (stm + 9600).div_euclid(19200).clamp(-20_000, 20_000);
            assert_eq!(rounded, cp, "position {p}");
        }
    }
}

#[test]
fn bad_labelled_line_is_named_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let epd = dir.path().join("bad.epd");
    let coef = dir.path().join("bad.coef");
    std::fs::write(
        &epd,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [1-0]\n8/8/8 w - - [1-0]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args([
            "coefficients",
            epd.to_str().unwrap(),
            coef.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.epd:2:"), "{err}");
    assert!(!coef.exists());
}
