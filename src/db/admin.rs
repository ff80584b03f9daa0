//! What a run's owner changes while the run goes on: its throughput share and its priority
//! (`spsa modify`, and the page's admin form through [`set_throughput`]). Workers read both at
//! every lease, so a change takes effect at the next one.

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
                    c.query_opt("SELECT kind FROM spsa.runs WHERE id = $1", &[&id])
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
        Err(DbError::Refused { code, message, .. }) if code == "42501" => Err(UserError(format!(
            "database {}: {message}: changing a run needs the role that owns the schema (the one that runs `spsa run --db`)",
            db.url()
        ))
        .into()),
        Err(DbError::Refused { code, message, .. }) if code == "42P01" || code == "42703" => {
            Err(UserError(format!(
                "database {}: {message}: no spsa schema of this version there (running `spsa run CONFIG --db URL` of this version once as the owner installs or upgrades it)",
                db.url()
            ))
            .into())
        }
        Err(e) => Err(e.into()),
    }
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
                "SELECT FROM spsa.runs WHERE id = $1 AND kind = 'match'",
                &[&id],
            )
            .await?
            .is_some();
        if found {
            super::matches::stop(c, id).await?;
        }
    }
    if let Some(p) = change.throughput {
        found &= set_throughput(c, id, p).await?;
    }
    if let Some(p) = change.priority {
        found &= c
            .execute(
                "UPDATE spsa.runs SET priority = $2 WHERE id = $1",
                &[&id, &p],
            )
            .await?
            == 1;
    }
    let row = c
        .query_opt(
            "SELECT state, priority, throughput FROM spsa.runs WHERE id = $1",
            &[&id],
        )
        .await?;
    Ok(row.filter(|_| found).map(|r| {
        let (state, priority, share): (String, i32, f64) = (r.get(0), r.get(1), r.get(2));
        format!("run {id} {state}: priority {priority}, throughput {share}")
    }))
}
