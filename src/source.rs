//! The seam between the tuner and whatever plays its game pairs: the simulator or real engines.

use std::future::Future;

/// The result of one game, from the θ+ side's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
}

/// One SPSA iteration's game pair, as handed to a [`MatchSource`].
#[derive(Clone, Debug, PartialEq)]
pub struct PairTask {
    /// The 1-based SPSA iteration k.
    pub iteration: u64,
    /// Which concurrency slot (0-based) plays it; real sources keep one engine pair per slot.
    pub slot: usize,
    /// Values for the θ+ side (Engine1), one per variable, already clipped to bounds.
    pub plus: Vec<f64>,
    /// Values for the θ− side (Engine2).
    pub minus: Vec<f64>,
    /// Which opening to play: an index into the source's book order (the tuner knows no chess).
    pub opening: u64,
    /// A random number the tuner drew for this task. Sources use it for their own randomness
    /// (simulated games, stochastic rounding) so that a seeded run is reproducible.
    pub seed: u64,
}

/// What a game pair produced.
#[derive(Clone, Debug, PartialEq)]
pub struct PairOutcome {
    /// Both games' results from the θ+ side.
    pub games: [GameScore; 2],
    /// Engine faults seen during the pair, by kind (empty for the simulator).
    pub faults: Vec<String>,
}

impl PairOutcome {
    /// The pair's result in [−2, 2] from the θ+ side: the `match` of the update rule.
    pub fn score(&self) -> i32 {
        self.games.iter().map(|g| g.value()).sum()
    }

    /// Pentanomial bucket 0..=4: the θ+ side's points in half-points (0 = lost both, 4 = won both).
    pub fn pentanomial_bucket(&self) -> usize {
        (self.score() + 2) as usize
    }
}

/// Plays game pairs for the tuner. Errors are fatal for the run (for example engines that keep
/// failing); a single misbehaving game is reported inside the outcome, not as an error.
pub trait MatchSource: Sync {
    fn play(&self, task: PairTask) -> impl Future<Output = anyhow::Result<PairOutcome>> + Send;
}
