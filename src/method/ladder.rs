//! A finished tune's confirmation: the `[verify]` table, or the ladder of `[[verify]]` steps,
//! played in order on the openings held out of the tune, each step recorded in the verification
//! record ([`crate::tuner::verification`]) as it ends, and stopped at the first failed step.
//!
//! A step passes when its SPRT accepts H1; H0, or no decision by the most pairs it allows,
//! fails it. A step of a fixed number of pairs fails when the 95% interval of its Elo lies
//! wholly below its `fail_below` (default 0: the tuned values shown worse than what they play),
//! or when it has too few pairs for an interval ([`crate::matchrun::verify::passed`]). A resume
//! (a kill or Ctrl-C between or during steps) prints the recorded steps and plays the first one
//! the record does not hold; an interrupted step records nothing and is played again whole.
//! Local and shared runs play their ladder here alike; only where a step's results come from
//! differs ([`Venue`]): a local run plays each step on this machine, a shared run creates each
//! step as a match in its database, played by its workers (and by its own process when that
//! plays its iterations), and follows it. A resumed owner follows the match its step already
//! has instead of creating another; Ctrl-C leaves that match playing.

use std::time::Duration;

use anyhow::{Context, Result};

use crate::config::{Config, VerifyConfig};
use crate::db::match_create::{OnWorkers, Serving};
use crate::db::run::SharedRun;
use crate::db::{Db, VerifyOf};
use crate::error::user_error;
use crate::matchrun::MatchSettings;
use crate::matchrun::verify::{Tuned, Verification, Verified, prepare, set_limit, verify};
use crate::runtime::shutdown::Shutdown;
use crate::tuner::verification::{self, Step};

/// Where a ladder's steps are played.
#[derive(Clone, Debug)]
pub enum Venue {
    /// On this machine.
    Here,
    /// As matches in the database of shared run `run`, by its workers.
    Workers { shared: SharedRun, run: i64 },
}

/// Play what is left of `config`'s `[verify]` steps after a finished tune, at `venue`;
/// `resume` is the command that continues the run, for the message an interrupted step leaves.
pub async fn play(config: &Config, shutdown: &Shutdown, resume: &str, venue: &Venue) -> Result<()> {
    let steps = &config.verify;
    let n = steps.len();
    if n == 0 {
        return Ok(());
    }
    if config.simulate {
        eprintln!(
            "note: a simulated tune's θ comes from the Elo model, so its [verify] is not played"
        );
        return Ok(());
    }
    let record = config.verify_record();
    let mut done = verification::read(&record)?;
    check_recorded(config, &done)?;
    for s in &done {
        crate::outln!("{} (recorded in {})", s.line(), record.display())?;
    }
    let mut text = if done.is_empty() {
        String::new()
    } else {
        std::fs::read_to_string(&record)
            .with_context(|| format!("{}: cannot read", record.display()))?
    };
    let start = done.len();
    let failed = done.iter().any(|s| s.passed == Some(false));
    for (i, step) in steps.iter().enumerate().skip(start) {
        if failed || shutdown.is_requested() {
            break;
        }
        let k = i + 1;
        let which = if n > 1 {
            format!(", step {k} of {n}: {}", step.describe())
        } else {
            String::new()
        };
        eprintln!(
            "verifying the tuned values against the {} ([verify] in {}){which}",
            step.against.name(),
            config.path.display()
        );
        if n > 1 {
            crate::outln!("step {k} of {n}: {}", step.describe())?;
        }
        let verification = verification_of(config, step)?;
        let verified = match venue {
            Venue::Here => verify(verification, shutdown).await?,
            Venue::Workers { shared, run } => {
                let of = VerifyOf {
                    run: *run,
                    step: k,
                    of: n,
                };
                match on_workers(config, verification, shared, of, shutdown).await? {
                    (_, Some(v)) => v,
                    (id, None) => {
                        eprintln!(
                            "verification{which} goes on in the database as match {id}; `{resume}` follows it again"
                        );
                        break;
                    }
                }
            }
        };
        if !verified.complete {
            eprintln!("verification{which} incomplete, not recorded; `{resume}` plays it again");
            break;
        }
        text.push_str(&verification::block(
            k,
            n,
            &step.describe(),
            &verified.text,
            verified.passed,
        ));
        crate::tuner::checkpoint::write_atomically(&record, text.as_bytes()).with_context(
            || format!("{}: cannot write the verification record", record.display()),
        )?;
        eprintln!("verification{which} recorded in {}", record.display());
        let recorded = Step {
            step: k,
            of: n,
            header: (n > 1).then(|| step.describe()),
            verdict: verified.verdict,
            passed: (n > 1).then_some(verified.passed),
        };
        if n > 1 {
            crate::outln!("{}", recorded.line())?;
        }
        done.push(recorded);
        if !verified.passed {
            break;
        }
    }
    if n > 1 {
        crate::out!("{}", verification::summary(&done, n))?;
    }
    Ok(())
}

