//! Issue 55: the database functions a worker role may call, with hostile values, through a real
//! PostgreSQL (docs/development.md, "Fuzzing"). Every call either works or is refused with an
//! error; the server never loses the connection or reports an internal error, θ stays finite,
//! and every applied result is one row of results.

use crate::pg_common::{Cluster, create_run, psql_as, sim_config};

/// Hostile values of each SQL type the worker functions take (`RUN`, `K` and `TOKEN` stand for
/// a real run, a leased iteration and its token).
const TEXT: &[&str] = &[
    "'w'",
    "''",
    "NULL",
    "repeat('x', 100000)",
    "$q$a'b\"c\\d;--$q$",
    "E'\\u03b8\\t\\n'",
];
const BIGINT: &[&str] = &[
    "RUN",
    "K",
    "NULL",
    "0",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
];
const INT: &[&str] = &["NULL", "0", "-1", "1", "2", "2147483647", "-2147483648"];
const FLOAT: &[&str] = &[
    "'NaN'",
    "'Infinity'",
    "'-Infinity'",
    "-0.0",
    "1e308",
    "NULL",
    "2",
    "-2",
    "0",
];
const UUID: &[&str] = &["TOKEN", "NULL", "'00000000-0000-0000-0000-000000000000'"];
const INTS: &[&str] = &[
    "NULL",
    "'{}'",
    "'{0,0,0,0,1}'",
    "'{-1,0,0,0,2}'",
    "'{2147483647,2147483647,2147483647,2147483647,2147483647}'",
    "'{NULL,0,0,0,1}'",
    "array_fill(1, ARRAY[100000])",
    "'{{1,2},{3,4}}'",
];
const TEXTS: &[&str] = &["NULL", "'{}'", "array_fill('x'::text, ARRAY[5000])"];
const BIGINTS: &[&str] = &[
    "NULL",
    "'{}'",
    "ARRAY[RUN]::bigint[]",
    "ARRAY[-1]::bigint[]",
    "array_fill(RUN, ARRAY[10000])",
];
const UUIDS: &[&str] = &["NULL", "'{}'", "ARRAY[TOKEN]::uuid[]"];
const BOOL: &[&str] = &["NULL", "true", "false"];
/// A match's decision as a worker reports it with its LLR (issue 57).
const DECISION: &[&str] = &["NULL", "'H1'", "'H0'", "''", "'x'", "repeat('H1', 50000)"];

/// Each function a worker may call, with the type of each argument.
const CALLS: &[(&str, &[&[&str]])] = &[
    (
        "spsa.report",
        &[
            TEXT, BIGINT, BIGINT, UUID, FLOAT, INT, INT, INT, INTS, TEXTS, TEXT,
        ],
    ),
    (
        "spsa.report_track",
        &[TEXT, BIGINT, BIGINT, UUID, INT, INT, INT, INTS, TEXTS, TEXT],
    ),
    (
        "spsa.report_pair",
        &[TEXT, BIGINT, BIGINT, UUID, INT, INT, INT, INTS, TEXTS, TEXT],
    ),
    (
        "spsa.count_pairs",
        &[TEXT, BIGINT, UUID, INT, FLOAT, DECISION],
    ),
    ("spsa.status_matches", &[BIGINT]),
    ("spsa.lease", &[TEXT, BIGINTS, INT]),
    ("spsa.lease_share", &[TEXT, BIGINTS, INT]),
    ("spsa.heartbeat", &[TEXT, UUIDS]),
    ("spsa.give_back", &[TEXT, UUIDS]),
    ("spsa.hello", &[TEXT, TEXT]),
    (
        "spsa.engine_checked",
        &[TEXT, BIGINT, TEXT, BOOL, TEXT, TEXT, TEXT],
    ),
    ("spsa.clock_scaled", &[TEXT, BIGINT, FLOAT, FLOAT]),
    ("spsa.reference_nps", &[BIGINT, FLOAT]),
    ("spsa.artifact", &[TEXT]),
    ("spsa.status_clocks", &[BIGINT]),
    ("spsa.status_engines", &[BIGINT]),
    ("spsa.status_shares", &[BIGINT]),
    ("spsa.status_track", &[BIGINT]),
];

#[test]
fn worker_functions_refuse_hostile_values_cleanly() {
    let cluster = Cluster::shared();
    let db = cluster.database("fuzz55");
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    sim_config(dir.path(), "g", 50, 11, 1);
    let (mut owner, run) = create_run(&db, dir.path(), cache.path(), &["--lease-timeout", "600"]);
    let worker = db.worker_role("fuzz55_w", "pw55");
    let mut rng = Rng::new(55);
    let mut refused = 0;
    let mut tally: std::collections::BTreeMap<&str, (u32, u32)> = Default::default();
    for i in 0..400 {
        // A lease now and then, so the real token and iteration stand among the values.
        let lease = psql_as(
            &worker,
            &format!("SELECT iteration, token FROM spsa.lease('w', ARRAY[{run}::bigint], 1)"),
        )
        .unwrap_or_default();
        let (k, token) = lease.split_once('|').unwrap_or(("1", ""));
        let token = if token.is_empty() {
            "NULL".to_string()
        } else {
            format!("'{token}'::uuid")
        };
        let (name, args) = CALLS[rng.below(CALLS.len())];
        let values: Vec<String> = args
            .iter()
            .map(|kind| {
                kind[rng.below(kind.len())]
                    .replace("RUN", &run)
                    .replace("TOKEN", &token)
                    .replace('K', k)
            })
            .collect();
        let sql = format!("SELECT * FROM {name}({})", values.join(", "));
        let counts = tally.entry(name).or_default();
        match psql_as(&worker, &sql) {
            Ok(_) => counts.0 += 1,
            Err(e) => {
                counts.1 += 1;
                refused += 1;
                assert!(
                    e.contains("ERROR:")
                        && !e.contains("internal error")
                        && !e.contains("server closed")
                        && !e.contains("XX000"),
                    "call {i}: {sql}\n{e}"
                );
            }
        }
    }
    let finite = db.psql(&format!(
        "SELECT bool_and(x = x AND abs(x) < 'Infinity'::float8) FROM spsa.runs, unnest(theta) x WHERE id = {run}"
    ));
    assert_eq!(finite, "t", "θ of run {run} is no longer finite");
    let applied = db.psql(&format!(
        "SELECT r.applied = (SELECT count(*) FROM spsa.results WHERE run_id = {run}) FROM spsa.runs r WHERE id = {run}"
    ));
    assert_eq!(
        applied, "t",
        "applied and the results of run {run} disagree"
    );
    // Calls that worked and calls refused, by function: the hostile values reached the checks.
    eprintln!("{tally:?}");
    assert!(refused > 40, "only {refused} of 400 calls refused");
    owner.kill().unwrap();
    owner.wait().unwrap();
}

/// SplitMix64, the draws of `spsa::fuzz::Rng` (that module is behind the `fuzzing` feature, and
/// this test runs without it): seed 55 makes the calls it has always made.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A number in `0..n` (`n` above 0).
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}
