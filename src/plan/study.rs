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

use rand::rngs::SmallRng;
use rand::{Rng, RngExt, SeedableRng};

use crate::report::status::table;
use crate::source::simulate::Simulator;
use crate::spsa::driver::{Driver, DriverState, Rounding};
use crate::spsa::{Schedule, Spsa};
use crate::stats::pairs::PairModel;
use crate::vars::{Variable, format_value};

/// `spsa simulate CONFIG --runs N`: a study of `runs` seeded runs of `config` (seeds from its
/// seed, else a random one) on all cores, a bar on a terminal meanwhile, and its table printed.
pub fn study_config(config: &crate::config::Config, runs: usize) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    if runs == 0 {
        return Err(crate::config::ConfigError::InFile {
            path: config.path.clone(),
            message: "--runs must be at least 1".into(),
        }
        .into());
    }
    let setup = StudySetup::from_config(config)?;
    if setup.vars.iter().all(|v| v.simul_elo == 0.0) {
        eprintln!(
            "{}: every simul_elo is 0, so the model has no optimum to find and no Elo to lose; set simul_elo (column 7) to study the schedule",
            config.variables.display()
        );
    }
    let first_seed = config.seed.unwrap_or_else(|| rand::rng().next_u64() >> 1);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let target = if std::io::stderr().is_terminal() {
        indicatif::ProgressDrawTarget::stderr()
    } else {
        indicatif::ProgressDrawTarget::hidden()
    };
    let progress = ProgressBar::with_draw_target(Some(runs as u64), target);
    let study = run_study(&setup, runs, first_seed, threads, &progress);
    progress.finish_and_clear();
    crate::out!("{}", render(&setup, &study))?;
    Ok(())
}

/// Everything one study needs, already loaded.
#[derive(Clone, Debug)]
pub struct StudySetup {
    pub vars: Vec<Variable>,
    pub schedule: Schedule,
    /// How simulated pairs spread around their Elo (the config's, or the pilot's pairs).
    pub pair_model: PairModel,
    pub concurrency: usize,
    /// Game pairs per iteration.
    pub pairs: u32,
    /// Where the model's optimum is.
    pub optimum: ModelOptimum,
}

/// Where the quadratic model puts each variable's optimum.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelOptimum {
    /// 0 for every variable: the classic simulation's convention, which simulation files are
    /// written for (their ranges hold 0 and their starts are distances from it).
    Zero,
    /// A real engine's optimum is not known: each simulated run draws one per variable from
    /// its prior (seeded by the run's seed, so every setting a plan compares meets the same
    /// optima).
    Drawn(Vec<OptimumPrior>),
}

/// What is known about one variable's optimum.
#[derive(Clone, Debug, PartialEq)]
pub enum OptimumPrior {
    /// Nothing: anywhere in [min, max] with equal probability.
    Range,
    /// A pilot's two matches about `x0` (Elo of x0+u against x0, with standard errors). A run
    /// draws each match's Elo from its normal and refits d(u) = −A·u² − B·u: with A > 0 the
    /// optimum is x0 − B/(2A); without curvature the slope −B only says on which side of x0
    /// it lies, anywhere between x0 and that bound. Clamped to the range.
    Measured {
        x0: f64,
        points: [crate::plan::curvature::Point; 2],
    },
}

impl ModelOptimum {
    /// Every variable's optimum unknown (a real engine's file without a pilot).
    pub fn unknown(vars: &[Variable]) -> ModelOptimum {
        ModelOptimum::Drawn(vec![OptimumPrior::Range; vars.len()])
    }

