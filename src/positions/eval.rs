//! Scoring labelled positions through any UCI engine.
//!
//! Per evaluation: `position fen …` + `go depth D` (or `go nodes N`) in one write; the score is the
//! last one the engine reported for the finished search (multipv 1), turned to White's view.
//! Mate scores become ±[`SCORE_BOUND_CP`] and centipawn scores are clipped to the same bound
//! (the losses are flat out there: σ(2000) = 0.99999). Option values are sent by `setoption` +
//! `isready` only when they change, and every run over a list of positions starts with
//! `ucinewgame`, so a score depends only on (the positions in the list, the values), not on what
//! the process searched before: a trial gives the same losses whichever slot measures it.
//!
//! A position the engine fails on (crash, hang, `bestmove` without a score) is counted and
//! skipped; the engine is restarted when the fault left it unusable. Only an engine that cannot
//! be restarted ends the run.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::time::Instant;

use super::labelled::LabelledPositions;
use super::loss::Loss;
use crate::arena::EngineSetup;
use crate::config::positions::PositionSearch;
use crate::engine::{EngineFault, GoCommand, Player, Score, UciEngine};

/// Where mate scores land and where centipawn scores are clipped, in centipawns.
pub const SCORE_BOUND_CP: f64 = 2000.0;

/// A score from the side to move's view as centipawns from White's view, clipped to
/// ±[`SCORE_BOUND_CP`]; a mate (or being mated) is the bound itself.
pub fn white_cp(score: Score, white_to_move: bool) -> f64 {
    let mover = match score {
        Score::Cp(cp) => f64::from(cp).clamp(-SCORE_BOUND_CP, SCORE_BOUND_CP),
        Score::Mate(m) if m > 0 => SCORE_BOUND_CP,
        Score::Mate(_) => -SCORE_BOUND_CP,
    };
    if white_to_move { mover } else { -mover }
}

/// How each evaluation searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalSettings {
    pub search: PositionSearch,
    /// A search that has not answered after this long is stopped and counted as a failure.
    pub deadline: Duration,
}

impl EvalSettings {
    fn go(&self) -> GoCommand {
        match self.search {
            PositionSearch::Depth(d) => GoCommand {
                depth: Some(d),
                ..GoCommand::default()
            },
            PositionSearch::Nodes(n) => GoCommand {
                nodes: Some(n),
                ..GoCommand::default()
            },
        }
    }
}

/// Scores of a list of positions (White's view, centipawns; `None` where the engine failed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scores {
    pub scores: Vec<Option<f64>>,
    /// The failures, by kind: "crash", "stall", "no score".
    pub faults: Vec<String>,
    /// Wall time from `go` to `bestmove`, summed (the engine's share of the work).
    pub search_time: Duration,
}

/// One engine process used for evaluations, with the values it currently holds.
pub struct EvalEngine {
    engine: UciEngine,
    settings: EvalSettings,
    go: GoCommand,
    /// The tuned options' values last sent (engine restarts re-send them).
    current: Vec<(String, f64)>,
    fen: String,
}

impl EvalEngine {
    /// Start the engine, set its fixed options, and check that `tuned` names options it has.
    /// With a node limit, probe that the engine honours `go nodes` (Toga II does not: it searches
    /// without end), so a config that cannot work fails here with the fix in the message.
    pub async fn start(
        setup: &EngineSetup,
        settings: EvalSettings,
        tuned: &[String],
    ) -> Result<Self> {
        let name = &setup.spec.name;
        let mut engine = UciEngine::start(setup.spec.clone())
            .await
            .with_context(|| {
                format!(
                    "cannot start engine `{name}` ({})",
                    setup.spec.command.display()
                )
            })?;
        engine
            .configure(setup.fixed.iter().map(|(n, v)| (n.as_str(), v)))
            .await?;
        let unknown: Vec<&String> = tuned
            .iter()
            .filter(|n| {
                !engine
                    .options()
                    .iter()
                    .any(|o| o.name.eq_ignore_ascii_case(n))
            })
            .collect();
        if !unknown.is_empty() {
            bail!("engine `{name}` has no option {unknown:?} (the variables file names them)");
        }
        let mut me = EvalEngine {
            go: settings.go(),
            engine,
            settings,
            current: Vec::new(),
            fen: String::with_capacity(100),
        };
        if let PositionSearch::Nodes(n) = settings.search {
            me.check_node_limit(n).await?;
        }
        Ok(me)
    }

