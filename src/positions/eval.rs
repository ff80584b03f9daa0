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
//!
//! Our share of the CPU: each engine of an [`Evaluator`] lives on a thread of its own
//! ([`ThreadHome`]), which writes the command and reads the answer by blocking on the pipe
//! ([`UciEngine::search_blocking`]): a write, and a `poll` and a `read` per batch of lines,
//! with no runtime wake-ups between. The FENs of a batch are written once, on the caller's
//! thread, and shared by its θ+ and θ− scorings.

use std::time::Duration;

use anyhow::{Result, bail};

use super::labelled::LabelledPositions;
use super::loss::Loss;
use crate::config::positions::PositionSearch;
use crate::engine::setup::EngineSetup;
use crate::engine::{EngineFault, EngineLog, GoCommand, Player, Score, UciEngine};
use crate::runtime::thread_home::ThreadHome;

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

/// The FENs of a list of positions, written once and shared by every scoring of the list (θ+
/// and θ− of one batch).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FenBatch {
    text: String,
    /// Position j's FEN is `text[ends[j-1]..ends[j]]` (from 0 for j = 0).
    ends: Vec<usize>,
    white_to_move: Vec<bool>,
}

impl FenBatch {
    /// The FENs of positions `indices` of `set`, in that order.
    pub fn of(set: &LabelledPositions, indices: &[usize]) -> FenBatch {
        let mut b = FenBatch {
            text: String::with_capacity(indices.len() * 64),
            ends: Vec::with_capacity(indices.len()),
            white_to_move: Vec::with_capacity(indices.len()),
        };
        for &i in indices {
            let white = set.write_fen(i, &mut b.text) == shakmaty::Color::White;
            b.ends.push(b.text.len());
            b.white_to_move.push(white);
        }
        b
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Position j's FEN and whether White is to move there.
    fn get(&self, j: usize) -> (&str, bool) {
        let from = if j == 0 { 0 } else { self.ends[j - 1] };
        (&self.text[from..self.ends[j]], self.white_to_move[j])
    }
}

/// One engine process used for evaluations, with the values it currently holds. Its scoring
/// blocks the thread while the engine searches: give it a thread of its own (as [`Evaluator`]
/// does) unless nothing else needs the thread meanwhile.
pub struct EvalEngine {
    engine: UciEngine,
    settings: EvalSettings,
    go: GoCommand,
    /// The tuned options' values last sent (engine restarts re-send them).
    current: Vec<(String, f64)>,
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
        let mut engine = UciEngine::start(setup.spec.clone()).await?;
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
        self.score_fens(&FenBatch::of(set, indices), values).await
    }

