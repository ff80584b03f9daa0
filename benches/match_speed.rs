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
//! multi-thread scheduler for the caller instead of the current-thread one `spsa` uses; the
//! engines' I/O runs on the arena's slot threads either way).
//!
//! With `FASTCHESS=/path/to/fastchess` it then plays the same match (same engine and options,
//! the same openings in file order from a comment-free EPD copy of the book, colours reversed
//! per opening) with fastchess and with the `spsa match` binary, alternating which goes first,
//! `MATCH_SPEED_ROUNDS` rounds (default 3), and prints for both the wall time, games/s and own
//! CPU (the process's user+sys, engines excluded), their medians and the ratios spsa/fastchess.
//! Each side's CPU is read from /proc/<pid>/stat once the process has exited and before it is
//! reaped (a zombie's times are final and its children's are kept apart). fastchess is not part
//! of this project: bring and build your own and name its path.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let started = Instant::now();
    let out = runtime.block_on(async {
        let mut plan = args.plan().expect("plan");
        let source = plan.start_source().await.expect("engines start");
        let out = matchrun::play(
            &source,
            plan.concurrency,
            plan.pairs,
            None,
            plan.max_faulty_pairs,
            &spsa::runtime::shutdown::Shutdown::new(),
            None,
            None,
        )
        .await;
        source.arena().quit_all().await;
        out
    });
    let wall = started.elapsed().as_secs_f64();
    let cpu1 = cpu_times();
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
    if let Ok(fastchess) = std::env::var("FASTCHESS") {
        let book = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("openings/balanced_6ply.epd");
        against_fastchess(Path::new(&fastchess), &engine, &book, pairs);
    }
}

/// One finished child process: wall time from spawn to exit, and its CPU split from
/// /proc/<pid>/stat read while it was a zombie.
struct Run {
    wall: f64,
    own_user: f64,
    own_sys: f64,
    engines: f64,
}

impl Run {
    fn own(&self) -> f64 {
        self.own_user + self.own_sys
    }
}

/// utime, stime, cutime, cstime (seconds) and the state letter of a process.
fn proc_times(pid: u32) -> Option<(char, [f64; 4])> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let state = f.first()?.chars().next()?;
    let tck = clock_ticks();
    let num = |i: usize| {
        f.get(i - 3)
            .and_then(|v| v.parse::<f64>().ok())
            .map(|v| v / tck)
    };
    Some((state, [num(14)?, num(15)?, num(16)?, num(17)?]))
}

