//! Near the optimum: the residual Elo a tune leaves at equal pairs, fishtest's classic rule
//! beside ours, over paired seeds (issue 54). Printed as one table per problem and belief, with
//! 95% intervals and ratios measured side by side in this run.
//!
//! The model (our own implementation of the family the issue describes):
//! - a quadratic bowl in score Elo: Elo(θ) = −k·Σ w_true,i·(θ_i − θ*_i)², k chosen so that the
//!   start is 0.5 Elo below the optimum; the lab-default problem has 22 variables, 12 active at
//!   100 from their optimum (w_true 2, 1 and 0.5, four each, half above and half below) and 10
//!   that do nothing; the 64-variable problem has 9 per active group (54) and the same 10;
//! - game pairs from a pentanomial distribution: at Elo 0 LL 0.0001, DL 0.25, DD 0.50, WD 0.25,
//!   WW 0.0001 (vondele's pentamodel figures), shifted to a pair's Elo difference Δ by an
//!   exponential tilt p_j ∝ p_j(0)·e^(λ·s_j) (s_j the pair's points), λ solved so that the
//!   expected pair score is the logistic score 1/(1 + 10^(−Δ/400)) of both games: the crate's
//!   own simulator model (`stats::pairs`), so the plan below simulates exactly these pairs;
//! - a developer's belief w_dev (the lab default: 1 for every variable) that fixes c: a probe
//!   at c_dev,i = √(2/(k·w_dev,i)) loses 2 Elo under the belief;
//! - asynchronous workers: 20, each with 1..64 cores (powers of two) and a speed in [0.5, 2]; a
//!   worker leases 2 pairs per core at once, plays them for a log-normal time (median 180 s,
//!   95th percentile 540 s per game, per core, divided by its speed) and reports; results
//!   arrive out of order and are applied as they arrive (delayed updates).
//!
//! The arms, every one at 30,000 pairs on the same seeds (worker pool, durations and the match
//! noise of the i-th lease are the seed's):
//! - fishtest classic, as fishtest's server publishes it (spsa_workflow.py): c_k = c/k^γ,
//!   a_k = a/(A+k)^α with c = c_end·N^γ, a = R_end·c_end²·(A+N)^α, N the pairs, A = 0.1·N,
//!   α 0.602, γ 0.101; k is 1 + the pairs reported when a batch is leased, one δ per batch,
//!   θ += a_k/c_k·(wins − losses)·δ on arrival; c_end = c_dev, R_end = 0.002, bounds the lab's
//!   (start ± 10·c_dev);
//! - "lab classic": the same with the lab's A = 5000 and its signal ×½/√n (a check of this model
//!   against the lab's own figure for its `spsa` arm);
//! - ours: the crate's driver (`spsa::driver`), 30 pairs per iteration (N = 1000, A = N/10),
//!   with the c_end and R_end that `spsa plan` (`plan::Planner`, `--plan-runs` runs per
//!   setting, 32 by default as the command's `--runs`) chooses under the developer's belief:
//!   the variables at their distances from the optimum, the lab's bounds (start ± 10·c_dev, as
//!   every arm), simul_elo = k·w_dev·10⁴ (the belief, in score Elo), pairs from the same
//!   pentanomial (`[simulation] pentanomial` in a config); a worker leases
//!   max(1, its pairs / 30) iterations;
//! - ours averaged: the same trajectory, handing out the mean θ over the last half or the last
//!   quarter of the pairs (Polyak–Ruppert over the tail), and the same for fishtest's; and a run
//!   with the plan's R_end ×4 whose last half is averaged (larger steps, noise averaged out);
//! - ours in narrower bounds, start ± 2·c_dev, as the first translation gave them to
//!   the plan (early probes are clipped there, so the plan chooses a smaller c_end).
//!
//! `cargo bench --bench near_optimum` (`-- --seeds 8` for a quick look, `-- --plan-runs 128` for
//! plans of `spsa plan --runs 128`; 32, the command's default, without it).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use spsa::plan::Planner;
use spsa::plan::study::{ModelOptimum, StudySetup};
use spsa::spsa::driver::{Driver, DriverState, Rounding};
use spsa::spsa::{Schedule, Spsa};
use spsa::stats::pairs::{PairModel, PairOdds};
use spsa::vars::Variable;

