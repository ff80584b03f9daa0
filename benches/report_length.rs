//! `spsa report` against the length of the run (issue 67): a simulated 3-variable run of 10^5,
//! 10^6 and 10^7 iterations (draw rate 0.3), and for each the wall time and peak memory of
//! `spsa report LOG --format csv` (the final values, which wait for the whole history) beside
//! the replay alone (the same log read by `LogReader` and every row replayed, in a process of
//! its own: this bench run again with `--replay LOG`). Each measurement is a child process, its
//! peak resident memory from `wait4`; the median of `--repeats` alternating runs (3).
//!
//! Before issue 67 the report waited on a walk back to the log's definition from every
//! snapshot (every 64 rows), so it grew as N²: 15 s at 10^6. Done when 10^7 takes within 10×
//! the time of 10^6, and a few seconds.
//!
//! `cargo bench --bench report_length` (`-- --most 6` stops at 10^6; `-- --repeats 5`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");

const VARS: &str =
    "a,100,-1000,1000,100,0.002,1\nb,-50,-1000,1000,50,0.002,2\nc,20,-500,500,20,0.002,0.5\n";

/// Wall time and peak resident memory of one child process.
#[derive(Clone, Copy)]
struct Cost {
    wall: Duration,
    peak_kb: u64,
}

/// Run `cmd` to its end: what it cost, and its stdout's length. Fails loudly if it fails.
// The child is reaped by `wait4` (for its peak memory), which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn measure(cmd: &mut Command) -> (Cost, usize) {
    use std::os::unix::process::ExitStatusExt;
    let started = Instant::now();
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start a child");
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.expect("its stdout");
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut stdout, &mut out).expect("read its stdout");
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for; both pointers are valid.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert_eq!(waited, pid, "wait4");
    let status = std::process::ExitStatus::from_raw(status);
    assert!(status.success(), "{cmd:?}: {status}");
    let cost = Cost {
        wall,
        peak_kb: usage.ru_maxrss as u64,
    };
    (cost, out.len())
}

/// The run of `n` iterations in `dir`, made by `spsa simulate`: its log.
fn simulate(dir: &Path, n: u64) -> (PathBuf, Cost) {
    std::fs::write(dir.join("v.var"), VARS).unwrap();
    let config = dir.join(format!("s{n}.toml"));
    std::fs::write(
        &config,
        format!(
            "simulate = true\nvariables = \"v.var\"\nlog = \"s{n}.log\"\niterations = {n}\n\
             A = {}\ngamma = 0.101\nalpha = 0.602\nconcurrency = 1\nseed = 1\n\
             [simulation]\ndraw_rate = 0.3\n",
            n / 10
        ),
    )
    .unwrap();
    let (cost, _) = measure(
        Command::new(SPSA)
            .arg("simulate")
            .arg(&config)
            .current_dir(dir)
            .stderr(std::process::Stdio::null()),
    );
    (dir.join(format!("s{n}.log")), cost)
}

/// The child's part of `--replay LOG`: every row of the log replayed, checked and summed.
fn replay_alone(log: &Path) {
    let reader = spsa::tuner::replay::LogReader::open(log, None).expect("a θ log");
    let all: Vec<usize> = (0..reader.rows()).collect();
    let mut sum = 0.0;
    reader
        .replay(&all, |_, _, theta| {
            sum += theta.iter().sum::<f64>();
            Ok(())
        })
        .expect("the replay");
    println!("{} rows, Σθ {sum}", reader.rows());
}

fn median(mut v: Vec<Cost>) -> Cost {
    v.sort_by_key(|c| c.wall);
    let wall = v[v.len() / 2].wall;
    let mut peaks: Vec<u64> = v.iter().map(|c| c.peak_kb).collect();
    peaks.sort_unstable();
    Cost {
        wall,
        peak_kb: peaks[peaks.len() / 2],
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut most, mut repeats) = (7u32, 3usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--replay" => return replay_alone(Path::new(&args.next().expect("--replay LOG"))),
            "--most" => {
                most = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--most 5..7")
            }
            "--repeats" => {
                repeats = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--repeats N")
            }
            _ => {} // `cargo bench` passes --bench
        }
    }
    let me = std::env::current_exe().expect("this bench's path");
    let dir = tempfile::tempdir().expect("a temporary folder");
    println!(
        "spsa report LOG --format csv against the replay alone (median of {repeats}; wall time, peak resident memory)"
    );
    println!(
        "{:>10}  {:>8}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>8}",
        "iterations",
        "log MB",
        "run s",
        "replay s",
        "replay MB",
        "report s",
        "report MB",
        "report/rp",
        "×prev"
    );
    let mut previous: Option<Cost> = None;
    for exp in 5..=most {
        let n = 10u64.pow(exp);
        let (log, run) = simulate(dir.path(), n);
        let bytes = std::fs::metadata(&log).unwrap().len();
        let (mut replays, mut reports) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            replays.push(measure(Command::new(&me).arg("--replay").arg(&log)).0);
            let (cost, printed) = measure(
                Command::new(SPSA)
                    .args(["report", "--format", "csv"])
                    .arg(&log),
            );
            assert!(printed > 0, "the report printed nothing");
            reports.push(cost);
        }
        let (replay, report) = (median(replays), median(reports));
        let growth = previous.map_or("".to_string(), |p| {
            format!("{:.1}", report.wall.as_secs_f64() / p.wall.as_secs_f64())
        });
        println!(
            "{n:>10}  {:>8.1}  {:>9.2}  {:>9.3}  {:>9.1}  {:>9.3}  {:>9.1}  {:>9.2}  {growth:>8}",
            bytes as f64 / 1e6,
            run.wall.as_secs_f64(),
            replay.wall.as_secs_f64(),
            replay.peak_kb as f64 / 1024.0,
            report.wall.as_secs_f64(),
            report.peak_kb as f64 / 1024.0,
            report.wall.as_secs_f64() / replay.wall.as_secs_f64(),
        );
        previous = Some(report);
        std::fs::remove_file(&log).ok();
    }
}
