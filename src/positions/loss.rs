//! The losses a tune from labelled positions minimises, per position and as a mean, with their
//! derivatives with respect to the score (so gradient methods reuse them), and the fit of K.
//!
//! - `texel` (Texel's tuning method): ℓ = (R − σ(K·q))², σ(s) = 1/(1 + 10^(−s/400)), R ∈ {1, ½, 0}.
//! - `tanh` (RuyTune): ℓ = (R − tanh(0.0043·K·q))², R ∈ {1, 0, −1}; K = 1 is RuyTune's own scale.
//!
//! q is the engine's score in centipawns from White's side. The mean over N positions is the loss
//! of a parameter set; both losses lie in [0, 1] (texel) or [0, 4] (tanh).

use super::labelled::Outcome;

/// ln(10)/400: dσ(s)/ds = LN10_OVER_400 · σ(s)·(1 − σ(s)).
const LN10_OVER_400: f64 = std::f64::consts::LN_10 / 400.0;

/// RuyTune's tanh scale per centipawn.
pub const TANH_SCALE: f64 = 0.0043;

/// Which loss function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossKind {
    #[default]
    Texel,
    Tanh,
}

impl LossKind {
    pub fn name(self) -> &'static str {
        match self {
            LossKind::Texel => "texel",
            LossKind::Tanh => "tanh",
        }
    }
}

/// A loss function with its scale K fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Loss {
    pub kind: LossKind,
    pub k: f64,
}

impl Loss {
    pub fn new(kind: LossKind, k: f64) -> Loss {
        Loss { kind, k }
    }

    /// The target R for a result: White's score (texel) or its sign (tanh).
    pub fn target(&self, outcome: Outcome) -> f64 {
        match self.kind {
            LossKind::Texel => outcome.white_score(),
            LossKind::Tanh => outcome.white_sign(),
        }
    }

    /// The predicted result for White's score q (centipawns).
    pub fn predict(&self, q: f64) -> f64 {
        match self.kind {
            LossKind::Texel => sigmoid(self.k * q),
            LossKind::Tanh => (TANH_SCALE * self.k * q).tanh(),
        }
    }

    /// ℓ(R, q) = (R − prediction(q))².
    pub fn point(&self, outcome: Outcome, q: f64) -> f64 {
        let e = self.target(outcome) - self.predict(q);
        e * e
    }

    /// dℓ/dq: −2·(R − p)·dp/dq.
    pub fn point_derivative(&self, outcome: Outcome, q: f64) -> f64 {
        self.point_with_derivative(outcome, q).1
    }

    /// ℓ and dℓ/dq together, the prediction computed once (the exact-gradient methods call
    /// this for every position of every epoch).
    pub fn point_with_derivative(&self, outcome: Outcome, q: f64) -> (f64, f64) {
        let p = self.predict(q);
        let dp = match self.kind {
            LossKind::Texel => self.k * LN10_OVER_400 * p * (1.0 - p),
            LossKind::Tanh => TANH_SCALE * self.k * (1.0 - p * p),
        };
        let e = self.target(outcome) - p;
        (e * e, -2.0 * e * dp)
    }

    /// Σℓ over a block of positions, replacing each score in `q` (cp, White's view) by dℓ/dq.
    /// The same values as [`Loss::point_with_derivative`] to within a few units in the last
    /// place (its exp is [`exp_vectorisable`], not libm's, and the sum runs in lanes), written so
    /// the compiler vectorises it: the exact-gradient epochs call it for every position, and the
    /// scalar form was half of an epoch. Always inlined, so a caller compiled for wider vectors
    /// (the epoch's AVX2 version) gets them here too.
    #[inline(always)]
    pub fn block_with_derivative(&self, outcomes: &[Outcome], q: &mut [f64]) -> f64 {
        let k = self.k;
        match self.kind {
            LossKind::Texel => {
                let a = k * LN10_OVER_400;
                sum_in_lanes(outcomes, q, |o, x| {
                    // p = 1/(1 + v), and 1 − p = v·p without a subtraction.
                    let v = exp_vectorisable(-a * x);
                    let p = 1.0 / (1.0 + v);
                    let e = f64::from(o) * 0.5 - p;
                    (e * e, -2.0 * e * a * v * p * p)
                })
            }
            LossKind::Tanh => {
                let b = TANH_SCALE * k;
                sum_in_lanes(outcomes, q, |o, x| {
                    // tanh(y) = 1 − 2s with s = 1/(1 + u), u = e^(2y): finite at both ends with
                    // the clamped exp, and 1 − tanh² = 4·u·s² without a subtraction.
                    let u = exp_vectorisable(2.0 * b * x);
                    let s = 1.0 / (1.0 + u);
                    let e = f64::from(o) - 1.0 - (1.0 - 2.0 * s);
                    (e * e, -8.0 * e * b * u * s * s)
                })
            }
        }
    }

