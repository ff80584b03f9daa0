//! `spsa plan CONFIG --probe`: how much Elo a tune's probe loses as it grows, measured on the
//! engine itself, and the probe limit the plan takes from it.
//!
//! Near an optimum the whole advantage of a plan is how far its probes may go: a larger c_end
//! measures the gradient with less noise per pair, for free while Elo is quadratic in the
//! probe. On an engine it is quadratic only so far. The measurement plays the tune's own
//! simultaneous probe at several scales s: θ0 + s·c_end·δ (each δ a fresh ±1 per variable, θ±
//! clipped and rounded as the tune plays them) against θ0, one game pair per δ, both sides of
//! each δ (θ+ in one pair, θ− in the next, so the linear term cancels in pairs), on the openings
//! held out of the tune. Under the quadratic model the Elo lost grows as s²: L(s) = k·s². The
//! largest scale up to which every measured loss agrees with one such curve (within its 95%
//! interval) is where the model ends as far as these pairs can tell.
//!
//! What the plan takes from it: the curvature k, shared equally among the moved variables as
//! their simul_elo (each variable's ±c_end loses k/n: the convention behind the c_end an author
//! writes in an OpenBench or fishtest line, which is the only thing a simultaneous probe can
//! see), and the probe limit k·s*²/n Elo per variable, which caps each c_end at s* times its
//! c_end in the file. Every pair played here counts in the tune's budget.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::config::Config;
use crate::plan::pilot::elo_with_se;
use crate::plan::pilot_memo::{PilotMemo, key_for};
use crate::runtime::shutdown::Shutdown;
use crate::source::pool::{self, Ending, Feed};
use crate::source::{Measurement, OpenRequest, Trial};
use crate::spsa::driver::IterationRng;
use crate::spsa::rounding::{RoundingMode, round_pair};
use crate::spsa::signs;
use crate::spsa::track::{Against, StopRule, TrackPlan};
use crate::spsa::unit::TrackUnit;
use crate::stats::Tally;
use crate::vars::{Variable, format_value};

/// The scales played by default, in c_end of the file: the file's probe, and three doublings.
pub const DEFAULT_SCALES: [f64; 4] = [1.0, 2.0, 4.0, 8.0];
/// Game pairs per scale by default.
pub const DEFAULT_PAIRS: u64 = 100;
/// The z of a two-sided 95% interval.
const Z95: f64 = 1.96;

/// What the measurement plays.
pub struct ProbeSettings {
    /// Scales in c_end, ascending, each positive.
    pub scales: Vec<f64>,
    /// Game pairs per scale (even: both sides of each δ).
    pub pairs: u64,
    pub seed: u64,
    pub progress: bool,
    /// Keep every finished pair here and take the ones it holds instead of playing them again.
    pub memo: Option<PathBuf>,
}

/// Check the scales and pairs a user gave; the message names the flag.
pub fn check_settings(scales: &[f64], pairs: u64) -> Result<(), String> {
    if scales.is_empty() {
        return Err("--probe-scales: give at least one scale".into());
    }
    if let Some(s) = scales.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
        return Err(format!("--probe-scales: {s} is not a positive number"));
    }
    if scales.windows(2).any(|w| w[0] >= w[1]) {
        return Err("--probe-scales: give the scales in ascending order, each once".into());
    }
    if pairs < 10 || !pairs.is_multiple_of(2) {
        return Err(format!(
            "--probe-pairs {pairs}: an even number of at least 10 (both sides of each δ, enough for an interval)"
        ));
    }
    Ok(())
}

/// One pair of the measurement: which scale, and the δ it plays (index `j / 2`; the θ+ side
/// when `j` is even, the θ− side when odd).
#[derive(Clone, Copy, Debug, PartialEq)]
struct PairSpec {
    scale: usize,
    j: u64,
}

