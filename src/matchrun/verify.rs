//! A verification match: the tuned values (from a checkpoint, a θ log's row or a variables
//! file; or any two variables files) against the start values or the engine's defaults, with a
//! run's engines, book and limits, on the openings held out of its tune, through the same match
//! runner as `spsa match`. `spsa verify` (`cli::verify`) builds a [`Verification`] from its
//! flags; a finished tune's `[verify]` ladder ([`crate::method::ladder`]) builds one per step.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use super::setup::{MatchSettings, plan};
use super::{MatchEnding, Plan, describe_options};
use crate::arena::OptionSet;
use crate::config::{Against, Config, ConfigError, GamesConfig, VerifyLimit};
use crate::engine::OptionValue;
use crate::error::user_error;
use crate::game::{BookPart, Holdout};
use crate::runtime::shutdown::Shutdown;
use crate::stats::Tally;
use crate::stats::sprt::{Sprt, SprtStatus};
use crate::tuner::checkpoint;
use crate::tuner::replay::LogReader;
use crate::vars::{self, Variable};

/// Where the tuned side's values come from.
#[derive(Clone, Debug, Default)]
pub enum Tuned {
    /// The run's checkpoint, or this one.
    #[default]
    Checkpoint,
    CheckpointFile(PathBuf),
    /// The θ log's row for this iteration.
    Iteration(u64),
    /// A variables file's start column.
    Values(PathBuf),
    /// Any two sets: side A's values from one variables file, side B's from the other.
    Pair(PathBuf, PathBuf),
}

/// What a verification plays: the run's config, its games (the caller's limits and flags
/// applied), the match's settings and which values play which.
pub struct Verification<'a> {
    pub config: &'a Config,
    pub games: GamesConfig,
    pub settings: MatchSettings,
    pub tuned: Tuned,
    pub against: Against,
    /// Play every opening of the book, the tune's own included.
    pub all_openings: bool,
    /// The book was given for this match (`--book`): play all of it.
    pub book_given: bool,
    /// Seconds between progress lines on stderr.
    pub progress: Option<Duration>,
    /// A step of fixed pairs fails when its 95% interval lies wholly below this Elo.
    pub fail_below: f64,
}

impl Verification<'_> {
    fn checkpoint_path(&self) -> &Path {
        match &self.tuned {
            Tuned::CheckpointFile(p) => p,
            _ => &self.config.checkpoint,
        }
    }
}

/// Put a verification step's limit in place of the tune's: a clock, nodes or depth clears the
/// others (and `nodestime`, as `--tc` does).
pub fn set_limit(games: &mut GamesConfig, limit: VerifyLimit) {
    let l = &mut games.limits;
    let (base, inc, nodes, depth) = match limit {
        VerifyLimit::Tune => return,
        VerifyLimit::Clock(b, i) => (Some(b), Some(i), None, None),
        VerifyLimit::Nodes(n) => (None, None, Some(n), None),
        VerifyLimit::Depth(d) => (None, None, None, Some(d)),
    };
    l.base_time_ms = base;
    l.inc_time_ms = inc;
    l.nodes = nodes;
    l.depth = depth;
    l.movetime_ms = None;
    l.nodestime = None;
}

/// One side's values: names and numbers, rounded to the integers spin options take.
struct ValueSet {
    label: String,
    names: Vec<String>,
    values: Vec<f64>,
}

impl ValueSet {
    fn from_vars(label: String, vars: &[Variable]) -> ValueSet {
        ValueSet {
            label,
            names: vars.iter().map(|v| v.name.clone()).collect(),
            values: vars.iter().map(|v| v.start.round()).collect(),
        }
    }

    fn options(&self) -> OptionSet {
        self.names
            .iter()
            .zip(&self.values)
            .map(|(n, v)| (n.clone(), OptionValue::Number(*v)))
            .collect()
    }

    fn get(&self, name: &str) -> Option<f64> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.values[i])
    }
}

fn load_values(path: &Path, label: &str) -> Result<ValueSet> {
    if std::fs::metadata(path).is_err() {
        return Err(user_error(format!(
            "{}: variables file not found",
            path.display()
        )));
    }
    let vars = vars::load(path)?;
    Ok(ValueSet::from_vars(
        format!("{label} ({})", path.display()),
        &vars,
    ))
}

