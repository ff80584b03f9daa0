//! Parse a realistic mix of Stockfish-style `info` lines with our tokenizer and with vampirc-uci,
//! side by side in one run, and print lines/s for each and the ratio (medians over rounds).
//!
//! `cargo bench --bench uci_parse`

use std::hint::black_box;
use std::time::Instant;

use spsa::engine::parse::{EngineLine, SearchLine, parse_line, parse_search_line};

const ROUNDS: usize = 7;

/// A deterministic mix: with and without wdl, bounds, long pvs, currmove lines, strings, and a
/// few deep lines (`depth 300`) that make vampirc panic.
fn lines() -> Vec<String> {
    let moves = [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7", "f1e1",
        "b7b5", "a4b3", "d7d6", "c2c3", "e8g8", "h2h3", "c6a5", "b3c2", "c7c5", "d2d4", "d8c7",
    ];
    let mut out = Vec::new();
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for i in 0..10_000u64 {
        let depth = 1 + rnd(40);
        let pv_len = 1 + rnd(moves.len() as u64) as usize;
        let pv = moves[..pv_len].join(" ");
        let nodes = 1000 + rnd(50_000_000);
        let cp = rnd(600) as i64 - 300;
        let line = match i % 10 {
            0 => format!(
                "info depth {depth} currmove {} currmovenumber {}",
                moves[(i % 22) as usize],
                1 + rnd(30)
            ),
            1 => format!(
                "info depth {depth} seldepth {} multipv 1 score cp {cp} lowerbound nodes {nodes} nps 1234567 hashfull {} tbhits 0 time {} pv {}",
                depth + 5,
                rnd(1000),
                rnd(100_000),
                moves[0]
            ),
            2..=4 => format!(
                "info depth {depth} seldepth {} multipv 1 score cp {cp} nodes {nodes} nps 1234567 hashfull {} tbhits 0 time {} pv {pv}",
                depth + 7,
                rnd(1000),
                rnd(100_000)
            ),
            9 if i % 1000 == 9 => format!(
                "info depth 300 seldepth 400 multipv 1 score mate 200 wdl 10 20 970 nodes {nodes} pv {pv}"
            ),
            _ => format!(
                "info depth {depth} seldepth {} multipv 1 score cp {cp} wdl {} {} {} nodes {nodes} nps 1234567 hashfull {} tbhits 0 time {} pv {pv}",
                depth + 7,
                rnd(400),
                rnd(400),
                rnd(200),
                rnd(1000),
                rnd(100_000)
            ),
        };
        out.push(line);
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Lines/s of one pass of `f` over `lines`, `reps` times.
fn once(lines: &[&str], reps: usize, f: &mut impl FnMut(&str) -> usize) -> f64 {
    let t = Instant::now();
    let mut acc = 0usize;
    for _ in 0..reps {
        for l in lines {
            acc = acc.wrapping_add(f(black_box(l)));
        }
    }
    black_box(acc);
    (lines.len() * reps) as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let all = lines();
    let all_refs: Vec<&str> = all.iter().map(String::as_str).collect();

    // Find the lines vampirc panics on, once, and leave them out of its side.
    std::panic::set_hook(Box::new(|_| {}));
    let vampirc_ok: Vec<&str> = all_refs
        .iter()
        .copied()
        .filter(|l| std::panic::catch_unwind(|| vampirc_uci::parse_one(l)).is_ok())
        .collect();
    let _ = std::panic::take_hook();
    let excluded = all_refs.len() - vampirc_ok.len();

    let mut ours_f = |l: &str| match parse_line(l) {
        EngineLine::Info(i) => i.depth.unwrap_or(0) as usize + i.pv_moves().count(),
        _ => 0,
    };
    // What a search reads of each line: the fields before the pv.
    let mut search_f = |l: &str| match parse_search_line(l) {
        SearchLine::Info { depth, nodes, .. } => {
            depth.unwrap_or(0) as usize + nodes.unwrap_or(0) as usize
        }
        _ => 0,
    };
    let mut theirs_f = |l: &str| match vampirc_uci::parse_one(l) {
        vampirc_uci::UciMessage::Info(a) => a.len(),
        _ => 0,
    };
    // Rounds alternate between the two parsers so that load from other processes hits both alike.
    let (mut ours, mut search, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        ours.push(once(&all_refs, 30, &mut ours_f));
        search.push(once(&all_refs, 30, &mut search_f));
        theirs.push(once(&vampirc_ok, 1, &mut theirs_f));
    }
    let (ours, search, theirs) = (median(ours), median(search), median(theirs));

    let wdl = all_refs.iter().filter(|l| l.contains(" wdl ")).count();
    println!(
        "uci_parse: {} info lines ({wdl} with wdl), median of {ROUNDS} rounds",
        all_refs.len()
    );
    println!("  ours (spsa::engine::parse): {:>12.0} lines/s", ours);
    println!(
        "  ours, up to the pv (a search's progress): {:>12.0} lines/s",
        search
    );
    println!(
        "  vampirc-uci 0.11:           {:>12.0} lines/s   ({excluded} lines excluded: vampirc panics on them)",
        theirs
    );
    println!("  ratio ours/vampirc:         {:>12.1}x", ours / theirs);
}