/// The trials of the measurement, scales interleaved (an interrupted measurement has every
/// scale about equally far), pair t playing held-out opening t. Each trial's θ+ is the probe
/// and θ− is θ0 (the start, rounded): the source plays it as a live-curve measurement against
/// the start, on the held-out openings.
fn trials(vars: &[Variable], settings: &ProbeSettings) -> Vec<(PairSpec, Trial)> {
    let start: Vec<f64> = vars.iter().map(|v| v.start.round()).collect();
    let mut out = Vec::new();
    for j in 0..settings.pairs {
        for (scale, &s) in settings.scales.iter().enumerate() {
            let t = out.len() as u64;
            // One δ per (scale, j / 2): both of its sides are played, in pairs j and j + 1.
            let mut rng = IterationRng::new(settings.seed ^ ((scale as u64) << 48), j / 2 + 1);
            let delta: Vec<f64> = signs(&mut rng, vars.len()).collect();
            let c_k: Vec<f64> = vars.iter().map(|v| s * v.c_end).collect();
            let probe: Vec<f64> = vars
                .iter()
                .zip(&start)
                .zip(delta.iter().zip(&c_k))
                .map(|((v, &x), (&d, &c))| {
                    let (plus, minus) = round_pair(
                        x + c * d,
                        x - c * d,
                        c,
                        (v.min, v.max),
                        RoundingMode::Nearest,
                        0.0,
                    );
                    (if j.is_multiple_of(2) { plus } else { minus }) as f64
                })
                .collect();
            let trial = Trial {
                iteration: t + 1,
                delta,
                c_k,
                plus: probe,
                minus: start.clone(),
                opening: t,
                pairs: 1,
                seed: settings.seed ^ t,
                track: Some(TrackUnit {
                    point: t + 1,
                    against: Against::Start,
                }),
            };
            out.push((PairSpec { scale, j }, trial));
        }
    }
    out
}

/// One scale's result.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleLoss {
    pub scale: f64,
    pub tally: Tally,
}

impl ScaleLoss {
    /// Elo lost by the probe against θ0 and its standard error, when the pairs give an interval.
    pub fn loss(&self) -> Option<(f64, f64)> {
        elo_with_se(&self.tally).map(|(elo, se)| (-elo, se))
    }
}

/// The quadratic curve through the measured losses, and how far it holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuadraticFit {
    /// k: the Elo lost at scale 1 (the file's c_end), fitted on the scales where it holds.
    pub k: f64,
    pub k_se: f64,
    /// The largest scale up to which every measured loss agrees with k·s² (within 95%).
    pub holds_to: f64,
    /// The first scale whose loss does not, if any.
    pub bends_at: Option<f64>,
}

impl QuadraticFit {
    /// Whether the curvature is above zero at 95%.
    pub fn measurable(&self) -> bool {
        self.k - Z95 * self.k_se > 0.0
    }
}

/// Weighted least squares of L = k·s² through the origin over `points` (scale, loss, se).
fn fit_k(points: &[(f64, f64, f64)]) -> (f64, f64) {
    let (mut num, mut den) = (0.0, 0.0);
    for &(s, l, se) in points {
        let w = 1.0 / (se * se);
        num += w * l * s * s;
        den += w * s.powi(4);
    }
    (num / den, 1.0 / den.sqrt())
}

/// The quadratic fit of measured (scale, loss, se) points in ascending scale: grow the set of
/// scales from the smallest while every point of it lies within its 95% interval of the set's
/// own fit; the first scale that breaks it is where the curve bends. `None` without a point.
pub fn fit_quadratic(points: &[(f64, f64, f64)]) -> Option<QuadraticFit> {
    let points: Vec<(f64, f64, f64)> = points
        .iter()
        .copied()
        .filter(|(s, l, se)| s.is_finite() && l.is_finite() && se.is_finite() && *se > 0.0)
        .collect();
    let first = *points.first()?;
    let (k, k_se) = fit_k(&points[..1]);
    let mut fit = QuadraticFit {
        k,
        k_se,
        holds_to: first.0,
        bends_at: None,
    };
    for m in 2..=points.len() {
        let (k, k_se) = fit_k(&points[..m]);
        let agrees = points[..m]
            .iter()
            .all(|&(s, l, se)| (l - k * s * s).abs() <= Z95 * se);
        if !agrees {
            fit.bends_at = Some(points[m - 1].0);
            break;
        }
        fit = QuadraticFit {
            k,
            k_se,
            holds_to: points[m - 1].0,
            bends_at: None,
        };
    }
    Some(fit)
}

