//! Reading a run back: find its θ log and checkpoint from whichever the user names, and load the
//! log's rows. A log that is still being written may end in half a row; that row is ignored.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::config::{Config, default_checkpoint};
use crate::report::ReportError;
use crate::tuner::checkpoint::{self, Checkpoint};

/// The files of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPaths {
    pub log: PathBuf,
    pub checkpoint: PathBuf,
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
            log: config.log,
            checkpoint: config.checkpoint,
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
        });
    }
    Ok(RunPaths {
        log: path.to_path_buf(),
        checkpoint: default_checkpoint(path),
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
        if line.starts_with("iteration,") {
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

/// The θ log's content: one column per variable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    pub names: Vec<String>,
    /// The `iteration` column (applied-update count) of each row.
    pub iterations: Vec<u64>,
    /// `values[i][row]`: variable i's θ after that row's update.
    pub values: Vec<Vec<f64>>,
}

impl History {
    pub fn rows(&self) -> usize {
        self.iterations.len()
    }

    /// Read a θ log. Rows that do not parse (a half-written last row) end the reading.
    pub fn read(path: &Path) -> Result<History> {
        let bytes = std::fs::read(path)
            .map_err(|e| ReportError(format!("{}: cannot read θ log: {e}", path.display())))?;
        History::parse(&bytes, path)
    }

    pub fn parse(bytes: &[u8], path: &Path) -> Result<History> {
        let bytes = crate::textfile::strip_bom(bytes);
        let header_end = bytes
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(bytes.len());
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(&bytes[..header_end]);
        let header = reader
            .records()
            .next()
            .transpose()
            .with_context(|| format!("{}: bad θ log header", path.display()))?
            .unwrap_or_default();
        if header.get(0) != Some("iteration") {
            return Err(ReportError(format!(
                "{}: not a θ log (the first line should start with `iteration,`)",
                path.display()
            ))
            .into());
        }
        let names: Vec<String> = header.iter().skip(1).map(str::to_string).collect();
        let n = names.len();
        let mut history = History {
            values: vec![Vec::new(); n],
            names,
            iterations: Vec::new(),
        };
        let body = bytes.get(header_end + 1..).unwrap_or_default();
        let mut row = vec![0.0f64; n];
        // Only complete lines (ending in '\n') count: a live log may end mid-row.
        let mut rest = body;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let line = &rest[..end];
            rest = &rest[end + 1..];
            let Some(iteration) = parse_row(line, &mut row) else {
                break;
            };
            history.iterations.push(iteration);
            for (column, &v) in history.values.iter_mut().zip(&row) {
                column.push(v);
            }
        }
        Ok(history)
    }
}

/// Parse `iteration,θ1,…,θn` into `row`; `None` if the line is not exactly that.
fn parse_row(line: &[u8], row: &mut [f64]) -> Option<u64> {
    let line = std::str::from_utf8(line).ok()?;
    let mut fields = line.split(',');
    let iteration = fields.next()?.trim().parse::<u64>().ok()?;
    for slot in row.iter_mut() {
        *slot = fields.next()?.trim().parse::<f64>().ok()?;
    }
    if fields.next().is_some() {
        return None;
    }
    Some(iteration)
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
        };
        assert_eq!(locate(Some(&log), None).unwrap(), want);
        assert_eq!(locate(Some(&ck), None).unwrap(), want);
        assert!(locate(None, None).is_err());
        assert!(locate(Some(&dir.path().join("nope.log")), None).is_err());
    }
}
