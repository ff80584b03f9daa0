//! The live Elo curve's pure core: when a running tune measures its current θ, what each
//! measurement plays, what it recorded, and when a stop rule ends the run. No I/O, no clocks.
//!
//! A measurement point j is due once the tune has applied `j · interval` iterations (the last
//! point at the run's end). Its θ is the tune's θ when the point is handed out, fixed before its
//! games are drawn and kept (with the point) in the checkpoint, so a point in flight at a kill is
//! played again at the same θ. Each point plays `pairs` game pairs per opponent ("start", the
//! variables' start values, or "defaults", the engine's own option values) from the held-out
//! openings, numbered on from where the previous point stopped; its games' seed comes from
//! (run seed, unit), so a simulated run's curve is a pure function of the seed.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::driver::{IterationRng, Rounding, Trial};
pub use super::unit::{Against, TrackUnit};
use crate::stats;

/// Pairs per measurement point and opponent when the config does not say.
pub const DEFAULT_PAIRS: u32 = 32;

/// When the curve ends the run early. Both rules look at the first opponent's points only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StopRule {
    /// Stop once the curve has settled: its pooled points (at least K) gain less than
    /// `stats::gain::FLAT_RATE` Elo per 10 points with `stats::gain::FLAT_CONFIDENCE`
    /// (see [`stats::gain::settled`]).
    pub after_flat: Option<u32>,
    /// Stop when the gain so far is above this many Elo with
    /// `stats::gain::LOWER_CONFIDENCE`, over at least `stats::gain::MIN_FLAT` points (see
    /// [`stats::gain::lower_above`]).
    pub lower_above: Option<f64>,
}

/// The `[track]` table, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackPlan {
    /// The share of all games that measure, in (0, 0.5].
    pub share: f64,
    /// Opponents, each measured at every point, in this order; never empty, no repeats.
    pub against: Vec<Against>,
    /// Game pairs per point and opponent.
    pub pairs: u32,
    pub stop: StopRule,
}

impl TrackPlan {
    /// Iterations between two points, so that a point's pairs are `share` of the pairs played
    /// from one point to the next: tune pairs = track pairs · (1 − share)/share.
    pub fn interval(&self, pairs_per_iteration: u32) -> u64 {
        let track = f64::from(self.pairs) * self.against.len() as f64;
        let tune = track * (1.0 - self.share) / self.share;
        ((tune / f64::from(pairs_per_iteration.max(1))).round() as u64).max(1)
    }

    /// How many points are due once `applied` of `total` iterations are: one per interval, and
    /// one at the end when the last interval is incomplete.
    pub fn due(&self, interval: u64, applied: u64, total: u64) -> u64 {
        if applied >= total {
            total.div_ceil(interval)
        } else {
            applied / interval
        }
    }

    /// A unit's number among all units of the run: (point − 1) · opponents + the opponent's
    /// slot. Its games' openings and seed follow from it, and a shared run's database numbers
    /// its work rows by it.
    pub fn index(&self, unit: TrackUnit) -> u64 {
        let slot = self.against.iter().position(|&a| a == unit.against);
        (unit.point.max(1) - 1) * self.against.len() as u64 + slot.unwrap_or(0) as u64
    }

    /// The unit numbered `index` (see [`TrackPlan::index`]).
    pub fn unit(&self, index: u64) -> TrackUnit {
        // Never empty (the config refuses an empty list).
        let n = self.against.len().max(1) as u64;
        TrackUnit {
            point: index / n + 1,
            against: self.against[(index % n) as usize],
        }
    }

    /// The trial that measures `unit` at `theta` (the tune's θ when the point was handed out,
    /// after `iteration` applied iterations): θ rounded as the run plays it against the
    /// opponent's values (none for the defaults: the source knows them), on the held-out
    /// openings numbered on from the unit before, with games seeded by (run seed, unit). A
    /// local run and a shared run's worker fill it alike.
    #[allow(clippy::too_many_arguments)]
    pub fn fill(
        &self,
        seed: u64,
        start: &[f64],
        rounding: Rounding,
        unit: TrackUnit,
        iteration: u64,
        theta: &[f64],
        trial: &mut Trial,
    ) {
        let index = self.index(unit);
        let played = |v: &[f64]| -> Vec<f64> {
            match rounding {
                Rounding::Continuous => v.to_vec(),
                Rounding::Integer(_) => v.iter().map(|x| x.round()).collect(),
            }
        };
        trial.iteration = iteration;
        trial.delta.clear();
        trial.c_k.clear();
        trial.plus = played(theta);
        trial.minus = match unit.against {
            Against::Start => played(start),
            Against::Defaults => Vec::new(),
        };
        trial.opening = index * u64::from(self.pairs);
        trial.pairs = self.pairs;
        trial.seed = IterationRng::new(seed ^ SEED_KEY, index).next_u64();
        trial.track = Some(unit);
    }
}

