//! Trajectory plots of a θ log, as PNG or SVG, with no system font or graphics library: the font
//! (DejaVu Sans, Bitstream Vera license, see `font/LICENSE-DejaVu.txt`) is compiled in.
//!
//! Two panels: θ of every variable against the iteration, and (θ − start)/c_end so that
//! variables of different scales share one chart (`normalized` draws that panel alone). Long
//! logs are thinned to at most [`MAX_POINTS`] points per series, keeping each bucket's lowest
//! and highest value so that excursions stay visible.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::chart::{Axis, Chart, Colour, FAMILY, Legend, Mark, Ticks, draw_to_file, register_font};
use super::history::History;
use crate::tuner::checkpoint::Checkpoint;

/// Upper bound on the points drawn per series.
pub const MAX_POINTS: usize = 2000;

/// Row indices to draw for `n` rows: all of them when few, else each bucket's min and max.
pub fn thin(values: &[f64]) -> Vec<usize> {
    let n = values.len();
    if n <= MAX_POINTS {
        return (0..n).collect();
    }
    let buckets = MAX_POINTS / 2;
    let mut out = Vec::with_capacity(MAX_POINTS);
    for b in 0..buckets {
        let (lo, hi) = (b * n / buckets, (b + 1) * n / buckets);
        if lo >= hi {
            continue;
        }
        let (mut imin, mut imax) = (lo, lo);
        for i in lo..hi {
            if values[i] < values[imin] {
                imin = i;
            }
            if values[i] > values[imax] {
                imax = i;
            }
        }
        out.push(imin.min(imax));
        if imin != imax {
            out.push(imin.max(imax));
        }
    }
    out
}

/// One series ready to draw: (iteration, value) points.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

/// Variables a plot draws at most: past that, the ones that moved most in units of c_end
/// (and its title says so).
pub const PLOT_VARS: usize = 24;

/// The variables to draw: every one, or the [`PLOT_VARS`] whose last θ in `log` is farthest
/// from the start in units of c_end.
pub fn plotted(ck: &Checkpoint, log: &History) -> Vec<usize> {
    let n = ck.vars.len();
    if n <= PLOT_VARS {
        return (0..n).collect();
    }
    let drift = ck.vars.iter().enumerate().map(|(i, v)| {
        let last = log.values.get(i).and_then(|c| c.last()).copied();
        (last.unwrap_or(ck.state.theta[i]) - ck.state.start[i]) / v.c_end
    });
    super::status::most_moved(drift, PLOT_VARS)
}

fn series(ck: &Checkpoint, log: &History, normalized: bool) -> Vec<Series> {
    plotted(ck, log)
        .into_iter()
        .map(|i| (i, &ck.vars[i]))
        .map(|(i, v)| {
            let start = ck.state.start[i];
            let f = |x: f64| {
                if normalized { (x - start) / v.c_end } else { x }
            };
            let column = &log.values[i];
            let mut points = vec![(0.0, f(start))];
            points.extend(
                thin(column)
                    .into_iter()
                    .map(|r| (log.iterations[r] as f64, f(column[r]))),
            );
            Series {
                name: v.name.clone(),
                points,
            }
        })
        .collect()
}

/// A plot's companion beside the θ plot: `x.png` → `x.<tag>.png`.
pub fn beside(theta_plot: &Path, tag: &str) -> std::path::PathBuf {
    let stem = theta_plot
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plot".into());
    let ext = theta_plot
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "png".into());
    theta_plot.with_file_name(format!("{stem}.{tag}.{ext}"))
}

/// Draw the plot to `file` (`.png` or `.svg`).
pub fn draw(
    file: &Path,
    ck: &Checkpoint,
    log: &History,
    log_name: &Path,
    normalized_only: bool,
) -> Result<()> {
    register_font()?;
    let height = if normalized_only { 600 } else { 1000 };
    let title = file_title(ck, log, log_name);
    draw_to_file!(file, (1200, height), |root| draw_on(
        root,
        ck,
        log,
        normalized_only,
        &title
    ))
    .with_context(|| format!("{}: cannot draw plot", file.display()))
}

fn file_title(ck: &Checkpoint, log: &History, log_name: &Path) -> String {
    let last = log.iterations.last().copied().unwrap_or(0);
    let n = ck.vars.len();
    let which = if n > PLOT_VARS {
        format!(" (the {PLOT_VARS} of {n} variables that moved most in units of c_end)")
    } else {
        String::new()
    };
    format!(
        "{}: iteration {last} of {}{which}",
        log_name
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        ck.state.iterations
    )
}

fn draw_on<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    ck: &Checkpoint,
    log: &History,
    normalized_only: bool,
    title: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let root = root.titled(title, (FAMILY, 22))?;
    let last = log.iterations.last().copied().unwrap_or(1).max(1) as f64;
    if normalized_only {
        panel(&series(ck, log, true), last, NORMALIZED).draw_on(&root)?;
    } else {
        let (top, bottom) = root.split_vertically(root.dim_in_pixel().1 / 2);
        panel(&series(ck, log, false), last, ("θ", "θ")).draw_on(&top)?;
        panel(&series(ck, log, true), last, NORMALIZED).draw_on(&bottom)?;
    }
    root.present()?;
    Ok(())
}

const NORMALIZED: (&str, &str) = ("(θ − start) / c_end", "(θ − start) / c_end");

/// One panel: a line per variable, in the colours the page uses, names in a strip beside it.
fn panel(series: &[Series], last: f64, (caption, y_desc): (&str, &str)) -> Chart {
    let mut c = Chart::new(
        Axis::new("iteration", Ticks::Whole),
        Axis::new(y_desc, Ticks::Value),
    );
    c.title = caption.into();
    c.x_range = Some((0.0, last));
    c.legend = Legend::Strip;
    for (i, s) in series.iter().enumerate() {
        c.labelled(
            Mark::Line {
                points: s.points.clone(),
                width: 2,
            },
            Colour::series(i),
            &s.name,
        );
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_extremes_and_bounds_the_count() {
        let values: Vec<f64> = (0..1_000_000).map(|i| ((i % 997) as f64).sin()).collect();
        let mut v = values.clone();
        v[123_456] = 50.0;
        v[654_321] = -50.0;
        let idx = thin(&v);
        assert!(idx.len() <= MAX_POINTS, "{}", idx.len());
        assert!(idx.windows(2).all(|w| w[0] < w[1]), "in order");
        assert!(idx.contains(&123_456) && idx.contains(&654_321));
        assert_eq!(thin(&values[..100]), (0..100).collect::<Vec<_>>());
    }
}