/// The two sides from the flags: (A, B).
fn sides(args: &Verification) -> Result<(ValueSet, ValueSet)> {
    if let Tuned::Pair(a, b) = &args.tuned {
        return Ok((load_values(a, "A")?, load_values(b, "B")?));
    }
    let config = args.config;
    let start = load_values(&config.variables, "start")?;
    let (tuned, start) = tuned_and_start(args, start)?;
    Ok(match args.against {
        Against::Start => (tuned, start),
        Against::Defaults => (
            tuned,
            ValueSet {
                label: "the engine's defaults (no tuned option sent)".into(),
                names: Vec::new(),
                values: Vec::new(),
            },
        ),
    })
}

/// The tuned values (from --values, --iteration or the checkpoint) and the start values.
fn tuned_and_start(args: &Verification, start: ValueSet) -> Result<(ValueSet, ValueSet)> {
    let config = args.config;
    match &args.tuned {
        Tuned::Values(v) => return Ok((load_values(v, "tuned")?, start)),
        Tuned::Iteration(k) => return Ok((logged_values(config, &start, *k)?, start)),
        _ => {}
    }
    let path = args.checkpoint_path();
    if std::fs::metadata(path).is_err() {
        return Err(user_error(format!(
            "{}: checkpoint not found (run `spsa run {}` first, or give --values FILE)",
            path.display(),
            config.path.display()
        )));
    }
    let ck = checkpoint::read(path)?;
    let names: Vec<String> = ck.vars.iter().map(|v| v.name.clone()).collect();
    // A run whose variables changed on a resume plays its own start values: the file's
    // rows no longer name all of them.
    let reshaped = !ck.state.joined.is_empty() || !ck.state.held.is_empty();
    let start = if reshaped {
        ValueSet {
            names: names.clone(),
            values: ck.state.start.clone(),
            ..start
        }
    } else {
        start
    };
    if names != start.names {
        return Err(user_error(format!(
            "{}: the checkpoint's variables {:?} differ from {}'s {:?}",
            path.display(),
            names,
            config.variables.display(),
            start.names
        )));
    }
    let tuned = ValueSet {
        label: format!(
            "tuned ({}, {} of {} iterations)",
            path.display(),
            ck.state.applied,
            ck.state.iterations
        ),
        names,
        values: ck.state.theta.iter().map(|t| t.round()).collect(),
    };
    Ok((tuned, start))
}

/// θ after `iteration` updates, from the config's θ log (rounded as a checkpoint's θ is).
fn logged_values(config: &Config, start: &ValueSet, iteration: u64) -> Result<ValueSet> {
    let log = &config.log;
    if std::fs::metadata(log).is_err() {
        return Err(user_error(format!(
            "{}: θ log not found (run `spsa run {}` first)",
            log.display(),
            config.path.display()
        )));
    }
    let history = LogReader::open(log, Some(&start.names))?;
    if history.names != start.names {
        return Err(user_error(format!(
            "{}: the θ log's variables {:?} differ from {}'s {:?}",
            log.display(),
            history.names,
            config.variables.display(),
            start.names
        )));
    }
    let Some(theta) = history.theta_at_label(iteration)? else {
        let last = history.last_label().unwrap_or(0);
        return Err(user_error(format!(
            "{}: no row for iteration {iteration} (the log holds iterations up to {last})",
            log.display()
        )));
    };
    Ok(ValueSet {
        label: format!("tuned ({}, iteration {iteration})", log.display()),
        names: history.names.clone(),
        values: theta.iter().map(|t| t.round()).collect(),
    })
}

/// Which openings a verification plays, and the header line that says so.
struct OpeningsChoice {
    /// Play only this part of the book (`None`: all of it).
    held_out: Option<Holdout>,
    /// How many openings the book had when the run drew its split (`None`: not recorded).
    drawn_from: Option<u64>,
    /// What the header says after `openings: ` (the counts are filled in once the book is read).
    why: String,
}

