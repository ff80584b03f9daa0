//! `spsa match … --db URL`: the match is created in the database and played by its workers
//! (`db::matches`); this process stores the engines, creates the match and follows it until it
//! ends. Ctrl-C leaves it running and says how to follow it again.

use anyhow::Result;

use super::r#match::{MatchArgs, progress_every};
use crate::db::Db;
use crate::db::match_create::{self, Serving};
use crate::db::matches;
use crate::error::user_error;
use crate::matchrun::describe_options;
use crate::runtime::shutdown::Shutdown;

/// Create the match from the flags, then follow it (see the module docs).
pub async fn command(args: MatchArgs, url: &str) -> Result<()> {
    if args.flags.resume {
        return Err(user_error(
            "--resume: a match in the database goes on by itself; follow it with `spsa status --db URL`",
        ));
    }
    if args.flags.engine_log.is_some() {
        return Err(user_error(
            "--engine-log: the games of a match in the database are played on the workers' machines",
        ));
    }
    // From the start: measuring the engines' signatures can take seconds, and a Ctrl-C then
    // must end the command before a match exists, not kill it halfway.
    let shutdown = Shutdown::on_signals();
    let (plan, games) = args.plan_and_games().await?;
    let (n1, n2) = plan.names();
    let name = format!(
        "match {n1} ({}) vs {n2} ({})",
        describe_options(&plan.a_options),
        describe_options(&plan.b_options)
    );
    let serving = Serving {
        lease_seconds: args.lease_timeout,
        throughput: args.throughput,
        reference_nps: args.reference_nps,
    };
    let new = match_create::new_match(name, &plan, &games, None, None, serving).await?;
    let mut db = Db::new(url)?;
    db.stop_on(Some(&shutdown));
    let id = match_create::create_announced(&mut db, &new, &shutdown).await?;
    crate::outln!(
        "match {id}: {n1} ({}) vs {n2} ({}), {} pairs, {}",
        describe_options(&plan.a_options),
        describe_options(&plan.b_options),
        plan.pairs,
        plan.description
    )?;
    // The games come back with the workers' reports: copied here, in pair order, as counted.
    let mut copy = games.pgn.clone().map(matches::GameCopy::new);
    let every = progress_every(&args.flags);
    match matches::follow(&mut db, id, every, &shutdown, copy.as_mut()).await? {
        Some(state) => crate::out!("{}", state.result())?,
        None => {
            if let Some(path) = &games.pgn {
                eprintln!(
                    "{}: the games of the pairs counted so far; the later ones stay in the database",
                    path.display()
                );
            }
            eprintln!("{}", matches::goes_on(id, &db));
        }
    }
    Ok(())
}
