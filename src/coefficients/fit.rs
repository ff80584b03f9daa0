//! Exact-gradient minimisation of the loss over a coefficient set: Adam (full-batch or
//! mini-batch gradient descent with a training/validation learning curve and early stopping, as
//! in the chess4j tuner) and L-BFGS-B (RuyTune's method, made for box constraints: a projected
//! quasi-Newton method, [`lbfgs`]).
//!
//! Both work in option units and report each epoch (θ, training loss, validation loss) to a
//! callback on the caller's thread, which writes logs and checkpoints and may stop the fit.
//!
//! Bounds: Adam projects θ onto [min, max] after every step (projected gradient descent).
//! L-BFGS-B holds the variables at a bound whose gradient points outwards and searches along the
//! projection of its quasi-Newton step onto the box, so θ never leaves the bounds and no
//! penalty bends the loss (a penalty's kink at the bound stalled L-BFGS for weights that start
//! on their bound, as new evaluation terms do).

use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use super::objective::Model;
use crate::positions::{Loss, LossKind, Outcome, fit_k, k_still_moving};
use crate::vars::Variable;

/// Which exact-gradient method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GradientMethod {
    /// Adam on full or mini batches.
    Adam,
    /// L-BFGS on the full training set.
    Lbfgs,
}

/// How long and how fast to fit.
#[derive(Clone, Debug, PartialEq)]
pub struct FitSettings {
    /// Most epochs (Adam: passes over the training set; L-BFGS: iterations, its cap).
    pub epochs: usize,
    /// Adam's step size, as a fraction of each variable's c_end, decayed as lr/√(1 + epoch/10).
    pub learning_rate: f64,
    /// Positions per Adam step; `None` for the full training set.
    pub batch: Option<usize>,
    /// Adam: stop after this many epochs without a new best validation loss (0: never).
    /// L-BFGS-B does not use it (see [`lbfgs`]).
    pub patience: usize,
    /// Seeds the mini-batch order.
    pub seed: u64,
    /// L-BFGS-B stops once the projected gradient's norm is at most this fraction of its norm
    /// at the start.
    pub gradient_tolerance: f64,
    /// L-BFGS-B stops once the loss fell by at most this fraction of itself over the last
    /// [`LOSS_WINDOW`] iterations.
    pub loss_tolerance: f64,
}

impl Default for FitSettings {
    fn default() -> Self {
        FitSettings {
            epochs: 200,
            learning_rate: 1.0,
            batch: None,
            patience: 20,
            seed: 1,
            gradient_tolerance: GRADIENT_TOLERANCE,
            loss_tolerance: LOSS_TOLERANCE,
        }
    }
}

/// L-BFGS-B's default [`FitSettings::gradient_tolerance`].
pub const GRADIENT_TOLERANCE: f64 = 1e-5;
/// L-BFGS-B's default [`FitSettings::loss_tolerance`].
pub const LOSS_TOLERANCE: f64 = 1e-9;
/// Iterations over which L-BFGS-B's loss change is measured: one short step does not stop it.
pub const LOSS_WINDOW: usize = 5;

/// One finished epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct Epoch {
    pub epoch: usize,
    pub theta: Vec<f64>,
    pub train: f64,
    pub validation: Option<f64>,
}

/// What the epoch callback wants next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// Why a fit ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Finish {
    /// Adam: all epochs done.
    Done,
    /// L-BFGS-B: one of its stopping rules.
    Stopped(Stop),
    /// Adam: the validation loss stopped improving.
    EarlyStop,
    /// The callback asked to stop (Ctrl-C).
    Interrupted,
}

/// Which of L-BFGS-B's rules stopped it. The tolerances are relative to the start of the fit
/// (of the round, when K is refitted; of the resume, for a resumed run), so they mean the same
/// whatever the loss's units and however bad the start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// The projected gradient's norm fell to this fraction of its norm at the start.
    ProjectedGradient { ratio: f64, tolerance: f64 },
    /// The loss fell by this fraction of itself over the last [`LOSS_WINDOW`] iterations.
    LossChange { relative: f64, tolerance: f64 },
    /// Neither the quasi-Newton step nor steepest descent lowered the loss along the projected
    /// path: the loss cannot be resolved any finer.
    NoDecrease,
    /// The iteration cap (`epochs`).
    IterationCap(usize),
}