/// A measurement handed out and not yet recorded, with the θ it measures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    pub point: u64,
    pub against: Against,
    /// Iterations applied when the point was handed out.
    pub iteration: u64,
    pub theta: Vec<f64>,
}

/// One recorded point of the curve. Its θ is not kept: it is the θ log's row `iteration` (θ
/// after that many applied results, which the log always holds), so the curve's file and the
/// checkpoint grow with the points, not with points × variables. (Files and checkpoints written
/// before 2026-12 kept θ in every point; it is read past.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub point: u64,
    /// Results applied when θ was taken: θ is the θ log's row of this number.
    pub iteration: u64,
    pub against: Against,
    /// Pairs by θ's points in half-points: [0, 0.5, 1, 1.5, 2].
    pub pentanomial: [u64; 5],
    pub elo: f64,
    /// The 95% interval; `None` below `stats::MIN_INTERVAL_SAMPLES` pairs.
    pub low: Option<f64>,
    pub high: Option<f64>,
}

impl Point {
    /// The point `pentanomial` measured: Elo and its 95% interval from the pair counts.
    pub fn measured(point: u64, iteration: u64, against: Against, pentanomial: [u64; 5]) -> Point {
        let estimate = stats::pentanomial(&pentanomial);
        let interval = estimate.and_then(|e| e.interval);
        Point {
            point,
            iteration,
            against,
            pentanomial,
            elo: estimate.map_or(0.0, |e| e.elo),
            low: interval.map(|i| i.0),
            high: interval.map(|i| i.1),
        }
    }

    pub fn pairs(&self) -> u64 {
        self.pentanomial.iter().sum()
    }

    /// The CSV row (see [`CSV_HEADER`]).
    pub fn csv_row(&self) -> String {
        let opt = |v: Option<f64>| v.map(num).unwrap_or_default();
        let p = &self.pentanomial;
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n",
            self.point,
            self.iteration,
            self.against.name(),
            self.pairs(),
            p[0],
            p[1],
            p[2],
            p[3],
            p[4],
            num(self.elo),
            opt(self.low),
            opt(self.high)
        )
    }
}

/// Elo with two decimals; ±∞ as `inf`/`-inf`.
fn num(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{v:.2}")
    }
}

/// The curve's file beside a θ log: `run.log` → `run.track.csv`.
pub fn file_for(log: &std::path::Path) -> std::path::PathBuf {
    log.with_extension("track.csv")
}

/// The track file's header row.
pub const CSV_HEADER: &str = "point,iteration,against,pairs,p0,p1,p2,p3,p4,elo,low,high\n";

/// The fields of a row (see [`CSV_HEADER`]); a file written before 2026-12 has θ after them,
/// one value per variable its header names.
pub const CSV_FIELDS: usize = 12;

