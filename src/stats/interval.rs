//! The 95% interval on a mean score, the one every interval the tool prints comes from.
//!
//! Samples score values in [0, 1] (a pair's quarter-steps, a game's halves). The interval is
//! Student's t for n − 1 degrees of freedom on the samples' unbiased variance,
//! `mean ± t(n − 1)·s/√n`, ends kept within [0, 1]. A sample whose every member scored the same
//! has no spread to measure (ten pairs all won twice, twelve all drawn): there the interval is
//! the likelihood interval over the outcomes' known support, every mean μ at which the likeliest
//! distribution on [0, 1] with mean μ is not implausible, `W(μ) ≤ t²(n − 1)` with `W` the
//! likelihood-ratio statistic. It is finite where the data can bound the mean (all pairs 1–1 at
//! 12 pairs: ±64 Elo), never zero-width, and open only where it must be (all pairs won: the
//! upper end is +∞).
//!
//! Why this: side by side on the simulator's game at 10, 16, 32 and 100 pairs, draw rates 0,
//! 0.4 and 0.8 and model Elo −100..+100 (exact: every outcome weighted by its probability), the
//! normal interval `mean ± 1.96·s/√n` that main used covered 87–92% at 10 pairs and 92–93% at
//! 16; Student's t covers 94–95% in every cell; the likelihood interval alone, calibrated on
//! χ²(1), covered 92% at 10 pairs without draws and 99% at draw 0.8 (its mass may move to
//! the outcomes nobody played, so with most pairs drawn it is too wide), and on t² 96–99.9%.
//! docs/matches.md has the table; `coverage::coverage_table` prints it and the tests below pin
//! the chosen interval to [93%, 98%] in every cell.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The two-sided 95% critical value for the statistic `W` from `n` samples: t²(n − 1, 0.975).
pub fn critical(n: u64) -> f64 {
    let t = t_quantile(0.975, n.saturating_sub(1).max(1) as f64);
    t * t
}

/// Beyond this many degrees of freedom Student's t is the normal distribution (their 97.5%
/// quantiles differ by 2.4·10⁻⁵ here, and less beyond). statrs 0.19's t quantile is off past it
/// (1.95985 at 10⁶ degrees of freedom for 1.95996, 1.827 at 10⁷) and never returns at 10⁸: a
/// track file's row of 9·10¹⁸ pairs hung `spsa report` (issue 55's fuzzing).
const T_IS_NORMAL: f64 = 1e5;

/// Student's t quantile for `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if df > T_IS_NORMAL || df.is_nan() {
        return Normal::standard().inverse_cdf(p);
    }
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(super::Z95)
}

/// Student's t CDF for `df` degrees of freedom.
pub fn t_cdf(x: f64, df: f64) -> f64 {
    if df > T_IS_NORMAL || df.is_nan() {
        return super::normal_cdf(x);
    }
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.cdf(x))
        .unwrap_or_else(|_| super::normal_cdf(x))
}

/// `counts[i]` samples scored `values[i]` (each in [0, 1]); `n` the total (> 0).
#[derive(Clone, Copy, Debug)]
pub struct Sample<'a> {
    pub counts: &'a [u64],
    pub values: &'a [f64],
}