impl Stop {
    /// Whether the fit converged (anything but the cap).
    pub fn converged(self) -> bool {
        !matches!(self, Stop::IterationCap(_))
    }
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::ProjectedGradient { ratio, tolerance } => write!(
                f,
                "projected gradient {ratio:.1e} of the start's, below {tolerance:.0e}"
            ),
            Stop::LossChange {
                relative,
                tolerance,
            } => write!(
                f,
                "loss change {relative:.1e} relative over {LOSS_WINDOW} iterations, below {tolerance:.0e}"
            ),
            Stop::NoDecrease => write!(
                f,
                "no decrease along the projected path (the loss's precision)"
            ),
            Stop::IterationCap(n) => write!(f, "iteration cap {n}"),
        }
    }
}

/// What is minimised: the training loss, watched on a validation set, within the variables'
/// bounds.
#[derive(Clone, Copy)]
pub struct Problem<'a> {
    pub train: &'a dyn Model,
    pub validation: Option<&'a dyn Model>,
    pub loss: Loss,
    pub vars: &'a [Variable],
}

impl Problem<'_> {
    fn record(&self, epoch: usize, theta: Vec<f64>) -> Epoch {
        Epoch {
            epoch,
            train: self.train.loss(&self.loss, &theta),
            validation: self.validation.map(|v| v.loss(&self.loss, &theta)),
            theta,
        }
    }
}

/// Adam's state between epochs: everything a checkpoint needs to resume exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdamState {
    pub theta: Vec<f64>,
    pub m: Vec<f64>,
    pub v: Vec<f64>,
    /// Steps taken.
    pub t: u64,
    /// Epochs finished.
    pub epoch: usize,
    /// θ with the lowest validation loss so far (the training loss without validation).
    pub best_theta: Vec<f64>,
    pub best_loss: f64,
    pub best_epoch: usize,
}

impl AdamState {
    pub fn new(start: &[f64]) -> AdamState {
        AdamState {
            theta: start.to_vec(),
            m: vec![0.0; start.len()],
            v: vec![0.0; start.len()],
            t: 0,
            epoch: 0,
            best_theta: start.to_vec(),
            best_loss: f64::INFINITY,
            best_epoch: 0,
        }
    }
}

/// The result of a fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Fitted {
    /// The best θ: lowest validation loss, or the last θ without validation.
    pub theta: Vec<f64>,
    pub best_epoch: usize,
    pub epochs: usize,
    pub finish: Finish,
}

const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPSILON: f64 = 1e-12;

fn project(theta: &mut [f64], vars: &[Variable]) {
    for (x, v) in theta.iter_mut().zip(vars) {
        *x = x.clamp(v.min, v.max);
    }
}

/// Tracks the best epoch; true when patience has run out.
fn note_best(state: &mut AdamState, e: &Epoch, patience: usize) -> bool {
    let score = e.validation.unwrap_or(e.train);
    if score < state.best_loss {
        state.best_loss = score;
        state.best_theta = e.theta.clone();
        state.best_epoch = e.epoch;
    }
    e.validation.is_some() && patience > 0 && e.epoch >= state.best_epoch + patience
}

