//! `spsa report`: where each variable stands and whether it is still moving.
//!
//! For each variable: start, current θ, bounds, the current c_k and R_k, the drift since the
//! start in units of c_k, and the trend over the last part of the log (by default the last 10%
//! of its rows, at least [`MIN_WINDOW_ROWS`]): the least-squares slope of θ against the
//! iteration, per 1000 iterations, and the change that line makes across the window in units
//! of c_k.
//!
//! **Settled rule.** A variable is *settled* when the least-squares line through the window moves
//! across it by less than the larger of
//! - half of the current c_k (SPSA cannot resolve differences much below the perturbation it
//!   plays), and
//! - twice the noise σ: the standard deviation of the change that the iterations' signals alone
//!   would produce over the window, σ = sqrt(Σ_k (R_k·c_k)²·E[s²]) summed over the window's
//!   iterations ([`SignalScale`]). For games the signal s is a pair's match result and E[s²]
//!   comes from the run's pentanomial counts; for a tune from positions s = −(L+ − L−)/2 and
//!   E[s²] is the mean over the loss log's iterations (taking all of it as noise: the limit errs
//!   towards `settled`, never towards `moving`).
//!
//! That is |slope · span| < max(c_k/2, 2σ), shown in units of c_k as `trend/c_k` and `limit/c_k`.
//! The verdict, in this order ([`Verdict`]):
//! - `moving`: the trend line crosses the limit.
//! - `frozen`: it does not, but it could not have: even if every pair in the window had pushed
//!   the variable the same way with the largest signal (|match| = 2 for games, the largest
//!   |L+ − L−|/2 seen for positions), the schedule's steps there, max|s|·Σ a_k/c_k, add up to
//!   less than the limit. A flat trend then says nothing about the games.
//! - `drifting`: the trend is within the limit, but carried on over the iterations the schedule
//!   still has (scaled by their step sizes a_k/c_k relative to the window's) it would move the
//!   variable by the limit or more: it is still far from where its trend points.
//! - `yes` (settled): none of these. It shows no trend that noise would not explain, and the
//!   schedule gave it room to show one. This says the last part of the run no longer moves θ,
//!   not that θ is at the optimum (compare with `spsa simulate --runs`).
//!
//! With fewer than [`MIN_WINDOW_ROWS`] rows no verdict is given.

use std::fmt::Write as _;

use crate::spsa::{Part, Spsa};
use crate::tuner::checkpoint::Checkpoint;
use crate::vars::format_value;

use super::history::History;

/// A window shorter than this gives no trend and no verdict.
pub const MIN_WINDOW_ROWS: usize = 10;
/// The settled threshold's floor: |trend change across the window| / c_k below this.
pub const SETTLED_CK: f64 = 0.5;
/// The settled threshold in noise standard deviations.
pub const SETTLED_SIGMAS: f64 = 2.0;

/// What the window says about one variable (see the module comment for the rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No trend beyond noise, and the schedule left room for one.
    Settled,
    /// The trend across the window reaches the limit.
    Moving,
    /// The schedule's steps across the window could not reach the limit: no verdict possible.
    Frozen,
    /// Flat in the window, but the trend carried over the rest of the schedule reaches the limit.
    Drifting,
    /// Dropped from the variables file by a resume: held at its θ.
    Held,
}

impl Verdict {
    /// The word in the report's `settled` column.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Settled => "yes",
            Verdict::Moving => "moving",
            Verdict::Frozen => "frozen",
            Verdict::Drifting => "drifting",
            Verdict::Held => "held",
        }
    }
}

/// The trend of one variable over the window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    /// Least-squares slope of θ per 1000 iterations.
    pub slope_per_1000: f64,
    /// slope · (window span in iterations) / c_k.
    pub change_ck: f64,
    /// The settled limit max(1/2, 2σ/c_k) in units of c_k.
    pub limit_ck: f64,
    /// The most the schedule let θ move across the window, 2·Σ a_k/c_k, in units of c_k.
    pub possible_ck: f64,
    /// The trend carried over the iterations still to play, in units of c_k (0 when finished).
    pub projected_ck: f64,
    pub verdict: Verdict,
}

