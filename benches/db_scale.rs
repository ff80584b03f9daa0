//! How much coordination one PostgreSQL sustains: simulated workers (no games, a draw reported
//! at once) lease one iteration, report it, repeat. For 1, 8, 64 and 256 concurrent workers it
//! prints work units (lease + report, each applied to θ in its own transaction) per second and
//! the time a worker waits for a lease (median, 99th percentile), then the cores one database
//! serves at 10 s + 0.1 s games. Starts its own throwaway cluster (.ci/pg).
//!
//! `cargo bench --bench db_scale [-- SECONDS]` (default 3 s per level).

use std::time::{Duration, Instant};

#[path = "../tests/pg_common/mod.rs"]
mod pg_common;

use spsa::db::{Db, RunDefinition, VarDef, owner};
use spsa::tuner::StartMode;

fn definition(iterations: u64) -> RunDefinition {
    RunDefinition {
        config_name: "bench.toml".into(),
        config_text: String::new(),
        book: None,
        vars: (0..8)
            .map(|i| VarDef {
                name: format!("v{i}"),
                start: 100.0,
                min: -1000.0,
                max: 1000.0,
                c_end: 10.0,
                r_end: 0.002,
                simul_elo: 1.0,
            })
            .collect(),
        iterations,
        a: iterations as f64 / 10.0,
        alpha: 0.602,
        gamma: 0.101,
        seed: 1,
        pairs: 1,
        simulate: true,
        draw_rate: 0.0,
        lease_seconds: 60.0,
    }
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

/// One simulated worker until `until`: returns (units, lease waits).
async fn worker(
    c: tokio_postgres::Client,
    run: i64,
    name: String,
    until: Instant,
) -> (u64, Vec<Duration>) {
    let lease = c
        .prepare("SELECT iteration, token FROM spsa.lease($1, ARRAY[$2::bigint], 1)")
        .await
        .unwrap();
    let report = c
        .prepare("SELECT spsa.report($1, $2, $3, $4, 0, 0, 2, 0, '{0,0,1,0,0}', '{}', '')")
        .await
        .unwrap();
    let (mut units, mut waits) = (0, Vec::new());
    while Instant::now() < until {
        let t = Instant::now();
        let rows = c.query(&lease, &[&name, &run]).await.unwrap();
        waits.push(t.elapsed());
        let Some(row) = rows.first() else { break };
        let (k, token): (i64, uuid_text::Uuid) = (row.get(0), row.get(1));
        c.query_one(&report, &[&name, &run, &k, &token])
            .await
            .unwrap();
        units += 1;
    }
    (units, waits)
}

/// The lease token as the bench passes it back (binary uuid, kept opaque).
mod uuid_text {
    use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

    #[derive(Debug)]
    pub struct Uuid(Vec<u8>);

    impl<'a> FromSql<'a> for Uuid {
        fn from_sql(
            _: &Type,
            raw: &'a [u8],
        ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
            Ok(Uuid(raw.to_vec()))
        }
        fn accepts(ty: &Type) -> bool {
            *ty == Type::UUID
        }
    }

    impl ToSql for Uuid {
        fn to_sql(
            &self,
            _: &Type,
            out: &mut tokio_postgres::types::private::BytesMut,
        ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
            out.extend_from_slice(&self.0);
            Ok(IsNull::No)
        }
        fn accepts(ty: &Type) -> bool {
            *ty == Type::UUID
        }
        to_sql_checked!();
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let seconds: f64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3.0);
    let cluster = pg_common::Cluster::start();
    let db = cluster.database("bench");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("workers  units/s  lease wait median  p99   (8 variables, {seconds} s per level)");
    let mut best: f64 = 0.0;
    for (level, workers) in [1usize, 8, 64, 256].into_iter().enumerate() {
        let run = rt.block_on(async {
            let mut handle = Db::new(&db.url).unwrap();
            owner::install_schema(&mut handle).await.unwrap();
            let name = format!("bench-{level}");
            owner::attach(
                &mut handle,
                &name,
                &definition(200_000),
                StartMode::New,
                60.0,
            )
            .await
            .unwrap()
        });
        // Connections first (each login costs a scram exchange), then the clock starts.
        let clients = rt.block_on(futures::future::join_all(
            (0..workers).map(|_| connect(&db.url)),
        ));
        let until = Instant::now() + Duration::from_secs_f64(seconds);
        let started = Instant::now();
        let results = rt.block_on(async {
            let tasks: Vec<_> = clients
                .into_iter()
                .enumerate()
                .map(|(i, c)| tokio::spawn(worker(c, run, format!("b{i}"), until)))
                .collect();
            let mut all = Vec::new();
            for t in tasks {
                all.push(t.await.unwrap());
            }
            all
        });
        let elapsed = started.elapsed().as_secs_f64();
        let units: u64 = results.iter().map(|r| r.0).sum();
        let mut waits: Vec<Duration> = results.into_iter().flat_map(|r| r.1).collect();
        waits.sort();
        let rate = units as f64 / elapsed;
        best = best.max(rate);
        println!(
            "{workers:7}  {rate:7.0}  {:>17.2?}  {:>5.2?}",
            percentile(&waits, 0.5),
            percentile(&waits, 0.99)
        );
    }
    // A 10 s + 0.1 s game lasts about 2 × (10 s + 60 moves × 0.1 s) = 32 s on one core (the
    // two engines alternate), so a pair (one work unit) is 64 core-seconds.
    let cores = best * 64.0;
    println!(
        "peak {best:.0} units/s ≈ {cores:.0} cores at 10 s + 0.1 s (one pair = 64 core-seconds); target 10 000 cores needs {:.0} units/s",
        10_000.0 / 64.0
    );
}
