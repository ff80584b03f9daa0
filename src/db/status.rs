//! `spsa status --db URL`: the runs (progress, games per second over the last minute, time
//! left at that rate, θ) and the workers (last seen, games, faults, what they said), read
//! through the status functions so a worker's role can look too. The URL is shown without its
//! password.

use anyhow::Result;
use tokio_postgres::Client;

use super::Db;
use crate::report::progress::format_duration;

/// The status report as text.
pub async fn render(url: &str) -> Result<String> {
    let mut db = Db::new(url)?;
    db.patience = std::time::Duration::from_secs(15);
    let (runs, workers) = db
        .run("read the status", async |c: &Client| {
            let runs = c
                .query(
                    "SELECT id, name, state, applied, iterations, recent_pairs, var_names, theta, leased,
                            wins, draws, losses, faults FROM spsa.status_runs()",
                    &[],
                )
                .await?;
            let workers = c
                .query(
                    "SELECT name, last_seen_seconds, pairs, games, faults, leased, note FROM spsa.status_workers()",
                    &[],
                )
                .await?;
            Ok((runs, workers))
        })
        .await?;
    let mut out = format!("database {}\n", db.url());
    out.push_str(&format!("runs: {}\n", runs.len()));
    for r in &runs {
        let (id, name, state): (i64, String, String) = (r.get(0), r.get(1), r.get(2));
        let (applied, total, recent): (i64, i64, i64) = (r.get(3), r.get(4), r.get(5));
        let names: Vec<String> = r.get(6);
        let theta: Vec<f64> = r.get(7);
        let leased: i64 = r.get(8);
        let (w, d, l, f): (i64, i64, i64, i64) = (r.get(9), r.get(10), r.get(11), r.get(12));
        let pct = if total > 0 {
            100.0 * applied as f64 / total as f64
        } else {
            0.0
        };
        // Games per second over the last minute, and the time left at that rate.
        let games_per_s = 2.0 * recent as f64 / 60.0;
        let games_per_iteration = if applied > 0 {
            (w + d + l) as f64 / applied as f64
        } else {
            2.0
        };
        let left = match state.as_str() {
            "active" if games_per_s > 0.0 => format!(
                ", {} left",
                format_duration((total - applied) as f64 * games_per_iteration / games_per_s)
            ),
            _ => String::new(),
        };
        out.push_str(&format!(
            "  run {id} {state} {name}: {applied}/{total} iterations ({pct:.1}%), {leased} leased, {games_per_s:.2} games/s{left}, games +{w} ={d} -{l}, faults {f}\n"
        ));
        let values: Vec<String> = names
            .iter()
            .zip(&theta)
            .map(|(n, t)| format!("{n}={t:.2}"))
            .collect();
        out.push_str(&format!("    θ {}\n", values.join(" ")));
    }
    out.push_str(&format!("workers: {}\n", workers.len()));
    for w in &workers {
        let (name, seen, pairs, games, faults, leased, note): (
            String,
            f64,
            i64,
            i64,
            i64,
            i64,
            String,
        ) = (
            w.get(0),
            w.get(1),
            w.get(2),
            w.get(3),
            w.get(4),
            w.get(5),
            w.get(6),
        );
        out.push_str(&format!(
            "  {name}: last seen {seen:.0} s ago, {pairs} pairs, {games} games, {faults} faults, {leased} leased; {note}\n"
        ));
    }
    Ok(out)
}
