//! The async loop: hands out iterations, keeps θ, applies outcomes as they arrive, writes the θ
//! log and checkpoints, and stops cleanly when asked. It knows nothing about chess: game pairs
//! come from a [`MatchSource`].
//!
//! With Concurrency = C, up to C pairs are in flight; each is played with θ as it was when it
//! was handed out, and its update is applied to θ as it is when it finishes, as the classic tool
//! does. A checkpoint holds θ after the applied updates only, so an interrupted run loses at most
//! the pairs that were in flight; a resume hands out their iteration numbers again.

pub mod checkpoint;
pub mod log;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::source::{MatchSource, PairOutcome, PairTask};
use crate::spsa::{Schedule, Spsa};
use crate::vars::Variable;
pub use checkpoint::{Counts, RunState};
use log::ThetaLog;

/// What to do when the log or checkpoint of an earlier run is found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StartMode {
    /// Refuse to start and say how to resume or start fresh.
    #[default]
    New,
    /// Continue from the checkpoint.
    Resume,
    /// Move the old log and checkpoint aside (`.bak`) and start over.
    Fresh,
}

/// Where a run keeps its files and how often it saves.
#[derive(Clone, Debug)]
pub struct RunFiles {
    pub log: PathBuf,
    pub checkpoint: PathBuf,
    pub checkpoint_interval: Duration,
}

/// A refusal that is the user's to fix (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartRefused(pub String);

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// All planned iterations were applied.
    Finished,
    /// Stopped on request (Ctrl-C / SIGTERM) with a final checkpoint.
    Interrupted,
}

/// Told about every applied update, so progress displays can follow the run. Implementations
/// must be cheap: a simulation calls this a million times a second.
pub trait Observer {
    fn on_update(&mut self, update: &Update<'_>);
}

/// One applied update.
pub struct Update<'a> {
    pub applied: u64,
    pub total: u64,
    /// The iteration k whose pair produced it.
    pub iteration: u64,
    pub theta: &'a [f64],
    pub outcome: &'a PairOutcome,
    pub counts: &'a Counts,
}

/// An observer that does nothing.
pub struct Quiet;

impl Observer for Quiet {
    fn on_update(&mut self, _: &Update<'_>) {}
}

/// A run ready to go: state loaded or created, log open.
pub struct Tuner {
    vars: Vec<Variable>,
    spsa: Spsa,
    state: RunState,
    rng: ChaCha8Rng,
    log: ThetaLog,
    files: RunFiles,
    concurrency: usize,
}

impl Tuner {
    /// Set up a run: a new one (refusing to overwrite an earlier run's files unless `Fresh`), or
    /// a resumed one from its checkpoint. `seed` is used for new runs; a resume keeps its own.
    /// The caller settles the seed (it also orders the opening book).
    pub fn prepare(
        vars: Vec<Variable>,
        schedule: Schedule,
        files: RunFiles,
        concurrency: usize,
        seed: u64,
        mode: StartMode,
    ) -> Result<Tuner> {
        let found = files.checkpoint.exists() || files.log.exists();
        match mode {
            StartMode::Resume => return Tuner::resume(vars, schedule, files, concurrency),
            StartMode::New if found => return Err(refusal(&files).into()),
            StartMode::Fresh => {
                for path in [&files.log, &files.checkpoint] {
                    if path.exists() {
                        let bak = with_suffix(path, ".bak");
                        std::fs::rename(path, &bak).with_context(|| {
                            format!("{}: cannot move aside to {}", path.display(), bak.display())
                        })?;
                    }
                }
            }
            StartMode::New => {}
        }
        let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
        let log = ThetaLog::create(&files.log, &names)?;
        let theta: Vec<f64> = vars.iter().map(|v| v.start).collect();
        let state = RunState {
            version: checkpoint::VERSION,
            seed: seed.to_string(),
            applied: 0,
            finished: false,
            start: theta.clone(),
            theta,
            rng_word_pos: "0".into(),
            log_bytes: 0,
            iterations: schedule.iterations,
            a: schedule.a,
            alpha: schedule.alpha,
            gamma: schedule.gamma,
            counts: Counts::default(),
        };
        let mut tuner = Tuner {
            spsa: Spsa::new(&vars, schedule),
            vars,
            state,
            rng: ChaCha8Rng::seed_from_u64(seed),
            log,
            files,
            concurrency,
        };
        tuner.save()?;
        Ok(tuner)
    }

    fn resume(
        vars: Vec<Variable>,
        schedule: Schedule,
        files: RunFiles,
        concurrency: usize,
    ) -> Result<Tuner> {
        if !files.checkpoint.exists() {
            return Err(StartRefused(format!(
                "{}: no checkpoint to resume from; start the run without --resume",
                files.checkpoint.display()
            ))
            .into());
        }
        let ck = checkpoint::read(&files.checkpoint)?;
        check_same_run(&ck, &vars, &schedule)?;
        let state = ck.state;
        let mut rng = ChaCha8Rng::seed_from_u64(state.seed()?);
        rng.set_word_pos(state.rng_word_pos()?);
        let log = ThetaLog::resume(&files.log, state.log_bytes)?;
        Ok(Tuner {
            spsa: Spsa::new(&vars, schedule),
            vars,
            state,
            rng,
            log,
            files,
            concurrency,
        })
    }

    pub fn state(&self) -> &RunState {
        &self.state
    }

    pub fn vars(&self) -> &[Variable] {
        &self.vars
    }

