//! The seam between the tuner and whatever measures a trial: a [`Trial`] goes in (everything the
//! core decided: k, δ, c_k, the values to play), a [`Measurement`] comes out (game results, or
//! loss sums over positions). The tuner, the pool and the driver know nothing else about a source.
//!
//! A source splits a trial into parts (the games of its pairs, chunks of a position batch); the
//! [`crate::source::pool`] spreads parts over slots so no slot idles while work remains, and merges the
//! parts' measurements in part order. Adding a source is one module here and one arm in [`open`].

pub mod coefficients;
pub mod games;
pub mod pool;
pub mod positions;
pub mod simulate;

use std::path::PathBuf;

use anyhow::Result;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::config::Config;
pub use crate::spsa::driver::Trial;
use crate::vars::Variable;

/// The result of one game, from the θ+ side's point of view (side A in matches).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GameScore {
    Win,
    Draw,
    Loss,
}

impl GameScore {
    /// +1, 0 or −1: the classic tool's game value.
    pub fn value(self) -> i32 {
        match self {
            GameScore::Win => 1,
            GameScore::Draw => 0,
            GameScore::Loss => -1,
        }
    }

    /// The score for a game value's sign.
    pub fn from_value(v: i32) -> GameScore {
        match v.signum() {
            1 => GameScore::Win,
            0 => GameScore::Draw,
            _ => GameScore::Loss,
        }
    }
}

/// Text a run appends to one of its output files (a PGN game, a game-log line). The tuner writes
/// records when it applies the measurement, in one write each, and checkpoints the files'
/// lengths, so a kill never leaves a game of an unapplied iteration behind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub path: PathBuf,
    pub text: String,
}

/// An engine fault: which side, and what kind ("crash", "stall", "illegal move", ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub side: String,
    pub kind: String,
}

/// Loss sums over the positions one part evaluated at θ+ and θ− (the same positions for both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LossSums {
    pub plus: f64,
    pub minus: f64,
    /// Positions evaluated on both sides.
    pub count: u64,
    /// Positions skipped because an engine failed on them.
    pub failed: u64,
}

/// What a source measured for a trial (or one part of it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Game results from the θ+ side, in pair order: games 2j and 2j+1 are pair j.
    pub games: Vec<GameScore>,
    /// Games that ended in an engine fault.
    pub faulted_games: u32,
    pub faults: Vec<Fault>,
    /// Moves the engines searched (book moves not counted).
    pub engine_moves: u64,
    /// Wall time not spent in engine searches (restarts, `ucinewgame`, our own work), µs.
    pub overhead_us: u64,
    /// For a loss objective: the summed losses.
    pub loss: Option<LossSums>,
    pub records: Vec<Record>,
}

impl Measurement {
    /// What the update multiplies: the pair score sum in [−2B, 2B] for games, −(L+ − L−)/2 (mean
    /// losses) for positions, so θ ← θ + a_k/c_k·signal/δ moves toward the better side.
    pub fn signal(&self) -> f64 {
        match &self.loss {
            Some(l) if l.count > 0 => -(l.plus - l.minus) / (2.0 * l.count as f64),
            Some(_) => 0.0,
            None => self.games.iter().map(|g| f64::from(g.value())).sum(),
        }
    }

    /// Merge parts in part order: games concatenate (keeping pairs together), counts and loss
    /// sums add up.
    pub fn merge(parts: impl IntoIterator<Item = Measurement>) -> Measurement {
        let mut out = Measurement::default();
        for p in parts {
            out.games.extend(p.games);
            out.faulted_games += p.faulted_games;
            out.faults.extend(p.faults);
            out.engine_moves += p.engine_moves;
            out.overhead_us += p.overhead_us;
            out.records.extend(p.records);
            if let Some(l) = p.loss {
                let s = out.loss.get_or_insert_with(LossSums::default);
                s.plus += l.plus;
                s.minus += l.minus;
                s.count += l.count;
                s.failed += l.failed;
            }
        }
        out
    }

    /// Each complete pair's pentanomial bucket 0..=4 (the θ+ side's points in half-points).
    pub fn pentanomial(&self) -> impl Iterator<Item = usize> + '_ {
        self.games
            .chunks_exact(2)
            .map(|p| (p[0].value() + p[1].value() + 2) as usize)
    }

    /// The games' W/D/L and their complete pairs' pentanomial, from the θ+ side.
    pub fn tally(&self) -> crate::stats::Tally {
        crate::stats::Tally::of_games(self.games.iter().map(|g| g.value()))
    }

    /// Empty again, keeping the vectors' room (a measurement reused for the next trial).
    pub fn clear(&mut self) {
        // Named field by field: a field added to the struct must be cleared here too.
        let Measurement {
            games,
            faulted_games,
            faults,
            engine_moves,
            overhead_us,
            loss,
            records,
        } = self;
        games.clear();
        *faulted_games = 0;
        faults.clear();
        *engine_moves = 0;
        *overhead_us = 0;
        *loss = None;
        records.clear();
    }

    /// Every game ended in an engine fault (a sign the engines cannot play at all).
    pub fn all_faulty(&self) -> bool {
        !self.games.is_empty() && self.faulted_games as usize >= self.games.len()
    }
}

