//! The θ log: one CSV row per applied update, `iteration,<θ of each variable>`, after a header
//! naming the columns. Append-only. It is flushed whenever 50 ms have passed since the last
//! flush, so a real run (whose pairs take far longer) flushes every row, and a crash of a fast
//! simulation loses at most 50 ms of rows, which a resume recomputes anyway. A caller that
//! writes millions of rows a second appends with [`ThetaLog::append_row`] and looks at the
//! clock itself now and then ([`ThetaLog::flush_if_due`]).

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::config::vars::{put_byte, put_value};

/// Decimal places written for θ: enough for plots and reports, not 15 digits of noise.
pub const LOG_DECIMALS: usize = 4;
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// An open θ log.
pub struct ThetaLog {
    path: PathBuf,
    file: BufWriter<File>,
    /// Bytes written so far, flushed or not.
    bytes: u64,
    /// Scratch for one row: its length is room, not content.
    row: Vec<u8>,
    last_flush: Instant,
}

impl ThetaLog {
    /// Start a new log; fails if the file exists (a run never overwrites a log unasked).
    pub fn create(path: &Path, names: &[String]) -> Result<ThetaLog> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("{}: cannot create folder", dir.display()))?;
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .with_context(|| format!("{}: cannot create log", path.display()))?;
        let mut log = ThetaLog::wrap(path, file, 0);
        let mut header = b"iteration".to_vec();
        for name in names {
            header.push(b',');
            if name.contains('"') {
                header.push(b'"');
                header.extend_from_slice(name.replace('"', "\"\"").as_bytes());
                header.push(b'"');
            } else {
                header.extend_from_slice(name.as_bytes());
            }
        }
        header.push(b'\n');
        log.row = header;
        log.write_row(log.row.len())?;
        log.flush()?;
        Ok(log)
    }

    /// Reopen a log for a resumed run: rows written after the checkpoint (`bytes` long) belong
    /// to updates the checkpoint does not hold, so they are cut off before appending.
    pub fn resume(path: &Path, bytes: u64) -> Result<ThetaLog> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .with_context(|| format!("{}: cannot open log to resume", path.display()))?;
        let len = file.metadata()?.len();
        if len < bytes {
            bail!(
                "{}: the log is shorter ({len} bytes) than the checkpoint recorded ({bytes} bytes); it was changed or lost",
                path.display()
            );
        }
        file.set_len(bytes)
            .with_context(|| format!("{}: cannot truncate log", path.display()))?;
        let mut file = file;
        use std::io::Seek;
        file.seek(std::io::SeekFrom::End(0))?;
        Ok(ThetaLog::wrap(path, file, bytes))
    }

    fn wrap(path: &Path, file: File, bytes: u64) -> ThetaLog {
        ThetaLog {
            path: path.to_path_buf(),
            file: BufWriter::with_capacity(1 << 16, file),
            bytes,
            row: Vec::with_capacity(256),
            last_flush: Instant::now(),
        }
    }

    /// Append one row; flushes if the last flush was long enough ago.
    pub fn append(&mut self, iteration: u64, theta: &[f64]) -> Result<()> {
        self.append_row(iteration, theta)?;
        self.flush_if_due(Instant::now())
    }

    /// Append one row to the buffer, without looking at the clock.
    pub fn append_row(&mut self, iteration: u64, theta: &[f64]) -> Result<()> {
        let row = &mut self.row;
        let mut at = put_value(row, 0, iteration as f64, 0);
        for &t in theta {
            at = put_byte(row, at, b',');
            at = put_value(row, at, t, LOG_DECIMALS);
        }
        at = put_byte(row, at, b'\n');
        self.write_row(at)
    }

    /// Flush if 50 ms have passed between the last flush and `now`.
    pub fn flush_if_due(&mut self, now: Instant) -> Result<()> {
        if now.saturating_duration_since(self.last_flush) >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    /// Write the row's first `len` bytes (a whole line).
    fn write_row(&mut self, len: usize) -> Result<()> {
        self.file
            .write_all(&self.row[..len])
            .with_context(|| format!("{}: cannot write log", self.path.display()))?;
        self.bytes += len as u64;
        Ok(())
    }

    /// Push buffered rows to the file; returns the log's length, for the checkpoint.
    pub fn flush(&mut self) -> Result<u64> {
        self.file
            .flush()
            .with_context(|| format!("{}: cannot write log", self.path.display()))?;
        self.last_flush = Instant::now();
        Ok(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_header_rows_and_resumes_by_truncating() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/x.log");
        let mut log = ThetaLog::create(&path, &["a".into(), "Pawn \"x\"".into()]).unwrap();
        log.append(1, &[1.0, -2.123456]).unwrap();
        let at = log.flush().unwrap();
        log.append(2, &[3.0, 4.0]).unwrap();
        log.flush().unwrap();
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "iteration,a,\"Pawn \"\"x\"\"\"\n1,1,-2.1235\n2,3,4\n");
        assert!(ThetaLog::create(&path, &[]).is_err(), "never overwrites");
        let mut log = ThetaLog::resume(&path, at).unwrap();
        log.append(2, &[5.0, 6.0]).unwrap();
        log.flush().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("1,1,-2.1235\n2,5,6\n"), "{text}");
        assert!(ThetaLog::resume(&path, 10_000).is_err());
    }
}
