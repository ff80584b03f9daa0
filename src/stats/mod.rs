//! Match statistics: score, Elo difference, 95% confidence intervals and LOS from W/D/L
//! (trinomial) and game-pair (pentanomial) counts. Pure functions, no I/O.
//!
//! The interval is [`interval`]'s: a likelihood interval on the mean score over the outcomes'
//! known support, calibrated with Student's t for n − 1 degrees of freedom, both ends mapped to
//! Elo with `−400·log10(1/s − 1)`. One function serves every interval the tool prints: a live
//! curve's point, `spsa match`, `verify`, the report, the SPRT's Elo and the page. It holds its
//! 95% from 10 samples on at draw rates 0 to 0.8 (docs/matches.md has the table), where the
//! normal interval `mean ± 1.96·s/√n` covered 87% at 10 pairs, and a sample whose pairs all
//! scored the same gets a finite interval (not none, not zero-width). The pentanomial form is
//! the one to trust for paired games: the two games of a pair share an opening, so their results
//! are correlated and the trinomial interval (games treated as independent) is usually too wide
//! or too narrow.
//!
//! Below [`MIN_INTERVAL_SAMPLES`] samples no interval and no LOS are given.

pub mod gain;
pub mod interval;
pub mod pairs;
pub mod sprt;

use std::fmt;

use statrs::function::erf::erfc;

/// The two-sided 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The fewest samples (pairs for the pentanomial form, games for the trinomial) for which an
/// interval and LOS are given. One pair says nothing about its spread, and below 10 samples
/// the t calibration's quantile grows fast (12.7 at n = 2, 2.78 at n = 5): the coverage of every
/// interval the tool prints is checked from 10 samples on (`interval::tests`).
pub const MIN_INTERVAL_SAMPLES: u64 = 10;

/// The fewest games for which the trinomial form (games as independent) gives an interval: the
/// games of [`MIN_INTERVAL_SAMPLES`] pairs. At 10 games with most of them drawn, every interval
/// that is honest about ten draws in a row (an 11% outcome at draw rate 0.8) covers the truth
/// 98.8% of the time, too wide to read; from 20 games on it holds [93%, 98%].
pub const MIN_TRINOMIAL_GAMES: u64 = 2 * MIN_INTERVAL_SAMPLES;

/// Game and pair counts from side A's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Pairs by A's points: index 0..=4 is 0, ½, 1, 1½, 2 points.
    pub pentanomial: [u64; 5],
}

impl Tally {
    /// The tally of A's game values (+1/0/−1 each) in pair order: games 2j and 2j+1 are pair j;
    /// a last game without its pair counts as a game only.
    pub fn of_games(values: impl IntoIterator<Item = i32>) -> Tally {
        let mut t = Tally::default();
        let mut first = None;
        for v in values {
            t.add_game(v);
            match first.take() {
                None => first = Some(v),
                Some(a) => t.pentanomial[pair_bucket([a, v])] += 1,
            }
        }
        t
    }

    /// Count one pair given A's two game values (+1/0/−1 each).
    pub fn add_pair(&mut self, scores: [i32; 2]) {
        for s in scores {
            self.add_game(s);
        }
        self.pentanomial[pair_bucket(scores)] += 1;
    }

    /// Count one game by its value's sign.
    fn add_game(&mut self, value: i32) {
        match value.signum() {
            1 => self.wins += 1,
            0 => self.draws += 1,
            _ => self.losses += 1,
        }
    }

    /// Games played (saturating: counts read from a damaged file may add up past u64).
    pub fn games(&self) -> u64 {
        self.wins
            .saturating_add(self.draws)
            .saturating_add(self.losses)
    }

    /// Pairs played (saturating, as [`Tally::games`]).
    pub fn pairs(&self) -> u64 {
        total(&self.pentanomial)
    }
}

/// A pair's pentanomial bucket 0..=4 (A's points in half-points) from its two game values.
fn pair_bucket(scores: [i32; 2]) -> usize {
    (scores[0].signum() + scores[1].signum() + 2) as usize
}

