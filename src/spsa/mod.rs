//! The SPSA schedule, perturbation and update, as pure code: no I/O, no clocks, no async.
//! Randomness comes in through the caller's RNG, so a seed fixes the whole trajectory.
//!
//! Per variable i, with N iterations:
//! c_i = c_end·N^γ, a_end = R_end·c_end², a_i = a_end·(A+N)^α;
//! at iteration k: c_k = c_i/k^γ, a_k = a_i/(A+k)^α, R_k = a_k/c_k².
//! The update is θ_i += R_k·c_k·match/δ_i, with match ∈ [−2, 2] the pair result from the θ+ side.
//! A run extended to N' > N iterations keeps c_i and a_i (and A) from N: c_k and a_k continue
//! along the same curves (see [`Spsa::with_curve`]).
//!
//! A variable added by a resume joins after iteration j with a curve of its own: N_i = N − j,
//! and at iteration k it uses k − j where the others use k, so it starts at its own c_1 and
//! ends at c_end and R_end with the run. A variable a resume dropped is held where it is: no
//! perturbation, no update. Both are [`Part`]s (see [`Spsa::with_parts`]).

pub mod checksum;
pub mod driver;
pub mod rounding;
pub mod track;
pub mod unit;

use rand::Rng;

use crate::vars::Variable;

/// The global schedule constants from the config.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// N: the planned number of iterations.
    pub iterations: u64,
    /// The stability constant A.
    pub a: f64,
    pub alpha: f64,
    pub gamma: f64,
}

/// The gains of one iteration for one variable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    pub c_k: f64,
    pub a_k: f64,
}

impl Gains {
    /// R_k = a_k / c_k².
    pub fn r_k(&self) -> f64 {
        self.a_k / (self.c_k * self.c_k)
    }
}

/// How a variable takes part in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Part {
    /// From the first iteration, on the run's curve.
    #[default]
    Always,
    /// Added by a resume: from iteration `after + 1`, on a curve of `curve − after`
    /// iterations (`curve`: the run's N when it joined). Before that it is held.
    After { after: u64, curve: u64 },
    /// Dropped by a resume: held at its θ, played as a fixed value.
    Held,
}

/// The optimizer: per-variable constants, bounds, and the rules that use them.
#[derive(Clone, Debug)]
pub struct Spsa {
    schedule: Schedule,
    /// c_i = c_end·N^γ.
    c: Vec<f64>,
    /// a_i = R_end·c_end²·(A+N)^α.
    a: Vec<f64>,
    min: Vec<f64>,
    max: Vec<f64>,
    /// Each variable's [`Part`], when any is not [`Part::Always`] (a run whose variables
    /// changed on a resume); `None` keeps the one-curve loops.
    parts: Option<Vec<Part>>,
}

/// One iteration's trial: the sign vector and the two clipped points to play.
#[derive(Clone, Debug, PartialEq)]
pub struct Perturbation {
    /// The iteration k (1-based).
    pub iteration: u64,
    /// δ: +1.0 or −1.0 per variable.
    pub delta: Vec<f64>,
    pub plus: Vec<f64>,
    pub minus: Vec<f64>,
}

impl Spsa {
    pub fn new(vars: &[Variable], schedule: Schedule) -> Self {
        Spsa::with_curve(vars, schedule, schedule.iterations)
    }

    /// A run extended past the N it was planned with: the constants c_i and a_i come from that
    /// N (`curve`), so c_k and a_k go on along the same curves for k > N and nothing already
    /// applied changes; `schedule.iterations` is the new total.
    pub fn with_curve(vars: &[Variable], schedule: Schedule, curve: u64) -> Self {
        Spsa::with_parts(vars, schedule, curve, &[])
    }

