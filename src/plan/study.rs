//! `spsa simulate CONFIG --runs N [--seed S]`: many independent simulated runs of one config, to
//! see how the final values and the final Elo loss are spread before spending CPU on games.
//!
//! Each run drives the tuner's own [`Driver`] and the [`Simulator`] in memory (no log, no
//! checkpoint), with seed S+i, spread over all cores: with Concurrency C, C trials are in flight,
//! each measured at θ as it was when handed out, and updates are applied oldest first (the tuner
//! applies them as they finish, which for the simulator is the same delay). With Concurrency 1 a
//! study run is bit for bit `spsa simulate CONFIG --seed S+i`.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::ProgressBar;

use crate::config::vars::{Variable, format_value};
use crate::report::status::table;
use crate::source::simulate::Simulator;
use crate::spsa::driver::{Driver, DriverState, Rounding};
use crate::spsa::{Schedule, Spsa};

/// Everything one study needs, already loaded.
#[derive(Clone, Debug)]
pub struct StudySetup {
    pub vars: Vec<Variable>,
    pub schedule: Schedule,
    pub draw_rate: f64,
    pub concurrency: usize,
    /// Game pairs per iteration.
    pub pairs: u32,
}

impl StudySetup {
    /// The study of a config: its variables file, schedule, draw rate, concurrency and pairs.
    pub fn from_config(config: &crate::config::Config) -> anyhow::Result<StudySetup> {
        Ok(StudySetup {
            vars: crate::config::vars::load(&config.variables)?,
            schedule: config.schedule,
            draw_rate: config.draw_rate,
            concurrency: config.concurrency,
            pairs: config.pairs_per_iteration,
        })
    }
}

/// The outcome of a study.
#[derive(Clone, Debug, PartialEq)]
pub struct Study {
    pub first_seed: u64,
    /// Final θ of each run, in seed order.
    pub finals: Vec<Vec<f64>>,
    /// The model's Elo loss (≥ 0) of each run's final θ.
    pub losses: Vec<f64>,
    /// The Elo loss of the starting θ.
    pub start_loss: f64,
}

/// Mean, median and the 10th/90th percentiles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub mean: f64,
    pub p10: f64,
    pub median: f64,
    pub p90: f64,
}

/// The p-quantile (0 ≤ p ≤ 1) of sorted values, interpolating linearly between ranks.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = p.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Spread {
            mean: values.iter().sum::<f64>() / values.len().max(1) as f64,
            p10: quantile(&sorted, 0.1),
            median: quantile(&sorted, 0.5),
            p90: quantile(&sorted, 0.9),
        }
    }
}

/// One simulated run in memory; returns the final θ.
pub fn simulate_run(setup: &StudySetup, seed: u64) -> Vec<f64> {
    let theta: Vec<f64> = setup.vars.iter().map(|v| v.start).collect();
    let mut driver = Driver::new(
        Spsa::new(&setup.vars, setup.schedule),
        Rounding::Continuous,
        setup.pairs,
        seed,
        DriverState::start(theta),
    );
    let sim = Simulator::new(&setup.vars, setup.draw_rate);
    let in_flight = setup.concurrency.max(1);
    let mut queue: VecDeque<(u64, f64)> = VecDeque::with_capacity(in_flight);
    loop {
        while queue.len() < in_flight {
            let Some(trial) = driver.next_trial() else {
                break;
            };
            queue.push_back((trial.iteration, sim.measure(&trial).signal()));
        }
        let Some((k, signal)) = queue.pop_front() else {
            break;
        };
        // Every k in the queue was handed out by this driver and is applied once.
        let _ = driver.apply(k, signal);
    }
    driver.theta().to_vec()
}

/// Run `runs` seeded runs (seeds `first_seed + i`) on up to `threads` threads. The result does
/// not depend on the thread count.
pub fn run_study(
    setup: &StudySetup,
    runs: usize,
    first_seed: u64,
    threads: usize,
    progress: &ProgressBar,
) -> Study {
    let next = AtomicUsize::new(0);
    let finals: Mutex<Vec<Option<Vec<f64>>>> = Mutex::new(vec![None; runs]);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, runs.max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= runs {
                        break;
                    }
                    let theta = simulate_run(setup, first_seed.wrapping_add(i as u64));
                    finals.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(theta);
                    progress.inc(1);
                }
            });
        }
    });
    let finals: Vec<Vec<f64>> = finals
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect();
    let sim = Simulator::new(&setup.vars, setup.draw_rate);
    let start: Vec<f64> = setup.vars.iter().map(|v| v.start).collect();
    Study {
        first_seed,
        losses: finals.iter().map(|t| -sim.elo(t)).collect(),
        finals,
        start_loss: -sim.elo(&start),
    }
}