    /// The optimum of each variable in the run seeded `seed`; `None` for [`ModelOptimum::Zero`].
    pub fn draw(&self, vars: &[Variable], seed: u64) -> Option<Vec<f64>> {
        let ModelOptimum::Drawn(priors) = self else {
            return None;
        };
        // Its own stream, apart from the games' seeds: "optimum" in ASCII.
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x6f70_7469_6d75_6d00);
        Some(
            vars.iter()
                .zip(priors)
                .map(|(v, prior)| prior.draw(v, &mut rng))
                .collect(),
        )
    }

    /// One line for people: what the plan or study assumed.
    pub fn describe(&self) -> String {
        match self {
            ModelOptimum::Zero => "model optimum: 0 for every variable".into(),
            ModelOptimum::Drawn(priors) => {
                let measured = priors
                    .iter()
                    .filter(|p| matches!(p, OptimumPrior::Measured { .. }))
                    .count();
                if measured == 0 {
                    "model optimum: unknown, drawn anywhere in each variable's range per simulated run (losses are means over those optima)".into()
                } else {
                    format!(
                        "model optimum: from the pilot's matches for {measured} of {} variables (drawn within their errors per simulated run), anywhere in the range for the rest",
                        priors.len()
                    )
                }
            }
        }
    }
}

impl OptimumPrior {
    fn draw(&self, v: &Variable, rng: &mut SmallRng) -> f64 {
        // The variables file's reader keeps min ≤ max.
        let (lo, hi) = (v.min, v.max);
        let uniform = |rng: &mut SmallRng, a: f64, b: f64| a + (b - a) * rng.random::<f64>();
        match self {
            OptimumPrior::Range => uniform(rng, lo, hi),
            OptimumPrior::Measured { x0, points } => {
                let drawn = points.map(|p| crate::plan::curvature::Point {
                    elo: p.elo + p.se * standard_normal(rng),
                    ..p
                });
                let c = crate::plan::curvature::fit(drawn);
                let x0 = x0.clamp(lo, hi);
                if c.simul_elo > 0.0 {
                    c.vertex(x0).clamp(lo, hi)
                } else if c.slope > 0.0 {
                    uniform(rng, x0, hi)
                } else {
                    uniform(rng, lo, x0)
                }
            }
        }
    }
}

/// A standard normal draw (Box–Muller).
fn standard_normal(rng: &mut SmallRng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>(); // in (0, 1]
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

impl StudySetup {
    /// The study of a config: its variables file, schedule, draw rate, concurrency and pairs.
    pub fn from_config(config: &crate::config::Config) -> anyhow::Result<StudySetup> {
        Ok(StudySetup {
            vars: crate::vars::load(&config.variables)?,
            schedule: config.schedule,
            pair_model: config.pair_model(),
            concurrency: config.concurrency,
            pairs: config.pairs_per_iteration,
            optimum: ModelOptimum::Zero,
        })
    }
}

/// The outcome of a study.
#[derive(Clone, Debug, PartialEq)]
pub struct Study {
    pub first_seed: u64,
    /// Final θ of each run, in seed order.
    pub finals: Vec<Vec<f64>>,
    /// Each run's optimum (all 0 under [`ModelOptimum::Zero`]).
    pub optima: Vec<Vec<f64>>,
    /// The model's Elo loss (≥ 0) of each run's final θ.
    pub losses: Vec<f64>,
    /// The Elo loss of the starting θ (a mean over the runs' optima when they are drawn).
    pub start_loss: f64,
}

impl Study {
    /// Each run's Elo loss per variable, relative to that run's optimum.
    pub fn losses_by_var(&self, sim: &Simulator) -> Vec<Vec<f64>> {
        self.finals
            .iter()
            .zip(&self.optima)
            .map(|(t, o)| sim.losses(&distance(t, o)))
            .collect()
    }
}

/// θ − optimum, per variable.
fn distance(theta: &[f64], optimum: &[f64]) -> Vec<f64> {
    theta.iter().zip(optimum).map(|(x, o)| x - o).collect()
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

/// One simulated run in memory; returns the final θ and the run's optimum.
///
/// The model is played around 0, so a drawn optimum x* shifts the variables instead (start,
/// min and max minus x*; the gains are distances and stay): the same run, with the tuner and
/// simulator untouched. Under [`ModelOptimum::Zero`] nothing is shifted.
pub fn simulate_run(setup: &StudySetup, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let Some(optimum) = setup.optimum.draw(&setup.vars, seed) else {
        let zero = vec![0.0; setup.vars.len()];
        return (simulate_around_zero(setup, &setup.vars, seed), zero);
    };
    let shifted: Vec<Variable> = setup
        .vars
        .iter()
        .zip(&optimum)
        .map(|(v, &o)| Variable {
            start: v.start - o,
            min: v.min - o,
            max: v.max - o,
            ..v.clone()
        })
        .collect();
    let theta = simulate_around_zero(setup, &shifted, seed)
        .iter()
        .zip(&optimum)
        .map(|(x, o)| x + o)
        .collect();
    (theta, optimum)
}

/// One run of `vars` on the model with its optimum at 0.
fn simulate_around_zero(setup: &StudySetup, vars: &[Variable], seed: u64) -> Vec<f64> {
    let theta: Vec<f64> = vars.iter().map(|v| v.start).collect();
    let mut driver = Driver::new(
        Spsa::new(vars, setup.schedule),
        Rounding::Continuous,
        setup.pairs,
        seed,
        DriverState::start(theta),
    );
    let sim = Simulator::new(vars, setup.pair_model);
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
    type Run = (Vec<f64>, Vec<f64>);
    let done: Mutex<Vec<Option<Run>>> = Mutex::new(vec![None; runs]);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, runs.max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= runs {
                        break;
                    }
                    let run = simulate_run(setup, first_seed.wrapping_add(i as u64));
                    done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(run);
                    progress.inc(1);
                }
            });
        }
    });
    let (finals, optima): (Vec<Vec<f64>>, Vec<Vec<f64>>) = done
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .unzip();
    let sim = Simulator::new(&setup.vars, setup.pair_model);
    let start: Vec<f64> = setup.vars.iter().map(|v| v.start).collect();
    let start_loss = optima
        .iter()
        .map(|o| -sim.elo(&distance(&start, o)))
        .sum::<f64>()
        / optima.len().max(1) as f64;
    Study {
        first_seed,
        losses: finals
            .iter()
            .zip(&optima)
            .map(|(t, o)| -sim.elo(&distance(t, o)))
            .collect(),
        finals,
        optima,
        start_loss,
    }
}

