//! `spsa match` and `spsa verify`: play N game pairs between two engines (or one engine with two
//! option sets) in an [`Arena`] and report W/D/L, pentanomial counts and the Elo difference with
//! its 95% interval ([`crate::stats`]).
//!
//! The pairs are played by [`Arena::play_pair`], one per free slot, as the tuner does: there is
//! no second game loop here. Pair `k` (0-based) plays opening `k` of the book's order.

pub mod args;
pub mod verify;

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::Result;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use shakmaty::Color;

use crate::arena::{Arena, OptionSet, PairGames, PairLabel};
use crate::report::progress::format_duration;
use crate::stats::sprt::{Sprt, SprtStatus};
use crate::stats::{self, Tally};

pub use args::{MatchArgs, MatchFlags};
pub use verify::VerifyArgs;

/// A problem with the command line of `spsa match`/`spsa verify` that the user must fix
/// (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MatchInputError(pub String);

/// How a match ended.
#[derive(Debug)]
pub enum MatchEnding {
    /// Every planned pair was played.
    Finished,
    /// Stopped by Ctrl-C / SIGTERM; the pairs in flight were dropped.
    Interrupted,
    /// The arena gave up (for example an engine that faults in every game).
    Failed(anyhow::Error),
    /// The SPRT accepted a hypothesis; the pairs in flight were dropped.
    SprtDecided,
}

/// Everything a match produced.
#[derive(Debug)]
pub struct MatchOutcome {
    pub planned: u64,
    pub tally: Tally,
    /// Engine faults by side name and kind, e.g. ("Engine2", "crash") → 3.
    pub faults: BTreeMap<(String, String), u64>,
    /// Each pair's [`PairGames::overhead`], in completion order.
    pub overheads: Vec<Duration>,
    /// Moves the engines searched (book moves not counted).
    pub engine_moves: u64,
    pub elapsed: Duration,
    pub ending: MatchEnding,
    /// The test and its last state, when the match ran one.
    pub sprt: Option<(Sprt, SprtStatus)>,
}

impl MatchOutcome {
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
        out
    }
}

/// The two sides of a match as the arena knows them.
pub struct Sides<'a> {
    /// Side A's name (for fault counts); A plays White in the first game of each pair.
    pub a_name: &'a str,
    pub b_name: &'a str,
    pub a_options: &'a OptionSet,
    pub b_options: &'a OptionSet,
}

/// Play `pairs` pairs over all of the arena's slots, printing a progress line on stderr every
/// `progress_every`. Stops early when `shutdown` resolves, the arena fails or `sprt` decides;
/// the outcome holds what was played either way.
pub async fn play(
    arena: &Arena,
    sides: &Sides<'_>,
    pairs: u64,
    sprt: Option<&Sprt>,
    shutdown: impl Future<Output = ()>,
    progress_every: Option<Duration>,
) -> MatchOutcome {
    let started = Instant::now();
    let mut out = MatchOutcome {
        planned: pairs,
        tally: Tally::default(),
        faults: BTreeMap::new(),
        overheads: Vec::with_capacity(pairs.min(1 << 20) as usize),
        engine_moves: 0,
        elapsed: Duration::ZERO,
        ending: MatchEnding::Finished,
        sprt: sprt.map(|s| (*s, s.status(&[0; 5]))),
    };
    let mut free_slots: Vec<usize> = (0..arena.slots()).rev().collect();
    let mut next: u64 = 0;
    let mut in_flight = FuturesUnordered::new();
    let mut ticker = progress_every.map(|every| {
        let mut t = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    tokio::pin!(shutdown);
    loop {
        while next < pairs {
            let Some(slot) = free_slots.pop() else { break };
            let k = next;
            in_flight.push(async move {
                let label = PairLabel {
                    round: (k + 1).to_string(),
                    note: String::new(),
                };
                let r = arena
                    .play_pair(slot, k, sides.a_options, sides.b_options, &label)
                    .await;
                (slot, r)
            });
            next += 1;
        }
        if in_flight.is_empty() {
            break;
        }
        let tick = async {
            match ticker.as_mut() {
                Some(t) => {
                    t.tick().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = &mut shutdown => {
                out.ending = MatchEnding::Interrupted;
                break;
            }
            Some((slot, result)) = in_flight.next() => {
                free_slots.push(slot);
                match result {
                    Ok(pair) => {
                        out.add(&pair, sides);
                        if let Some((test, status)) = &mut out.sprt {
                            *status = test.status(&out.tally.pentanomial);
                            if status.decision.is_some() {
                                out.ending = MatchEnding::SprtDecided;
                                break;
                            }
                        }
                    }
                    Err(e) => {
                        out.ending = MatchEnding::Failed(e);
                        break;
                    }
                }
            }
            _ = tick => eprintln!("{}", progress_line(&out, started)),
        }
    }
    drop(in_flight);
    out.elapsed = started.elapsed();
    out
}

impl MatchOutcome {
    fn add(&mut self, pair: &PairGames, sides: &Sides<'_>) {
        self.tally.add_pair(pair.scores);
        self.overheads.push(pair.overhead);
        // Game 1: A is White; game 2: A is Black.
        for (i, g) in pair.games.iter().enumerate() {
            self.engine_moves += g.moves.iter().filter(|m| !m.book).count() as u64;
            if let (Some(kind), Some(by)) = (g.end.fault_kind(), g.end.faulted()) {
                let a_color = if i == 0 { Color::White } else { Color::Black };
                let side = if by == a_color {
                    sides.a_name
                } else {
                    sides.b_name
                };
                *self
                    .faults
                    .entry((side.to_string(), kind.to_string()))
                    .or_default() += 1;
            }
        }
    }
}

/// `pairs 12/100 (12.0%), 1.52 games/s, ETA 58s, +5 =10 -9, Elo -12.3 [-80.1, +51.0]`.
pub fn progress_line(out: &MatchOutcome, started: Instant) -> String {
    let t = &out.tally;
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    let done = t.pairs();
    let rate = t.games() as f64 / secs;
    let eta = if done > 0 {
        format_duration(out.planned.saturating_sub(done) as f64 * secs / done as f64)
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
    if let Some(e) = stats::pentanomial(&t.pentanomial).filter(|e| !e.elo.is_finite()) {
        s.push_str(&format!(", Elo {}", e.elo_text(t.games())));
    } else if let Some(e) = stats::pentanomial(&t.pentanomial) {
        s.push_str(&format!(
            ", Elo {} [{}, {}]",
            e.elo_text(t.games()),
            stats::format_elo(e.elo_low),
            stats::format_elo(e.elo_high)
        ));
    }
    if let Some((_, status)) = &out.sprt {
        s.push_str(&format!(", {status}"));
    }
    if !out.faults.is_empty() {
        s.push_str(&format!(", faults: {}", out.faults_text()));
    }
    s
}

/// Print the outcome (results on stdout, how it ended on stderr) and turn a failure into the
/// command's error.
pub fn finish(out: MatchOutcome) -> Result<()> {
    print!("{}", out.report());
    match out.ending {
        MatchEnding::Finished | MatchEnding::SprtDecided => Ok(()),
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