    /// Score the positions of `fens` with the tuned options at `values`.
    pub async fn score_fens(
        &mut self,
        fens: &FenBatch,
        values: &[(String, f64)],
    ) -> Result<Scores> {
        let mut out = Scores {
            scores: Vec::with_capacity(fens.len()),
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
        for j in 0..fens.len() {
            // The searches block the thread; a search gives the runtime a turn every 50 ms at
            // most, where it sees whether the caller still waits: a shutdown abandons the batch
            // there (see `Evaluator`).
            let (fen, white) = fens.get(j);
            let reply = self
                .engine
                .search_blocking(fen, &[], &self.go, self.settings.deadline)
                .await;
            match reply {
                Ok(r) => {
                    out.search_time += r.elapsed;
                    match r.score {
                        Some(s) => out.scores.push(Some(white_cp(s, white))),
                        None => {
                            out.scores.push(None);
                            out.faults.push("no score".into());
                        }
                    }
                }
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

    /// Score `fens` at θ+ and then at θ− (one SPSA trial's part).
    pub async fn score_both(
        &mut self,
        fens: &FenBatch,
        plus: &[(String, f64)],
        minus: &[(String, f64)],
    ) -> Result<(Scores, Scores)> {
        Ok((
            self.score_fens(fens, plus).await?,
            self.score_fens(fens, minus).await?,
        ))
    }

    /// Quit the process.
    pub async fn quit(&mut self) {
        self.engine.quit().await;
        self.current.clear();
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
    let (a, b) = engine
        .score_both(&FenBatch::of(set, indices), plus, minus)
        .await?;
    Ok(pair(set, indices, a, b, loss))
}

/// Sum the losses of the positions scored on both sides.
fn pair(
    set: &LabelledPositions,
    indices: &[usize],
    a: Scores,
    b: Scores,
    loss: &Loss,
) -> PairedLoss {
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
    out
}

/// N engine processes sharing evaluations, each on a thread of its own: the per-trial parts of
/// SPSA ([`Evaluator::paired_loss`] on one engine) and the whole-set scoring that K fitting,
/// validation losses and the local search need. A scoring whose caller stops waiting (Ctrl-C)
/// ends after the search under way, and that engine is quit; the next scoring restarts it.
pub struct Evaluator {
    engines: Vec<ThreadHome<EvalEngine>>,
    /// The engine log, if any, flushed after every scoring (as the arena flushes after every
    /// game), so a kill loses at most the lines of the scorings under way.
    log: Option<EngineLog>,
}

impl Evaluator {
    /// Start `n` engines at once. With an engine log in `setup.spec.log`, engine i writes it
    /// as slot i + 1.
    pub async fn start(
        setup: &EngineSetup,
        settings: EvalSettings,
        tuned: &[String],
        n: usize,
    ) -> Result<Evaluator> {
        let log = setup.spec.log.as_ref().map(|seat| seat.log.clone());
        let starts = (0..n.max(1)).map(|i| {
            let (mut setup, tuned) = (setup.clone(), tuned.to_vec());
            setup.spec.log = log.as_ref().map(|l| l.seat(i + 1));
            ThreadHome::start(
                format!("eval-{i}"),
                move || async move { EvalEngine::start(&setup, settings, &tuned).await },
                |e: &mut EvalEngine| Box::pin(e.quit()),
            )
        });
        let engines = futures::future::try_join_all(starts).await?;
        Ok(Evaluator { engines, log })
    }

    pub fn len(&self) -> usize {
        self.engines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.engines.is_empty()
    }

    /// Score `fens` at `values` on engine `slot` (modulo the engine count).
    pub async fn score(
        &self,
        slot: usize,
        fens: FenBatch,
        values: &[(String, f64)],
    ) -> Result<Scores> {
        let values = values.to_vec();
        let scores = self.engines[slot % self.engines.len()]
            .run_or_abandon(
                move |e| Box::pin(async move { e.score_fens(&fens, &values).await }),
                |e| Box::pin(e.quit()),
            )
            .await;
        self.flush_log();
        scores?
    }

    /// [`paired_loss`] on engine `slot` (modulo the engine count). The FENs are written once,
    /// here, for both sides.
    pub async fn paired_loss(
        &self,
        slot: usize,
        set: &LabelledPositions,
        indices: &[usize],
        plus: &[(String, f64)],
        minus: &[(String, f64)],
        loss: &Loss,
    ) -> Result<PairedLoss> {
        let fens = FenBatch::of(set, indices);
        let (plus, minus) = (plus.to_vec(), minus.to_vec());
        let scores = self.engines[slot % self.engines.len()]
            .run_or_abandon(
                move |e| Box::pin(async move { e.score_both(&fens, &plus, &minus).await }),
                |e| Box::pin(e.quit()),
            )
            .await;
        self.flush_log();
        let (a, b) = scores??;
        Ok(pair(set, indices, a, b, loss))
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
            let indices: Vec<usize> = (n * c / chunks..n * (c + 1) / chunks).collect();
            let fens = FenBatch::of(set, &indices);
            self.score(c, fens, values)
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

    /// Quit every engine (the threads stay until the evaluator is dropped).
    pub async fn quit_all(&self) {
        let quits = self.engines.iter().map(|h| h.run(|e| Box::pin(e.quit())));
        futures::future::join_all(quits).await;
        self.flush_log();
    }

    fn flush_log(&self) {
        if let Some(log) = &self.log {
            log.flush();
        }
    }
}