/// Read a track file back: the variable names of an older file's θ columns (none in a file of
/// today) and its points. A row that cannot be read is an error naming its line. A last line without its newline is left out: the file is appended a
/// whole row at a time, so that is a row being written (or torn by a crash), and what it holds
/// so far may still parse as other numbers.
pub fn parse_csv(text: &str) -> Result<(Vec<String>, Vec<Point>), String> {
    let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
    let mut lines = whole.lines().enumerate();
    let names: Vec<String> = match lines.next() {
        Some((_, h)) if h.starts_with("point,iteration,against") => {
            h.split(',').skip(CSV_FIELDS).map(str::to_string).collect()
        }
        _ => return Err("line 1: not a track file (no header row)".into()),
    };
    let mut points = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| format!("line {}: {what}", i + 1);
        // An older file's θ may have more or fewer values than its header names (a run that
        // went on with variables added or dropped kept its file); they must be numbers.
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < CSV_FIELDS {
            return Err(bad("wrong number of fields"));
        }
        let int = |s: &str| s.parse::<u64>().map_err(|_| bad("not a count"));
        let float = |s: &str| s.parse::<f64>().map_err(|_| bad("not a number"));
        let opt = |s: &str| {
            if s.is_empty() {
                Ok(None)
            } else {
                float(s).map(Some)
            }
        };
        let pentanomial = [int(f[4])?, int(f[5])?, int(f[6])?, int(f[7])?, int(f[8])?];
        if pentanomial
            .iter()
            .try_fold(0u64, |a, &c| a.checked_add(c))
            .is_none()
        {
            return Err(bad("the pair counts add up to more than 2^64"));
        }
        let (elo, low, high) = (float(f[9])?, opt(f[10])?, opt(f[11])?);
        for v in &f[CSV_FIELDS..] {
            float(v)?;
        }
        let mut p = Point::measured(
            int(f[0])?,
            int(f[1])?,
            Against::parse(f[2]).ok_or_else(|| bad("unknown opponent"))?,
            pentanomial,
        );
        // Elo and interval come from the counts, through the one interval of `stats` (a file
        // written before issue 46 stored the normal interval); a row without counts keeps its own.
        if p.pairs() == 0 {
            (p.elo, p.low, p.high) = (elo, low, high);
        }
        points.push(p);
    }
    Ok((names, points))
}

/// What a checkpoint keeps of the curve.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrackState {
    /// Points handed out so far (every point up to this one has its units pending or recorded).
    pub handed: u64,
    /// Units handed out and not recorded, in hand-out order: a resume plays them first.
    #[serde(default)]
    pub pending: Vec<Pending>,
    #[serde(default)]
    pub points: Vec<Point>,
    /// Why a stop rule ended the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The curve of one run: which measurement to play next, and recording what came back.
#[derive(Clone, Debug)]
pub struct Track {
    plan: TrackPlan,
    interval: u64,
    seed: u64,
    start: Vec<f64>,
    rounding: Rounding,
    state: TrackState,
    /// Pending units handed to the pool and not yet back.
    in_flight: Vec<TrackUnit>,
}

/// Keeps the measurements' game seeds apart from the iterations'.
const SEED_KEY: u64 = 0x7EAC_C0DE_5EED_0001;

impl Track {
    pub fn new(
        plan: TrackPlan,
        pairs_per_iteration: u32,
        seed: u64,
        start: Vec<f64>,
        rounding: Rounding,
        mut state: TrackState,
    ) -> Track {
        // A unit pending from before the run went on with other variables measured a θ the
        // engines can no longer play: it is dropped, and the next point measures afresh.
        state.pending.retain(|p| p.theta.len() == start.len());
        Track {
            interval: plan.interval(pairs_per_iteration),
            plan,
            seed,
            start,
            rounding,
            state,
            in_flight: Vec::new(),
        }
    }

    pub fn state(&self) -> &TrackState {
        &self.state
    }

    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// Every point of a run of `total` iterations is recorded, or a stop rule ended the run.
    pub fn is_done(&self, total: u64) -> bool {
        self.stopped()
            || (self.state.pending.is_empty()
                && self.state.handed >= self.plan.due(self.interval, total, total))
    }

    /// Whether a stop rule ended the run.
    pub fn stopped(&self) -> bool {
        self.state.stopped.is_some()
    }

    /// The next measurement once `applied` of `total` iterations are applied and θ is `theta`:
    /// a pending unit not in flight first, then the units of a point that is due. False (and
    /// `trial` untouched) when there is none.
    pub fn next_trial_into(
        &mut self,
        applied: u64,
        total: u64,
        theta: &[f64],
        trial: &mut Trial,
    ) -> bool {
        if self.stopped() {
            return false;
        }
        // A new point only once the last one is recorded (points never overlap), and the
        // latest one due: a point that fell behind would measure the same θ again.
        let due = self.plan.due(self.interval, applied, total);
        if self.state.handed < due && self.state.pending.is_empty() {
            self.state.handed = due;
            for &against in &self.plan.against {
                self.state.pending.push(Pending {
                    point: self.state.handed,
                    against,
                    iteration: applied,
                    theta: theta.to_vec(),
                });
            }
        }
        let Some(p) = self.state.pending.iter().find(|p| {
            !self.in_flight.contains(&TrackUnit {
                point: p.point,
                against: p.against,
            })
        }) else {
            return false;
        };
        let unit = TrackUnit {
            point: p.point,
            against: p.against,
        };
        self.fill(p, trial);
        self.in_flight.push(unit);
        true
    }

