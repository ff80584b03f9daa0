//! Matches: play N game pairs between two engines (or one engine with two option sets) in an
//! [`crate::arena::Arena`] and count W/D/L, pentanomial counts and the Elo difference with its
//! 95% interval ([`crate::stats`]). What is played is a [`setup::Plan`]; the commands that build
//! one from their flags and print the outcome are `spsa match` and `spsa verify` (`cli::match`,
//! `cli::verify`); a verification match ([`verify`]) is played here for `spsa verify` and for a
//! finished tune's `[verify]` ladder, and `spsa plan --measure` plays its pilot matches here too.
//!
//! The games are played by the same [`pool`] and [`GameSource`] as tuning, scheduled by game:
//! there is no second game loop here. Pair `k` (0-based) plays opening `k` of the book's order.

pub mod record;
pub mod setup;
pub mod verify;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::report::progress::format_duration;
use crate::runtime::shutdown::Shutdown;
use crate::source::games::GameSource;
use crate::source::pool::{self, Feed};
use crate::source::{Measurement, Source, Trial};
use crate::stats::sprt::{Sprt, SprtStatus};
use crate::stats::{self, Tally};
use crate::tuner::Outputs;

pub use record::MatchRecord;
pub use setup::{MatchSettings, Plan, describe_options};

/// How a match ended.
#[derive(Debug)]
pub enum MatchEnding {
    /// Every planned pair was played.
    Finished,
    /// Stopped by Ctrl-C / SIGTERM; the pairs in flight were dropped.
    Interrupted,
    /// The arena gave up (for example an engine that faults in every game).
    Failed(anyhow::Error),
}

/// Everything a match produced.
#[derive(Debug)]
pub struct MatchOutcome {
    pub planned: u64,
    pub tally: Tally,
    /// Engine faults by side name and kind, e.g. ("Engine2", "crash") → 3.
    pub faults: BTreeMap<(String, String), u64>,
    /// Each pair's time not spent in engine searches, in completion order.
    pub overheads: Vec<Duration>,
    /// Moves the engines searched (book moves not counted).
    pub engine_moves: u64,
    pub elapsed: Duration,
    pub ending: MatchEnding,
    /// The test and its state, when the match ran one; frozen once it decides (the pairs in
    /// flight then still finish and are counted above).
    pub sprt: Option<(Sprt, SprtStatus)>,
    /// Finished pairs by the book index of their opening, and the book's size: a user sees how
    /// many openings a result rests on and how often each was replayed.
    pub openings: BTreeMap<usize, u64>,
    pub book_len: usize,
    /// The pairs handed out so far (a resumed match's earlier ones included).
    pub next_pair: u64,
    /// What the runs before a resume played: the counts above include it, the speed and the
    /// ETA are this run's own.
    pub earlier: EarlierRuns,
}

/// A resumed match's pairs, games and seconds of play before this run (zero for a new match).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EarlierRuns {
    pub pairs: u64,
    pub games: u64,
    pub seconds: f64,
}

impl MatchOutcome {
    /// The games this run played (a resumed match's earlier ones left out): what its speed is
    /// measured on.
    pub fn games_this_run(&self) -> u64 {
        self.tally.games().saturating_sub(self.earlier.games)
    }

    /// Whether the SPRT (if any) has accepted a hypothesis.
    pub fn sprt_decided(&self) -> bool {
        self.sprt
            .as_ref()
            .is_some_and(|(_, s)| s.decision.is_some())
    }

    /// The median per-pair overhead (zero when no pair finished).
    pub fn median_overhead(&self) -> Duration {
        let mut v = self.overheads.clone();
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    }