/// What the measurement found.
pub struct ProbeCurve {
    pub points: Vec<ScaleLoss>,
    /// Variables the probe moves (a range to move in).
    pub moved: usize,
    pub fit: Option<QuadraticFit>,
    pub pairs_played: u64,
    pub seconds: f64,
}

impl ProbeCurve {
    fn from_points(points: Vec<ScaleLoss>, moved: usize, seconds: f64) -> ProbeCurve {
        let measured: Vec<(f64, f64, f64)> = points
            .iter()
            .filter_map(|p| p.loss().map(|(l, se)| (p.scale, l, se)))
            .collect();
        ProbeCurve {
            pairs_played: points.iter().map(|p| p.tally.pairs()).sum(),
            fit: fit_quadratic(&measured),
            points,
            moved,
            seconds,
        }
    }

    /// The probe limit for the plan: the Elo each variable may lose at ±c_end under the
    /// measured curvature shared equally, k·s*²/n, so no c_end goes past s* times the file's.
    /// `None` when the curvature is not measurable.
    pub fn probe_loss(&self) -> Option<f64> {
        let fit = self.fit.filter(QuadraticFit::measurable)?;
        Some(fit.k * fit.holds_to * fit.holds_to / self.moved.max(1) as f64)
    }

    /// The variables with the measured curvature shared equally as their simul_elo: each
    /// variable's ±c_end loses k/n, so simul_elo = 10⁴·k/(n·c_end²). Unchanged when the
    /// curvature is not measurable.
    pub fn shared_simul_elo(&self, vars: &[Variable]) -> Vec<Variable> {
        let Some(fit) = self.fit.filter(QuadraticFit::measurable) else {
            return vars.to_vec();
        };
        let share = fit.k / self.moved.max(1) as f64;
        vars.iter()
            .map(|v| {
                let mut v = v.clone();
                if v.max > v.min && v.c_end > 0.0 {
                    // Three significant digits: a wide variable's share is small, and
                    // rounded to a fixed decimal it would become 0 (nothing to tune).
                    v.simul_elo = super::significant3(1e4 * share / (v.c_end * v.c_end));
                }
                v
            })
            .collect()
    }

    /// The table printed before the plan, and what it concludes.
    pub fn render(&self) -> String {
        let predicted = |s: f64| self.fit.map(|f| f.k * s * s);
        let rows: Vec<Vec<String>> = self
            .points
            .iter()
            .map(|p| {
                let (lost, interval) = match p.loss() {
                    Some((l, se)) => (
                        format_value(l, 1),
                        format!(
                            "[{}, {}]",
                            format_value(l - Z95 * se, 1),
                            format_value(l + Z95 * se, 1)
                        ),
                    ),
                    None => ("-".into(), "no interval".into()),
                };
                vec![
                    format!("{}", p.scale),
                    format!("{}", p.tally.pairs()),
                    format!("{:?}", p.tally.pentanomial),
                    lost,
                    interval,
                    predicted(p.scale).map_or("-".into(), |e| format_value(e, 1)),
                ]
            })
            .collect();
        let mut out = crate::report::status::table(
            &[
                "scale (c_end)",
                "pairs",
                "pairs by points (0..2)",
                "Elo lost",
                "95%",
                "k·s²",
            ],
            &rows,
        );
        out.push_str(&format!(
            "probe: {} pairs in {:.0} s, {} variables moved\n",
            self.pairs_played, self.seconds, self.moved
        ));
        match self.fit {
            Some(f) if f.measurable() => {
                out.push_str(&format!(
                    "quadratic to scale {} (k = {} ± {} Elo at the file's c_end){}; probe limit {} Elo per variable at ±c_end: no c_end past {}× the file's\n",
                    f.holds_to,
                    format_value(f.k, 2),
                    format_value(f.k_se, 2),
                    f.bends_at
                        .map(|b| format!(", bends by scale {b}"))
                        .unwrap_or_else(|| ", no bend seen".into()),
                    format_value(self.probe_loss().unwrap_or(f64::NAN), 3),
                    f.holds_to
                ));
            }
            Some(f) => out.push_str(&format!(
                "no measurable loss up to scale {} (k = {} ± {}): more pairs, or larger scales\n",
                f.holds_to,
                format_value(f.k, 2),
                format_value(f.k_se, 2)
            )),
            None => out.push_str("no scale gave an interval: more pairs\n"),
        }
        out
    }
}