/// Measures trials. Implementations must be cheap to call concurrently from one thread: the pool
/// runs up to one part per slot at once.
pub trait Source: Send + Sync {
    /// How many parts a trial is split into (at least 1). The pool runs each on a free slot.
    fn parts(&self, trial: &Trial) -> usize;

    /// Measure part `part` of `trial` on slot `slot` (0-based, below the pool's slot count).
    /// A single misbehaving game or position is reported inside the measurement; an error
    /// means the run cannot go on.
    fn run_part<'a>(
        &'a self,
        slot: usize,
        trial: &'a Trial,
        part: usize,
    ) -> BoxFuture<'a, Result<Measurement>>;

    /// A source that measures a whole trial at once, synchronously and without waiting on
    /// anything (the simulator), says so here: the pool then drives it without futures, slots
    /// or timers, in the order its async loop would (see [`crate::source::pool`]). Such a source
    /// measures each trial in one part.
    fn at_once(&self) -> Option<&dyn AtOnce> {
        None
    }

    /// Files this source writes records to: a fresh start keeps them as backups, a resume
    /// truncates them to the checkpoint's lengths.
    fn outputs(&self) -> Vec<PathBuf> {
        Vec::new()
    }

    /// The header rows of those files, written once when a new run starts.
    fn headers(&self) -> Vec<Record> {
        Vec::new()
    }

    /// Release what the source holds (engine processes) before the program exits.
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// A source whose measurement of a trial is ready the moment it is asked for.
pub trait AtOnce {
    /// Measure all of `trial`: the same measurement its one part gives through
    /// [`Source::run_part`].
    fn measure(&self, trial: &Trial) -> Result<Measurement>;

    /// [`AtOnce::measure`] into `out`, whatever it held: the pool reuses one measurement per
    /// trial in flight, so a source that can fill one in place (the simulator) allocates
    /// nothing per trial. The default replaces `out`.
    fn measure_into(&self, trial: &Trial, out: &mut Measurement) -> Result<()> {
        *out = self.measure(trial)?;
        Ok(())
    }
}

/// What a run needs besides the config to open its source.
pub struct OpenRequest<'a> {
    pub config: &'a Config,
    pub vars: &'a [Variable],
    /// The run's seed (orders the opening book).
    pub seed: u64,
    /// Slots the pool will use.
    pub slots: usize,
}

/// The source a config asks for. A new source is one module and one arm here.
pub async fn open(req: &OpenRequest<'_>) -> Result<Box<dyn Source>> {
    if let Some(p) = &req.config.positions {
        if p.gradient.coefficients.is_some() {
            return Ok(Box::new(coefficients::CoefficientSource::open(req, p)?));
        }
        return Ok(Box::new(positions::open(req, p).await?));
    }
    if req.config.simulate {
        return Ok(Box::new(simulate::Simulator::new(
            req.vars,
            req.config.pair_model(),
        )));
    }
    Ok(Box::new(games::GameSource::open(req).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn games(v: &[i32]) -> Measurement {
        Measurement {
            games: v.iter().map(|&x| GameScore::from_value(x)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn merged_games_keep_pairs_and_sum_the_signal() {
        let m = Measurement::merge([games(&[1]), games(&[0]), games(&[-1, -1])]);
        assert_eq!(m.signal(), -1.0);
        assert_eq!(m.pentanomial().collect::<Vec<_>>(), vec![3, 0]);
    }

    #[test]
    fn loss_signal_points_toward_the_lower_loss() {
        let part = |p: f64, m: f64, n: u64| Measurement {
            loss: Some(LossSums {
                plus: p,
                minus: m,
                count: n,
                failed: 0,
            }),
            ..Default::default()
        };
        let m = Measurement::merge([part(1.0, 2.0, 10), part(3.0, 4.0, 10)]);
        // Mean L+ = 0.2, mean L− = 0.3: θ+ is better, the signal is positive.
        assert!((m.signal() - 0.05).abs() < 1e-12);
        assert_eq!(part(0.0, 0.0, 0).signal(), 0.0);
    }

    #[test]
    fn all_faulty_needs_every_game_faulted() {
        let mut m = games(&[-1, 1]);
        m.faulted_games = 1;
        assert!(!m.all_faulty());
        m.faulted_games = 2;
        assert!(m.all_faulty());
        assert!(!Measurement::default().all_faulty());
    }
}
