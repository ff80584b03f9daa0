//! `spsa plan CONFIG --measure`: measure the seventh column (simulated Elo loss at ±100) from the
//! engine instead of guessing it, then plan from the measured model.
//!
//! For each variable the pilot plays two short matches against the start values θ0, each with
//! only that variable moved by an offset u (the other variables at their start values on both
//! sides): d(u) = Elo(θ0+u) − Elo(θ0). Under the quadratic model E(x) = −k·(x − x*)², with
//! g = x0 − x*, d(u) = −k·u² − 2k·g·u: two offsets determine the curvature k whatever the start's
//! distance from the optimum, and simul_elo = k·100². The offsets are ±h around the start (h a
//! few c_end), or h and 2h on the side away from a bound when the start is at or near one. The
//! matches' standard errors carry through to the curvature's, and a variable whose curvature
//! is not distinguishable from zero at 95% is reported as having no measurable effect (its file
//! value is kept). The pilot's draw rate replaces the config's simulated one.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::arena::OptionSet;
use crate::config::{Config, GamesConfig};
use crate::engine::OptionValue;
use crate::matchrun::setup::plan;
use crate::matchrun::{self, MatchEnding, MatchSettings};
use crate::plan::curvature::{Curvature, Point, fit};
use crate::plan::pilot_memo::{PilotMemo, key};
use crate::plan::study::{ModelOptimum, OptimumPrior};
use crate::runtime::shutdown::Shutdown;
use crate::stats::pairs::PairModel;
use crate::stats::{Tally, pentanomial};
use crate::vars::{Variable, format_value};

/// How far the pilot moves a variable by default: this many c_end.
pub const DEFAULT_C_ENDS: f64 = 3.0;

/// Where one variable is measured: offsets from its (rounded) start, both nonzero and distinct.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Offsets {
    pub u: [f64; 2],
}

/// Why a variable cannot be measured.
#[derive(Clone, Debug, PartialEq)]
pub enum Unmeasurable {
    /// min = max (a fixed variable).
    Fixed,
    /// The range does not allow two distinct integer offsets.
    TooNarrow,
}

/// The two offsets for a variable whose start is `x0` (rounded), moving about `h` (already a
/// whole number ≥ 1 for integer options): centred when both fit inside the bounds, else h and 2h
/// toward the side with room, shrunk to fit a narrow range.
pub fn offsets(var: &Variable, h: f64) -> Result<Offsets, Unmeasurable> {
    let x0 = var.start.round();
    if var.max <= var.min {
        return Err(Unmeasurable::Fixed);
    }
    let (room_down, room_up) = ((x0 - var.min).max(0.0), (var.max - x0).max(0.0));
    let h = h.max(1.0).round();
    if room_down >= h && room_up >= h {
        return Ok(Offsets { u: [-h, h] });
    }
    // One-sided, toward the larger room: h and 2h, shrunk so 2h fits.
    let (room, sign) = if room_up >= room_down {
        (room_up, 1.0)
    } else {
        (room_down, -1.0)
    };
    let h = h.min((room / 2.0).floor());
    if h < 1.0 {
        return Err(Unmeasurable::TooNarrow);
    }
    Ok(Offsets {
        u: [sign * h, sign * 2.0 * h],
    })
}

/// The Elo of a match's tally with its standard error (from the pentanomial 95% interval);
/// `None` when the interval cannot be had (too few pairs, every pair the same, or a score of 0
/// or 1).
pub fn elo_with_se(t: &Tally) -> Option<(f64, f64)> {
    let e = pentanomial(&t.pentanomial)?;
    let (low, high) = e.interval?;
    (e.elo.is_finite() && low.is_finite() && high.is_finite())
        .then(|| (e.elo, (high - low) / (2.0 * 1.96)))
}

/// One variable's measurement.
#[derive(Clone, Debug)]
pub struct Measured {
    pub name: String,
    /// The (rounded) start value the offsets are taken from.
    pub x0: f64,
    pub file_simul_elo: f64,
    pub outcome: Result<(Offsets, [Point; 2], Curvature), String>,
}

