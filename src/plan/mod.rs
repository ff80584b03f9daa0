//! `spsa plan CONFIG -o OUT.var`: choose c_end and R_end per variable by simulated studies of
//! the quadratic model, so a tune's gains come from a search instead of a guess.
//!
//! What the model says (see docs/tuning.md, "Choosing c_end and R_end"): the drift of a variable toward
//! its optimum per iteration is a_k·0.023·w·x (w = simul_elo/10⁴, score Elo), independent of c_k
//! and of the draws, while the noise of a step is (a_k/c_k)² times the variance of a pair's
//! result (2(1−d) for independent games at draw rate d, less for a real pentanomial). So a larger c is free until θ± are clipped at
//! the bounds, and a = R_end·c_end² trades converging from the start (bias) against the
//! stationary spread (about R_end/0.023 Elo per variable). The per-variable Elo losses add, and
//! each depends almost only on its own gains (other variables only add a little noise to the
//! game results), which is what makes the search below cheap.
//!
//! The search, with common random numbers (every setting is played on the same seeds):
//! 1. a grid of shared scales: c_end = f·c_cap for every variable (c_cap puts c_1 at half the
//!    range), one R_end for all; the per-variable losses of every cell are kept;
//! 2. per variable, the cell with the smallest loss of that variable, then a finer local grid
//!    around it, all variables refined at once (variable i takes its own j-th neighbour in
//!    batch j);
//! 3. on fresh seeds, the per-variable choice against the best shared cell: the smaller mean
//!    loss wins, and the file's own settings are measured on the same seeds for comparison.
//!
//! c is bounded twice: c_cap puts c_1 at half the range, and for a real engine no variable's
//! c_end may lose more than the probe limit (`--probe-loss`, [`DEFAULT_PROBE_LOSS`] Elo) when
//! that variable alone is moved ±c_end from its optimum under its simul_elo. On the model a
//! larger c is nearly free (so a simulation config plans without the limit unless given one); on
//! an engine Elo is far from quadratic that far out, and the seventh column is a belief.
//!
//! Variables with simul_elo ≤ 0 (nothing to find under the model) or min = max keep their
//! settings and are named in a warning.
//!
//! Where the optimum is ([`ModelOptimum`]): 0 for a simulation config (the classic convention);
//! for a real engine's config it is unknown and each simulated run draws it in the range, or
//! where a pilot's matches put it (`--measure`). Every setting meets the same draws.

pub mod curvature;
#[cfg(test)]
pub mod gain_coverage;
pub mod launch;
pub mod pilot;
pub mod pilot_memo;
pub mod probe;
pub mod study;

use std::fmt::Write as _;

use indicatif::ProgressBar;

use crate::plan::study::{ModelOptimum, Spread, StudySetup, quantile, run_study};
use crate::report::status::table;
use crate::source::simulate::Simulator;
use crate::vars::{self, Variable, format_value};

/// The most Elo a variable of a real engine may lose at ±c_end from its optimum under its
/// simul_elo, unless `spsa plan --probe-loss` says otherwise: 2.5 times the 2 Elo a probe of
/// fishtest's SPSA laboratory loses under the developer's belief.
pub const DEFAULT_PROBE_LOSS: f64 = 5.0;

/// Shared-scale grid, step 1: c_end as a fraction of c_cap.
const C_FRACTIONS: [f64; 3] = [0.25, 0.5, 1.0];
/// Shared-scale grid, step 1: R_end values (factors of 4 from 1.25·10⁻⁵ to 0.0512).
const R_VALUES: [f64; 7] = [1.25e-5, 5e-5, 2e-4, 8e-4, 3.2e-3, 1.28e-2, 5.12e-2];
/// Step 2: factors applied to a variable's best c_end and R_end.
const C_STEPS: [f64; 3] = [
    std::f64::consts::FRAC_1_SQRT_2,
    1.0,
    std::f64::consts::SQRT_2,
];
const R_STEPS: [f64; 5] = [
    0.5,
    std::f64::consts::FRAC_1_SQRT_2,
    1.0,
    std::f64::consts::SQRT_2,
    2.0,
];

/// Mean and 90th percentile of the final Elo loss over simulated runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossSummary {
    pub mean: f64,
    pub p90: f64,
}