/// The openings of a verification: `--book FILE` or `--all-openings` as told; else a config's
/// `verify_book`; else the openings the run held out of its tune, by the share and seed its
/// checkpoint recorded (so `--iteration K` and a resumed run verify on the same split). A
/// checkpoint from before held-out openings records none: its tune played the whole book, so
/// verification plays the whole book and says so.
fn openings_choice(args: &Verification, games: &mut GamesConfig) -> Result<OpeningsChoice> {
    let config = args.config;
    let all = |why: String| {
        Ok(OpeningsChoice {
            held_out: None,
            drawn_from: None,
            why,
        })
    };
    if games.book.is_none() {
        return all(String::new());
    }
    if args.book_given {
        return all("--book".into());
    }
    if args.all_openings {
        return all("--all-openings: the tune's own openings included".into());
    }
    if let Some(vb) = games.verify_book.clone() {
        if std::fs::metadata(&vb).is_err() {
            return Err(ConfigError::InFile {
                path: config.path.clone(),
                message: format!("key `games.verify_book`: {}: book not found", vb.display()),
            }
            .into());
        }
        let tuned = games.book.replace(vb);
        let tuned = tuned.map(|b| b.display().to_string()).unwrap_or_default();
        return all(format!("verify_book, the tune played {tuned}"));
    }
    let ck_path = args.checkpoint_path();
    if std::fs::metadata(ck_path).is_ok() {
        let state = checkpoint::read(ck_path)?.state;
        let from = format!("the split recorded in {}", ck_path.display());
        return match state.holdout {
            Some(share) if share > 0.0 => Ok(OpeningsChoice {
                held_out: Some(Holdout {
                    share,
                    seed: state.seed()?,
                }),
                drawn_from: state.holdout_openings,
                why: format!(
                    "held out of the tune by holdout {share} and seed {} ({from})",
                    state.seed
                ),
            }),
            Some(_) => all(format!(
                "holdout = 0 in {}, so the tune played them too",
                ck_path.display()
            )),
            None => all(format!(
                "{} records no held-out openings (a run from before they were recorded, or a simulated one), so the tune may have played them too; give --book FILE for openings it never saw",
                ck_path.display()
            )),
        };
    }
    match config.seed {
        Some(seed) if games.holdout > 0.0 => Ok(OpeningsChoice {
            held_out: Some(Holdout {
                share: games.holdout,
                seed,
            }),
            drawn_from: None,
            why: format!(
                "held out by the config's holdout {} and seed {seed} (no checkpoint yet)",
                games.holdout
            ),
        }),
        Some(_) => all("holdout = 0".into()),
        None => all("no checkpoint and no seed in the config to draw the split from".into()),
    }
}

/// Put the chosen part of the plan's book in its place and say what it holds: which openings,
/// how many, and how often the planned pairs play each.
fn choose_openings(plan: &mut Plan, games: &GamesConfig, choice: OpeningsChoice) -> Result<String> {
    let book = plan.book.take().context("the book was taken already")?;
    let Some(path) = &games.book else {
        plan.book = Some(book);
        return Ok("openings: none, every pair starts from the initial position\n".into());
    };
    let whole = book.len();
    let book = match choice.held_out {
        Some(h) => {
            book.check_split_size(choice.drawn_from)?;
            book.part(h, BookPart::HeldOut)?
        }
        None => book,
    };
    let n = book.len();
    // An SPRT's pairs are only a ceiling: say how the openings are cycled instead.
    let often = if plan.sprt.is_some() {
        format!("the SPRT plays each once per {n} pairs")
    } else {
        replays(plan.pairs, n)
    };
    let line = format!(
        "openings: {n} of {whole} in {}, {often}: {}\n",
        path.display(),
        choice.why,
    );
    plan.book = Some(book);
    Ok(line)
}

/// How often `pairs` pairs play the `n` openings: fewer pairs than openings play some of them
/// once each, more play each about `pairs / n` times.
fn replays(pairs: u64, n: usize) -> String {
    if pairs <= n as u64 {
        format!("{pairs} pairs play {pairs} of them once each")
    } else {
        format!(
            "{pairs} pairs play each about {:.1} times",
            pairs as f64 / n as f64
        )
    }
}

