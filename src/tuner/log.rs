//! The θ log: one CSV row per applied update, `iteration,<θ of each variable>`, after a header
//! naming the columns. Append-only. It is flushed whenever 50 ms have passed since the last
//! flush, so a real run (whose pairs take far longer) flushes every row, and a crash of a fast
//! simulation loses at most 50 ms of rows, which a resume recomputes anyway. A caller that
//! writes millions of rows a second appends with [`ThetaLog::append_row`] and looks at the
//! clock itself now and then ([`ThetaLog::flush_if_due`]).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::config::vars::{FIXED_ROOM, push_value, write_fixed};

/// Decimal places written for θ: enough for plots and reports, not 15 digits of noise.
pub const LOG_DECIMALS: usize = 4;
const FLUSH_EVERY: Duration = Duration::from_millis(50);
/// Buffered rows are written to the file once they reach this many bytes.
const BUFFER: usize = 1 << 16;

/// An open θ log.
pub struct ThetaLog {
    path: PathBuf,
    file: File,
    /// Bytes written so far, flushed or not.
    bytes: u64,
    /// Rows not yet written to the file are `buffer[..filled]`; the rest is room, where the
    /// next row is formatted in place (no copy from a scratch row).
    buffer: Vec<u8>,
    filled: usize,
    /// The last row's θ and, while it is still in the buffer, where the text of its values
    /// (from the first comma to the newline) is: a row with the same θ (a drawn pair leaves θ
    /// where it was) copies that text instead of formatting the values again.
    last_theta: Vec<f64>,
    last_values: Option<Range<usize>>,
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
        log.buffer.truncate(log.filled);
        log.buffer.extend_from_slice(&header);
        log.end_row(header.len())?;
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
            file,
            bytes,
            buffer: Vec::with_capacity(BUFFER + 1024),
            filled: 0,
            last_theta: Vec::new(),
            last_values: None,
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
        let start = self.filled;
        let end = start + (1 + theta.len()) * (1 + FIXED_ROOM);
        if self.buffer.len() < end {
            self.buffer.resize(end, 0);
        }
        let unchanged = self.last_theta == theta;
        let written = match self.last_values.clone().filter(|_| unchanged) {
            Some(values) => repeated_row(&mut self.buffer, start, iteration, values),
            None => fixed_row(&mut self.buffer[start..end], iteration, theta),
        };
        let len = match written {
            Some((len, values_at)) => {
                self.last_values = Some(start + values_at..start + len);
                len
            }
            None => {
                let row = plain_row(iteration, theta);
                self.buffer.truncate(start);
                self.buffer.extend_from_slice(&row);
                self.last_values = None;
                row.len()
            }
        };
        if !unchanged {
            self.last_theta.clear();
            self.last_theta.extend_from_slice(theta);
        }
        self.end_row(len)
    }

    /// Flush if 50 ms have passed between the last flush and `now`.
    pub fn flush_if_due(&mut self, now: Instant) -> Result<()> {
        if now.saturating_duration_since(self.last_flush) >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    /// The row of `len` bytes after the buffered ones is complete; the buffer goes to the
    /// file when full.
    fn end_row(&mut self, len: usize) -> Result<()> {
        self.filled += len;
        self.bytes += len as u64;
        if self.filled >= BUFFER {
            self.write_buffer()?;
        }
        Ok(())
    }

    /// Write the buffered rows (whole lines) to the file.
    fn write_buffer(&mut self) -> Result<()> {
        let filled = std::mem::take(&mut self.filled);
        self.last_values = None;
        self.file
            .write_all(&self.buffer[..filled])
            .with_context(|| format!("{}: cannot write log", self.path.display()))
    }

    /// Push buffered rows to the file; returns the log's length, for the checkpoint.
    pub fn flush(&mut self) -> Result<u64> {
        self.write_buffer()?;
        self.last_flush = Instant::now();
        Ok(self.bytes)
    }
}