impl LossSummary {
    fn of(losses: &[f64]) -> LossSummary {
        let mut sorted = losses.to_vec();
        sorted.sort_by(f64::total_cmp);
        LossSummary {
            mean: Spread::of(losses).mean,
            p90: quantile(&sorted, 0.9),
        }
    }
}

/// How many planned iterations the suggestion needs for a mean final loss ≤ 1 Elo.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WithinOneElo {
    /// This many iterations are enough (tried on a √2 ladder; the previous rung was not).
    At(u64),
    /// Already the smallest rung tried is within 1 Elo.
    AtMost(u64),
    /// Not even the largest rung tried.
    Beyond(u64),
}

/// Which search step the suggestion came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    PerVariable,
    Shared,
}

/// The planner's answer.
#[derive(Clone, Debug)]
pub struct PlanOutcome {
    /// The variables with the suggested c_end and R_end (everything else as in the file).
    pub suggestion: Vec<Variable>,
    pub choice: Choice,
    /// Measured on the same fresh seeds: the file's settings, the suggestion, the best shared
    /// cell (c_end = fraction·c_cap, R_end).
    pub current: LossSummary,
    pub suggested: LossSummary,
    pub shared: LossSummary,
    pub shared_cell: (f64, f64),
    /// Mean loss per variable, current and suggested (same seeds as above).
    pub current_by_var: Vec<f64>,
    pub suggested_by_var: Vec<f64>,
    pub within_one_elo: WithinOneElo,
    /// Variables that keep their settings, with the reason.
    pub warnings: Vec<String>,
    /// Simulated runs played in all.
    pub runs_played: usize,
    pub first_seed: u64,
    /// The probe limit the plan kept (Elo a variable loses at ±c_end under its simul_elo), and
    /// the variables whose suggested c_end sits at it.
    pub probe_loss: f64,
    pub at_probe_limit: Vec<String>,
}

/// Gains per variable: (c_end, R_end).
type Gains = Vec<(f64, f64)>;

/// The planner over one loaded study setup.
pub struct Planner {
    setup: StudySetup,
    runs: usize,
    first_seed: u64,
    threads: usize,
    /// Indices of the variables the search may change.
    tunable: Vec<usize>,
    runs_played: usize,
    /// Elo a variable may lose at ±c_end under its simul_elo.
    probe_loss: f64,
}

/// Round down to three significant digits.
fn down3(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(x.log10().floor() as i32 - 2);
    (x / scale).floor() * scale
}

