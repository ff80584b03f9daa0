//! How much of a tune from positions is ours: positions scored per second, and our process's CPU
//! time per evaluation next to the engine's, for sparring and Stockfish at depth 1 and 2, one
//! engine process, measured side by side in one run (medians over rounds).
//!
//! The engine is driven as an SPSA tune from positions drives each of its engines: one trial's
//! FENs written once (`FenBatch`, as `Evaluator::paired_loss` does) and scored at θ+ and at θ−
//! by `EvalEngine::score_both`, which blocks the calling thread on the engine's pipe (here the
//! bench's main thread; in a run, the engine's own thread). Rates and CPU are per evaluation (a
//! position at one θ).
//!
//! Our CPU is the on-CPU time of this process's threads (/proc/self/task/*/schedstat: the position
//! store, FEN writing, the UCI exchange, the loss); the engine's is the same figure for its
//! process, read while it runs. Target: ours ≤ 10% of the engine's at depth 1.
//!
//! Beside each engine's rows it drives the same engine through a **bare pipe**: a fresh process of
//! it, the same options, and a loop on this thread that writes `position fen F` + `go depth D` in
//! one `write` and reads lines through a `BufReader` until `bestmove`, keeping the last
//! `score cp`/`score mate` (its FENs are written before the clock starts, so it is a lower bound on
//! what any driver costs). Rounds alternate between the two, and the table prints our positions/s
//! and our CPU per position as ratios of the bare pipe's.
//!
//! Run: `cargo bench --bench positions_eval` (release), or build it in the dev profile for an
//! upper bound on our share (`cargo build --benches` then run the binary in target/debug/deps).
//! Environment: `POSITIONS_EVAL_N` positions per round (default 400), `POSITIONS_EVAL_ROUNDS`
//! (default 5).

use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use shakmaty::{Chess, Position};
use spsa::arena::EngineSetup;
use spsa::config::positions::PositionSearch;
use spsa::engine::{EngineSpec, OptionValue};
use spsa::positions::eval::{EvalEngine, EvalSettings, FenBatch};
use spsa::positions::{LabelledPositions, Loss, LossKind, Outcome};

/// On-CPU seconds of a process: the larger of two readings. The sum of the first fields of
/// /proc/PID/task/*/schedstat is precise (nanoseconds) but misses threads that exited (an engine
/// that searches in a new thread per `go`); utime+stime of /proc/PID/stat counts every thread
/// but in clock ticks (10 ms).
fn cpu_of(pid: &str) -> f64 {
    let precise = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
                .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
                .sum::<f64>()
                / 1e9
        })
        .unwrap_or(0.0);
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let ticks = stat.rfind(')').map_or(0.0, |close| {
        let f: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        let num = |i: usize| {
            f.get(i - 3)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        (num(14) + num(15)) / 100.0
    });
    precise.max(ticks)
}

