//! Simulation speed on 8 variables, measured side by side in one run:
//! the pure core (the driver's trial, a simulated pair, the update), the core plus the θ log
//! (formatted inline, and handed to its writer thread as the tuner does in simulation), the
//! full tuner (pool, log, checkpoints) at Concurrency 1 and 4, and the `spsa simulate` binary
//! end to end (`conf/simul_8var.conf`, its Concurrency 4, θ log included). Prints medians and
//! ratios, and whether the binary meets issue 20's target of 3 M iterations/s.
//!
//! `cargo bench --bench simulate` (add `-- --quick` for a shorter run). With
//! `SPSA_BASELINE=/path/to/an/older/spsa`, that binary runs the same command in alternating
//! rounds and the ratio of the two is printed: before/after from one run.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use spsa::runtime::shutdown::Shutdown;
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
    let mut trial = Default::default();
    while driver.next_trial_into(&mut trial) {
        let signal = sim.measure(&trial).signal();
        driver.apply(trial.iteration, signal).unwrap();
        if let Some(log) = log.as_deref_mut() {
            log.append_row(trial.iteration, driver.theta()).unwrap();
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

/// The machine's load average over the last minute: rates on a shared machine mean little
/// without it.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// Median iterations per second over `rounds` runs of `f`.
fn measure(rounds: usize, n: u64, mut f: impl FnMut()) -> f64 {
    median((0..rounds).map(|_| rate(n, &mut f)).collect())
}

fn rate(n: u64, f: &mut impl FnMut()) -> f64 {
    let t = Instant::now();
    f();
    n as f64 / t.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `spsa simulate conf/simul_8var.conf --iterations N --seed 1` by `binary` in a fresh copy of
/// the config and variables; returns its stdout (the final table).
fn simulate_binary(binary: &Path, n: u64, dir: &Path) -> Vec<u8> {
    let _ = std::fs::remove_dir_all(dir.join("logs"));
    let out = Command::new(binary)
        .args(["simulate", "conf/simul_8var.conf", "--seed", "1"])
        .args(["--iterations", &n.to_string()])
        .current_dir(dir)
        .output()
        .expect("run spsa");
    assert!(
        out.status.success(),
        "{}: {}",
        binary.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// CPU seconds (user + system) of the finished child processes so far: a rate per CPU second
/// holds still when other work shares the cores, wall time does not.
fn children_cpu() -> f64 {
    // SAFETY: getrusage only writes the struct it is given, which is ours and zeroed.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Iterations per wall second and per CPU second of one run of `f` (a child process).
fn child_rates(n: u64, f: &mut impl FnMut()) -> (f64, f64) {
    let cpu = children_cpu();
    let wall = rate(n, f);
    (wall, n as f64 / (children_cpu() - cpu).max(1e-3))
}

struct Binaries {
    /// Ours: iterations per wall second and per CPU second (medians).
    wall: f64,
    cpu: f64,
    /// The baseline's, and the medians of the per-round ratios ours/baseline.
    baseline: Option<(PathBuf, f64, f64, f64, f64)>,
}

/// The binary end to end, and the baseline's in alternating rounds when there is one.
fn binaries(rounds: usize, n: u64) -> Binaries {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["conf", "vars"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    for file in ["conf/simul_8var.conf", "vars/simul_8var.var"] {
        std::fs::copy(root.join(file), dir.path().join(file)).unwrap();
    }
    let ours = Path::new(env!("CARGO_BIN_EXE_spsa"));
    let baseline = std::env::var_os("SPSA_BASELINE").map(PathBuf::from);
    let (mut mine, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut table = Vec::new();
        let a = child_rates(n, &mut || table = simulate_binary(ours, n, dir.path()));
        mine.push(a);
        if let Some(b) = &baseline {
            let mut theirs_table = Vec::new();
            let r = child_rates(n, &mut || theirs_table = simulate_binary(b, n, dir.path()));
            assert_eq!(table, theirs_table, "the baseline ends the run elsewhere");
            theirs.push(r);
            ratios.push((a.0 / r.0, a.1 / r.1));
        }
    }
    let wall = |v: &[(f64, f64)]| median(v.iter().map(|r| r.0).collect());
    let cpu = |v: &[(f64, f64)]| median(v.iter().map(|r| r.1).collect());
    Binaries {
        wall: wall(&mine),
        cpu: cpu(&mine),
        baseline: baseline.map(|b| (b, wall(&theirs), cpu(&theirs), wall(&ratios), cpu(&ratios))),
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let load_before = load();
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
    let away_rate = measure(rounds, n, || {
        let path = dir.path().join("away.log");
        let _ = std::fs::remove_file(&path);
        let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
        let mut log = ThetaLog::create(&path, &names).unwrap();
        log.in_background().unwrap();
        core(&vars, n, Some(&mut log));
        log.flush().unwrap();
    });
    let t1 = measure(rounds, n, || {
        tuner(&vars, n, 1, dir.path());
    });
    let t4 = measure(rounds, n, || {
        tuner(&vars, n, 4, dir.path());
    });
    let bins = binaries(rounds, n);
    println!(
        "simulation, 8 variables, {n} iterations, median of {rounds} rounds (one core; the θ log's writer thread and the binary's take a second); load {load_before} → {}",
        load()
    );
    println!("{:<40} {:>12} {:>8}", "what", "it/s", "vs core");
    let mut rows = vec![
        ("core: driver trial + pair + update", core_rate),
        ("core + θ log", log_rate),
        ("core + θ log on a writer thread", away_rate),
        ("tuner, Concurrency 1 (log, ckpt)", t1),
        ("tuner, Concurrency 4 (log, ckpt)", t4),
        ("`spsa simulate` binary, Concurrency 4", bins.wall),
        ("  the same, per CPU second", bins.cpu),
    ];
    if let Some((_, wall, cpu, _, _)) = &bins.baseline {
        rows.push(("`spsa simulate`, SPSA_BASELINE binary", *wall));
        rows.push(("  the same, per CPU second", *cpu));
    }
    for (name, rate) in rows {
        println!("{name:<40} {rate:>12.0} {:>8.2}", rate / core_rate);
    }
    println!(
        "θ log, wall time it adds per row: {:.0} ns formatted inline, {:.0} ns handed to its writer thread (the tuner's way in simulation; the writer needs a free core)",
        1e9 * (1.0 / log_rate - 1.0 / core_rate),
        1e9 * (1.0 / away_rate - 1.0 / core_rate)
    );
    if let Some((path, _, _, wall, cpu)) = bins.baseline {
        println!(
            "`spsa simulate` vs {}: {wall:.2}× in wall time, {cpu:.2}× per CPU second (medians of per-round ratios, same final table)",
            path.display()
        );
    }
    let met = |rate: f64| if rate >= 3.0e6 { "met" } else { "not met" };
    println!(
        "issue 20 target, ≥ 3 000 000 it/s through `spsa simulate`: wall {} ({:.2}× the target, load-dependent), per CPU second {} ({:.2}×)",
        met(bins.wall),
        bins.wall / 3.0e6,
        met(bins.cpu),
        bins.cpu / 3.0e6
    );
}