/// A table of both sides' values, one variable a line.
fn values_table(a: &ValueSet, b: &ValueSet, a_name: &str, b_name: &str) -> String {
    let mut names: Vec<&String> = a.names.iter().collect();
    for n in &b.names {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let show = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_else(|| "-".into());
    let rows: Vec<Vec<String>> = names
        .into_iter()
        .map(|n| vec![n.clone(), show(a.get(n)), show(b.get(n))])
        .collect();
    crate::report::status::table(&["variable", a_name, b_name], &rows)
}

/// The text of a finished verification: what played, the result block and the verdict.
pub struct Verified {
    pub text: String,
    pub verdict: String,
    /// Every planned pair was played (or the SPRT decided); not interrupted or failed.
    pub complete: bool,
    /// The tuned side passed: its SPRT accepted H1, or (without one) its 95% interval does not
    /// lie wholly below `fail_below` ([`passed`]).
    pub passed: bool,
}

/// A verification ready to play, wherever it is played: its plan (the chosen openings in
/// place), the games it was planned from, its header (both sides' values, the pairs, the
/// openings), the sides' names and the part of the book it plays.
pub struct Prepared {
    pub plan: Plan,
    pub games: GamesConfig,
    pub header: String,
    pub names: [String; 2],
    /// The held-out part the plan's book was cut to, and the book's size when it was drawn.
    pub held_out: Option<(Holdout, Option<u64>)>,
    pub fail_below: f64,
    pub progress: Option<Duration>,
}

/// Plan the verification: the sides, the openings and the match, as `spsa verify` plays it on
/// this machine and a match in the database plays it on the workers.
pub fn prepare(args: Verification<'_>) -> Result<Prepared> {
    let config = args.config;
    let mut games = args.games.clone();
    let choice = openings_choice(&args, &mut games)?;
    let held_out = choice.held_out.map(|h| (h, choice.drawn_from));
    let (a, b) = sides(&args)?;
    let names = if matches!(args.tuned, Tuned::Pair(..)) {
        ["A".to_string(), "B".to_string()]
    } else {
        ["tuned".to_string(), args.against.name().to_string()]
    };
    let mut plan = plan(
        &games,
        names.clone(),
        a.options(),
        b.options(),
        &args.settings,
        100,
        Some(config.concurrency),
        config.seed,
        format!("spsa verify {}", config.path.display()),
    )?;
    plan.option_places.config = Some(config.clone());
    let openings = choose_openings(&mut plan, &games, choice)?;
    let mut header = format!("verify: {} vs {}\n", a.label, b.label);
    header.push_str(&values_table(&a, &b, &names[0], &names[1]));
    header.push_str(&format!(
        "{} pairs, concurrency {}, {}\n",
        plan.pairs, plan.concurrency, plan.description
    ));
    header.push_str(&openings);
    tracing::debug!(
        "A: {}; B: {}",
        describe_options(&plan.a_options),
        describe_options(&plan.b_options)
    );
    Ok(Prepared {
        plan,
        games,
        header,
        names,
        held_out,
        fail_below: args.fail_below,
        progress: args.progress,
    })
}

impl Prepared {
    /// The openings line of the plan's first `pairs` pairs (a match in the database counts its
    /// pairs in order, so these are the ones it played), as a local match prints it.
    pub fn openings_of_pairs(&self, pairs: u64) -> Option<String> {
        let book = self.plan.book.as_ref()?;
        let mut used = std::collections::BTreeMap::new();
        for k in 0..pairs {
            *used.entry(book.index_for(k)).or_insert(0u64) += 1;
        }
        super::openings_text(&used, book.len(), 0)
    }

    /// The verdict of the played match (its counts, and its test's state when it has one)
    /// after `report` (its result block), printed and returned as a record's text.
    pub fn judge(
        &self,
        tally: &Tally,
        sprt: Option<&(Sprt, SprtStatus)>,
        report: &str,
        complete: bool,
    ) -> Result<Verified> {
        let verdict = verdict(tally, sprt, &self.names[0], &self.names[1]);
        let passed = passed(tally, sprt, self.fail_below);
        crate::outln!("verdict: {verdict}")?;
        Ok(Verified {
            text: format!("{}{report}verdict: {verdict}\n", self.header),
            verdict,
            complete,
            passed,
        })
    }
}

/// Play the verification match on this machine, printing as `spsa verify` does (the values,
/// the openings, the result block and the verdict on stdout; progress and speed on stderr)
/// until it ends or `shutdown`; returns its text for a record.
pub async fn verify(args: Verification<'_>, shutdown: &Shutdown) -> Result<Verified> {
    let mut prepared = prepare(args)?;
    let source = prepared.plan.start_source().await?;
    crate::out!("{}", prepared.header)?;
    let out = super::play_planned(&source, &prepared.plan, shutdown, prepared.progress).await;
    let complete = matches!(out.ending, MatchEnding::Finished);
    let report = out.report();
    let (tally, sprt) = (out.tally, out.sprt);
    super::finish(out)?;
    prepared.judge(&tally, sprt.as_ref(), &report, complete)
}

/// Whether a verification passed: with an SPRT, when it accepted H1 (H0, or no decision by
/// the most pairs allowed, fails); without one, unless the 95% interval of the Elo lies wholly
/// below `fail_below` (too few pairs for an interval fail too: nothing was confirmed).
pub fn passed(tally: &Tally, sprt: Option<&(Sprt, SprtStatus)>, fail_below: f64) -> bool {
    use crate::stats::sprt::Decision;
    if let Some((_, status)) = sprt {
        return status.decision == Some(Decision::H1);
    }
    match crate::stats::pentanomial(&tally.pentanomial).and_then(|e| e.interval) {
        Some((_, high)) => high >= fail_below,
        None => false,
    }
}

/// One line a person can act on: which side is better, by the SPRT's decision or by whether
/// the 95% interval excludes zero; "not shown" when neither does.
pub fn verdict(tally: &Tally, sprt: Option<&(Sprt, SprtStatus)>, a: &str, b: &str) -> String {
    use crate::stats::sprt::Decision;
    let elo = crate::stats::progress_elo(tally).unwrap_or_else(|| "no games".into());
    let pairs = tally.pairs();
    if let Some((test, status)) = sprt {
        return match status.decision {
            Some(Decision::H1) => {
                format!("{a} is better than {b}: {test} accepted H1 after {pairs} pairs ({elo})")
            }
            Some(Decision::H0) => format!(
                "no gain of {a} over {b} shown: {test} accepted H0 after {pairs} pairs ({elo})"
            ),
            None => format!("undecided: {test} after {pairs} pairs, {status} ({elo})"),
        };
    }
    match crate::stats::pentanomial(&tally.pentanomial).and_then(|e| e.interval) {
        Some((low, _)) if low > 0.0 => format!("{a} is better than {b}: {elo} over {pairs} pairs"),
        Some((_, high)) if high < 0.0 => format!("{a} is worse than {b}: {elo} over {pairs} pairs"),
        Some(_) => format!("no difference shown between {a} and {b}: {elo} over {pairs} pairs"),
        None => format!("too few pairs to tell: {elo} over {pairs} pairs"),
    }
}

#[cfg(test)]
mod tests {
    use crate::stats::Tally;
    use crate::stats::sprt::{Decision, Sprt, SprtStatus};

    type Outcome = (Tally, Option<(Sprt, SprtStatus)>);

    fn outcome(pentanomial: [u64; 5], sprt: Option<Option<Decision>>) -> Outcome {
        let mut tally = Tally::default();
        // Each bucket's pairs as two games worth its points (0, ½, 1, 1½, 2).
        let games = [[-1, -1], [-1, 0], [0, 0], [1, 0], [1, 1]];
        for (n, pair) in pentanomial.iter().zip(games) {
            for _ in 0..*n {
                tally.add_pair(pair);
            }
        }
        let test = Sprt::parse("0,2").unwrap();
        let sprt = sprt.map(|decision| {
            let mut status = test.status(&tally.pentanomial);
            status.decision = decision;
            (test, status)
        });
        (tally, sprt)
    }

    fn passed(o: &Outcome, fail_below: f64) -> bool {
        super::passed(&o.0, o.1.as_ref(), fail_below)
    }

    /// An SPRT step passes on H1 alone; a fixed-pairs step fails when its interval lies wholly
    /// below `fail_below`, or when it has too few pairs for one.
    #[test]
    fn a_step_passes_by_its_sprt_or_by_where_its_interval_lies() {
        let even = [2, 4, 8, 4, 2];
        assert!(passed(&outcome(even, Some(Some(Decision::H1))), 0.0));
        assert!(!passed(&outcome(even, Some(Some(Decision::H0))), 0.0));
        assert!(!passed(&outcome(even, Some(None)), 0.0));
        // Even: the interval straddles 0, so only a bound above its top fails it.
        assert!(passed(&outcome(even, None), 0.0));
        assert!(!passed(&outcome(even, None), 500.0));
        // Clearly worse: below 0, above -1000.
        let worse = [8, 6, 4, 1, 1];
        assert!(!passed(&outcome(worse, None), 0.0));
        assert!(passed(&outcome(worse, None), -1000.0));
        // Under 10 pairs there is no interval: nothing confirmed.
        assert!(!passed(&outcome([1, 2, 3, 2, 1], None), -1000.0));
    }

    #[test]
    fn replays_say_once_each_when_the_openings_outnumber_the_pairs() {
        assert_eq!(
            super::replays(200, 5000),
            "200 pairs play 200 of them once each"
        );
        assert_eq!(
            super::replays(1000, 1000),
            "1000 pairs play 1000 of them once each"
        );
        assert_eq!(
            super::replays(600, 300),
            "600 pairs play each about 2.0 times"
        );
    }
}