    /// The trial of a pending unit (see [`TrackPlan::fill`]).
    fn fill(&self, p: &Pending, trial: &mut Trial) {
        let unit = TrackUnit {
            point: p.point,
            against: p.against,
        };
        self.plan.fill(
            self.seed,
            &self.start,
            self.rounding,
            unit,
            p.iteration,
            &p.theta,
            trial,
        );
    }

    /// A shared run's point: once `applied` of `total` results are applied with θ `theta`, the
    /// point they make due is pending, as the database added its units in the same report (a
    /// shared run's points may overlap: workers measure them while others tune). True when a
    /// point was handed out.
    pub fn hand_out(&mut self, applied: u64, total: u64, theta: &[f64]) -> bool {
        let due = self.plan.due(self.interval, applied, total);
        if self.state.handed >= due {
            return false;
        }
        self.state.handed = due;
        for &against in &self.plan.against {
            self.state.pending.push(Pending {
                point: due,
                against,
                iteration: applied,
                theta: theta.to_vec(),
            });
        }
        true
    }

    /// Whether `unit` is handed out and not yet recorded.
    pub fn is_pending(&self, unit: TrackUnit) -> bool {
        self.state
            .pending
            .iter()
            .any(|p| p.point == unit.point && p.against == unit.against)
    }

    pub fn plan(&self) -> &TrackPlan {
        &self.plan
    }

    /// A measurement came back: record its point (returned) and look at the stop rule. `None`
    /// for a unit that is not pending (a bug, or recorded already).
    pub fn finish(&mut self, unit: TrackUnit, pentanomial: [u64; 5]) -> Option<&Point> {
        self.in_flight.retain(|u| *u != unit);
        let at = self
            .state
            .pending
            .iter()
            .position(|p| p.point == unit.point && p.against == unit.against)?;
        let p = self.state.pending.remove(at);
        self.state.points.push(Point::measured(
            p.point,
            p.iteration,
            p.against,
            pentanomial,
        ));
        if self.state.stopped.is_none() {
            self.state.stopped = stop_reason(&self.plan, &self.state.points);
        }
        self.state.points.last()
    }

    /// The pool gave a unit back unplayed: it stays pending, to be handed out again.
    pub fn abandon(&mut self, unit: TrackUnit) {
        self.in_flight.retain(|u| *u != unit);
    }
}

/// "Gained so far" against `against`: the pooled estimate of the last θ's strength from the
/// curve's points (see [`stats::gain`]). `None` before the first point.
pub fn gained(points: &[Point], against: Against) -> Option<stats::gain::Gain> {
    stats::gain::gained(&series(points, against))
}

/// The pooled estimate as it stood after each point against `against` (the trend drawn over
/// the points): (iteration, estimate).
pub fn gained_trend(points: &[Point], against: Against) -> Vec<(u64, stats::gain::Gain)> {
    let all = series(points, against);
    (1..=all.len())
        .filter_map(|k| stats::gain::gained(&all[..k]).map(|g| (all[k - 1].0, g)))
        .collect()
}

/// The point against `against` at the highest iteration (the latest θ measured; of two at one
/// iteration, the one recorded last).
pub fn latest(points: &[Point], against: Against) -> Option<&Point> {
    points
        .iter()
        .filter(|p| p.against == against)
        .max_by_key(|p| p.iteration)
}

/// The points against `against` as (iteration, pentanomial), by iteration (a shared run's
/// points are in the order workers reported them).
fn series(points: &[Point], against: Against) -> Vec<(u64, [u64; 5])> {
    let mut series: Vec<(u64, [u64; 5])> = points
        .iter()
        .filter(|p| p.against == against)
        .map(|p| (p.iteration, p.pentanomial))
        .collect();
    series.sort_by_key(|&(iteration, _)| iteration);
    series
}