    async fn check_node_limit(&mut self, limit: u64) -> Result<()> {
        let name = self.engine.spec().name.clone();
        let start = crate::game::START_FEN;
        // A depth-limited engine answers this within a second; give it twice the evaluation
        // deadline at most.
        let wait = self.settings.deadline.min(Duration::from_secs(5));
        let reply = self.engine.search(start, &[], &self.go, wait).await;
        let ignored = match &reply {
            Ok(r) => r.nodes.is_some_and(|n| n > 20 * limit + 10_000),
            Err(EngineFault::Stalled { .. }) => true,
            Err(_) => false,
        };
        if ignored {
            bail!(
                "engine `{name}` ignores `go nodes {limit}` (it searched far past the limit): \
                 use `depth = N` in [positions] for this engine"
            );
        }
        if let Err(f) = reply {
            self.recover(&f).await?;
        }
        Ok(())
    }

    /// Send the tuned values that differ from what the engine holds, then `isready`.
    async fn set_values(&mut self, values: &[(String, f64)]) -> Result<(), EngineFault> {
        if self.current == values {
            return Ok(());
        }
        for (name, v) in values {
            match self.engine.set_option(name, *v).await {
                Ok(()) => {}
                Err(crate::engine::EngineError::Fault(f)) => return Err(f),
                // Names were checked at start; a value out of range is rounded/clipped by the
                // engine module's rules, so an option error here is a broken engine.
                Err(crate::engine::EngineError::Option(e)) => {
                    return Err(EngineFault::Disconnected(e.to_string()));
                }
            }
        }
        self.engine.is_ready().await?;
        self.current = values.to_vec();
        Ok(())
    }

    /// Restart after a fault that left the process unusable; an error only if it cannot be
    /// restarted (twice).
    async fn recover(&mut self, fault: &EngineFault) -> Result<()> {
        if !fault.needs_restart() && self.engine.is_running() {
            return Ok(());
        }
        let mut last = None;
        for _ in 0..2 {
            match self.engine.restart().await {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
        }
        let e = last.expect("two attempts");
        bail!(
            "engine `{}` cannot be restarted: {e}",
            self.engine.spec().name
        )
    }

    /// Score the positions `indices` of `set` with the tuned options at `values`.
    pub async fn score(
        &mut self,
        set: &LabelledPositions,
        indices: &[usize],
        values: &[(String, f64)],
    ) -> Result<Scores> {
        let mut out = Scores {
            scores: Vec::with_capacity(indices.len()),
            ..Scores::default()
        };
        // Values and a cleared engine state; a failure here is retried after a restart once.
        let mut prepared = false;
        for _ in 0..2 {
            let r = async {
                self.set_values(values).await?;
                self.engine.new_game().await
            }
            .await;
            match r {
                Ok(()) => {
                    prepared = true;
                    break;
                }
                Err(f) => {
                    self.current.clear();
                    self.recover(&f).await?;
                }
            }
        }
        if !prepared {
            bail!(
                "engine `{}` fails after every restart",
                self.engine.spec().name
            );
        }
        for &i in indices {
            self.fen.clear();
            let white = set.write_fen(i, &mut self.fen) == shakmaty::Color::White;
            let started = Instant::now();
            let reply = self
                .engine
                .search(&self.fen, &[], &self.go, self.settings.deadline)
                .await;
            out.search_time += started.elapsed();
            match reply {
                Ok(r) => match r.score {
                    Some(s) => out.scores.push(Some(white_cp(s, white))),
                    None => {
                        out.scores.push(None);
                        out.faults.push("no score".into());
                    }
                },
                Err(f) => {
                    out.scores.push(None);
                    out.faults.push(fault_kind(&f).into());
                    self.recover(&f).await?;
                    if self.current.is_empty() {
                        self.set_values(values).await.ok();
                    }
                }
            }
        }
        Ok(out)
    }

    /// Quit the process.
    pub async fn quit(&mut self) {
        self.engine.quit().await;
    }

    /// The OS process id (for CPU accounting in the benchmark).
    pub fn pid(&self) -> Option<u32> {
        self.engine.pid()
    }
}

fn fault_kind(f: &EngineFault) -> &'static str {
    match f {
        EngineFault::Disconnected(_) => "crash",
        EngineFault::Stalled { .. } => "stall",
        EngineFault::Startup(_) => "start",
    }
}