    /// [`Spsa::with_curve`] with each variable's [`Part`] (`parts[i]`; missing ones are
    /// [`Part::Always`]): a joined variable's constants come from its own N, a held one's are 0.
    pub fn with_parts(vars: &[Variable], schedule: Schedule, curve: u64, parts: &[Part]) -> Self {
        let part = |i: usize| parts.get(i).copied().unwrap_or_default();
        let (mut c, mut a) = (
            Vec::with_capacity(vars.len()),
            Vec::with_capacity(vars.len()),
        );
        for (i, v) in vars.iter().enumerate() {
            let n = match part(i) {
                Part::Always => curve as f64,
                Part::After { after, curve } => curve.saturating_sub(after).max(1) as f64,
                Part::Held => 0.0,
            };
            c.push(v.c_end * n.powf(schedule.gamma));
            a.push(v.r_end * v.c_end * v.c_end * (schedule.a + n).powf(schedule.alpha));
        }
        let parts = (0..vars.len()).map(part).collect::<Vec<_>>();
        Spsa {
            schedule,
            c,
            a,
            min: vars.iter().map(|v| v.min).collect(),
            max: vars.iter().map(|v| v.max).collect(),
            parts: parts.iter().any(|p| *p != Part::Always).then_some(parts),
        }
    }

    /// Variable `index`'s factors at the iteration of `f`: `f` itself on the run's curve, its
    /// own for a joined variable, `None` while it is held.
    fn own_factors(&self, index: usize, f: Factors) -> Option<Factors> {
        match self.parts.as_ref().map_or(Part::Always, |p| p[index]) {
            Part::Always => Some(f),
            Part::After { after, .. } if f.k > after => Some(self.factors(f.k - after)),
            Part::After { .. } | Part::Held => None,
        }
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub fn len(&self) -> usize {
        self.c.len()
    }

    pub fn is_empty(&self) -> bool {
        self.c.is_empty()
    }

    /// The factors k^−γ and (A+k)^−α shared by all variables at iteration k: the only powers
    /// an iteration needs. The driver computes them once per trial and keeps them until the
    /// trial's update is applied.
    pub fn factors(&self, k: u64) -> Factors {
        let x = k as f64;
        Factors {
            c: x.powf(-self.schedule.gamma),
            a: (self.schedule.a + x).powf(-self.schedule.alpha),
            k,
        }
    }

    /// The gains of variable `index` at iteration k.
    pub fn gains(&self, index: usize, k: u64) -> Gains {
        self.gains_at(index, self.factors(k))
    }

    /// The gains of variable `index` at the iteration whose factors are `f` (0 while it is
    /// held).
    pub fn gains_at(&self, index: usize, f: Factors) -> Gains {
        match self.own_factors(index, f) {
            Some(f) => Gains {
                c_k: self.c[index] * f.c,
                a_k: self.a[index] * f.a,
            },
            None => Gains { c_k: 0.0, a_k: 0.0 },
        }
    }

    /// Whether variable `index` moves at the iteration of `f` (not held).
    pub fn moves_at(&self, index: usize, f: Factors) -> bool {
        self.own_factors(index, f).is_some()
    }

    /// Clip one variable's value to its bounds (as the perturbation and the update do).
    pub fn clip(&self, index: usize, value: f64) -> f64 {
        within(value, self.min[index], self.max[index])
    }

    /// Variable `index`'s bounds (min, max).
    pub fn bounds(&self, index: usize) -> (f64, f64) {
        (self.min[index], self.max[index])
    }

    /// Draw δ: ±1 per variable, 64 variables per random word.
    pub fn draw_delta<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<f64> {
        signs(rng, self.len()).collect()
    }

    /// Draw δ for iteration k and the clipped points θ ± c_k·δ.
    pub fn perturb<R: Rng + ?Sized>(&self, theta: &[f64], k: u64, rng: &mut R) -> Perturbation {
        let mut p = Perturbation {
            iteration: k,
            delta: Vec::new(),
            plus: Vec::new(),
            minus: Vec::new(),
        };
        let mut c_k = Vec::new();
        self.perturb_into(theta, self.factors(k), rng, &mut p, &mut c_k);
        p
    }

    /// [`Spsa::perturb`] at the factors `f` of iteration `p.iteration`, into `p`'s vectors
    /// (reused, not reallocated), with each variable's c_k into `c_k`.
    pub fn perturb_into<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        f: Factors,
        rng: &mut R,
        p: &mut Perturbation,
        c_k: &mut Vec<f64>,
    ) {
        let n = self.len();
        for v in [&mut p.delta, &mut *c_k, &mut p.plus, &mut p.minus] {
            v.resize(n, 0.0);
        }
        if self.parts.is_some() {
            for (i, d) in (0..n).zip(signs(rng, n)) {
                p.delta[i] = d;
                c_k[i] = self.gains_at(i, f).c_k;
                let step = c_k[i] * d;
                p.plus[i] = self.clip(i, theta[i] + step);
                p.minus[i] = self.clip(i, theta[i] - step);
            }
            return;
        }
        // Every slice cut to n: one loop, without bounds checks.
        let (theta, c, min, max) = (&theta[..n], &self.c[..n], &self.min[..n], &self.max[..n]);
        let (delta, c_k) = (&mut p.delta[..n], &mut c_k[..n]);
        let (plus, minus) = (&mut p.plus[..n], &mut p.minus[..n]);
        for (i, d) in (0..n).zip(signs(rng, n)) {
            delta[i] = d;
            c_k[i] = c[i] * f.c;
            let step = c_k[i] * d;
            plus[i] = within(theta[i] + step, min[i], max[i]);
            minus[i] = within(theta[i] - step, min[i], max[i]);
        }
    }

