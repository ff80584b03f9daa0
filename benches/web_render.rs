//! `spsa serve`'s server-side rendering, measured: the run page of a run with 100,000 iterations
//! × 50 variables (its data already read, as the server holds it between polls: the downsample,
//! the c_k band, the values and exports, then the HTML with its SVG charts) and the runs list
//! of 100 runs. Medians over rounds, side by side with the targets (< 100 ms and < 500 kB for
//! the page, < 50 ms for the list).
//!
//! The same two, then, for a shared run read from PostgreSQL as `spsa serve --db` reads it (a
//! throwaway cluster holding one run with 100,000 applied results × 50 variables among 100
//! runs): the queries and the rendering together, the figure a browser waits for.
//!
//! `cargo bench --bench web_render` (`SPSA_WEB_RENDER_PAGE=FILE` also writes the run page there)

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use spsa::report::command::Loaded;
use spsa::report::history::{History, RunPaths};
use spsa::tuner::checkpoint::{Checkpoint, Counts, RunState, VERSION};
use spsa::vars::Variable;
use spsa::web::{html, local, model};

#[path = "../tests/pg_common/mod.rs"]
mod pg_common;

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
        format: None,
        log_rows: ITERATIONS as usize,
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
        holdout: None,
        holdout_openings: None,
        held: Vec::new(),
        outputs: Default::default(),
        counts: Counts {
            pairs: ITERATIONS,
            wins: 60_000,
            draws: 80_000,
            losses: 60_000,
            pentanomial: [5_000, 20_000, 50_000, 20_000, 5_000],
            faults: Default::default(),
        },
        joined: Vec::new(),
        sources: Vec::new(),
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
            parts: Default::default(),
        },
        log: Some(history),
        losses: None,
        track: None,
        verification: Vec::new(),
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
        throughput: Some(100.0),
    }
}

/// A run page whole, as `spsa serve` sends it.
fn page_html(d: &model::RunDetail) -> String {
    html::page(
        &d.summary.name,
        "/fragment/runs/db-0",
        &html::run_page(d, &d.version()),
        &maud::html! {},
        None,
        "0123456789abcdef",
    )
}

/// The runs list whole, as `spsa serve` sends it.
fn list_html(runs: &[model::RunSummary], source: &str) -> String {
    html::page(
        "spsa runs",
        "/fragment/runs",
        &html::runs_list(runs, &[], &model::list_version(runs, &[]), source),
        &maud::html! {},
        None,
        "0123456789abcdef",
    )
}

/// The medians and sizes of the page (of `ITERATIONS` `rows`) and of the list, with targets.
fn print_figures(rows: &str, page: (Vec<f64>, usize), list: (Vec<f64>, usize)) {
    println!(
        "  run page, {ITERATIONS} {rows} x {VARS} variables: {:8.2} ms (target < 100 ms), {:6.1} kB (target < 500 kB)",
        median(page.0),
        page.1 as f64 / 1000.0
    );
    println!(
        "  runs list, 100 runs: {:8.2} ms (target <  50 ms), {:6.1} kB",
        median(list.0),
        list.1 as f64 / 1000.0
    );
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
        let body = page_html(&d);
        page_ms.push(t.elapsed().as_secs_f64() * 1e3);
        page_bytes = black_box(&body).len();
        if let Some(path) = std::env::var_os("SPSA_WEB_RENDER_PAGE") {
            std::fs::write(path, &body).expect("write the page");
        }
    }
    let runs: Vec<model::RunSummary> = (0..100).map(summary).collect();
    let mut list_ms = Vec::new();
    let mut list_bytes = 0;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let body = list_html(&runs, "database postgres://u@host/db");
        list_ms.push(t.elapsed().as_secs_f64() * 1e3);
        list_bytes = black_box(body).len();
    }
    println!("web_render: medians of {ROUNDS} rounds");
    print_figures("iterations", (page_ms, page_bytes), (list_ms, list_bytes));
    if Path::new("/usr/lib/postgresql/15/bin/initdb").exists() {
        shared_run();
    } else {
        println!("  (no PostgreSQL 15: the shared-run figures are skipped)");
    }
}

/// A run definition of `VARS` variables and `ITERATIONS` iterations, as the owner stores it.
fn definition() -> serde_json::Value {
    let vars = big_run().ck.vars;
    serde_json::to_value(spsa::db::RunDefinition {
        config_name: "big.toml".into(),
        config_text: String::new(),
        book: None,
        vars: vars.iter().map(spsa::db::VarDef::from_variable).collect(),
        iterations: ITERATIONS,
        a: 10_000.0,
        alpha: 0.602,
        gamma: 0.101,
        seed: 1,
        pairs: 1,
        simulate: false,
        draw_rate: 0.0,
        engines: Vec::new(),
        holdout: None,
        holdout_openings: None,
        files: Vec::new(),
        parts: Default::default(),
        earlier: Vec::new(),
        match_def: None,
        lease_seconds: 60.0,
    })
    .unwrap()
}