/// Round to three significant digits (what we write to the file is what we evaluate).
fn significant3(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(2 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// Per-run, per-variable losses of one batch.
struct Batch {
    /// `by_var[i][r]`: variable i's loss in run r.
    by_var: Vec<Vec<f64>>,
}

impl Batch {
    fn totals(&self) -> Vec<f64> {
        let runs = self.by_var.first().map_or(0, Vec::len);
        (0..runs)
            .map(|r| self.by_var.iter().map(|v| v[r]).sum())
            .collect()
    }

    fn var_mean(&self, i: usize) -> f64 {
        let v = &self.by_var[i];
        v.iter().sum::<f64>() / v.len().max(1) as f64
    }
}

impl Planner {
    /// A planner for these variables and schedule; `runs` per evaluated setting, seeds from
    /// `first_seed`, `threads` worker threads.
    pub fn new(setup: StudySetup, runs: usize, first_seed: u64, threads: usize) -> Planner {
        let tunable = setup
            .vars
            .iter()
            .enumerate()
            .filter(|(_, v)| v.simul_elo > 0.0 && v.max > v.min)
            .map(|(i, _)| i)
            .collect();
        Planner {
            setup,
            runs: runs.max(2),
            first_seed,
            threads: threads.max(1),
            tunable,
            runs_played: 0,
            probe_loss: f64::INFINITY,
        }
    }

    /// A probe limit: the most Elo a variable may lose at ±c_end under its simul_elo
    /// (positive; none until given).
    pub fn with_probe_loss(mut self, elo: f64) -> Planner {
        self.probe_loss = elo;
        self
    }

    /// The largest c_end whose probe loses at most the limit under the variable's simul_elo.
    fn c_limit(&self, v: &Variable) -> f64 {
        if v.simul_elo > 0.0 {
            (self.probe_loss / (1e-4 * v.simul_elo)).sqrt()
        } else {
            f64::INFINITY
        }
    }

    /// Whether any variable can be planned (positive simul_elo and a range).
    pub fn has_tunable(&self) -> bool {
        !self.tunable.is_empty()
    }

    /// Warnings for the variables the planner leaves alone, and, under the classic convention
    /// (optimum 0), for those whose range does not hold 0 inside it.
    pub fn warnings(&self) -> Vec<String> {
        let kept = self
            .setup
            .vars
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.tunable.contains(i))
            .map(|(_, v)| {
                if v.max > v.min {
                    format!(
                        "`{}` has simul_elo {}: the model has nothing to find, so it keeps c_end {} and R_end {}",
                        v.name, v.simul_elo, v.c_end, v.r_end
                    )
                } else {
                    format!(
                        "`{}` has min = max: nothing to tune, so it keeps c_end {} and R_end {}",
                        v.name, v.c_end, v.r_end
                    )
                }
            });
        let zero = self.setup.optimum == ModelOptimum::Zero;
        let optimum_outside = self
            .tunable
            .iter()
            .filter(|_| zero)
            .map(|&i| &self.setup.vars[i])
            .filter(|v| !(v.min < 0.0 && 0.0 < v.max))
            .map(|v| {
                let place = if v.min == 0.0 {
                    "its lower bound"
                } else if v.max == 0.0 {
                    "its upper bound"
                } else {
                    "outside its range"
                };
                format!(
                    "`{}`: the model's optimum is 0 (the classic simulation's convention), {place} {}..{}: the plan is made as if 0 were the best value, so c_k large enough to reach it look free; for a real engine's weights plan its config with simulate = false, where the optimum is unknown (docs/tuning.md)",
                    v.name,
                    format_value(v.min, 6),
                    format_value(v.max, 6)
                )
            });
        kept.chain(optimum_outside).collect()
    }

    /// The file's own gains.
    fn current(&self) -> Gains {
        self.setup.vars.iter().map(|v| (v.c_end, v.r_end)).collect()
    }

    /// c_end that puts c_1 = c_end·N^γ at half the variable's range, or the probe limit if
    /// that is smaller.
    fn c_cap(&self, v: &Variable) -> f64 {
        let n = self.setup.schedule.iterations as f64;
        (0.5 * (v.max - v.min) / n.powf(self.setup.schedule.gamma)).min(self.c_limit(v))
    }

    /// Gains where every tunable variable takes `pick(i)` and the rest keep theirs.
    fn gains_with(&self, pick: impl Fn(usize) -> (f64, f64)) -> Gains {
        let mut g = self.current();
        for &i in &self.tunable {
            let (c, r) = pick(i);
            // Rounding may not carry c_end past the probe limit.
            let limit = self.c_limit(&self.setup.vars[i]);
            let c3 = significant3(c);
            let c3 = if c3 > limit { down3(c) } else { c3 };
            g[i] = (c3, significant3(r));
        }
        g
    }

    /// Play `runs` runs of these gains with `iterations` planned, seeds from `first_seed`.
    /// The one place the planner runs simulated studies.
    fn evaluate(&mut self, gains: &Gains, iterations: u64, runs: usize, first_seed: u64) -> Batch {
        let mut setup = self.setup.clone();
        setup.schedule.iterations = iterations;
        for (v, &(c, r)) in setup.vars.iter_mut().zip(gains) {
            v.c_end = c;
            v.r_end = r;
        }
        let study = run_study(
            &setup,
            runs,
            first_seed,
            self.threads,
            &ProgressBar::hidden(),
        );
        self.runs_played += runs;
        let sim = Simulator::new(&setup.vars, setup.pair_model);
        let per_run = study.losses_by_var(&sim);
        Batch {
            by_var: (0..setup.vars.len())
                .map(|i| per_run.iter().map(|l| l[i]).collect())
                .collect(),
        }
    }

    /// Run the whole search.
    pub fn plan(mut self) -> PlanOutcome {
        let n = self.setup.schedule.iterations;
        let search_seed = self.first_seed;
        let check_seed = self.first_seed.wrapping_add(self.runs as u64);
        let check_runs = 2 * self.runs;
        let warnings = self.warnings();
        let vars = self.setup.vars.clone();
        let caps: Vec<f64> = vars.iter().map(|v| self.c_cap(v)).collect();

        // 1. Shared scales; keep each variable's best cell and the best cell overall.
        let mut best_by_var: Vec<(f64, (f64, f64))> = vec![(f64::INFINITY, (0.0, 0.0)); vars.len()];
        let mut best_shared = (f64::INFINITY, (C_FRACTIONS[0], R_VALUES[0]));
        for &f in &C_FRACTIONS {
            for &r in &R_VALUES {
                let gains = self.gains_with(|i| (f * caps[i], r));
                let batch = self.evaluate(&gains, n, self.runs, search_seed);
                let total = Spread::of(&batch.totals()).mean;
                if total < best_shared.0 {
                    best_shared = (total, (f, r));
                }
                for &i in &self.tunable {
                    let m = batch.var_mean(i);
                    if m < best_by_var[i].0 {
                        best_by_var[i] = (m, gains[i]);
                    }
                }
            }
        }

        // 2. A finer grid around each variable's best cell, all variables at once.
        let centres: Vec<(f64, f64)> = best_by_var.iter().map(|b| b.1).collect();
        let limits: Vec<f64> = vars.iter().map(|v| self.c_limit(v)).collect();
        let mut refined = best_by_var.clone();
        for &cs in &C_STEPS {
            for &rs in &R_STEPS {
                if cs == 1.0 && rs == 1.0 {
                    continue;
                }
                let gains =
                    self.gains_with(|i| ((centres[i].0 * cs).min(limits[i]), centres[i].1 * rs));
                let batch = self.evaluate(&gains, n, self.runs, search_seed);
                for &i in &self.tunable {
                    let m = batch.var_mean(i);
                    if m < refined[i].0 {
                        refined[i] = (m, gains[i]);
                    }
                }
            }
        }
        let per_var = self.gains_with(|i| refined[i].1);
        let (sf, sr) = best_shared.1;
        let shared = self.gains_with(|i| (sf * caps[i], sr));

        // 3. Fresh seeds decide between the two and measure the file's settings.
        let current = self.current();
        let b_current = self.evaluate(&current, n, check_runs, check_seed);
        let b_per_var = self.evaluate(&per_var, n, check_runs, check_seed);
        let b_shared = self.evaluate(&shared, n, check_runs, check_seed);
        let l_per_var = LossSummary::of(&b_per_var.totals());
        let l_shared = LossSummary::of(&b_shared.totals());
        let (choice, gains, b_chosen, l_chosen) = if l_per_var.mean <= l_shared.mean {
            (Choice::PerVariable, per_var, &b_per_var, l_per_var)
        } else {
            (Choice::Shared, shared, &b_shared, l_shared)
        };
        let suggestion: Vec<Variable> = vars
            .iter()
            .zip(&gains)
            .map(|(v, &(c, r))| Variable {
                c_end: c,
                r_end: r,
                ..v.clone()
            })
            .collect();
        let suggested_by_var = (0..vars.len()).map(|i| b_chosen.var_mean(i)).collect();
        let at_probe_limit = suggestion
            .iter()
            .enumerate()
            .filter(|(i, v)| self.tunable.contains(i) && v.c_end >= 0.99 * self.c_limit(v))
            .map(|(_, v)| v.name.clone())
            .collect();
        let within_one_elo = self.iterations_within_one_elo(&gains);
        PlanOutcome {
            suggestion,
            choice,
            current: LossSummary::of(&b_current.totals()),
            suggested: l_chosen,
            shared: l_shared,
            shared_cell: (sf, sr),
            current_by_var: (0..vars.len()).map(|i| b_current.var_mean(i)).collect(),
            suggested_by_var,
            within_one_elo,
            warnings,
            runs_played: self.runs_played,
            first_seed: self.first_seed,
            probe_loss: self.probe_loss,
            at_probe_limit,
        }
    }

    /// The planned iteration count at which these end gains first give a mean final loss of
    /// at most 1 Elo, on a √2 ladder from N/8 to 8N (the schedule stretches with the count).
    fn iterations_within_one_elo(&mut self, gains: &Gains) -> WithinOneElo {
        let n = self.setup.schedule.iterations as f64;
        let runs = self.runs.max(8);
        let seed = self.first_seed.wrapping_add(3 * self.runs as u64);
        let ladder: Vec<u64> = (-6..=6)
            .map(|j| (n * 2f64.powf(j as f64 / 2.0)).round().max(1.0) as u64)
            .collect();
        for (step, &iterations) in ladder.iter().enumerate() {
            let batch = self.evaluate(gains, iterations, runs, seed);
            if Spread::of(&batch.totals()).mean <= 1.0 {
                return if step == 0 {
                    WithinOneElo::AtMost(iterations)
                } else {
                    WithinOneElo::At(iterations)
                };
            }
        }
        WithinOneElo::Beyond(*ladder.last().unwrap_or(&0))
    }
}

/// Render the outcome for people.
pub fn render(setup: &StudySetup, o: &PlanOutcome) -> String {
    let mut out = String::new();
    let n = setup.schedule.iterations;
    let _ = writeln!(
        out,
        "plan for {n} iterations, Concurrency {}, {}: {} simulated runs (seeds from {})\n{}",
        setup.concurrency,
        setup.pair_model.describe(),
        o.runs_played,
        o.first_seed,
        setup.optimum.describe()
    );
    let rows: Vec<Vec<String>> = setup
        .vars
        .iter()
        .zip(&o.suggestion)
        .enumerate()
        .map(|(i, (v, s))| {
            vec![
                v.name.clone(),
                format_value(v.simul_elo, 4),
                format_value(v.start, 4),
                format_value(v.c_end, 4),
                format_value(v.r_end, 6),
                format_value(o.current_by_var[i], 3),
                format_value(s.c_end, 4),
                format_value(s.r_end, 6),
                format_value(o.suggested_by_var[i], 3),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "variable",
            "simul_elo",
            "start",
            "c_end",
            "R_end",
            "loss",
            "plan c_end",
            "plan R_end",
            "plan loss",
        ],
        &rows,
    ));
    let line = |l: &LossSummary| vec![format_value(l.mean, 2), format_value(l.p90, 2)];
    let mut current = vec!["file settings".to_string()];
    current.extend(line(&o.current));
    let mut suggested = vec![match o.choice {
        Choice::PerVariable => "plan (per variable)".to_string(),
        Choice::Shared => "plan (shared scales)".to_string(),
    }];
    suggested.extend(line(&o.suggested));
    let mut shared = vec![format!(
        "best shared: c_end = {}·c_cap, R_end {}",
        o.shared_cell.0, o.shared_cell.1
    )];
    shared.extend(line(&o.shared));
    let _ = writeln!(
        out,
        "\nfinal Elo loss under the model after {n} iterations (c_cap puts c_1 at half the range{}):",
        if o.probe_loss.is_finite() {
            format!(
                ", and no c_end loses more than {} Elo at ±c_end under its simul_elo: --probe-loss",
                format_value(o.probe_loss, 2)
            )
        } else {
            String::new()
        }
    );
    if !o.at_probe_limit.is_empty() {
        let _ = writeln!(
            out,
            "held at the probe limit: {} (on the model a larger c_end would do; on an engine Elo is not quadratic that far out)",
            o.at_probe_limit.join(", ")
        );
    }
    out.push_str(&table(
        &["settings", "mean", "p90"],
        &[current, suggested, shared],
    ));
    let _ = match o.within_one_elo {
        WithinOneElo::At(k) => writeln!(
            out,
            "the plan's gains reach a mean loss within 1 Elo at about {k} iterations"
        ),
        WithinOneElo::AtMost(k) => writeln!(
            out,
            "the plan's gains are within 1 Elo already at {k} iterations (the fewest tried)"
        ),
        WithinOneElo::Beyond(k) => writeln!(
            out,
            "the plan's gains do not reach a mean loss within 1 Elo even at {k} iterations"
        ),
    };
    out
}

/// The file `spsa plan` writes: a comment line saying how it was made, then the variables
/// with the suggested gains.
pub fn file_text(how: &str, outcome: &PlanOutcome) -> String {
    let start: Vec<f64> = outcome.suggestion.iter().map(|v| v.start).collect();
    format!("# {how}\n{}", vars::to_csv(&outcome.suggestion, &start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spsa::Schedule;
    use std::path::Path;

    #[test]
    fn three_significant_digits() {
        assert_eq!(significant3(0.0012345), 0.00123);
        assert_eq!(significant3(123.456), 123.0);
        assert_eq!(significant3(9.996), 10.0);
        assert_eq!(significant3(0.0), 0.0);
    }

    fn setup(text: &str, iterations: u64) -> StudySetup {
        StudySetup {
            vars: vars::parse(text, Path::new("t.var")).unwrap(),
            schedule: Schedule {
                iterations,
                a: iterations as f64 / 10.0,
                alpha: 0.602,
                gamma: 0.101,
            },
            pair_model: crate::stats::pairs::PairModel::default(),
            concurrency: 1,
            pairs: 1,
            optimum: ModelOptimum::Zero,
        }
    }

    #[test]
    fn no_c_end_loses_more_than_the_probe_limit_under_the_belief() {
        // A wide range and a steep curve: without a limit the plan takes a large c_end (on the
        // model a probe far out is cheap); with 5 Elo none goes past √(5/(10⁻⁴·400)) ≈ 11.2.
        let text = "a,300,-1000,1000,5,0.002,400\nb,-200,-1000,1000,5,0.002,100\n";
        let free = Planner::new(setup(text, 1000), 4, 1, 2).plan();
        assert!(free.suggestion[0].c_end > 11.2, "{:?}", free.suggestion);
        assert!(free.at_probe_limit.is_empty() && free.probe_loss.is_infinite());
        let held = Planner::new(setup(text, 1000), 4, 1, 2)
            .with_probe_loss(5.0)
            .plan();
        for v in &held.suggestion {
            let loss = 1e-4 * v.simul_elo * v.c_end * v.c_end;
            assert!(loss <= 5.0, "{}: c_end {} loses {loss}", v.name, v.c_end);
        }
        assert!(held.at_probe_limit.contains(&"a".to_string()), "{held:?}");
        assert!(render(&setup(text, 1000), &held).contains("held at the probe limit: a"));
    }

    #[test]
    fn zero_simul_elo_keeps_its_settings_and_is_named() {
        let s = setup("a,50,-100,100,5,0.002,20\nb,10,-100,100,7,0.003,0\n", 1000);
        let o = Planner::new(s, 4, 1, 2).plan();
        assert_eq!(o.suggestion[1].c_end, 7.0);
        assert_eq!(o.suggestion[1].r_end, 0.003);
        assert_eq!(o.warnings.len(), 1);
        assert!(
            o.warnings[0].contains("`b` has simul_elo 0"),
            "{:?}",
            o.warnings
        );
        assert!(o.suggestion[0].c_end != 5.0 || o.suggestion[0].r_end != 0.002);
    }

    /// A real engine's weight (range 0..400) has the model's optimum at its bound: named, with
    /// the range; a variable whose range holds 0 is not.
    #[test]
    fn an_optimum_at_a_bound_is_named() {
        let s = setup(
            "Material,150,0,400,20,0.01,30\nTempo,-5,-60,60,3,0.002,50\nBonus,30,10,90,3,0.002,50\n",
            400,
        );
        let w = Planner::new(s, 2, 1, 1).warnings();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("`Material`: the model's optimum is 0")
                && w[0].contains("its lower bound 0..400"),
            "{w:?}"
        );
        assert!(
            w[1].contains("`Bonus`") && w[1].contains("outside its range 10..90"),
            "{w:?}"
        );
    }

    #[test]
    fn same_seed_same_plan() {
        let s = setup("a,50,-100,100,5,0.002,20\nb,-30,-60,60,3,0.002,50\n", 800);
        let a = Planner::new(s.clone(), 4, 9, 2).plan();
        let b = Planner::new(s.clone(), 4, 9, 1).plan();
        assert_eq!(a.suggestion, b.suggestion, "thread count does not matter");
        assert_eq!(a.suggested, b.suggested);
        let c = Planner::new(s, 4, 10, 2).plan();
        assert_ne!(a.current, c.current, "another seed, other runs");
    }
}