    /// Apply θ += R_k·c_k·match/δ for iteration k with sign vector δ, then clip θ.
    pub fn apply(&self, theta: &mut [f64], k: u64, delta: &[f64], match_result: f64) {
        self.apply_at(theta, self.factors(k), delta.iter().copied(), match_result);
    }

    /// [`Spsa::apply`] at the factors `f` of the iteration, with its signs as they come (from
    /// [`signs`] of the iteration's stream, without collecting them).
    pub fn apply_at(
        &self,
        theta: &mut [f64],
        f: Factors,
        delta: impl IntoIterator<Item = f64>,
        match_result: f64,
    ) {
        let n = theta.len().min(self.len());
        if self.parts.is_some() {
            for (i, d) in (0..n).zip(delta) {
                if let Some(own) = self.own_factors(i, f) {
                    let ratio = (self.a[i] * own.a) / (self.c[i] * own.c);
                    theta[i] = self.clip(i, theta[i] + ratio * match_result * d);
                }
            }
            return;
        }
        let (theta, a, c) = (&mut theta[..n], &self.a[..n], &self.c[..n]);
        let (min, max) = (&self.min[..n], &self.max[..n]);
        let mut delta = delta.into_iter();
        for start in (0..n).step_by(RATIO_LANES) {
            // R_k·c_k = a_k/c_k, of up to RATIO_LANES variables first, in a loop of their own:
            // those divisions wait for nothing, so they go several to an instruction instead of
            // one after another (each lane rounds as a scalar division does: the same bits).
            let m = (n - start).min(RATIO_LANES);
            let (a, c) = (&a[start..start + m], &c[start..start + m]);
            let mut ratio = [0.0; RATIO_LANES];
            if let (Ok(a), Ok(c)) = (
                <&[f64; RATIO_LANES]>::try_from(a),
                <&[f64; RATIO_LANES]>::try_from(c),
            ) {
                for j in 0..RATIO_LANES {
                    ratio[j] = (a[j] * f.a) / (c[j] * f.c);
                }
            } else {
                for j in 0..m {
                    ratio[j] = (a[j] * f.a) / (c[j] * f.c);
                }
            }
            // 1/δ = δ for δ = ±1.
            for (j, d) in (0..m).zip(&mut delta) {
                let i = start + j;
                let step = ratio[j] * match_result * d;
                theta[i] = within(theta[i] + step, min[i], max[i]);
            }
        }
    }
}

