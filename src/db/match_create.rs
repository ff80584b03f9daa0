//! Making a match for the database from a planned one: `spsa match --db`, `spsa verify --db`
//! and a shared run's `[verify]` ladder each plan their match as a local one is planned
//! (`matchrun`), then [`new_match`] stores what the workers need to play the same pairs
//! (the book whole, the held-out split, the engines by hash or source), and [`verify`] plays a
//! verification there: created (or, for a ladder step, found again), followed to its end
//! ([`super::matches::follow`]) and judged as a local verification is.

use anyhow::Result;

use super::matches::{create, find_verify, follow};
use super::{Db, HeldOutOpenings, MatchDef, RunDefinition, VerifyOf, engines};
use crate::config::GamesConfig;
use crate::engine::OptionValue;
use crate::matchrun::Plan;
use crate::matchrun::verify::{Prepared, Verified};
use crate::runtime::shutdown::Shutdown;

pub use super::matches::NewMatch;

/// How a match is served among the database's runs: its lease timeout, its throughput share
/// and, for a clock, the engine speed the clock is meant for (each worker scales it).
#[derive(Clone, Copy, Debug, Default)]
pub struct Serving {
    pub lease_seconds: f64,
    pub throughput: Option<f64>,
    pub reference_nps: Option<f64>,
}

/// The match `plan` describes, to create: `games` is what it was planned from (its book file
/// stored whole, its engines measured here and stored by hash or by source), `held_out` the
/// part of the book it plays, `verify_of` the ladder step it is. `spsa match --db`, `spsa
/// verify --db` and a shared run's `[verify]` all make theirs here.
pub async fn new_match(
    name: String,
    plan: &Plan,
    games: &GamesConfig,
    held_out: Option<HeldOutOpenings>,
    verify_of: Option<VerifyOf>,
    serving: Serving,
) -> Result<NewMatch> {
    let book = super::run::stored_book(games.book.as_deref())?;
    let mut stored = games.clone();
    stored.pgn = None;
    stored.engine_log = None;
    stored.book = None;
    let files = engines::run_files(games)?;
    let measured = crate::engine::identity::measure_run_engines(
        [("Engine1", &games.engine1), ("Engine2", &games.engine2)],
        &[],
    )
    .await?;
    let reference_nps = match serving.reference_nps {
        Some(nps) => Some(nps),
        None if games.limits.is_timed() => super::run::reference_speed(games).await,
        None => None,
    };
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
    let (n1, n2) = plan.names();
    let spec = MatchDef {
        games: stored,
        names: [n1.to_string(), n2.to_string()],
        options: [texts(&plan.a_options), texts(&plan.b_options)],
        sprt: plan.sprt.map(|s| [s.elo0, s.elo1, s.alpha, s.beta]),
        description: plan.description.clone(),
        held_out,
        verify_of,
        records: games.pgn.is_some(),
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
        lease_seconds: serving.lease_seconds,
        engines: measured.iter().map(|m| m.engine.clone()).collect(),
        holdout: None,
        holdout_openings: None,
        files: files.iter().map(|(f, _)| f.clone()).collect(),
        parts: Default::default(),
        earlier: Vec::new(),
        match_def: Some(spec),
    };
    Ok(NewMatch {
        name,
        def,
        engines: measured,
        files,
        reference_nps,
        throughput: serving.throughput,
        author: None,
    })
}

/// Create `new` in the database, unless `shutdown` came while it was being made (measuring the
/// engines takes seconds): then nothing is created. Says where it is and who plays it.
pub async fn create_announced(db: &mut Db, new: &NewMatch, shutdown: &Shutdown) -> Result<i64> {
    if shutdown.is_requested() {
        anyhow::bail!("stopped before the match was created: nothing is in the database");
    }
    let (id, waits) = create(db, new).await?;
    eprintln!(
        "match {id} in database {}: played by the database's workers (`spsa worker --db URL`)",
        db.url()
    );
    if waits {
        eprintln!("{}", super::admin::waits_line("match", id, db));
    }
    Ok(id)
}

/// `spsa match --db`: make the planned match, create it in the database and follow it until it
/// ends (its result printed) or Ctrl-C, which leaves it running and says how to follow it
/// again. The games come back with the workers' reports: copied to the plan's PGN file (the
/// games config's `pgn`), in pair order, as counted.
pub async fn play_on_workers(
    url: &str,
    plan: &Plan,
    games: &GamesConfig,
    serving: Serving,
    every: Option<std::time::Duration>,
    shutdown: &Shutdown,
) -> Result<()> {
    use crate::matchrun::describe_options;
    let (n1, n2) = plan.names();
    let new = new_match(match_name(plan), plan, games, None, None, serving).await?;
    let mut db = Db::new(url)?;
    db.stop_on(Some(shutdown));
    let id = create_announced(&mut db, &new, shutdown).await?;
    crate::outln!(
        "match {id}: {n1} ({}) vs {n2} ({}), {} pairs, {}",
        describe_options(&plan.a_options),
        describe_options(&plan.b_options),
        plan.pairs,
        plan.description
    )?;
    let mut copy = games.pgn.clone().map(super::matches::GameCopy::new);
    let followed = follow(&mut db, id, every, shutdown, copy.as_mut()).await?;
    if followed.is_some()
        && let Some(refusal) = rejected(&mut db, id).await?
    {
        return Err(refusal.into());
    }
    match followed {
        Some(state) => crate::out!("{}", state.result())?,
        None => {
            if let Some(path) = &games.pgn {
                eprintln!(
                    "{}: the games of the pairs counted so far; the later ones stay in the database",
                    path.display()
                );
            }
            eprintln!("{}", super::matches::goes_on(id, &db));
        }
    }
    Ok(())
}

