//! The loss log of a tune from positions, and its learning curve (training and validation loss
//! against the iteration, as chess4j plots them).
//!
//! The log (its format is `positions::loss_log`) sits beside the θ log (`x.log` → `x.loss.csv`): the header row [`HEADER`]
//! (`iteration,plus_sum,minus_sum,count,validation_loss`, written when a run starts, whatever the
//! method), then one row per measured part, appended with the checkpoint. A trial's parts (one per engine)
//! each write their loss sums at θ+ and θ−; the reader adds the rows of an iteration up, so the
//! training loss of an iteration is (ΣL+ + ΣL−)/(2·Σcount): the batch's mean loss around θ, free
//! with every SPSA iteration and noisy (the curve shows its running mean). The validation loss is
//! measured every few iterations at the trial's midpoint, in a row of its own. The local search
//! and the exact-gradient methods write one row per pass or epoch with full-set losses (plus =
//! minus): those curves are exact, so the report neither averages nor smooths them.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::chart::{Axis, Chart, Colour, Legend, Mark, Ticks};
pub use crate::positions::loss_log::{HEADER, LossRow, loss_log_path, part_line, read};

/// First, last and best of each loss, for the report's text.
pub fn summary(rows: &[LossRow]) -> String {
    let mut out = String::new();
    for (name, pick) in [
        (
            "training",
            (|r: &LossRow| r.train) as fn(&LossRow) -> Option<f64>,
        ),
        ("validation", |r: &LossRow| r.validation),
    ] {
        let v: Vec<(u64, f64)> = rows
            .iter()
            .filter_map(|r| pick(r).map(|x| (r.iteration, x)))
            .collect();
        if v.is_empty() {
            continue;
        }
        // The SPSA training loss is one batch per row: compare means of the first and last tenth.
        // Validation rows and full-set training rows are exact: compare the first and the last.
        let exact = name == "validation" || exact_training(rows);
        let tenth = if exact { 1 } else { (v.len() / 10).max(1) };
        let mean = |s: &[(u64, f64)]| s.iter().map(|p| p.1).sum::<f64>() / s.len() as f64;
        let first = mean(&v[..tenth]);
        let last = mean(&v[v.len() - tenth..]);
        out.push_str(&format!(
            "{name} loss: {first:.6} at the start, {last:.6} at the end ({:+.2}%), {} rows\n",
            100.0 * (last - first) / first.max(1e-12),
            v.len()
        ));
    }
    out
}

/// The plot file for the curve beside the θ plot: `x.png` → `x.loss.png`.
pub fn plot_path(theta_plot: &Path) -> PathBuf {
    super::plot::beside(theta_plot, "loss")
}

/// Every training row is a full-set loss (local search, gradient epochs): nothing to average.
fn exact_training(rows: &[LossRow]) -> bool {
    rows.iter()
        .filter(|r| r.train.is_some())
        .all(|r| r.full_set)
}

/// A running mean over `w` rows (the first rows average what they have).
fn running_mean(v: &[(f64, f64)], w: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(v.len());
    let mut sum = 0.0;
    for i in 0..v.len() {
        sum += v[i].1;
        if i >= w {
            sum -= v[i - w].1;
        }
        out.push((v[i].0, sum / (i + 1).min(w) as f64));
    }
    out
}

/// Draw the learning curve to `file` (`.png` or `.svg`).
pub fn draw(file: &Path, rows: &[LossRow], title: &str) -> Result<()> {
    chart(rows, title)
        .draw(file, (1200, 600))
        .with_context(|| format!("{}: cannot draw the learning curve", file.display()))
}

/// The learning curve as a chart (the plot's and the page's): the training loss (a running
/// mean when it is one batch a row) and the validation loss with its measured points.
pub fn chart(rows: &[LossRow], title: &str) -> Chart {
    let train: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| r.train.map(|t| (r.iteration as f64, t)))
        .collect();
    let valid: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| r.validation.map(|t| (r.iteration as f64, t)))
        .collect();
    let window = if exact_training(rows) {
        1
    } else {
        (train.len() / 25).max(1)
    };
    let last = rows.last().map_or(1, |r| r.iteration);
    chart_of(running_mean(&train, window), valid, last, title)
}