    /// Faults as `Engine2: crash 3, stall 1; Engine1: …`, or `none`.
    pub fn faults_text(&self) -> String {
        if self.faults.is_empty() {
            return "none".into();
        }
        let mut by_side: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for ((side, kind), n) in &self.faults {
            by_side.entry(side).or_default().push(format!("{kind} {n}"));
        }
        by_side
            .into_iter()
            .map(|(side, kinds)| format!("{side}: {}", kinds.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The result block printed on stdout.
    pub fn report(&self) -> String {
        let mut out = stats::Report(&self.tally).to_string();
        if let Some((test, status)) = &self.sprt {
            out.push_str(&format!("{test}: {status}\n"));
        }
        out.push_str(&format!("faults: {}\n", self.faults_text()));
        if let Some(line) = self.openings_text() {
            out.push_str(&line);
        }
        out
    }

    /// `openings: 60 of 60 used, each played 2-3 times (1 pair = 2 games)`, once a pair finished
    /// in this run.
    pub fn openings_text(&self) -> Option<String> {
        openings_text(&self.openings, self.book_len, self.earlier.pairs)
    }
}

/// The openings line of a match: how many of the book's `book_len` openings its pairs played
/// (`openings`: pairs by book index) and how often each; `earlier` pairs before a resume are
/// not among them, and the line says so.
pub fn openings_text(
    openings: &BTreeMap<usize, u64>,
    book_len: usize,
    earlier: u64,
) -> Option<String> {
    let min = openings.values().min()?;
    let max = openings.values().max()?;
    let times = |n: u64| {
        if n == 1 {
            "once".to_string()
        } else {
            format!("{n} times")
        }
    };
    let each = if min == max {
        times(*min)
    } else {
        format!("{min}-{max} times")
    };
    // A resumed match knows its earlier pairs' counts, not their openings.
    let scope = match earlier {
        0 => String::new(),
        n => format!(" in this run (the {n} pairs before the resume not counted)"),
    };
    Some(format!(
        "openings{scope}: {} of {book_len} used, each played {each} (a pair plays one opening with both colours)\n",
        openings.len(),
    ))
}

/// Play `pairs` pairs over all of the source's slots, printing a progress line on stderr every
/// `progress_every`, writing each game's records as it finishes. Stops early on shutdown, or when
/// `max_faulty_pairs` pairs in a row ended in faults in every game; the outcome holds what was
/// played either way, and every game written was counted. With `sprt`, no new pair starts once
/// the test has decided. With `record`, the match's record file is written at the start, after
/// every finished pair and at the end ([`record`]).
#[allow(clippy::too_many_arguments)]
pub async fn play(
    source: &GameSource,
    slots: usize,
    pairs: u64,
    sprt: Option<&Sprt>,
    max_faulty_pairs: u32,
    shutdown: &Shutdown,
    progress_every: Option<Duration>,
    record: Option<Recording>,
) -> MatchOutcome {
    let started = Instant::now();
    // A resumed match starts from its record's counts, at the first pair it did not hand out.
    let earlier = record.as_ref().filter(|r| r.resumed).map(|r| &r.record);
    let tally = earlier.map(MatchRecord::tally).unwrap_or_default();
    let next = earlier.map_or(0, MatchRecord::resume_at);
    let earlier_runs = earlier.map_or_else(EarlierRuns::default, |r| EarlierRuns {
        pairs: tally.pairs(),
        games: tally.games(),
        seconds: r.elapsed_seconds,
    });
    let mut faults = BTreeMap::new();
    if let Some(n) = earlier.map(|r| r.faults).filter(|&n| n > 0) {
        faults.insert(("before the resume".to_string(), "faults".to_string()), n);
    }
    let mut feed = MatchFeed {
        next,
        out: MatchOutcome {
            planned: pairs,
            tally,
            faults,
            overheads: Vec::with_capacity(pairs.min(1 << 20) as usize),
            engine_moves: 0,
            elapsed: Duration::ZERO,
            ending: MatchEnding::Finished,
            sprt: sprt.map(|s| (*s, s.status(&tally.pentanomial))),
            openings: BTreeMap::new(),
            book_len: source.arena().book().len(),
            next_pair: next,
            earlier: earlier_runs,
        },
        book: source.arena().book(),
        outputs: Outputs::new(&source.outputs()),
        started,
        last_progress: Instant::now(),
        progress_every,
        max_faulty_pairs: max_faulty_pairs.max(1),
        faulty_streak: 0,
        record,
    };
    let ran = match feed.write_record(None) {
        Ok(()) => pool::run(source, slots, &mut feed, shutdown).await,
        Err(e) => Err(e),
    };
    match ran {
        Ok(pool::Ending::Finished) => {}
        Ok(pool::Ending::Interrupted) => feed.out.ending = MatchEnding::Interrupted,
        Err(e) => feed.out.ending = MatchEnding::Failed(e),
    }
    feed.out.elapsed = started.elapsed();
    let ending = std::mem::replace(&mut feed.out.ending, MatchEnding::Finished);
    if let Err(e) = feed.write_record(Some(&ending)) {
        tracing::warn!("{e:#}");
    }
    feed.out.ending = ending;
    feed.out
}

/// `spsa match`: start the planned match's engines, say what is played, play it here to its end
/// or Ctrl-C, and print the results.
pub async fn play_here(mut plan: Plan, progress_every: Option<Duration>) -> Result<()> {
    let source = plan.start_source().await?;
    let (n1, n2) = plan.names();
    crate::outln!(
        "match: {n1} ({}) vs {n2} ({}), {} pairs, concurrency {}, {}",
        describe_options(&plan.a_options),
        describe_options(&plan.b_options),
        plan.pairs,
        plan.concurrency,
        plan.description
    )?;
    let shutdown = Shutdown::on_signals();
    let out = play_planned(&source, &plan, &shutdown, progress_every).await;
    finish(out)
}

/// Play a planned match to its end (or `shutdown`), quit the engines and print the speed on
/// stderr; the outcome is the caller's to print ([`finish`]).
pub async fn play_planned(
    source: &GameSource,
    plan: &Plan,
    shutdown: &Shutdown,
    progress_every: Option<Duration>,
) -> MatchOutcome {
    let out = play(
        source,
        plan.concurrency,
        plan.pairs,
        plan.sprt.as_ref(),
        plan.max_faulty_pairs,
        shutdown,
        progress_every,
        plan.recording(),
    )
    .await;
    source.arena().quit_all().await;
    print_speed(&out);
    out
}

/// This run's games, their speed and the median time between games, on stderr (a resumed
/// match's earlier games are counted in its results, not here).
pub fn print_speed(out: &MatchOutcome) {
    let games = out.games_this_run();
    let minutes = out.elapsed.as_secs_f64() / 60.0;
    let before = match out.earlier.games {
        0 => String::new(),
        n => format!(" ({n} before the resume)"),
    };
    eprintln!(
        "{games} games in {}{before}, {:.1} games/min, median overhead per game {:.1} ms",
        format_duration(out.elapsed.as_secs_f64()),
        if minutes > 0.0 {
            games as f64 / minutes
        } else {
            0.0
        },
        out.median_overhead().as_secs_f64() * 1000.0
    );
}

/// Print the outcome (results on stdout, how it ended on stderr) and turn a failure into the
/// command's error.
pub fn finish(out: MatchOutcome) -> Result<()> {
    crate::out!("{}", out.report())?;
    match out.ending {
        MatchEnding::Finished => Ok(()),
        MatchEnding::Interrupted => {
            eprintln!(
                "interrupted after {} of {} pairs; the results above are for the pairs played",
                out.tally.pairs(),
                out.planned
            );
            Ok(())
        }
        MatchEnding::Failed(e) => Err(e.context(format!(
            "match stopped after {} of {} pairs",
            out.tally.pairs(),
            out.planned
        ))),
    }
}

/// Where a match keeps its record, and the record.
pub struct Recording {
    pub path: PathBuf,
    pub record: MatchRecord,
    /// The record is an earlier run of this match to go on with (`--resume`).
    pub resumed: bool,
}

/// Pair `pair` (1-based) of a match: the book's opening `pair − 1` and the games' seed `pair`,
/// with no SPSA values. A local match and a worker playing a match from the database both
/// play pair i as this trial, so at fixed nodes they play the same games.
pub fn pair_trial(pair: u64) -> Trial {
    Trial {
        iteration: pair,
        delta: Vec::new(),
        c_k: Vec::new(),
        plus: Vec::new(),
        minus: Vec::new(),
        opening: pair.saturating_sub(1),
        pairs: 1,
        seed: pair,
        track: None,
    }
}

/// The match as the pool's feed: pair k is trial k+1 with no SPSA values.
struct MatchFeed<'a> {
    /// Where pair k's opening is in the book, for the openings count.
    book: &'a crate::game::Book,
    next: u64,
    out: MatchOutcome,
    outputs: Outputs,
    started: Instant,
    last_progress: Instant,
    progress_every: Option<Duration>,
    max_faulty_pairs: u32,
    faulty_streak: u32,
    record: Option<Recording>,
}

impl MatchFeed<'_> {
    /// Write the record as the match stands (`ending`: it is over).
    fn write_record(&mut self, ending: Option<&MatchEnding>) -> Result<()> {
        let Some(r) = &mut self.record else {
            return Ok(());
        };
        r.record.update(&self.out, ending);
        r.record.write(&r.path)
    }
}

impl Feed for MatchFeed<'_> {
    fn next_trial(&mut self) -> Option<Trial> {
        if self.next >= self.out.planned || self.out.sprt_decided() {
            return None;
        }
        self.next += 1;
        self.out.next_pair = self.next;
        Some(pair_trial(self.next))
    }