/// Run `cmd` to its end in `dir`, polling every 2 ms for the zombie state to read its times.
fn measure(mut cmd: Command, dir: &Path) -> Run {
    let started = Instant::now();
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the match program starts");
    let pid = child.id();
    let times = loop {
        match proc_times(pid) {
            Some(('Z', t)) => break t,
            Some(_) => std::thread::sleep(Duration::from_millis(2)),
            None => panic!("/proc/{pid}/stat vanished before the child was reaped"),
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let status = child.wait().expect("wait");
    assert!(status.success(), "{cmd:?} failed ({status})");
    Run {
        wall,
        own_user: times[0],
        own_sys: times[1],
        engines: times[2] + times[3],
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The games of a PGN file as their SAN move sequences (comments, numbers, results dropped),
/// counted, so two programs' games can be compared whatever order they finished in.
fn movetexts(pgn: &str) -> HashMap<String, usize> {
    let mut games = HashMap::new();
    let mut moves = String::new();
    let mut in_comment = false;
    let mut finish = |moves: &mut String| {
        if !moves.is_empty() {
            *games.entry(std::mem::take(moves)).or_insert(0) += 1;
        }
    };
    for line in pgn.lines() {
        if line.starts_with('[') {
            finish(&mut moves);
            continue;
        }
        let mut token = String::new();
        for c in line.chars().chain([' ']) {
            match c {
                '{' => in_comment = true,
                '}' => in_comment = false,
                _ if in_comment => {}
                c if c.is_whitespace() => {
                    let t = std::mem::take(&mut token);
                    let number = t.trim_end_matches('.').chars().all(|c| c.is_ascii_digit());
                    let result = matches!(t.as_str(), "1-0" | "0-1" | "1/2-1/2" | "*");
                    if !t.is_empty() && !number && !result {
                        moves.push_str(&t);
                        moves.push(' ');
                    }
                }
                c => token.push(c),
            }
        }
    }
    finish(&mut moves);
    games
}

fn game_count(games: &HashMap<String, usize>) -> usize {
    games.values().sum()
}

/// The same match with fastchess and with `spsa match`, alternating, side by side.
fn against_fastchess(fastchess: &Path, engine: &str, book: &Path, pairs: u64) {
    if !fastchess.exists() {
        println!(
            "fastchess: {} not found; skipping the comparison",
            fastchess.display()
        );
        return;
    }
    let rounds: usize = std::env::var("MATCH_SPEED_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir().expect("temp dir");
    // fastchess rejects the book's `#` comment lines: play a copy without them.
    let epd = dir.path().join("book.epd");
    let text = std::fs::read_to_string(book).expect("the book");
    let positions: String = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&epd, positions).expect("write the EPD copy");
    let (epd_s, pairs_s) = (epd.to_str().expect("utf-8 path"), pairs.to_string());
    let spsa_cmd = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_spsa"));
        c.args(["match", "--engine1", engine, "--option", "Threads=1"])
            .args([
                "--option",
                "Hash=16",
                "--nodes",
                "5000",
                "--concurrency",
                "2",
            ])
            .args([
                "--pairs",
                &pairs_s,
                "--book",
                epd_s,
                "--sequential",
                "--seed",
                "1",
            ])
            .args(["--progress", "0", "--pgn", "spsa.pgn"]);
        c
    };
    let fastchess_cmd = || {
        let mut c = Command::new(fastchess);
        let each = ["tc=inf", "nodes=5000", "option.Threads=1", "option.Hash=16"];
        c.args(["-engine", &format!("cmd={engine}"), "name=sf1"])
            .args(["-engine", &format!("cmd={engine}"), "name=sf2", "-each"])
            .args(each)
            .args([
                "-openings",
                &format!("file={epd_s}"),
                "format=epd",
                "order=sequential",
            ])
            .args([
                "-rounds",
                &pairs_s,
                "-games",
                "2",
                "-repeat",
                "-concurrency",
                "2",
            ])
            .args(["-pgnout", "file=fastchess.pgn"]);
        c
    };
    println!(
        "\nvs fastchess {}: {} games per run, {rounds} rounds alternating, load average {}",
        fastchess.display(),
        2 * pairs,
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    );
    let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    let mut last_games: [HashMap<String, usize>; 2] = [HashMap::new(), HashMap::new()];
    let names = ["fastchess", "spsa"];
    for round in 0..rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            for pgn in ["spsa.pgn", "fastchess.pgn", "config.json"] {
                let _ = std::fs::remove_file(dir.path().join(pgn));
            }
            let cmd = if side == 0 {
                fastchess_cmd()
            } else {
                spsa_cmd()
            };
            let run = measure(cmd, dir.path());
            let pgn_name = if side == 0 {
                "fastchess.pgn"
            } else {
                "spsa.pgn"
            };
            let pgn = std::fs::read_to_string(dir.path().join(pgn_name)).unwrap_or_default();
            let games = movetexts(&pgn);
            println!(
                "round {}: {:<9} wall {:6.2} s, {:5.2} games/s, own CPU {:.3} s (user {:.3}, sys {:.3}), engines {:.2} s, {} games",
                round + 1,
                names[side],
                run.wall,
                game_count(&games) as f64 / run.wall,
                run.own(),
                run.own_user,
                run.own_sys,
                run.engines,
                game_count(&games)
            );
            last_games[side] = games;
            runs[side].push(run);
        }
    }
    let games = 2.0 * pairs as f64;
    let wall = |s: usize| median(runs[s].iter().map(|r| r.wall).collect());
    let own = |s: usize| median(runs[s].iter().map(|r| r.own()).collect());
    let engines = |s: usize| median(runs[s].iter().map(|r| r.engines).collect());
    for (side, name) in names.iter().enumerate() {
        println!(
            "median {name:<9} wall {:6.2} s, {:5.2} games/s, own CPU {:.3} s, engines {:.2} s",
            wall(side),
            games / wall(side),
            own(side),
            engines(side)
        );
    }
    let per_round = |f: &dyn Fn(&Run) -> f64| {
        median(
            runs[1]
                .iter()
                .zip(&runs[0])
                .map(|(s, f_)| f(s) / f(f_))
                .collect(),
        )
    };
    println!(
        "ratio spsa/fastchess: wall {:.3} (median of per-round ratios {:.3}), own CPU {:.3} ({:.3}), engines CPU {:.3}",
        wall(1) / wall(0),
        per_round(&|r| r.wall),
        own(1) / own(0),
        per_round(&|r| r.own()),
        engines(1) / engines(0)
    );
    let [fc, sp] = &last_games;
    let same: usize = fc
        .iter()
        .map(|(g, n)| (*n).min(*sp.get(g).unwrap_or(&0)))
        .sum();
    println!(
        "games identical (same moves) in the last round: {same} of {}",
        game_count(fc).max(game_count(sp))
    );
}
