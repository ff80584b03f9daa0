//! `spsa status --db URL`: the runs (progress, games per second over the last minute, time
//! left at that rate, θ, whether their records were pruned, a clock run's reference speed and
//! each worker's clock scale) and the workers (last seen, games, faults, what they said), read
//! through the status functions so a worker's role can look too. The URL is shown without its
//! password.

use std::collections::BTreeMap;

use anyhow::Result;
use tokio_postgres::Client;
use tokio_postgres::error::SqlState;

use super::Db;
use crate::report::progress::format_duration;

/// Install (or upgrade) the schema as the role of `url` (`spsa status --install`), which must
/// own the database (or the schema, once installed).
pub async fn install(url: &str) -> Result<()> {
    let mut db = Db::new(url)?;
    super::owner::install_schema(&mut db).await?;
    Ok(())
}

/// The status report as text.
pub async fn render(url: &str) -> Result<String> {
    let mut db = Db::new(url)?;
    db.patience = std::time::Duration::from_secs(15);
    let (runs, workers, clocks, checked, shares, curves) = db
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
            let shares = c
                .query("SELECT run_id, priority, throughput FROM spsa.status_shares(NULL)", &[])
                .await?;
            let shares: BTreeMap<i64, (i32, f64)> = shares
                .iter()
                .map(|r| (r.get(0), (r.get(1), r.get(2))))
                .collect();
            Ok((
                runs,
                workers,
                clocks(c, None).await?,
                engines(c, None).await?,
                shares,
                curves(c, None).await?,
            ))
        })
        .await?;
    // Matches are listed apart. A database of an older schema has no function for them (its
    // refusal, SQLSTATE 42883, means no match); any other error is said, not hidden.
    let matches = match super::matches::states(&mut db, None).await {
        Ok(m) => m,
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<super::DbError>()
                    .is_some_and(|d| d.code() == "42883")
            }) =>
        {
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    let authors = authors(&mut db).await?;
    let runs: Vec<tokio_postgres::Row> = runs
        .into_iter()
        .filter(|r| !matches.iter().any(|m| m.id == r.get::<_, i64>(0)))
        .collect();
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
        if let Some(clock) = clocks.get(&id) {
            out.push_str(&clock.lines());
        }
        if let Some(&(priority, share)) = shares.get(&id) {
            out.push_str(&share_line(&runs, &shares, id, priority, share));
        }
        if let Some(a) = authors.get(&id) {
            out.push_str(&a.lines(id));
        }
        for e in checked.get(&id).into_iter().flatten() {
            out.push_str(&format!("    {}\n", e.line()));
        }
        if let Some(points) = curves.get(&id) {
            let curve = crate::spsa::track::TrackState {
                points: points.clone(),
                ..Default::default()
            };
            for line in crate::report::summary::track_lines(&curve).lines() {
                out.push_str(&format!("    {line}\n"));
            }
        }
        let values: Vec<String> = names
            .iter()
            .zip(&theta)
            .map(|(n, t)| format!("{n}={t:.2}"))
            .collect();
        out.push_str(&format!("    θ {}\n", values.join(" ")));
    }
    if !matches.is_empty() {
        out.push_str(&format!("matches: {}\n", matches.len()));
    }
    for m in &matches {
        out.push_str(&format!("  {}\n    {}\n", m.line(), m.name));
        if let Some(a) = authors.get(&m.id) {
            out.push_str(&a.lines(m.id));
        }
        out.push_str(&format!(
            "    {} vs {}, {}\n",
            m.sides[0], m.sides[1], m.description
        ));
        if !m.workers.is_empty() {
            out.push_str(&format!(
                "    pairs reported by: {}; {} leased now\n",
                m.workers_text(),
                m.leased
            ));
        }
        for e in checked.get(&m.id).into_iter().flatten() {
            out.push_str(&format!("    {}\n", e.line()));
        }
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

/// Who made a run, whether it may be played, and the last entries of its audit trail.
#[derive(Clone, Debug, Default)]
struct Authored {
    author: String,
    /// waiting, approved or rejected.
    approval: String,
    approver: Option<String>,
    reason: Option<String>,
    /// `HH:MM actor action`, oldest first.
    audit: Vec<String>,
}

impl Authored {
    fn lines(&self, id: i64) -> String {
        let decided = match (self.approval.as_str(), &self.approver) {
            ("waiting", _) => format!(
                "waits for an approver: spsa approve --db URL {id} (or spsa reject --db URL {id} --reason TEXT)"
            ),
            ("rejected", by) => format!(
                "rejected by {}: {}",
                by.as_deref().unwrap_or("?"),
                self.reason.as_deref().unwrap_or("")
            ),
            (_, Some(by)) if *by == self.author => "approved at creation".to_string(),
            (_, Some(by)) => format!("approved by {by}"),
            (other, None) => other.to_string(),
        };
        let mut out = format!("    by {}, {decided}\n", self.author);
        if !self.audit.is_empty() {
            out.push_str(&format!("    audit: {}\n", self.audit.join("; ")));
        }
        out
    }
}

/// Every run's author and approval, with the last 5 entries of its audit trail; none from a
/// database of a schema before members (no such functions there: SQLSTATE 42883).
async fn authors(db: &mut Db) -> Result<BTreeMap<i64, Authored>> {
    let read = db
        .run("read the runs' authors", async |c: &Client| {
            let authors = c
                .query(
                    "SELECT run_id, author, approval, approver, reason FROM spsa.status_authors(NULL)",
                    &[],
                )
                .await?;
            let audit = c
                .query(
                    "SELECT run_id, to_char(at AT TIME ZONE 'UTC', 'HH24:MI:SS') || ' ' || actor || ' ' || action
                       FROM spsa.audit_trail(NULL)",
                    &[],
                )
                .await?;
            Ok((authors, audit))
        })
        .await;
    let (authors, audit) = match read {
        Ok(r) => r,
        Err(e) if e.code() == "42883" => return Ok(BTreeMap::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out: BTreeMap<i64, Authored> = authors
        .iter()
        .map(|r| {
            (
                r.get(0),
                Authored {
                    author: r.get(1),
                    approval: r.get(2),
                    approver: r.get(3),
                    reason: r.get(4),
                    audit: Vec::new(),
                },
            )
        })
        .collect();
    for r in &audit {
        if let Some(a) = out.get_mut(&r.get::<_, i64>(0)) {
            a.audit.push(r.get(1));
        }
    }
    for a in out.values_mut() {
        let keep = a.audit.len().saturating_sub(5);
        a.audit.drain(..keep);
    }
    Ok(out)
}

/// A run's priority and throughput share, and for an active run what it got: its part of the
/// games its priority's active runs played over the last minute, against its part of their
/// shares.
fn share_line(
    runs: &[tokio_postgres::Row],
    shares: &BTreeMap<i64, (i32, f64)>,
    id: i64,
    priority: i32,
    share: f64,
) -> String {
    let peers: Vec<(i64, f64, i64)> = runs
        .iter()
        .filter(|r| r.get::<_, String>(2) == "active")
        .filter_map(|r| {
            let rid: i64 = r.get(0);
            let &(p, s) = shares.get(&rid)?;
            (p == priority).then(|| (rid, s, r.get::<_, i64>(5)))
        })
        .collect();
    let mut line = format!("    priority {priority}, throughput {share}");
    let shares_sum: f64 = peers.iter().map(|p| p.1).sum();
    let games_sum: i64 = peers.iter().map(|p| p.2).sum();
    if let Some(&(_, _, mine)) = peers.iter().find(|p| p.0 == id)
        && peers.len() > 1
        && games_sum > 0
    {
        line.push_str(&format!(
            " ({:.0}% of its priority's shares): {:.0}% of their games over the last minute",
            100.0 * share / shares_sum,
            100.0 * mine as f64 / games_sum as f64
        ));
    }
    line.push('\n');
    line
}

/// A shared run's pruning and clock, as its page and `spsa status` show them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunClock {
    /// When `spsa prune` deleted the run's results and game records.
    pub pruned: Option<String>,
    /// A run with a clock: the engine speed (nodes per second) the clock is meant for.
    pub reference_nps: Option<f64>,
    /// Per worker: the speed it measured and the factor it scaled the clock by.
    pub workers: BTreeMap<String, (f64, f64)>,
}

impl RunClock {
    /// The lines under a run in `spsa status` (none for a run neither pruned nor clocked).
    fn lines(&self) -> String {
        let mut out = String::new();
        if let Some(when) = &self.pruned {
            out.push_str(&format!(
                "    pruned on {when} (spsa prune): its results and game records are gone\n"
            ));
        }
        if let Some(nps) = self.reference_nps {
            let workers: Vec<String> = self
                .workers
                .iter()
                .map(|(name, &(nps, scale))| format!("{name} {}", clock_text(scale, nps)))
                .collect();
            out.push_str(&format!(
                "    clock for {} nodes/s; workers: {}\n",
                nps.round(),
                if workers.is_empty() {
                    "none measured yet".into()
                } else {
                    workers.join(", ")
                }
            ));
        }
        out
    }
}

/// What one worker checked of one side's engine of a run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WorkerEngine {
    pub worker: String,
    pub side: String,
    /// True for the worker's own build (`--engine`), false for the run's engine it fetched.
    pub own_build: bool,
    pub sha256: String,
    /// The signature it measured ("" when it could not).
    pub signature: String,
    /// Why it refused the run (None: it plays).
    pub refused: Option<String>,
}

impl WorkerEngine {
    /// `w/a Engine1: fetched 1a2b3c4d5e6f, depth 6: nodes …, plays` or `…, REFUSED: why`.
    pub fn line(&self) -> String {
        let what = if self.sha256.is_empty() {
            // An engine it could not get (a build from source that failed).
            "no engine".to_string()
        } else if self.own_build {
            format!("own build {}", super::engines::short(&self.sha256))
        } else {
            format!("fetched {}", super::engines::short(&self.sha256))
        };
        let signature = if self.signature.is_empty() {
            String::new()
        } else {
            format!(", {}", self.signature)
        };
        match &self.refused {
            None => format!("{} {}: {what}{signature}, plays", self.worker, self.side),
            Some(why) => format!(
                "{} {}: {what}{signature}, REFUSED: {why}",
                self.worker, self.side
            ),
        }
    }
}

/// The engines each worker checked, per run (`Some(id)`: that run only). A schema older than
/// `spsa.status_engines` has nothing to show.
pub async fn engines(
    c: &Client,
    run: Option<i64>,
) -> Result<BTreeMap<i64, Vec<WorkerEngine>>, tokio_postgres::Error> {
    let rows = per_run(
        c,
        "SELECT run_id, worker, side, own_build, sha256, signature, refused FROM spsa.status_engines($1)",
        run,
    )
    .await?;
    let mut out: BTreeMap<i64, Vec<WorkerEngine>> = BTreeMap::new();
    for r in rows {
        out.entry(r.get(0)).or_default().push(WorkerEngine {
            worker: r.get(1),
            side: r.get(2),
            own_build: r.get(3),
            sha256: r.get(4),
            signature: r.get(5),
            refused: r.get(6),
        });
    }
    Ok(out)
}

/// The live Elo curve's recorded points per run (`Some(id)`: that run only), in the order they
/// were recorded, without their θ. A schema older than `spsa.status_track` has none.
pub async fn curves(
    c: &Client,
    run: Option<i64>,
) -> Result<BTreeMap<i64, Vec<crate::spsa::track::Point>>, tokio_postgres::Error> {
    use crate::spsa::track::{Against, Point};
    let rows = per_run(
        c,
        "SELECT run_id, point, against, iteration, pentanomial FROM spsa.status_track($1)",
        run,
    )
    .await?;
    let mut out: BTreeMap<i64, Vec<Point>> = BTreeMap::new();
    for r in rows {
        let pentanomial = super::owner::pentanomial(r.get(4));
        let against: Option<String> = r.get(2);
        out.entry(r.get(0)).or_default().push(Point::measured(
            r.get::<_, i64>(1).max(0) as u64,
            r.get::<_, i64>(3).max(0) as u64,
            against
                .as_deref()
                .and_then(Against::parse)
                .unwrap_or_default(),
            pentanomial,
        ));
    }
    Ok(out)
}

/// The rows of a status function of one run or all (`run` None); none from a schema older
/// than the function.
async fn per_run(
    c: &Client,
    sql: &str,
    run: Option<i64>,
) -> Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
    match c.query(sql, &[&run]).await {
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_FUNCTION) => Ok(Vec::new()),
        rows => rows,
    }
}