    fn finished(&mut self, trial: Trial, m: Measurement) -> Result<()> {
        for r in &m.records {
            self.outputs.append(r)?;
        }
        self.out.add(&m);
        *self
            .out
            .openings
            .entry(self.book.index_for(trial.opening))
            .or_default() += 1;
        if let Some((test, status)) = &mut self.out.sprt
            && status.decision.is_none()
        {
            *status = test.status(&self.out.tally.pentanomial);
        }
        self.out.elapsed = self.started.elapsed();
        self.write_record(None)?;
        if let Some(every) = self.progress_every
            && self.last_progress.elapsed() >= every
        {
            eprintln!("{}", progress_line(&self.out, self.out.elapsed));
            self.last_progress = Instant::now();
        }
        self.faulty_streak = if m.all_faulty() {
            self.faulty_streak + 1
        } else {
            0
        };
        if self.faulty_streak >= self.max_faulty_pairs {
            let last = m.faults.last().map(|f| f.kind.as_str()).unwrap_or("fault");
            bail!(
                "every game of the last {} pairs ended in an engine fault (last: {last}); stopping",
                self.faulty_streak
            );
        }
        Ok(())
    }
}

impl MatchOutcome {
    fn add(&mut self, m: &Measurement) {
        if let [g1, g2] = m.games[..] {
            self.tally.add_pair([g1.value(), g2.value()]);
        }
        self.overheads.push(Duration::from_micros(m.overhead_us));
        self.engine_moves += m.engine_moves;
        for f in &m.faults {
            *self
                .faults
                .entry((f.side.clone(), f.kind.clone()))
                .or_default() += 1;
        }
    }
}