impl Measured {
    /// The simul_elo to plan with: the measured one when it is measurable, else the file's.
    pub fn simul_elo(&self) -> f64 {
        match &self.outcome {
            // Written as users read it: 0.1 Elo is far below the measurement's error.
            Ok((_, _, c)) if c.measurable() => (c.simul_elo * 10.0).round() / 10.0,
            _ => self.file_simul_elo,
        }
    }

    /// Why the file's value is kept, if it is.
    pub fn warning(&self) -> Option<String> {
        let keep = format!(
            "keeping the file's simul_elo {}",
            format_value(self.file_simul_elo, 3)
        );
        match &self.outcome {
            Err(why) => Some(format!("`{}`: {why}; {keep}", self.name)),
            Ok((o, _, c)) if !c.measurable() => Some(format!(
                "`{}`: no measurable effect at offsets {} and {} (simul_elo {} ± {}, not above zero at 95%); {keep}",
                self.name,
                o.u[0],
                o.u[1],
                format_value(c.simul_elo, 1),
                format_value(c.se, 1)
            )),
            Ok(_) => None,
        }
    }
}

/// Everything the pilot found.
pub struct Pilot {
    pub measured: Vec<Measured>,
    /// Draws over games, all pilot matches together.
    pub draw_rate: f64,
    /// The pilot's pairs by points (0, ½, 1, 1½, 2), all matches together.
    pub pentanomial: [u64; 5],
    pub pairs_played: u64,
    pub seconds: f64,
}

impl Pilot {
    /// The variables with the measured column.
    pub fn apply(&self, vars: &[Variable]) -> Vec<Variable> {
        vars.iter()
            .zip(&self.measured)
            .map(|(v, m)| Variable {
                simul_elo: m.simul_elo(),
                ..v.clone()
            })
            .collect()
    }

    /// Where the plan's model puts each variable's optimum: from its two matches where the
    /// pilot played them (however uncertain; a run draws within their errors), else anywhere
    /// in its range.
    pub fn optimum(&self) -> ModelOptimum {
        ModelOptimum::Drawn(
            self.measured
                .iter()
                .map(|m| match &m.outcome {
                    Ok((_, points, _)) => OptimumPrior::Measured {
                        x0: m.x0,
                        points: *points,
                    },
                    Err(_) => OptimumPrior::Range,
                })
                .collect(),
        )
    }

    /// The table printed before the plan.
    pub fn render(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .measured
            .iter()
            .map(|m| {
                let file = format_value(m.file_simul_elo, 3);
                match &m.outcome {
                    Ok((_, p, c)) => vec![
                        m.name.clone(),
                        format!("{:+} / {:+}", p[0].u, p[1].u),
                        format!(
                            "{} ± {} / {} ± {}",
                            format_value(p[0].elo, 1),
                            format_value(p[0].se, 1),
                            format_value(p[1].elo, 1),
                            format_value(p[1].se, 1)
                        ),
                        format!(
                            "{} ± {}{}",
                            format_value(c.simul_elo, 1),
                            format_value(c.se, 1),
                            if c.measurable() { "" } else { " (n.s.)" }
                        ),
                        file,
                        format_value(c.slope, 3),
                        c.optimum_from(m.x0),
                    ],
                    Err(why) => vec![
                        m.name.clone(),
                        "-".into(),
                        "-".into(),
                        why.clone(),
                        file,
                        "-".into(),
                        "-".into(),
                    ],
                }
            })
            .collect();
        let mut out = crate::report::status::table(
            &[
                "variable",
                "offsets",
                "Elo vs start (±SE)",
                "measured simul_elo (±SE)",
                "file",
                "slope Elo/unit",
                "optimum (est.)",
            ],
            &rows,
        );
        out.push_str(&format!(
            "pilot: {} pairs in {:.0} s, draw rate {:.2}, pairs by points (0, ½, 1, 1½, 2): {:?}\n",
            self.pairs_played, self.seconds, self.draw_rate, self.pentanomial
        ));
        out
    }

    /// How the plan simulates pairs: the pilot's own pentanomial centred on equal strength
    /// (real pairs of one opening are less noisy than two independent games at their draw
    /// rate), or its draw rate when its pairs cannot give a shape (none below or above 1 point).
    pub fn pair_model(&self) -> PairModel {
        PairModel::from_pair_counts(&self.pentanomial).unwrap_or(PairModel::Games {
            draw_rate: self.draw_rate,
        })
    }
}

