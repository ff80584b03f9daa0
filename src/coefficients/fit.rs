//! Exact-gradient minimisation of the loss over a coefficient set: Adam (full-batch or
//! mini-batch gradient descent with a training/validation learning curve and early stopping, as
//! in the chess4j tuner) and L-BFGS (RuyTune's method, argmin's implementation).
//!
//! Both work in option units and report each epoch (θ, training loss, validation loss) to a
//! callback on the caller's thread, which writes logs and checkpoints and may stop the fit.
//!
//! Bounds: Adam projects θ onto [min, max] after every step (projected gradient descent). L-BFGS
//! is unconstrained, so it minimises L(P(θ)) + Σ ((θ − P(θ))/c_end)², where P clamps θ into the
//! bounds: inside the box it is the loss itself; outside, the loss stops changing and the
//! quadratic pulls θ back, so the minimiser's projection is the bounded minimiser. The values
//! reported and logged are always P(θ).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{CostFunction, Error as ArgminError, Executor, Gradient, KV, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use super::objective::Model;
use crate::positions::Loss;
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
    /// Most epochs (Adam: passes over the training set; L-BFGS: iterations).
    pub epochs: usize,
    /// Adam's step size, as a fraction of each variable's c_end, decayed as lr/√(1 + epoch/10).
    pub learning_rate: f64,
    /// Positions per Adam step; `None` for the full training set.
    pub batch: Option<usize>,
    /// Stop after this many epochs without a new best validation loss (0: never).
    pub patience: usize,
    /// Seeds the mini-batch order.
    pub seed: u64,
}

impl Default for FitSettings {
    fn default() -> Self {
        FitSettings {
            epochs: 200,
            learning_rate: 1.0,
            batch: None,
            patience: 20,
            seed: 1,
        }
    }
}

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// All epochs done (or L-BFGS converged).
    Done,
    /// The validation loss stopped improving.
    EarlyStop,
    /// The callback asked to stop (Ctrl-C).
    Interrupted,
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

/// A point u with its cost and gradient.
type Evaluated = (Vec<f64>, f64, Vec<f64>);

/// The L-BFGS problem in scaled coordinates u = θ/c_end, with the bound penalty.
struct Scaled<'a> {
    objective: &'a dyn Model,
    loss: Loss,
    vars: &'a [Variable],
    /// The line search asks for the cost and the gradient at the same points: one pass serves
    /// both.
    last: Mutex<Option<Evaluated>>,
    /// Multiplies cost and gradient so the start's largest gradient component is 1: L-BFGS's
    /// first step (before it has curvature) is then about one c_end, not a hair's breadth,
    /// which matters when the loss is measured through an engine that rounds its options.
    factor: f64,
}

impl Scaled<'_> {
    fn theta(&self, u: &[f64]) -> Vec<f64> {
        u.iter().zip(self.vars).map(|(u, v)| u * v.c_end).collect()
    }

    fn projected(&self, u: &[f64]) -> Vec<f64> {
        let mut t = self.theta(u);
        project(&mut t, self.vars);
        t
    }

    fn cost_and_gradient(&self, u: &[f64]) -> (f64, Vec<f64>) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, cost, grad)) = last.as_ref()
            && at.as_slice() == u
        {
            return (*cost, grad.clone());
        }
        let (cost, mut grad) = self.compute(u);
        let cost = cost * self.factor;
        grad.iter_mut().for_each(|g| *g *= self.factor);
        *last = Some((u.to_vec(), cost, grad.clone()));
        (cost, grad)
    }

    fn compute(&self, u: &[f64]) -> (f64, Vec<f64>) {
        let raw = self.theta(u);
        let inside = self.projected(u);
        let mut grad = vec![0.0; u.len()];
        let mut cost = self.objective.loss_and_gradient(
            &self.loss,
            &inside,
            0..self.objective.len(),
            &mut grad,
        );
        for i in 0..u.len() {
            let v = &self.vars[i];
            // dθ/du = c_end; the loss does not move θ outside the bounds.
            let outside = (raw[i] - inside[i]) / v.c_end;
            grad[i] = if outside != 0.0 {
                2.0 * outside
            } else {
                grad[i] * v.c_end
            };
            cost += outside * outside;
        }
        (cost, grad)
    }
}

