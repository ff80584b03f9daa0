//! A scripted in-process [`Player`] for tests: replies, delays and faults in a fixed order.
//! Public so that other modules' tests (the arena's) can use it too.

use std::collections::VecDeque;
use std::time::Duration;

use crate::engine::{BestMove, EngineFault, GoCommand, Player, Score, SearchReply};

/// One scripted answer to `search`.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Answer `best` with `score` after `delay` (on tokio's clock). A delay beyond the deadline
    /// behaves like a real engine that ignores its limit: the player waits until the deadline
    /// and returns [`EngineFault::Stalled`] with `answered_stop: true`.
    Reply {
        best: BestMove,
        score: Option<Score>,
        delay: Duration,
    },
    /// Fail with this fault at once.
    Fault(EngineFault),
}

impl Step {
    /// A move with no score, answered at once.
    pub fn mv(token: &str) -> Step {
        Step::Reply {
            best: BestMove::Move(token.to_string()),
            score: None,
            delay: Duration::ZERO,
        }
    }

    /// A move with a centipawn score (the mover's view), answered at once.
    pub fn cp(token: &str, cp: i32) -> Step {
        Step::Reply {
            best: BestMove::Move(token.to_string()),
            score: Some(Score::Cp(cp)),
            delay: Duration::ZERO,
        }
    }

    /// A move with a mate score, answered at once.
    pub fn mate(token: &str, moves: i32) -> Step {
        Step::Reply {
            best: BestMove::Move(token.to_string()),
            score: Some(Score::Mate(moves)),
            delay: Duration::ZERO,
        }
    }

    /// A move answered after `ms` milliseconds.
    pub fn slow(token: &str, ms: u64) -> Step {
        Step::Reply {
            best: BestMove::Move(token.to_string()),
            score: None,
            delay: Duration::from_millis(ms),
        }
    }

    /// `bestmove (none)`.
    pub fn no_move() -> Step {
        Step::Reply {
            best: BestMove::NoMove,
            score: None,
            delay: Duration::ZERO,
        }
    }
}

/// One `search` call as the fake saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchCall {
    pub start_fen: String,
    pub moves: Vec<String>,
    pub go: GoCommand,
    pub deadline: Duration,
}

/// A player that follows a script. When the script runs out it reports
/// [`EngineFault::Disconnected`], so a test that under-scripts fails loudly.
#[derive(Clone, Debug)]
pub struct ScriptedPlayer {
    name: String,
    script: VecDeque<Step>,
    /// Fault to return from `new_game`, if any.
    pub new_game_fault: Option<EngineFault>,
    pub new_games: usize,
    pub calls: Vec<SearchCall>,
}

impl ScriptedPlayer {
    pub fn new(name: &str, script: impl IntoIterator<Item = Step>) -> ScriptedPlayer {
        ScriptedPlayer {
            name: name.to_string(),
            script: script.into_iter().collect(),
            new_game_fault: None,
            new_games: 0,
            calls: Vec::new(),
        }
    }

    /// A player whose script is plain UCI moves answered at once without scores.
    pub fn moves(name: &str, moves: &[&str]) -> ScriptedPlayer {
        ScriptedPlayer::new(name, moves.iter().map(|m| Step::mv(m)))
    }

    /// Steps not used yet.
    pub fn remaining(&self) -> usize {
        self.script.len()
    }
}

impl Player for ScriptedPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    async fn new_game(&mut self) -> Result<(), EngineFault> {
        self.new_games += 1;
        match &self.new_game_fault {
            Some(f) => Err(f.clone()),
            None => Ok(()),
        }
    }

    async fn search(
        &mut self,
        start_fen: &str,
        moves: &[String],
        go: &GoCommand,
        deadline: Duration,
    ) -> Result<SearchReply, EngineFault> {
        self.calls.push(SearchCall {
            start_fen: start_fen.to_string(),
            moves: moves.to_vec(),
            go: go.clone(),
            deadline,
        });
        match self.script.pop_front() {
            None => Err(EngineFault::Disconnected("script exhausted".into())),
            Some(Step::Fault(f)) => Err(f),
            Some(Step::Reply { best, score, delay }) => {
                if delay > deadline {
                    tokio::time::sleep(deadline).await;
                    return Err(EngineFault::Stalled {
                        waited: deadline,
                        answered_stop: true,
                    });
                }
                tokio::time::sleep(delay).await;
                Ok(SearchReply {
                    best,
                    score,
                    depth: score.map(|_| 10),
                    nodes: None,
                    elapsed: delay,
                })
            }
        }
    }
}
