//! How much of a match's cost is ours: Stockfish at nodes=5000 (Threads 1, Hash 16),
//! concurrency 2, 20 pairs from the shipped book, played through the same code as `spsa match`.
//!
//! Reports games per minute, our process's CPU time as a share of the total (ours + the engines'),
//! our peak RSS, and the median per-pair overhead (time between games not spent searching).
//!
//! CPU times come from /proc/self/stat: utime+stime for this process (all threads, living and
//! gone) and cutime+cstime for reaped children. Engines only count once they are waited for, so
//! every engine is quit (and reaped) before the figures are read. Peak RSS is VmHWM from
//! /proc/self/status.
//!
//! Run: `cargo bench --bench match_speed` (release). Environment: `MATCH_SPEED_PAIRS` (default
//! 20), `MATCH_SPEED_ENGINE` (default /usr/games/stockfish), `MATCH_SPEED_RUNTIME=multi` (tokio's
//! multi-thread scheduler instead of the current-thread one `spsa` uses).

use std::path::{Path, PathBuf};
use std::time::Instant;

use spsa::matchrun::{self, MatchArgs, MatchFlags};

/// CPU seconds from /proc/self/stat: this process's user and system time, and reaped children's
/// user+system time.
struct Cpu {
    user: f64,
    sys: f64,
    children: f64,
}

fn cpu_times() -> Cpu {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the `(comm)`: state is field 3, utime 14, stime 15, cutime 16, cstime 17.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f[i - 3].parse::<f64>().expect("a number");
    let tck = clock_ticks();
    Cpu {
        user: num(14) / tck,
        sys: num(15) / tck,
        children: (num(16) + num(17)) / tck,
    }
}

/// Nanosecond on-CPU time of this process's living threads (sum of /proc/self/task/*/schedstat
/// first fields): a precise cross-check of the tick-based figure (threads that exited are
/// missing from it).
fn schedstat_secs() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return f64::NAN;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        / 1e9
}

/// sysconf(_SC_CLK_TCK) without libc: `getconf CLK_TCK`, else Linux's usual 100.
fn clock_ticks() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// A `Vm…:` line of /proc/self/status in MB.
fn status_mb(key: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would run it too, so do nothing
    // unless asked to bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let engine = std::env::var("MATCH_SPEED_ENGINE").unwrap_or("/usr/games/stockfish".into());
    if !Path::new(&engine).exists() {
        println!("match_speed: {engine} not installed; skipping");
        return;
    }
    let pairs: u64 = std::env::var("MATCH_SPEED_PAIRS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(20);
    let book = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("openings/balanced_6ply.epd");
    let args = MatchArgs {
        engine1: Some(engine.clone().into()),
        options: vec!["Threads=1".into(), "Hash=16".into()],
        flags: MatchFlags {
            pairs: Some(pairs),
            concurrency: Some(2),
            book: Some(book),
            nodes: Some(5000),
            seed: Some(1),
            max_faulty_pairs: 5,
            progress: 0.0,
            ..MatchFlags::default()
        },
        ..MatchArgs::default()
    };
    // The runtime `spsa` uses (tokio's current-thread one, built in main.rs);
    // MATCH_SPEED_RUNTIME=multi compares with the multi-thread scheduler.
    let multi = std::env::var("MATCH_SPEED_RUNTIME").is_ok_and(|r| r == "multi");
    let runtime = if multi {
        tokio::runtime::Runtime::new().expect("runtime")
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    };
    let cpu0 = cpu_times();
    let sched0 = schedstat_secs();
    let started = Instant::now();
    let out = runtime.block_on(async {
        let mut plan = args.plan().expect("plan");
        let source = plan.start_source().await.expect("engines start");
        let out = matchrun::play(
            &source,
            plan.concurrency,
            plan.pairs,
            plan.max_faulty_pairs,
            &spsa::shutdown::Shutdown::new(),
            None,
        )
        .await;
        source.arena().quit_all().await;
        out
    });
    let wall = started.elapsed().as_secs_f64();
    let cpu1 = cpu_times();
    let sched = schedstat_secs() - sched0;
    let (user, sys) = (cpu1.user - cpu0.user, cpu1.sys - cpu0.sys);
    let ours = user + sys;
    let engines = cpu1.children - cpu0.children;
    let games = out.tally.games();
    let moves = out.engine_moves;
    println!(
        "match_speed: {engine}, nodes=5000, Threads 1, Hash 16, concurrency 2, {pairs} pairs, {} runtime",
        if multi {
            "multi-thread"
        } else {
            "current-thread"
        }
    );
    print!("{}", out.report());
    println!(
        "games: {games} in {wall:.1} s = {:.1} games/min",
        games as f64 * 60.0 / wall
    );
    println!(
        "CPU: ours {ours:.3} s (user {user:.3}, sys {sys:.3}), engines {engines:.3} s, our share {:.3}%",
        100.0 * ours / (ours + engines).max(1e-9)
    );
    println!(
        "CPU by schedstat (living threads, ns resolution): ours {sched:.3} s, share {:.3}%",
        100.0 * sched / (sched + engines).max(1e-9)
    );
    println!(
        "engine moves: {moves}, our CPU per engine move {:.0} µs",
        ours * 1e6 / moves.max(1) as f64
    );
    println!(
        "memory: our peak RSS (VmHWM) {:.1} MB, now (VmRSS) {:.1} MB",
        status_mb("VmHWM:"),
        status_mb("VmRSS:")
    );
    println!(
        "overhead per pair (time between games not spent searching): median {:.2} ms, max {:.2} ms",
        out.median_overhead().as_secs_f64() * 1000.0,
        out.overheads
            .iter()
            .max()
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0)
    );
    if !matches!(out.ending, matchrun::MatchEnding::Finished) {
        println!("match did not finish: {:?}", out.ending);
        std::process::exit(1);
    }
}
