//! Shared runs, read from the database (as the role that owns the schema, the one that runs
//! `spsa run --db`), and the admin actions on them.

use std::sync::Arc;

use anyhow::Result;
use tokio::sync::Mutex;
use tokio_postgres::Client;

use super::model::{self, LossPoint, RunDetail, RunSummary, Series, WorkerView};
use crate::db::{Db, RunDefinition};

/// The database of the shared runs, one connection shared by the requests.
pub struct SharedRuns {
    db: Mutex<Db>,
    url: String,
}

/// What an admin may do to a shared run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    Pause,
    Resume,
    Stop,
    Priority(i32),
    /// A throughput share, checked (above 0, at most 1000).
    Throughput(f64),
}

const SUMMARY_SQL: &str = "SELECT r.id, r.name, r.state, r.applied, r.iterations, r.faults, r.priority,
       (r.definition->>'simulate')::boolean,
       (SELECT count(*) FROM spsa.results x WHERE x.run_id = r.id AND x.reported > now() - interval '60 seconds')
         * coalesce((r.definition->>'pairs')::bigint, 1),
       extract(epoch FROM now() - r.updated)::float8,
       r.wins + r.draws + r.losses, r.throughput
  FROM spsa.runs r";

fn summary(r: &tokio_postgres::Row) -> RunSummary {
    let (id, name, state): (i64, String, String) = (r.get(0), r.get(1), r.get(2));
    let (applied, total, faults, priority): (i64, i64, i64, i32) =
        (r.get(3), r.get(4), r.get(5), r.get(6));
    let simulate: Option<bool> = r.get(7);
    let recent: i64 = r.get(8);
    let games: i64 = r.get(10);
    let rate = 2.0 * recent as f64 / 60.0;
    let per_iteration = if applied > 0 {
        games as f64 / applied as f64
    } else {
        2.0
    };
    RunSummary {
        id: format!("db-{id}"),
        name,
        objective: if simulate == Some(true) {
            "simulated games"
        } else {
            "games"
        }
        .into(),
        seconds_left: (state == "active" && rate > 0.0)
            .then(|| (total - applied).max(0) as f64 * per_iteration / rate),
        state,
        applied: applied.max(0) as u64,
        total: total.max(0) as u64,
        rate: Some(rate),
        rate_unit: "games/s".into(),
        faults: faults.max(0) as u64,
        last_activity_seconds: Some(r.get::<_, f64>(9).max(0.0)),
        priority: Some(priority),
        throughput: Some(r.get(11)),
    }
}

impl SharedRuns {
    /// Parse the URL and check that the database answers with the shared-run schema.
    pub async fn open(url: &str) -> Result<SharedRuns> {
        let mut db = Db::new(url)?;
        db.patience = std::time::Duration::from_secs(10);
        let shown = db.url().to_string();
        db.run("read the shared runs", async |c: &Client| {
            c.query_one("SELECT count(*) FROM spsa.runs", &[]).await
        })
        .await?;
        // A layout this spsa does not read is refused, never misread.
        crate::db::owner::check_schema_version(&mut db).await?;
        Ok(SharedRuns {
            db: Mutex::new(db),
            url: shown,
        })
    }

    /// The URL without its password.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The connection (opened again if it was lost). Requests query it directly: a failed
    /// request is answered with an error, and the next one reconnects.
    async fn client(&self) -> Result<Arc<Client>> {
        Ok(self.db.lock().await.client().await?)
    }

    pub async fn list(&self) -> Result<Vec<RunSummary>> {
        let c = self.client().await?;
        let rows = c
            .query(
                &format!("{SUMMARY_SQL} WHERE r.kind = 'tune' ORDER BY r.id"),
                &[],
            )
            .await?;
        Ok(rows.iter().map(summary).collect())
    }

    /// The matches in the database (`spsa match --db`), as the matches list shows them: id
    /// `db-match-N`, named with the workers that played them.
    pub async fn matches(&self) -> Result<Vec<model::MatchSummary>> {
        let c = self.client().await?;
        let states = crate::db::matches::states_on(&c, None).await?;
        Ok(states
            .iter()
            .map(|m| {
                let name = if m.workers.is_empty() {
                    format!("database match {}", m.id)
                } else {
                    format!(
                        "database match {} (pairs by worker: {})",
                        m.id,
                        m.workers_text()
                    )
                };
                let mut summary =
                    model::MatchSummary::of(format!("db-match-{}", m.id), name, m.record());
                summary.pairs_per_second = Some(m.games_per_second() / 2.0);
                summary
            })
            .collect())
    }

