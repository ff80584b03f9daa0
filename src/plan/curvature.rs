//! The model a pilot's two matches give a variable: the curvature of the quadratic Elo curve
//! through them (the seventh column's unit) and its slope at the start. Pure arithmetic, shared by
//! the pilot that measures the points and the study that draws optima within their errors.

use crate::vars::format_value;

/// One pilot match: the Elo of θ0+u against θ0 with its standard error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub u: f64,
    pub elo: f64,
    pub se: f64,
}

/// A variable's fitted curvature, as the seventh column's unit (Elo lost at ±100 from the
/// optimum) with its standard error, and the slope at the start (Elo per unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Curvature {
    pub simul_elo: f64,
    pub se: f64,
    pub slope: f64,
}

impl Curvature {
    /// Whether the 95% interval of the curvature excludes zero on the positive side.
    pub fn measurable(&self) -> bool {
        self.se.is_finite() && self.simul_elo - 1.96 * self.se > 0.0
    }

    /// The fitted parabola's vertex for offsets taken from `x0`: x0 + slope/(2k), k the
    /// curvature per unit² (an optimum only when k > 0).
    pub fn vertex(&self, x0: f64) -> f64 {
        x0 + self.slope / (2.0 * (self.simul_elo / 1e4))
    }

    /// Where the fit puts the optimum, for people: the vertex when the curvature is
    /// measurable, else only the side the slope points to (the plan draws within the errors).
    pub fn optimum_from(&self, x0: f64) -> String {
        if self.measurable() {
            format_value(self.vertex(x0), 0)
        } else if self.slope > 0.0 {
            format!("> {}", format_value(x0, 0))
        } else {
            format!("< {}", format_value(x0, 0))
        }
    }
}

/// Fit d(u) = −A·u² − B·u through two points: A = (d2·u1 − d1·u2) / (u1·u2·(u1 − u2)), with the
/// variance carried from the two independent matches. simul_elo = A·100²; slope = −B (at u = 0).
pub fn fit(p: [Point; 2]) -> Curvature {
    let ([u1, u2], [d1, d2]) = ([p[0].u, p[1].u], [p[0].elo, p[1].elo]);
    let den = u1 * u2 * (u1 - u2);
    let a = (d2 * u1 - d1 * u2) / den;
    let var_a = (u1 * u1 * p[1].se.powi(2) + u2 * u2 * p[0].se.powi(2)) / (den * den);
    // B from the first equation: B = (−d1 − A·u1²) / u1.
    let b = (-d1 - a * u1 * u1) / u1;
    Curvature {
        simul_elo: a * 1e4,
        se: var_a.sqrt() * 1e4,
        slope: -b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points taken exactly from a quadratic give back its curvature and slope, centred or
    /// one-sided, wherever the optimum is.
    #[test]
    fn the_fit_recovers_a_quadratic() {
        for (k, x_star, us) in [
            (0.004, 30.0, [-20.0, 20.0]),
            (0.004, -70.0, [20.0, 40.0]),
            (0.0005, 0.0, [-50.0, -100.0]),
        ] {
            let e = |x: f64| -k * (x - x_star) * (x - x_star);
            let p = us.map(|u| Point {
                u,
                elo: e(u) - e(0.0),
                se: 5.0,
            });
            let c = fit(p);
            assert!((c.simul_elo - k * 1e4).abs() < 1e-9, "{c:?}");
            assert!((c.slope - 2.0 * k * x_star).abs() < 1e-9, "{c:?}");
        }
    }

    /// The standard error follows the matches': centred at ±h with equal SEs s, A's SE is
    /// s·√2/(2h²); a measurement within two SEs of zero is not measurable.
    #[test]
    fn the_fit_carries_the_matches_uncertainty() {
        let p = |u, elo| Point { u, elo, se: 10.0 };
        let c = fit([p(-50.0, -12.0), p(50.0, -8.0)]);
        assert!((c.simul_elo - 40.0).abs() < 1e-9, "{c:?}");
        let want = 10.0 * 2f64.sqrt() / (2.0 * 2500.0) * 1e4;
        assert!((c.se - want).abs() < 1e-9, "{c:?}");
        assert!(!c.measurable(), "40 ± 28.3 includes zero at 95%");
        let c = fit([p(-50.0, -60.0), p(50.0, -40.0)]);
        assert!(c.measurable(), "{c:?}");
        // A convex fit (both sides better than the start) is no curvature to plan with.
        assert!(!fit([p(-50.0, 30.0), p(50.0, 30.0)]).measurable());
    }
}