/// Step `of` of shared run `of.run`'s ladder as a match in its database (see the module docs).
async fn on_workers(
    config: &Config,
    verification: Verification<'_>,
    shared: &SharedRun,
    of: VerifyOf,
    shutdown: &Shutdown,
) -> Result<(i64, Option<Verified>)> {
    let prepared = prepare(verification)?;
    let mut db = Db::new(&shared.url)?;
    db.stop_on(Some(shutdown));
    let how = OnWorkers {
        name: format!(
            "verify run {}, step {} of {}: tuned vs {}",
            of.run, of.step, of.of, prepared.names[1]
        ),
        verify_of: Some(of),
        serving: Serving {
            lease_seconds: shared.lease_seconds,
            throughput: shared.throughput,
            reference_nps: shared.reference_nps,
        },
        author: shared.author.clone(),
        play_here: shared.play.then_some((config, shared)),
    };
    crate::db::match_create::verify(&mut db, &prepared, how, shutdown).await
}

/// A recorded verification must be of this config's steps: the same number, each with the same
/// header, or a resume would mix two ladders.
fn check_recorded(config: &Config, done: &[Step]) -> Result<()> {
    let n = config.verify.len();
    let mismatch = |why: String| {
        user_error(format!(
            "{}: {why}; the config's [verify] ({}) has {n} step{}: move the record aside to verify anew",
            config.verify_record().display(),
            config.path.display(),
            if n == 1 { "" } else { "s" }
        ))
    };
    if done.len() > n || done.iter().any(|s| s.of != n) {
        let of = done.first().map_or(0, |s| s.of);
        return Err(mismatch(format!(
            "it records a verification of {of} step{}",
            if of == 1 { "" } else { "s" }
        )));
    }
    for (s, step) in done.iter().zip(&config.verify) {
        if n > 1 && s.header.as_deref() != Some(step.describe().as_str()) {
            return Err(mismatch(format!(
                "it records step {} as `{}`, the config says `{}`",
                s.step,
                s.header.as_deref().unwrap_or(""),
                step.describe()
            )));
        }
    }
    Ok(())
}

/// The match of one step: the run's engines, book and concurrency (`spsa run --concurrency`
/// included), the step's limit, pairs, SPRT and opponent, the tuned θ from the checkpoint; no
/// PGN (the run's is the tune's games), the run's engine log if it has one.
fn verification_of<'a>(config: &'a Config, step: &VerifyConfig) -> Result<Verification<'a>> {
    let Some(mut games) = config.games.clone() else {
        return Err(user_error(format!(
            "{}: no engines configured ([verify] plays real games)",
            config.path.display()
        )));
    };
    games.pgn = None;
    set_limit(&mut games, step.limit);
    Ok(Verification {
        config,
        games,
        settings: MatchSettings {
            pairs: step.pairs,
            concurrency: Some(config.concurrency),
            sprt: step.sprt.clone(),
            max_faulty_pairs: 5,
            ..MatchSettings::default()
        },
        tuned: Tuned::Checkpoint,
        against: step.against,
        all_openings: false,
        book_given: false,
        progress: Some(Duration::from_secs(5)),
        fail_below: step.fail_below,
    })
}
