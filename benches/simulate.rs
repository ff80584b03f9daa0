//! Simulation speed on 8 variables, measured side by side in one run:
//! the pure core (the driver's trial, a simulated pair, the update), the core plus the θ log, and
//! the full tuner (pool, log, checkpoints, async loop) at Concurrency 1 and 4. Prints medians and
//! ratios.
//!
//! `cargo bench --bench simulate` (add `-- --quick` for a shorter run).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use spsa::shutdown::Shutdown;
use spsa::source::simulate::Simulator;
use spsa::spsa::driver::{Driver, DriverState, Rounding};
use spsa::spsa::{Schedule, Spsa};
use spsa::tuner::log::ThetaLog;
use spsa::tuner::{Quiet, RunFiles, RunPlan, StartMode, Tuner};
use spsa::vars::{self, Variable};

const VARS: &str = include_str!("../vars/simul_8var.var");

fn schedule(n: u64) -> Schedule {
    Schedule {
        iterations: n,
        a: n as f64 / 10.0,
        alpha: 0.602,
        gamma: 0.101,
    }
}

fn core(vars: &[Variable], n: u64, log: Option<&mut ThetaLog>) -> f64 {
    let theta: Vec<f64> = vars.iter().map(|v| v.start).collect();
    let mut driver = Driver::new(
        Spsa::new(vars, schedule(n)),
        Rounding::Continuous,
        1,
        1,
        DriverState::start(theta),
    );
    let sim = Simulator::new(vars, 0.0);
    let mut log = log;
    while let Some(trial) = driver.next_trial() {
        let signal = sim.measure(&trial).signal();
        driver.apply(trial.iteration, signal).unwrap();
        if let Some(log) = log.as_deref_mut() {
            log.append(trial.iteration, driver.theta()).unwrap();
        }
    }
    black_box(driver.theta()[0])
}

fn tuner(vars: &[Variable], n: u64, concurrency: usize, dir: &Path) -> f64 {
    let files = RunFiles {
        log: dir.join("t.log"),
        checkpoint: dir.join("t.ck"),
        checkpoint_interval: Duration::from_secs(2),
        outputs: Vec::new(),
    };
    let _ = std::fs::remove_file(&files.log);
    let _ = std::fs::remove_file(&files.checkpoint);
    let sim = Simulator::new(vars, 0.0);
    let plan = RunPlan {
        schedule: schedule(n),
        rounding: Rounding::Continuous,
        pairs: 1,
        seed: 1,
        concurrency,
        max_faulty_trials: 5,
    };
    let mut t = Tuner::prepare(vars.to_vec(), plan, files, StartMode::New).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(t.run(&sim, &Shutdown::new(), &mut Quiet))
        .unwrap();
    black_box(t.state().theta[0])
}

/// Median iterations per second over `rounds` runs of `f`.
fn measure(rounds: usize, n: u64, mut f: impl FnMut()) -> f64 {
    let mut rates: Vec<f64> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            n as f64 / t.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (n, rounds) = if quick { (200_000, 3) } else { (1_000_000, 7) };
    let vars = vars::parse(VARS, Path::new("vars/simul_8var.var")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let core_rate = measure(rounds, n, || {
        core(&vars, n, None);
    });
    let log_rate = measure(rounds, n, || {
        let path = dir.path().join("core.log");
        let _ = std::fs::remove_file(&path);
        let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
        let mut log = ThetaLog::create(&path, &names).unwrap();
        core(&vars, n, Some(&mut log));
        log.flush().unwrap();
    });
    let t1 = measure(rounds, n, || {
        tuner(&vars, n, 1, dir.path());
    });
    let t4 = measure(rounds, n, || {
        tuner(&vars, n, 4, dir.path());
    });
    println!("simulation, 8 variables, {n} iterations, median of {rounds} rounds (one core)");
    println!("{:<36} {:>12} {:>8}", "what", "it/s", "vs core");
    for (name, rate) in [
        ("core: driver trial + pair + update", core_rate),
        ("core + θ log", log_rate),
        ("tuner, Concurrency 1 (log, ckpt)", t1),
        ("tuner, Concurrency 4 (log, ckpt)", t4),
    ] {
        println!("{name:<36} {rate:>12.0} {:>8.2}", rate / core_rate);
    }
    println!(
        "θ log share of the tuner's time: {:.0}%",
        100.0 * (1.0 / log_rate - 1.0 / core_rate) / (1.0 / t1)
    );
}