/// The learning curve of (iteration, loss) points as given: the training loss and the validation
/// loss with its measured points, iterations 0 to `last` (the page's chart, already downsampled).
pub fn chart_of(train: Vec<(f64, f64)>, valid: Vec<(f64, f64)>, last: u64, title: &str) -> Chart {
    let mut c = Chart::new(
        Axis::new("iteration", Ticks::Whole),
        Axis::new("loss", Ticks::Fixed(5)),
    );
    c.title = title.into();
    c.x_range = Some((0.0, last.max(1) as f64));
    c.legend = Legend::UpperRight;
    c.labelled(
        Mark::Line {
            points: train,
            width: 2,
        },
        Colour::BLUE,
        "training",
    );
    if !valid.is_empty() {
        c.labelled(
            Mark::Line {
                points: valid.clone(),
                width: 2,
            },
            Colour::ORANGE,
            "validation",
        );
        c.mark(Mark::Dots(valid), Colour::ORANGE);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_plot() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("run.log");
        let path = loss_log_path(&log);
        assert_eq!(path, dir.path().join("run.loss.csv"));
        let mut text = HEADER.to_string();
        for k in 1..=40u64 {
            // Two parts of 50 positions each; a validation row every 10 iterations.
            let t = 0.1 - 0.001 * k as f64;
            text.push_str(&part_line(
                k,
                50.0 * (t - 0.01),
                50.0 * (t + 0.01),
                50,
                None,
            ));
            text.push_str(&part_line(k, 50.0 * t, 50.0 * t, 50, None));
            if k % 10 == 0 {
                text.push_str(&part_line(k, 0.0, 0.0, 0, Some(0.1 - 0.0008 * k as f64)));
            }
        }
        std::fs::write(&path, &text).unwrap();
        let back = read(&path).unwrap();
        assert_eq!(back.len(), 40);
        assert_eq!(back[9].validation.map(|v| (v * 1e4).round()), Some(920.0));
        assert!((back[0].train.unwrap() - 0.099).abs() < 1e-9);
        assert_eq!(back[0].validation, None);
        let s = summary(&back);
        assert!(
            s.contains("training loss: 0.097500 at the start, 0.061500 at the end"),
            "{s}"
        );
        assert!(s.contains("validation loss: 0.092000"), "{s}");
        assert!(!back[0].full_set && back[9].full_set == back[0].full_set);
        // Full-set rows (gradient epochs, local-search passes): the first and last exactly.
        let mut exact = HEADER.to_string();
        for k in 1..=40u64 {
            let t = 0.1 - 0.001 * k as f64;
            exact.push_str(&part_line(k, t, t, 1, Some(t + 0.01)));
        }
        let exact_path = dir.path().join("exact.loss.csv");
        std::fs::write(&exact_path, &exact).unwrap();
        let rows = read(&exact_path).unwrap();
        assert!(rows.iter().all(|r| r.full_set));
        let s = summary(&rows);
        assert!(
            s.contains("training loss: 0.099000 at the start, 0.060000 at the end"),
            "{s}"
        );
        assert!(
            s.contains("validation loss: 0.109000 at the start, 0.070000"),
            "{s}"
        );
        let png = dir.path().join("p.png");
        assert_eq!(plot_path(&png), dir.path().join("p.loss.png"));
        draw(&plot_path(&png), &back, "run").unwrap();
        assert!(
            std::fs::metadata(dir.path().join("p.loss.png"))
                .unwrap()
                .len()
                > 1000
        );
        std::fs::write(&path, format!("{HEADER}1,0.1,0.1,x,\n")).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("run.loss.csv:2"), "{e}");
    }
}