/// A worker's clock: `×2.00 (100000 nodes/s)`.
pub fn clock_text(scale: f64, nps: f64) -> String {
    format!("×{scale:.2} ({} nodes/s)", nps.round())
}

/// The pruning and clock of one run (`Some(id)`) or of every run, through `spsa.status_clocks`
/// (a worker's role may call it). A schema older than that function has nothing to show.
pub async fn clocks(
    c: &Client,
    run: Option<i64>,
) -> Result<BTreeMap<i64, RunClock>, tokio_postgres::Error> {
    let rows = per_run(
        c,
        "SELECT run_id, pruned, reference_nps, workers, nps, scales FROM spsa.status_clocks($1)",
        run,
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let (names, nps, scales): (Vec<String>, Vec<f64>, Vec<f64>) =
                (r.get(3), r.get(4), r.get(5));
            let workers = names.into_iter().zip(nps.into_iter().zip(scales)).collect();
            (
                r.get(0),
                RunClock {
                    pruned: r.get(1),
                    reference_nps: r.get(2),
                    workers,
                },
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pruned_clock_run_says_both() {
        let clock = RunClock {
            pruned: Some("2026-01-02 03:04 UTC".into()),
            reference_nps: Some(200_000.4),
            workers: BTreeMap::from([("w/slow".into(), (100_000.0, 2.0))]),
        };
        assert_eq!(
            clock.lines(),
            "    pruned on 2026-01-02 03:04 UTC (spsa prune): its results and game records are gone\n    clock for 200000 nodes/s; workers: w/slow ×2.00 (100000 nodes/s)\n"
        );
        assert_eq!(RunClock::default().lines(), "");
    }
}