impl Spsa {
    /// The optimizer as bytes (little-endian; every constant bit for bit), for a θ log that
    /// replays its updates: [`Spsa::decode`] gives back the same arithmetic.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let s = &self.schedule;
        out.extend_from_slice(&s.iterations.to_le_bytes());
        for x in [s.a, s.alpha, s.gamma] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.extend_from_slice(&(self.len() as u64).to_le_bytes());
        for column in [&self.c, &self.a, &self.min, &self.max] {
            for x in column.iter() {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        match &self.parts {
            None => out.push(0),
            Some(parts) => {
                out.push(1);
                for p in parts {
                    let (tag, after, curve) = match *p {
                        Part::Always => (0u8, 0, 0),
                        Part::After { after, curve } => (1, after, curve),
                        Part::Held => (2, 0, 0),
                    };
                    out.push(tag);
                    out.extend_from_slice(&after.to_le_bytes());
                    out.extend_from_slice(&curve.to_le_bytes());
                }
            }
        }
    }

    /// The optimizer [`Spsa::encode`] wrote at the start of `bytes`, and the bytes after it;
    /// `None` if they are not one.
    pub fn decode(bytes: &[u8]) -> Option<(Spsa, &[u8])> {
        let mut at = 0usize;
        let mut word = || -> Option<[u8; 8]> {
            let w = bytes.get(at..at + 8)?.try_into().ok()?;
            at += 8;
            Some(w)
        };
        let iterations = u64::from_le_bytes(word()?);
        let [a, alpha, gamma] = [
            f64::from_le_bytes(word()?),
            f64::from_le_bytes(word()?),
            f64::from_le_bytes(word()?),
        ];
        let n = usize::try_from(u64::from_le_bytes(word()?)).ok()?;
        if n > bytes.len() / 32 {
            return None;
        }
        let mut column =
            || -> Option<Vec<f64>> { (0..n).map(|_| word().map(f64::from_le_bytes)).collect() };
        let (c, a_i, min, max) = (column()?, column()?, column()?, column()?);
        let mut rest = bytes.get(at..)?;
        let (&flag, tail) = rest.split_first()?;
        rest = tail;
        let parts = match flag {
            0 => None,
            1 => {
                let mut parts = Vec::with_capacity(n);
                for _ in 0..n {
                    let (&tag, tail) = rest.split_first()?;
                    let after = u64::from_le_bytes(tail.get(..8)?.try_into().ok()?);
                    let curve = u64::from_le_bytes(tail.get(8..16)?.try_into().ok()?);
                    rest = &tail[16..];
                    parts.push(match tag {
                        0 => Part::Always,
                        1 => Part::After { after, curve },
                        2 => Part::Held,
                        _ => return None,
                    });
                }
                Some(parts)
            }
            _ => return None,
        };
        let schedule = Schedule {
            iterations,
            a,
            alpha,
            gamma,
        };
        let spsa = Spsa {
            schedule,
            c,
            a: a_i,
            min,
            max,
            parts,
        };
        Some((spsa, rest))
    }
}

/// Variables whose update ratios [`Spsa::apply_at`] divides at once.
const RATIO_LANES: usize = 8;

/// `x.clamp(min, max)` for bounds already checked (min ≤ max when the variables were read):
/// clamp's own two comparisons (the same value, NaN and signed zeros included), which compile
/// to a max and a min instruction, without its assertion.
#[inline]
fn within(x: f64, min: f64, max: f64) -> f64 {
    let x = if x < min { min } else { x };
    if x > max { max } else { x }
}

/// θ of a run as it was before a resume added variables, with the start values (`start`, of
/// every variable) of those it lacks: where they stood until they joined.
pub fn padded(theta: &[f64], start: &[f64]) -> Vec<f64> {
    let mut out = theta.to_vec();
    out.extend_from_slice(start.get(theta.len()..).unwrap_or_default());
    out
}

/// The per-iteration factors of the schedule: c_k = c_i·`c`, a_k = a_i·`a`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Factors {
    /// k^−γ.
    pub c: f64,
    /// (A+k)^−α.
    pub a: f64,
    /// The iteration k they are of (a joined variable's own factors are at k − j).
    pub k: u64,
}

