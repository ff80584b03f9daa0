//! What the page and the JSON API show of a run, whichever store it comes from (its files or the
//! database): one set of types, so the HTML and the API carry the same data.

use serde::Serialize;

use crate::matchrun::record::MatchRecord;
use crate::report::export::{self, Format};
use crate::spsa::Spsa;
use crate::tuner::checkpoint::RunState;
use crate::vars::Variable;

/// The most rows a trajectory is read at: a longer log is downsampled to this many rows,
/// evenly spread, the first and the last row always among them.
pub const MAX_POINTS: usize = 400;
/// The most points of the c_k band around each trajectory.
pub const BAND_POINTS: usize = 40;
/// How many rate samples a local run keeps (one per reload of its files, at most one per poll).
pub const RATE_SAMPLES: usize = 240;

/// One line of the runs list.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunSummary {
    /// `local-N` for a run read from files, `db-N` for a shared run.
    pub id: String,
    pub name: String,
    /// `games`, `simulated games` or `positions`.
    pub objective: String,
    /// `active`, `paused`, `finished`, `stopped` (shared), or `running`/`finished` (local).
    pub state: String,
    pub applied: u64,
    pub total: u64,
    /// Games (or evaluations, for positions) per second, recently.
    pub rate: Option<f64>,
    /// `games/s` or `evaluations/s`.
    pub rate_unit: String,
    /// Seconds left at that rate.
    pub seconds_left: Option<f64>,
    pub faults: u64,
    /// Seconds since the run last changed (its log written, a result reported).
    pub last_activity_seconds: Option<f64>,
    /// Shared runs only: a worker serves the highest-priority active run first.
    pub priority: Option<i32>,
    /// Shared runs only: its share of the workers among active runs of its priority.
    pub throughput: Option<f64>,
}

/// One line of the matches list: a match read from its record file.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MatchSummary {
    /// `match-N`, in the order the records were named.
    pub id: String,
    /// The record's path.
    pub name: String,
    /// `running`, `finished`, `interrupted`, `failed`, `stopped` (its process is gone), or the
    /// SPRT's verdict (`H0 accepted`, `H1 accepted`).
    pub state: String,
    /// Elo of A over B with its 95% interval, as `spsa match` prints it.
    pub elo_text: String,
    pub pairs_per_second: Option<f64>,
    /// Seconds since the record was last written.
    pub last_activity_seconds: Option<f64>,
    /// Everything the file holds.
    pub record: MatchRecord,
}

impl MatchSummary {
    pub fn of(id: String, name: String, record: MatchRecord) -> MatchSummary {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        MatchSummary {
            id,
            name,
            state: record.shown_state(),
            elo_text: record.elo_text(),
            pairs_per_second: record.pairs_per_second(),
            last_activity_seconds: Some((now - record.updated).max(0.0)),
            record,
        }
    }
}

/// One variable as it stands.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct VarView {
    pub name: String,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// The perturbation at the current iteration.
    pub c_k: f64,
    /// The perturbation at the run's end: the variable's own unit of moves.
    pub c_end: f64,
    pub current: f64,
    /// (current − start) / c_end: how far the tune moved it, in its own unit.
    pub drift_c_end: f64,
    /// The current value as it would be sent to the engine (rounded within the bounds).
    pub engine_value: String,
}

/// The θ trajectories, downsampled to at most [`MAX_POINTS`] rows.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Series {
    /// Rows of the whole log (or results of the shared run).
    pub rows: u64,
    /// The iteration of each point kept.
    pub iterations: Vec<u64>,
    /// `values[var][point]`.
    pub values: Vec<Vec<f64>>,
    /// Indices into `iterations` where the c_k band is drawn, and `band[var][j]` its c_k there.
    pub band_points: Vec<usize>,
    pub band: Vec<Vec<f64>>,
    /// When `spsa prune` deleted a shared run's results (then no point is left to draw).
    pub pruned: Option<String>,
}

/// One point of the learning curve of a tune from positions.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct LossPoint {
    pub iteration: u64,
    pub train: Option<f64>,
    pub validation: Option<f64>,
}

/// One point of the live Elo curve (`[track]`): θ at `iteration` against `against`, on
/// held-out openings.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TrackPoint {
    pub iteration: u64,
    /// `start` or `defaults`.
    pub against: String,
    pub pairs: u64,
    /// Elo with its 95% interval (`null` where infinite or not given).
    pub elo: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Pairs by θ's points in half-points: [0, 0.5, 1, 1.5, 2].
    pub pentanomial: [u64; 5],
}

