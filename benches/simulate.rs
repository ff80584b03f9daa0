//! Simulation speed on 8 variables, measured side by side in one run:
//! the pure core (the driver's trial, a simulated pair, the update), the core plus the θ log
//! (formatted inline, and handed to its writer thread as the tuner does in simulation), the
//! full tuner (pool, log, checkpoints) at Concurrency 1 and 4, and the `spsa simulate` binary
//! end to end (`conf/simul_8var.conf`, its Concurrency 4, θ log included). Prints medians and
//! ratios, and whether the binary meets issue 20's target of 3 M iterations/s.
//!
//! Then issue 45's wide runs through the binary (first, `-- --wide-only` for them alone,
//! `-- --narrow-only` to skip them): `spsa run` of a simulated 5,000-variable file for 20,000
//! iterations by the SPSA_BASELINE binary (the θ log of before, when given) and by ours, and
//! of 50,000 variables for 30,000 iterations by ours, side by side: the files' sizes, peak RSS,
//! iterations/s, `spsa report` and `--plot` seconds, and a run killed with SIGKILL half way and
//! resumed, whose θ must be the uninterrupted run's bit for bit.
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
    if !std::env::args().any(|a| a == "--narrow-only") {
        wide(quick);
    }
    if std::env::args().any(|a| a == "--wide-only") {
        return;
    }
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

/// A simulated variables file of `n` variables (fixed pseudo-random starts, steps and weights).
fn wide_vars(n: usize) -> String {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = String::with_capacity(n * 32);
    for i in 0..n {
        let start = next() % 201;
        let c_end = [4, 8, 10][(next() % 3) as usize];
        let elo = ["0", "0.5", "1", "2"][(next() % 4) as usize];
        out.push_str(&format!("v{i},{start},0,200,{c_end},0.002,{elo}\n"));
    }
    out
}