impl CostFunction for Scaled<'_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, u: &Vec<f64>) -> Result<f64, ArgminError> {
        Ok(self.cost_and_gradient(u).0)
    }
}

impl Gradient for Scaled<'_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, u: &Vec<f64>) -> Result<Vec<f64>, ArgminError> {
        Ok(self.cost_and_gradient(u).1)
    }
}

/// Sends each iteration's parameters to the caller; stops the solver when asked.
struct Relay {
    to_caller: mpsc::Sender<(u64, Vec<f64>)>,
    stop: Arc<AtomicBool>,
}

impl<I: State<Param = Vec<f64>, Float = f64>> Observe<I> for Relay {
    fn observe_iter(&mut self, state: &I, _kv: &KV) -> Result<(), ArgminError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(argmin::core::Error::msg("stopped"));
        }
        if let Some(p) = state.get_param() {
            let _ = self.to_caller.send((state.get_iter(), p.clone()));
        }
        Ok(())
    }
}

/// Runs L-BFGS (history 7, Moré–Thuente line search) from `start` for at most
/// `settings.epochs` iterations. A resumed run starts again from its checkpointed θ with an
/// empty history (argmin's state is not kept), so it costs a few iterations to rebuild it.
pub fn lbfgs(
    problem: Problem,
    settings: &FitSettings,
    start: &[f64],
    first_epoch: usize,
    mut on_epoch: impl FnMut(&Epoch) -> Control,
) -> Fitted {
    let (validation, vars) = (problem.validation, problem.vars);
    let outer = problem;
    let mut problem = Scaled {
        objective: problem.train,
        loss: problem.loss,
        vars,
        last: Mutex::new(None),
        factor: 1.0,
    };
    let u0: Vec<f64> = start.iter().zip(vars).map(|(t, v)| t / v.c_end).collect();
    let largest = problem
        .compute(&u0)
        .1
        .iter()
        .fold(0.0f64, |m, g| m.max(g.abs()));
    if largest.is_finite() && largest > 0.0 {
        problem.factor = 1.0 / largest;
    }
    let iterations = settings.epochs.saturating_sub(first_epoch) as u64;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let mut state = AdamState::new(start);
    state.epoch = first_epoch;
    let mut finish = Finish::Done;
    let mut last = start.to_vec();
    std::thread::scope(|s| {
        let relay = Relay {
            to_caller: tx,
            stop: stop.clone(),
        };
        let problem = &problem;
        let solver_thread = s.spawn(move || {
            if iterations == 0 {
                drop(relay);
                return;
            }
            let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
                .with_tolerance_grad(1e-12)
                .and_then(|s| s.with_tolerance_cost(1e-15));
            let Ok(solver) = solver else { return };
            let _ = Executor::new(ScaledRef(problem), solver)
                .configure(|st| st.param(u0).max_iters(iterations))
                .add_observer(relay, ObserverMode::Always)
                .run();
        });
        for (_, u) in rx.iter() {
            let theta = problem.projected(&u);
            state.epoch += 1;
            let record = outer.record(state.epoch, theta);
            last = record.theta.clone();
            let out_of_patience = note_best(&mut state, &record, settings.patience);
            if on_epoch(&record) == Control::Stop {
                finish = Finish::Interrupted;
                stop.store(true, Ordering::Relaxed);
                break;
            }
            if out_of_patience {
                finish = Finish::EarlyStop;
                stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        let _ = solver_thread.join();
    });
    Fitted {
        theta: if validation.is_some() {
            state.best_theta
        } else {
            last
        },
        best_epoch: state.best_epoch,
        epochs: state.epoch,
        finish,
    }
}

/// argmin's executor owns its problem; a reference lets the caller keep the data.
struct ScaledRef<'a>(&'a Scaled<'a>);

impl CostFunction for ScaledRef<'_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, u: &Vec<f64>) -> Result<f64, ArgminError> {
        self.0.cost(u)
    }
}

impl Gradient for ScaledRef<'_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, u: &Vec<f64>) -> Result<Vec<f64>, ArgminError> {
        self.0.gradient(u)
    }
}

#[cfg(test)]
mod tests;
