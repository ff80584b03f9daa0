//! Match statistics: score, Elo difference, 95% confidence intervals and LOS from W/D/L
//! (trinomial) and game-pair (pentanomial) counts. Pure functions, no I/O.
//!
//! The interval is the normal approximation on the mean score: per-pair (or per-game) score
//! variance divided by the number of pairs (games), ±1.96 standard errors, and both ends mapped
//! to Elo with `−400·log10(1/s − 1)`. The pentanomial form is the one to trust for paired games:
//! the two games of a pair share an opening, so their results are correlated and the trinomial
//! interval (games treated as independent) is usually too wide or too narrow.

pub mod sprt;

use std::fmt;

use statrs::function::erf::erfc;

/// The two-sided 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

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
    /// Count one pair given A's two game values (+1/0/−1 each).
    pub fn add_pair(&mut self, scores: [i32; 2]) {
        for s in scores {
            match s.signum() {
                1 => self.wins += 1,
                0 => self.draws += 1,
                _ => self.losses += 1,
            }
        }
        let bucket = (scores[0].signum() + scores[1].signum() + 2) as usize;
        self.pentanomial[bucket] += 1;
    }

    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    pub fn pairs(&self) -> u64 {
        self.pentanomial.iter().sum()
    }
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
    /// The 95% interval in Elo (ends may be ±∞).
    pub elo_low: f64,
    pub elo_high: f64,
    /// Likelihood of superiority: P(A is stronger), normal approximation.
    pub los: f64,
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
    let los = if stderr > 0.0 {
        normal_cdf((mean - 0.5) / stderr)
    } else if mean > 0.5 {
        1.0
    } else if mean < 0.5 {
        0.0
    } else {
        0.5
    };
    Some(Estimate {
        n,
        score: mean,
        stderr,
        elo: elo_from_score(mean),
        elo_low: elo_from_score(mean - Z95 * stderr),
        elo_high: elo_from_score(mean + Z95 * stderr),
        los,
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
                "Elo: {} (every game {who}: no interval), LOS {:.1}%",
                penta.elo_text(t.games()),
                penta.los * 100.0
            );
        }
        writeln!(
            f,
            "Elo: {} [95%: {}, {}] (pentanomial), LOS {:.1}%",
            penta.elo_text(t.games()),
            format_elo(penta.elo_low),
            format_elo(penta.elo_high),
            penta.los * 100.0
        )?;
        if let Some(tri) = trinomial(t.wins, t.draws, t.losses) {
            writeln!(
                f,
                "Elo (trinomial, games as independent): {} [95%: {}, {}]",
                tri.elo_text(t.games()),
                format_elo(tri.elo_low),
                format_elo(tri.elo_high)
            )?;
        }
        Ok(())
    }
}

/// Half-points as `12` or `12.5`.
fn half_points(halves: u64) -> String {
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
        assert!(close(e.elo_high, elo_from_score(0.5 + half), 1e-9));
        assert!(close(e.elo_low, -e.elo_high, 1e-9));
        // 0.5 + 0.169740 = 0.669740 → −400·log10(0.330260/0.669740) = 122.82
        assert!(close(e.elo_high, 122.82, 0.01), "{}", e.elo_high);
        assert!(close(e.los, 0.5, 1e-12));
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
        // LOS = Φ(0.1875/0.103644) = Φ(1.80908) ≈ 0.96478
        assert!(close(e.los, 0.964_78, 1e-4), "{}", e.los);
        // Upper end 0.6875 + 1.96·0.103644 = 0.890638 > 0 and < 1: finite.
        assert!(e.elo_high.is_finite() && e.elo_high > e.elo);
        assert!(close(e.elo_low, elo_from_score(0.6875 - Z95 * se), 1e-9));
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
        assert!(close(e.elo_high, 504.03, 0.01), "{}", e.elo_high);
        assert!(close(e.elo_low, -33.40, 0.01), "{}", e.elo_low);
    }

    #[test]
    fn edge_cases() {
        assert_eq!(pentanomial(&[0; 5]), None);
        assert_eq!(trinomial(0, 0, 0), None);
        // All pairs won twice: score 1, no variance.
        let e = pentanomial(&[0, 0, 0, 0, 7]).unwrap();
        assert_eq!(e.elo, f64::INFINITY);
        assert_eq!(e.los, 1.0);
        // 14 games, as if 13.5/14 → −400·log10(0.5/13.5) = 572.5
        assert_eq!(e.elo_text(14), "> +572.5");
        let e = pentanomial(&[3, 0, 0, 0, 0]).unwrap();
        assert_eq!(e.elo, f64::NEG_INFINITY);
        assert_eq!(e.los, 0.0);
        assert_eq!(e.elo_text(6), "< -416.6");
        // Intervals that reach past 0 or 1 become infinite ends.
        let e = pentanomial(&[0, 0, 1, 0, 3]).unwrap();
        assert_eq!(e.elo_high, f64::INFINITY);
        assert!(e.elo_low.is_finite());
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
            text.contains("Elo: > +190.8 (every game won: no interval), LOS 100.0%"),
            "{text}"
        );
        let empty = Report(&Tally::default()).to_string();
        assert!(empty.contains("Elo: no games played"), "{empty}");
    }
}