/// Runs Adam from `state` (fresh or restored) until the epochs are done, validation stops
/// improving, or `on_epoch` says stop.
pub fn adam(
    problem: Problem,
    settings: &FitSettings,
    state: &mut AdamState,
    mut on_epoch: impl FnMut(&Epoch, &AdamState) -> Control,
) -> Fitted {
    let Problem {
        train,
        validation,
        loss,
        vars,
    } = problem;
    let loss = &loss;
    let n = train.len();
    let batch = settings.batch.unwrap_or(n).clamp(1, n.max(1));
    let batches: Vec<usize> = (0..n.div_ceil(batch)).collect();
    let mut grad = vec![0.0; vars.len()];
    let mut finish = Finish::Done;
    while state.epoch < settings.epochs {
        let epoch = state.epoch + 1;
        let lr = settings.learning_rate / (1.0 + epoch as f64 / 10.0).sqrt();
        // Batches are contiguous ranges (the data were shuffled when split), visited in an
        // order drawn from (seed, epoch) so a resumed run repeats it.
        let mut order = batches.clone();
        if order.len() > 1 {
            let mut rng =
                rand_chacha::ChaCha8Rng::seed_from_u64(settings.seed ^ (epoch as u64) << 20);
            order.shuffle(&mut rng);
        }
        for b in order {
            let range = b * batch..((b + 1) * batch).min(n);
            train.loss_and_gradient(loss, &state.theta, range, &mut grad);
            state.t += 1;
            let t = state.t as i32;
            for i in 0..vars.len() {
                let g = grad[i];
                state.m[i] = BETA1 * state.m[i] + (1.0 - BETA1) * g;
                state.v[i] = BETA2 * state.v[i] + (1.0 - BETA2) * g * g;
                let m_hat = state.m[i] / (1.0 - BETA1.powi(t));
                let v_hat = state.v[i] / (1.0 - BETA2.powi(t));
                state.theta[i] -= lr * vars[i].c_end * m_hat / (v_hat.sqrt() + EPSILON);
            }
            project(&mut state.theta, vars);
        }
        state.epoch = epoch;
        let record = problem.record(epoch, state.theta.clone());
        let out_of_patience = note_best(state, &record, settings.patience);
        if on_epoch(&record, state) == Control::Stop {
            finish = Finish::Interrupted;
            break;
        }
        if out_of_patience {
            finish = Finish::EarlyStop;
            break;
        }
    }
    Fitted {
        theta: if validation.is_some() {
            state.best_theta.clone()
        } else {
            state.theta.clone()
        },
        best_epoch: state.best_epoch,
        epochs: state.epoch,
        finish,
    }
}

/// The L-BFGS-B problem in scaled coordinates u = θ/c_end, where the box is
/// [min/c_end, max/c_end].
struct Scaled<'a> {
    objective: &'a dyn Model,
    loss: Loss,
    vars: &'a [Variable],
    /// Multiplies cost and gradient so the start's largest gradient component is 1: the first
    /// step (before there is curvature) is then about one c_end, not a hair's breadth, which
    /// matters when the loss is measured through an engine that rounds its options.
    factor: f64,
}

impl Scaled<'_> {
    fn theta(&self, u: &[f64]) -> Vec<f64> {
        u.iter().zip(self.vars).map(|(u, v)| u * v.c_end).collect()
    }

    fn lower(&self, i: usize) -> f64 {
        self.vars[i].min / self.vars[i].c_end
    }

    fn upper(&self, i: usize) -> f64 {
        self.vars[i].max / self.vars[i].c_end
    }

    /// u clamped into the box.
    fn project(&self, u: &mut [f64]) {
        for (i, x) in u.iter_mut().enumerate() {
            *x = x.clamp(self.lower(i), self.upper(i));
        }
    }

    /// Cost and gradient at a point of the box.
    fn cost_and_gradient(&self, u: &[f64]) -> (f64, Vec<f64>) {
        let theta = self.theta(u);
        let mut grad = vec![0.0; u.len()];
        let cost = self.objective.loss_and_gradient(
            &self.loss,
            &theta,
            0..self.objective.len(),
            &mut grad,
        );
        for (g, v) in grad.iter_mut().zip(self.vars) {
            *g *= v.c_end * self.factor;
        }
        (cost * self.factor, grad)
    }

    /// The norm of the projected gradient step P(u − g) − u: 0 exactly where no feasible
    /// direction descends.
    fn projected_gradient_norm(&self, u: &[f64], g: &[f64]) -> f64 {
        (0..u.len())
            .map(|i| ((u[i] - g[i]).clamp(self.lower(i), self.upper(i)) - u[i]).powi(2))
            .sum::<f64>()
            .sqrt()
    }

    /// `d` without the components that push a variable on its bound further out (the
    /// projection would cancel them, leaving a path whose slope is not d·g).
    fn feasible(&self, u: &[f64], mut d: Vec<f64>) -> Vec<f64> {
        for (i, x) in d.iter_mut().enumerate() {
            if (u[i] <= self.lower(i) && *x < 0.0) || (u[i] >= self.upper(i) && *x > 0.0) {
                *x = 0.0;
            }
        }
        d
    }

    /// Backtracking along the projection of u + t·d onto the box, from t = 1: the first point
    /// with the Armijo decrease (a strict decrease, measured on the projected step), with its
    /// cost and gradient; `None` when 40 halvings find none.
    fn search(&self, u: &[f64], f: f64, g: &[f64], d: &[f64]) -> Option<(Vec<f64>, f64, Vec<f64>)> {
        let mut step = 1.0;
        for _ in 0..40 {
            let mut trial: Vec<f64> = u.iter().zip(d).map(|(u, d)| u + step * d).collect();
            self.project(&mut trial);
            let moved: f64 = trial
                .iter()
                .zip(u)
                .zip(g)
                .map(|((t, u), g)| (t - u) * g)
                .sum();
            if moved < 0.0 {
                let (ft, gt) = self.cost_and_gradient(&trial);
                if ft.is_finite() && ft < f && ft <= f + 1e-4 * moved {
                    return Some((trial, ft, gt));
                }
            }
            step *= 0.5;
        }
        None
    }

    /// Variables held at a bound: at the bound with the gradient pushing outwards. The others
    /// (a variable at its bound whose gradient points inwards included) are free to move.
    fn active(&self, u: &[f64], g: &[f64]) -> Vec<bool> {
        (0..u.len())
            .map(|i| (u[i] <= self.lower(i) && g[i] > 0.0) || (u[i] >= self.upper(i) && g[i] < 0.0))
            .collect()
    }
}