impl Trend {
    pub fn settled(&self) -> bool {
        self.verdict == Verdict::Settled
    }
}

/// The largest |match| of one iteration (one pair: two wins or two losses).
const MAX_MATCH: f64 = 2.0;

/// How large one iteration's signal (the number the update multiplies by a_k/c_k) runs: the
/// scale of the noise σ and of the `frozen` test. Games and losses differ by orders of magnitude
/// (a pair's match is −2…2, a loss difference about 10⁻⁴), so each run is judged in its own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignalScale {
    /// E[s²] over the iterations.
    pub mean_square: f64,
    /// The largest |s| one iteration can bring (games) or brought (losses).
    pub max_abs: f64,
    /// What the signals are, for the report's legend.
    pub source: SignalSource,
}

/// Where a run's signals come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalSource {
    Games,
    Losses,
}

impl SignalScale {
    /// A tune by games: pair results, E[match²] from the pentanomial counts.
    pub fn games(pentanomial: &[u64; 5]) -> Self {
        SignalScale {
            mean_square: mean_square_match(pentanomial),
            max_abs: MAX_MATCH,
            source: SignalSource::Games,
        }
    }

    /// A tune from positions: the signals −(L+ − L−)/2 of its iterations (from the loss log).
    /// `None` without any.
    pub fn losses(signals: &[f64]) -> Option<Self> {
        if signals.is_empty() {
            return None;
        }
        Some(SignalScale {
            mean_square: signals.iter().map(|s| s * s).sum::<f64>() / signals.len() as f64,
            max_abs: signals.iter().fold(0.0_f64, |m, s| m.max(s.abs())),
            source: SignalSource::Losses,
        })
    }
}

/// One variable's line of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct VarStatus {
    pub name: String,
    pub start: f64,
    pub current: f64,
    pub min: f64,
    pub max: f64,
    pub c_k: f64,
    pub r_k: f64,
    /// (θ − start) / c_k.
    pub drift_ck: f64,
    /// (θ − start) / c_end: the move in the variable's own unit of perturbation, comparable
    /// across variables and across the run (c_k shrinks as the run goes on, c_end does not).
    pub drift_c_end: f64,
    pub trend: Option<Trend>,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    /// Updates applied as of the values shown.
    pub applied: u64,
    pub total: u64,
    pub finished: bool,
    /// Iterations covered by the window (first, last) and its row count.
    pub window: Option<(u64, u64, usize)>,
    pub vars: Vec<VarStatus>,
    pub games: (u64, u64, u64),
    /// The current θ, exact when it comes from the checkpoint.
    pub theta: Vec<f64>,
    /// What the noise limit was measured in.
    pub signals: SignalSource,
}

/// The rows of the window: the last `fraction` of `rows`, at least [`MIN_WINDOW_ROWS`].
pub fn window_rows(rows: usize, fraction: f64) -> Option<std::ops::Range<usize>> {
    let want = ((rows as f64 * fraction).ceil() as usize).max(MIN_WINDOW_ROWS);
    (rows >= MIN_WINDOW_ROWS).then(|| rows - want.min(rows)..rows)
}