/// Why the stop rule ends the run after `points`, if it does: looks at the first opponent's
/// points.
pub fn stop_reason(plan: &TrackPlan, points: &[Point]) -> Option<String> {
    let first = *plan.against.first()?;
    let last = latest(points, first)?;
    if let Some(x) = plan.stop.lower_above
        && stats::gain::lower_above(&series(points, first), x)
    {
        let g = gained(points, first)?;
        let confidence = stats::gain::LOWER_CONFIDENCE;
        return Some(format!(
            "stop_when_lower_above: at iteration {} the gain so far against {} is above {} Elo with {:.2}% confidence (lower bound {}); {}",
            last.iteration,
            first.name(),
            stats::format_elo(x),
            confidence * 100.0,
            stats::format_elo(g.lower(confidence)),
            g.text()
        ));
    }
    let k = plan.stop.after_flat? as usize;
    let g = gained(points, first)?;
    if !stats::gain::settled(&g, k) {
        return None;
    }
    let trend = g.trend?;
    Some(format!(
        "stop_after_flat: the {} measurements against {} from iteration {} to {} gain {} Elo per 10 measurements, below {} with {:.1}% confidence (upper bound {}); {}",
        g.points,
        first.name(),
        g.from,
        g.to,
        stats::format_elo(trend.per_10_points),
        stats::format_elo(stats::gain::FLAT_RATE),
        stats::gain::FLAT_CONFIDENCE * 100.0,
        stats::format_elo(trend.upper(stats::gain::FLAT_CONFIDENCE)),
        g.text()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spsa::rounding::RoundingMode;

    fn plan(against: &[Against], share: f64, pairs: u32) -> TrackPlan {
        TrackPlan {
            share,
            against: against.to_vec(),
            pairs,
            stop: StopRule::default(),
        }
    }

    fn track(p: TrackPlan, rounding: Rounding) -> Track {
        Track::new(p, 1, 7, vec![10.0, -3.4], rounding, TrackState::default())
    }

    #[test]
    fn interval_gives_the_share_of_pairs() {
        // 32 pairs at share 0.1: 288 tune pairs between points, 32/(32+288) = 10%.
        assert_eq!(plan(&[Against::Start], 0.1, 32).interval(1), 288);
        assert_eq!(plan(&[Against::Start], 0.1, 32).interval(4), 72);
        // Two opponents measure twice the pairs per point: points are twice as far apart.
        assert_eq!(
            plan(&[Against::Start, Against::Defaults], 0.1, 32).interval(1),
            576
        );
        assert_eq!(plan(&[Against::Start], 0.5, 10).interval(1), 10);
        assert_eq!(plan(&[Against::Start], 0.5, 10).interval(100), 1);
    }

    #[test]
    fn points_are_due_per_interval_and_at_the_end() {
        let p = plan(&[Against::Start], 0.5, 10);
        assert_eq!(p.due(10, 0, 35), 0);
        assert_eq!(p.due(10, 9, 35), 0);
        assert_eq!(p.due(10, 10, 35), 1);
        assert_eq!(p.due(10, 34, 35), 3);
        assert_eq!(
            p.due(10, 35, 35),
            4,
            "the incomplete last interval ends in a point"
        );
        assert_eq!(p.due(10, 40, 40), 4);
    }

    #[test]
    fn a_due_point_hands_out_one_unit_per_opponent_at_theta_then_the_tune_goes_on() {
        let mut t = track(
            plan(&[Against::Start, Against::Defaults], 0.5, 10),
            Rounding::Integer(RoundingMode::Stochastic),
        );
        assert_eq!(t.interval(), 20);
        let mut trial = Trial::default();
        assert!(!t.next_trial_into(19, 100, &[1.4, 2.6], &mut trial));
        assert!(t.next_trial_into(20, 100, &[1.4, 2.6], &mut trial));
        assert_eq!(trial.plus, vec![1.0, 3.0], "rounded as the run plays");
        assert_eq!(trial.minus, vec![10.0, -3.0]);
        assert_eq!(trial.iteration, 20);
        assert_eq!(trial.opening, 0);
        assert_eq!(trial.pairs, 10);
        assert_eq!(
            trial.track,
            Some(TrackUnit {
                point: 1,
                against: Against::Start
            })
        );
        let first = trial.clone();
        // θ moved on while the first unit plays: the second still measures θ of its point.
        assert!(t.next_trial_into(21, 100, &[50.0, 50.0], &mut trial));
        assert_eq!(trial.plus, vec![1.0, 3.0]);
        assert!(trial.minus.is_empty(), "defaults: the source's values");
        assert_eq!(trial.opening, 10, "openings numbered on");
        assert_ne!(trial.seed, first.seed);
        assert!(!t.next_trial_into(21, 100, &[50.0, 50.0], &mut trial));
        // A trial handed out again is the same trial (a resume, or a unit given back).
        t.abandon(first.track.unwrap());
        let mut again = Trial::default();
        assert!(t.next_trial_into(30, 100, &[9.0, 9.0], &mut again));
        assert_eq!(again, first);
    }

    #[test]
    fn the_next_point_waits_for_the_last_one_to_be_handed_out() {
        let mut t = track(plan(&[Against::Start], 0.5, 10), Rounding::Continuous);
        let mut trial = Trial::default();
        assert_eq!(t.interval(), 10);
        assert!(t.next_trial_into(10, 100, &[0.0, 0.0], &mut trial));
        assert_eq!(trial.track.unwrap().point, 1);
        // Point 1 still plays when points 2 and 3 fall due: nothing new is handed out.
        assert!(!t.next_trial_into(30, 100, &[0.0, 0.0], &mut trial));
        t.finish(trial.track.unwrap(), [0, 0, 10, 0, 0]).unwrap();
        // Then only the latest, at θ of its time: point 2 would measure the same θ again.
        assert!(t.next_trial_into(31, 100, &[5.0, 5.0], &mut trial));
        assert_eq!(
            (trial.track.unwrap().point, trial.iteration, trial.plus[0]),
            (3, 31, 5.0)
        );
        t.finish(trial.track.unwrap(), [0, 0, 10, 0, 0]).unwrap();
        assert!(!t.is_done(100));
        assert!(t.next_trial_into(100, 100, &[5.0, 5.0], &mut trial));
        t.finish(trial.track.unwrap(), [0, 0, 10, 0, 0]).unwrap();
        assert!(t.is_done(100), "the point at the end recorded");
        assert_eq!(t.state().points.len(), 3);
    }

    #[test]
    fn a_resumed_track_replays_its_pending_units_exactly() {
        let mut t = track(plan(&[Against::Start], 0.5, 10), Rounding::Continuous);
        let mut trial = Trial::default();
        assert!(t.next_trial_into(20, 100, &[0.5, 0.25], &mut trial));
        let saved = t.state().clone();
        let mut resumed = Track::new(
            plan(&[Against::Start], 0.5, 10),
            1,
            7,
            vec![10.0, -3.4],
            Rounding::Continuous,
            saved,
        );
        let mut again = Trial::default();
        assert!(resumed.next_trial_into(25, 100, &[9.0, 9.0], &mut again));
        assert_eq!(again, trial);
        // Resumed with a variable added: the pending θ has too few values and is dropped.
        let mut wider = Track::new(
            plan(&[Against::Start], 0.5, 10),
            1,
            7,
            vec![10.0, -3.4, 1.0],
            Rounding::Continuous,
            t.state().clone(),
        );
        assert!(wider.state().pending.is_empty());
        assert!(!wider.next_trial_into(25, 100, &[9.0, 9.0, 1.0], &mut again));
        assert!(wider.next_trial_into(30, 100, &[9.0, 9.0, 1.0], &mut again));
        assert_eq!((again.track.unwrap().point, again.plus.len()), (3, 3));
    }

    #[test]
    fn finish_records_the_point_with_its_interval() {
        let mut t = track(plan(&[Against::Start], 0.5, 10), Rounding::Continuous);
        let mut trial = Trial::default();
        t.next_trial_into(10, 100, &[0.5, 0.25], &mut trial);
        let penta = [1, 3, 10, 8, 2];
        let p = t.finish(trial.track.unwrap(), penta).unwrap().clone();
        let e = stats::pentanomial(&penta).unwrap();
        assert_eq!(
            (p.elo, p.low, p.high),
            (
                e.elo,
                Some(e.interval.unwrap().0),
                Some(e.interval.unwrap().1)
            )
        );
        assert_eq!((p.point, p.iteration, p.pairs()), (1, 10, 24));
        assert!(t.state().pending.is_empty());
        assert!(
            t.finish(trial.track.unwrap(), penta).is_none(),
            "recorded once"
        );
    }

    fn point(k: u64, elo: f64, low: Option<f64>) -> Point {
        Point {
            point: k,
            iteration: 10 * k,
            against: Against::Start,
            pentanomial: [0, 0, 10, 0, 0],
            elo,
            low,
            high: low.map(|l| l + 20.0),
        }
    }

    /// Points every 100 iterations with the pentanomial counts `level(j)`.
    fn curve(n: usize, level: impl Fn(usize) -> [u64; 5]) -> Vec<Point> {
        (0..n)
            .map(|j| Point::measured(j as u64 + 1, 100 * (j as u64 + 1), Against::Start, level(j)))
            .collect()
    }

    #[test]
    fn stop_after_flat_stops_a_settled_curve_and_not_a_rising_one() {
        let mut p = plan(&[Against::Start], 0.1, 32);
        p.stop.after_flat = Some(10);
        // Flat: every point the same mixed pairs (score ½), 200 points: settled, and the
        // reason says over which points and at what rate.
        let flat = curve(200, |j| {
            if j % 2 == 0 {
                [2, 6, 8, 6, 2]
            } else {
                [3, 5, 8, 5, 3]
            }
        });
        let why = stop_reason(&p, &flat).unwrap();
        assert!(
            why.starts_with("stop_after_flat: the 101 measurements against start from iteration 10000 to 20000 gain +0.0 Elo per 10 measurements, below +2.5 with 99.9% confidence"),
            "{why}"
        );
        assert!(why.contains("gained +0.0 [95%: -"), "{why}");
        // Too few points for the rule's K: never.
        p.stop.after_flat = Some(150);
        assert_eq!(stop_reason(&p, &flat), None);
        p.stop.after_flat = Some(10);
        // Rising by one pair in four per point, then held: not while it rises.
        let rising = curve(60, |j| {
            let up = (j as u64 / 4).min(12);
            [12 - up, 4, 8, 4, up]
        });
        assert_eq!(stop_reason(&p, &rising[..48]), None);
        // Another opponent's points do not count.
        let mut other = flat.clone();
        for q in &mut other {
            q.against = Against::Defaults;
        }
        assert_eq!(stop_reason(&p, &other), None);
    }

    #[test]
    fn stop_when_lower_above_reads_the_gain_so_far_over_enough_points() {
        let mut p = plan(&[Against::Start], 0.1, 32);
        p.stop.lower_above = Some(5.0);
        // θ scores about 70% of the points every time (+150 Elo or so).
        let strong = curve(40, |j| {
            if j % 2 == 0 {
                [0, 2, 6, 12, 12]
            } else {
                [0, 3, 6, 11, 12]
            }
        });
        // Fewer than 20 pooled points (the second half of 37): never, however strong.
        assert_eq!(stop_reason(&p, &strong[..37]), None);
        let why = stop_reason(&p, &strong[..38]).unwrap();
        assert!(
            why.starts_with("stop_when_lower_above: at iteration 3800 the gain so far against start is above +5.0 Elo with 99.99% confidence (lower bound +"),
            "{why}"
        );
        // A shared run's points come in the order workers report them: the rule still speaks
        // of the latest iteration, not of the point that came last.
        let mut shuffled = strong[..38].to_vec();
        shuffled.swap(36, 37);
        let why = stop_reason(&p, &shuffled).unwrap();
        assert!(
            why.starts_with("stop_when_lower_above: at iteration 3800 the gain"),
            "{why}"
        );
        p.stop.lower_above = Some(400.0);
        assert_eq!(stop_reason(&p, &strong), None);
    }

    #[test]
    fn a_stopped_track_hands_out_nothing() {
        let mut p = plan(&[Against::Start], 0.5, 10);
        p.stop.lower_above = Some(0.0);
        let mut t = track(p, Rounding::Continuous);
        let mut trial = Trial::default();
        for k in 1..=38 {
            assert!(!t.stopped(), "not before 20 pooled points");
            assert!(t.next_trial_into(10 * k, 1000, &[0.0, 0.0], &mut trial));
            let counts = if k % 2 == 0 {
                [0, 0, 2, 4, 6]
            } else {
                [0, 1, 2, 3, 6]
            };
            t.finish(trial.track.unwrap(), counts).unwrap();
        }
        assert!(t.stopped());
        assert!(!t.next_trial_into(900, 1000, &[0.0, 0.0], &mut trial));
    }

    #[test]
    fn csv_rows_read_back() {
        let mut a = point(3, 12.345, Some(-1.5));
        a.pentanomial = [0, 0, 0, 0, 0];
        let mut b = point(4, f64::NEG_INFINITY, None);
        b.against = Against::Defaults;
        b.pentanomial = [0, 1, 4, 3, 2];
        let text = CSV_HEADER.to_string() + &a.csv_row() + &b.csv_row();
        // A row is its twelve fields: θ is the log's, not the curve's.
        assert!(
            text.lines().all(|l| l.split(',').count() == CSV_FIELDS),
            "{text}"
        );
        let (n, pts) = parse_csv(&text).unwrap();
        assert!(n.is_empty());
        // A row without counts keeps what it says.
        assert_eq!(pts[0].elo, 12.35);
        assert_eq!(pts[0].low, Some(-1.5));
        // A row with counts: Elo and interval from them, as a point is measured.
        let again = Point::measured(4, 40, Against::Defaults, b.pentanomial);
        assert_eq!(pts[1], again);
        assert!(pts[1].elo > 0.0 && pts[1].low.is_some());
        assert!(parse_csv("x\n").is_err());
        let bad = CSV_HEADER.to_string() + "1,2,start\n";
        assert_eq!(
            parse_csv(&bad).unwrap_err(),
            "line 2: wrong number of fields"
        );
    }

    #[test]
    fn a_file_written_with_theta_in_every_point_reads_the_same_points() {
        let old = "point,iteration,against,pairs,p0,p1,p2,p3,p4,elo,low,high,x,y\n\
                   3,30,start,0,0,0,0,0,0,12.35,-1.50,18.50,1.25,-7\n\
                   4,40,defaults,10,0,1,4,3,2,35.22,-60.13,131.65,0,0.001,5\n";
        let (names, pts) = parse_csv(old).unwrap();
        assert_eq!(names, ["x", "y"]);
        let today = CSV_HEADER.to_string() + &pts.iter().map(Point::csv_row).collect::<String>();
        assert_eq!(parse_csv(&today).unwrap().1, pts);
        assert_eq!(
            pts[1],
            Point::measured(4, 40, Against::Defaults, [0, 1, 4, 3, 2])
        );
        // Its θ values must still be numbers.
        let bad = old.replace("0.001", "O.001");
        assert_eq!(parse_csv(&bad).unwrap_err(), "line 3: not a number");
    }

    /// A track file's first rows, as the fuzzer's inputs below begin.
    const FUZZED_HEAD: &str = "point,iteration,against,pairs,p0,p1,p2,p3,p4,elo,low,high,x,y \"z\"\n\
        0,0,start,0,0,0,0,0,0,0.00,,,1,2\n\
        1,40,start,10,0,1,4,3,2,107.54,-15.84,266.70,1.25,-7\n";

    /// Issue 55's fuzzing (`scripts/fuzz.sh --target track`, seed 1, input 5245): a row of
    /// 9,223,372,036,854,775,807 pairs asked for Student's t at that many degrees of freedom,
    /// which never returned. The row reads at once.
    #[test]
    fn a_row_of_huge_counts_reads_at_once() {
        let row = "1,40,defaults,15,2,3,9,1,9223372036854775807,-70.44,-159.48,10.18,0,0.001\n";
        let (_, points) = parse_csv(&format!("{FUZZED_HEAD}{row}")).unwrap();
        assert_eq!(points.len(), 3);
        assert!(points[2].elo > 1000.0, "{:?}", points[2]);
    }

    /// Issue 55's fuzzing (seed 1, input 52750): pair counts that add up past 2^64 panicked
    /// (`attempt to add with overflow`); the row is refused, naming its line.
    #[test]
    fn pair_counts_past_u64_are_refused() {
        let row = "1,40,defaults,15,2,18446744073709551615,9,1,0,-70.44,-159.48,10.18,0,0.001\n";
        assert_eq!(
            parse_csv(&format!("{FUZZED_HEAD}{row}")).unwrap_err(),
            "line 4: the pair counts add up to more than 2^64"
        );
    }

    /// Issue 55: a track file cut anywhere in its last row reads as the rows before it (the
    /// half row's θ `1.2` of `1.25`, or its count `4` of `40`, is never read as a value).
    #[test]
    fn a_half_last_row_is_left_out() {
        let a = point(3, 12.345, Some(-1.5));
        let mut b = point(4, 2.5, Some(1.0));
        b.pentanomial = [0, 1, 4, 3, 2];
        let head = CSV_HEADER.to_string() + &a.csv_row();
        let text = head.clone() + &b.csv_row();
        let (_, whole) = parse_csv(&text).unwrap();
        assert_eq!(whole.len(), 2);
        for cut in head.len()..text.len() {
            let (_, pts) = parse_csv(&text[..cut]).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            assert_eq!(pts, whole[..1], "cut at {cut}");
        }
    }
}