/// Collects the pairs of the measurement as the pool finishes them.
struct ProbeFeed<'a> {
    todo: std::vec::IntoIter<(PairSpec, Trial)>,
    specs: std::collections::HashMap<u64, PairSpec>,
    points: Vec<ScaleLoss>,
    memo: Option<&'a mut PilotMemo>,
    faulty: u64,
}

/// The memo's row name of a scale's pairs.
fn memo_name(scale: f64) -> String {
    format!("probe x{scale}")
}

impl Feed for ProbeFeed<'_> {
    fn next_trial(&mut self) -> Option<Trial> {
        let (spec, trial) = self.todo.next()?;
        self.specs.insert(trial.iteration, spec);
        Some(trial)
    }

    fn finished(&mut self, trial: Trial, m: Measurement) -> Result<()> {
        let spec = self.specs[&trial.iteration];
        let tally = m.tally();
        if m.all_faulty() {
            self.faulty += 1;
            if self.faulty > 5 {
                bail!(
                    "more than 5 probe pairs ended in engine faults: the engine cannot play these values"
                );
            }
            return Ok(());
        }
        let point = &mut self.points[spec.scale];
        if let Some(memo) = self.memo.as_deref_mut() {
            memo.record(&memo_name(point.scale), 0.0, spec.j as f64, &tally)?;
        }
        add(&mut point.tally, &tally);
        Ok(())
    }
}

fn add(to: &mut Tally, t: &Tally) {
    to.wins += t.wins;
    to.draws += t.draws;
    to.losses += t.losses;
    for (a, b) in to.pentanomial.iter_mut().zip(t.pentanomial) {
        *a += b;
    }
}

/// Play the measurement on the config's engines and held-out openings (the config's
/// concurrency), or measure it through any source `open` gives (a scripted one in tests).
pub async fn measure(
    config: &Config,
    vars: &[Variable],
    settings: &ProbeSettings,
) -> Result<ProbeCurve> {
    if config.simulate || config.games.is_none() {
        bail!(crate::error::UserError(format!(
            "{}: --probe plays games: the config needs engines ([engine1]) and simulate = false",
            config.path.display()
        )));
    }
    let mut config = config.clone();
    // The source plays a trial marked as a live-curve measurement on the held-out openings.
    config.track.get_or_insert(TrackPlan {
        share: 0.1,
        against: vec![Against::Start],
        pairs: 1,
        stop: StopRule::default(),
    });
    let source = crate::source::open(&OpenRequest {
        config: &config,
        vars,
        seed: settings.seed,
        slots: config.concurrency,
    })
    .await?;
    let memo = match &settings.memo {
        Some(path) => Some(PilotMemo::open(
            path,
            &key_for(&config, vars, &probe_key(settings))?,
        )?),
        None => None,
    };
    let out = measure_with(&*source, config.concurrency, vars, settings, memo).await;
    source.close().await;
    out
}

/// [`measure`] through an open source (the engines, or a scripted source in tests), keeping
/// each pair in `memo` and taking the pairs it holds.
pub async fn measure_with(
    source: &dyn crate::source::Source,
    slots: usize,
    vars: &[Variable],
    settings: &ProbeSettings,
    mut memo: Option<PilotMemo>,
) -> Result<ProbeCurve> {
    let started = Instant::now();
    let mut points: Vec<ScaleLoss> = settings
        .scales
        .iter()
        .map(|&scale| ScaleLoss {
            scale,
            tally: Tally::default(),
        })
        .collect();
    let mut todo = Vec::new();
    for (spec, trial) in trials(vars, settings) {
        let kept = memo
            .as_ref()
            .and_then(|m| m.get(&memo_name(settings.scales[spec.scale]), spec.j as f64));
        match kept {
            Some(t) => add(&mut points[spec.scale].tally, &t),
            None => todo.push((spec, trial)),
        }
    }
    if settings.progress && todo.len() < trials_len(settings) {
        eprintln!(
            "probe: {} pairs already played, taken from {}",
            trials_len(settings) - todo.len(),
            settings
                .memo
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string())
        );
    }
    let shutdown = Shutdown::on_signals();
    let mut feed = ProbeFeed {
        todo: todo.into_iter(),
        specs: Default::default(),
        points,
        memo: memo.as_mut(),
        faulty: 0,
    };
    let ending = pool::run(source, slots, &mut feed, &shutdown)
        .await
        .context("probe")?;
    if ending == Ending::Interrupted {
        bail!(crate::error::UserError(match &settings.memo {
            Some(memo) => format!(
                "interrupted; no plan was written; the probe pairs finished so far are kept in {} and the same command goes on from them",
                memo.display()
            ),
            None => "interrupted; nothing was written".into(),
        }));
    }
    let moved = vars.iter().filter(|v| v.max > v.min).count();
    let curve = ProbeCurve::from_points(feed.points, moved, started.elapsed().as_secs_f64());
    if settings.progress {
        for p in &curve.points {
            eprintln!(
                "probe: scale {}: {}",
                p.scale,
                crate::stats::progress_elo(&p.tally).unwrap_or_default()
            );
        }
    }
    Ok(curve)
}