impl TrackPoint {
    pub fn of(p: &crate::spsa::track::Point) -> TrackPoint {
        TrackPoint {
            iteration: p.iteration,
            against: p.against.name().to_string(),
            pairs: p.pairs(),
            elo: p.elo,
            low: p.low,
            high: p.high,
            pentanomial: p.pentanomial,
        }
    }

    /// The curve's point again, for the chart.
    pub fn point(&self) -> crate::spsa::track::Point {
        use crate::spsa::track::{Against, Point};
        Point {
            point: 0,
            iteration: self.iteration,
            against: Against::parse(&self.against).unwrap_or_default(),
            pentanomial: self.pentanomial,
            elo: self.elo,
            low: self.low,
            high: self.high,
        }
    }
}

/// "Gained so far" against one opponent (see [`crate::stats::gain`]): the pooled estimate of
/// the last θ, and how it stood after each point (the trend the chart draws, at most
/// [`TREND_POINTS`] of them, always with the last).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GainView {
    /// `start` or `defaults`.
    pub against: String,
    pub elo: f64,
    pub low: f64,
    pub high: f64,
    /// Points pooled and the iterations they span.
    pub points: usize,
    pub from: u64,
    pub to: u64,
    /// `gained +12.3 [95%: +4.1, +20.0] (pooled 47 points, iterations 3000-6000)`.
    pub text: String,
    /// (iteration, Elo, low, high) after each point.
    pub trend: Vec<(u64, f64, f64, f64)>,
}

/// The trend's entries a page carries at most.
pub const TREND_POINTS: usize = 400;

impl GainView {
    /// Per opponent with points, start first.
    pub fn of(points: &[crate::spsa::track::Point]) -> Vec<GainView> {
        use crate::spsa::track::{self, Against};
        [Against::Start, Against::Defaults]
            .into_iter()
            .filter_map(|against| {
                let g = track::gained(points, against)?;
                let all = track::gained_trend(points, against);
                let step = all.len().div_ceil(TREND_POINTS).max(1);
                let last = all.len().saturating_sub(1);
                let trend = all
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i % step == 0 || *i == last)
                    .map(|(_, (i, g))| (*i, g.elo, g.low, g.high))
                    .collect();
                Some(GainView {
                    against: against.name().to_string(),
                    elo: g.elo,
                    low: g.low,
                    high: g.high,
                    points: g.points,
                    from: g.from,
                    to: g.to,
                    text: g.text(),
                    trend,
                })
            })
            .collect()
    }
}

/// A worker that served a shared run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WorkerView {
    pub name: String,
    pub results: u64,
    pub faults: u64,
    pub last_report_seconds: f64,
    pub last_seen_seconds: Option<f64>,
    pub note: String,
    /// A run with a clock: the engine's speed the worker measured (nodes per second) and the
    /// factor it scaled the clock by.
    pub nps: Option<f64>,
    pub clock_scale: Option<f64>,
}

/// Everything a run page shows.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunDetail {
    pub summary: RunSummary,
    /// Where it is read from: the θ log's path, or the database URL without its password.
    pub source: String,
    pub vars: Vec<VarView>,
    pub series: Series,
    /// Training and validation loss (tunes from positions), downsampled like `series`.
    pub loss: Vec<LossPoint>,
    /// The live Elo curve, when the run measures one.
    pub track: Vec<TrackPoint>,
    /// What the curve has gained so far, per opponent.
    pub gained: Vec<GainView>,
    /// The `[verify]` steps recorded so far, each with its verdict (a local run's record; a
    /// shared run's stays with the process that created it).
    pub verification: Vec<crate::tuner::verification::Step>,
    pub pentanomial: [u64; 5],
    /// Wins, draws, losses of θ+ against θ−.
    pub wdl: [u64; 3],
    /// (unix seconds, rate) samples, oldest first.
    pub rate_history: Vec<(f64, f64)>,
    pub workers: Vec<WorkerView>,
    /// A shared run with a clock: the speed its clock is meant for (workers scale to it).
    pub reference_nps: Option<f64>,
    /// A shared run: what each worker checked of the run's engines, and why one refused.
    pub engines: Vec<crate::db::status::WorkerEngine>,
    /// `setoption name X value Y` lines of the current values.
    pub uci: String,
    /// The variables CSV with the current values as start.
    pub csv: String,
    /// Which of the run's variables `vars` and `series` hold (see [`focus`]).
    pub var_page: VarPage,
}

