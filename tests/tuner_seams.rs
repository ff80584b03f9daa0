//! The tuner driven by scripted sources: which iterations a resume plays after a kill, which
//! records survive it, and what the fault-streak stop counts. A "kill" here drops the running
//! tuner mid-flight without its final checkpoint, as kill -9 does to the process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use spsa::runtime::shutdown::Shutdown;
use spsa::source::{Fault, GameScore, Measurement, Record, Source, Trial};
use spsa::spsa::Schedule;
use spsa::spsa::driver::Rounding;
use spsa::tuner::{Quiet, RunFiles, RunPlan, StartMode, Tuner};
use spsa::vars::{self, Variable};

const N: u64 = 12;

/// Plays iteration k as two "games" with results fixed by k; iterations in `stall` never
/// finish; every game leaves a record naming its iteration in `pgn`; `faulty` iterations end
/// every game in a fault. Remembers which iterations it was asked for, in order.
struct Scripted {
    stall: Vec<u64>,
    faulty: bool,
    pgn: PathBuf,
    asked: Mutex<Vec<u64>>,
}

impl Scripted {
    fn new(pgn: &Path, stall: &[u64]) -> Scripted {
        Scripted {
            stall: stall.to_vec(),
            faulty: false,
            pgn: pgn.to_path_buf(),
            asked: Mutex::default(),
        }
    }
}

impl Source for Scripted {
    fn parts(&self, trial: &Trial) -> usize {
        2 * trial.pairs as usize
    }

    fn run_part<'a>(
        &'a self,
        _slot: usize,
        trial: &'a Trial,
        part: usize,
    ) -> BoxFuture<'a, anyhow::Result<Measurement>> {
        Box::pin(async move {
            let k = trial.iteration;
            if part == 0 {
                self.asked.lock().unwrap().push(k);
            }
            if self.stall.contains(&k) {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(Duration::from_millis(1 + k % 3)).await;
            Ok(Measurement {
                games: vec![GameScore::from_value(((k + part as u64) % 3) as i32 - 1)],
                faulted_games: u32::from(self.faulty),
                faults: if self.faulty {
                    vec![Fault {
                        side: "Engine2".into(),
                        kind: "crash".into(),
                    }]
                } else {
                    Vec::new()
                },
                records: vec![Record {
                    path: self.pgn.clone(),
                    text: format!("game {k}.{}\n", part + 1),
                }],
                ..Default::default()
            })
        })
    }

    fn outputs(&self) -> Vec<PathBuf> {
        vec![self.pgn.clone()]
    }
}

fn vars() -> Vec<Variable> {
    vars::parse(
        "a,10,-100,100,5,0.01,1\nb,-20,-100,100,5,0.01,1\n",
        Path::new("t.var"),
    )
    .unwrap()
}

fn plan(concurrency: usize) -> RunPlan {
    RunPlan {
        schedule: Schedule {
            iterations: N,
            a: 2.0,
            alpha: 0.602,
            gamma: 0.101,
        },
        rounding: Rounding::Continuous,
        pairs: 1,
        seed: 9,
        concurrency,
        max_faulty_trials: 5,
    }
}