fn trials_len(settings: &ProbeSettings) -> usize {
    settings.scales.len() * settings.pairs as usize
}

/// What the memo's key names besides the config and variables.
fn probe_key(settings: &ProbeSettings) -> String {
    let scales: Vec<String> = settings.scales.iter().map(|s| s.to_string()).collect();
    format!(
        "probe {} {} {}",
        scales.join(" "),
        settings.pairs,
        settings.seed
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, start: f64, min: f64, max: f64, c_end: f64) -> Variable {
        Variable {
            name: name.into(),
            start,
            min,
            max,
            c_end,
            r_end: 0.002,
            simul_elo: 0.0,
        }
    }

    fn settings(scales: &[f64], pairs: u64) -> ProbeSettings {
        ProbeSettings {
            scales: scales.to_vec(),
            pairs,
            seed: 7,
            progress: false,
            memo: None,
        }
    }

    #[test]
    fn a_quadratic_curve_holds_to_its_last_scale() {
        let pts: Vec<_> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&s| (s, 2.0 * s * s, 3.0))
            .collect();
        let f = fit_quadratic(&pts).unwrap();
        assert!((f.k - 2.0).abs() < 1e-9, "{f:?}");
        assert_eq!((f.holds_to, f.bends_at), (8.0, None));
        assert!(f.measurable());
    }

    #[test]
    fn a_loss_that_stops_growing_bends_where_it_stops() {
        // 2·s² to scale 4 (32 Elo), then flat: at 8 the model says 128.
        let pts = [
            (1.0, 2.0, 3.0),
            (2.0, 8.0, 3.0),
            (4.0, 32.0, 4.0),
            (8.0, 40.0, 5.0),
        ];
        let f = fit_quadratic(&pts).unwrap();
        assert_eq!((f.holds_to, f.bends_at), (4.0, Some(8.0)));
        assert!((f.k - 2.0).abs() < 0.05, "{f:?}");
        // Noise inside the intervals does not bend it.
        let noisy = [(1.0, 5.0, 6.0), (2.0, 3.0, 6.0), (4.0, 36.0, 8.0)];
        assert_eq!(fit_quadratic(&noisy).unwrap().bends_at, None);
        assert!(fit_quadratic(&[]).is_none());
    }

    #[test]
    fn no_measurable_loss_gives_no_limit_and_keeps_the_column() {
        let curve = ProbeCurve {
            points: vec![],
            moved: 2,
            fit: fit_quadratic(&[(1.0, 0.5, 10.0), (2.0, -1.0, 10.0)]),
            pairs_played: 20,
            seconds: 1.0,
        };
        assert!(curve.probe_loss().is_none());
        let vars = [var("a", 10.0, 0.0, 20.0, 1.0)];
        assert_eq!(curve.shared_simul_elo(&vars), vars.to_vec());
        assert!(curve.render().contains("no measurable loss up to scale 2"));
    }

    #[test]
    fn the_limit_caps_each_c_end_at_the_scale_where_the_curve_held() {
        // k = 8 Elo over 4 moved variables, quadratic to scale 4: 2 Elo each at ±c_end, so
        // simul_elo = 10⁴·2/c_end², and the limit k·4²/4 = 32 Elo gives c_end·4 exactly.
        let curve = ProbeCurve {
            points: vec![],
            moved: 4,
            fit: Some(QuadraticFit {
                k: 8.0,
                k_se: 1.0,
                holds_to: 4.0,
                bends_at: Some(8.0),
            }),
            pairs_played: 400,
            seconds: 1.0,
        };
        assert_eq!(curve.probe_loss(), Some(32.0));
        let vars = [
            var("a", 10.0, 0.0, 20.0, 1.0),
            var("b", 100.0, 0.0, 200.0, 10.0),
            var("fixed", 5.0, 5.0, 5.0, 1.0),
            var("wide", 9818.0, 5000.0, 15000.0, 500.0),
        ];
        let shared = curve.shared_simul_elo(&vars);
        assert_eq!(shared[0].simul_elo, 20000.0);
        assert_eq!(shared[1].simul_elo, 200.0);
        assert_eq!(shared[2].simul_elo, 0.0, "a fixed variable is not moved");
        assert_eq!(
            shared[3].simul_elo, 0.08,
            "a wide variable's small share is kept, not 0"
        );
        for v in [&shared[0], &shared[1], &shared[3]] {
            let c_limit = (32.0 / (1e-4 * v.simul_elo)).sqrt();
            assert!((c_limit - 4.0 * v.c_end).abs() < 1e-9, "{}", v.name);
        }
    }

    #[test]
    fn trials_play_both_sides_of_each_delta_clipped_and_rounded() {
        let vars = [var("a", 10.0, 0.0, 12.0, 1.0), var("b", 4.0, 1.0, 5.0, 0.5)];
        let t = trials(&vars, &settings(&[1.0, 4.0], 4));
        assert_eq!(t.len(), 8);
        // Interleaved scales; pair t plays opening t, against θ0.
        for (i, (spec, trial)) in t.iter().enumerate() {
            assert_eq!(spec.scale, i % 2);
            assert_eq!(trial.opening, i as u64);
            assert_eq!(trial.minus, vec![10.0, 4.0]);
            assert!(trial.track.is_some());
            let s = [1.0, 4.0][spec.scale];
            for (v, (&x, &d)) in vars.iter().zip(trial.plus.iter().zip(&trial.delta)) {
                assert!(v.min <= x && x <= v.max, "{x} in bounds");
                assert_eq!(x, x.round());
                let _ = (s, d);
            }
        }
        // Pairs j and j+1 of a scale share δ and play its two sides.
        let (a, b) = (&t[0].1, &t[2].1);
        assert_eq!(a.delta, b.delta);
        assert_eq!(a.plus[0] - 10.0, -(b.plus[0] - 10.0));
        // At scale 4 variable a moves 4 units (clipped at 12 above).
        let far = &t[1].1;
        let moved = far.plus[0] - 10.0;
        assert!(moved == -4.0 || moved == 2.0, "{moved}");
    }

    /// A scripted engine: a probe's Elo against θ0 is −3·r² for r ≤ 4 (r the probe's size in
    /// c_end) and −48 beyond, so the model ends at scale 4; games drawn from that Elo at draw
    /// rate 0.3 with the trial's seed.
    struct BendsAtFour {
        c_end: Vec<f64>,
    }

    impl BendsAtFour {
        fn elo(&self, t: &Trial) -> f64 {
            let r2 = t
                .plus
                .iter()
                .zip(&t.minus)
                .zip(&self.c_end)
                .map(|((p, m), c)| ((p - m) / c).powi(2))
                .sum::<f64>()
                / self.c_end.len() as f64;
            -3.0 * r2.min(16.0)
        }
    }

    impl crate::source::Source for BendsAtFour {
        fn parts(&self, _: &Trial) -> usize {
            1
        }

        fn run_part<'a>(
            &'a self,
            _slot: usize,
            trial: &'a Trial,
            _part: usize,
        ) -> futures::future::BoxFuture<'a, Result<Measurement>> {
            Box::pin(std::future::ready(crate::source::AtOnce::measure(
                self, trial,
            )))
        }

        fn at_once(&self) -> Option<&dyn crate::source::AtOnce> {
            Some(self)
        }
    }

    impl crate::source::AtOnce for BendsAtFour {
        fn measure(&self, trial: &Trial) -> Result<Measurement> {
            use crate::source::GameScore::{Draw, Loss, Win};
            let score = 1.0 / (1.0 + 10f64.powf(-self.elo(trial) / 400.0));
            let mut rng = IterationRng::new(trial.seed, 1);
            let games = (0..2)
                .map(|_| {
                    let u = rand::Rng::next_u64(&mut rng) as f64 / u64::MAX as f64;
                    if u < score - 0.15 {
                        Win
                    } else if u < score + 0.15 {
                        Draw
                    } else {
                        Loss
                    }
                })
                .collect();
            Ok(Measurement {
                games,
                ..Default::default()
            })
        }
    }

    #[tokio::test]
    async fn a_scripted_engine_whose_elo_stops_being_quadratic_at_scale_four() {
        // Even c_end-sized steps: every variable moves exactly s·c_end (no clipping, no rounding
        // loss), so the probe's size is the scale.
        let vars: Vec<Variable> = (0..6)
            .map(|i| var(&format!("v{i}"), 1000.0, 0.0, 2000.0, 10.0))
            .collect();
        let engine = BendsAtFour {
            c_end: vars.iter().map(|v| v.c_end).collect(),
        };
        let settings = settings(&[1.0, 2.0, 4.0, 8.0], 1000);
        let curve = measure_with(&engine, 2, &vars, &settings, None)
            .await
            .unwrap();
        assert_eq!(curve.pairs_played, 4000);
        let fit = curve.fit.unwrap();
        assert_eq!(
            (fit.holds_to, fit.bends_at),
            (4.0, Some(8.0)),
            "{}",
            curve.render()
        );
        assert!((fit.k - 3.0).abs() < 1.0, "k {} near 3", fit.k);
        // The plan's limit: k·4²/6 per variable, so c_end may grow to 4× the file's, not 8×.
        let limit = curve.probe_loss().unwrap();
        let shared = curve.shared_simul_elo(&vars);
        let c_limit = (limit / (1e-4 * shared[0].simul_elo)).sqrt();
        assert!((c_limit / vars[0].c_end - 4.0).abs() < 0.05, "{c_limit}");
        assert!(
            curve.render().contains("quadratic to scale 4"),
            "{}",
            curve.render()
        );
        assert!(curve.render().contains("bends by scale 8"));
    }

    #[tokio::test]
    async fn an_interrupted_measurement_goes_on_from_its_memo() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.probe.csv");
        let vars: Vec<Variable> = (0..3)
            .map(|i| var(&format!("v{i}"), 100.0, 0.0, 200.0, 5.0))
            .collect();
        let engine = BendsAtFour {
            c_end: vars.iter().map(|v| v.c_end).collect(),
        };
        let mut s = settings(&[1.0, 2.0], 20);
        s.memo = Some(path.clone());
        let memo = || Some(PilotMemo::open(&path, "k").unwrap());
        let whole = measure_with(&engine, 1, &vars, &s, memo()).await.unwrap();
        // Keep the first 15 rows (the header, the column names and 13 pairs) as a kill would.
        let text = std::fs::read_to_string(&path).unwrap();
        let cut: String = text.split_inclusive('\n').take(15).collect();
        std::fs::write(&path, cut).unwrap();
        let again = measure_with(&engine, 1, &vars, &s, memo()).await.unwrap();
        assert_eq!(
            again.points, whole.points,
            "the same pairs, none played twice"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 42);
    }

    #[test]
    fn settings_are_checked_with_the_flag_named() {
        assert!(check_settings(&[1.0, 2.0], 100).is_ok());
        for (scales, pairs, msg) in [
            (vec![], 100, "at least one scale"),
            (vec![1.0, -2.0], 100, "not a positive number"),
            (vec![2.0, 1.0], 100, "ascending"),
            (vec![1.0], 9, "--probe-pairs 9"),
            (vec![1.0], 11, "an even number"),
        ] {
            let err = check_settings(&scales, pairs).unwrap_err();
            assert!(err.contains(msg), "{err}");
        }
    }
}
