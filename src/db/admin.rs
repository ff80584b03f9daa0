//! What a run's author (or the schema's owner) changes while the run goes on: its throughput
//! share and its priority (`spsa modify`, and the page's admin form through
//! [`set_throughput`]); stopping a match; and an approver's approval or rejection of a member's
//! run (`spsa approve`, `spsa reject`). Workers read each at every lease, so a change takes
//! effect at the next one. Every change goes through a database function that checks its caller
//! (`spsa.set_share`, `spsa.stop`, `spsa.approve`, `spsa.reject`: docs/shared-runs.md, "Members
//! and approvers"), so a role refused here is refused the same on the page and in psql.

use anyhow::Result;
use tokio_postgres::Client;

use super::{Db, DbError};
use crate::error::UserError;

/// A change to a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Change {
    /// The run's throughput share among active runs of its priority (checked by the caller).
    pub throughput: Option<f64>,
    /// Runs of higher priority are served first.
    pub priority: Option<i32>,
    /// Stop the run, which must be a match (`spsa match --db`).
    pub stop: bool,
}

/// Set run `id`'s throughput share; false when there is no such run.
pub async fn set_throughput(
    c: &Client,
    id: i64,
    share: f64,
) -> Result<bool, tokio_postgres::Error> {
    let n = c
        .execute(
            "UPDATE spsa.runs SET throughput = $2 WHERE id = $1",
            &[&id, &share],
        )
        .await?;
    Ok(n == 1)
}

/// Apply `change` to run `id` in one transaction; returns what the run now says, as a line.
pub async fn modify(url: &str, id: i64, change: Change) -> Result<String> {
    let mut db = Db::new(url)?;
    if change.stop {
        let kind: Option<String> = db
            .run("read the run's kind", async |c: &Client| {
                Ok(
                    c.query_opt("SELECT kind FROM spsa.status_authors($1)", &[&id])
                        .await?
                        .map(|r| r.get(0)),
                )
            })
            .await
            .unwrap_or(None);
        if kind.as_deref() == Some("tune") {
            return Err(UserError(format!(
                "--stop: run {id} is a tune; a tune stops with its owner's process (Ctrl-C) and goes on with --resume; --stop stops a match (`spsa match --db`)"
            ))
            .into());
        }
    }
    let done = db
        .run("change the run", async |c: &Client| {
            c.batch_execute("BEGIN").await?;
            let done = change_in(c, id, change).await;
            let end = if done.is_ok() { "COMMIT" } else { "ROLLBACK" };
            let ended = c.batch_execute(end).await;
            let done = done?;
            ended.map(|()| done)
        })
        .await;
    match done {
        Ok(Some(line)) => Ok(line),
        Ok(None) => Err(UserError(format!("database {}: there is no run {id}", db.url())).into()),
        Err(e) if e.code() == "SP001" => {
            Err(UserError(format!("database {}: there is no run {id}", db.url())).into())
        }
        Err(e) => Err(refusal(e)),
    }
}

/// A database's refusal as the user reads it: a role refused a change (SQLSTATE 42501, by
/// PostgreSQL's rights or a function's own check) or a refusal of the change itself (SP0xx:
/// no such run, already approved, no reason) is the user's to fix (exit 2), with who may
/// instead; a missing function or table means no schema of this version there.
pub fn refusal(e: DbError) -> anyhow::Error {
    let DbError::Refused {
        what,
        code,
        message,
    } = &e
    else {
        return e.into();
    };
    match code.as_str() {
        super::conn::NOT_ALLOWED => UserError(format!(
            "{}: {message}: a run is changed by its author or the role that owns the schema (the one that runs `spsa run --db`), approved or rejected by an approver (see `spsa status` for who made it)",
            what
        ))
        .into(),
        "42P01" | "42703" | "42883" | "3F000" => UserError(format!(
            "{}: {message}: no spsa schema of this version there (running `spsa run CONFIG --db URL` of this version once as the owner installs or upgrades it)",
            what
        ))
        .into(),
        c if c.starts_with("SP") => UserError(format!("{}: {message}", what)).into(),
        _ => e.into(),
    }
}

/// An approver's decision on a waiting run: approve it (workers lease it from then on) or
/// reject it with a reason its author reads in `spsa status` (it is stopped, never played).
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    Approve,
    Reject { reason: String },
}

/// Decide on run `id` as the role of `url` (`spsa.approve` or `spsa.reject`, which check that
/// role); returns the line to print.
pub async fn decide(url: &str, id: i64, decision: &Decision) -> Result<String> {
    let mut db = Db::new(url)?;
    let done = db
        .run("decide on the run", async |c: &Client| match decision {
            Decision::Approve => c.execute("SELECT spsa.approve($1)", &[&id]).await,
            Decision::Reject { reason } => {
                c.execute("SELECT spsa.reject($1, $2)", &[&id, reason])
                    .await
            }
        })
        .await;
    match done {
        Ok(_) => Ok(match decision {
            Decision::Approve => format!("run {id} approved: the workers play it"),
            Decision::Reject { reason } => {
                format!("run {id} rejected ({reason}): stopped, never played")
            }
        }),
        Err(e) => Err(refusal(e)),
    }
}