    /// One run's page data; `None` when there is no such run.
    pub async fn detail(&self, id: i64) -> Result<Option<RunDetail>> {
        let c = self.client().await?;
        let Some(row) = c
            .query_opt(
                &format!("{SUMMARY_SQL} WHERE r.id = $1 AND r.kind = 'tune'"),
                &[&id],
            )
            .await?
        else {
            return Ok(None);
        };
        let summary = summary(&row);
        let (def, start, theta, pentanomial, wdl) = {
            let r = c
                    .query_one(
                        "SELECT definition, start_theta, theta, pentanomial, wins, draws, losses FROM spsa.runs WHERE id = $1",
                        &[&id],
                    )
                    .await?;
            let def: serde_json::Value = r.get(0);
            let (start, theta, pent): (Vec<f64>, Vec<f64>, Vec<i64>) =
                (r.get(1), r.get(2), r.get(3));
            let wdl: [i64; 3] = [r.get(4), r.get(5), r.get(6)];
            (def, start, theta, pent, wdl)
        };
        let clock = crate::db::status::clocks(&c, Some(id))
            .await?
            .remove(&id)
            .unwrap_or_default();
        let def: RunDefinition = serde_json::from_value(def)?;
        // Every iteration of a run plays the same pairs: 2B games per result.
        let games_per_result = 2.0 * f64::from(def.pairs.max(1));
        let vars = def.variables();
        let spsa = def.spsa();
        let applied = summary.applied;
        // θ is kept every `snapshot_every` results and after the last (`spsa.snapshots`): the
        // chart's points are those, every one up to MAX_POINTS, else evenly spread.
        let snapshots: Vec<i64> = c
            .query(
                "SELECT seq FROM spsa.snapshots WHERE run_id = $1 ORDER BY seq",
                &[&id],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let keep: Vec<i64> = model::downsample(snapshots.len(), model::MAX_POINTS)
            .into_iter()
            .map(|i| snapshots[i])
            .collect();
        let (points, rates, workers) = {
            let points = c
                    .query(
                        "SELECT seq, theta FROM spsa.snapshots WHERE run_id = $1 AND seq = ANY ($2) ORDER BY seq",
                        &[&id, &keep],
                    )
                    .await?;
            let rates = c
                    .query(
                        "SELECT (floor(extract(epoch FROM x.reported) / 60) * 60)::float8 AS t, count(*)::float8
                           FROM spsa.results x
                          WHERE x.run_id = $1 AND x.reported > now() - interval '4 hours'
                          GROUP BY 1 ORDER BY 1",
                        &[&id],
                    )
                    .await?;
            let workers = c
                    .query(
                        "SELECT x.worker, x.results, x.faults, extract(epoch FROM now() - x.last_report)::float8,
                                extract(epoch FROM now() - k.last_seen)::float8, coalesce(k.note, '')
                           FROM spsa.worker_runs x LEFT JOIN spsa.workers k ON k.name = x.worker
                          WHERE x.run_id = $1 ORDER BY x.last_report DESC LIMIT 200",
                        &[&id],
                    )
                    .await?;
            (points, rates, workers)
        };
        let mut series = Series {
            rows: applied,
            values: vec![Vec::with_capacity(points.len()); vars.len()],
            pruned: clock.pruned,
            ..Series::default()
        };
        for p in &points {
            let (seq, th): (i64, Vec<f64>) = (p.get(0), p.get(1));
            series.iterations.push(seq as u64);
            // A result from before a resume added variables lacks them: at their start.
            for (col, v) in series
                .values
                .iter_mut()
                .zip(crate::spsa::padded(&th, &start))
            {
                col.push(v);
            }
        }
        (series.band_points, series.band) = model::band(&spsa, vars.len(), &series.iterations);
        let mut pent = [0u64; 5];
        for (p, v) in pent.iter_mut().zip(pentanomial) {
            *p = v.max(0) as u64;
        }
        let (uci, csv) = model::exports(&vars, &theta);
        let curve = crate::db::status::curves(&c, Some(id))
            .await?
            .remove(&id)
            .unwrap_or_default();
        Ok(Some(RunDetail {
            source: self.url.clone(),
            vars: model::var_views(&vars, &spsa, &start, &theta, applied),
            series,
            loss: Vec::<LossPoint>::new(),
            track: curve.iter().map(model::TrackPoint::of).collect(),
            gained: model::GainView::of(&curve),
            // The owner plays a shared run's [verify] and keeps its record beside its θ log.
            verification: Vec::new(),
            pentanomial: pent,
            wdl: wdl.map(|x| x.max(0) as u64),
            rate_history: rates
                .iter()
                .map(|r| {
                    (
                        r.get::<_, f64>(0),
                        games_per_result * r.get::<_, f64>(1) / 60.0,
                    )
                })
                .collect(),
            workers: workers
                .iter()
                .map(|w| {
                    let name: String = w.get(0);
                    let measured = clock.workers.get(&name);
                    WorkerView {
                        name,
                        results: w.get::<_, i64>(1).max(0) as u64,
                        faults: w.get::<_, i64>(2).max(0) as u64,
                        last_report_seconds: w.get::<_, f64>(3).max(0.0),
                        last_seen_seconds: w.get::<_, Option<f64>>(4),
                        note: w.get(5),
                        nps: measured.map(|m| m.0),
                        clock_scale: measured.map(|m| m.1),
                    }
                })
                .collect(),
            reference_nps: clock.reference_nps,
            engines: crate::db::status::engines(&c, Some(id))
                .await?
                .remove(&id)
                .unwrap_or_default(),
            uci,
            csv,
            summary,
            var_page: Default::default(),
        }))
    }

    /// Apply an admin action; `false` when the run does not exist or is in no state to take it.
    pub async fn act(&self, id: i64, action: Action) -> Result<bool> {
        let c = self.client().await?;
        let n = match action {
            Action::Pause => {
                c.execute(
                    "UPDATE spsa.runs SET state = 'paused', updated = now() WHERE id = $1 AND state = 'active'",
                    &[&id],
                )
                .await?
            }
            Action::Resume => {
                c.execute(
                    "UPDATE spsa.runs SET state = 'active', updated = now() WHERE id = $1 AND state = 'paused'",
                    &[&id],
                )
                .await?
            }
            Action::Stop => {
                c.execute(
                    "UPDATE spsa.runs SET state = 'stopped', updated = now() WHERE id = $1 AND state IN ('active', 'paused')",
                    &[&id],
                )
                .await?
            }
            Action::Priority(p) => {
                c.execute("UPDATE spsa.runs SET priority = $2 WHERE id = $1", &[&id, &p])
                    .await?
            }
            Action::Throughput(p) => u64::from(crate::db::admin::set_throughput(&c, id, p).await?),
        };
        Ok(n == 1)
    }
}

/// Who asked for a shared run, who approved it, and what was done to it since (issue 65).
#[derive(Clone, Debug, Default)]
pub struct TeamView {
    pub id: i64,
    /// tune or match.
    pub kind: String,
    pub name: String,
    pub state: String,
    pub author: String,
    /// waiting, approved or rejected.
    pub approval: String,
    pub approver: Option<String>,
    /// A rejection's reason.
    pub reason: Option<String>,
    /// (when, who, what, detail), oldest first.
    pub audit: Vec<[String; 4]>,
    /// A match's result as `spsa match` prints it, and its pentanomial.
    pub result: Option<(String, [u64; 5])>,
}

impl SharedRuns {
    /// Every shared run's author and approval, newest first (the team's list).
    pub async fn team_list(&self) -> Result<Vec<TeamView>> {
        let c = self.client().await?;
        let rows = c
            .query(
                "SELECT id, kind, name, state, author, approval, approver, reason
                   FROM spsa.runs ORDER BY id DESC LIMIT 200",
                &[],
            )
            .await?;
        Ok(rows.iter().map(team_row).collect())
    }

