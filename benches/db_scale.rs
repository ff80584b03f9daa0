//! How much coordination one PostgreSQL sustains: simulated workers (no games) lease one
//! iteration, report it at once with the records a real pair sends (two PGN games and two
//! game-log lines, about 3 kB), repeat; meanwhile the run's owner follows as `spsa run --db`
//! does (its mirror pulls every 100 ms, checks θ bit for bit, appends the records to a PGN and
//! checkpoints). For 1, 8, 64 and 256 concurrent workers it prints work units (lease + report,
//! each applied to θ in its own transaction) per second, the time a worker waits for a lease
//! (median, 90th and 99th percentile), and the cores one database serves at 10 s + 0.1 s
//! games. Starts its own throwaway cluster (.ci/pg) with fsync on, as a default cluster has it.
//!
//! Then what a wide run costs the database: 10,000 variables, two simulated workers that know
//! only the URL, the owner's mirror following; the growth of the spsa tables per applied result
//! (`pg_total_relation_size`), beside what the layout before schema version 2 kept (computed
//! from the measured size of one row of 10,000 float8, not by running the old schema); then a
//! new mirror (as after kill -9 of the owner) replays every result and checks each checksum.
//!
//! `cargo bench --bench db_scale [-- SECONDS [RESULTS]]` (default 3 s per level, 1,000 results
//! of the wide run; SECONDS 0: the wide run only).

use std::time::{Duration, Instant};

#[path = "../tests/pg_common/mod.rs"]
mod pg_common;

use spsa::db::owner::Mirror;
use spsa::db::records::{self, Destinations};
use spsa::db::{Db, RunDefinition, VarDef, owner};
use spsa::source::Record;
use spsa::tuner::checkpoint::RunState;
use spsa::tuner::{RunFiles, Session, StartMode};

/// What a real worker sends with a pair: two PGN games of about 60 moves and two game-log lines.
fn pair_records() -> String {
    let moves: String = (1..=60).map(|m| format!("{m}. Nf3 Nf6 ")).collect();
    let game = |round: &str| {
        format!(
            "[Event \"spsa bench.toml\"]\n[Site \"spsa\"]\n[Round \"{round}\"]\n[White \"sparring\"]\n[Black \"sparring\"]\n[Result \"1/2-1/2\"]\n[WhiteOptions \"v0=101 v1=99 v2=101 v3=99 v4=101 v5=99 v6=101 v7=99\"]\n[BlackOptions \"v0=99 v1=101 v2=99 v3=101 v4=99 v5=101 v6=99 v7=101\"]\n\n{moves}1/2-1/2\n\n"
        )
    };
    let line = "1.1 slot 1 sparring-sparring 1/2-1/2 draw by repetition 120 plies; θ+ v0=101 …\n";
    records::encode(&[
        Record {
            path: records::PGN.into(),
            text: game("1.1"),
        },
        Record {
            path: records::PGN.into(),
            text: game("1.2"),
        },
        Record {
            path: "game-log-1".into(),
            text: line.into(),
        },
        Record {
            path: "game-log-1".into(),
            text: line.into(),
        },
    ])
}

fn definition(iterations: u64) -> RunDefinition {
    definition_of(iterations, 8)
}

fn definition_of(iterations: u64, vars: usize) -> RunDefinition {
    RunDefinition {
        config_name: "bench.toml".into(),
        config_text: String::new(),
        book: None,
        vars: (0..vars)
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
        engines: Vec::new(),
        holdout: None,
        holdout_openings: None,
        files: Vec::new(),
        parts: Default::default(),
        earlier: Vec::new(),
        match_def: None,
        lease_seconds: 60.0,
    }
}

/// A simulated worker's connection with its lease and report statements prepared.
type Connection = (
    tokio_postgres::Client,
    tokio_postgres::Statement,
    tokio_postgres::Statement,
);