/// Positions from seeded random games, 8 to 60 plies, not in check.
fn positions(n: usize) -> LabelledPositions {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(42);
    let mut set = LabelledPositions::new();
    while set.len() < n {
        let mut pos = Chess::default();
        for _ in 0..rng.random_range(8..60) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
        if !pos.is_check() && !pos.is_game_over() {
            let o = [Outcome::WhiteWins, Outcome::Draw, Outcome::BlackWins][set.len() % 3];
            set.push(&pos, o).expect("fits");
        }
    }
    set
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Row {
    name: String,
    per_sec: f64,
    ours_us: f64,
    engine_us: f64,
    /// The bare pipe's positions/s and its CPU µs per position.
    bare_per_sec: f64,
    bare_us: f64,
}

/// The least a driver can do: one engine process, one `write` per position, buffered reads of its
/// lines until `bestmove`, the score taken from the last `info ... score`.
struct BarePipe {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
    line: String,
    buf: String,
}

impl BarePipe {
    fn start(setup: &EngineSetup) -> BarePipe {
        use std::process::{Command, Stdio};
        let mut child = Command::new(&setup.spec.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("engine starts");
        let input = child.stdin.take().expect("stdin");
        let output = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut p = BarePipe {
            child,
            input,
            output,
            line: String::new(),
            buf: String::new(),
        };
        p.send("uci\n");
        p.read_until("uciok");
        for (name, value) in &setup.fixed {
            let value = match value {
                OptionValue::Number(v) => v.to_string(),
                other => format!("{other:?}"),
            };
            p.send(&format!("setoption name {name} value {value}\n"));
        }
        p.send("ucinewgame\nisready\n");
        p.read_until("readyok");
        p
    }

    fn send(&mut self, text: &str) {
        use std::io::Write;
        self.input.write_all(text.as_bytes()).expect("engine reads");
    }

    /// Read lines until one starts with `prefix`; the last score seen on the way.
    fn read_until(&mut self, prefix: &str) -> Option<i32> {
        use std::io::BufRead;
        let mut score = None;
        loop {
            self.line.clear();
            let n = self
                .output
                .read_line(&mut self.line)
                .expect("engine writes");
            assert!(n > 0, "the engine ended");
            if self.line.starts_with(prefix) {
                return score;
            }
            if let Some(at) = self.line.find(" score ") {
                let mut words = self.line[at + 7..].split_whitespace();
                score = match (
                    words.next(),
                    words.next().and_then(|v| v.parse::<i32>().ok()),
                ) {
                    (Some("cp"), Some(v)) => Some(v),
                    (Some("mate"), Some(v)) => Some(if v > 0 { 30_000 - v } else { -30_000 - v }),
                    _ => score,
                };
            }
        }
    }

    /// Score every FEN at `depth`; how many got a score.
    fn score(&mut self, fens: &[String], depth: u32) -> usize {
        self.send("ucinewgame\nisready\n");
        self.read_until("readyok");
        let mut scored = 0;
        for fen in fens {
            self.buf.clear();
            self.buf.push_str("position fen ");
            self.buf.push_str(fen);
            self.buf.push_str("\ngo depth ");
            self.buf.push_str(&depth.to_string());
            self.buf.push('\n');
            let text = std::mem::take(&mut self.buf);
            self.send(&text);
            self.buf = text;
            scored += usize::from(self.read_until("bestmove").is_some());
        }
        scored
    }

    fn quit(mut self) {
        self.send("quit\n");
        let _ = self.child.wait();
    }
}

async fn measure(
    name: &str,
    setup: &EngineSetup,
    tuned: &[(String, f64)],
    depth: u32,
    set: &LabelledPositions,
    rounds: usize,
) -> Row {
    let settings = EvalSettings {
        search: PositionSearch::Depth(depth),
        deadline: Duration::from_secs(60),
    };
    let names: Vec<String> = tuned.iter().map(|t| t.0.clone()).collect();
    let mut e = EvalEngine::start(setup, settings, &names)
        .await
        .expect("engine starts");
    let pid = e.pid().expect("running");
    let engine_pid = pid.to_string();
    let all: Vec<usize> = (0..set.len()).collect();
    let loss = Loss::new(LossKind::Texel, 1.0);
    // θ− of a trial: every tuned value one step away, so each side sends its own values.
    let tuned_minus: Vec<(String, f64)> = tuned.iter().map(|(n, v)| (n.clone(), v + 1.0)).collect();
    // Warm-up: page in the engine, its hash, our buffers.
    e.score(set, &all[..20.min(all.len())], tuned)
        .await
        .expect("scores");
    let mut bare = BarePipe::start(&EngineSetup {
        spec: setup.spec.clone(),
        fixed: setup
            .fixed
            .iter()
            .cloned()
            .chain(
                tuned
                    .iter()
                    .map(|(n, v)| (n.clone(), OptionValue::Number(*v))),
            )
            .collect(),
    });
    let fens: Vec<String> = all.iter().map(|&i| set.fen(i)).collect();
    bare.score(&fens[..20.min(fens.len())], depth);
    let (mut rate, mut ours, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut bare_rate, mut bare_cpu) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate which goes first, so a change of load falls on both.
        let mut bare_round = || {
            let (o0, w0) = (cpu_of("self"), Instant::now());
            let scored = bare.score(&fens, depth);
            let wall = w0.elapsed().as_secs_f64();
            assert_eq!(scored, fens.len(), "the bare pipe scores every position");
            let n = fens.len() as f64;
            bare_rate.push(n / wall);
            bare_cpu.push((cpu_of("self") - o0) / n * 1e6);
        };
        if round % 2 == 1 {
            bare_round();
        }
        let (o0, t0, w0) = (cpu_of("self"), cpu_of(&engine_pid), Instant::now());
        // One SPSA trial's part, as `Evaluator::paired_loss` runs it: the FENs written once and
        // scored at θ+ and θ−, and both losses.
        let fens = FenBatch::of(set, &all);
        let (plus, minus) = e
            .score_both(&fens, tuned, &tuned_minus)
            .await
            .expect("scores");
        for s in [plus, minus] {
            let l = loss.mean(
                s.scores
                    .iter()
                    .enumerate()
                    .filter_map(|(i, q)| q.map(|q| (set.outcome(i), q))),
            );
            std::hint::black_box(l);
        }
        let wall = w0.elapsed().as_secs_f64();
        let (o1, t1) = (cpu_of("self"), cpu_of(&engine_pid));
        let n = 2.0 * set.len() as f64;
        rate.push(n / wall);
        ours.push((o1 - o0) / n * 1e6);
        theirs.push((t1 - t0) / n * 1e6);
        if round % 2 == 0 {
            bare_round();
        }
    }
    e.quit().await;
    bare.quit();
    Row {
        name: format!("{name} depth {depth}"),
        per_sec: median(rate),
        ours_us: median(ours),
        engine_us: median(theirs),
        bare_per_sec: median(bare_rate),
        bare_us: median(bare_cpu),
    }
}

fn main() {
    let n: usize = std::env::var("POSITIONS_EVAL_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let rounds: usize = std::env::var("POSITIONS_EVAL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let set = positions(n);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let sparring = EngineSetup {
        spec: EngineSpec::new("sparring", env!("CARGO_BIN_EXE_sparring")),
        fixed: vec![("Hash".into(), OptionValue::Number(1.0))],
    };
    let sparring_tuned = vec![
        ("PawnValue".to_string(), 100.0),
        ("Tempo".to_string(), 10.0),
    ];
    let stockfish = EngineSetup {
        spec: EngineSpec::new("stockfish", "/usr/games/stockfish"),
        fixed: vec![
            ("Hash".into(), OptionValue::Number(8.0)),
            ("Threads".into(), OptionValue::Number(1.0)),
        ],
    };
    let mut rows = Vec::new();
    rt.block_on(async {
        for depth in [1, 2] {
            rows.push(measure("sparring", &sparring, &sparring_tuned, depth, &set, rounds).await);
            if std::path::Path::new("/usr/games/stockfish").exists() {
                rows.push(measure("stockfish", &stockfish, &[], depth, &set, rounds).await);
            }
        }
    });
    // Our share grows with the machine's load (each wake-up costs more), so the figures carry it.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!(
        "{n} positions per round, {rounds} rounds, medians; build: {}; load average {}",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        load.join(" ")
    );
    println!(
        "{:<20} {:>12} {:>14} {:>16} {:>12} {:>12} {:>13} {:>11} {:>11}",
        "engine",
        "positions/s",
        "ours µs/pos",
        "engine µs/pos",
        "ours/engine",
        "bare pos/s",
        "bare µs/pos",
        "pos/s ÷bare",
        "CPU ÷bare"
    );
    for r in rows {
        println!(
            "{:<20} {:>12.0} {:>14.1} {:>16.1} {:>11.1}% {:>12.0} {:>13.1} {:>11.2} {:>11.2}",
            r.name,
            r.per_sec,
            r.ours_us,
            r.engine_us,
            100.0 * r.ours_us / r.engine_us,
            r.bare_per_sec,
            r.bare_us,
            r.per_sec / r.bare_per_sec,
            r.ours_us / r.bare_us
        );
    }
}