    /// Flush the log and write a checkpoint.
    pub fn save(&mut self) -> Result<()> {
        self.state.log_bytes = self.log.flush()?;
        self.state.rng_word_pos = self.rng.get_word_pos().to_string();
        checkpoint::write(&self.files.checkpoint, &self.state, &self.vars)
    }

    /// Play until all iterations are applied or `shutdown` resolves. A source error ends the
    /// run with a final checkpoint and is returned.
    pub async fn run<M: MatchSource>(
        &mut self,
        source: &M,
        shutdown: impl Future<Output = ()>,
        observer: &mut dyn Observer,
    ) -> Result<Ending> {
        let total = self.state.iterations;
        let mut next_k = self.state.applied + 1;
        let mut free_slots: Vec<usize> = (0..self.concurrency).rev().collect();
        let mut in_flight = FuturesUnordered::new();
        let mut last_save = Instant::now();
        tokio::pin!(shutdown);
        let ending = loop {
            while next_k <= total {
                let Some(slot) = free_slots.pop() else { break };
                let p = self.spsa.perturb(&self.state.theta, next_k, &mut self.rng);
                let task = PairTask {
                    iteration: next_k,
                    slot,
                    plus: p.plus,
                    minus: p.minus,
                    opening: next_k - 1,
                    seed: self.rng.next_u64(),
                };
                let (k, delta) = (p.iteration, p.delta);
                in_flight.push(async move { (k, delta, slot, source.play(task).await) });
                next_k += 1;
            }
            if in_flight.is_empty() {
                break Ending::Finished;
            }
            let (k, delta, slot, result) = tokio::select! {
                biased;
                _ = &mut shutdown => break Ending::Interrupted,
                Some(done) = in_flight.next() => done,
            };
            free_slots.push(slot);
            let outcome = match result {
                Ok(outcome) => outcome,
                Err(e) => {
                    drop(in_flight);
                    self.save()?;
                    return Err(e.context(format!("iteration {k}")));
                }
            };
            self.apply(k, &delta, &outcome)?;
            observer.on_update(&Update {
                applied: self.state.applied,
                total,
                iteration: k,
                theta: &self.state.theta,
                outcome: &outcome,
                counts: &self.state.counts,
            });
            if last_save.elapsed() >= self.files.checkpoint_interval {
                self.save()?;
                last_save = Instant::now();
            }
            // A simulated pair is ready at once, so this loop would never give the runtime a
            // chance to poll its drivers (signals, timers) on a single-threaded runtime.
            if self.state.applied.is_multiple_of(256) {
                tokio::task::yield_now().await;
            }
        };
        drop(in_flight);
        if ending == Ending::Finished {
            self.state.finished = true;
        }
        self.save()?;
        Ok(ending)
    }

    fn apply(&mut self, k: u64, delta: &[f64], outcome: &PairOutcome) -> Result<()> {
        self.spsa
            .apply(&mut self.state.theta, k, delta, f64::from(outcome.score()));
        self.state.applied += 1;
        let c = &mut self.state.counts;
        c.pairs += 1;
        for g in outcome.games {
            match g.value() {
                1 => c.wins += 1,
                0 => c.draws += 1,
                _ => c.losses += 1,
            }
        }
        c.pentanomial[outcome.pentanomial_bucket()] += 1;
        for f in &outcome.faults {
            *c.faults.entry(f.clone()).or_default() += 1;
        }
        self.log.append(self.state.applied, &self.state.theta)
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

fn refusal(files: &RunFiles) -> StartRefused {
    let what = match checkpoint::read(&files.checkpoint) {
        Ok(ck) if ck.state.finished => format!(
            "{} holds a finished run ({} iterations)",
            files.checkpoint.display(),
            ck.state.applied
        ),
        Ok(ck) => format!(
            "{} holds an earlier run, stopped after {} of {} iterations",
            files.checkpoint.display(),
            ck.state.applied,
            ck.state.iterations
        ),
        Err(_) if files.checkpoint.exists() => {
            format!("{} exists from an earlier run", files.checkpoint.display())
        }
        Err(_) => format!("{} exists from an earlier run", files.log.display()),
    };
    StartRefused(format!(
        "{what}; add --resume to continue it, or --fresh to start over (the old log and checkpoint are kept as .bak)"
    ))
}

/// A checkpoint only continues the run it came from: same variables and schedule.
fn check_same_run(
    ck: &checkpoint::Checkpoint,
    vars: &[Variable],
    schedule: &Schedule,
) -> Result<()> {
    let path = ck.path.display();
    let names = |v: &[Variable]| v.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    if names(&ck.vars) != names(vars) {
        bail!(
            "{path}: the checkpoint's variables {:?} differ from the variables file's {:?}; use --fresh to start a new run",
            names(&ck.vars),
            names(vars)
        );
    }
    for (a, b) in ck.vars.iter().zip(vars) {
        if (a.min, a.max, a.c_end, a.r_end) != (b.min, b.max, b.c_end, b.r_end) {
            bail!(
                "{path}: variable `{}` changed since the checkpoint (min, max, c_end, R_end were {}, {}, {}, {}; now {}, {}, {}, {}); use --fresh to start a new run",
                a.name,
                a.min,
                a.max,
                a.c_end,
                a.r_end,
                b.min,
                b.max,
                b.c_end,
                b.r_end
            );
        }
    }
    if ck.state.schedule() != *schedule {
        bail!(
            "{path}: the schedule changed since the checkpoint (was {:?}, now {:?}); use --fresh to start a new run",
            ck.state.schedule(),
            schedule
        );
    }
    Ok(())
}