/// The limited-memory quasi-Newton direction −H·g on the free variables (two-loop recursion with
/// the pairs' dot products taken over the free variables only); 0 on the active ones.
fn lbfgs_direction(g: &[f64], active: &[bool], pairs: &[(Vec<f64>, Vec<f64>)]) -> Vec<f64> {
    let dot = |a: &[f64], b: &[f64]| -> f64 {
        (0..a.len())
            .filter(|&i| !active[i])
            .map(|i| a[i] * b[i])
            .sum()
    };
    let mut q: Vec<f64> = (0..g.len())
        .map(|i| if active[i] { 0.0 } else { g[i] })
        .collect();
    let mut alphas = Vec::with_capacity(pairs.len());
    for (s, y) in pairs.iter().rev() {
        let sy = dot(s, y);
        if sy <= 1e-300 {
            alphas.push(0.0);
            continue;
        }
        let a = dot(s, &q) / sy;
        for i in 0..q.len() {
            if !active[i] {
                q[i] -= a * y[i];
            }
        }
        alphas.push(a);
    }
    if let Some((s, y)) = pairs.last() {
        let (sy, yy) = (dot(s, y), dot(y, y));
        if sy > 1e-300 && yy > 1e-300 {
            q.iter_mut().for_each(|x| *x *= sy / yy);
        }
    }
    for ((s, y), a) in pairs.iter().zip(alphas.into_iter().rev()) {
        let sy = dot(s, y);
        if sy <= 1e-300 {
            continue;
        }
        let b = dot(y, &q) / sy;
        for i in 0..q.len() {
            if !active[i] {
                q[i] += (a - b) * s[i];
            }
        }
    }
    q.iter_mut().for_each(|x| *x = -*x);
    q
}

/// Pairs of (step, gradient change) kept.
const HISTORY: usize = 7;