/// Least-squares slope of y against x.
pub fn slope(x: &[u64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mx = x.iter().map(|&v| v as f64).sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (&xi, &yi) in x.iter().zip(y) {
        let dx = xi as f64 - mx;
        sxy += dx * (yi - my);
        sxx += dx * dx;
    }
    if sxx > 0.0 { sxy / sxx } else { 0.0 }
}

/// Compute the report from a checkpoint and (when there is one) its log, for a tune by games.
pub fn analyse(ck: &Checkpoint, log: Option<&History>, fraction: f64) -> Status {
    analyse_scaled(
        ck,
        log,
        fraction,
        SignalScale::games(&ck.state.counts.pentanomial),
    )
}

/// [`analyse`] with the noise measured in `scale` (a tune from positions passes its losses').
pub fn analyse_scaled(
    ck: &Checkpoint,
    log: Option<&History>,
    fraction: f64,
    scale: SignalScale,
) -> Status {
    let state = &ck.state;
    let (applied, theta) = current(ck, log);
    // The window's noise and steps are reckoned on the run's curve; a variable that joined
    // later shows its own c_k and R_k (its steps in the window are then only approximated).
    let spsa = Spsa::new(&ck.vars, state.schedule());
    let (own, parts) = (state.spsa(&ck.vars), state.parts(&ck.vars));
    let k = applied.max(1);
    let window = log
        .filter(|h| h.names.len() == theta.len())
        .and_then(|h| window_rows(h.rows(), fraction).map(|r| (h, r)));
    // Σ_k (R_k·c_k)² over the window = (R_1·c_1)_i² · Σ_k ((R_k·c_k)/(R_1·c_1))², the ratio
    // being the same for every variable.
    let step = |i: usize, k: u64| {
        let g = spsa.gains(i, k);
        g.a_k / g.c_k
    };
    // The same holds for Σ_k a_k/c_k over the window and over the iterations still to play
    // (relative to the window's mean step, to carry the trend forward).
    let (window_sum, window_steps, rest_over_window_step) = match (&window, ck.vars.is_empty()) {
        (Some((h, r)), false) => {
            let (first, last) = (h.iterations[r.start].max(1), h.iterations[r.end - 1].max(1));
            let s1 = step(0, 1);
            let ratio = |k: u64| step(0, k) / s1;
            let squares = (first..=last).map(|k| ratio(k).powi(2)).sum::<f64>();
            let steps = (first..=last).map(ratio).sum::<f64>();
            let mean_step = steps / (last - first + 1) as f64;
            let rest = (applied + 1..=state.iterations).map(ratio).sum::<f64>();
            (squares, steps, rest / mean_step)
        }
        _ => (0.0, 0.0, 0.0),
    };
    let vars = ck
        .vars
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let g = Some(own.gains(i, k))
                .filter(|g| g.c_k > 0.0)
                .unwrap_or_else(|| spsa.gains(i, k));
            let trend = window.as_ref().map(|(h, r)| {
                let x = &h.iterations[r.clone()];
                let s = slope(x, &h.values[i][r.clone()]);
                let span = (x[x.len() - 1] - x[0]) as f64;
                let change_ck = s * span / g.c_k;
                let sigma = step(i, 1) * (window_sum * scale.mean_square).sqrt();
                let limit_ck = SETTLED_CK.max(SETTLED_SIGMAS * sigma / g.c_k);
                let possible_ck = scale.max_abs * step(i, 1) * window_steps / g.c_k;
                let projected_ck = s * rest_over_window_step / g.c_k;
                let verdict = if parts[i] == Part::Held {
                    Verdict::Held
                } else if change_ck.abs() >= limit_ck {
                    Verdict::Moving
                } else if possible_ck < limit_ck {
                    Verdict::Frozen
                } else if projected_ck.abs() >= limit_ck {
                    Verdict::Drifting
                } else {
                    Verdict::Settled
                };
                Trend {
                    slope_per_1000: s * 1000.0,
                    change_ck,
                    limit_ck,
                    possible_ck,
                    projected_ck,
                    verdict,
                }
            });
            VarStatus {
                name: v.name.clone(),
                start: state.start[i],
                current: theta[i],
                min: v.min,
                max: v.max,
                c_k: g.c_k,
                r_k: g.r_k(),
                drift_ck: (theta[i] - state.start[i]) / g.c_k,
                drift_c_end: (theta[i] - state.start[i]) / v.c_end,
                trend,
            }
        })
        .collect();
    Status {
        applied,
        total: state.iterations,
        finished: state.finished && applied == state.applied,
        window: window.map(|(h, r)| (h.iterations[r.start], h.iterations[r.end - 1], r.len())),
        vars,
        games: (state.counts.wins, state.counts.draws, state.counts.losses),
        theta,
        signals: scale.source,
    }
}

