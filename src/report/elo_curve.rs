//! The live Elo curve of a run (`[track]`, see [`crate::spsa::track`]) read back from its file
//! beside the θ log: a table for `spsa report` (with what the run has gained so far) and a plot
//! of Elo against the iteration: each point with its own 95% interval, and the pooled "gained so
//! far" as it stood at each point with its 95% band.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::ReportError;
use super::chart::{Axis, Chart, Colour, Legend, Mark, Ticks};
use crate::spsa::track::{self, Against, Point};
use crate::stats::format_elo;

/// The curve beside the θ log `log`, when the run measured one.
pub fn read(log: &Path) -> Result<Option<Vec<Point>>> {
    let path = track::file_for(log);
    if !path.exists() {
        return Ok(None);
    }
    let bytes = std::fs::read(&path)
        .map_err(|e| ReportError(format!("{}: cannot read: {e}", path.display())))?;
    parse(&bytes, &path).map(Some)
}

/// The points of a track file's bytes (`path` names it): text that is not UTF-8 and a row
/// that does not read are refused naming the file and the line.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Vec<Point>> {
    let text = crate::textfile::utf8(bytes, path)?;
    let (_, points) =
        track::parse_csv(text).map_err(|e| ReportError(format!("{}: {e}", path.display())))?;
    Ok(points)
}

/// Rows the table shows at most: evenly spread, always with the last.
const TABLE_ROWS: usize = 12;

/// The curve as `spsa report` prints it.
pub fn table(points: &[Point]) -> String {
    let pairs: u64 = points.iter().map(Point::pairs).sum();
    let mut out = format!(
        "live Elo curve: {} measurements, {pairs} pairs on held-out openings\n",
        points.len()
    );
    if points.is_empty() {
        return out;
    }
    for against in [Against::Start, Against::Defaults] {
        if let Some(g) = track::gained(points, against) {
            out.push_str(&format!("vs {}: {}\n", against.name(), g.text()));
        }
    }
    out.push_str(&format!(
        "{:>10}  {:<8}  {:>6}  {:>8}  {}\n",
        "iteration", "against", "pairs", "Elo", "95% interval"
    ));
    let n = points.len();
    let shown: Vec<usize> = if n <= TABLE_ROWS {
        (0..n).collect()
    } else {
        let mut v: Vec<usize> = (0..TABLE_ROWS)
            .map(|i| i * (n - 1) / (TABLE_ROWS - 1))
            .collect();
        v.dedup();
        v
    };
    for i in shown {
        let p = &points[i];
        let band = match (p.low, p.high) {
            (Some(l), Some(h)) => format!("[{}, {}]", format_elo(l), format_elo(h)),
            _ => "n/a".into(),
        };
        out.push_str(&format!(
            "{:>10}  {:<8}  {:>6}  {:>8}  {band}\n",
            p.iteration,
            p.against.name(),
            p.pairs(),
            format_elo(p.elo)
        ));
    }
    out
}

/// The plot file for the curve beside the θ plot: `x.png` → `x.elo.png`.
pub fn plot_path(theta_plot: &Path) -> PathBuf {
    super::plot::beside(theta_plot, "elo")
}

/// Draw the curve to `file` (`.png` or `.svg`).
pub fn draw(file: &Path, points: &[Point], title: &str) -> Result<()> {
    chart(points, title)
        .draw(file, (1200, 600))
        .with_context(|| format!("{}: cannot draw the Elo curve", file.display()))
}

/// The chart as an SVG document of `size` pixels, for the page of `spsa serve`: the same chart
/// as the plot's, drawn by the one chart code ([`Chart`]).
pub fn svg(points: &[Point], size: (u32, u32)) -> Result<String> {
    chart(points, "").svg(size)
}

/// Elo shown on the plot: an infinite end (every pair won or lost) is drawn at the frame.
const CLIP: f64 = 800.0;