/// An Elo estimate with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Samples (pairs for the pentanomial form, games for the trinomial).
    pub n: u64,
    /// Mean score of side A in [0, 1].
    pub score: f64,
    /// Standard error of the mean score.
    pub stderr: f64,
    /// Elo difference; ±∞ when A scored everything or nothing.
    pub elo: f64,
    /// The 95% interval in Elo, low and high; an end is ±∞ only when every sample scored 1
    /// (or 0) there. `None` below [`MIN_INTERVAL_SAMPLES`].
    pub interval: Option<(f64, f64)>,
    /// Likelihood of superiority: P(A is stronger), read off the same likelihood as the
    /// interval (above 97.5% exactly when the interval lies above 0); `None` exactly when
    /// `interval` is.
    pub los: Option<f64>,
}

/// Why an estimate has no interval, for the text in its place.
fn no_interval_reason(unit: &str) -> String {
    let min = if unit == "games" {
        MIN_TRINOMIAL_GAMES
    } else {
        MIN_INTERVAL_SAMPLES
    };
    format!("n/a below {min} {unit}")
}

/// Elo difference of a score in [0, 1]: `−400·log10(1/s − 1)`; ±∞ at the ends.
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / score - 1.0).log10()
    }
}

/// The standard normal CDF.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// An estimate from counts per outcome: `counts[i]` samples scored `values[i]` (in [0, 1]).
/// `None` when there are no samples.
/// The sum of `counts`, saturating: counts read from a damaged file (a track file's row, a
/// match record) may add up past u64, which must not panic (issue 55's fuzzing).
pub fn total(counts: &[u64]) -> u64 {
    counts.iter().fold(0u64, |a, &c| a.saturating_add(c))
}

fn estimate(counts: &[u64], values: &[f64], min: u64) -> Option<Estimate> {
    let n: u64 = total(counts);
    if n == 0 {
        return None;
    }
    let nf = n as f64;
    let mean = counts
        .iter()
        .zip(values)
        .map(|(&c, &v)| c as f64 * v)
        .sum::<f64>()
        / nf;
    let var = counts
        .iter()
        .zip(values)
        .map(|(&c, &v)| c as f64 * (v - mean).powi(2))
        .sum::<f64>()
        / nf;
    let stderr = (var / nf).sqrt();
    let sample = interval::Sample { counts, values };
    let measurable = n >= min;
    Some(Estimate {
        n,
        score: mean,
        stderr,
        elo: elo_from_score(mean),
        interval: measurable.then(|| {
            let (low, high) = sample.interval();
            (elo_from_score(low), elo_from_score(high))
        }),
        los: measurable.then(|| sample.los()),
    })
}

/// From pentanomial counts (pairs scoring 0, ½, 1, 1½, 2 points for A). `None` for no pairs.
pub fn pentanomial(p: &[u64; 5]) -> Option<Estimate> {
    estimate(p, &[0.0, 0.25, 0.5, 0.75, 1.0], MIN_INTERVAL_SAMPLES)
}

/// From game counts, treating games as independent; an interval from [`MIN_TRINOMIAL_GAMES`]
/// games. `None` for no games.
pub fn trinomial(wins: u64, draws: u64, losses: u64) -> Option<Estimate> {
    estimate(
        &[losses, draws, wins],
        &[0.0, 0.5, 1.0],
        MIN_TRINOMIAL_GAMES,
    )
}

/// Solve Σ wᵢgᵢ/(1 + x·gᵢ) = 0 for x in (lo, hi), the `(wᵢ, gᵢ)` in `terms`: the equation of a
/// likelihood maximised under one linear constraint (the SPRT's, and the interval's for a sample
/// without spread). The left side falls strictly in x. Newton steps are taken only inside the
/// shrinking bracket and only when they at least halve the residual; else the bracket is halved.
/// (A plain Newton step from 0 can land a few ulps from a pole, where the residual is huge and
/// each later step moves by a few ulps, which looked converged: the SPRT then accepted H1 for
/// 36 pairs scoring 42%.)
pub(crate) fn secular_root(terms: &[(f64, f64)], mut lo: f64, mut hi: f64) -> f64 {
    let value = |x: f64| -> (f64, f64) {
        let mut s = 0.0;
        let mut ds = 0.0;
        for (w, g) in terms {
            let d = 1.0 + x * g;
            s += w * g / d;
            ds -= w * g * g / (d * d);
        }
        (s, ds)
    };
    let mut x = 0.0f64.clamp(lo, hi);
    let (mut s, mut ds) = value(x);
    for _ in 0..400 {
        if s == 0.0 {
            return x;
        }
        if s > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - s / ds;
        if ds < 0.0 && newton > lo && newton < hi {
            let (s_newton, ds_newton) = value(newton);
            if s_newton.abs() < 0.5 * s.abs() {
                let step = (newton - x).abs();
                (x, s, ds) = (newton, s_newton, ds_newton);
                if step <= 1e-15 * (1.0 + x.abs()) {
                    return x;
                }
                continue;
            }
        }
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi || hi - lo <= 1e-15 * (1.0 + mid.abs()) {
            return mid;
        }
        x = mid;
        (s, ds) = value(x);
    }
    x
}