/// The updates applied and θ after them: the checkpoint's, or the log's last row when a live
/// run's log is ahead of its last checkpoint.
pub fn current(ck: &Checkpoint, log: Option<&History>) -> (u64, Vec<f64>) {
    let state = &ck.state;
    if let Some(h) = log.filter(|h| h.names.len() == state.theta.len())
        && let Some(&last) = h.iterations.last()
        && last > state.applied
    {
        return (
            last,
            h.values.iter().map(|col| col[col.len() - 1]).collect(),
        );
    }
    (state.applied, state.theta.clone())
}

/// E[match²] of a pair from the pentanomial counts (match = bucket − 2); 1 before any pair.
pub fn mean_square_match(pentanomial: &[u64; 5]) -> f64 {
    let pairs: u64 = pentanomial.iter().sum();
    if pairs == 0 {
        return 1.0;
    }
    pentanomial
        .iter()
        .enumerate()
        .map(|(b, &n)| n as f64 * ((b as f64) - 2.0).powi(2))
        .sum::<f64>()
        / pairs as f64
}

/// `x` with `digits` significant digits (at most 6 decimals), trailing zeros dropped.
pub fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format_value(x, 0);
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).clamp(0, 6) as usize;
    format_value(x, decimals)
}

/// A text table: first column left-aligned, the rest right-aligned, two spaces apart.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        for (i, (cell, w)) in cells.zip(&widths).enumerate() {
            if i == 0 {
                let _ = write!(out, "{cell:<w$}");
            } else {
                let _ = write!(out, "  {cell:>w$}");
            }
        }
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}

/// Render the report for people.
pub fn render(status: &Status, fraction: f64) -> String {
    let mut out = String::new();
    let state = if status.finished {
        "finished"
    } else {
        "not finished"
    };
    let games = match status.games {
        (0, 0, 0) => "no games recorded".to_string(),
        (w, d, l) => format!("games +{w} ={d} -{l}"),
    };
    let _ = writeln!(
        out,
        "iteration {} of {} ({state}); {games}",
        status.applied, status.total
    );
    match status.window {
        Some((first, last, rows)) => {
            let _ = writeln!(
                out,
                "trend over the last {:.0}% of the log: {rows} rows, iterations {first}..{last}",
                fraction * 100.0
            );
        }
        None => {
            let _ = writeln!(
                out,
                "no trend: the θ log is missing or has fewer than {MIN_WINDOW_ROWS} rows"
            );
        }
    }
    out.push('\n');
    let header = [
        "variable",
        "start",
        "current",
        "min",
        "max",
        "c_k",
        "R_k",
        "drift/c_k",
        "drift/c_end",
        "slope/1k",
        "trend/c_k",
        "limit/c_k",
        "settled",
    ];
    // Many variables: the ones that moved most, and a summary of the rest.
    let shown: Vec<&VarStatus> = if status.vars.len() > TABLE_VARS {
        most_moved(status.vars.iter().map(|v| v.drift_c_end), TABLE_VARS)
            .into_iter()
            .map(|i| &status.vars[i])
            .collect()
    } else {
        status.vars.iter().collect()
    };
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|v| {
            let (slope, change, limit, settled) = match v.trend {
                Some(t) => (
                    significant(t.slope_per_1000, 3),
                    format_value(t.change_ck, 2),
                    format_value(t.limit_ck, 2),
                    t.verdict.word().to_string(),
                ),
                None => ("-".into(), "-".into(), "-".into(), "-".into()),
            };
            vec![
                v.name.clone(),
                format_value(v.start, 2),
                format_value(v.current, 2),
                format_value(v.min, 4),
                format_value(v.max, 4),
                significant(v.c_k, 3),
                significant(v.r_k, 3),
                format_value(v.drift_ck, 2),
                format_value(v.drift_c_end, 2),
                slope,
                change,
                limit,
                settled,
            ]
        })
        .collect();
    out.push_str(&table(&header, &rows));
    if shown.len() < status.vars.len() {
        out.push_str(&rest_summary(status, &shown));
    }
    let noise = match status.signals {
        SignalSource::Games => "game-result noise",
        SignalSource::Losses => "the iterations' loss differences",
    };
    let _ = writeln!(
        out,
        "\nsettled: the least-squares line through the window moves less than limit = max(c_k/2, 2σ) across it,\n\
         σ being the change {noise} alone would make over the window;\n\
         frozen: the schedule's steps across the window could not reach the limit: no verdict (try a wider --window);\n\
         drifting: flat in the window, but the trend carried over the iterations still to play reaches the limit"
    );
    out
}