/// Game pairs per run, every arm.
const PAIRS: u64 = 30_000;
/// Workers of the asynchronous pool.
const WORKERS: usize = 20;
/// Our pairs per iteration.
const OUR_PAIRS: u32 = 30;
/// The lab's bounds, every arm's: start ± 10·c_dev.
const LAB_WIDTH: f64 = 10.0;
/// The bounds the first translation gave `spsa plan`: start ± 2·c_dev.
const NARROW_WIDTH: f64 = 2.0;
/// The lab's draw-free pentanomial at Elo 0: LL, DL, DD, WD, WW.
const PENTA0: [f64; 5] = [0.0001, 0.25, 0.50, 0.25, 0.0001];

/// SplitMix64: the bench's own reproducible stream, keyed by (seed, purpose, index).
struct Mix(u64);

impl Mix {
    fn new(seed: u64, purpose: u64, index: u64) -> Mix {
        let mut m = Mix(seed ^ purpose.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        m.0 ^= index.wrapping_mul(0xD1B5_4A32_D192_ED03);
        m.next();
        m
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn sign(&mut self) -> f64 {
        if self.next() & 1 == 1 { 1.0 } else { -1.0 }
    }

    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// One problem of the family, in coordinates x = θ − θ* (optimum at 0).
#[derive(Clone)]
struct Problem {
    name: &'static str,
    w_true: Vec<f64>,
    start: Vec<f64>,
    /// Elo per unit² of weighted distance.
    k: f64,
}

impl Problem {
    /// Six active groups of `per_group` (w_true 2, 2, 1, 1, 0.5, 0.5; start −100, +100 in turn)
    /// and 10 inert variables at their optimum, 0.5 Elo below the optimum at the start.
    fn lab_family(name: &'static str, per_group: usize) -> Problem {
        let mut w_true = Vec::new();
        let mut start = Vec::new();
        for (w, s) in [
            (2.0, -100.0),
            (2.0, 100.0),
            (1.0, -100.0),
            (1.0, 100.0),
            (0.5, -100.0),
            (0.5, 100.0),
        ] {
            w_true.extend(std::iter::repeat_n(w, per_group));
            start.extend(std::iter::repeat_n(s, per_group));
        }
        w_true.extend([0.0; 10]);
        start.extend([0.0; 10]);
        let weighted: f64 = w_true.iter().zip(&start).map(|(w, x)| w * x * x).sum();
        Problem {
            name,
            w_true,
            start,
            k: 0.5 / weighted,
        }
    }

    fn len(&self) -> usize {
        self.w_true.len()
    }

    /// Elo below the optimum (≥ 0) at x.
    fn loss(&self, x: &[f64]) -> f64 {
        self.k
            * self
                .w_true
                .iter()
                .zip(x)
                .map(|(w, x)| w * x * x)
                .sum::<f64>()
    }

    /// A developer's believed sensitivities: the lab's (1 everywhere), or `factor`·w_true for
    /// the active variables (1 for the inert ones, as the lab's default believes).
    fn belief(&self, factor: Option<f64>) -> Vec<f64> {
        self.w_true
            .iter()
            .map(|&w| match factor {
                Some(f) if w > 0.0 => f * w,
                _ => 1.0,
            })
            .collect()
    }

    /// c_dev per variable: a probe at c_dev loses 2 Elo under the belief.
    fn c_dev(&self, w_dev: &[f64]) -> Vec<f64> {
        w_dev.iter().map(|w| (2.0 / (self.k * w)).sqrt()).collect()
    }
}

/// The lab's pairs: its pentanomial at Elo 0, moved to each Elo as the crate's simulator moves
/// a shape (`stats::pairs`, an exponential tilt to the logistic score).
fn pair_model() -> PairModel {
    PairModel::pentanomial(PENTA0).expect("the pentamodel scores both ways")
}

/// The pentanomial of a pair whose θ+ side is `elo` stronger, as a cumulative table.
fn penta_cdf(elo: f64) -> [f64; 5] {
    let PairOdds::Pairs(p) = pair_model().at_score(1.0 / (1.0 + 10f64.powf(-elo / 400.0))) else {
        unreachable!("a pentanomial model draws pairs")
    };
    let mut cdf = [0.0; 5];
    let mut acc = 0.0;
    for j in 0..5 {
        acc += p[j];
        cdf[j] = acc;
    }
    cdf
}

/// Net wins (wins − losses over the games) of `pairs` pairs at Elo difference `elo`.
fn play(elo: f64, pairs: u64, rng: &mut Mix) -> f64 {
    let cdf = penta_cdf(elo);
    let mut net = 0.0;
    for _ in 0..pairs {
        let u = rng.unit() * cdf[4];
        let j = cdf.iter().position(|&c| u < c).unwrap_or(4);
        net += j as f64 - 2.0;
    }
    net
}

/// A simulated worker.
#[derive(Clone, Copy)]
struct Worker {
    cores: u64,
    speed: f64,
}

fn workers(seed: u64) -> Vec<Worker> {
    let mut rng = Mix::new(seed, 1, 0);
    (0..WORKERS)
        .map(|_| Worker {
            cores: 1 << (rng.next() % 7),
            speed: 0.5 + 1.5 * rng.unit(),
        })
        .collect()
}

/// One piece of leased work: the two points and its pairs, with an arm's id.
struct Lease {
    id: u64,
    plus: Vec<f64>,
    minus: Vec<f64>,
    pairs: u64,
}

/// What an arm does: lease work (a worker asks for `pairs`), take results, say where θ is.
trait Arm {
    /// Work for a worker that can play `pairs` at once; empty when the budget is handed out.
    fn lease(&mut self, pairs: u64) -> Vec<Lease>;
    fn report(&mut self, id: u64, net: f64);
    fn theta(&self) -> &[f64];
}

/// Mean θ over the pairs reported after `from`, weighted by pairs.
struct TailMean {
    from: u64,
    sum: Vec<f64>,
    weight: f64,
}

impl TailMean {
    fn new(from: u64, n: usize) -> TailMean {
        TailMean {
            from,
            sum: vec![0.0; n],
            weight: 0.0,
        }
    }

    fn add(&mut self, reported: u64, pairs: u64, theta: &[f64]) {
        if reported > self.from {
            let w = pairs as f64;
            for (s, t) in self.sum.iter_mut().zip(theta) {
                *s += w * t;
            }
            self.weight += w;
        }
    }

    fn mean(&self, fallback: &[f64]) -> Vec<f64> {
        if self.weight == 0.0 {
            return fallback.to_vec();
        }
        self.sum.iter().map(|s| s / self.weight).collect()
    }
}

/// The estimators a run hands out: the last θ, and the means over the last half and quarter.
struct Finals {
    last: Vec<f64>,
    half: Vec<f64>,
    quarter: Vec<f64>,
}

/// A worker's job in flight: the worker, and each lease's id with its net wins.
type Job = Option<(usize, Vec<(u64, f64)>)>;

/// Play one run of `arm` on `problem` with the seed's workers and noise.
fn run(problem: &Problem, arm: &mut dyn Arm, seed: u64) -> Finals {
    let pool = workers(seed);
    let mut durations = Mix::new(seed, 2, 0);
    let sigma = (540f64 / 180.0).ln() / 1.645;
    // (finish time, sequence): the heap gives the earliest finish first.
    let mut heap: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut reported = 0u64;
    let n = problem.len();
    let mut half = TailMean::new(PAIRS / 2, n);
    let mut quarter = TailMean::new(PAIRS - PAIRS / 4, n);
    let mut sizes: Vec<u64> = Vec::new();
    let mut start_job = |w: usize,
                         now: f64,
                         arm: &mut dyn Arm,
                         heap: &mut BinaryHeap<Reverse<(u64, u64)>>,
                         jobs: &mut Vec<Job>,
                         sizes: &mut Vec<u64>| {
        let worker = pool[w];
        let leases = arm.lease(2 * worker.cores);
        if leases.is_empty() {
            return;
        }
        let seq = jobs.len() as u64;
        let mut results = Vec::new();
        let mut pairs = 0;
        for (i, l) in leases.iter().enumerate() {
            // The match noise of the seed's j-th lease (of this worker's job), common to arms.
            let mut noise = Mix::new(seed, 3, (seq << 8) + i as u64);
            let elo = problem.loss(&l.minus) - problem.loss(&l.plus);
            results.push((l.id, play(elo, l.pairs, &mut noise)));
            pairs += l.pairs;
        }
        let per_core = (2 * pairs).div_ceil(worker.cores) as f64;
        let time = per_core * 180.0 * (sigma * durations.normal()).exp() / worker.speed;
        let finish = now + time;
        heap.push(Reverse((finish.to_bits(), seq)));
        jobs.push(Some((w, results)));
        sizes.push(pairs);
    };
    for w in 0..pool.len() {
        start_job(w, 0.0, arm, &mut heap, &mut jobs, &mut sizes);
    }
    while let Some(Reverse((bits, seq))) = heap.pop() {
        let now = f64::from_bits(bits);
        let Some((w, results)) = jobs[seq as usize].take() else {
            continue;
        };
        for (id, net) in results {
            arm.report(id, net);
        }
        let pairs = sizes[seq as usize];
        reported += pairs;
        half.add(reported, pairs, arm.theta());
        quarter.add(reported, pairs, arm.theta());
        start_job(w, now, arm, &mut heap, &mut jobs, &mut sizes);
    }
    assert_eq!(reported, PAIRS, "every arm plays exactly its pairs");
    let last = arm.theta().to_vec();
    Finals {
        half: half.mean(&last),
        quarter: quarter.mean(&last),
        last,
    }
}

/// Fishtest's classic SPSA (its server's rule), with the lab's variant as an option.
struct Classic {
    theta: Vec<f64>,
    c: Vec<f64>,
    a: Vec<f64>,
    min: Vec<f64>,
    max: Vec<f64>,
    big_a: f64,
    /// The signal's factor: 1 for fishtest, ½/√n for the lab's variant.
    scale: f64,
    leased: u64,
    reported: u64,
    seed: u64,
    /// Per lease: its pairs, δ and the step a_k/c_k per variable.
    out: Vec<(u64, Vec<f64>, Vec<f64>)>,
}

impl Classic {
    fn new(
        problem: &Problem,
        c_end: &[f64],
        width: f64,
        big_a: f64,
        scale: f64,
        seed: u64,
    ) -> Self {
        let (alpha, gamma, r_end, n) = (0.602, 0.101, 0.002, PAIRS as f64);
        Classic {
            theta: problem.start.clone(),
            c: c_end.iter().map(|c| c * n.powf(gamma)).collect(),
            a: c_end
                .iter()
                .map(|c| r_end * c * c * (big_a + n).powf(alpha))
                .collect(),
            min: problem
                .start
                .iter()
                .zip(c_end)
                .map(|(s, c)| s - width * c)
                .collect(),
            max: problem
                .start
                .iter()
                .zip(c_end)
                .map(|(s, c)| s + width * c)
                .collect(),
            big_a,
            scale,
            leased: 0,
            reported: 0,
            seed,
            out: Vec::new(),
        }
    }
}

impl Arm for Classic {
    fn lease(&mut self, pairs: u64) -> Vec<Lease> {
        let pairs = pairs.min(PAIRS - self.leased);
        if pairs == 0 {
            return Vec::new();
        }
        let id = self.out.len() as u64;
        let k = (self.reported + 1) as f64;
        let mut rng = Mix::new(self.seed, 4, id);
        let n = self.theta.len();
        let (mut delta, mut c_k, mut step) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            delta[i] = rng.sign();
            c_k[i] = self.c[i] / k.powf(0.101);
            // R_k·c_k = a_k / c_k.
            step[i] = self.a[i] / (self.big_a + k).powf(0.602) / c_k[i];
            plus[i] = (self.theta[i] + c_k[i] * delta[i]).clamp(self.min[i], self.max[i]);
            minus[i] = (self.theta[i] - c_k[i] * delta[i]).clamp(self.min[i], self.max[i]);
        }
        self.leased += pairs;
        self.out.push((pairs, delta, step));
        vec![Lease {
            id,
            plus,
            minus,
            pairs,
        }]
    }

    fn report(&mut self, id: u64, net: f64) {
        let (pairs, delta, step) = &self.out[id as usize];
        for i in 0..self.theta.len() {
            let x = self.theta[i] + step[i] * self.scale * net * delta[i];
            self.theta[i] = x.clamp(self.min[i], self.max[i]);
        }
        self.reported += pairs;
    }

    fn theta(&self) -> &[f64] {
        &self.theta
    }
}

/// Ours: the crate's driver.
struct Ours {
    driver: Driver,
    pairs: u32,
}

impl Ours {
    fn new(vars: &[Variable], seed: u64) -> Ours {
        let iterations = PAIRS / u64::from(OUR_PAIRS);
        let theta = vars.iter().map(|v| v.start).collect();
        Ours {
            driver: Driver::new(
                Spsa::new(vars, schedule(iterations)),
                Rounding::Continuous,
                OUR_PAIRS,
                seed,
                DriverState::start(theta),
            ),
            pairs: OUR_PAIRS,
        }
    }
}

fn schedule(iterations: u64) -> Schedule {
    Schedule {
        iterations,
        a: iterations as f64 / 10.0,
        alpha: 0.602,
        gamma: 0.101,
    }
}

impl Arm for Ours {
    fn lease(&mut self, pairs: u64) -> Vec<Lease> {
        let count = (pairs / u64::from(self.pairs)).max(1);
        (0..count)
            .map_while(|_| self.driver.next_trial())
            .map(|t| Lease {
                id: t.iteration,
                plus: t.plus,
                minus: t.minus,
                pairs: u64::from(t.pairs),
            })
            .collect()
    }

    fn report(&mut self, id: u64, net: f64) {
        self.driver
            .apply(id, net)
            .expect("every leased iteration is applied once");
    }

    fn theta(&self) -> &[f64] {
        self.driver.theta()
    }
}

/// The variables `spsa plan` is given: the belief, at the distances from the optimum, with
/// bounds start ± `width`·c_dev.
fn belief_vars(problem: &Problem, w_dev: &[f64], c_dev: &[f64], width: f64) -> Vec<Variable> {
    (0..problem.len())
        .map(|i| Variable {
            name: format!("v{i}"),
            start: problem.start[i],
            min: problem.start[i] - width * c_dev[i],
            max: problem.start[i] + width * c_dev[i],
            c_end: c_dev[i] / 2.0,
            r_end: 0.002,
            simul_elo: problem.k * w_dev[i] * 1e4,
        })
        .collect()
}

/// Trials in flight on average: a worker of 2^j cores leases max(1, 2^(j+1) / 30) iterations.
fn mean_in_flight() -> usize {
    let per_worker: f64 = (0..7)
        .map(|j| ((2u64 << j) / u64::from(OUR_PAIRS)).max(1) as f64)
        .sum::<f64>()
        / 7.0;
    (WORKERS as f64 * per_worker).round() as usize
}

/// `spsa plan --runs RUNS`'s choice under the belief for variables bounded at start ±
/// `width`·c_dev, in-process.
fn plan(problem: &Problem, w_dev: &[f64], c_dev: &[f64], width: f64, runs: usize) -> Vec<Variable> {
    let setup = StudySetup {
        vars: belief_vars(problem, w_dev, c_dev, width),
        schedule: schedule(PAIRS / u64::from(OUR_PAIRS)),
        pair_model: pair_model(),
        concurrency: mean_in_flight(),
        pairs: OUR_PAIRS,
        optimum: ModelOptimum::Zero,
    };
    Planner::new(setup, runs, 1, 2)
        .with_probe_loss(spsa::plan::DEFAULT_PROBE_LOSS)
        .plan()
        .suggestion
}

/// Mean and 95% half-width (t, 39 degrees of freedom at 40 seeds; 2.0 is close enough above).
fn mean_ci(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0).max(1.0);
    let t = if x.len() >= 40 { 2.023 } else { 2.365 };
    (m, t * (var / n).sqrt())
}

/// Ratio of the means of two paired samples with a 95% percentile-bootstrap interval.
fn ratio_ci(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let mean = |v: &[f64], idx: &[usize]| idx.iter().map(|&i| v[i]).sum::<f64>();
    let all: Vec<usize> = (0..a.len()).collect();
    let r = mean(a, &all) / mean(b, &all);
    let mut rng = Mix::new(54, 5, 0);
    let mut rs: Vec<f64> = (0..4000)
        .map(|_| {
            let idx: Vec<usize> = (0..a.len())
                .map(|_| (rng.next() % a.len() as u64) as usize)
                .collect();
            mean(a, &idx) / mean(b, &idx)
        })
        .collect();
    rs.sort_by(f64::total_cmp);
    (r, rs[100], rs[3899])
}

struct Row {
    name: String,
    losses: Vec<f64>,
}

fn scenario(problem: &Problem, factor: Option<f64>, seeds: &[u64], runs: usize) -> Vec<Row> {
    let w_dev = problem.belief(factor);
    let c_dev = problem.c_dev(&w_dev);
    let t = Instant::now();
    // The plan's variables carry the belief's simul_elo; the games play the truth.
    let planned = |width: f64| {
        let mut v = plan(problem, &w_dev, &c_dev, width, runs);
        for x in &mut v {
            x.simul_elo = 0.0;
        }
        v
    };
    let ours_vars = planned(LAB_WIDTH);
    let narrow_vars = planned(NARROW_WIDTH);
    let plan_secs = t.elapsed().as_secs_f64();
    let mut rows: Vec<Row> = [
        "fishtest classic",
        "fishtest classic, tail ½",
        "lab classic (check)",
        "ours (plan), last θ",
        "ours, tail ½",
        "ours, tail ¼",
        "ours R_end ×4, tail ½",
        "ours, bounds ±2·c_dev",
    ]
    .iter()
    .map(|n| Row {
        name: n.to_string(),
        losses: Vec::new(),
    })
    .collect();
    let t = Instant::now();
    for &seed in seeds {
        let mut ft = Classic::new(problem, &c_dev, LAB_WIDTH, 0.1 * PAIRS as f64, 1.0, seed);
        let f = run(problem, &mut ft, seed);
        rows[0].losses.push(problem.loss(&f.last));
        rows[1].losses.push(problem.loss(&f.half));
        let scale = 0.5 / (problem.len() as f64).sqrt();
        let mut lab = Classic::new(problem, &c_dev, LAB_WIDTH, 5000.0, scale, seed);
        rows[2]
            .losses
            .push(problem.loss(&run(problem, &mut lab, seed).last));
        let mut ours = Ours::new(&ours_vars, seed);
        let f = run(problem, &mut ours, seed);
        rows[3].losses.push(problem.loss(&f.last));
        rows[4].losses.push(problem.loss(&f.half));
        rows[5].losses.push(problem.loss(&f.quarter));
        // Averaging wants larger steps than the last θ does: the plan's R_end ×4, averaged.
        let bold: Vec<Variable> = ours_vars
            .iter()
            .map(|v| Variable {
                r_end: 4.0 * v.r_end,
                ..v.clone()
            })
            .collect();
        let f = run(problem, &mut Ours::new(&bold, seed), seed);
        rows[6].losses.push(problem.loss(&f.half));
        let f = run(problem, &mut Ours::new(&narrow_vars, seed), seed);
        rows[7].losses.push(problem.loss(&f.last));
    }
    let belief = match factor {
        None => "w_dev = 1 (the lab's)".to_string(),
        Some(f) => format!("w_dev = {f}·w_true"),
    };
    let c = |i: usize| ours_vars[i].c_end / c_dev[i];
    let r = |i: usize| ours_vars[i].r_end;
    println!(
        "\n{} ({} variables), {belief}, {} pairs, {} seeds; plan {:.1} s, runs {:.1} s",
        problem.name,
        problem.len(),
        PAIRS,
        seeds.len(),
        plan_secs,
        t.elapsed().as_secs_f64()
    );
    println!(
        "  plan's choice: c_end/c_dev {:.2} {:.2} {:.2} (w_true 2, 1, 0.5), {:.2} (inert); R_end {:.2e} {:.2e} {:.2e}, {:.2e}",
        c(0),
        c(problem.len() / 3),
        c(problem.len() - 11),
        c(problem.len() - 1),
        r(0),
        r(problem.len() / 3),
        r(problem.len() - 11),
        r(problem.len() - 1)
    );
    let best = rows
        .iter()
        .enumerate()
        .min_by(|a, b| mean_ci(&a.1.losses).0.total_cmp(&mean_ci(&b.1.losses).0))
        .map_or(0, |b| b.0);
    println!(
        "  {:<28} {:>8} {:>18} {:>24} {:>24}",
        "arm", "loss", "95% interval", "÷ best [95%]", "÷ fishtest [95%]"
    );
    for row in &rows {
        let (m, h) = mean_ci(&row.losses);
        let (rb, lb, hb) = ratio_ci(&row.losses, &rows[best].losses);
        let (rf, lf, hf) = ratio_ci(&row.losses, &rows[0].losses);
        println!(
            "  {:<28} {:>8.4} {:>18} {:>24} {:>24}",
            row.name,
            -m,
            format!("[{:.4}, {:.4}]", -m - h, -m + h),
            format!("{rb:.2} [{lb:.2}, {hb:.2}]"),
            format!("{rf:.2} [{lf:.2}, {hf:.2}]"),
        );
    }
    rows
}

/// The number after `--NAME` on the command line, or `default`.
fn flag<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seeds_n: u64 = flag(&args, "--seeds", 40);
    // `spsa plan --runs`: its default is 32; more runs choose among the settings with less noise.
    let plan_runs: usize = flag(&args, "--plan-runs", 32);
    let seeds: Vec<u64> = (1..=seeds_n).collect();
    let t = Instant::now();
    println!(
        "near the optimum: residual Elo at {PAIRS} pairs (negative: below the optimum), paired seeds 1..={seeds_n}, plans of {plan_runs} runs per setting"
    );
    let default = Problem::lab_family("lab default", 2);
    let wide = Problem::lab_family("64 variables", 9);
    for problem in [&default, &wide] {
        scenario(problem, None, &seeds, plan_runs);
        for factor in [2.0, 0.5] {
            scenario(problem, Some(factor), &seeds, plan_runs);
        }
    }
    println!("\nin all {:.1} s", t.elapsed().as_secs_f64());
}