/// A 95% interval as every report prints it: `[95%: -12.0, +30.5]`.
pub fn format_interval(low: f64, high: f64) -> String {
    format!("[95%: {}, {}]", format_elo(low), format_elo(high))
}

/// A signed Elo value with one decimal; ±∞ as `+inf`/`-inf`.
pub fn format_elo(elo: f64) -> String {
    if elo == f64::INFINITY {
        "+inf".into()
    } else if elo == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        // Avoid "-0.0".
        let e = if elo.abs() < 0.05 { 0.0 } else { elo };
        format!("{e:+.1}")
    }
}

impl Estimate {
    /// The Elo difference as people should read it: a bound instead of ±∞ when A scored
    /// everything (`> +X`, X computed as if A had dropped half a point in one game) or nothing.
    /// `games` is the number of games behind the score.
    pub fn elo_text(&self, games: u64) -> String {
        if self.elo.is_finite() {
            return format_elo(self.elo);
        }
        let g = games.max(1) as f64;
        if self.elo > 0.0 {
            format!("> {}", format_elo(elo_from_score((g - 0.5) / g)))
        } else {
            format!("< {}", format_elo(elo_from_score(0.5 / g)))
        }
    }
}

impl Estimate {
    /// The interval as printed: `[95%: -12.0, +30.5]`, or why there is none
    /// (`[95%: n/a below 10 pairs]`); `unit` names the samples (`pairs`, `games`).
    pub fn interval_text(&self, unit: &str) -> String {
        match self.interval {
            Some((low, high)) => format_interval(low, high),
            None => format!("[95%: {}]", no_interval_reason(unit)),
        }
    }

    /// LOS as printed: `LOS 97.3%`, or `LOS n/a`.
    pub fn los_text(&self) -> String {
        match self.los {
            Some(los) => format!("LOS {:.1}%", los * 100.0),
            None => "LOS n/a".into(),
        }
    }
}

/// The Elo part of a progress line from the pentanomial counts: `Elo +12.0 [95%: -3.1, +27.4]`,
/// `Elo -190.8 [95%: n/a below 10 pairs]`, `Elo > +190.8 [95%: +214.1, +inf]`; `None` before
/// the first pair.
pub fn progress_elo(t: &Tally) -> Option<String> {
    let e = pentanomial(&t.pentanomial)?;
    Some(format!(
        "Elo {} {}",
        e.elo_text(t.games()),
        e.interval_text("pairs")
    ))
}

/// The result lines of a match, from a tally.
pub struct Report<'a>(pub &'a Tally);

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        let p = &t.pentanomial;
        writeln!(
            f,
            "games: {} (+{} ={} -{}), pairs: {}, pentanomial [0, 0.5, 1, 1.5, 2]: [{}, {}, {}, {}, {}]",
            t.games(),
            t.wins,
            t.draws,
            t.losses,
            t.pairs(),
            p[0],
            p[1],
            p[2],
            p[3],
            p[4]
        )?;
        let Some(penta) = pentanomial(p) else {
            return writeln!(f, "Elo: no games played");
        };
        writeln!(
            f,
            "score: {:.2}% ({} / {} points)",
            penta.score * 100.0,
            half_points(t.wins * 2 + t.draws),
            t.games()
        )?;
        if !penta.elo.is_finite() {
            let who = if penta.elo > 0.0 { "won" } else { "lost" };
            return writeln!(
                f,
                "Elo: {} {} (pentanomial; every game {who}), {}",
                penta.elo_text(t.games()),
                penta.interval_text("pairs"),
                penta.los_text()
            );
        }
        writeln!(
            f,
            "Elo: {} {} (pentanomial), {}",
            penta.elo_text(t.games()),
            penta.interval_text("pairs"),
            penta.los_text()
        )?;
        if let Some(tri) = trinomial(t.wins, t.draws, t.losses) {
            writeln!(
                f,
                "Elo (trinomial, games as independent): {} {}",
                tri.elo_text(t.games()),
                tri.interval_text("games")
            )?;
        }
        Ok(())
    }
}

