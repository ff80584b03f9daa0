//! Reading a run back: find its θ log and checkpoint from whichever the user names, and load the
//! log's rows. A log that is still being written may end in half a row; that row is ignored.
//!
//! Two log forms are read: ours (`iteration,<name>,…` header, then rows) and the classic tool's
//! (no header row; each line `iteration,θ1,…,θn` at full precision, the variables in the order
//! of the variables file, which supplies the names).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::config::{Config, default_checkpoint};
use crate::report::ReportError;
use crate::tuner::checkpoint::{self, Checkpoint, RunState};
use crate::tuner::replay::{Format, LogReader, MAGIC};
use crate::vars::Variable;

/// The files of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPaths {
    pub log: PathBuf,
    pub checkpoint: PathBuf,
    /// The config, when the run was named by it: its variables and schedule stand in for a
    /// checkpoint that a classic run never wrote.
    pub config: Option<Config>,
}

/// The log that goes with a checkpoint: `logs/x.checkpoint.var` → `logs/x.log` (the inverse of
/// [`default_checkpoint`]).
pub fn log_beside_checkpoint(checkpoint: &Path) -> Option<PathBuf> {
    let name = checkpoint.file_name()?.to_str()?;
    let stem = name.strip_suffix(".checkpoint.var")?;
    Some(checkpoint.with_file_name(format!("{stem}.log")))
}

/// Work out the log and checkpoint from a path (either of them) or a config.
pub fn locate(path: Option<&Path>, config: Option<&Path>) -> Result<RunPaths> {
    if let Some(conf) = config {
        let config = Config::load(conf)?;
        return Ok(RunPaths {
            log: config.log.clone(),
            checkpoint: config.checkpoint.clone(),
            config: Some(config),
        });
    }
    let Some(path) = path else {
        return Err(ReportError("name a θ log or checkpoint, or pass --config CONF".into()).into());
    };
    if !path.exists() {
        return Err(ReportError(format!("{}: not found", path.display())).into());
    }
    if is_checkpoint(path)? {
        let log = log_beside_checkpoint(path).unwrap_or_else(|| path.with_extension("log"));
        return Ok(RunPaths {
            log,
            checkpoint: path.to_path_buf(),
            config: None,
        });
    }
    Ok(RunPaths {
        log: path.to_path_buf(),
        checkpoint: default_checkpoint(path),
        config: None,
    })
}

/// A checkpoint has `#:` state lines; a θ log starts with `iteration,`.
fn is_checkpoint(path: &Path) -> Result<bool> {
    use std::io::{BufRead, BufReader};
    let file = std::fs::File::open(path)
        .map_err(|e| ReportError(format!("{}: cannot read: {e}", path.display())))?;
    for line in BufReader::new(file).lines().take(64) {
        let line = line.unwrap_or_default();
        let line = crate::textfile::strip_bom_str(&line);
        if line.starts_with("#:") {
            return Ok(true);
        }
        if line.starts_with("iteration,") || line.as_bytes().starts_with(&MAGIC[..16]) {
            return Ok(false);
        }
    }
    Ok(false)
}

/// Read the checkpoint of a run, with a message that says how to point at it.
pub fn read_checkpoint(paths: &RunPaths) -> Result<Checkpoint> {
    if !paths.checkpoint.exists() {
        return Err(ReportError(format!(
            "{}: no checkpoint for the log {} (the report needs the run's variables and schedule); pass --config CONF if the run used another checkpoint path",
            paths.checkpoint.display(),
            paths.log.display()
        ))
        .into());
    }
    checkpoint::read(&paths.checkpoint)
}

/// Refuse `path` (the run's `what`) when it exists and is shorter than the `recorded` bytes a
/// checkpoint saw: it was cut.
pub fn not_cut(path: &Path, recorded: u64, what: &str) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() < recorded => Err(ReportError(format!(
            "{}: byte {}: the {what} ends before byte {recorded}, where the checkpoint recorded its end; it was cut short, changed or lost",
            path.display(),
            meta.len()
        ))
        .into()),
        _ => Ok(()),
    }
}

/// The state a checkpoint would hold for a run that wrote none (the classic tool's): variables
/// and schedule from the config, θ and the applied count from the log's last row. Game counts
/// are unknown and left at zero.
pub fn classic_checkpoint(config: &Config, vars: Vec<Variable>, log: &History) -> Checkpoint {
    let start: Vec<f64> = vars.iter().map(|v| v.start).collect();
    let applied = log.iterations.last().copied().unwrap_or(0);
    let theta = if log.rows() > 0 {
        log.values
            .iter()
            .map(|column| column[column.len() - 1])
            .collect()
    } else {
        start.clone()
    };
    let schedule = &config.schedule;
    Checkpoint {
        path: config.checkpoint.clone(),
        state: RunState {
            applied,
            finished: applied >= schedule.iterations,
            theta,
            next_fresh: applied + 1,
            ..RunState::fresh(0, start, schedule, config.pairs_per_iteration)
        },
        vars,
        parts: Default::default(),
    }
}

