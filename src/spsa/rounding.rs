//! Rounding θ± to the integers that UCI `spin` options take.
//!
//! Rounding must not erase the perturbation: when c_k ≥ 0.5 the two sides are meant to differ by
//! at least one unit, so if rounding would give both the same value they are pushed apart (within
//! bounds). Stochastic rounding keeps the expected value of a fractional θ, which lets SPSA make
//! progress on parameters whose c_k has shrunk below one unit.

use serde::{Deserialize, Serialize};

/// How θ± become integers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RoundingMode {
    /// Round half away from zero.
    #[default]
    Nearest,
    /// Round down or up with probabilities given by the fraction (same draw for both sides).
    Stochastic,
}

/// Round a θ+/θ− pair for one spin variable with bounds [min, max].
/// `uniform` is a number in [0, 1) drawn by the caller (used by [`RoundingMode::Stochastic`]).
pub fn round_pair(
    plus: f64,
    minus: f64,
    c_k: f64,
    bounds: (f64, f64),
    mode: RoundingMode,
    uniform: f64,
) -> (i64, i64) {
    let lo = bounds.0.ceil();
    let hi = bounds.1.floor();
    let round = |x: f64| -> f64 {
        let r = match mode {
            RoundingMode::Nearest => x.round(),
            RoundingMode::Stochastic => (x + uniform).floor(),
        };
        if lo <= hi { r.clamp(lo, hi) } else { r }
    };
    let (mut p, mut m) = (round(plus), round(minus));
    if p == m && c_k >= 0.5 && plus != minus {
        // Keep the sign of the perturbation: the larger side moves one unit away, or, at a
        // bound, the other side does.
        let up = if plus > minus { 1.0 } else { -1.0 };
        if lo <= p + up && p + up <= hi {
            p += up;
        } else if lo <= m - up && m - up <= hi {
            m -= up;
        }
    }
    (p as i64, m as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDE: (f64, f64) = (-1000.0, 1000.0);

    #[test]
    fn nearest_rounds_each_side() {
        assert_eq!(
            round_pair(10.6, 7.4, 1.6, WIDE, RoundingMode::Nearest, 0.0),
            (11, 7)
        );
        assert_eq!(
            round_pair(-2.5, -4.5, 1.0, WIDE, RoundingMode::Nearest, 0.0),
            (-3, -5)
        );
    }

    #[test]
    fn sides_never_collapse_when_c_k_is_half_or_more() {
        // 10.2 ± 0.5 → 10.7 / 9.7 → 11 / 10: fine. 10.0 ± 0.5 → 10.5 / 9.5 → 11 / 10 (half away).
        // 10.3 ± 0.49 is below the threshold: may collapse.
        assert_eq!(
            round_pair(10.45, 9.55, 0.45, WIDE, RoundingMode::Nearest, 0.0),
            (10, 10)
        );
        for x in [0.1, 0.3, 0.5, 0.7, 0.9] {
            let (p, m) = round_pair(
                5.0 + x + 0.5,
                5.0 + x - 0.5,
                0.5,
                WIDE,
                RoundingMode::Nearest,
                0.0,
            );
            assert_eq!(p - m, 1, "x = {x}");
        }
        // At the upper bound the minus side moves instead.
        assert_eq!(
            round_pair(10.0, 9.6, 0.5, (0.0, 10.0), RoundingMode::Nearest, 0.0),
            (10, 9)
        );
        // Negative δ keeps its sign.
        let (p, m) = round_pair(9.6, 10.2, 0.5, WIDE, RoundingMode::Nearest, 0.0);
        assert!(p < m);
    }

    #[test]
    fn stochastic_rounding_is_unbiased() {
        let n = 10_000;
        let mut sum = 0i64;
        for i in 0..n {
            let u = (i as f64 + 0.5) / n as f64;
            sum += round_pair(3.3, 3.3, 0.0, WIDE, RoundingMode::Stochastic, u).0;
        }
        let mean = sum as f64 / n as f64;
        assert!((mean - 3.3).abs() < 1e-3, "mean {mean}");
    }

    #[test]
    fn results_stay_within_integer_bounds() {
        assert_eq!(
            round_pair(10.4, -0.4, 5.0, (0.5, 10.2), RoundingMode::Nearest, 0.0),
            (10, 1)
        );
    }
}
