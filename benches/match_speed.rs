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
//! reaped (a zombie's times are final and its children's are kept apart: `waitid` with
//! `WNOWAIT` waits for the exit without reaping); a thread samples the program's peak RSS and
//! its threads' context switches (wake-ups) and their run-queue wait (time runnable without a
//! core, from /proc/…/schedstat) every half second. fastchess is not part of this
//! project: bring and build your own and name its path.
//!
//! `MATCH_SPEED_SUITE=high` (with `FASTCHESS`) instead compares many games at once: the bundled
//! sparring engine at depth 1 on 64 and 256 slots (`MATCH_SPEED_CONCURRENCY=64,256`, 4 games per
//! slot: `MATCH_SPEED_GAMES_PER_SLOT`), then Stockfish (Threads 1, Hash 16) at 1 s + 10 ms with
//! a 50 ms time margin on 16 slots, 64 games, counting the games each program lost on time
//! (`MATCH_SPEED_CLOCK=0` skips it). It prints per game: own CPU, context switches, and peak
//! RSS per slot, with the ratios spsa/fastchess.
//!
//! `MATCH_SPEED_VARIANT=chess960` plays the bundled Chess960 and DFRC start positions
//! (`openings/chess960_sample.epd`) instead, both programs in their Chess960 mode, and the games
//! are compared move for move as the standard ones are.
//!
//! Both comparisons end with each program's wall time over its floor, (engines' CPU + own CPU)
//! / the cores it may use: how busy it keeps the machine. It is printed twice: to the program's
//! exit, and to its last game (its PGN file's last write), because fastchess looks once a second
//! whether its games are done, so its exit comes up to a second after its last game.
//!
//! `MATCH_SPEED_BASELINE=/path/to/an/older/spsa` puts that binary in fastchess's place (and needs
//! no fastchess): a change measured against the code before it, in the same alternating rounds.
//!
//! `spsa match` binds each slot to cores of its own when the slots fill the cores (as here, with
//! concurrency 2 on two cores); fastchess does so only with `-use-affinity`, which
//! `MATCH_SPEED_FASTCHESS_AFFINITY=1` passes, to compare bound with bound. `MATCH_SPEED_UNBOUND=1`
//! runs `spsa match --no-bind-cores` instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use spsa::cli::flags::MatchFlags;
use spsa::cli::r#match::MatchArgs;
use spsa::matchrun;

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
    if std::env::var("MATCH_SPEED_SUITE").is_ok_and(|s| s == "high") {
        match std::env::var("FASTCHESS") {
            Ok(f) => high_concurrency(Path::new(&f)),
            Err(_) => println!("match_speed: MATCH_SPEED_SUITE=high needs FASTCHESS=/path"),
        }
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
    let args = MatchArgs {
        engine1: Some(engine.clone().into()),
        options: vec!["Threads=1".into(), "Hash=16".into()],
        flags: MatchFlags {
            pairs: Some(pairs),
            concurrency: Some(2),
            book: Some(book()),
            variant: chess960().then_some(spsa::game::Variant::Chess960),
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
        let mut plan = args.plan().await.expect("plan");
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
    // A baseline build takes fastchess's side when named (see `against_fastchess`).
    if std::env::var_os("FASTCHESS").is_some() || std::env::var_os("MATCH_SPEED_BASELINE").is_some()
    {
        let fastchess = std::env::var("FASTCHESS").unwrap_or_default();
        let setup = Setup {
            engine,
            options: vec!["Threads=1", "Hash=16"],
            limit: Limit::Nodes(5000),
            concurrency: 2,
            pairs,
        };
        against_fastchess(Path::new(&fastchess), &setup, &book());
    }
}

fn book() -> PathBuf {
    let name = if chess960() {
        "openings/chess960_sample.epd"
    } else {
        "openings/balanced_6ply.epd"
    };
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// `MATCH_SPEED_VARIANT=chess960`: the same comparison on the bundled Chess960 and DFRC start
/// positions, both programs told the variant (`--variant chess960`, `-variant fischerandom`).
fn chess960() -> bool {
    std::env::var("MATCH_SPEED_VARIANT").is_ok_and(|v| v == "chess960" || v == "dfrc")
}

/// `MATCH_SPEED_SUITE=high`: many games at once against fastchess. The bundled sparring engine
/// at depth 1 (a real engine whose games are deterministic and cheap, so the managers' own
/// costs show) at each concurrency of `MATCH_SPEED_CONCURRENCY` (default `64,256`), 4 games per
/// slot (`MATCH_SPEED_GAMES_PER_SLOT`); then Stockfish (Threads 1, Hash 16) at 1 s + 10 ms on
/// 16 slots, 64 games, counting games lost on time by each program.
fn high_concurrency(fastchess: &Path) {
    let list = std::env::var("MATCH_SPEED_CONCURRENCY").unwrap_or("64,256".into());
    let per_slot: u64 = std::env::var("MATCH_SPEED_GAMES_PER_SLOT")
        .ok()
        .and_then(|g| g.parse().ok())
        .unwrap_or(4);
    for c in list
        .split(',')
        .filter_map(|c| c.trim().parse::<usize>().ok())
    {
        let setup = Setup {
            engine: env!("CARGO_BIN_EXE_sparring").to_string(),
            options: Vec::new(),
            limit: Limit::Depth(1),
            concurrency: c,
            pairs: (c as u64 * per_slot).div_ceil(2),
        };
        against_fastchess(fastchess, &setup, &book());
    }
    let stockfish = std::env::var("MATCH_SPEED_ENGINE").unwrap_or("/usr/games/stockfish".into());
    if std::env::var("MATCH_SPEED_CLOCK").is_ok_and(|c| c == "0") || !Path::new(&stockfish).exists()
    {
        return;
    }
    let setup = Setup {
        engine: stockfish,
        options: vec!["Threads=1", "Hash=16"],
        limit: Limit::Clock(1000, 10),
        concurrency: 16,
        pairs: 32,
    };
    against_fastchess(fastchess, &setup, &book());
}

/// One finished child process: wall time from spawn to exit, its CPU split from
/// /proc/<pid>/stat read while it was a zombie, its peak RSS and its threads' context switches
/// (sampled while it ran).
struct Run {
    wall: f64,
    /// When it spawned, wall clock: its PGN's modification time less this is when its last game
    /// was written (fastchess checks once a second whether its games are done, so its exit can
    /// come up to a second after its last game).
    spawned: std::time::SystemTime,
    /// Seconds from spawn to its last game's PGN write (its wall time if the PGN is missing).
    to_last_game: f64,
    own_user: f64,
    own_sys: f64,
    engines: f64,
    /// VmHWM, MB (the last sample before the exit).
    peak_rss_mb: f64,
    /// Voluntary + involuntary context switches of its threads, summed (the largest sample).
    switches: u64,
    /// Time its threads spent runnable but waiting for a core (schedstat's run delay), and the
    /// number of times they got one, summed over its threads (the largest sample): how late
    /// the manager itself gets to an engine's answer on a crowded machine.
    run_delay_s: f64,
    slices: u64,
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

/// The value of `key` (e.g. `VmHWM:`) in a /proc status text.
fn status_value(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// What the sampler reads of a running process.
#[derive(Clone, Copy, Default)]
struct Sample {
    /// Peak RSS, MB.
    rss: Option<f64>,
    /// Its live threads' context switches, summed.
    switches: u64,
    /// Its live threads' run-queue wait (ns) and time slices, summed (/proc/…/schedstat).
    run_delay_ns: u64,
    slices: u64,
}

fn sample(pid: u32) -> Sample {
    let rss = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| status_value(&s, "VmHWM:"))
        .map(|kb| kb as f64 / 1024.0);
    let mut out = Sample {
        rss,
        ..Sample::default()
    };
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("status")) {
                out.switches += status_value(&s, "voluntary_ctxt_switches:").unwrap_or(0)
                    + status_value(&s, "nonvoluntary_ctxt_switches:").unwrap_or(0);
            }
            if let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) {
                let f: Vec<u64> = s
                    .split_whitespace()
                    .filter_map(|v| v.parse().ok())
                    .collect();
                if let [_, delay, slices] = f[..] {
                    out.run_delay_ns += delay;
                    out.slices += slices;
                }
            }
        }
    }
    out
}

