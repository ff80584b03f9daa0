//! Statistical properties of SPSA on the quadratic Elo model, checked against the linearised
//! model rather than hard-coded numbers.
//!
//! Near the optimum, with w = 0.0001·simul_elo, ΔElo(θ+, θ−) = −4·w·θ·c_k·δ and the expected
//! pair result is E[match] = 4·(p − ½) ≈ (ln 10/400)·ΔElo. The update θ += (a_k/c_k)·match·δ
//! therefore drifts by E[Δθ] = −(ln 10/100)·w·a_k·θ per iteration, so from θ₀ the mean after N
//! iterations is θ₀·Π(1 − (ln 10/100)·w·a_k). The spread over seeds is estimated from the
//! sample itself, and the test allows 4 standard errors.

use std::path::Path;

use spsa::runtime::shutdown::Shutdown;
use spsa::source::simulate::Simulator;
use spsa::spsa::driver::Rounding;
use spsa::spsa::{Schedule, Spsa};
use spsa::tuner::{Quiet, RunFiles, RunPlan, StartMode, Tuner};
use spsa::vars::{self, Variable};

const SEEDS: u64 = 24;

fn schedule() -> Schedule {
    Schedule {
        iterations: 50_000,
        a: 5000.0,
        alpha: 0.602,
        gamma: 0.101,
    }
}

fn variable(start: f64) -> Vec<Variable> {
    vars::parse(
        &format!("x,{start},-1000,1000,100,0.002,1\n"),
        Path::new("inline"),
    )
    .unwrap()
}

/// Final θ and θ at N/5 of one seeded run through the real tuner.
fn run(start: f64, seed: u64, concurrency: usize) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let vars = variable(start);
    let files = RunFiles {
        log: dir.path().join("t.log"),
        checkpoint: dir.path().join("t.ck"),
        checkpoint_interval: std::time::Duration::from_secs(60),
        outputs: Vec::new(),
    };
    let plan = RunPlan {
        schedule: schedule(),
        rounding: Rounding::Continuous,
        pairs: 1,
        seed,
        concurrency,
        max_faulty_trials: 5,
    };
    let sim = Simulator::new(&vars, 0.0);
    let mut tuner = Tuner::prepare(vars, plan, files.clone(), StartMode::New).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(tuner.run(&sim, &Shutdown::new(), &mut Quiet))
        .unwrap();
    let log = crate::run_common::log_text(&files.log);
    let at = |k: u64| -> f64 {
        log.lines()
            .nth(k as usize)
            .unwrap()
            .split(',')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    (tuner.state().theta[0], at(schedule().iterations / 5))
}

/// The linearised model's mean after `k` iterations from θ₀ (simul_elo 1).
fn predicted_mean(theta0: f64, k: u64) -> f64 {
    let spsa = Spsa::new(&variable(theta0), schedule());
    let w = 0.0001;
    (1..=k).fold(theta0, |t, i| {
        t * (1.0 - std::f64::consts::LN_10 / 100.0 * w * spsa.gains(0, i).a_k)
    })
}

fn mean_and_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

fn runs(start: f64, concurrency: usize) -> (Vec<f64>, Vec<f64>) {
    let handles: Vec<_> = (0..2u64)
        .map(|half| {
            std::thread::spawn(move || {
                (0..SEEDS / 2)
                    .map(|s| run(start, 1000 * half + s + 1, concurrency))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let all: Vec<(f64, f64)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    (
        all.iter().map(|r| r.0).collect(),
        all.iter().map(|r| r.1).collect(),
    )
}

#[test]
fn theta_approaches_the_optimum_from_both_sides_as_the_model_predicts() {
    for start in [500.0, -500.0] {
        let (finals, early) = runs(start, 1);
        let n = schedule().iterations;
        for (xs, k) in [(&early, n / 5), (&finals, n)] {
            let (mean, se) = mean_and_se(xs);
            let want = predicted_mean(start, k);
            assert!(
                (mean - want).abs() < 4.0 * se,
                "start {start}, k {k}: mean {mean:.2} ± {se:.2}, model {want:.2}"
            );
        }
        let (early_mean, _) = mean_and_se(&early);
        let (final_mean, final_se) = mean_and_se(&finals);
        // Moving toward 0 from this side, still on it at N/5, and near 0 at the end.
        assert!(early_mean.signum() == start.signum() && early_mean.abs() < start.abs() * 0.6);
        assert!(
            final_mean.abs() < start.abs() * 0.05 + 4.0 * final_se,
            "final mean {final_mean}"
        );
    }
}

#[test]
fn concurrency_keeps_the_run_converging() {
    // Four pairs in flight: updates are applied to a θ up to three updates newer than the one
    // played. With gains this small the drift is unchanged to first order.
    let (finals, _) = runs(500.0, 4);
    let (mean, se) = mean_and_se(&finals);
    let want = predicted_mean(500.0, schedule().iterations);
    assert!(
        (mean - want).abs() < 4.0 * se,
        "mean {mean:.2} ± {se:.2}, model {want:.2}"
    );
}