    /// One run's author, approval and audit trail (and a match's result); None: no such run.
    pub async fn team(&self, id: i64) -> Result<Option<TeamView>> {
        let c = self.client().await?;
        let Some(row) = c
            .query_opt(
                "SELECT id, kind, name, state, author, approval, approver, reason
                   FROM spsa.runs WHERE id = $1",
                &[&id],
            )
            .await?
        else {
            return Ok(None);
        };
        let mut view = team_row(&row);
        view.audit = c
            .query(
                "SELECT to_char(at, 'YYYY-MM-DD HH24:MI:SS TZ'), actor, action, coalesce(detail, '')
                   FROM spsa.audit WHERE run_id = $1 ORDER BY id",
                &[&id],
            )
            .await?
            .iter()
            .map(|r| [r.get(0), r.get(1), r.get(2), r.get(3)])
            .collect();
        if view.kind == "match"
            && let Some(m) = crate::db::matches::states_on(&c, Some(id)).await?.first()
        {
            let record = m.record();
            view.result = Some((m.result(), record.pentanomial));
        }
        Ok(Some(view))
    }

    /// The connection the page reads with, to sign members in to the same database.
    pub async fn base(&self) -> Db {
        self.db.lock().await.sibling()
    }
}

fn team_row(r: &tokio_postgres::Row) -> TeamView {
    TeamView {
        id: r.get(0),
        kind: r.get(1),
        name: r.get(2),
        state: r.get(3),
        author: r.get(4),
        approval: r.get(5),
        approver: r.get(6),
        reason: r.get(7),
        ..TeamView::default()
    }
}
