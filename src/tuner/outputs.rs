//! Append-only output files (PGN, game logs) written one whole record per write. The tuner
//! checkpoints their lengths together with θ, and a resume cuts each back to its checkpointed
//! length, so a record of an iteration the checkpoint does not hold never survives a kill.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::source::Record;

/// The open output files of a run or a match, opened on first write.
#[derive(Default)]
pub struct Outputs {
    files: BTreeMap<PathBuf, (Option<File>, u64)>,
}

impl Outputs {
    /// Track `paths` from their current lengths (0 when they do not exist yet).
    pub fn new(paths: &[PathBuf]) -> Outputs {
        let mut out = Outputs::default();
        for p in paths {
            let len = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            out.files.insert(p.clone(), (None, len));
        }
        out
    }

    /// Cut each tracked file back to the length a checkpoint recorded (bytes written after it
    /// belong to iterations that will be played again), then track it from there.
    pub fn resume(lengths: &BTreeMap<String, u64>) -> Result<Outputs> {
        let mut out = Outputs::default();
        for (name, &len) in lengths {
            let path = PathBuf::from(name);
            let found = std::fs::metadata(&path).map_or(len, |m| m.len());
            if found < len {
                return Err(crate::error::UserError(format!(
                    "{}: byte {found}: the file ends before byte {len}, where the checkpoint recorded its end; it was cut short, changed or lost",
                    path.display()
                ))
                .into());
            }
            if found > len {
                let f = OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .with_context(|| format!("{}: cannot open to resume", path.display()))?;
                f.set_len(len).with_context(|| {
                    format!("{}: cannot cut back to {len} bytes", path.display())
                })?;
            }
            out.files.insert(path, (None, len));
        }
        Ok(out)
    }

    /// Append one record in a single write.
    pub fn append(&mut self, record: &Record) -> Result<()> {
        let entry = self
            .files
            .entry(record.path.clone())
            .or_insert_with(|| (None, current_len(&record.path)));
        if entry.0.is_none() {
            entry.0 = Some(open_append(&record.path)?);
        }
        if let Some(file) = entry.0.as_mut() {
            file.write_all(record.text.as_bytes())
                .with_context(|| format!("{}: cannot write", record.path.display()))?;
        }
        entry.1 += record.text.len() as u64;
        Ok(())
    }

    /// Every tracked file's length, for a checkpoint.
    pub fn lengths(&self) -> BTreeMap<String, u64> {
        self.files
            .iter()
            .map(|(p, (_, len))| (p.to_string_lossy().into_owned(), *len))
            .collect()
    }

    /// Make what was written durable (before a checkpoint records it).
    pub fn sync(&mut self) -> Result<()> {
        for (path, (file, _)) in &mut self.files {
            if let Some(f) = file {
                f.sync_data()
                    .with_context(|| format!("{}: cannot sync", path.display()))?;
            }
        }
        Ok(())
    }
}

fn current_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Open for appending, creating the file and its folder.
pub fn open_append(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create folder", dir.display()))?;
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("{}: cannot open for writing", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_cuts_records_written_after_the_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let pgn = dir.path().join("g.pgn");
        std::fs::write(&pgn, "old\n").unwrap();
        let mut out = Outputs::new(std::slice::from_ref(&pgn));
        let rec = |t: &str| Record {
            path: pgn.clone(),
            text: t.into(),
        };
        out.append(&rec("game 1\n")).unwrap();
        let saved = out.lengths();
        out.append(&rec("game 2 (not checkpointed)\n")).unwrap();
        drop(out);
        let mut out = Outputs::resume(&saved).unwrap();
        assert_eq!(std::fs::read_to_string(&pgn).unwrap(), "old\ngame 1\n");
        out.append(&rec("game 2\n")).unwrap();
        assert_eq!(
            std::fs::read_to_string(&pgn).unwrap(),
            "old\ngame 1\ngame 2\n"
        );
        assert_eq!(out.lengths()[&pgn.to_string_lossy().into_owned()], 18);
    }
}