/// Variables the report's table shows at most: past that, the ones that moved most (in units
/// of c_end) and a summary of the rest.
pub const TABLE_VARS: usize = 40;

/// The indices of the `most` values of `drift` largest in size (NaN last), largest first; ties
/// in the variables' order.
pub fn most_moved(drift: impl Iterator<Item = f64>, most: usize) -> Vec<usize> {
    let size = |d: f64| if d.is_nan() { -1.0 } else { d.abs() };
    let mut order: Vec<(f64, usize)> = drift.enumerate().map(|(i, d)| (size(d), i)).collect();
    let by = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if order.len() > most && most > 0 {
        order.select_nth_unstable_by(most - 1, by);
        order.truncate(most);
    }
    order.sort_unstable_by(by);
    order.truncate(most);
    order.into_iter().map(|(_, i)| i).collect()
}

/// The line under a table that shows only the variables that moved most: how far the others
/// moved, and their verdicts.
fn rest_summary(status: &Status, shown: &[&VarStatus]) -> String {
    let shown_names: std::collections::HashSet<&str> =
        shown.iter().map(|v| v.name.as_str()).collect();
    let rest: Vec<&VarStatus> = status
        .vars
        .iter()
        .filter(|v| !shown_names.contains(v.name.as_str()))
        .collect();
    let mut drift: Vec<f64> = rest.iter().map(|v| v.drift_c_end.abs()).collect();
    drift.sort_by(f64::total_cmp);
    let median = drift.get(drift.len() / 2).copied().unwrap_or(0.0);
    let most = drift.last().copied().unwrap_or(0.0);
    let mut verdicts: std::collections::BTreeMap<&str, usize> = Default::default();
    for v in &rest {
        *verdicts
            .entry(v.trend.map_or("no trend", |t| t.verdict.word()))
            .or_default() += 1;
    }
    let verdicts: Vec<String> = verdicts
        .iter()
        .map(|(word, n)| format!("{n} {word}"))
        .collect();
    format!(
        "the {} variables that moved most in units of c_end, of {}; the other {}: |drift/c_end| at most {} (median {}); settled: {}. `--format csv` lists every variable.\n",
        shown.len(),
        status.vars.len(),
        rest.len(),
        format_value(most, 2),
        format_value(median, 2),
        verdicts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_moved_are_the_largest_drifts_in_size_largest_first() {
        let drift = [0.5, -3.0, f64::NAN, 2.0, -0.1, 3.0];
        assert_eq!(most_moved(drift.into_iter(), 3), [1, 5, 3]);
        assert_eq!(most_moved(drift.into_iter(), 10), [1, 5, 3, 0, 4, 2]);
        assert!(most_moved(drift.into_iter(), 0).is_empty());
    }

    #[test]
    fn windows_and_slopes() {
        assert_eq!(window_rows(5, 0.1), None);
        assert_eq!(window_rows(10, 0.1), Some(0..10));
        assert_eq!(window_rows(50, 0.1), Some(40..50));
        assert_eq!(window_rows(1001, 0.1), Some(900..1001));
        assert!((slope(&[1, 2, 3, 4], &[1.0, 3.0, 5.0, 7.0]) - 2.0).abs() < 1e-12);
        assert_eq!(slope(&[5, 5], &[1.0, 2.0]), 0.0);
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(123.456, 3), "123");
        assert_eq!(significant(0.0023456, 3), "0.00235");
        assert_eq!(significant(12.0, 3), "12");
        assert_eq!(significant(-1.23456, 3), "-1.23");
        assert_eq!(significant(0.0, 3), "0");
        assert_eq!(significant(1e-9, 3), "0");
    }

    #[test]
    fn table_aligns() {
        let t = table(
            &["name", "v"],
            &[
                vec!["a".into(), "1.5".into()],
                vec!["long".into(), "2".into()],
            ],
        );
        assert_eq!(t, "name    v\na     1.5\nlong    2\n");
    }
}
