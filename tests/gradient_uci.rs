//! Without a coefficient file, `gradient` and `lbfgs` run through UCI with estimated gradients:
//! on the sparring engine at depth 1, with results drawn from σ(its static evaluation at the
//! default options), L-BFGS brings three piece values from a bad start more than 40% of the way
//! back toward the defaults, Adam on one SPSA estimate per epoch at least 15% (150 positions, 3 L-BFGS
//! iterations or a dozen Adam epochs: a test of the path, not of its precision), the training loss
//! falls, and the run's files are written as for every run.

use std::path::Path;
use std::time::Duration;

use rand::{RngExt, SeedableRng};

use spsa::arena::EngineSetup;
use spsa::coefficients;
use spsa::config::positions::{
    GradientConfig, KSetting, Method, PositionSearch, PositionsConfig, Validation,
};
use spsa::engine::{EngineSpec, OptionValue};
use spsa::method::gradient::{GradientRun, RunFiles, read_checkpoint, run_uci};
use spsa::positions::eval::EvalSettings;
use spsa::positions::loss::sigmoid;
use spsa::positions::{LabelledPositions, LossKind, Outcome};
use spsa::vars::Variable;

use crate::coefficients_common;
use coefficients_common::{export, write_positions};

const DEFAULTS: [f64; 14] = [
    100.0, 320.0, 330.0, 500.0, 950.0, 30.0, 40.0, 60.0, 12.0, 12.0, 20.0, 12.0, 10.0, 100.0,
];

/// Knight, bishop and rook at 60%, 150% and 60% of the defaults.
fn vars() -> Vec<Variable> {
    [
        ("KnightValue", 192.0, 320.0),
        ("BishopValue", 495.0, 330.0),
        ("RookValue", 300.0, 500.0),
    ]
    .iter()
    .map(|&(name, start, _)| Variable {
        name: name.into(),
        start,
        min: 0.0,
        max: 1200.0,
        c_end: 20.0,
        r_end: 0.002,
        simul_elo: 0.0,
    })
    .collect()
}

/// Positions labelled from sparring's static evaluation at its defaults (via its own export).
fn labelled(dir: &Path, n: usize) -> std::path::PathBuf {
    let epd = dir.join("p.epd");
    let coef = dir.join("p.coef");
    write_positions(&epd, n);
    export(&epd, &coef);
    let c = coefficients::load(&coef).unwrap();
    let set = LabelledPositions::load(&epd).unwrap();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(21);
    let mut out = String::new();
    for p in 0..set.len() {
        let white = rng.random::<f64>() < sigmoid(c.score(p, &DEFAULTS));
        let r = if white {
            Outcome::WhiteWins
        } else {
            Outcome::BlackWins
        };
        out.push_str(&format!("{} [{}]\n", set.fen(p), r.as_pgn()));
    }
    let path = dir.join("labelled.epd");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn lbfgs_works_through_uci_with_central_differences() {
    through_uci(Method::Lbfgs, 3, 0.6);
}

#[test]
fn adam_works_through_uci_with_spsa_estimates() {
    through_uci(Method::Gradient, 12, 0.85);
}

fn through_uci(method: Method, epochs: usize, shrink: f64) {
    let dir = tempfile::tempdir().unwrap();
    let data = labelled(dir.path(), 150);
    let vars = vars();
    let setup = EngineSetup {
        spec: EngineSpec::new("sparring", env!("CARGO_BIN_EXE_sparring")),
        fixed: vec![("Hash".into(), OptionValue::Number(1.0))],
    };
    let settings = EvalSettings {
        search: PositionSearch::Depth(1),
        deadline: Duration::from_secs(30),
    };
    {
        let positions = PositionsConfig {
            train: data.clone(),
            validation: Validation::None,
            search: PositionSearch::Depth(1),
            loss: LossKind::Texel,
            k: KSetting::Fixed(1.0),
            method,
            batch: 1000,
            gradient: GradientConfig {
                coefficients: None,
                epochs,
                // Adam: one SPSA step per epoch, about 2·c_end.
                learning_rate: 2.0,
                minibatch: None,
                patience: 0,
            },
        };
        let files = RunFiles {
            theta_log: dir.path().join(format!("{method:?}.log")),
            checkpoint: dir.path().join(format!("{method:?}.checkpoint")),
        };
        let r = GradientRun {
            positions: &positions,
            vars: &vars,
            files: files.clone(),
            threads: 2,
            seed: 9,
            resume: false,
        };
        let outcome = run_uci(&r, &setup, settings, &|| false).unwrap();
        eprintln!("{method:?}: {:.0?}", outcome.theta);
        let truth = [320.0, 330.0, 500.0];
        let before: f64 = vars
            .iter()
            .zip(&truth)
            .map(|(v, t)| (v.start - t).abs())
            .sum();
        let after: f64 = outcome
            .theta
            .iter()
            .zip(&truth)
            .map(|(x, t)| (x - t).abs())
            .sum();
        assert!(
            after < shrink * before,
            "{method:?}: {after:.0} vs {before:.0} off the defaults"
        );
        let curve = std::fs::read_to_string(files.loss_log()).unwrap();
        let losses: Vec<f64> = curve
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(losses.last() < losses.first(), "{losses:?}");
        assert!(read_checkpoint(&files.checkpoint).unwrap().finished);
        let log = crate::run_common::log_text(&files.theta_log);
        assert_eq!(log.lines().count(), outcome.fitted.epochs + 2);
    }
}