/// Fill a cluster with 100 runs, the last with every iteration applied (a result per
/// iteration, reported one a second, by 20 workers), and time the pages `spsa serve --db` gives.
fn shared_run() {
    let cluster = pg_common::Cluster::start();
    let db = cluster.database("web_render");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let fill = Instant::now();
    let id: i64 = rt.block_on(async {
        let mut handle = spsa::db::Db::new(&db.url).unwrap();
        spsa::db::owner::install_schema(&mut handle).await.unwrap();
        let c = handle.client().await.unwrap();
        let def = definition();
        let names: Vec<String> = (0..VARS).map(|i| format!("Param[{i}]")).collect();
        let lo = vec![0.0f64; VARS];
        let hi: Vec<f64> = (0..VARS).map(|i| 200.0 + i as f64).collect();
        let start = vec![100.0f64; VARS];
        let insert = "INSERT INTO spsa.runs (name, definition, var_names, lo, hi, start_theta, theta, iterations, applied, lease_seconds, wins, draws, losses)
                      VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8::bigint, 60, $8::bigint / 4, $8::bigint, $8::bigint / 4) RETURNING id";
        for i in 0..99 {
            c.query_one(insert, &[&format!("/home/tuner/conf/run-{i}.toml"), &def, &names, &lo, &hi, &start, &(ITERATIONS as i64), &1234i64])
                .await
                .unwrap();
        }
        let id: i64 = c
            .query_one(insert, &[&"/home/tuner/conf/big.toml", &def, &names, &lo, &hi, &start, &(ITERATIONS as i64), &(ITERATIONS as i64)])
            .await
            .unwrap()
            .get(0);
        c.execute(
            "INSERT INTO spsa.work (run_id, iteration, pairs, state)
             SELECT $1, k, 1, 'done' FROM generate_series(1, $2::bigint) k",
            &[&id, &(ITERATIONS as i64)],
        )
        .await
        .unwrap();
        c.execute(
            "INSERT INTO spsa.results (run_id, iteration, seq, token, worker, signal, wins, draws, losses,
                                       pentanomial, faults, records, theta_sum, reported)
             SELECT $1, k, k, gen_random_uuid(), 'bench/w' || (k % 20), 0.5, 1, 0, 1, '{0,0,1,0,0}', '{}',
                    repeat('x', 100), 0, now() - ($2::bigint - k) * interval '1 second'
               FROM generate_series(1, $2::bigint) k",
            &[&id, &(ITERATIONS as i64)],
        )
        .await
        .unwrap();
        // θ after every result (a run of this size keeps a snapshot per result).
        c.execute(
            "INSERT INTO spsa.snapshots (run_id, seq, theta)
             SELECT $1, k, (SELECT array_agg(100 + k * 1e-4 + i) FROM generate_series(1, $2::int) i)
               FROM generate_series(1, $3::bigint) k",
            &[&id, &(VARS as i32), &(ITERATIONS as i64)],
        )
        .await
        .unwrap();
        // What `spsa.report` keeps per worker as it applies results.
        c.execute(
            "INSERT INTO spsa.worker_runs SELECT run_id, worker, count(*), 0, max(reported)
               FROM spsa.results GROUP BY run_id, worker",
            &[],
        )
        .await
        .unwrap();
        c.batch_execute("VACUUM ANALYZE").await.unwrap();
        id
    });
    println!(
        "shared runs from PostgreSQL (filled in {:.0} s): medians of {ROUNDS} rounds, queries and rendering",
        fill.elapsed().as_secs_f64()
    );
    let (page_ms, page_bytes, list_ms, list_bytes) = rt.block_on(async {
        let served = spsa::web::db::SharedRuns::open(&db.url).await.unwrap();
        let (mut page_ms, mut page_bytes) = (Vec::new(), 0);
        let (mut list_ms, mut list_bytes) = (Vec::new(), 0);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            let d = served.detail(id).await.unwrap().unwrap();
            let body = page_html(&d);
            page_ms.push(t.elapsed().as_secs_f64() * 1e3);
            page_bytes = black_box(body).len();
            let t = Instant::now();
            let runs = served.list().await.unwrap();
            let body = list_html(&runs, served.url());
            list_ms.push(t.elapsed().as_secs_f64() * 1e3);
            list_bytes = black_box(body).len();
        }
        (page_ms, page_bytes, list_ms, list_bytes)
    });
    print_figures("results", (page_ms, page_bytes), (list_ms, list_bytes));
}