/// Render a study for people.
pub fn render(setup: &StudySetup, study: &Study) -> String {
    let mut out = String::new();
    let runs = study.finals.len();
    let _ = writeln!(
        out,
        "{runs} simulated runs of {} iterations, seeds {}..={}, Concurrency {}, draw rate {}",
        setup.schedule.iterations,
        study.first_seed,
        study.first_seed.wrapping_add(runs.saturating_sub(1) as u64),
        setup.concurrency,
        setup.draw_rate
    );
    let _ = writeln!(out, "model optimum: 0 for every variable\n\nfinal values:");
    let rows: Vec<Vec<String>> = setup
        .vars
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let values: Vec<f64> = study.finals.iter().map(|t| t[i]).collect();
            let s = Spread::of(&values);
            vec![
                v.name.clone(),
                format_value(v.start, 2),
                format_value(s.mean, 2),
                format_value(s.p10, 2),
                format_value(s.median, 2),
                format_value(s.p90, 2),
                format_value(v.c_end, 4),
                format_value(v.r_end, 6),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "variable", "start", "mean", "p10", "median", "p90", "c_end", "R_end",
        ],
        &rows,
    ));
    let s = Spread::of(&study.losses);
    let _ = writeln!(out, "\nElo loss under the model (0 is the optimum):");
    out.push_str(&table(
        &["", "start", "mean", "p10", "median", "p90"],
        &[vec![
            "Elo loss".into(),
            format_value(study.start_loss, 2),
            format_value(s.mean, 2),
            format_value(s.p10, 2),
            format_value(s.median, 2),
            format_value(s.p90, 2),
        ]],
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn setup(concurrency: usize) -> StudySetup {
        StudySetup {
            vars: crate::config::vars::parse(
                "x,100,-1000,1000,100,0.002,1\ny,-50,-200,200,20,0.002,10\n",
                Path::new("t.var"),
            )
            .unwrap(),
            schedule: Schedule {
                iterations: 2000,
                a: 200.0,
                alpha: 0.602,
                gamma: 0.101,
            },
            draw_rate: 0.2,
            concurrency,
            pairs: 1,
        }
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.1), 1.4);
        assert_eq!(quantile(&v, 1.0), 5.0);
        let s = Spread::of(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!((s.mean, s.median), (3.0, 3.0));
    }

    #[test]
    fn study_is_deterministic_ordered_and_improves() {
        let hidden = ProgressBar::hidden();
        let a = run_study(&setup(1), 16, 7, 2, &hidden);
        let b = run_study(&setup(1), 16, 7, 1, &hidden);
        assert_eq!(a, b, "same seed, any thread count: same study");
        assert_eq!(
            a.finals[3],
            simulate_run(&setup(1), 10),
            "run i uses seed S+i"
        );
        let c = run_study(&setup(1), 16, 8, 2, &hidden);
        assert_ne!(a.finals, c.finals);
        for i in 0..2 {
            let values: Vec<f64> = a.finals.iter().map(|t| t[i]).collect();
            let s = Spread::of(&values);
            assert!(s.p10 <= s.median && s.median <= s.p90, "{s:?}");
        }
        let loss = Spread::of(&a.losses);
        assert!(
            loss.mean < a.start_loss,
            "final loss {} vs start {}",
            loss.mean,
            a.start_loss
        );
        assert!(a.losses.iter().all(|&l| l >= 0.0));
        let text = render(&setup(1), &a);
        assert!(
            text.contains("16 simulated runs of 2000 iterations, seeds 7..=22"),
            "{text}"
        );
        assert!(text.contains("Elo loss"), "{text}");
    }

    #[test]
    fn a_run_is_the_tuners_run_with_concurrency_1() {
        use crate::runtime::shutdown::Shutdown;
        use crate::spsa::driver::Rounding;
        use crate::tuner::{Quiet, RunFiles, RunPlan, StartMode, Tuner};
        let dir = tempfile::tempdir().unwrap();
        let s = setup(1);
        let files = RunFiles {
            log: dir.path().join("t.log"),
            checkpoint: dir.path().join("t.ck"),
            checkpoint_interval: std::time::Duration::from_secs(60),
            outputs: Vec::new(),
        };
        let plan = RunPlan {
            schedule: s.schedule,
            rounding: Rounding::Continuous,
            pairs: 1,
            seed: 42,
            concurrency: 1,
            max_faulty_trials: 5,
        };
        let sim = Simulator::new(&s.vars, s.draw_rate);
        let mut tuner = Tuner::prepare(s.vars.clone(), plan, files, StartMode::New).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(tuner.run(&sim, &Shutdown::new(), &mut Quiet))
            .unwrap();
        assert_eq!(simulate_run(&s, 42), tuner.state().theta);
    }
}