/// The signs δ of `n` variables as drawn from `rng`: ±1 each, 64 per random word, lowest bit
/// first (what [`Spsa::draw_delta`] collects).
pub fn signs<R: Rng + ?Sized>(rng: &mut R, n: usize) -> impl Iterator<Item = f64> + '_ {
    let mut bits = 0u64;
    (0..n).map(move |i| {
        if i % 64 == 0 {
            bits = rng.next_u64();
        }
        let d = if bits & 1 == 1 { 1.0 } else { -1.0 };
        bits >>= 1;
        d
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn var(start: f64, min: f64, max: f64, c_end: f64, r_end: f64) -> Variable {
        Variable {
            name: "v".into(),
            start,
            min,
            max,
            c_end,
            r_end,
            simul_elo: 1.0,
        }
    }

    fn classic() -> Schedule {
        Schedule {
            iterations: 50_000,
            a: 5000.0,
            alpha: 0.602,
            gamma: 0.101,
        }
    }

    #[test]
    fn schedule_ends_at_c_end_and_r_end() {
        let vars = [var(100.0, -1000.0, 1000.0, 100.0, 0.002)];
        let s = Spsa::new(&vars, classic());
        let g = s.gains(0, 50_000);
        assert!((g.c_k - 100.0).abs() < 1e-9, "c_N = {}", g.c_k);
        assert!((g.r_k() - 0.002).abs() < 1e-12, "R_N = {}", g.r_k());
        // Early iterations use bigger perturbations and bigger steps.
        let g1 = s.gains(0, 1);
        let c = 100.0 * 50_000f64.powf(0.101);
        assert!((g1.c_k - c).abs() < 1e-9);
        let a = 0.002 * 100.0 * 100.0 * 55_000f64.powf(0.602);
        assert!((g1.a_k - a / 5001f64.powf(0.602)).abs() < 1e-9);
        assert!(g1.c_k > g.c_k && g1.a_k > g.a_k);
    }

    #[test]
    fn perturbation_is_symmetric_and_clipped() {
        let vars = [
            var(0.0, -1000.0, 1000.0, 10.0, 0.002),
            var(995.0, -1000.0, 1000.0, 10.0, 0.002),
        ];
        let s = Spsa::new(&vars, classic());
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut seen = [0usize; 2];
        for k in 1..200 {
            let theta = [0.0, 995.0];
            let p = s.perturb(&theta, k, &mut rng);
            let c_k = s.gains(0, k).c_k;
            assert!(c_k > 10.0);
            assert_eq!(p.delta[0].abs(), 1.0);
            assert!((p.plus[0] - c_k * p.delta[0]).abs() < 1e-12);
            assert!((p.minus[0] + c_k * p.delta[0]).abs() < 1e-12);
            // Variable 1 sits 5 from its max, closer than c_k: one side is clipped to 1000.
            assert!(p.plus[1].max(p.minus[1]) == 1000.0);
            seen[(p.delta[0] > 0.0) as usize] += 1;
        }
        assert!(seen[0] > 60 && seen[1] > 60, "signs balanced: {seen:?}");
    }

    #[test]
    fn update_follows_the_formula_and_clips() {
        let vars = [var(0.0, -1000.0, 1000.0, 100.0, 0.002)];
        let s = Spsa::new(&vars, classic());
        let mut theta = [5.0];
        s.apply(&mut theta, 10, &[-1.0], 2.0);
        let g = s.gains(0, 10);
        let want = 5.0 + g.r_k() * g.c_k * 2.0 / -1.0;
        assert!((theta[0] - want).abs() < 1e-9);
        let mut theta = [999.9];
        s.apply(&mut theta, 10, &[1.0], 2.0);
        assert_eq!(theta[0], 1000.0);
        s.apply(&mut theta, 10, &[1.0], 0.0);
        assert_eq!(theta[0], 1000.0, "a drawn pair does not move θ");
    }

    /// The update divides a_k/c_k of eight variables at once: the same bits as the formula one
    /// variable at a time, for every count of variables around the chunk's size (full chunks,
    /// a tail, both) and for bounds that clip.
    #[test]
    fn the_update_has_the_bits_of_the_formula_one_variable_at_a_time() {
        let mut rng = ChaCha8Rng::seed_from_u64(20);
        for n in 1..=19 {
            let vars: Vec<_> = (0..n)
                .map(|_| {
                    let c_end = rng.random_range(0.01..50.0);
                    let r_end = rng.random_range(0.0001..0.01);
                    var(0.0, -100.0, rng.random_range(1.0..1000.0), c_end, r_end)
                })
                .collect();
            let s = Spsa::new(&vars, classic());
            for k in [1, 2, 77, 4999, 50_000] {
                let theta: Vec<f64> = (0..n).map(|_| rng.random_range(-99.0..99.0)).collect();
                let delta: Vec<f64> = signs(&mut rng, n).collect();
                let signal = rng.random_range(-4.0..4.0f64).round();
                let f = s.factors(k);
                let mut got = theta.clone();
                s.apply_at(&mut got, f, delta.iter().copied(), signal);
                let want: Vec<f64> = (0..n)
                    .map(|i| {
                        let step = (s.a[i] * f.a) / (s.c[i] * f.c) * signal * delta[i];
                        (theta[i] + step).clamp(s.min[i], s.max[i])
                    })
                    .collect();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{n} variables, k = {k}");
            }
        }
    }

    #[test]
    fn many_variables_draw_independent_signs() {
        let vars: Vec<_> = (0..130).map(|_| var(0.0, -10.0, 10.0, 1.0, 0.0)).collect();
        let s = Spsa::new(&vars, classic());
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let p = s.perturb(&vec![0.0; 130], 1, &mut rng);
        let plus = p.delta.iter().filter(|d| **d > 0.0).count();
        assert!((40..90).contains(&plus), "{plus} of 130 positive");
        assert_ne!(
            p.delta[..64],
            p.delta[64..128],
            "each block of 64 gets fresh bits"
        );
    }

    /// A variable that joins after iteration j is a fresh variable of an (N − j)-iteration
    /// run, shifted by j: its first c_k is that run's c_1, its last is c_end with R_end.
    #[test]
    fn a_joined_variable_runs_its_own_curve_from_its_join() {
        let v = var(0.0, -1000.0, 1000.0, 10.0, 0.002);
        let run = Schedule {
            iterations: 1000,
            ..classic()
        };
        let joined = Spsa::with_parts(
            &[v.clone(), v.clone()],
            run,
            1000,
            &[
                Part::Always,
                Part::After {
                    after: 400,
                    curve: 1000,
                },
            ],
        );
        let own = Spsa::new(
            std::slice::from_ref(&v),
            Schedule {
                iterations: 600,
                ..run
            },
        );
        for k in [401, 402, 700, 1000] {
            let (got, want) = (joined.gains(1, k), own.gains(0, k - 400));
            assert_eq!(got, want, "k = {k}");
        }
        let end = joined.gains(1, 1000);
        assert!((end.c_k - 10.0).abs() < 1e-9 && (end.r_k() - 0.002).abs() < 1e-12);
        // Before it joined it is held; the variable that was there all along is untouched.
        assert_eq!(joined.gains(1, 400), Gains { c_k: 0.0, a_k: 0.0 });
        assert_eq!(joined.gains(0, 700), Spsa::new(&[v], run).gains(0, 700));
    }

    /// A held variable is played at θ on both sides and never moves, at a bound as anywhere;
    /// the others perturb and update with the same bits as in a run without parts.
    #[test]
    fn a_held_variable_stays_at_theta_and_the_others_are_unchanged() {
        let vars = [
            var(0.0, -100.0, 100.0, 5.0, 0.002),
            var(100.0, -100.0, 100.0, 5.0, 0.002),
            var(3.0, -100.0, 100.0, 5.0, 0.002),
        ];
        let held = Spsa::with_parts(&vars, classic(), 50_000, &[Part::Always, Part::Held]);
        let plain = Spsa::new(&vars, classic());
        let theta = vec![1.5, 100.0, 3.0];
        for k in [1, 2, 999] {
            let mut rng = ChaCha8Rng::seed_from_u64(k);
            let p = held.perturb(&theta, k, &mut rng);
            let q = plain.perturb(&theta, k, &mut ChaCha8Rng::seed_from_u64(k));
            assert_eq!((p.plus[1], p.minus[1]), (100.0, 100.0));
            assert_eq!(p.delta, q.delta);
            for i in [0, 2] {
                assert_eq!((p.plus[i], p.minus[i]), (q.plus[i], q.minus[i]));
            }
            let (mut a, mut b) = (theta.clone(), theta.clone());
            held.apply(&mut a, k, &p.delta, 2.0);
            plain.apply(&mut b, k, &p.delta, 2.0);
            assert_eq!(a[1], 100.0);
            assert_eq!(
                (a[0].to_bits(), a[2].to_bits()),
                (b[0].to_bits(), b[2].to_bits())
            );
        }
    }
}