    /// The mean loss over (result, score) pairs; 0 for none.
    pub fn mean(&self, scored: impl IntoIterator<Item = (Outcome, f64)>) -> f64 {
        let (mut sum, mut n) = (0.0, 0usize);
        for (o, q) in scored {
            sum += self.point(o, q);
            n += 1;
        }
        if n == 0 { 0.0 } else { sum / n as f64 }
    }
}

/// σ(s) = 1/(1 + 10^(−s/400)), as 1/(1 + e^(−s·ln10/400)): `exp` costs a third of `powf`, and
/// the exact-gradient epochs evaluate it once per position.
pub fn sigmoid(s: f64) -> f64 {
    1.0 / (1.0 + (-s * LN10_OVER_400).exp())
}

/// Σ of the first part of `f(outcome, q)` over a block, each q replaced by the second part; the
/// sum is kept in 8 lanes (a single running sum would serialise the loop and stop vectorisation).
#[inline(always)]
fn sum_in_lanes(outcomes: &[Outcome], q: &mut [f64], f: impl Fn(u8, f64) -> (f64, f64)) -> f64 {
    assert_eq!(outcomes.len(), q.len());
    const LANES: usize = 8;
    let mut acc = [0.0f64; LANES];
    let mut oc = outcomes.chunks_exact(LANES);
    let mut qc = q.chunks_exact_mut(LANES);
    for (o, x) in (&mut oc).zip(&mut qc) {
        for j in 0..LANES {
            let (l, d) = f(o[j] as u8, x[j]);
            acc[j] += l;
            x[j] = d;
        }
    }
    for (o, x) in oc.remainder().iter().zip(qc.into_remainder()) {
        let (l, d) = f(*o as u8, *x);
        acc[0] += l;
        *x = d;
    }
    acc.iter().sum()
}

/// e^x to about one unit in the last place (relative error below 3e-16 measured against libm),
/// with no branches, table or call, so a loop over it vectorises; x is clamped to [−708, 709]
/// (the result stays finite and normal: the losses only need e^x to saturate there).
/// Range reduction x = n·ln2 + r, |r| ≤ ln2/2, then the Taylor polynomial of degree 13 for e^r
/// and 2^n put into the exponent bits.
#[inline(always)]
pub fn exp_vectorisable(x: f64) -> f64 {
    // 1.5·2^52: adding it rounds to an integer, which then sits in the low mantissa bits.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    const LN2_HI: f64 = 0.693_147_180_369_123_8;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let x = x.clamp(-708.0, 709.0);
    let t = x * std::f64::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let mut p = 1.0 / 6_227_020_800.0; // 1/13!
    for d in [
        479_001_600.0, // 12!
        39_916_800.0,
        3_628_800.0,
        362_880.0,
        40_320.0,
        5_040.0,
        720.0,
        120.0,
        24.0,
        6.0,
        2.0,
        1.0,
        1.0,
    ] {
        p = p * r + 1.0 / d;
    }
    let n_int = (t.to_bits() as i64).wrapping_sub(ROUND.to_bits() as i64);
    p * f64::from_bits(((n_int + 1023) << 52) as u64)
}

/// A refitted K (`k = "fit"`, refitted as the weights move) has settled once a refit moves it by
/// less than this fraction; refitting then stops.
pub const K_SETTLED: f64 = 1e-3;

/// Whether a refit that moved K from `before` to `after` leaves it still moving (by
/// [`K_SETTLED`] or more), so refitting goes on.
pub fn k_still_moving(before: f64, after: f64) -> bool {
    ((after - before) / before).abs() >= K_SETTLED
}

/// The K found by [`fit_k`] and the mean loss there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KFit {
    pub k: f64,
    pub loss: f64,
}

/// The loss scale K, as a config sets it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KSetting {
    /// Fit K at the start values on the training set, then keep it.
    Fit,
    Fixed(f64),
}

/// The bracket [`fit_k`] searches: K from 1/50 to 50 (log scale).
pub const K_RANGE: (f64, f64) = (0.02, 50.0);

/// The loss a run starts with: K as the config gives it, or (`k = "fit"`) fitted on `scored`,
/// the training set scored at the start values; a fit is said on stderr.
pub fn start_loss(
    kind: LossKind,
    k: KSetting,
    scored: impl FnOnce() -> Vec<(Outcome, f64)>,
) -> Loss {
    match k {
        KSetting::Fixed(k) => Loss::new(kind, k),
        KSetting::Fit => {
            let scored = scored();
            let fit = fit_k(kind, &scored);
            eprintln!(
                "K fitted on {} training positions at the start values: K = {:.4} ({} loss {:.6})",
                scored.len(),
                fit.k,
                kind.name(),
                fit.loss
            );
            Loss::new(kind, fit.k)
        }
    }
}