/// `pairs 12/100 (12.0%), 1.52 games/s, ETA 58s, +5 =10 -9, Elo -12.3 [-80.1, +51.0]`: the
/// counts are the whole match's, the speed and the ETA this run's (a resumed match's earlier
/// pairs were not played in this run's time).
pub fn progress_line(out: &MatchOutcome, this_run: Duration) -> String {
    let t = &out.tally;
    let secs = this_run.as_secs_f64().max(1e-9);
    let done = t.pairs();
    let done_now = done.saturating_sub(out.earlier.pairs);
    let rate = out.games_this_run() as f64 / secs;
    let eta = if done_now > 0 {
        format_duration(out.planned.saturating_sub(done) as f64 * secs / done_now as f64)
    } else {
        "?".into()
    };
    let mut s = format!(
        "pairs {done}/{} ({:.1}%), {rate:.2} games/s, ETA {eta}, +{} ={} -{}",
        out.planned,
        100.0 * done as f64 / out.planned.max(1) as f64,
        t.wins,
        t.draws,
        t.losses
    );
    if let Some(elo) = stats::progress_elo(t) {
        s.push_str(&format!(", {elo}"));
    }
    if let Some((_, status)) = &out.sprt {
        s.push_str(&format!(", {status}"));
    }
    if !out.faults.is_empty() {
        s.push_str(&format!(", faults: {}", out.faults_text()));
    }
    s
}
