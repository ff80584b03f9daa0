//! `spsa serve`'s server-side rendering, measured: the run page of a run with 100,000 iterations
//! × 50 variables (its data already read, as the server holds it between polls: the downsample,
//! the c_k band, the values and exports, then the HTML with its SVG charts) and the runs list
//! of 100 runs. Medians over rounds, side by side with the targets (< 100 ms and < 500 kB for
//! the page, < 50 ms for the list).
//!
//! `cargo bench --bench web_render`

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use spsa::report::command::Loaded;
use spsa::report::history::{History, RunPaths};
use spsa::tuner::checkpoint::{Checkpoint, Counts, RunState, VERSION};
use spsa::vars::Variable;
use spsa::web::{html, local, model};

const ROUNDS: usize = 15;
const ITERATIONS: u64 = 100_000;
const VARS: usize = 50;

fn big_run() -> Loaded {
    let vars: Vec<Variable> = (0..VARS)
        .map(|i| Variable {
            name: format!("Param[{i}]"),
            start: 100.0,
            min: 0.0,
            max: 200.0 + i as f64,
            c_end: 5.0,
            r_end: 0.002,
            simul_elo: 0.0,
        })
        .collect();
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut history = History {
        names: vars.iter().map(|v| v.name.clone()).collect(),
        iterations: (1..=ITERATIONS).collect(),
        values: (0..VARS)
            .map(|_| Vec::with_capacity(ITERATIONS as usize))
            .collect(),
    };
    for (i, col) in history.values.iter_mut().enumerate() {
        let mut x = 100.0;
        for _ in 0..ITERATIONS {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            x += ((seed % 1000) as f64 - 499.5) * 0.001 + i as f64 * 1e-5;
            col.push(x);
        }
    }
    let theta: Vec<f64> = history.values.iter().map(|c| c[c.len() - 1]).collect();
    let state = RunState {
        version: VERSION,
        seed: "1".into(),
        applied: ITERATIONS,
        curve_iterations: 0,
        finished: false,
        theta,
        start: vec![100.0; VARS],
        next_fresh: ITERATIONS + 1,
        missing: Vec::new(),
        log_bytes: 0,
        iterations: 2 * ITERATIONS,
        a: 10_000.0,
        alpha: 0.602,
        gamma: 0.101,
        pairs_per_iteration: 1,
        outputs: Default::default(),
        counts: Counts {
            pairs: ITERATIONS,
            wins: 60_000,
            draws: 80_000,
            losses: 60_000,
            pentanomial: [5_000, 20_000, 50_000, 20_000, 5_000],
            faults: Default::default(),
        },
    };
    Loaded {
        paths: RunPaths {
            log: PathBuf::from("logs/big.log"),
            checkpoint: PathBuf::from("logs/big.checkpoint.var"),
            config: None,
        },
        ck: Checkpoint {
            path: Path::new("logs/big.checkpoint.var").to_path_buf(),
            state,
            vars,
        },
        log: Some(history),
        losses: None,
    }
}

fn summary(i: usize) -> model::RunSummary {
    model::RunSummary {
        id: format!("db-{i}"),
        name: format!("/home/tuner/conf/run-{i}.toml"),
        objective: "games".into(),
        state: "active".into(),
        applied: 1234 + i as u64,
        total: 100_000,
        rate: Some(12.5),
        rate_unit: "games/s".into(),
        seconds_left: Some(86_400.0),
        faults: i as u64,
        last_activity_seconds: Some(3.0),
        priority: Some(0),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let run = big_run();
    let rate_history: Vec<(f64, f64)> = (0..model::RATE_SAMPLES)
        .map(|i| (1.7e9 + 60.0 * i as f64, 10.0 + (i % 7) as f64))
        .collect();
    let mut page_ms = Vec::new();
    let mut page_bytes = 0;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let d = local::detail_of(
            &run,
            summary(0),
            "logs/big.log".into(),
            rate_history.clone(),
        );
        let body = html::page(
            &d.summary.name,
            "/fragment/runs/db-0",
            &html::run_page(&d, &d.version()),
            "",
            "0123456789abcdef",
        );
        page_ms.push(t.elapsed().as_secs_f64() * 1e3);
        page_bytes = black_box(body).len();
    }
    let runs: Vec<model::RunSummary> = (0..100).map(summary).collect();
    let mut list_ms = Vec::new();
    let mut list_bytes = 0;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let v = model::list_version(&runs);
        let body = html::page(
            "spsa runs",
            "/fragment/runs",
            &html::runs_list(&runs, &v, "database postgres://u@host/db"),
            "",
            "0123456789abcdef",
        );
        list_ms.push(t.elapsed().as_secs_f64() * 1e3);
        list_bytes = black_box(body).len();
    }
    println!("web_render: medians of {ROUNDS} rounds");
    println!(
        "  run page, {ITERATIONS} iterations x {VARS} variables: {:8.2} ms (target < 100 ms), {:6.1} kB (target < 500 kB)",
        median(page_ms),
        page_bytes as f64 / 1000.0
    );
    println!(
        "  runs list, 100 runs:                           {:8.2} ms (target <  50 ms), {:6.1} kB",
        median(list_ms),
        list_bytes as f64 / 1000.0
    );
}