/// Variables a run page (and a page of the JSON API) shows at most: a run with more shows the
/// ones that moved most, or those a search names, a page at a time.
pub const PAGE_VARS: usize = 40;

/// Which variables to show: those whose name contains `q` (any case; all when empty), most
/// moved first, page `page` (from 0) of [`PAGE_VARS`].
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct VarQuery {
    pub q: Option<String>,
    pub page: Option<usize>,
}

impl VarQuery {
    /// The query as a URL's query string (`?q=..&page=..`), empty when there is none.
    pub fn query_string(&self) -> String {
        let mut parts = Vec::new();
        if let Some(q) = self.q.as_deref().filter(|q| !q.is_empty()) {
            parts.push(format!("q={}", url_escape(q)));
        }
        if let Some(p) = self.page.filter(|&p| p > 0) {
            parts.push(format!("page={p}"));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }
}

/// `text` with everything but letters, digits and `-_.~` percent-encoded.
pub fn url_escape(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What a run's page shows of its variables.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct VarPage {
    /// The run's variables in all.
    pub total: usize,
    /// Those the search matched (all without one).
    pub matched: usize,
    /// This page (from 0) of `pages`.
    pub page: usize,
    pub pages: usize,
    /// The search, as given.
    pub query: String,
    /// The shown variables' places among the run's (`vars[j]` is the run's `indices[j]`).
    pub indices: Vec<usize>,
}

/// Keep in `d` only the variables `query` asks for (see [`VarQuery`]); a run of at most
/// [`PAGE_VARS`] variables and no search keeps them all, in their order. A run with more gives
/// no `uci` and `csv` (`spsa report --format uci|csv` has them all).
pub fn focus(d: &mut RunDetail, query: &VarQuery) {
    let total = d.vars.len();
    let q = query.q.as_deref().unwrap_or("").trim().to_lowercase();
    if total <= PAGE_VARS && q.is_empty() {
        d.var_page = VarPage {
            total,
            matched: total,
            page: 0,
            pages: 1,
            query: String::new(),
            indices: (0..total).collect(),
        };
        return;
    }
    let order = crate::report::status::most_moved(d.vars.iter().map(|v| v.drift_c_end), total);
    let matched: Vec<usize> = order
        .into_iter()
        .filter(|&i| q.is_empty() || d.vars[i].name.to_lowercase().contains(&q))
        .collect();
    let pages = matched.len().div_ceil(PAGE_VARS).max(1);
    let page = query.page.unwrap_or(0).min(pages - 1);
    let indices: Vec<usize> = matched
        .iter()
        .skip(page * PAGE_VARS)
        .take(PAGE_VARS)
        .copied()
        .collect();
    let pick = |column: &mut Vec<Vec<f64>>| {
        if column.len() == total {
            *column = indices
                .iter()
                .map(|&i| std::mem::take(&mut column[i]))
                .collect();
        }
    };
    pick(&mut d.series.values);
    pick(&mut d.series.band);
    d.vars = indices.iter().map(|&i| d.vars[i].clone()).collect();
    if total > PAGE_VARS {
        d.uci.clear();
        d.csv.clear();
    }
    d.var_page = VarPage {
        total,
        matched: matched.len(),
        page,
        pages,
        query: query.q.clone().unwrap_or_default(),
        indices,
    };
}

impl RunDetail {
    /// A short fingerprint of what the page shows: a poll gets the page again only when it changed.
    pub fn version(&self) -> String {
        fingerprint(&[
            &self.summary_key(),
            &self.workers.len(),
            &self.loss.len(),
            &self.track.len(),
            &self.verification.len(),
        ])
    }

    fn summary_key(&self) -> String {
        summary_key(&self.summary)
    }
}

/// The fingerprint of a runs list (and of the matches listed with it).
pub fn list_version(runs: &[RunSummary], matches: &[MatchSummary]) -> String {
    let keys: Vec<String> = runs.iter().map(summary_key).collect();
    let match_keys: Vec<String> = matches
        .iter()
        .map(|m| {
            format!(
                "{}:{}:{}:{}",
                m.id, m.state, m.record.pairs_played, m.record.updated
            )
        })
        .collect();
    fingerprint(&[&keys, &match_keys])
}

fn summary_key(s: &RunSummary) -> String {
    format!(
        "{}:{}:{}:{}:{:?}:{:?}:{:?}",
        s.id,
        s.applied,
        s.state,
        s.faults,
        s.priority,
        s.throughput,
        s.rate.map(|r| (r * 100.0).round())
    )
}

fn fingerprint(parts: &[&dyn std::fmt::Debug]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{parts:?}").hash(&mut h);
    format!("{:016x}", h.finish())
}

/// The rows kept of `n`: all of them up to `max`, else `max` evenly spread with the first and
/// the last.
pub fn downsample(n: usize, max: usize) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    let max = max.max(2);
    (0..max).map(|j| j * (n - 1) / (max - 1)).collect()
}