async fn connect(url: &str) -> Connection {
    let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let lease = c
        .prepare("SELECT iteration, token FROM spsa.lease($1, ARRAY[$2::bigint], 1)")
        .await
        .unwrap();
    // A win and a draw: signal 1, so θ moves and the owner's bit-for-bit check means something.
    let report = c
        .prepare("SELECT spsa.report($1, $2, $3, $4, 1, 1, 1, 0, '{0,0,0,1,0}', '{}', $5)")
        .await
        .unwrap();
    (c, lease, report)
}

/// One simulated worker until `until`: returns (units, lease waits). Unpaced it leases again at
/// once; paced (first start, then every period) it plays like a worker whose games take time.
async fn worker(
    (c, lease, report): Connection,
    run: i64,
    name: String,
    until: Instant,
    pace: Option<(Duration, Duration)>,
) -> (u64, Vec<Duration>) {
    let records = pair_records();
    let (mut units, mut waits) = (0, Vec::new());
    let began = tokio::time::Instant::now();
    while Instant::now() < until {
        if let Some((first, period)) = pace {
            let next = began + first + period * units as u32;
            tokio::time::sleep_until(next.min(tokio::time::Instant::from_std(until))).await;
            if Instant::now() >= until {
                break;
            }
        }
        let t = Instant::now();
        let rows = c.query(&lease, &[&name, &run]).await.unwrap();
        waits.push(t.elapsed());
        let Some(row) = rows.first() else { break };
        let (k, token): (i64, uuid_text::Uuid) = (row.get(0), row.get(1));
        c.query_one(&report, &[&name, &run, &k, &token, &records])
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
    let numbers: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let seconds = numbers.first().copied().unwrap_or(3.0);
    let wide_results = numbers.get(1).copied().unwrap_or(1000.0) as u64;
    let cluster = pg_common::Cluster::start_with_fsync(true);
    let files = tempfile::tempdir().unwrap();
    let db = cluster.database("bench");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "fsync on; 8 variables, ~{} B of records per report, {seconds} s per level",
        pair_records().len()
    );
    println!(
        "workers  offered/s  units/s  lease wait median      p90      p99  owner behind at end"
    );
    // Closed loop (each worker leases again at once: what one database sustains), then 256
    // workers paced to the load of 10,000 and 20,000 cores at 10 s + 0.1 s.
    let levels = [
        (1usize, None),
        (8, None),
        (64, None),
        (256, None),
        (256, Some(10_000.0 / 64.0)),
        (256, Some(20_000.0 / 64.0)),
    ];
    let mut best: f64 = 0.0;
    let levels = if seconds > 0.0 { &levels[..] } else { &[] };
    for (level, &(workers, offered)) in levels.iter().enumerate() {
        let run = rt.block_on(async {
            let mut handle = Db::new(&db.url).unwrap();
            owner::install_schema(&mut handle).await.unwrap();
            let name = format!("bench-{level}");
            owner::attach(
                &mut handle,
                &name,
                &definition(50_000),
                std::path::Path::new("bench.var"),
                StartMode::New,
                owner::Serving {
                    lease_seconds: 60.0,
                    reference_nps: None,
                    throughput: None,
                    track: None,
                    author: None,
                },
            )
            .await
            .unwrap()
        });
        // Connections and prepared statements first (each login costs a scram exchange), then
        // the clock starts.
        let clients = rt.block_on(futures::future::join_all(
            (0..workers).map(|_| connect(&db.url)),
        ));
        let until = Instant::now() + Duration::from_secs_f64(seconds);
        let started = Instant::now();
        let dir = files.path().join(format!("level{level}"));
        let destinations =
            Destinations::new(Some(dir.join("bench.pgn")), vec![dir.join("game_1.log")]);
        let run_files = RunFiles {
            log: dir.join("bench.log"),
            checkpoint: dir.join("bench.checkpoint.var"),
            checkpoint_interval: Duration::ZERO,
            outputs: destinations.paths(),
        };
        let (results, behind) = rt.block_on(async {
            let tasks: Vec<_> = clients
                .into_iter()
                .enumerate()
                .map(|(i, c)| {
                    // Paced workers spread their starts over one period.
                    let pace = offered.map(|rate: f64| {
                        let period = Duration::from_secs_f64(workers as f64 / rate);
                        (period.mul_f64(i as f64 / workers as f64), period)
                    });
                    tokio::spawn(worker(c, run, format!("b{i}"), until, pace))
                })
                .collect();
            // The owner, as `spsa run --db` follows a run of real games: pull, save, 100 ms.
            let url = db.url.clone();
            let follow = async move {
                let mut db = Db::new(&url).unwrap();
                let def = definition(50_000);
                let vars = def.variables();
                let start: Vec<f64> = vars.iter().map(|v| v.start).collect();
                let fresh = RunState::fresh(def.seed, start, &def.schedule(), def.pairs);
                let mut session = Session::open(vars, run_files, StartMode::New, fresh).unwrap();
                let mut mirror = Mirror::new(run, def, 0);
                while Instant::now() < until {
                    let results = mirror.pull(&mut db).await.unwrap();
                    // What the run envelope writes of each result (`method::shared`).
                    for a in &results {
                        for record in owner::placed_records(run, a, &destinations) {
                            session.record(&record).unwrap();
                        }
                        session.state.applied = a.seq;
                        session.log_theta(a.seq, &a.theta).unwrap();
                    }
                    session.save().unwrap();
                    if results.len() < 5000 {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
                mirror
            };
            let collect = async {
                let mut all = Vec::new();
                for t in tasks {
                    all.push(t.await.unwrap());
                }
                all
            };
            let (all, mirror) = tokio::join!(collect, follow);
            let total: u64 = all.iter().map(|r| r.0).sum();
            (all, total.saturating_sub(mirror.applied()))
        });
        let elapsed = started.elapsed().as_secs_f64();
        let units: u64 = results.iter().map(|r| r.0).sum();
        let mut waits: Vec<Duration> = results.into_iter().flat_map(|r| r.1).collect();
        waits.sort();
        let rate = units as f64 / elapsed;
        if offered.is_none() {
            best = best.max(rate);
        }
        let offered = offered.map_or("max".to_string(), |r| format!("{r:.0}"));
        println!(
            "{workers:7}  {offered:>9}  {rate:7.0}  {:>17.2?}  {:>7.2?}  {:>7.2?}  {behind} units  ({units} in {elapsed:.2} s)",
            percentile(&waits, 0.5),
            percentile(&waits, 0.9),
            percentile(&waits, 0.99)
        );
    }
    if levels.is_empty() {
        wide(&rt, &db.url, wide_results);
        return;
    }
    // A 10 s + 0.1 s game lasts about 2 × (10 s + 60 moves × 0.1 s) = 32 s on one core (the
    // two engines alternate), so a pair (one work unit) is 64 core-seconds.
    let cores = best * 64.0;
    println!(
        "peak {best:.0} units/s ≈ {cores:.0} cores at 10 s + 0.1 s (one pair = 64 core-seconds); target 10 000 cores needs {:.0} units/s",
        10_000.0 / 64.0
    );
    wide(&rt, &db.url, wide_results);
}

/// The spsa tables' bytes (`pg_total_relation_size`: heap, TOAST and indexes), per table.
async fn table_sizes(c: &tokio_postgres::Client) -> Vec<(String, i64)> {
    c.query(
        "SELECT c.relname::text, pg_total_relation_size(c.oid) FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'spsa' AND c.relkind = 'r' ORDER BY 1",
        &[],
    )
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect()
}

/// One simulated worker of the wide run until `results` are applied: leases one iteration
/// (θ comes back with it, as a worker gets it), reports a win and a loss-free draw (signal 1)
/// with no records, as a simulated worker's report has none.
async fn wide_worker(url: String, run: i64, name: String, results: i64) {
    let (c, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let lease = c
        .prepare("SELECT iteration, token, theta FROM spsa.lease($1, ARRAY[$2::bigint], 1)")
        .await
        .unwrap();
    let report = c
        .prepare("SELECT spsa.report($1, $2, $3, $4, 1, 1, 1, 0, '{0,0,0,1,0}', '{}', '')")
        .await
        .unwrap();
    let applied = c
        .prepare("SELECT applied FROM spsa.runs WHERE id = $1")
        .await
        .unwrap();
    loop {
        let done: i64 = c.query_one(&applied, &[&run]).await.unwrap().get(0);
        if done >= results {
            return;
        }
        let rows = c.query(&lease, &[&name, &run]).await.unwrap();
        let Some(row) = rows.first() else {
            // The window is out: wait for the owner to hand out more.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let (k, token): (i64, uuid_text::Uuid) = (row.get(0), row.get(1));
        let theta: Vec<f64> = row.get(2);
        assert_eq!(theta.len(), WIDE_VARS);
        c.query_one(&report, &[&name, &run, &k, &token])
            .await
            .unwrap();
    }
}

const WIDE_VARS: usize = 10_000;
const WIDE_ITERATIONS: u64 = 30_000;

/// The wide run: growth per applied result, new layout against the old one's arrays.
fn wide(rt: &tokio::runtime::Runtime, url: &str, results: u64) {
    let def = definition_of(WIDE_ITERATIONS, WIDE_VARS);
    let window = owner::work_window(WIDE_VARS, WIDE_ITERATIONS);
    println!();
    println!(
        "wide run: {WIDE_VARS} variables, {WIDE_ITERATIONS} iterations, two simulated workers with only the URL, the owner's mirror following; work window {window} iterations, a snapshot every {} results",
        owner::snapshot_every(WIDE_VARS)
    );
    rt.block_on(async {
        let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut handle = Db::new(url).unwrap();
        owner::install_schema(&mut handle).await.unwrap();
        let t = Instant::now();
        let run = owner::attach(
            &mut handle,
            "wide",
            &def,
            std::path::Path::new("wide.var"),
            StartMode::New,
            owner::Serving {
                lease_seconds: 60.0,
                reference_nps: None,
                throughput: None,
                track: None,
                author: None,
            },
        )
        .await
        .unwrap();
        c.batch_execute("VACUUM").await.unwrap();
        let created = table_sizes(&c).await;
        let created_total: i64 = created.iter().map(|t| t.1).sum();
        println!(
            "created in {:.1} s: spsa tables {:.1} MB (the window's steps, every table of the bench's earlier runs included)",
            t.elapsed().as_secs_f64(),
            created_total as f64 / 1e6
        );
        // The owner follows as `spsa run --db` does: pull (handing out the next iterations),
        // 100 ms, again.
        let follow = |mut mirror: Mirror, target: i64| {
            let url = url.to_string();
            async move {
                let mut db = Db::new(&url).unwrap();
                while (mirror.applied() as i64) < target {
                    let got = mirror.pull(&mut db).await.unwrap();
                    if got.is_empty() {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
                mirror
            }
        };
        let play = |target: i64| {
            let tasks: Vec<_> = (0..2)
                .map(|i| tokio::spawn(wide_worker(url.to_string(), run, format!("wide{i}"), target)))
                .collect();
            async move {
                for t in tasks {
                    t.await.unwrap();
                }
            }
        };
        // Warm up past the first window and snapshot, then measure `results` more.
        let warm = (window + 100) as i64;
        let (_, mut mirror) = tokio::join!(play(warm), follow(Mirror::new(run, def.clone(), 0), warm));
        // Measured compacted (VACUUM FULL rewrites each table with its live rows only), so the
        // growth is what the rows hold, not where dead row versions happened to leave space.
        c.batch_execute("VACUUM FULL").await.unwrap();
        let before = table_sizes(&c).await;
        let applied_before: i64 = c
            .query_one("SELECT applied FROM spsa.runs WHERE id = $1", &[&run])
            .await
            .unwrap()
            .get(0);
        let t = Instant::now();
        // In ten slices, `spsa.runs` and `spsa.work` vacuumed after each, as autovacuum does
        // at a real run's pace: every report rewrites θ in the run's row and empties a work
        // row's step, 80 kB of dead TOAST each at 10,000 variables, whose space is used again
        // once vacuumed.
        let mut raw = 0;
        for slice in 1..=10 {
            let target = applied_before + (results * slice / 10) as i64;
            let ((), m) = tokio::join!(play(target), follow(mirror, target));
            mirror = m;
            let sizes = table_sizes(&c).await;
            raw = raw.max(sizes.iter().map(|t| t.1).sum::<i64>());
            c.batch_execute("VACUUM spsa.runs, spsa.work").await.unwrap();
        }
        let seconds = t.elapsed().as_secs_f64();
        c.batch_execute("VACUUM FULL").await.unwrap();
        let after = table_sizes(&c).await;
        let applied_after: i64 = c
            .query_one("SELECT applied FROM spsa.runs WHERE id = $1", &[&run])
            .await
            .unwrap()
            .get(0);
        let n = (applied_after - applied_before) as f64;
        println!(
            "{n:.0} results applied in {seconds:.1} s ({:.0}/s), the mirror checking each checksum ({} applied there)",
            n / seconds,
            mirror.applied()
        );
        let total = |v: &[(String, i64)]| v.iter().map(|t| t.1).sum::<i64>();
        println!("table            growth per applied result (VACUUM FULL before and after)");
        for ((name, b), (_, a)) in before.iter().zip(&after) {
            if a != b {
                println!("{name:16} {:>10.0} B", (a - b) as f64 / n);
            }
        }
        let new = (total(&after) - total(&before)) as f64 / n;
        let unvacuumed = (raw - total(&before)) as f64 / n;
        println!(
            "all spsa tables  {new:>10.0} B per applied result (at most {unvacuumed:.0} B between two vacuums: dead row versions, their space used again)"
        );
        // The old layout kept, per applied result, θ in the result row and the leased θ in the
        // done work row, and a step vector per iteration from the run's creation: measured here
        // as rows of 10,000 float8 in a table of their own.
        c.batch_execute(
            "DROP TABLE IF EXISTS public.old_arrays;
             CREATE TABLE public.old_arrays (a float8[] NOT NULL);
             INSERT INTO public.old_arrays
             SELECT (SELECT array_agg(100 + random()) FROM generate_series(1, 10000) i WHERE k > 0)
               FROM generate_series(1, 200) k",
        )
        .await
        .unwrap();
        c.batch_execute("VACUUM public.old_arrays").await.unwrap();
        let array: i64 = c
            .query_one("SELECT pg_total_relation_size('public.old_arrays') / 200", &[])
            .await
            .unwrap()
            .get(0);
        c.batch_execute("DROP TABLE public.old_arrays").await.unwrap();
        let old = new + 2.0 * array as f64;
        println!(
            "one row of {WIDE_VARS} float8 (measured): {array} B; before schema version 2: {old:.0} B per applied result (this layout's + θ in the result + θ leased in the done work row) and {:.0} MB of steps at creation ({WIDE_ITERATIONS} × {array} B); now: {new:.0} B per applied result ({:.0}× less) and {:.1} MB of steps at any time ({window} iterations)",
            WIDE_ITERATIONS as f64 * array as f64 / 1e6,
            old / new.max(1.0),
            window as f64 * array as f64 / 1e6
        );
        // kill -9 of the owner, then a re-attach: a new mirror replays every result from the
        // first, checking each checksum against its own θ.
        let t = Instant::now();
        let mut db = Db::new(url).unwrap();
        let mut again = Mirror::new(run, def.clone(), 0);
        let mut replayed = 0;
        loop {
            let got = again.pull(&mut db).await.unwrap();
            if got.is_empty() {
                break;
            }
            replayed += got.len();
        }
        println!(
            "re-attach: a new mirror replayed {replayed} results in {:.1} s, every checksum equal to its θ bit for bit",
            t.elapsed().as_secs_f64()
        );
    });
}