/// The θ log's content: one column per variable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    pub names: Vec<String>,
    /// The `iteration` column (applied-update count) of each row.
    pub iterations: Vec<u64>,
    /// `values[i][row]`: variable i's θ after that row's update.
    pub values: Vec<Vec<f64>>,
    /// The log's form (`None`: a history not read from a file).
    pub format: Option<Format>,
    /// Rows in the log (more than [`History::rows`] when only some were read).
    pub log_rows: usize,
}

impl History {
    pub fn rows(&self) -> usize {
        self.iterations.len()
    }

    /// Read a θ log of any form (see [`LogReader`]), every row when there are at most
    /// [`HISTORY_VALUES`] values in all, else the rows where θ is stored whole (a format-2
    /// log's snapshots) and the last, thinned evenly to that many values.
    pub fn read(path: &Path) -> Result<History> {
        History::read_named(path, None)
    }

    /// [`History::read`]; `names` (in variables-file order) name the columns of a classic log,
    /// which has no header row.
    pub fn read_named(path: &Path, names: Option<&[String]>) -> Result<History> {
        let reader = LogReader::open(path, names)?;
        History::sampled(&reader, HISTORY_VALUES)
    }

    pub fn parse(bytes: &[u8], path: &Path) -> Result<History> {
        History::sampled(
            &LogReader::parse(bytes.to_vec(), path, None)?,
            HISTORY_VALUES,
        )
    }

    /// The rows of `reader`, at most `cap` values in all (see [`History::read`]).
    pub fn sampled(reader: &LogReader, cap: usize) -> Result<History> {
        let n = reader.names.len().max(1);
        let total = reader.rows();
        let wanted: Vec<usize> = if total.saturating_mul(n) <= cap {
            (0..total).collect()
        } else {
            let mut rows = reader.cheap_rows();
            if let Some(last) = total.checked_sub(1)
                && rows.last() != Some(&last)
            {
                rows.push(last);
            }
            thin(rows, (cap / n).max(2))
        };
        let mut history = History {
            values: vec![Vec::with_capacity(wanted.len()); reader.names.len()],
            names: reader.names.clone(),
            iterations: Vec::with_capacity(wanted.len()),
            format: Some(reader.format),
            log_rows: total,
        };
        reader.replay(&wanted, |_, label, theta| {
            history.iterations.push(label);
            for (column, &v) in history.values.iter_mut().zip(theta) {
                column.push(v);
            }
            Ok(())
        })?;
        Ok(history)
    }
}

/// Values a [`History`] holds at most (64 MB of θ): a report of 50,000 variables keeps 160 rows.
pub const HISTORY_VALUES: usize = 8_000_000;

/// At most `most` of `rows` (ascending), evenly spread, the first and the last kept.
fn thin(rows: Vec<usize>, most: usize) -> Vec<usize> {
    if rows.len() <= most {
        return rows;
    }
    let last = rows.len() - 1;
    let mut out: Vec<usize> = (0..most)
        .map(|j| rows[j * last / (most - 1).max(1)])
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quoted_names_and_ignores_a_half_row() {
        let text = b"iteration,a,\"Pawn \"\"x\"\"\",b c\n1,1,-2.5,3\n2,1.5,-2,3\n3,2,";
        let h = History::parse(text, Path::new("t.log")).unwrap();
        assert_eq!(h.names, ["a", "Pawn \"x\"", "b c"]);
        assert_eq!(h.iterations, [1, 2]);
        assert_eq!(h.values[1], [-2.5, -2.0]);
        let err = History::parse(b"name,a\n", Path::new("t.var")).unwrap_err();
        assert!(err.to_string().contains("not a θ log"), "{err}");
    }

    #[test]
    fn locates_the_other_file() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("x.log");
        let ck = dir.path().join("x.checkpoint.var");
        std::fs::write(&log, "iteration,a\n").unwrap();
        std::fs::write(&ck, "# c\n#: version = 1\na,1,0,2,1,0,0\n").unwrap();
        let want = RunPaths {
            log: log.clone(),
            checkpoint: ck.clone(),
            config: None,
        };
        assert_eq!(locate(Some(&log), None).unwrap(), want);
        assert_eq!(locate(Some(&ck), None).unwrap(), want);
        assert!(locate(None, None).is_err());
        assert!(locate(Some(&dir.path().join("nope.log")), None).is_err());
    }
}