/// Run `cmd` to its end in `dir`: wait for its exit without reaping it (`waitid` with
/// `WNOWAIT`), read its final times from the zombie, then reap it. A thread samples its memory
/// and context switches every half second meanwhile.
fn measure(mut cmd: Command, dir: &Path) -> Run {
    let spawned = std::time::SystemTime::now();
    let started = Instant::now();
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the match program starts");
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let (mut rss, mut most) = (f64::NAN, Sample::default());
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let s = sample(pid);
                if let Some(r) = s.rss {
                    rss = r;
                }
                most.switches = most.switches.max(s.switches);
                if s.run_delay_ns > most.run_delay_ns {
                    (most.run_delay_ns, most.slices) = (s.run_delay_ns, s.slices);
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            (rss, most)
        })
    };
    // SAFETY: waitid fills one siginfo_t through a valid pointer; WNOWAIT leaves the child
    // unreaped, so its pid and /proc entry stay ours until `wait` below.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    loop {
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            break;
        }
        assert_eq!(
            std::io::Error::last_os_error().kind(),
            std::io::ErrorKind::Interrupted,
            "waitid"
        );
    }
    let wall = started.elapsed().as_secs_f64();
    let (_, times) = proc_times(pid).expect("the zombie's /proc/<pid>/stat");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (peak_rss_mb, most) = sampler.join().expect("sampler");
    let status = child.wait().expect("wait");
    assert!(status.success(), "{cmd:?} failed ({status})");
    Run {
        wall,
        spawned,
        to_last_game: wall,
        own_user: times[0],
        own_sys: times[1],
        engines: times[2] + times[3],
        peak_rss_mb,
        switches: most.switches,
        run_delay_s: most.run_delay_ns as f64 / 1e9,
        slices: most.slices,
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

/// How each search of a compared match is limited.
#[derive(Clone, Copy)]
enum Limit {
    Nodes(u64),
    Depth(u32),
    /// Base and increment in milliseconds.
    Clock(u64, u64),
}

/// One match that both programs play: the same engine for both sides, the same options, the
/// book's openings in file order, colours reversed per opening.
struct Setup {
    engine: String,
    /// UCI options for both engines, `NAME=VALUE`.
    options: Vec<&'static str>,
    limit: Limit,
    concurrency: usize,
    pairs: u64,
}

impl Setup {
    fn describe(&self) -> String {
        let limit = match self.limit {
            Limit::Nodes(n) => format!("nodes={n}"),
            Limit::Depth(d) => format!("depth={d}"),
            Limit::Clock(b, i) => format!("{b} ms + {i} ms"),
        };
        let engine = Path::new(&self.engine)
            .file_name()
            .map_or(self.engine.clone(), |n| n.to_string_lossy().into_owned());
        format!(
            "{engine} {limit} {}, concurrency {}, {} games",
            self.options.join(" "),
            self.concurrency,
            2 * self.pairs
        )
    }

    /// `spsa match` by `binary` (this build's, or an older one to compare with), its games
    /// written to `pgn`.
    fn spsa(&self, binary: &Path, epd: &str, pgn: &str) -> Command {
        let mut c = Command::new(binary);
        c.args(["match", "--engine1", &self.engine]);
        for o in &self.options {
            c.args(["--option", o]);
        }
        match self.limit {
            Limit::Nodes(n) => c.args(["--nodes", &n.to_string()]),
            Limit::Depth(d) => c.args(["--depth", &d.to_string()]),
            Limit::Clock(b, i) => c.args(["--tc", &format!("{b}+{i}"), "--time-margin", "50"]),
        };
        c.args(["--concurrency", &self.concurrency.to_string()])
            .args(["--pairs", &self.pairs.to_string(), "--book", epd])
            .args(["--sequential", "--seed", "1"])
            .args(if chess960() {
                &["--variant", "chess960"][..]
            } else {
                &[]
            })
            .args(["--progress", "0", "--pgn", pgn]);
        if std::env::var_os("MATCH_SPEED_UNBOUND").is_some() {
            c.arg("--no-bind-cores");
        }
        c
    }

    fn fastchess(&self, fastchess: &Path, epd: &str) -> Command {
        let mut c = Command::new(fastchess);
        c.args(["-engine", &format!("cmd={}", self.engine), "name=e1"])
            .args([
                "-engine",
                &format!("cmd={}", self.engine),
                "name=e2",
                "-each",
            ]);
        match self.limit {
            Limit::Nodes(n) => c.args(["tc=inf".to_string(), format!("nodes={n}")]),
            Limit::Depth(d) => c.args(["tc=inf".to_string(), format!("depth={d}")]),
            Limit::Clock(b, i) => c.args([
                format!("tc={}+{}", b as f64 / 1000.0, i as f64 / 1000.0),
                "timemargin=50".to_string(),
            ]),
        };
        for o in &self.options {
            c.arg(format!("option.{o}"));
        }
        c.args([
            "-openings",
            &format!("file={epd}"),
            "format=epd",
            "order=sequential",
        ])
        .args(["-rounds", &self.pairs.to_string(), "-games", "2", "-repeat"])
        .args(["-concurrency", &self.concurrency.to_string()])
        .args(if chess960() {
            &["-variant", "fischerandom"][..]
        } else {
            &[]
        })
        .args(["-pgnout", "file=fastchess.pgn"]);
        if std::env::var_os("MATCH_SPEED_FASTCHESS_AFFINITY").is_some() {
            c.arg("-use-affinity");
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if self.concurrency > cores {
            // fastchess caps the concurrency at the hardware threads unless told otherwise.
            c.arg("-force-concurrency");
        }
        c
    }
}

/// Games in a PGN text that ended on time.
fn time_losses(pgn: &str) -> usize {
    pgn.lines()
        .filter(|l| l.starts_with("[Termination ") && l.contains("time forfeit"))
        .count()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The book without its `#` comment lines (fastchess rejects them), in `dir`.
fn plain_epd(book: &Path, dir: &Path) -> PathBuf {
    let epd = dir.join("book.epd");
    let text = std::fs::read_to_string(book).expect("the book");
    let positions: String = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&epd, positions).expect("write the EPD copy");
    epd
}

/// The same match with fastchess and with `spsa match`, alternating which goes first, side by
/// side; prints each run, the medians and the ratios spsa/fastchess.
fn against_fastchess(fastchess: &Path, setup: &Setup, book: &Path) {
    // `MATCH_SPEED_BASELINE=/path/to/an/older/spsa`: that binary takes fastchess's side, so a
    // change is measured against the code before it in the same alternating rounds.
    let baseline = std::env::var_os("MATCH_SPEED_BASELINE").map(PathBuf::from);
    let (other, fastchess) = match &baseline {
        Some(b) => ("baseline", b.as_path()),
        None => ("fastchess", fastchess),
    };
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
    let epd = plain_epd(book, dir.path());
    let epd = epd.to_str().expect("utf-8 path");
    let bound = |var: &str, yes: &str, no: &str| {
        if std::env::var_os(var).is_some() {
            yes.to_string()
        } else {
            no.to_string()
        }
    };
    println!(
        "\nvs {other} {}: {}, {rounds} rounds alternating, load average {}; spsa {}, {other} {}",
        fastchess.display(),
        setup.describe(),
        load_average(),
        bound(
            "MATCH_SPEED_UNBOUND",
            "--no-bind-cores",
            "binding slots that fill the cores"
        ),
        bound(
            "MATCH_SPEED_FASTCHESS_AFFINITY",
            "-use-affinity",
            "as it defaults"
        ),
    );
    let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    let mut losses: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    let mut last_games: [HashMap<String, usize>; 2] = [HashMap::new(), HashMap::new()];
    let names = [other, "spsa"];
    let pgn_names = names.map(|name| format!("{name}.pgn"));
    for round in 0..rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            for pgn in ["spsa.pgn", "fastchess.pgn", "baseline.pgn", "config.json"] {
                let _ = std::fs::remove_file(dir.path().join(pgn));
            }
            let cmd = match (side, &baseline) {
                (0, None) => setup.fastchess(fastchess, epd),
                (0, Some(b)) => setup.spsa(b, epd, &pgn_names[0]),
                _ => setup.spsa(Path::new(env!("CARGO_BIN_EXE_spsa")), epd, &pgn_names[1]),
            };
            let mut run = measure(cmd, dir.path());
            let pgn_path = dir.path().join(&pgn_names[side]);
            if let Some(at) = std::fs::metadata(&pgn_path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| m.duration_since(run.spawned).ok())
            {
                run.to_last_game = at.as_secs_f64().min(run.wall);
            }
            let pgn = std::fs::read_to_string(&pgn_path).unwrap_or_default();
            let games = movetexts(&pgn);
            let n = game_count(&games);
            println!(
                "round {}: {:<9} wall {:6.2} s (last game {:6.2} s), {:6.1} games/min, own CPU {:.3} s (user {:.3}, sys {:.3}), engines {:.2} s, {n} games, {} on time, peak RSS {:.1} MB, {} context switches, run-queue wait {:.3} s ({:.0} µs per slice), load {}",
                round + 1,
                names[side],
                run.wall,
                run.to_last_game,
                n as f64 * 60.0 / run.wall,
                run.own(),
                run.own_user,
                run.own_sys,
                run.engines,
                time_losses(&pgn),
                run.peak_rss_mb,
                run.switches,
                run.run_delay_s,
                run.run_delay_s * 1e6 / run.slices.max(1) as f64,
                load_average()
            );
            losses[side].push(time_losses(&pgn));
            last_games[side] = games;
            runs[side].push(run);
        }
    }
    let games = 2.0 * setup.pairs as f64;
    let c = setup.concurrency as f64;
    let wall = |s: usize| median(runs[s].iter().map(|r| r.wall).collect());
    let own = |s: usize| median(runs[s].iter().map(|r| r.own()).collect());
    let engines = |s: usize| median(runs[s].iter().map(|r| r.engines).collect());
    let rss = |s: usize| median(runs[s].iter().map(|r| r.peak_rss_mb).collect());
    let switches = |s: usize| median(runs[s].iter().map(|r| r.switches as f64).collect());
    let waits = |s: usize| median(runs[s].iter().map(|r| r.run_delay_s).collect());
    for (side, name) in names.iter().enumerate() {
        println!(
            "median {name:<9} wall {:6.2} s, {:6.1} games/min, own CPU {:.3} s = {:.2} ms per game, engines {:.2} s, peak RSS {:.1} MB = {:.0} kB per slot, {:.0} context switches per game, run-queue wait {:.2} ms per game, time losses {:?}",
            wall(side),
            games * 60.0 / wall(side),
            own(side),
            own(side) * 1000.0 / games,
            engines(side),
            rss(side),
            rss(side) * 1024.0 / c,
            switches(side) / games,
            waits(side) * 1000.0 / games,
            losses[side]
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
        "ratio spsa/{other}: wall {:.3} (median of per-round ratios {:.3}), games/min {:.3}, own CPU {:.3} ({:.3}), engines CPU {:.3}, peak RSS {:.3}, context switches {:.3}",
        wall(1) / wall(0),
        per_round(&|r| r.wall),
        wall(0) / wall(1),
        own(1) / own(0),
        per_round(&|r| r.own()),
        engines(1) / engines(0),
        rss(1) / rss(0),
        switches(1) / switches(0)
    );
    // No manager can finish the games faster than the engines' CPU and its own shared over the
    // cores it may use: the floor. Wall over floor says how busy a manager keeps the cores.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let lanes = cores.min(c);
    let over_floor = |r: &Run| r.wall / ((r.engines + r.own()) / lanes);
    // The same to the last game's PGN write: what the games took, without a program's exit.
    let games_over_floor = |r: &Run| r.to_last_game / ((r.engines + r.own()) / lanes);
    for (side, name) in names.iter().enumerate() {
        println!(
            "median {name:<9} wall over its floor ((engines' CPU + own CPU) / {lanes} cores): {:.3}; to its last game: {:.3} ({:.2} s)",
            median(runs[side].iter().map(over_floor).collect()),
            median(runs[side].iter().map(games_over_floor).collect()),
            median(runs[side].iter().map(|r| r.to_last_game).collect())
        );
    }
    println!(
        "ratio spsa/{other}: wall over floor {:.3} (median of per-round ratios {:.3}), to the last game {:.3} ({:.3}), own CPU {:.3} (median of per-round ratios {:.3})",
        median(runs[1].iter().map(over_floor).collect())
            / median(runs[0].iter().map(over_floor).collect()),
        per_round(&over_floor),
        median(runs[1].iter().map(games_over_floor).collect())
            / median(runs[0].iter().map(games_over_floor).collect()),
        per_round(&games_over_floor),
        own(1) / own(0),
        per_round(&|r| r.own()),
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
