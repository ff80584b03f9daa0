//! Match statistics: score, Elo difference, 95% confidence intervals and LOS from W/D/L
//! (trinomial) and game-pair (pentanomial) counts. Pure functions, no I/O.
//!
//! The interval is the normal approximation on the mean score: per-pair (or per-game) score
//! variance divided by the number of pairs (games), ±1.96 standard errors, and both ends mapped
//! to Elo with `−400·log10(1/s − 1)`. The pentanomial form is the one to trust for paired games:
//! the two games of a pair share an opening, so their results are correlated and the trinomial
//! interval (games treated as independent) is usually too wide or too narrow.
//!
//! Below [`MIN_INTERVAL_SAMPLES`] samples, or when every sample scored the same, no interval and
//! no LOS are given: the normal approximation has nothing honest to say there.

pub mod sprt;

use std::fmt;

use statrs::function::erf::erfc;

/// The two-sided 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The fewest samples (pairs for the pentanomial form, games for the trinomial) for which an
/// interval and LOS are given. The normal interval `mean ± 1.96·s/√n` rests on the sample
/// spread `s` standing in for the true one. With few samples it does not: one pair always has
/// `s = 0` (one pair printed `Elo −190.8 [95%: −190.8, −190.8]`), and a handful of pairs often
/// all fall in one or two of the five buckets. Even with a fair `s`, the right multiplier is
/// Student's t for n − 1 degrees of freedom: 12.7 at n = 2, 4.30 at n = 3, 2.78 at n = 5, but
/// 2.26 at n = 10 and 2.09 at n = 20, so from 10 samples on the 1.96 interval is at most about
/// 15% too narrow and that error shrinks fast; below 10 it would understate the uncertainty
/// by a factor of up to six.
pub const MIN_INTERVAL_SAMPLES: u64 = 10;

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

    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    pub fn pairs(&self) -> u64 {
        self.pentanomial.iter().sum()
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
    /// The 95% interval in Elo, low and high (ends may be ±∞); `None` below
    /// [`MIN_INTERVAL_SAMPLES`] or when every sample scored the same (no spread to measure).
    pub interval: Option<(f64, f64)>,
    /// Likelihood of superiority: P(A is stronger), normal approximation; `None` exactly when
    /// `interval` is.
    pub los: Option<f64>,
}