fn files(dir: &Path, source: &Scripted, every: Duration) -> RunFiles {
    RunFiles {
        log: dir.join("t.log"),
        checkpoint: dir.join("t.ck"),
        checkpoint_interval: every,
        outputs: source.outputs(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// When [`run_then_kill`] drops a run.
enum KillAt {
    /// Once the source was asked for this many iterations and a checkpoint is on disk (however
    /// long a loaded machine takes to get there; a fixed time could see fewer).
    Asked(usize),
    /// At the first look after a game record is in the source's PGN (however long a loaded
    /// machine takes to get there).
    FirstRecord,
}

/// Run until `at`, then drop everything without a final checkpoint.
fn run_then_kill(dir: &Path, source: &Scripted, every: Duration, at: KillAt) {
    let rt = runtime();
    let mut tuner =
        Tuner::prepare(vars(), plan(3), files(dir, source, every), StartMode::New).unwrap();
    rt.block_on(async {
        let (shutdown, mut quiet) = (Shutdown::new(), Quiet);
        let run = tuner.run(source, &shutdown, &mut quiet);
        let kill = async {
            match at {
                KillAt::Asked(n) => {
                    while source.asked.lock().unwrap().len() < n || !dir.join("t.ck").exists() {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                }
                KillAt::FirstRecord => {
                    while !std::fs::read_to_string(&source.pgn).is_ok_and(|t| !t.is_empty()) {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                }
            }
        };
        // Looked at first: the run is dropped as soon as the moment has come.
        tokio::select! {
            biased;
            () = kill => {}
            _ = run => {}
        }
    });
}

fn resume_to_end(dir: &Path, source: &Scripted) -> Tuner {
    let rt = runtime();
    let mut tuner = Tuner::prepare(
        vars(),
        plan(3),
        files(dir, source, Duration::ZERO),
        StartMode::Resume,
    )
    .unwrap();
    rt.block_on(tuner.run(source, &Shutdown::new(), &mut Quiet))
        .unwrap();
    tuner
}

fn game_lines(pgn: &Path) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    for line in std::fs::read_to_string(pgn).unwrap().lines() {
        *seen.entry(line.to_string()).or_default() += 1;
    }
    seen
}

#[test]
fn resume_after_a_kill_plays_exactly_the_missing_iterations() {
    // Iteration 1 never finishes while 2, 3, … do (Concurrency 3): the old count-based
    // checkpoint replayed a finished iteration and never played 1.
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("g.pgn");
    let first = Scripted::new(&pgn, &[1]);
    run_then_kill(dir.path(), &first, Duration::ZERO, KillAt::Asked(4));
    let ck = spsa::tuner::checkpoint::read(&dir.path().join("t.ck")).unwrap();
    let saved = ck.state.driver_state();
    assert_eq!(saved.missing.first(), Some(&1), "{:?}", saved.missing);
    let played_before: Vec<u64> = first.asked.lock().unwrap().clone();
    assert!(played_before.len() >= 4, "{played_before:?}");

    let second = Scripted::new(&pgn, &[]);
    let tuner = resume_to_end(dir.path(), &second);
    let mut replayed = second.asked.lock().unwrap().clone();
    assert_eq!(replayed[0], 1, "the missing iteration first: {replayed:?}");
    // Exactly the iterations the checkpoint did not hold are played: its missing ones (in
    // flight at the kill) and those never handed out; none it held is played again.
    replayed.sort_unstable();
    let expected: Vec<u64> = saved
        .missing
        .iter()
        .copied()
        .chain(saved.next_fresh..=N)
        .collect();
    assert_eq!(replayed, expected);
    for k in 1..=N {
        assert!(
            saved.is_applied(k) != replayed.contains(&k),
            "iteration {k} applied once"
        );
    }
    assert!(tuner.state().finished);
    assert_eq!(tuner.state().applied, N);
    let log = crate::run_common::log_text(&dir.path().join("t.log"));
    assert_eq!(log.lines().count() as u64, N + 1, "one row per iteration");
    for (line, n) in game_lines(&pgn) {
        assert_eq!(n, 1, "{line} written {n} times");
    }
    assert_eq!(game_lines(&pgn).len() as u64, 2 * N);
}

#[test]
fn records_of_iterations_the_checkpoint_does_not_hold_never_survive_a_kill() {
    // Checkpoints far apart: the kill lands after games were written but before any
    // checkpoint held them. The resume cuts them off and plays those iterations again.
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("g.pgn");
    let first = Scripted::new(&pgn, &[]);
    run_then_kill(
        dir.path(),
        &first,
        Duration::from_secs(3600),
        KillAt::FirstRecord,
    );
    assert!(
        !game_lines(&pgn).is_empty(),
        "games were written before the kill"
    );
    let second = Scripted::new(&pgn, &[]);
    let tuner = resume_to_end(dir.path(), &second);
    let lines = game_lines(&pgn);
    assert_eq!(lines.len() as u64, 2 * N);
    assert!(lines.values().all(|&n| n == 1), "{lines:?}");
    assert_eq!(tuner.state().applied, N);
    let log = crate::run_common::log_text(&dir.path().join("t.log"));
    assert_eq!(log.lines().count() as u64, N + 1, "one θ row per iteration");
}

#[test]
fn the_pair_that_trips_the_fault_stop_is_applied_counted_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("g.pgn");
    let mut source = Scripted::new(&pgn, &[]);
    source.faulty = true;
    let rt = runtime();
    let mut tuner = Tuner::prepare(
        vars(),
        RunPlan {
            concurrency: 1,
            ..plan(1)
        },
        files(dir.path(), &source, Duration::ZERO),
        StartMode::New,
    )
    .unwrap();
    let err = rt
        .block_on(tuner.run(&source, &Shutdown::new(), &mut Quiet))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("every game of the last 5 pairs ended in an engine fault"),
        "{err}"
    );
    let ck = std::fs::read_to_string(dir.path().join("t.ck")).unwrap();
    assert!(ck.contains("applied = 5\n"), "{ck}");
    assert!(ck.contains("crash = 10"), "{ck}");
    assert_eq!(game_lines(&pgn).len(), 10, "what was written was counted");
}

/// The simulator with its `at_once` hidden: the pool drives it through its futures.
struct Awaited(spsa::source::simulate::Simulator);

impl Source for Awaited {
    fn parts(&self, trial: &Trial) -> usize {
        self.0.parts(trial)
    }
    fn run_part<'a>(
        &'a self,
        slot: usize,
        trial: &'a Trial,
        part: usize,
    ) -> BoxFuture<'a, anyhow::Result<Measurement>> {
        self.0.run_part(slot, trial, part)
    }
}

#[test]
fn a_simulation_is_the_same_run_with_or_without_the_pools_futures() {
    let vars = vars();
    let sim = spsa::source::simulate::Simulator::new(&vars, 0.2);
    let awaited = Awaited(sim.clone());
    assert!(sim.at_once().is_some() && awaited.at_once().is_none());
    for concurrency in [1, 4] {
        let mut runs = Vec::new();
        for source in [&sim as &dyn Source, &awaited] {
            let dir = tempfile::tempdir().unwrap();
            let files = RunFiles {
                log: dir.path().join("t.log"),
                checkpoint: dir.path().join("t.ck"),
                checkpoint_interval: Duration::from_secs(60),
                outputs: Vec::new(),
            };
            let plan = RunPlan {
                schedule: Schedule {
                    iterations: 3000,
                    a: 300.0,
                    alpha: 0.602,
                    gamma: 0.101,
                },
                ..plan(concurrency)
            };
            let mut tuner = Tuner::prepare(vars.clone(), plan, files, StartMode::New).unwrap();
            runtime()
                .block_on(tuner.run(source, &Shutdown::new(), &mut Quiet))
                .unwrap();
            let theta = tuner.state().theta.clone();
            runs.push((theta, std::fs::read(dir.path().join("t.log")).unwrap()));
        }
        assert_eq!(runs[0].0, runs[1].0, "Concurrency {concurrency}: θ");
        assert!(runs[0].1 == runs[1].1, "Concurrency {concurrency}: θ log");
    }
}