impl Sample<'_> {
    fn n(&self) -> f64 {
        super::total(self.counts) as f64
    }

    fn mean(&self) -> f64 {
        self.observed().map(|(c, v)| c * v).sum::<f64>() / self.n()
    }

    fn observed(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.counts
            .iter()
            .zip(self.values)
            .filter(|(c, _)| **c > 0)
            .map(|(&c, &v)| (c as f64, v))
    }

    /// The likelihood-ratio statistic `W(μ)` for a mean score of `mu` (∞ when no distribution
    /// on [0, 1] that keeps every observed value possible has mean `mu`).
    pub fn w(&self, mu: f64) -> f64 {
        let n = self.n();
        if n == 0.0 {
            return 0.0;
        }
        let (vmin, vmax) = self
            .observed()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (_, v)| {
                (a.min(v), b.max(v))
            });
        if !(0.0..=1.0).contains(&mu) {
            return f64::INFINITY;
        }
        if vmin == vmax && vmin == mu {
            return 0.0;
        }
        // At μ = 0 (or 1) every observed value must be 0 (or 1).
        if mu <= 0.0 || mu >= 1.0 {
            return f64::INFINITY;
        }
        // Weights w_i = 1/(1 + λ(v_i − μ)) · (c_i/n); λ solves Σ c_i (v_i − μ)/(1 + λ(v_i − μ)) = 0,
        // within [−1/(1 − μ), 1/μ] so that every value of [0, 1] keeps a weight ≥ 0. At an end of
        // that range the rest of the mass sits at 1 (low end) or at 0 (high end).
        let g = |lambda: f64| -> f64 {
            self.observed()
                .map(|(c, v)| c * (v - mu) / (1.0 + lambda * (v - mu)))
                .sum()
        };
        let (lo, hi) = (-1.0 / (1.0 - mu), 1.0 / mu);
        let positive = |l: f64| self.observed().all(|(_, v)| 1.0 + l * (v - mu) > 0.0);
        let lambda = if positive(lo) && g(lo) <= 0.0 {
            lo
        } else if positive(hi) && g(hi) >= 0.0 {
            hi
        } else {
            // g decreases in λ from +∞ (or ≥ 0) at `lo` to −∞ (or ≤ 0) at `hi`.
            let terms: Vec<(f64, f64)> = self.observed().map(|(c, v)| (c, v - mu)).collect();
            super::secular_root(&terms, lo, hi)
        };
        let w: f64 = self
            .observed()
            .map(|(c, v)| 2.0 * c * (1.0 + lambda * (v - mu)).ln())
            .sum();
        w.max(0.0)
    }

    /// The sample's mean score, and its unbiased variance (0 for a single sample).
    fn moments(&self) -> (f64, f64) {
        let n = self.n();
        let mean = self.mean();
        let ss: f64 = self.observed().map(|(c, v)| c * (v - mean).powi(2)).sum();
        (mean, if n > 1.0 { ss / (n - 1.0) } else { 0.0 })
    }

    /// The 95% interval on the mean score, `(low, high)` within [0, 1]: Student's t, or the
    /// likelihood interval when every sample scored the same.
    pub fn interval(&self) -> (f64, f64) {
        let n = self.n();
        let (mean, var) = self.moments();
        if var <= 0.0 {
            return self.likelihood_interval();
        }
        let half = t_quantile(0.975, (n - 1.0).max(1.0)) * (var / n).sqrt();
        ((mean - half).max(0.0), (mean + half).min(1.0))
    }

    /// The likelihood interval: every μ with `W(μ) ≤ t²(n − 1)`; an end is 0 or 1 exactly when
    /// every sample scored it.
    pub fn likelihood_interval(&self) -> (f64, f64) {
        let n = self.n();
        let mean = self.mean();
        let crit = critical(n as u64);
        let end = |target: f64| -> f64 {
            if self.w(target) <= crit {
                return target;
            }
            // W rises from 0 at the mean to beyond `crit` at `target`.
            let (mut inside, mut outside) = (mean, target);
            for _ in 0..60 {
                let mid = 0.5 * (inside + outside);
                if self.w(mid) <= crit {
                    inside = mid;
                } else {
                    outside = mid;
                }
            }
            inside
        };
        (end(0.0), end(1.0))
    }

    /// The likelihood of superiority, P(mean > ½), on the same footing as the interval:
    /// Student's t CDF of `(mean − ½)/(s/√n)`, so LOS > 97.5% exactly when the interval lies
    /// above ½; when every sample scored the same, from the signed root of `W(½)`.
    pub fn los(&self) -> f64 {
        let n = self.n();
        let (mean, var) = self.moments();
        let df = (n - 1.0).max(1.0);
        if var > 0.0 {
            return t_cdf((mean - 0.5) / (var / n).sqrt(), df);
        }
        let r = self.w(0.5).sqrt();
        if !r.is_finite() {
            return if mean > 0.5 { 1.0 } else { 0.0 };
        }
        t_cdf(if mean >= 0.5 { r } else { -r }, df)
    }
}

#[cfg(test)]
pub(crate) mod coverage {
    //! Coverage of 95% intervals on the simulator's model, computed exactly (every outcome of n
    //! samples weighted by its probability) or by a seeded simulation.

    use super::*;

