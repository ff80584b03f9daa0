//! `spsa prune --db URL --older-than DAYS`: delete what a finished or stopped run stored per
//! iteration (its results with their PGN and game-log records, and its work rows with their
//! step vectors), once its last activity is DAYS days old. The run's own row stays: its name,
//! state, progress, game counts, pentanomial counts, start and final θ, so `spsa status` and the
//! runs list still show it. Active and paused runs are never touched. The run is marked
//! `pruned`, and `spsa run --resume` refuses it (its results cannot be replayed any more).

use anyhow::Result;
use tokio_postgres::{Client, Row};

use super::Db;
use crate::error::UserError;

/// The runs a prune takes: finished or stopped, not yet pruned, idle for `$1` seconds.
const OLD_RUNS: &str = "SELECT id FROM spsa.runs
  WHERE state IN ('finished', 'stopped') AND pruned IS NULL
    AND updated < now() - make_interval(secs => $1)";

/// Per run: id, name, state, seconds since its last activity, results, bytes of game records,
/// work rows: `{counts}` supplies the last three from the CTEs `results` and `work`.
fn report_sql(counts: &str) -> String {
    format!(
        "{counts}
         SELECT r.id, r.name, r.state, extract(epoch FROM now() - r.updated)::float8,
                (SELECT count(*) FROM results x WHERE x.run_id = r.id),
                (SELECT coalesce(sum(x.bytes), 0)::bigint FROM results x WHERE x.run_id = r.id),
                (SELECT count(*) FROM work w WHERE w.run_id = r.id)
           FROM spsa.runs r JOIN old ON old.id = r.id ORDER BY r.id"
    )
}

/// Delete, in one statement (all or nothing), and report what went.
fn delete_sql() -> String {
    report_sql(&format!(
        "WITH old AS ({OLD_RUNS} FOR UPDATE),
              results AS (DELETE FROM spsa.results x USING old WHERE x.run_id = old.id
                          RETURNING x.run_id, octet_length(x.records) AS bytes),
              work AS (DELETE FROM spsa.work w USING old WHERE w.run_id = old.id RETURNING w.run_id),
              -- θ's history goes with the results (the final θ stays in the run's row).
              snapshots AS (DELETE FROM spsa.snapshots s USING old WHERE s.run_id = old.id RETURNING s.run_id),
              -- The curve's points stay (status shows them); their games' records go.
              curve AS (UPDATE spsa.track_results t SET records = '' FROM old
                         WHERE t.run_id = old.id RETURNING t.run_id),
              marked AS (UPDATE spsa.runs r SET pruned = now() FROM old WHERE r.id = old.id RETURNING r.id)"
    ))
}

/// Count what a prune would delete.
fn dry_run_sql() -> String {
    report_sql(&format!(
        "WITH old AS ({OLD_RUNS}),
              results AS (SELECT x.run_id, octet_length(x.records) AS bytes
                            FROM spsa.results x JOIN old ON x.run_id = old.id),
              work AS (SELECT w.run_id FROM spsa.work w JOIN old ON w.run_id = old.id)"
    ))
}

/// Prune the runs idle for more than `older_than_days` days; the report as text.
pub async fn prune(url: &str, older_than_days: f64, dry_run: bool) -> Result<String> {
    let mut db = Db::new(url)?;
    db.patience = std::time::Duration::from_secs(30);
    let schema: Option<String> = db
        .run("find the spsa schema", async |c: &Client| {
            Ok(c.query_one("SELECT to_regclass('spsa.runs')::text", &[])
                .await?
                .get(0))
        })
        .await?;
    if schema.is_none() {
        return Err(UserError(format!(
            "database {}: no shared runs (no spsa schema)",
            db.url()
        ))
        .into());
    }
    // The `pruned` column came with this command: add it to an older schema.
    super::owner::install_schema(&mut db).await?;
    let seconds = older_than_days * 86_400.0;
    let sql = if dry_run { dry_run_sql() } else { delete_sql() };
    let rows = db
        .run("prune finished runs", async |c: &Client| {
            c.query(&sql, &[&seconds]).await
        })
        .await?;
    Ok(render(&rows, older_than_days, dry_run))
}

fn render(rows: &[Row], older_than_days: f64, dry_run: bool) -> String {
    let verb = if dry_run { "would delete" } else { "deleted" };
    let mut out = String::new();
    let (mut results, mut bytes, mut work) = (0i64, 0i64, 0i64);
    for r in rows {
        let (id, name, state): (i64, String, String) = (r.get(0), r.get(1), r.get(2));
        let idle_days = r.get::<_, f64>(3) / 86_400.0;
        let (n, b, w): (i64, i64, i64) = (r.get(4), r.get(5), r.get(6));
        out.push_str(&format!(
            "run {id} {state} {name} (idle {idle_days:.1} days): {verb} {n} results ({}) and {w} work rows\n",
            megabytes(b)
        ));
        (results, bytes, work) = (results + n, bytes + b, work + w);
    }
    out.push_str(&format!(
        "{} runs finished or stopped more than {older_than_days} days ago: {verb} {results} results ({}) and {work} work rows{}\n",
        rows.len(),
        megabytes(bytes),
        if dry_run {
            " (dry run: nothing deleted)"
        } else {
            "; their summaries and final θ are kept"
        }
    ));
    out
}

fn megabytes(bytes: i64) -> String {
    format!("{:.2} MB of game records", bytes as f64 / 1e6)
}