/// Loss sums of one batch at θ+ and θ− (the same positions; a position that failed on either
/// side is left out of both, so the difference stays paired).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairedLoss {
    pub plus: f64,
    pub minus: f64,
    /// Positions scored on both sides.
    pub count: u64,
    /// Positions skipped because the engine failed on either side.
    pub failed: u64,
    pub faults: Vec<String>,
}

/// The per-trial work of SPSA on a loss: score `indices` at θ+ and at θ− on one engine and sum
/// the losses. The signal is −(L+ − L−)/2 with L± = the sums / count.
pub async fn paired_loss(
    engine: &mut EvalEngine,
    set: &LabelledPositions,
    indices: &[usize],
    plus: &[(String, f64)],
    minus: &[(String, f64)],
    loss: &Loss,
) -> Result<PairedLoss> {
    let a = engine.score(set, indices, plus).await?;
    let b = engine.score(set, indices, minus).await?;
    let mut out = PairedLoss::default();
    for (j, &i) in indices.iter().enumerate() {
        match (a.scores[j], b.scores[j]) {
            (Some(qa), Some(qb)) => {
                let o = set.outcome(i);
                out.plus += loss.point(o, qa);
                out.minus += loss.point(o, qb);
                out.count += 1;
            }
            _ => out.failed += 1,
        }
    }
    out.faults = a.faults;
    out.faults.extend(b.faults);
    Ok(out)
}

/// N engine processes sharing evaluations: the whole-set scoring that K fitting, validation
/// losses and the local search need.
pub struct Evaluator {
    engines: Vec<tokio::sync::Mutex<EvalEngine>>,
}

impl Evaluator {
    /// Start `n` engines at once.
    pub async fn start(
        setup: &EngineSetup,
        settings: EvalSettings,
        tuned: &[String],
        n: usize,
    ) -> Result<Evaluator> {
        let starts = (0..n.max(1)).map(|_| EvalEngine::start(setup, settings, tuned));
        let engines = futures::future::try_join_all(starts).await?;
        Ok(Evaluator {
            engines: engines.into_iter().map(tokio::sync::Mutex::new).collect(),
        })
    }

    pub fn len(&self) -> usize {
        self.engines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.engines.is_empty()
    }

    /// Engine `slot` (for a source that runs one part per slot).
    pub fn engine(&self, slot: usize) -> &tokio::sync::Mutex<EvalEngine> {
        &self.engines[slot % self.engines.len()]
    }

    /// Score every position of `set` at `values`, split into one contiguous chunk per engine.
    /// The chunking depends only on the set's size and the engine count, so the scores are
    /// reproducible.
    pub async fn score_all(
        &self,
        set: &LabelledPositions,
        values: &[(String, f64)],
    ) -> Result<Scores> {
        let n = set.len();
        let chunks = self.engines.len();
        let parts = (0..chunks).map(|c| {
            let lo = n * c / chunks;
            let hi = n * (c + 1) / chunks;
            let indices: Vec<usize> = (lo..hi).collect();
            async move {
                let mut e = self.engines[c].lock().await;
                e.score(set, &indices, values).await
            }
        });
        let results = futures::future::try_join_all(parts).await?;
        let mut out = Scores::default();
        for r in results {
            out.scores.extend(r.scores);
            out.faults.extend(r.faults);
            out.search_time += r.search_time;
        }
        Ok(out)
    }

    /// Mean loss of `set` at `values` over the positions scored, and the scores.
    pub async fn mean_loss(
        &self,
        set: &LabelledPositions,
        values: &[(String, f64)],
        loss: &Loss,
    ) -> Result<(f64, Scores)> {
        let s = self.score_all(set, values).await?;
        let mean = loss.mean(
            s.scores
                .iter()
                .enumerate()
                .filter_map(|(i, q)| q.map(|q| (set.outcome(i), q))),
        );
        Ok((mean, s))
    }

    /// Quit every engine.
    pub async fn quit_all(&self) {
        let quits = self.engines.iter().map(|e| async move {
            e.lock().await.quit().await;
        });
        futures::future::join_all(quits).await;
    }
}