/// L-BFGS-B as a projected quasi-Newton method: variables at a bound whose gradient points out
/// of the box are held there (the active set); the others take the limited-memory quasi-Newton
/// direction (its components that would push a variable already on its bound further out are
/// dropped: the projection would cancel them); the step is searched along the projection of that
/// direction onto the box (backtracking with the Armijo condition on the projected step). When no
/// step lowers the loss, it tries steepest descent before giving up. A variable that starts on
/// its bound moves off it as soon as its gradient points inwards, and one whose optimum lies past
/// its bound ends exactly on it.
///
/// It stops on the first of (see [`Stop`]): the projected gradient's norm down to
/// `settings.gradient_tolerance` of its norm at the start; the loss down by at most
/// `settings.loss_tolerance` of itself over the last [`LOSS_WINDOW`] iterations; no decrease;
/// `settings.epochs` iterations. Each iteration is reported as an epoch. A validation set's loss
/// is reported with it (the learning curve) but neither stops the fit nor picks its values: a
/// full-batch quasi-Newton method has no path to stop early on, and the iterate of lowest
/// validation loss is an early one chosen by the validation set's noise (issue 30: patience
/// stopped it 20 iterations after its fifth iterate and returned that one, with the piece values
/// 57–84% of the way from the start to the truth, where it converges at 89–100%; see
/// docs/gradients.md, "When L-BFGS-B stops"). The values returned are the last iterate's. A resumed run starts again from its
/// checkpointed θ with an empty history, so it costs a few iterations to rebuild it.
pub fn lbfgs(
    problem: Problem,
    settings: &FitSettings,
    start: &[f64],
    first_epoch: usize,
    mut on_epoch: impl FnMut(&Epoch) -> Control,
) -> Fitted {
    let mut scaled = Scaled {
        objective: problem.train,
        loss: problem.loss,
        vars: problem.vars,
        factor: 1.0,
    };
    let mut u: Vec<f64> = start
        .iter()
        .zip(problem.vars)
        .map(|(t, v)| t / v.c_end)
        .collect();
    scaled.project(&mut u);
    let largest = scaled
        .cost_and_gradient(&u)
        .1
        .iter()
        .fold(0.0f64, |m, g| m.max(g.abs()));
    if largest.is_finite() && largest > 0.0 {
        scaled.factor = 1.0 / largest;
    }
    let (mut f, mut g) = scaled.cost_and_gradient(&u);
    let initial_gradient = scaled.projected_gradient_norm(&u, &g);
    let mut losses = vec![f];
    let mut epoch = first_epoch;
    let mut pairs: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    let finish = loop {
        let norm = scaled.projected_gradient_norm(&u, &g);
        let ratio = if initial_gradient > 0.0 {
            norm / initial_gradient
        } else {
            0.0
        };
        if ratio <= settings.gradient_tolerance {
            break Finish::Stopped(Stop::ProjectedGradient {
                ratio,
                tolerance: settings.gradient_tolerance,
            });
        }
        if let Some(&before) = losses.iter().rev().nth(LOSS_WINDOW) {
            let relative = (before - f) / f.abs().max(f64::MIN_POSITIVE);
            if relative <= settings.loss_tolerance {
                break Finish::Stopped(Stop::LossChange {
                    relative,
                    tolerance: settings.loss_tolerance,
                });
            }
        }
        if epoch >= settings.epochs {
            break Finish::Stopped(Stop::IterationCap(settings.epochs));
        }
        let active = scaled.active(&u, &g);
        let quasi_newton = scaled.feasible(&u, lbfgs_direction(&g, &active, &pairs));
        let steepest = || {
            (0..g.len())
                .map(|i| if active[i] { 0.0 } else { -g[i] })
                .collect::<Vec<f64>>()
        };
        let slope: f64 = quasi_newton.iter().zip(&g).map(|(d, g)| d * g).sum();
        // Not a descent direction (bad curvature): steepest descent on the free variables.
        let mut next = if slope < 0.0 {
            scaled.search(&u, f, &g, &quasi_newton)
        } else {
            None
        };
        if next.is_none() {
            pairs.clear();
            next = scaled.search(&u, f, &g, &steepest());
        }
        let Some((trial, ft, gt)) = next else {
            break Finish::Stopped(Stop::NoDecrease);
        };
        let s: Vec<f64> = trial.iter().zip(&u).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = gt.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy: f64 = s.iter().zip(&y).map(|(a, b)| a * b).sum();
        if sy > 1e-12 * s.iter().map(|x| x * x).sum::<f64>().sqrt() {
            pairs.push((s, y));
            if pairs.len() > HISTORY {
                pairs.remove(0);
            }
        }
        (u, f, g) = (trial, ft, gt);
        losses.push(f);
        epoch += 1;
        if on_epoch(&problem.record(epoch, scaled.theta(&u))) == Control::Stop {
            break Finish::Interrupted;
        }
    };
    Fitted {
        theta: scaled.theta(&u),
        best_epoch: epoch,
        epochs: epoch,
        finish,
    }
}