/// Why an estimate has no interval, for the text in its place.
fn no_interval_reason(e: &Estimate, unit: &str) -> String {
    if e.n < MIN_INTERVAL_SAMPLES {
        format!("n/a below {MIN_INTERVAL_SAMPLES} {unit}")
    } else {
        format!("n/a: all {} {unit} scored the same", e.n)
    }
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
fn estimate(counts: &[u64], values: &[f64]) -> Option<Estimate> {
    let n: u64 = counts.iter().sum();
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
    let measurable = n >= MIN_INTERVAL_SAMPLES && stderr > 0.0;
    Some(Estimate {
        n,
        score: mean,
        stderr,
        elo: elo_from_score(mean),
        interval: measurable.then(|| {
            (
                elo_from_score(mean - Z95 * stderr),
                elo_from_score(mean + Z95 * stderr),
            )
        }),
        los: measurable.then(|| normal_cdf((mean - 0.5) / stderr)),
    })
}

/// From pentanomial counts (pairs scoring 0, ½, 1, 1½, 2 points for A). `None` for no pairs.
pub fn pentanomial(p: &[u64; 5]) -> Option<Estimate> {
    estimate(p, &[0.0, 0.25, 0.5, 0.75, 1.0])
}

/// From game counts, treating games as independent. `None` for no games.
pub fn trinomial(wins: u64, draws: u64, losses: u64) -> Option<Estimate> {
    estimate(&[losses, draws, wins], &[0.0, 0.5, 1.0])
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
            Some((low, high)) => format!("[95%: {}, {}]", format_elo(low), format_elo(high)),
            None => format!("[95%: {}]", no_interval_reason(self, unit)),
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
/// `Elo -190.8 [95%: n/a below 10 pairs]`, `Elo > +190.8`; `None` before the first pair.
pub fn progress_elo(t: &Tally) -> Option<String> {
    let e = pentanomial(&t.pentanomial)?;
    if e.elo.is_finite() {
        Some(format!(
            "Elo {} {}",
            e.elo_text(t.games()),
            e.interval_text("pairs")
        ))
    } else {
        Some(format!("Elo {}", e.elo_text(t.games())))
    }
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
                "Elo: {} (every game {who}: no interval), {}",
                penta.elo_text(t.games()),
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
        // mean = (0 + 2·.25 + 4·.5 + 2·.75 + 1)/10 = 0.5; the distribution is symmetric.
        // var = (.25 + 2·.0625 + 0 + 2·.0625 + .25)/10 = 0.075; stderr = sqrt(0.0075).
        let e = pentanomial(&[1, 2, 4, 2, 1]).unwrap();
        assert_eq!(e.n, 10);
        assert!(close(e.score, 0.5, 1e-12));
        assert!(close(e.stderr, 0.0075f64.sqrt(), 1e-12));
        assert!(close(e.elo, 0.0, 1e-9));
        let half = Z95 * 0.0075f64.sqrt(); // 0.16974...
        let (low, high) = e.interval.unwrap();
        assert!(close(high, elo_from_score(0.5 + half), 1e-9));
        assert!(close(low, -high, 1e-9));
        // 0.5 + 0.169740 = 0.669740 → −400·log10(0.330260/0.669740) = 122.82
        assert!(close(high, 122.82, 0.01), "{high}");
        assert!(close(e.los.unwrap(), 0.5, 1e-12));
    }

    #[test]
    fn pentanomial_skewed_by_hand() {
        // 4 pairs: 0×0, 0×½, 2×1, 1×1½, 1×2 → scores .5, .5, .75, 1: mean 0.6875.
        // var = (2·.03515625 + .00390625 + .09765625)/4 = 0.04296875; stderr = sqrt(var/4).
        let e = pentanomial(&[0, 0, 2, 1, 1]).unwrap();
        assert!(close(e.score, 0.6875, 1e-12));
        let se = (0.042_968_75f64 / 4.0).sqrt(); // 0.103644...
        assert!(close(e.stderr, se, 1e-12));
        // Elo of 0.6875 = −400·log10(0.3125/0.6875) = 136.97
        assert!(close(e.elo, 136.97, 0.01), "{}", e.elo);
        // 4 pairs are below MIN_INTERVAL_SAMPLES: no interval, no LOS.
        assert_eq!((e.interval, e.los), (None, None));
        assert_eq!(e.interval_text("pairs"), "[95%: n/a below 10 pairs]");
        // Three times the pairs, same shape: mean and spread as before, stderr = sqrt(var/12)
        // = 0.059839; LOS = Φ(0.1875/0.059839) = Φ(3.1334) ≈ 0.99914.
        let e = pentanomial(&[0, 0, 6, 3, 3]).unwrap();
        let se = (0.042_968_75f64 / 12.0).sqrt();
        assert!(close(e.stderr, se, 1e-12));
        assert!(close(e.los.unwrap(), 0.999_136, 1e-6), "{:?}", e.los);
        // Ends 0.6875 ∓ 1.96·0.059839 = 0.570217, 0.804783 → +49.12, +246.06 Elo.
        let (low, high) = e.interval.unwrap();
        assert!(close(low, 49.12, 0.01), "{low}");
        assert!(close(high, 246.06, 0.01), "{high}");
    }

    /// Defect 10 of issue 12: one pair printed `Elo -190.8 [95%: -190.8, -190.8]`.
    #[test]
    fn small_or_spreadless_samples_give_no_interval() {
        let mut one = Tally::default();
        one.add_pair([-1, 0]);
        let text = Report(&one).to_string();
        assert!(
            text.contains("Elo: -190.8 [95%: n/a below 10 pairs] (pentanomial), LOS n/a"),
            "{text}"
        );
        assert!(
            text.contains(
                "Elo (trinomial, games as independent): -190.8 [95%: n/a below 10 games]"
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
        // Twelve pairs that all scored one point: no spread, so no interval either.
        let e = pentanomial(&[0, 0, 12, 0, 0]).unwrap();
        assert_eq!(e.interval, None);
        assert_eq!(
            e.interval_text("pairs"),
            "[95%: n/a: all 12 pairs scored the same]"
        );
    }

    #[test]
    fn trinomial_by_hand() {
        // 6 wins, 2 draws, 2 losses: mean (6 + 1)/10 = 0.7;
        // var = (6·.09 + 2·.04 + 2·.49)/10 = 0.16; stderr = sqrt(0.016).
        let e = trinomial(6, 2, 2).unwrap();
        assert!(close(e.score, 0.7, 1e-12));
        assert!(close(e.stderr, 0.016f64.sqrt(), 1e-12));
        assert!(close(e.elo, 147.19, 0.01), "{}", e.elo);
        // 0.7 + 1.96·0.126491 = 0.947920 → 504.0 Elo; 0.7 − 0.247920 = 0.452080 → −33.4 Elo
        let (low, high) = e.interval.unwrap();
        assert!(close(high, 504.03, 0.01), "{high}");
        assert!(close(low, -33.40, 0.01), "{low}");
    }

    #[test]
    fn edge_cases() {
        assert_eq!(pentanomial(&[0; 5]), None);
        assert_eq!(trinomial(0, 0, 0), None);
        // All pairs won twice: score 1, no variance.
        let e = pentanomial(&[0, 0, 0, 0, 7]).unwrap();
        assert_eq!(e.elo, f64::INFINITY);
        assert_eq!(e.los, None);
        // 14 games, as if 13.5/14 → −400·log10(0.5/13.5) = 572.5
        assert_eq!(e.elo_text(14), "> +572.5");
        let e = pentanomial(&[3, 0, 0, 0, 0]).unwrap();
        assert_eq!(e.elo, f64::NEG_INFINITY);
        assert_eq!(e.los, None);
        assert_eq!(e.elo_text(6), "< -416.6");
        // Intervals that reach past 0 or 1 become infinite ends: mean 0.95, stderr 0.047434,
        // upper end 0.95 + 0.093 > 1.
        let e = pentanomial(&[0, 0, 1, 0, 9]).unwrap();
        let (low, high) = e.interval.unwrap();
        assert_eq!(high, f64::INFINITY);
        assert!(low.is_finite());
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
            text.contains("Elo: > +190.8 (every game won: no interval), LOS n/a"),
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