/// A row written in place into `out` (room for 1 + θ's length values and their separators):
/// its length and where its values start, or `None` if a value needs the plain form
/// ([`plain_row`]).
#[inline]
fn fixed_row(out: &mut [u8], iteration: u64, theta: &[f64]) -> Option<(usize, usize)> {
    let values_at = write_fixed(iteration as f64, 0, room(out, 0))?;
    let mut at = values_at;
    for &t in theta {
        out[at] = b',';
        at += 1 + write_fixed(t, LOG_DECIMALS, room(out, at + 1))?;
    }
    out[at] = b'\n';
    Some((at + 1, values_at))
}

/// A row at `buffer[start..]` whose values are the text at `values` (an earlier row's, before
/// `start`): as [`fixed_row`] returns.
#[inline]
fn repeated_row(
    buffer: &mut [u8],
    start: usize,
    iteration: u64,
    values: Range<usize>,
) -> Option<(usize, usize)> {
    let values_at = write_fixed(iteration as f64, 0, room(buffer, start))?;
    let len = values_at + values.len();
    buffer.copy_within(values, start + values_at);
    Some((len, values_at))
}

/// The `FIXED_ROOM` bytes of `out` from `at`.
#[inline]
fn room(out: &mut [u8], at: usize) -> &mut [u8; FIXED_ROOM] {
    (&mut out[at..at + FIXED_ROOM])
        .try_into()
        .expect("FIXED_ROOM bytes")
}

/// The same row for any values (one too large for the fixed form, or not finite), as the
/// variables file's formatter writes them.
#[cold]
fn plain_row(iteration: u64, theta: &[f64]) -> Vec<u8> {
    let mut row = Vec::new();
    push_value(&mut row, iteration as f64, 0);
    for &t in theta {
        row.push(b',');
        push_value(&mut row, t, LOG_DECIMALS);
    }
    row.push(b'\n');
    row
}

impl Drop for ThetaLog {
    /// Rows still buffered go to the file, as a `BufWriter` would write them.
    fn drop(&mut self) {
        let _ = self.write_buffer();
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

    #[test]
    fn a_row_with_the_same_values_copies_their_text_also_across_buffers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let mut log = ThetaLog::create(&path, &["a".into(), "b".into()]).unwrap();
        let mut want = String::from("iteration,a,b\n");
        let mut theta = [12.5, -3.25];
        // Enough rows to fill the buffer a few times: each value repeats for 3 rows, the last
        // of them written in 2 forms (after 9 999 the integer part gets longer).
        for k in 1..30_000u64 {
            if k % 3 == 0 {
                theta = [theta[0] + 0.0625, theta[1] - 1.0];
            }
            if k == 20_000 {
                theta[0] = 1e300;
            }
            log.append_row(k, &theta).unwrap();
            let mut row = format!("{k}");
            for t in theta {
                row.push(',');
                row.push_str(&crate::config::vars::format_value(t, LOG_DECIMALS));
            }
            want.push_str(&row);
            want.push('\n');
        }
        let at = log.flush().unwrap();
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text == want, "rows differ");
        assert_eq!(at, want.len() as u64);
    }

    #[test]
    fn rows_with_values_past_the_fixed_form_are_written_in_full() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let mut log = ThetaLog::create(&path, &["a".into(), "b".into()]).unwrap();
        log.append(1, &[1e300, 0.5]).unwrap();
        log.append(2, &[f64::NAN, -12345.00005]).unwrap();
        log.append(3, &[-0.25, 9999.9999]).unwrap();
        let at = log.flush().unwrap();
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        let huge = format!("1{}", "0".repeat(300));
        assert_eq!(
            text,
            format!("iteration,a,b\n1,{huge},0.5\n2,NaN,-12345.0001\n3,-0.25,9999.9999\n")
        );
        assert_eq!(at, text.len() as u64);
    }
}
