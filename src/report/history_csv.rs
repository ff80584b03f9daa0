//! `spsa report LOG --format history`: θ after every applied result, as CSV on standard
//! output (`row,iteration,<θ of each variable>`), read through [`LogReader`] from any form of
//! the log and written in blocks as it is replayed: the history is never held whole, so a log
//! of 50,000 variables × 30,000 rows streams in a few megabytes.

use anyhow::Result;

use super::ReportError;
use super::history::RunPaths;
use crate::tuner::log::RowText;
use crate::tuner::replay::{Format, LogReader, format_of};

/// Bytes of rows gathered before they go out.
const BLOCK: usize = 1 << 20;

/// Which rows and columns of the history to print.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// Every Nth row (rows N, 2N, … counted from 1), and the last (`None`: every row).
    pub every: Option<u64>,
    /// Only these variables' columns, in this order (all when empty).
    pub variables: Vec<String>,
}

/// Stream the history of the run at `paths` to standard output.
pub fn write(paths: &RunPaths, selection: &Selection) -> Result<()> {
    let reader = open(paths)?;
    let columns = columns(&reader, &selection.variables)?;
    let mut header = csv::WriterBuilder::new().from_writer(Vec::new());
    let names = match &columns {
        Some(columns) => columns.iter().map(|&j| reader.names[j].as_str()).collect(),
        None => reader.names.iter().map(String::as_str).collect::<Vec<_>>(),
    };
    header.write_record(["row", "iteration"].into_iter().chain(names))?;
    let header = header.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::output::write_bytes(&header)?;

    let width = reader.names.len();
    let mut text = RowText::default();
    let mut picked = Vec::with_capacity(columns.as_ref().map_or(0, Vec::len));
    reader.replay(
        &rows(reader.rows(), selection.every.unwrap_or(1)),
        |i, label, theta| {
            if theta.len() != width {
                return Err(ReportError(format!(
                    "{}: row {} holds {} values, but the log names {width} variables",
                    reader.path().display(),
                    i + 1,
                    theta.len()
                ))
                .into());
            }
            match &columns {
                Some(columns) => {
                    picked.clear();
                    picked.extend(columns.iter().map(|&j| theta[j]));
                    text.push(i as u64 + 1, label, &picked);
                }
                None => text.push(i as u64 + 1, label, theta),
            }
            if text.text().len() >= BLOCK {
                crate::output::write_bytes(text.text())?;
                text.clear();
            }
            Ok(())
        },
    )?;
    crate::output::write_bytes(text.text())
}

/// The run's θ log, its columns named by the config's variables file when it is the classic
/// tool's (which has no header row).
fn open(paths: &RunPaths) -> Result<LogReader> {
    let classic = match &paths.config {
        Some(config) if format_of(&paths.log)? == Format::Classic => Some(
            crate::vars::load(&config.variables)?
                .into_iter()
                .map(|v| v.name)
                .collect::<Vec<_>>(),
        ),
        _ => None,
    };
    LogReader::open(&paths.log, classic.as_deref())
}

/// The columns of `variables` in the log (`None`: all of them); a name the log does not have
/// is the user's to fix.
fn columns(reader: &LogReader, variables: &[String]) -> Result<Option<Vec<usize>>> {
    if variables.is_empty() {
        return Ok(None);
    }
    let find = |name: &String| {
        reader.names.iter().position(|n| n == name).ok_or_else(|| {
            let some: Vec<&str> = reader.names.iter().take(5).map(String::as_str).collect();
            let more = if reader.names.len() > some.len() {
                format!(", … ({} in all)", reader.names.len())
            } else {
                String::new()
            };
            ReportError(format!(
                "{}: no variable `{name}` in the log (its variables: {}{more})",
                reader.path().display(),
                some.join(", ")
            ))
        })
    };
    Ok(Some(variables.iter().map(find).collect::<Result<_, _>>()?))
}

/// The rows `every` picks of `total`: rows every, 2·every, … (counted from 1), and the last.
fn rows(total: usize, every: u64) -> Vec<usize> {
    let every = usize::try_from(every.max(1)).unwrap_or(usize::MAX);
    let mut rows: Vec<usize> = (every - 1..total).step_by(every).collect();
    if let Some(last) = total.checked_sub(1)
        && rows.last() != Some(&last)
    {
        rows.push(last);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::rows;

    #[test]
    fn every_nth_row_and_the_last() {
        assert_eq!(rows(5, 1), [0, 1, 2, 3, 4]);
        assert_eq!(rows(7, 3), [2, 5, 6]);
        assert_eq!(rows(6, 3), [2, 5]);
        assert_eq!(rows(2, 10), [1]);
        assert_eq!(rows(0, 4), Vec::<usize>::new());
        assert_eq!(rows(3, u64::MAX), [2]);
    }
}