    /// Pentanomial values (a pair's score) and trinomial values (a game's).
    pub const PENTA: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];
    pub const TRI: [f64; 3] = [0.0, 0.5, 1.0];

    /// The simulator's game: drawn with probability `draw`, else won with the logistic
    /// probability of `elo` (the model's difference). Returns (loss, draw, win) probabilities.
    pub fn game(elo: f64, draw: f64) -> [f64; 3] {
        let p = 1.0 / (1.0 + 10f64.powf(-elo / 400.0));
        [(1.0 - draw) * (1.0 - p), draw, (1.0 - draw) * p]
    }

    /// The pair buckets' probabilities of two independent games.
    pub fn pair(g: [f64; 3]) -> [f64; 5] {
        let [l, d, w] = g;
        [l * l, 2.0 * l * d, d * d + 2.0 * l * w, 2.0 * w * d, w * w]
    }

    /// The mean score of bucket probabilities `q` over `values`.
    pub fn mean(q: &[f64], values: &[f64]) -> f64 {
        q.iter().zip(values).map(|(a, b)| a * b).sum()
    }

    fn ln_factorial(n: u64) -> f64 {
        (1..=n).map(|i| (i as f64).ln()).sum()
    }

    /// Every way to put `n` samples into `k` buckets.
    pub fn compositions(n: u64, k: usize) -> Vec<Vec<u64>> {
        fn go(n: u64, k: usize, prefix: &mut Vec<u64>, out: &mut Vec<Vec<u64>>) {
            if k == 1 {
                prefix.push(n);
                out.push(prefix.clone());
                prefix.pop();
                return;
            }
            for i in 0..=n {
                prefix.push(i);
                go(n - i, k - 1, prefix, out);
                prefix.pop();
            }
        }
        let mut out = Vec::new();
        go(n, k, &mut Vec::new(), &mut out);
        out
    }

    /// The probability of counts `c` under bucket probabilities `q`.
    pub fn probability(c: &[u64], q: &[f64]) -> f64 {
        let n: u64 = c.iter().sum();
        let mut ln = ln_factorial(n);
        for (&ci, &qi) in c.iter().zip(q) {
            if ci > 0 {
                if qi <= 0.0 {
                    return 0.0;
                }
                ln += ci as f64 * qi.ln() - ln_factorial(ci);
            }
        }
        ln.exp()
    }

    /// SplitMix64's finalizer: seeds that differ by one give unrelated streams.
    pub fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Draw `n` samples' bucket counts from `q` with a SplitMix64 stream.
    pub fn draw(n: u64, q: &[f64], state: &mut u64) -> Vec<u64> {
        let mut c = vec![0u64; q.len()];
        for _ in 0..n {
            *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = *state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = (z >> 11) as f64 / (1u64 << 53) as f64;
            let mut acc = 0.0;
            let mut k = q.len() - 1;
            for (i, &qi) in q.iter().enumerate() {
                acc += qi;
                if u < acc {
                    k = i;
                    break;
                }
            }
            c[k] += 1;
        }
        c
    }

    /// Whether a method's 95% interval from counts `c` of `values` holds the mean `truth`.
    pub type Method = fn(c: &[u64], values: &[f64], truth: f64) -> bool;

    /// The coverage of `method` over the model Elos `elos` at `draw` with `n` samples of
    /// `values` (pairs or games): exact (every outcome weighted by its probability) or from
    /// `sims` seeded draws per Elo. Returns the coverage at each Elo.
    #[allow(clippy::too_many_arguments)]
    pub fn coverage(
        method: Method,
        values: &[f64],
        n: u64,
        draw: f64,
        elos: &[f64],
        exact: bool,
        sims: u32,
        seed: u64,
    ) -> Vec<f64> {
        let all = if exact {
            compositions(n, values.len())
        } else {
            Vec::new()
        };
        elos.iter()
            .enumerate()
            .map(|(j, &elo)| {
                let g = game(elo, draw);
                let q: Vec<f64> = if values.len() == 5 {
                    pair(g).to_vec()
                } else {
                    g.to_vec()
                };
                let truth = mean(&q, values);
                if exact {
                    all.iter()
                        .filter(|c| method(c, values, truth))
                        .map(|c| probability(c, &q))
                        .sum()
                } else {
                    let mut state = mix(seed ^ mix(j as u64));
                    let hits = (0..sims)
                        .filter(|_| method(&draw_counts(n, &q, &mut state), values, truth))
                        .count();
                    hits as f64 / f64::from(sims)
                }
            })
            .collect()
    }

    fn draw_counts(n: u64, q: &[f64], state: &mut u64) -> Vec<u64> {
        draw(n, q, state)
    }

    fn moments(c: &[u64], v: &[f64]) -> (f64, f64, f64) {
        let n = c.iter().sum::<u64>() as f64;
        let m = c.iter().zip(v).map(|(&a, b)| a as f64 * b).sum::<f64>() / n;
        let ss = c
            .iter()
            .zip(v)
            .map(|(&a, b)| a as f64 * (b - m).powi(2))
            .sum::<f64>();
        (n, m, ss)
    }

    /// main's interval until issue 46: ±1.96 standard errors (variance over n), none without
    /// spread.
    pub fn normal(c: &[u64], v: &[f64], truth: f64) -> bool {
        let (n, m, ss) = moments(c, v);
        let se = (ss / n / n).sqrt();
        se > 0.0 && (m - truth).abs() <= crate::stats::Z95 * se
    }

    /// Student's t for n − 1 degrees of freedom on the unbiased variance.
    pub fn student(c: &[u64], v: &[f64], truth: f64) -> bool {
        let (n, m, ss) = moments(c, v);
        let se = (ss / (n - 1.0) / n).sqrt();
        se > 0.0 && (m - truth).abs() <= t_quantile(0.975, n - 1.0) * se
    }

    /// The likelihood interval calibrated on χ²(1) instead of t²(n − 1).
    pub fn likelihood_chi2(c: &[u64], v: &[f64], truth: f64) -> bool {
        let s = Sample {
            counts: c,
            values: v,
        };
        s.w(truth) <= crate::stats::Z95 * crate::stats::Z95
    }

    /// The likelihood interval alone, on t²(n − 1) (W(μ) ≤ t² is the interval, W being lowest
    /// at the mean and rising on either side; `the_likelihood_interval_is_where_w_is_below_its_critical_value`
    /// checks it).
    pub fn likelihood(c: &[u64], v: &[f64], truth: f64) -> bool {
        let n: u64 = c.iter().sum();
        Sample {
            counts: c,
            values: v,
        }
        .w(truth)
            <= critical(n)
    }

    /// The chosen interval: [`Sample::interval`].
    pub fn chosen(c: &[u64], v: &[f64], truth: f64) -> bool {
        let (low, high) = Sample {
            counts: c,
            values: v,
        }
        .interval();
        low <= truth && truth <= high
    }

    pub const ELOS: [f64; 9] = [-100.0, -75.0, -50.0, -25.0, 0.0, 25.0, 50.0, 75.0, 100.0];

    #[test]
    #[ignore = "prints the side-by-side table of docs/matches.md"]
    fn coverage_table() {
        let methods: [(&str, Method); 5] = [
            ("normal", normal),
            ("student", student),
            ("lik-chi2", likelihood_chi2),
            ("lik-t2", likelihood),
            ("chosen", chosen),
        ];
        for (form, values, scale) in [("penta", &PENTA[..], 1u64), ("tri", &TRI[..], 2u64)] {
            let sizes: &[u64] = if scale == 1 {
                &[10, 16, 32, 100]
            } else {
                &[5, 10, 16, 32, 100]
            };
            for &pairs in sizes {
                for draw in [0.0, 0.4, 0.8] {
                    let n = pairs * scale;
                    let exact = values.len() == 3 && n <= 200 || n <= 32;
                    let mut line = format!("{form} n={n:>3} draw={draw:.1}");
                    for (name, m) in methods {
                        let per = coverage(m, values, n, draw, &ELOS, exact, 20_000, 46);
                        let avg = per.iter().sum::<f64>() / per.len() as f64;
                        let min = per.iter().cloned().fold(1.0, f64::min);
                        let max = per.iter().cloned().fold(0.0, f64::max);
                        line += &format!(
                            "  {name} {:.1} ({:.1}-{:.1})",
                            avg * 100.0,
                            min * 100.0,
                            max * 100.0
                        );
                    }
                    println!("{line}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::coverage::*;
    use super::*;

    /// Issue 55's fuzzing: a track file row counting 9,223,372,036,854,775,807 pairs asked
    /// statrs for t at that many degrees of freedom, which never returned (and its quantile
    /// is wrong from 10⁶ on). Past 10⁵ the normal distribution answers, and the two agree
    /// where they meet.
    #[test]
    fn huge_degrees_of_freedom_answer_at_once() {
        let at_limit = t_quantile(0.975, T_IS_NORMAL);
        assert!((at_limit - super::super::Z95).abs() < 3e-5, "{at_limit}");
        for df in [
            1.00001e5,
            1e6,
            1e7,
            1e8,
            9.223372036854776e18,
            f64::INFINITY,
            f64::NAN,
        ] {
            let started = std::time::Instant::now();
            let q = t_quantile(0.975, df);
            let c = t_cdf(1.0, df);
            assert!(started.elapsed().as_secs() < 5, "df {df}");
            assert!((q - super::super::Z95).abs() < 1e-9, "df {df}: {q}");
            assert!(
                (c - super::super::normal_cdf(1.0)).abs() < 1e-6,
                "df {df}: {c}"
            );
        }
    }

    /// The average coverage over the Elos at each (samples, draw rate) cell of a form.
    fn cells(values: &[f64], sizes: &[u64], exact_max: u64) -> Vec<(u64, f64, f64, f64)> {
        let mut out = Vec::new();
        for &n in sizes {
            for draw in [0.0, 0.4, 0.8] {
                let per = coverage(chosen, values, n, draw, &ELOS, n <= exact_max, 3000, 46);
                let avg = per.iter().sum::<f64>() / per.len() as f64;
                let min = per.iter().cloned().fold(1.0, f64::min);
                out.push((n, draw, avg, min));
            }
        }
        out
    }

    fn check(form: &str, cells: &[(u64, f64, f64, f64)]) {
        for &(n, draw, avg, min) in cells {
            println!(
                "{form} n {n} draw {draw}: coverage {:.1}% (lowest Elo {:.1}%)",
                avg * 100.0,
                min * 100.0
            );
            assert!(
                (0.93..=0.98).contains(&avg),
                "{form}: {n} samples, draw rate {draw}: coverage {avg}"
            );
        }
    }

    /// The pentanomial interval at 10, 16 and 32 pairs exactly (every outcome weighted by its
    /// probability) and at 100 pairs from 3000 seeded matches per Elo, model Elo −100..+100.
    #[test]
    fn the_pentanomial_interval_holds_95_percent_from_10_pairs() {
        check("pentanomial", &cells(&PENTA, &[10, 16, 32, 100], 32));
    }

    /// The trinomial interval (games as independent) at the games of 10, 16, 32 and 100 pairs
    /// (from 20 games, its smallest sample: `MIN_TRINOMIAL_GAMES`), exactly.
    #[test]
    fn the_trinomial_interval_holds_95_percent_from_20_games() {
        assert_eq!(crate::stats::MIN_TRINOMIAL_GAMES, 20);
        check("trinomial", &cells(&TRI, &[20, 32, 64, 200], 200));
    }

    /// The likelihood interval's ends are where W crosses its critical value, and a mean is
    /// inside it exactly when W is below it there.
    #[test]
    fn the_likelihood_interval_is_where_w_is_below_its_critical_value() {
        let crit = critical(10);
        for c in compositions(10, 5) {
            let s = Sample {
                counts: &c,
                values: &PENTA,
            };
            let (low, high) = s.likelihood_interval();
            assert!(low <= s.mean() && s.mean() <= high, "{c:?}");
            assert!(high > low, "never zero-width: {c:?}");
            for end in [low, high] {
                if end > 0.0 && end < 1.0 {
                    assert!(
                        (s.w(end) - crit).abs() < 1e-6,
                        "{c:?}: W({end}) = {}",
                        s.w(end)
                    );
                }
            }
            for k in 1..40 {
                let mu = f64::from(k) / 40.0;
                let inside = low <= mu && mu <= high;
                let w = s.w(mu);
                if (w - crit).abs() > 1e-6 {
                    assert_eq!(inside, w <= crit, "{c:?} at {mu}: W {w}");
                }
            }
        }
    }

    /// W(μ) is the profile likelihood ratio over every distribution on the outcomes: checked
    /// against a brute-force search over the trinomial's one free parameter.
    #[test]
    fn w_is_the_profile_likelihood_ratio() {
        for c in [[2u64, 5, 3], [0, 4, 6], [0, 10, 0], [1, 0, 9], [0, 0, 10]] {
            let n: u64 = c.iter().sum();
            let best: f64 = c
                .iter()
                .filter(|&&a| a > 0)
                .map(|&a| a as f64 * (a as f64 / n as f64).ln())
                .sum();
            let s = Sample {
                counts: &c,
                values: &TRI,
            };
            for mu in [0.1, 0.3, 0.45, 0.5, 0.62, 0.8, 0.95] {
                // p2 = t, p1 = 2(μ − t), p0 = 1 − p1 − p2, all ≥ 0.
                let mut top = f64::NEG_INFINITY;
                for k in 0..=200_000 {
                    let t = f64::from(k) / 200_000.0;
                    let p = [1.0 - 2.0 * (mu - t) - t, 2.0 * (mu - t), t];
                    if p.iter().any(|&x| x < 0.0) {
                        continue;
                    }
                    let ll: f64 = c
                        .iter()
                        .zip(p)
                        .filter(|(a, _)| **a > 0)
                        .map(|(&a, q)| a as f64 * q.ln())
                        .sum();
                    top = top.max(ll);
                }
                let brute = 2.0 * (best - top);
                let w = s.w(mu);
                assert!(
                    (w - brute).abs() < 1e-3 * (1.0 + brute.abs())
                        || (w.is_infinite() && brute.is_infinite()),
                    "{c:?} at {mu}: W {w}, brute force {brute}"
                );
            }
        }
    }
}