/// Fit K: minimise the mean loss over K at fixed scores (a 1-D search). First a scan of 49
/// log-spaced values over [`K_RANGE`] finds the best grid point (so a loss that is not unimodal over
/// the whole range cannot trap the search), then golden-section search on ln K between its two
/// neighbours narrows K to a relative precision of 1e-6. When every score is 0 the loss does not
/// depend on K and the result is K = 1.
pub fn fit_k(kind: LossKind, scored: &[(Outcome, f64)]) -> KFit {
    let loss_at = |ln_k: f64| Loss::new(kind, ln_k.exp()).mean(scored.iter().copied());
    if scored.iter().all(|&(_, q)| q == 0.0) {
        return KFit {
            k: 1.0,
            loss: loss_at(0.0),
        };
    }
    const GRID: usize = 49;
    let (lo, hi) = (K_RANGE.0.ln(), K_RANGE.1.ln());
    let step = (hi - lo) / (GRID - 1) as f64;
    let grid: Vec<f64> = (0..GRID).map(|i| lo + step * i as f64).collect();
    let values: Vec<f64> = grid.iter().map(|&x| loss_at(x)).collect();
    let best = (0..GRID)
        .min_by(|&a, &b| values[a].total_cmp(&values[b]))
        .unwrap_or(GRID / 2);
    let mut a = grid[best.saturating_sub(1)];
    let mut b = grid[(best + 1).min(GRID - 1)];
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - ratio * (b - a);
    let mut d = a + ratio * (b - a);
    let (mut fc, mut fd) = (loss_at(c), loss_at(d));
    while b - a > 1e-6 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - ratio * (b - a);
            fc = loss_at(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + ratio * (b - a);
            fd = loss_at(d);
        }
    }
    let x = (a + b) / 2.0;
    let (fx, fbest) = (loss_at(x), values[best]);
    if fbest < fx {
        KFit {
            k: grid[best].exp(),
            loss: fbest,
        }
    } else {
        KFit {
            k: x.exp(),
            loss: fx,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Outcome::*;

    #[test]
    fn texel_and_tanh_values() {
        let t = Loss::new(LossKind::Texel, 1.0);
        assert_eq!(sigmoid(0.0), 0.5);
        assert!((sigmoid(400.0) - 10.0 / 11.0).abs() < 1e-12);
        assert!((t.point(WhiteWins, 400.0) - (1.0 / 11.0f64).powi(2)).abs() < 1e-12);
        assert!((t.point(Draw, 0.0)).abs() < 1e-15);
        assert!((t.point(BlackWins, 0.0) - 0.25).abs() < 1e-15);
        // K scales the score.
        let t2 = Loss::new(LossKind::Texel, 2.0);
        assert!((t2.point(WhiteWins, 200.0) - t.point(WhiteWins, 400.0)).abs() < 1e-15);
        let h = Loss::new(LossKind::Tanh, 1.0);
        assert_eq!(h.target(BlackWins), -1.0);
        let p = (0.0043f64 * 100.0).tanh();
        assert!((h.point(BlackWins, 100.0) - (1.0 + p).powi(2)).abs() < 1e-12);
        assert!((h.point(Draw, -100.0) - p * p).abs() < 1e-12);
        let m = t.mean([(WhiteWins, 400.0), (Draw, 0.0)]);
        assert!((m - (1.0 / 11.0f64).powi(2) / 2.0).abs() < 1e-12);
        assert_eq!(t.mean([]), 0.0);
    }

    /// The polynomial exp agrees with libm's to 3e-16 relative over the whole range the losses
    /// use, and saturates (finite, positive) beyond it.
    #[test]
    fn vectorisable_exp_matches_libm() {
        let mut worst = 0.0f64;
        for i in -700_000..=700_000 {
            let x = f64::from(i) * 1e-3 + 1e-7;
            let (a, b) = (exp_vectorisable(x), x.exp());
            worst = worst.max(((a - b) / b).abs());
        }
        assert!(worst < 3e-16, "worst relative error {worst:e}");
        assert_eq!(exp_vectorisable(0.0), 1.0);
        for x in [-1e300, -800.0, 800.0, 1e300] {
            let e = exp_vectorisable(x);
            assert!(e.is_finite() && e > 0.0, "{x}: {e}");
        }
    }

    /// The vectorised block gives the same losses and derivatives as the per-position form
    /// (libm's exp and tanh) to 1e-14 relative, or 1e-15 absolute for derivatives (the per-position
    /// form computes 1 − p and 1 − tanh² by subtraction, which loses relative precision where the
    /// prediction saturates; the block does not), for both losses, block lengths that are and are
    /// not a multiple of its lanes, and scores out to ±100 000 cp.
    #[test]
    fn block_matches_the_per_position_form() {
        for kind in [LossKind::Texel, LossKind::Tanh] {
            for k in [0.3, 1.0, 2.7] {
                let loss = Loss::new(kind, k);
                for len in [0, 1, 7, 8, 9, 100, 517] {
                    let outcomes: Vec<Outcome> = (0..len)
                        .map(|i| [WhiteWins, Draw, BlackWins][i % 3])
                        .collect();
                    let q: Vec<f64> = (0..len)
                        .map(|i| match i % 11 {
                            0 => 1e5,
                            1 => -1e5,
                            _ => (i as f64 * 37.3) % 1500.0 - 750.0,
                        })
                        .collect();
                    let mut block = q.clone();
                    let sum = loss.block_with_derivative(&outcomes, &mut block);
                    let mut reference = 0.0;
                    for ((&o, &x), &d) in outcomes.iter().zip(&q).zip(&block) {
                        let (l, dr) = loss.point_with_derivative(o, x);
                        reference += l;
                        assert!(
                            (d - dr).abs() <= 1e-15 + 1e-14 * dr.abs(),
                            "{kind:?} K {k} q {x}: {d:e} vs {dr:e}"
                        );
                    }
                    assert!(
                        (sum - reference).abs() <= 1e-14 * reference.abs(),
                        "{kind:?} K {k} len {len}: {sum} vs {reference}"
                    );
                }
            }
        }
    }

    #[test]
    fn derivatives_match_finite_differences() {
        for kind in [LossKind::Texel, LossKind::Tanh] {
            for k in [0.5, 1.0, 1.7] {
                let loss = Loss::new(kind, k);
                for o in [WhiteWins, Draw, BlackWins] {
                    for q in [-900.0, -150.0, -3.0, 0.0, 42.0, 300.0, 1200.0] {
                        let h = 1e-3;
                        let numeric = (loss.point(o, q + h) - loss.point(o, q - h)) / (2.0 * h);
                        let exact = loss.point_derivative(o, q);
                        assert!(
                            (numeric - exact).abs() < 1e-9 + 1e-6 * exact.abs(),
                            "{kind:?} k={k} {o:?} q={q}: {numeric} vs {exact}"
                        );
                    }
                }
            }
        }
    }

    /// Results drawn from σ(K·q) with a known K: the fit finds K back.
    #[test]
    fn fit_k_recovers_the_generating_scale() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        for (kind, truth) in [(LossKind::Texel, 1.3), (LossKind::Texel, 0.6)] {
            let scored: Vec<(Outcome, f64)> = (0..40_000)
                .map(|_| {
                    let q = rng.random_range(-600.0..600.0);
                    let p = sigmoid(truth * q);
                    let o = if rng.random::<f64>() < p {
                        WhiteWins
                    } else {
                        BlackWins
                    };
                    (o, q)
                })
                .collect();
            let fit = fit_k(kind, &scored);
            assert!((fit.k - truth).abs() < 0.06 * truth, "{truth}: {fit:?}");
            // It is a minimum: nearby K are no better.
            for f in [0.9, 1.1] {
                let other = Loss::new(kind, fit.k * f).mean(scored.iter().copied());
                assert!(other >= fit.loss, "{f}: {other} < {}", fit.loss);
            }
        }
        // Tanh: R = ±1 drawn with P(white) = (1 + tanh(0.0043·K·q))/2.
        let truth = 1.5;
        let scored: Vec<(Outcome, f64)> = (0..40_000)
            .map(|_| {
                let q = rng.random_range(-400.0..400.0);
                let p = (1.0 + (TANH_SCALE * truth * q).tanh()) / 2.0;
                let o = if rng.random::<f64>() < p {
                    WhiteWins
                } else {
                    BlackWins
                };
                (o, q)
            })
            .collect();
        let fit = fit_k(LossKind::Tanh, &scored);
        assert!((fit.k - truth).abs() < 0.1 * truth, "tanh: {fit:?}");
        // All-zero scores: K does not matter; 1 is returned.
        let flat = fit_k(LossKind::Texel, &[(WhiteWins, 0.0), (BlackWins, 0.0)]);
        assert_eq!(flat.k, 1.0);
    }
}