/// What the pilot plays.
pub struct PilotSettings {
    pub pairs: u64,
    /// Offsets of this many c_end.
    pub c_ends: f64,
    pub progress: bool,
    /// Keep every finished match here, and take the ones it holds instead of playing them
    /// again ([`crate::plan::pilot_memo`]).
    pub memo: Option<PathBuf>,
}

/// Play the pilot on the config's engines, book and limits. Bad input (no engines, an option
/// the engine refuses) is refused before any game; an engine failing every game stops the pilot
/// with an error naming the variable and point; Ctrl-C stops it, and with a memo the matches
/// finished so far are kept for the next try.
pub async fn measure(
    config: &Config,
    vars: &[Variable],
    settings: &PilotSettings,
) -> Result<Pilot> {
    let Some(games) = config.games.clone().filter(|_| !config.simulate) else {
        bail!(crate::error::UserError(format!(
            "{}: --measure plays games: the config needs engines ([engine1]) and simulate = false",
            config.path.display()
        )));
    };
    let started = Instant::now();
    let mut memo = match &settings.memo {
        Some(path) => Some(PilotMemo::open(
            path,
            &key(config, vars, settings.pairs, settings.c_ends)?,
        )?),
        None => None,
    };
    if let Some(m) = memo.as_ref().filter(|m| !m.is_empty())
        && settings.progress
    {
        eprintln!(
            "pilot: {} matches already played, taken from {}",
            m.len(),
            m.path().display()
        );
    }
    let shutdown = Shutdown::on_signals();
    let start: Vec<f64> = vars.iter().map(|v| v.start.round()).collect();
    let mut measured = Vec::with_capacity(vars.len());
    let (mut draws, mut games_played, mut pairs_played) = (0u64, 0u64, 0u64);
    let mut by_points = [0u64; 5];
    for (i, var) in vars.iter().enumerate() {
        let h = (settings.c_ends * var.c_end).round();
        let outcome = match offsets(var, h) {
            Err(Unmeasurable::Fixed) => Err("min = max, nothing to measure".to_string()),
            Err(Unmeasurable::TooNarrow) => {
                Err("its range is too narrow for two whole-number offsets".to_string())
            }
            Ok(o) => {
                let mut points = Vec::with_capacity(2);
                let mut failure = None;
                for u in o.u {
                    let kept = memo.as_ref().and_then(|m| m.get(&var.name, u));
                    let tally = match kept {
                        Some(t) => t,
                        None => {
                            let t = point(config, &games, vars, &start, i, u, settings, &shutdown)
                                .await
                                .with_context(|| {
                                    format!(
                                        "pilot: `{}` at {} (start {}, offset {u:+})",
                                        var.name,
                                        start[i] + u,
                                        start[i]
                                    )
                                })?;
                            if let Some(m) = &mut memo {
                                m.record(&var.name, start[i], u, &t)?;
                            }
                            t
                        }
                    };
                    draws += tally.draws;
                    games_played += tally.games();
                    pairs_played += tally.pairs();
                    for (all, n) in by_points.iter_mut().zip(tally.pentanomial) {
                        *all += n;
                    }
                    match elo_with_se(&tally) {
                        Some((elo, se)) => points.push(Point { u, elo, se }),
                        None => {
                            failure = Some(no_interval(&tally, u));
                            break;
                        }
                    }
                }
                match failure {
                    Some(why) => Err(why),
                    None => {
                        let p = [points[0], points[1]];
                        Ok((o, p, fit(p)))
                    }
                }
            }
        };
        measured.push(Measured {
            name: var.name.clone(),
            x0: start[i],
            file_simul_elo: var.simul_elo,
            outcome,
        });
    }
    Ok(Pilot {
        measured,
        draw_rate: if games_played > 0 {
            draws as f64 / games_played as f64
        } else {
            config.draw_rate
        },
        pentanomial: by_points,
        pairs_played,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Why a pilot match gave no Elo to fit: every pair scored the same (no measurable effect, as
/// when the engine ignores the option), or one side won everything.
fn no_interval(t: &Tally, u: f64) -> String {
    let points = format!(
        "{} of {} points",
        crate::stats::half_points(t.wins * 2 + t.draws),
        t.games()
    );
    if t.pentanomial.iter().filter(|&&n| n > 0).count() == 1 && t.pentanomial[2] == t.pairs() {
        format!(
            "no measurable effect: all {} pairs at {u:+} scored 1 of 2 points against the start",
            t.pairs()
        )
    } else {
        format!(
            "the match at {u:+} gave no Elo interval ({} pairs, {points}): too lopsided or too short; try smaller --offset-c-ends or more --pairs",
            t.pairs()
        )
    }
}

/// One pilot match: variable `i` at start+u against the start values.
#[allow(clippy::too_many_arguments)]
async fn point(
    config: &Config,
    games: &GamesConfig,
    vars: &[Variable],
    start: &[f64],
    i: usize,
    u: f64,
    settings: &PilotSettings,
    shutdown: &Shutdown,
) -> Result<Tally> {
    let options = |moved: bool| -> OptionSet {
        vars.iter()
            .zip(start)
            .enumerate()
            .map(|(j, (v, &x))| {
                let x = if moved && j == i { x + u } else { x };
                (v.name.clone(), OptionValue::Number(x))
            })
            .collect()
    };
    let match_settings = MatchSettings {
        pairs: Some(settings.pairs),
        max_faulty_pairs: 5,
        ..MatchSettings::default()
    };
    let mut games = games.clone();
    games.pgn = None;
    let mut plan = plan(
        &games,
        [format!("{}{u:+}", vars[i].name), "start".into()],
        options(true),
        options(false),
        &match_settings,
        settings.pairs,
        Some(config.concurrency),
        config.seed,
        format!("spsa plan {} --measure", config.path.display()),
    )?;
    // An option the engine refuses is reported at the config's line that set it.
    plan.option_places.config = Some(config.clone());
    let source = plan.start_source().await?;
    let out = matchrun::play(
        &source,
        plan.concurrency,
        plan.pairs,
        None,
        plan.max_faulty_pairs,
        shutdown,
        None,
        None,
    )
    .await;
    source.arena().quit_all().await;
    if settings.progress {
        eprintln!(
            "pilot: {}{u:+}: {}",
            vars[i].name,
            crate::stats::progress_elo(&out.tally).unwrap_or_default()
        );
    }
    match out.ending {
        MatchEnding::Finished => Ok(out.tally),
        MatchEnding::Interrupted => Err(crate::error::UserError(match &settings.memo {
            Some(memo) => format!(
                "interrupted; no plan was written; the matches finished so far are kept in {} and the same command goes on from them",
                memo.display()
            ),
            None => "interrupted; nothing was written".into(),
        })
        .into()),
        MatchEnding::Failed(e) => Err(e.context(format!(
            "the match failed after {} of {} pairs",
            out.tally.pairs(),
            out.planned
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(start: f64, min: f64, max: f64) -> Variable {
        Variable {
            name: "x".into(),
            start,
            min,
            max,
            c_end: 10.0,
            r_end: 0.002,
            simul_elo: 0.0,
        }
    }

    #[test]
    fn offsets_are_centred_inside_and_one_sided_at_a_bound() {
        assert_eq!(
            offsets(&var(100.0, 0.0, 200.0), 30.0),
            Ok(Offsets { u: [-30.0, 30.0] })
        );
        // A weight starting at its bound (0 with min 0) is measured at h and 2h above it.
        assert_eq!(
            offsets(&var(0.0, 0.0, 200.0), 30.0),
            Ok(Offsets { u: [30.0, 60.0] })
        );
        assert_eq!(
            offsets(&var(200.0, 0.0, 200.0), 30.0),
            Ok(Offsets { u: [-30.0, -60.0] })
        );
        // Near a bound: one-sided, shrunk to fit.
        assert_eq!(
            offsets(&var(10.0, 0.0, 50.0), 30.0),
            Ok(Offsets { u: [20.0, 40.0] })
        );
        assert_eq!(offsets(&var(5.0, 5.0, 5.0), 30.0), Err(Unmeasurable::Fixed));
        assert_eq!(
            offsets(&var(0.0, 0.0, 1.0), 30.0),
            Err(Unmeasurable::TooNarrow)
        );
    }
}