/// The audit trail of run `id` (or of every run), in order: when, who, what, and the detail.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditEntry {
    pub run: i64,
    /// `YYYY-MM-DD HH:MM:SS` UTC.
    pub at: String,
    pub actor: String,
    /// created, approved, rejected, paused, resumed, stopped, modified or share changed.
    pub action: String,
    pub detail: String,
}

/// Read the audit trail of run `id` (every run's with None) through `spsa.audit_trail`.
pub async fn audit(url: &str, id: Option<i64>) -> Result<Vec<AuditEntry>> {
    let mut db = Db::new(url)?;
    let rows = db
        .run("read the audit trail", async |c: &Client| {
            c.query(
                "SELECT run_id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), actor, action, detail
                   FROM spsa.audit_trail($1)",
                &[&id],
            )
            .await
        })
        .await
        .map_err(refusal)?;
    Ok(rows
        .iter()
        .map(|r| AuditEntry {
            run: r.get(0),
            at: r.get(1),
            actor: r.get(2),
            action: r.get(3),
            detail: r.get(4),
        })
        .collect())
}

/// The statements of [`modify`], inside its transaction: the run's line, None when no such run.
async fn change_in(
    c: &Client,
    id: i64,
    change: Change,
) -> Result<Option<String>, tokio_postgres::Error> {
    let mut found = true;
    if change.stop {
        // A tune is stopped by its owner's process (Ctrl-C) and resumed; only a match, which
        // runs without its creator, is stopped here (a match already over stays as it is).
        found &= c
            .query_opt(
                "SELECT FROM spsa.status_authors($1) WHERE kind = 'match'",
                &[&id],
            )
            .await?
            .is_some();
        if found {
            c.execute("SELECT spsa.stop($1)", &[&id]).await?;
        }
    }
    if change.throughput.is_some() || change.priority.is_some() {
        found &= c
            .query_one(
                "SELECT spsa.set_share($1, $2, $3)",
                &[&id, &change.priority, &change.throughput],
            )
            .await?
            .get::<_, bool>(0);
    }
    let row = c
        .query_opt(
            "SELECT r.state, s.priority, s.throughput
               FROM spsa.status_runs() r JOIN spsa.status_shares($1) s ON s.run_id = r.id",
            &[&id],
        )
        .await?;
    Ok(row.filter(|_| found).map(|r| {
        let (state, priority, share): (String, i32, f64) = (r.get(0), r.get(1), r.get(2));
        format!("run {id} {state}: priority {priority}, throughput {share}")
    }))
}

/// Whether a run may be played, as `spsa.run_progress` tells its author, an approver or the
/// owner.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Approval {
    /// waiting, approved or rejected.
    pub approval: String,
    pub approver: Option<String>,
    pub reason: Option<String>,
    /// active, paused, finished or stopped.
    pub state: String,
}

impl Approval {
    pub fn waits(&self) -> bool {
        self.approval == "waiting"
    }

    /// The refusal a rejected run's author reads (None when it was not rejected).
    pub fn rejection(&self, id: i64) -> Option<UserError> {
        (self.approval == "rejected").then(|| {
            UserError(format!(
                "run {id} was rejected by {}: {}; it is stopped and will not be played",
                self.approver.as_deref().unwrap_or("an approver"),
                self.reason.as_deref().unwrap_or("")
            ))
        })
    }
}

/// Run `id`'s approval and state.
pub async fn approval_of(db: &mut Db, id: i64) -> Result<Approval> {
    let row = db
        .run("read the run's approval", async |c: &Client| {
            c.query_opt(
                "SELECT approval, approver, reason, state FROM spsa.run_progress($1)",
                &[&id],
            )
            .await
        })
        .await
        .map_err(refusal)?;
    let row = row.ok_or_else(|| {
        UserError(format!(
            "database {}: there is no run {id} of this role's to follow",
            db.url()
        ))
    })?;
    Ok(Approval {
        approval: row.get(0),
        approver: row.get(1),
        reason: row.get(2),
        state: row.get(3),
    })
}

/// What a member's process says when its run or match waits for an approver.
pub fn waits_line(kind: &str, id: i64, db: &Db) -> String {
    format!(
        "{kind} {id} waits for an approver: spsa approve --db URL {id} (as a role in spsa_approver, on database {}); no worker plays it until then. This process waits and follows it; Ctrl-C leaves it waiting",
        db.url()
    )
}

/// Wait until run `id` is no longer waiting for an approver (or `stop` is requested): its
/// approval then.
pub async fn wait_for_approval(
    db: &mut Db,
    id: i64,
    stop: &crate::runtime::shutdown::Shutdown,
) -> Result<Approval> {
    loop {
        let a = approval_of(db, id).await?;
        if !a.waits() || stop.is_requested() {
            return Ok(a);
        }
        tokio::select! {
            _ = stop.wait() => {}
            _ = tokio::time::sleep(std::time::Duration::from_millis(500)) => {}
        }
    }
}