/// A child's wall seconds and peak resident memory (KB), and whether it succeeded.
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its peak memory
fn measured(cmd: &mut Command) -> (f64, u64, bool) {
    let t = Instant::now();
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start spsa");
    let (mut status, mut usage): (libc::c_int, libc::rusage) = (0, unsafe { std::mem::zeroed() });
    // SAFETY: wait4 writes only the status and usage it is given.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert!(pid > 0, "wait4");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    (t.elapsed().as_secs_f64(), usage.ru_maxrss as u64, ok)
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// θ as a checkpoint holds it (its `#: theta = [...]` line, which round-trips every bit).
fn checkpoint_theta(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .find(|l| l.starts_with("#: theta = "))
        .unwrap()
        .to_string()
}

struct Wide {
    label: String,
    log: u64,
    checkpoint: u64,
    rss_kb: u64,
    rate: f64,
    report: f64,
    plot: f64,
    resumed_exact: Option<bool>,
}

/// One wide run by `binary` in `dir`: the run, then `spsa report`, then `--plot`; with `kill`,
/// a second run killed with SIGKILL half way and resumed, compared with the first.
fn wide_run(binary: &Path, dir: &Path, vars: usize, iterations: u64, kill: bool) -> Wide {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("w.var"), wide_vars(vars)).unwrap();
    let toml = format!(
        "simulate = true\nvariables = \"w.var\"\nlog = \"w.log\"\niterations = {iterations}\nA = {}\ngamma = 0.101\nalpha = 0.602\nconcurrency = 1\nseed = 7\ncheckpoint_seconds = 1\n",
        iterations / 10
    );
    std::fs::write(dir.join("w.toml"), &toml).unwrap();
    let (secs, rss_kb, ok) = measured(
        Command::new(binary)
            .args(["run", "w.toml"])
            .current_dir(dir),
    );
    assert!(ok, "{} run failed", binary.display());
    let (report, _, ok) = measured(
        Command::new(binary)
            .args(["report", "w.log"])
            .current_dir(dir),
    );
    assert!(ok, "report failed");
    let (plot, _, ok) = measured(
        Command::new(binary)
            .args(["report", "w.log", "--plot", "w.svg"])
            .current_dir(dir),
    );
    assert!(ok, "plot failed");
    let resumed_exact = kill.then(|| {
        let again = dir.join("again");
        std::fs::create_dir_all(&again).unwrap();
        std::fs::copy(dir.join("w.var"), again.join("w.var")).unwrap();
        std::fs::write(again.join("w.toml"), &toml).unwrap();
        let mut child = Command::new(binary)
            .args(["run", "w.toml"])
            .current_dir(&again)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let ck = again.join("w.checkpoint.var");
        loop {
            let text = std::fs::read_to_string(&ck).unwrap_or_default();
            let applied: u64 = text
                .lines()
                .find_map(|l| l.strip_prefix("#: applied = "))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if applied >= iterations / 2 {
                break;
            }
            assert!(child.try_wait().unwrap().is_none(), "ended before half way");
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let (_, _, ok) = measured(
            Command::new(binary)
                .args(["run", "w.toml", "--resume"])
                .current_dir(&again),
        );
        assert!(ok, "resume failed");
        checkpoint_theta(&ck) == checkpoint_theta(&dir.join("w.checkpoint.var"))
            && std::fs::read(again.join("w.log")).unwrap()
                == std::fs::read(dir.join("w.log")).unwrap()
    });
    Wide {
        label: format!("{vars} vars × {iterations} it"),
        log: size(&dir.join("w.log")),
        checkpoint: size(&dir.join("w.checkpoint.var")),
        rss_kb,
        rate: iterations as f64 / secs,
        report,
        plot,
        resumed_exact,
    }
}

/// Issue 45's figures: the θ log of before (SPSA_BASELINE) and ours, side by side.
fn wide(quick: bool) {
    let load_before = load();
    let dir = tempfile::tempdir().unwrap();
    let ours = Path::new(env!("CARGO_BIN_EXE_spsa"));
    let (narrow_n, wide_n) = if quick {
        (2_000, 3_000)
    } else {
        (20_000, 30_000)
    };
    let mut runs = Vec::new();
    if let Some(baseline) = std::env::var_os("SPSA_BASELINE").map(PathBuf::from) {
        let mut w = wide_run(&baseline, &dir.path().join("old"), 5_000, narrow_n, false);
        w.label = format!("before: {}", w.label);
        runs.push(w);
        let _ = std::fs::remove_dir_all(dir.path().join("old"));
    }
    let mut w = wide_run(ours, &dir.path().join("new5"), 5_000, narrow_n, false);
    w.label = format!("ours: {}", w.label);
    runs.push(w);
    let mut w = wide_run(ours, &dir.path().join("new50"), 50_000, wide_n, true);
    w.label = format!("ours: {}", w.label);
    runs.push(w);
    println!(
        "wide simulated runs (`spsa run`, Concurrency 1, seed 7; load {load_before} → {})",
        load()
    );
    println!(
        "{:<32} {:>12} {:>12} {:>9} {:>9} {:>9} {:>8} {:>9}",
        "run", "θ log", "checkpoint", "RSS", "it/s", "report", "--plot", "kill -9"
    );
    let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
    for w in &runs {
        println!(
            "{:<32} {:>12} {:>12} {:>9} {:>9.0} {:>8.2}s {:>7.2}s {:>9}",
            w.label,
            mb(w.log),
            mb(w.checkpoint),
            mb(w.rss_kb * 1024),
            w.rate,
            w.report,
            w.plot,
            match w.resumed_exact {
                Some(true) => "exact",
                Some(false) => "DIFFERS",
                None => "-",
            }
        );
    }
    if let [old, new, ..] = &runs[..]
        && old.label.starts_with("before")
    {
        println!(
            "5,000 variables, ours vs before: θ log {:.4}×, RSS {:.2}×, it/s {:.2}×, report {:.2}×, plot {:.2}×",
            new.log as f64 / old.log as f64,
            new.rss_kb as f64 / old.rss_kb as f64,
            new.rate / old.rate,
            new.report / old.report,
            new.plot / old.plot
        );
    }
    let big = runs.last().unwrap();
    let files = big.log + big.checkpoint;
    println!(
        "issue 45 targets at 50,000 variables ({}): files {} ≤ 200 MB {}; RSS {} ≤ 1 GB {}; {:.0} it/s ≥ 1,000 {}; report {:.1} s ≤ 10 s {}; plot {:.1} s ≤ 30 s {}; kill -9 + resume {}",
        big.label,
        mb(files),
        if files <= 200_000_000 {
            "met"
        } else {
            "NOT met"
        },
        mb(big.rss_kb * 1024),
        if big.rss_kb * 1024 <= 1 << 30 {
            "met"
        } else {
            "NOT met"
        },
        big.rate,
        if big.rate >= 1000.0 { "met" } else { "NOT met" },
        big.report,
        if big.report <= 10.0 { "met" } else { "NOT met" },
        big.plot,
        if big.plot <= 30.0 { "met" } else { "NOT met" },
        if big.resumed_exact == Some(true) {
            "exact"
        } else {
            "NOT exact"
        },
    );
}