/// K as a fit holds it: fixed by the config, or (`k = "fit"`) refitted at the current weights
/// while `refitting`.
///
/// Why refit: K fitted once at a bad start takes part of the start's error, and the weights then
/// converge to the truth scaled by 1/K (15% high on a known-truth case). Alternating between the
/// weights (a round of [`K_ROUND`] epochs, or until L-BFGS-B converges) and K (the 1-D fit at
/// those weights) descends the joint loss, so both land where the loss is lowest in K and θ
/// together. Refitting stops once K moves less than [`crate::positions::K_SETTLED`] in a round; from then on the
/// fit is the plain one, and a validation set's early stopping sees one K.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldK {
    pub k: f64,
    pub refitting: bool,
}

/// Epochs between refits of K.
pub const K_ROUND: usize = 10;

/// What a fit with [`fit_holding_k`] reports, in order, to its caller.
pub enum Progress<'a> {
    /// A finished epoch; Adam's state after it (`None` for L-BFGS-B).
    Epoch(&'a Epoch, Option<&'a AdamState>),
    /// K was refitted at the weights of `epoch`: `before` → `held.k`, with the mean training
    /// loss there.
    Refit {
        epoch: usize,
        before: f64,
        loss: f64,
        adam: Option<&'a AdamState>,
    },
}

/// Every training position's (result, score) at θ: what a refit of K needs.
pub type ScoresAt<'a> = dyn Fn(&[f64]) -> anyhow::Result<Vec<(Outcome, f64)>> + 'a;

/// Runs `method` from `state` (Adam's state; for L-BFGS-B only its θ and epoch are used) with
/// K held as `held` says, refitting it between rounds (see [`HeldK`]). `report` sees every epoch
/// and every refit, with K as held at that moment, and may stop the fit. The training and
/// validation losses of an epoch are under the K of its round.
#[allow(clippy::too_many_arguments)]
pub fn fit_holding_k(
    method: GradientMethod,
    train: &dyn Model,
    validation: Option<&dyn Model>,
    kind: LossKind,
    vars: &[Variable],
    settings: &FitSettings,
    state: &mut AdamState,
    held: &mut HeldK,
    scores_at: &ScoresAt,
    mut report: impl FnMut(Progress, &HeldK) -> Control,
) -> anyhow::Result<Fitted> {
    loop {
        let problem = Problem {
            train,
            validation,
            loss: Loss::new(kind, held.k),
            vars,
        };
        let round_end = if held.refitting {
            (state.epoch / K_ROUND + 1) * K_ROUND
        } else {
            usize::MAX
        };
        let mut round_over = false;
        let h = *held;
        let mut on_epoch = |e: &Epoch, a: Option<&AdamState>| {
            let control = report(Progress::Epoch(e, a), &h);
            if control == Control::Continue && e.epoch >= round_end && e.epoch < settings.epochs {
                round_over = true;
                return Control::Stop;
            }
            control
        };
        let fitted = match method {
            GradientMethod::Adam => adam(problem, settings, state, |e, a| on_epoch(e, Some(a))),
            GradientMethod::Lbfgs => {
                let (from, first) = (state.theta.clone(), state.epoch);
                lbfgs(problem, settings, &from, first, |e| {
                    state.theta = e.theta.clone();
                    state.epoch = e.epoch;
                    on_epoch(e, None)
                })
            }
        };
        // L-BFGS-B converged for this K before its iterations ran out: refit too.
        let converged = matches!(fitted.finish, Finish::Stopped(stop) if stop.converged());
        if !held.refitting || !(round_over || converged) {
            return Ok(fitted);
        }
        let before = held.k;
        let fit = fit_k(kind, &scores_at(&state.theta)?);
        held.k = fit.k;
        held.refitting = k_still_moving(before, fit.k);
        // Losses under the old K are not comparable with the new: early stopping starts over.
        state.best_loss = f64::INFINITY;
        state.best_epoch = state.epoch;
        let progress = Progress::Refit {
            epoch: state.epoch,
            before,
            loss: fit.loss,
            adam: (method == GradientMethod::Adam).then_some(&*state),
        };
        if report(progress, held) == Control::Stop {
            return Ok(Fitted {
                finish: Finish::Interrupted,
                ..fitted
            });
        }
        if converged && !held.refitting {
            return Ok(fitted);
        }
    }
}

#[cfg(test)]
mod tests;