/// A match's name in the database: its sides and their options (`spsa match --db` and the
/// page's form name theirs so).
pub fn match_name(plan: &Plan) -> String {
    use crate::matchrun::describe_options;
    let (n1, n2) = plan.names();
    format!(
        "match {n1} ({}) vs {n2} ({})",
        describe_options(&plan.a_options),
        describe_options(&plan.b_options)
    )
}

/// `spsa verify --db`: prepare the verification, play it on the database's workers as a match
/// there (created, followed to its end, judged as a local one is); Ctrl-C leaves it running and
/// says how to follow it.
pub async fn verify_on_workers(
    url: &str,
    verification: crate::matchrun::verify::Verification<'_>,
    throughput: Option<f64>,
    shutdown: &Shutdown,
) -> Result<()> {
    let config = verification.config.path.clone();
    let prepared = crate::matchrun::verify::prepare(verification)?;
    let mut db = Db::new(url)?;
    db.stop_on(Some(shutdown));
    let how = OnWorkers {
        name: format!(
            "verify {}: {} vs {}",
            config.display(),
            prepared.names[0],
            prepared.names[1]
        ),
        verify_of: None,
        serving: Serving {
            lease_seconds: super::LEASE_SECONDS,
            throughput,
            reference_nps: None,
        },
        author: None,
        play_here: None,
    };
    let (id, verified) = verify(&mut db, &prepared, how, shutdown).await?;
    if verified.is_none() {
        eprintln!("{}", super::matches::goes_on(id, &db));
    }
    Ok(())
}

/// Where a verification in the database comes from and who else plays it: the ladder step it
/// is (a match made for that step earlier is followed, not made again), and the run whose
/// process plays it too when that run plays its own iterations (`spsa run --db` without
/// `--no-play`: its worker then serves this match alone until nothing is left of it).
pub struct OnWorkers<'a> {
    pub name: String,
    pub verify_of: Option<VerifyOf>,
    pub serving: Serving,
    /// The member or approver the match is made for, when not the caller (the ladder of a run
    /// made with `--author ROLE` is ROLE's too).
    pub author: Option<String>,
    pub play_here: Option<(&'a crate::config::Config, &'a super::run::SharedRun)>,
}

/// Play a prepared verification on the database's workers: its header on stdout, its match
/// created (or found again), followed to its end, its result block and verdict printed and
/// judged as a local verification's are. None when `shutdown` came first: the match goes on,
/// and its id is what the caller names.
pub async fn verify(
    db: &mut Db,
    prepared: &Prepared,
    how: OnWorkers<'_>,
    shutdown: &Shutdown,
) -> Result<(i64, Option<Verified>)> {
    crate::out!("{}", prepared.header)?;
    let base = how.name.clone();
    let found = match how.verify_of {
        Some(of) => find_verify(db, of).await?,
        None => None,
    };
    let id = match found {
        Some(id) => {
            eprintln!(
                "following match {id} in database {}, made for this step earlier",
                db.url()
            );
            id
        }
        None => {
            let held_out = prepared.held_out.map(|(h, drawn_from)| HeldOutOpenings {
                share: h.share,
                seed: h.seed,
                drawn_from,
            });
            let mut new = new_match(
                how.name,
                &prepared.plan,
                &prepared.games,
                held_out,
                how.verify_of,
                how.serving,
            )
            .await?;
            new.author = how.author;
            create_announced(db, &new, shutdown).await?
        }
    };
    let own = async {
        match how.play_here {
            Some((config, shared)) => super::run::own_worker(config, shared, id, shutdown)
                .await
                .map(|_| ()),
            None => Ok(()),
        }
    };
    let (state, own) = tokio::join!(follow(db, id, prepared.progress, shutdown, None), own);
    own?;
    let Some(state) = state? else {
        return Ok((id, None));
    };
    if let Some(refusal) = rejected(db, id).await? {
        return Err(refusal.into());
    }
    let mut report = state.result();
    if let Some(line) = prepared.openings_of_pairs(state.tally.pairs()) {
        report.push_str(&line);
    }
    crate::out!("{report}")?;
    let sprt = state.sprt.zip(state.sprt_status());
    // A match that ended is judged on what it counted: decided, played out, or stopped by
    // `spsa modify --stop` (then an SPRT is undecided, and fails).
    let verified = prepared.judge(&state.tally, sprt.as_ref(), &report, true)?;
    // A ladder step's verdict goes where the team looks: the match's name in `spsa status`
    // and on the page (the same name again when a resumed owner judges it once more).
    if how.verify_of.is_some() {
        let named = format!(
            "{base}, {}: {}",
            if verified.passed { "passed" } else { "failed" },
            verified.verdict
        );
        db.run(
            "name the step's verdict",
            async |c: &tokio_postgres::Client| {
                c.execute(
                    "UPDATE spsa.runs SET name = $2 WHERE id = $1",
                    &[&id, &named],
                )
                .await
            },
        )
        .await?;
    }
    Ok((id, Some(verified)))
}

/// The refusal to end with when an approver rejected match `id` (a member's).
async fn rejected(db: &mut Db, id: i64) -> Result<Option<crate::error::UserError>> {
    Ok(super::admin::approval_of(db, id).await?.rejection(id))
}