/// Half-points as `12` or `12.5`.
/// Half points as text: `7`, `7.5`.
pub fn half_points(halves: u64) -> String {
    if halves.is_multiple_of(2) {
        format!("{}", halves / 2)
    } else {
        format!("{}.5", halves / 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn elo_of_scores() {
        assert!(close(elo_from_score(0.5), 0.0, 1e-12));
        // 0.75 → −400·log10(1/3) = 190.848...
        assert!(close(elo_from_score(0.75), 190.848_501_887_865, 1e-9));
        assert!(close(elo_from_score(0.25), -190.848_501_887_865, 1e-9));
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
        assert_eq!(elo_from_score(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn normal_cdf_values() {
        assert!(close(normal_cdf(0.0), 0.5, 1e-12));
        assert!(close(normal_cdf(Z95), 0.975, 1e-9));
        assert!(close(normal_cdf(-1.0), 0.158_655_253_931_457, 1e-9));
    }

    #[test]
    fn pentanomial_by_hand() {
        // 10 pairs: 1×0, 2×½, 4×1, 2×1½, 1×2 points → per-game scores 0, .25, .5, .75, 1.
        // mean = 0.5; the distribution is symmetric, so is the interval.
        let e = pentanomial(&[1, 2, 4, 2, 1]).unwrap();
        assert_eq!(e.n, 10);
        assert!(close(e.score, 0.5, 1e-12));
        // var = (.25 + 2·.0625 + 0 + 2·.0625 + .25)/10 = 0.075; stderr = sqrt(0.0075).
        assert!(close(e.stderr, 0.0075f64.sqrt(), 1e-12));
        assert!(close(e.elo, 0.0, 1e-9));
        // Student's t: unbiased var 0.075·10/9, stderr sqrt(0.0083333) = 0.091287, t(9) =
        // 2.262157: 0.5 ± 0.206506 → 0.706506 = +152.61 Elo (main's normal interval, which
        // covered 87.5% at 10 pairs, said ±122.8).
        let (low, high) = e.interval.unwrap();
        assert!(close(low, -high, 1e-6), "{low} {high}");
        assert!(close(high, 152.61, 0.01), "{high}");
        assert!(close(e.los.unwrap(), 0.5, 1e-12));
    }

    #[test]
    fn a_skewed_sample_gets_an_interval_that_follows_its_skew() {
        // 4 pairs: below MIN_INTERVAL_SAMPLES: no interval, no LOS.
        let e = pentanomial(&[0, 0, 2, 1, 1]).unwrap();
        assert!(close(e.score, 0.6875, 1e-12));
        // Elo of 0.6875 = −400·log10(0.3125/0.6875) = 136.97
        assert!(close(e.elo, 136.97, 0.01), "{}", e.elo);
        assert_eq!((e.interval, e.los), (None, None));
        assert_eq!(e.interval_text("pairs"), "[95%: n/a below 10 pairs]");
        // Three times the pairs: unbiased var 0.04296875·12/11 = 0.046875, stderr 0.0625,
        // t(11) = 2.200985: 0.6875 ± 0.137562 = [0.549938, 0.825062] → [+34.82, +269.44] Elo,
        // longer above the estimate than below (Elo stretches toward a score of 1).
        let e = pentanomial(&[0, 0, 6, 3, 3]).unwrap();
        let (low, high) = e.interval.unwrap();
        assert!(close(low, 34.82, 0.01), "{low}");
        assert!(close(high, 269.44, 0.01), "{high}");
        assert!(high - e.elo > e.elo - low, "{low} {} {high}", e.elo);
        // LOS = T11(0.1875/0.0625 = 3) = 0.99396.
        assert!(close(e.los.unwrap(), 0.99396, 1e-5), "{:?}", e.los);
    }

    /// Defect 10 of issue 12: one pair printed `Elo -190.8 [95%: -190.8, -190.8]`.
    #[test]
    fn small_samples_give_no_interval_and_spreadless_ones_an_honest_one() {
        let mut one = Tally::default();
        one.add_pair([-1, 0]);
        let text = Report(&one).to_string();
        assert!(
            text.contains("Elo: -190.8 [95%: n/a below 10 pairs] (pentanomial), LOS n/a"),
            "{text}"
        );
        assert!(
            text.contains(
                "Elo (trinomial, games as independent): -190.8 [95%: n/a below 20 games]"
            ),
            "{text}"
        );
        assert_eq!(
            progress_elo(&one).unwrap(),
            "Elo -190.8 [95%: n/a below 10 pairs]"
        );
        // Nine pairs: still too few; ten: an interval.
        let mut t = Tally::default();
        for scores in [
            [1, 0],
            [0, -1],
            [1, 1],
            [0, 0],
            [-1, 1],
            [1, 0],
            [0, 0],
            [1, -1],
            [0, 1],
        ] {
            t.add_pair(scores);
        }
        assert!(pentanomial(&t.pentanomial).unwrap().interval.is_none());
        t.add_pair([-1, 0]);
        let e = pentanomial(&t.pentanomial).unwrap();
        assert!(e.interval.is_some() && e.los.is_some());
        assert!(
            progress_elo(&t).unwrap().contains("[95%: -"),
            "{:?}",
            progress_elo(&t)
        );
        // Twelve pairs that all scored one point: no spread, yet an interval, finite and
        // symmetric. By hand: the likeliest distribution with mean μ > ½ keeps the observed ½
        // and moves weight 1 − 2(1 − μ) to 1, so W(μ) = 2·12·ln(½/(1 − μ)); W = t²(11) =
        // 2.200985² = 4.844335 at 1 − μ = ½·exp(−0.201847) = 0.408632: μ = 0.591368, +64.2.
        let e = pentanomial(&[0, 0, 12, 0, 0]).unwrap();
        let (low, high) = e.interval.unwrap();
        assert!(close(high, 64.2, 0.05), "{high}");
        assert!(close(low, -64.2, 0.05), "{low}");
        assert_eq!(e.interval_text("pairs"), "[95%: -64.2, +64.2]");
        assert!(close(e.los.unwrap(), 0.5, 1e-12));
    }

    #[test]
    fn trinomial_by_hand() {
        // 6 wins, 2 draws, 2 losses: mean (6 + 1)/10 = 0.7 → +147.2 Elo; 10 games are below
        // MIN_TRINOMIAL_GAMES: no interval.
        let e = trinomial(6, 2, 2).unwrap();
        assert!(close(e.score, 0.7, 1e-12));
        assert!(close(e.stderr, 0.016f64.sqrt(), 1e-12));
        assert!(close(e.elo, 147.19, 0.01), "{}", e.elo);
        assert_eq!((e.interval, e.los), (None, None));
        assert_eq!(e.interval_text("games"), "[95%: n/a below 20 games]");
        // Twice the games: unbiased var 0.16·20/19 = 0.168421, stderr 0.091766, t(19) =
        // 2.093024: 0.7 ± 0.192069 = [0.507931, 0.892069] → [+5.51, +366.90] Elo.
        let (low, high) = trinomial(12, 4, 4).unwrap().interval.unwrap();
        assert!(close(low, 5.51, 0.01), "{low}");
        assert!(close(high, 366.90, 0.01), "{high}");
        // 10 wins, 6 draws, 4 losses: mean 0.65, unbiased var 3.05/19 = 0.160526, stderr
        // 0.089590, ±0.187515: [0.462487, 0.837513] → [−26.12, +284.87] Elo.
        let (low, high) = trinomial(10, 6, 4).unwrap().interval.unwrap();
        assert!(close(low, -26.12, 0.01), "{low}");
        assert!(close(high, 284.87, 0.01), "{high}");
    }

    #[test]
    fn edge_cases() {
        assert_eq!(pentanomial(&[0; 5]), None);
        assert_eq!(trinomial(0, 0, 0), None);
        // All pairs won twice: score 1; below 10 pairs no interval.
        let e = pentanomial(&[0, 0, 0, 0, 7]).unwrap();
        assert_eq!(e.elo, f64::INFINITY);
        assert_eq!(e.los, None);
        // 14 games, as if 13.5/14 → −400·log10(0.5/13.5) = 572.5
        assert_eq!(e.elo_text(14), "> +572.5");
        let e = pentanomial(&[3, 0, 0, 0, 0]).unwrap();
        assert_eq!(e.elo, f64::NEG_INFINITY);
        assert_eq!(e.los, None);
        assert_eq!(e.elo_text(6), "< -416.6");
        // Ten pairs all 2–0: the lower end is finite, the upper one cannot be. By hand:
        // W(μ) = 2·10·ln(1/μ) = t²(9) = 2.262157² = 5.117355 at μ = exp(−0.255868) = 0.774240: +214.10.
        let e = pentanomial(&[0, 0, 0, 0, 10]).unwrap();
        let (low, high) = e.interval.unwrap();
        assert!(close(low, 214.10, 0.01), "{low}");
        assert_eq!(high, f64::INFINITY);
        assert_eq!(e.interval_text("pairs"), "[95%: +214.1, +inf]");
        // W(½) = 2·10·ln 2 = 13.86: LOS = T9(3.72) = 0.9976.
        assert!(close(e.los.unwrap(), 0.9976, 1e-4), "{:?}", e.los);
        let e = pentanomial(&[10, 0, 0, 0, 0]).unwrap();
        let (low, high) = e.interval.unwrap();
        assert_eq!(low, f64::NEG_INFINITY);
        assert!(close(high, -214.10, 0.01), "{high}");
        // Nine pairs 2–0 and one 1–1: Student's t, past a score of 1 above (+∞), finite below.
        let e = pentanomial(&[0, 0, 1, 0, 9]).unwrap();
        let (low, high) = e.interval.unwrap();
        assert!(low.is_finite() && low < e.elo && high == f64::INFINITY);
        // All draws: a finite interval around 0.
        let e = trinomial(0, 20, 0).unwrap();
        let (low, high) = e.interval.unwrap();
        assert!(low < 0.0 && high > 0.0 && high.is_finite() && close(low, -high, 1e-6));
        assert_eq!(format_elo(-0.01), "+0.0");
        assert_eq!(format_elo(12.345), "+12.3");
    }

    #[test]
    fn tally_counts_pairs() {
        let mut t = Tally::default();
        t.add_pair([1, 1]);
        t.add_pair([1, -1]);
        t.add_pair([0, -1]);
        t.add_pair([0, 0]);
        assert_eq!((t.wins, t.draws, t.losses), (3, 3, 2));
        assert_eq!(t.pentanomial, [0, 1, 2, 0, 1]);
        assert_eq!(t.pairs(), 4);
        assert_eq!(t.games(), 8);
        let text = Report(&t).to_string();
        assert!(text.contains("games: 8 (+3 =3 -2), pairs: 4"), "{text}");
        assert!(text.contains("score: 56.25% (4.5 / 8 points)"), "{text}");
        assert!(text.contains("(pentanomial), LOS"), "{text}");
        let mut all = Tally::default();
        all.add_pair([1, 1]);
        let text = Report(&all).to_string();
        assert!(
            text.contains(
                "Elo: > +190.8 [95%: n/a below 10 pairs] (pentanomial; every game won), LOS n/a"
            ),
            "{text}"
        );
        let empty = Report(&Tally::default()).to_string();
        assert!(empty.contains("Elo: no games played"), "{empty}");
    }

    #[test]
    fn a_tally_of_games_pairs_them_in_order() {
        let t = Tally::of_games([1, 1, 1, -1, 0, -1, 0, 0, 1]);
        let mut pairs = Tally::default();
        for p in [[1, 1], [1, -1], [0, -1], [0, 0]] {
            pairs.add_pair(p);
        }
        assert_eq!(t.pentanomial, pairs.pentanomial);
        // The last game has no pair: a game, not a pair.
        assert_eq!((t.wins, t.draws, t.losses), (4, 3, 2));
        assert_eq!((t.games(), t.pairs()), (9, 4));
    }
}