/// The curve as a chart: per opponent, each point with its own 95% interval as a bar, and the
/// pooled "gained so far" as it stood at each point with its 95% band; a line at 0.
pub fn chart(points: &[Point], title: &str) -> Chart {
    let clip = |v: f64| v.clamp(-CLIP, CLIP);
    let last = points.iter().map(|p| p.iteration).max().unwrap_or(1).max(1) as f64;
    let mut c = Chart::new(
        Axis::new("iteration", Ticks::Whole),
        Axis::new("Elo against the opponent", Ticks::Signed),
    );
    c.title = title.into();
    c.x_range = Some((0.0, last));
    c.min_y_span = 2.0;
    c.legend = Legend::LowerRight;
    c.mark(
        Mark::Rule {
            y: 0.0,
            in_frame: true,
        },
        Colour::BLACK.alpha(0.4),
    );
    for (against, colour) in [Against::Start, Against::Defaults]
        .into_iter()
        .zip([Colour::BLUE, Colour::ORANGE])
    {
        let mine: Vec<&Point> = points.iter().filter(|p| p.against == against).collect();
        if mine.is_empty() {
            continue;
        }
        let bars = mine
            .iter()
            .filter_map(|p| Some((p.iteration as f64, clip(p.low?), clip(p.high?))))
            .collect();
        c.mark(Mark::Bars(bars), colour.alpha(0.25));
        let dots = mine
            .iter()
            .map(|p| (p.iteration as f64, clip(p.elo)))
            .collect();
        let name = against.name();
        c.labelled(
            Mark::Dots(dots),
            colour.alpha(0.5),
            &format!("against {name}: a point (its own games)"),
        );
        let trend = track::gained_trend(points, against);
        let at = |f: fn(&crate::stats::gain::Gain) -> f64| -> Vec<(f64, f64)> {
            trend.iter().map(|(i, g)| (*i as f64, clip(f(g)))).collect()
        };
        c.mark(
            Mark::Band {
                upper: at(|g| g.high),
                lower: at(|g| g.low),
            },
            colour.alpha(0.25),
        );
        c.labelled(
            Mark::Line {
                points: at(|g| g.elo),
                width: 3,
            },
            colour,
            &format!("against {name}: gained so far (pooled, shaded 95%)"),
        );
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(k: u64, against: Against, elo: f64) -> Point {
        Point {
            point: k,
            iteration: 100 * k,
            against,
            pentanomial: [1, 2, 10, 4, 3],
            elo,
            low: Some(elo - 30.0),
            high: (elo > -25.0).then_some(elo + 30.0),
        }
    }

    #[test]
    fn table_spreads_its_rows_and_plots_draw() {
        let pts: Vec<Point> = (1..=30)
            .flat_map(|k| {
                [
                    point(k, Against::Start, k as f64),
                    point(k, Against::Defaults, -(k as f64)),
                ]
            })
            .collect();
        let t = table(&pts);
        assert!(
            t.starts_with("live Elo curve: 60 measurements, 1200 pairs"),
            "{t}"
        );
        assert_eq!(t.lines().count(), 4 + TABLE_ROWS, "{t}");
        // What the run gained so far, per opponent, pooled over the second half's points.
        assert!(
            t.contains("vs start: gained +")
                && t.contains("(pooled 16 points, iterations 1500-3000)"),
            "{t}"
        );
        assert!(
            t.contains("      3000  defaults      20     -30.0  n/a"),
            "{t}"
        );
        assert!(
            t.contains("       100  start         20      +1.0  [-29.0, +31.0]"),
            "{t}"
        );
        let short = table(&pts[..2]);
        assert_eq!(short.lines().count(), 6, "{short}");
        assert!(short.contains("(last point, iteration 100)"), "{short}");

        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("x.png");
        assert_eq!(plot_path(&png), dir.path().join("x.elo.png"));
        for f in [plot_path(&png), dir.path().join("x.elo.svg")] {
            draw(&f, &pts, "curve").unwrap();
            assert!(std::fs::metadata(&f).unwrap().len() > 1000);
        }
        let svg = std::fs::read_to_string(dir.path().join("x.elo.svg")).unwrap();
        assert!(
            svg.contains("against defaults: gained so far") && svg.contains("<polygon"),
            "legend and band"
        );
        assert!(draw(&dir.path().join("x.gif"), &pts, "c").is_err());
    }
}