/// The variables' views at θ after `applied` updates.
pub fn var_views(
    vars: &[Variable],
    spsa: &Spsa,
    start: &[f64],
    theta: &[f64],
    applied: u64,
) -> Vec<VarView> {
    vars.iter()
        .enumerate()
        .map(|(i, v)| {
            let start = start.get(i).copied().unwrap_or(v.start);
            VarView {
                name: v.name.clone(),
                start,
                min: v.min,
                max: v.max,
                c_k: spsa.gains(i, applied.max(1)).c_k,
                c_end: v.c_end,
                current: theta[i],
                drift_c_end: (theta[i] - start) / v.c_end,
                engine_value: export::engine_value(v, theta[i], 0),
            }
        })
        .collect()
}

/// The paste-able forms of θ: setoption lines and the variables CSV.
pub fn exports(vars: &[Variable], theta: &[f64]) -> (String, String) {
    (
        export::render(Format::Uci, vars, theta, 0),
        export::render(Format::Csv, vars, theta, 0),
    )
}

/// The c_k band of a series: at most [`BAND_POINTS`] of its points.
pub fn band(spsa: &Spsa, vars: usize, iterations: &[u64]) -> (Vec<usize>, Vec<Vec<f64>>) {
    let points = downsample(iterations.len(), BAND_POINTS);
    let band = (0..vars)
        .map(|i| {
            points
                .iter()
                .map(|&p| spsa.gains(i, iterations[p].max(1)).c_k)
                .collect()
        })
        .collect();
    (points, band)
}

/// The schedule's [`Spsa`] of a run state: its curve, and the variables a resume added (on
/// their own curves) or dropped (held: no band).
pub fn spsa_of(vars: &[Variable], state: &RunState) -> Spsa {
    state.spsa(vars)
}

/// Elo of a score fraction (None at 0 or 1).
pub fn elo(wdl: [u64; 3]) -> Option<f64> {
    let n = (wdl[0] + wdl[1] + wdl[2]) as f64;
    if n == 0.0 {
        return None;
    }
    let score = (wdl[0] as f64 + 0.5 * wdl[1] as f64) / n;
    (score > 0.0 && score < 1.0).then(|| -400.0 * (1.0 / score - 1.0).log10())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downsample_keeps_the_ends_and_the_limit() {
        assert_eq!(downsample(5, 400), vec![0, 1, 2, 3, 4]);
        let rows = downsample(100_000, MAX_POINTS);
        assert_eq!(rows.len(), MAX_POINTS);
        assert_eq!((rows[0], rows[MAX_POINTS - 1]), (0, 99_999));
        assert!(rows.windows(2).all(|w| w[0] < w[1]));
        assert!(downsample(0, 400).is_empty());
    }

    /// docs/web.md: an end of "gained so far" the points do not bound is `null` in the JSON API
    /// (JSON has no infinity), and the text says so in words.
    #[test]
    fn an_unbounded_gain_end_is_null_in_the_json_and_words_in_the_text() {
        use crate::spsa::track::{Against, Point};
        let all_won = [Point::measured(1, 10, Against::Start, [0, 0, 0, 0, 32])];
        let views = GainView::of(&all_won);
        assert_eq!(views.len(), 1);
        assert!(views[0].high.is_infinite(), "{:?}", views[0]);
        let json: serde_json::Value = serde_json::to_value(&views[0]).unwrap();
        assert!(json["high"].is_null(), "{json}");
        assert!(json["trend"][0][3].is_null(), "{json}");
        assert!(views[0].text.contains("[95%: above "), "{}", views[0].text);
    }

    #[test]
    fn elo_of_even_and_lopsided_scores() {
        assert_eq!(elo([1, 0, 1]), Some(0.0));
        assert!((elo([3, 0, 1]).unwrap() - 190.85).abs() < 0.01);
        assert_eq!(elo([2, 0, 0]), None);
        assert_eq!(elo([0, 0, 0]), None);
    }
}
