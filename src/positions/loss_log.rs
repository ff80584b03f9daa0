//! The loss log's format, beside the tunes that write it (`source::positions`,
//! `source::coefficients`, and the local search and gradient methods): the file sits beside the θ
//! log (`x.log` → `x.loss.csv`), starts with [`HEADER`], then one row per measured part, appended
//! with the checkpoint. [`read`] adds an iteration's part rows up; `report::loss_curve` draws
//! the curve from what it reads (see there for what the rows mean).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::error::UserError;

/// The columns of a loss log (a line starting with `iteration` is skipped when read).
pub const HEADER: &str = "iteration,plus_sum,minus_sum,count,validation_loss\n";

/// One iteration's losses, as read back (its part rows added up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossRow {
    pub iteration: u64,
    pub train: Option<f64>,
    pub validation: Option<f64>,
    /// The iteration's SPSA signal −(L+ − L−)/2 in mean losses (`None` for a validation-only
    /// row; 0 for the local search's rows, where plus = minus).
    pub signal: Option<f64>,
    /// Every training part of the iteration has plus = minus: a loss at one θ (local search,
    /// gradient epochs), not the mean around an SPSA trial's θ±.
    pub full_set: bool,
}

/// One part's row of the log (with its newline): loss sums at θ+ and θ− over `count`
/// positions, and a validation loss when this part measured one.
pub fn part_line(
    iteration: u64,
    plus_sum: f64,
    minus_sum: f64,
    count: u64,
    validation: Option<f64>,
) -> String {
    let v = validation.map(|v| format!("{v:.8}")).unwrap_or_default();
    format!("{iteration},{plus_sum:.8},{minus_sum:.8},{count},{v}\n")
}

/// The loss log that goes with a θ log.
pub fn loss_log_path(theta_log: &Path) -> PathBuf {
    let stem = theta_log
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "spsa".into());
    theta_log.with_file_name(format!("{stem}.loss.csv"))
}

/// Read a loss log, adding up each iteration's part rows, in iteration order. A row that cannot
/// be read is an error naming its line.
pub fn read(path: &Path) -> Result<Vec<LossRow>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the loss log", path.display()))?;
    parse(&text, path)
}

/// A loss log from its text (`path` names it in errors): what [`read`] does once it has read
/// the file.
pub fn parse(text: &str, path: &Path) -> Result<Vec<LossRow>> {
    // iteration → (plus, minus, count, validation, every part had plus = minus)
    let mut by_iteration: std::collections::BTreeMap<u64, (f64, f64, u64, Option<f64>, bool)> =
        Default::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with("iteration") {
            continue;
        }
        let bad = || {
            UserError(format!(
                "{}:{}: unreadable loss row {line:?}",
                path.display(),
                i + 1
            ))
        };
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 5 {
            return Err(bad().into());
        }
        let iteration: u64 = f[0].parse().map_err(|_| bad())?;
        let plus: f64 = f[1].parse().map_err(|_| bad())?;
        let minus: f64 = f[2].parse().map_err(|_| bad())?;
        let count: u64 = f[3].parse().map_err(|_| bad())?;
        let validation: Option<f64> = match f[4] {
            "" => None,
            v => Some(v.parse().map_err(|_| bad())?),
        };
        let e = by_iteration
            .entry(iteration)
            .or_insert((0.0, 0.0, 0, None, true));
        e.4 &= count == 0 || plus == minus;
        e.0 += plus;
        e.1 += minus;
        e.2 = e.2.checked_add(count).ok_or_else(|| {
            UserError(format!(
                "{}:{}: the counts of iteration {iteration} add up to more than 2^64",
                path.display(),
                i + 1
            ))
        })?;
        e.3 = validation.or(e.3);
    }
    Ok(by_iteration
        .into_iter()
        .map(|(iteration, (p, m, n, v, full_set))| LossRow {
            iteration,
            train: (n > 0).then(|| (p + m) / (2.0 * n as f64)),
            validation: v,
            signal: (n > 0).then(|| -(p - m) / (2.0 * n as f64)),
            full_set,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 55's fuzzing (`scripts/fuzz.sh --target loss-log`, seed 1, input 630066): the
    /// counts of one iteration adding up past 2^64 panicked (`attempt to add with overflow`);
    /// they are refused naming the file and the line.
    #[test]
    fn counts_past_u64_are_refused_at_their_line() {
        let text = "iteration,plus,minus,count,validation\n\
            1,10.50000000,10.25000050000000,200,0.0800\n\
            3,0.00000000,0.0000000000,100,0.0812\n\
            1,11.00000000,10.75000000,18446744073709551615,\n\
            2,9.12500000,9.50000000,200,0.0800\n\
            3,0.00000000,0.00000000,0,\n";
        let e = parse(text, Path::new("run.loss.csv")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "run.loss.csv:4: the counts of iteration 1 add up to more than 2^64"
        );
        let rows = parse(&text.replace("18446744073709551615", "100"), Path::new("x")).unwrap();
        assert_eq!(rows.len(), 3);
    }
}
