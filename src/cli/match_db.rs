//! `spsa match … --db URL`: the match is created in the database and played by its workers
//! (`db::matches`); this process stores the engines, creates the match and follows it until it
//! ends. Ctrl-C leaves it running and says how to follow it again.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::r#match::{MatchArgs, progress_every};
use crate::db::matches::{self, MatchState, NewMatch};
use crate::db::{Db, MatchDef, RunDefinition};
use crate::engine::OptionValue;
use crate::error::user_error;
use crate::matchrun::describe_options;

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
    let shutdown = crate::runtime::shutdown::Shutdown::on_signals();
    let (plan, games) = args.plan_and_games().await?;
    let book = match &games.book {
        Some(path) => Some((
            crate::db::run::file_name(path),
            std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the book", path.display()))?,
        )),
        None => None,
    };
    let mut stored = games.clone();
    stored.pgn = None;
    stored.engine_log = None;
    stored.book = None;
    let files = crate::db::engines::run_files(&games)?;
    let measured = crate::engine::identity::measure_run_engines(
        [("Engine1", &games.engine1), ("Engine2", &games.engine2)],
        &[],
    )
    .await?;
    let reference_nps = match args.reference_nps {
        Some(nps) => Some(nps),
        None if games.limits.is_timed() => crate::db::run::reference_speed(&games).await,
        None => None,
    };
    let (n1, n2) = plan.names();
    let texts = |set: &crate::arena::OptionSet| -> Vec<(String, String)> {
        set.iter()
            .map(|(k, v)| {
                let v = match v {
                    OptionValue::Text(t) => t.clone(),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect()
    };
    let spec = MatchDef {
        games: stored,
        names: [n1.to_string(), n2.to_string()],
        options: [texts(&plan.a_options), texts(&plan.b_options)],
        sprt: plan.sprt.map(|s| [s.elo0, s.elo1, s.alpha, s.beta]),
        description: plan.description.clone(),
    };
    let def = RunDefinition {
        config_name: "match".into(),
        config_text: String::new(),
        book,
        vars: Vec::new(),
        iterations: plan.pairs,
        a: 0.0,
        alpha: 0.0,
        gamma: 0.0,
        seed: plan.seed,
        pairs: 1,
        simulate: false,
        draw_rate: 0.0,
        lease_seconds: args.lease_timeout,
        engines: measured.iter().map(|m| m.engine.clone()).collect(),
        holdout: None,
        holdout_openings: None,
        files: files.iter().map(|(f, _)| f.clone()).collect(),
        parts: Default::default(),
        earlier: Vec::new(),
        match_def: Some(spec),
    };
    let new = NewMatch {
        name: format!(
            "match {n1} ({}) vs {n2} ({})",
            describe_options(&plan.a_options),
            describe_options(&plan.b_options)
        ),
        def,
        engines: measured,
        files,
        reference_nps,
        throughput: args.throughput,
    };
    if shutdown.is_requested() {
        anyhow::bail!("stopped before the match was created: nothing is in the database");
    }
    let mut db = Db::new(url)?;
    db.stop_on(Some(&shutdown));
    let id = matches::create(&mut db, &new).await?;
    crate::outln!(
        "match {id}: {n1} ({}) vs {n2} ({}), {} pairs, {}",
        describe_options(&plan.a_options),
        describe_options(&plan.b_options),
        plan.pairs,
        plan.description
    )?;
    eprintln!(
        "match {id} in database {}: played by the database's workers (`spsa worker --db URL`)",
        db.url()
    );
    follow(&mut db, id, progress_every(&args.flags), &shutdown).await
}

/// Follow match `id` until it ends (print its result) or Ctrl-C (say how to follow it again).
async fn follow(
    db: &mut Db,
    id: i64,
    every: Option<Duration>,
    shutdown: &crate::runtime::shutdown::Shutdown,
) -> Result<()> {
    let mut last = Instant::now();
    loop {
        let state = match matches::states(db, Some(id)).await {
            Ok(mut s) => s.pop(),
            Err(e) if crate::db::DbError::is_stop(&e) => None,
            Err(e) => return Err(e),
        };
        if shutdown.is_requested() {
            eprintln!(
                "match {id} goes on in database {}: follow it with `spsa status --db URL`, stop it with `spsa modify --db URL --run {id} --stop`",
                db.url()
            );
            return Ok(());
        }
        let state = state.with_context(|| format!("match {id} is gone from the database"))?;
        if !matches!(state.state.as_str(), "active" | "paused") {
            crate::out!("{}", result(&state))?;
            return Ok(());
        }
        if let Some(every) = every
            && last.elapsed() >= every
        {
            eprintln!("{}", state.line());
            last = Instant::now();
        }
        tokio::select! {
            _ = shutdown.wait() => {}
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
    }
}

/// The result block of a match that ended, as a local match prints it, and how it ended.
pub fn result(state: &MatchState) -> String {
    let mut out = crate::stats::Report(&state.tally).to_string();
    if let (Some(test), Some(status)) = (state.sprt, state.sprt_status()) {
        out.push_str(&format!("{test}: {status}\n"));
    }
    out.push_str(&format!(
        "match {} {}: {} of {} pairs counted",
        state.id,
        state.state,
        state.tally.pairs(),
        state.planned
    ));
    if state.not_counted > 0 {
        out.push_str(&format!(
            ", {} more reported after it ended (not counted)",
            state.not_counted
        ));
    }
    out.push('\n');
    out
}