/// Render a study for people.
pub fn render(setup: &StudySetup, study: &Study) -> String {
    let mut out = String::new();
    let runs = study.finals.len();
    let _ = writeln!(
        out,
        "{runs} simulated runs of {} iterations, seeds {}..={}, Concurrency {}, {}",
        setup.schedule.iterations,
        study.first_seed,
        study.first_seed.wrapping_add(runs.saturating_sub(1) as u64),
        setup.concurrency,
        setup.pair_model.describe()
    );
    let _ = writeln!(out, "{}\n\nfinal values:", setup.optimum.describe());
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
            vars: crate::vars::parse(
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
            pair_model: PairModel::Games { draw_rate: 0.2 },
            concurrency,
            pairs: 1,
            optimum: ModelOptimum::Zero,
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
            simulate_run(&setup(1), 10).0,
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

    fn drawn(text: &str, priors: Vec<OptimumPrior>) -> StudySetup {
        StudySetup {
            vars: crate::vars::parse(text, Path::new("t.var")).unwrap(),
            optimum: ModelOptimum::Drawn(priors),
            ..setup(1)
        }
    }

    /// Points on d(u) = −k·u² − 2k·(x0 − x*)·u, as a pilot would measure them with `se`.
    fn points(k: f64, x0: f64, x_star: f64, us: [f64; 2], se: f64) -> [Point; 2] {
        let e = |x: f64| -k * (x - x_star) * (x - x_star);
        us.map(|u| Point {
            u,
            elo: e(x0 + u) - e(x0),
            se,
        })
    }

    use crate::plan::curvature::Point;

    /// An unknown optimum is drawn inside the range, the same for the same seed (so every
    /// setting a plan compares meets it), different across seeds; losses are measured from it.
    #[test]
    fn an_unknown_optimum_is_drawn_in_the_range_per_run() {
        let s = drawn(
            "w,150,0,400,20,0.01,30\nt,0,0,50,4,0.1,400\n",
            vec![OptimumPrior::Range; 2],
        );
        let hidden = ProgressBar::hidden();
        let a = run_study(&s, 24, 3, 2, &hidden);
        assert_eq!(a, run_study(&s, 24, 3, 1, &hidden));
        for o in &a.optima {
            assert!(
                (0.0..=400.0).contains(&o[0]) && (0.0..=50.0).contains(&o[1]),
                "{o:?}"
            );
        }
        let first: Vec<f64> = a.optima.iter().map(|o| o[0]).collect();
        assert!(first.windows(2).all(|w| w[0] != w[1]), "{first:?}");
        let spread = Spread::of(&first);
        assert!(spread.p10 < 100.0 && spread.p90 > 300.0, "{spread:?}");
        // The losses are distances from each run's own optimum.
        let sim = Simulator::new(&s.vars, s.pair_model);
        for (r, by_var) in a.losses_by_var(&sim).iter().enumerate() {
            let d = a.finals[r][1] - a.optima[r][1];
            assert!((by_var[1] - 0.04 * d * d).abs() < 1e-9);
            assert!((by_var.iter().sum::<f64>() - a.losses[r]).abs() < 1e-9);
        }
        // A weight starting at its bound 0 is not at its optimum any more (it was under the
        // classic convention): the start costs Elo and the tune moves it up.
        assert!(a.start_loss > 0.0);
        let zero = StudySetup {
            optimum: ModelOptimum::Zero,
            ..s.clone()
        };
        let z = run_study(&zero, 24, 3, 2, &hidden);
        assert!(z.optima.iter().all(|o| o == &[0.0, 0.0]));
        let mean_t = |st: &Study| st.finals.iter().map(|t| t[1]).sum::<f64>() / 24.0;
        assert!(
            mean_t(&a) > 15.0 && mean_t(&z) < 10.0,
            "{} vs {}",
            mean_t(&a),
            mean_t(&z)
        );
    }

    /// A pilot's exact points put the optimum where the quadratic has it; within their errors
    /// the draws scatter around it; a run tunes toward it, including from a start at a bound.
    #[test]
    fn a_measured_optimum_comes_from_the_pilots_points() {
        let exact = points(0.04, 0.0, 30.0, [6.0, 12.0], 1e-9);
        let noisy = points(0.004, 100.0, 140.0, [-40.0, 40.0], 3.0);
        let s = drawn(
            "t,0,0,50,4,0.1,400\nw,100,0,400,20,0.01,40\n",
            vec![
                OptimumPrior::Measured {
                    x0: 0.0,
                    points: exact,
                },
                OptimumPrior::Measured {
                    x0: 100.0,
                    points: noisy,
                },
            ],
        );
        let a = run_study(&s, 40, 5, 2, &ProgressBar::hidden());
        for o in &a.optima {
            assert!((o[0] - 30.0).abs() < 1e-3, "{o:?}");
        }
        let w = Spread::of(&a.optima.iter().map(|o| o[1]).collect::<Vec<_>>());
        assert!(
            (w.median - 140.0).abs() < 15.0 && w.p90 - w.p10 > 2.0,
            "{w:?}"
        );
        let t = Spread::of(&a.finals.iter().map(|f| f[0]).collect::<Vec<_>>());
        assert!(
            (t.median - 30.0).abs() < 5.0,
            "from its bound 0 to 30: {t:?}"
        );
    }

    /// Without curvature in a draw, the slope only says which side: the optimum is drawn
    /// between the start and the bound it points to.
    #[test]
    fn a_flat_measurement_draws_on_the_slopes_side() {
        // Linear: d(u) = 0.5·u, better upward, no curvature.
        let p = [-40.0, 40.0].map(|u| Point {
            u,
            elo: 0.5 * u,
            se: 2.0,
        });
        let s = drawn(
            "w,100,0,400,20,0.01,40\n",
            vec![OptimumPrior::Measured {
                x0: 100.0,
                points: p,
            }],
        );
        let mut above = 0;
        for seed in 0..200 {
            let o = s.optimum.draw(&s.vars, seed).unwrap()[0];
            assert!((0.0..=400.0).contains(&o));
            above += usize::from(o >= 100.0);
        }
        assert!(above >= 190, "{above} of 200 above the start");
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
        let sim = Simulator::new(&s.vars, s.pair_model);
        let mut tuner = Tuner::prepare(s.vars.clone(), plan, files, StartMode::New).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(tuner.run(&sim, &Shutdown::new(), &mut Quiet))
            .unwrap();
        assert_eq!(simulate_run(&s, 42).0, tuner.state().theta);
    }
}
