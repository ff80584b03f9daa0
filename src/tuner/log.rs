//! The CSV θ log (format 1, and the classic tool's; [`super::replay::Format`]): θ whole on every
//! row, one row per applied update, `iteration,<θ of each variable>`, after a header naming the
//! columns; what a run of format 1 resumed keeps writing (a new run writes the replay log,
//! [`super::replay`]). Append-only. It is flushed whenever 50 ms have passed since the last
//! flush, so a real run (whose pairs take far longer) flushes every row, and a crash of a fast
//! simulation loses at most 50 ms of rows, which a resume recomputes anyway. A caller that
//! writes millions of rows a second appends with [`ThetaLog::append_row`] and looks at the
//! clock itself now and then ([`ThetaLog::flush_if_due`]).
//!
//! Such a caller can also have the rows formatted and written on a thread of their own
//! ([`ThetaLog::in_background`]): it then only copies each row's numbers into a block, and the
//! writer turns full blocks into the same text, in the same order, on the other core. A flush
//! is a barrier: it returns once the writer has written every row handed to it, with the log's
//! length, so a checkpoint never records a row that is not in the file. A write error stops
//! the writer; the next append or flush returns it, with the file's name.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use crate::error::UserError;
use crate::vars::{FIXED_ROOM, push_value, write_fixed};

/// Decimal places written for θ: enough for plots and reports, not 15 digits of noise.
pub const LOG_DECIMALS: usize = 4;
const FLUSH_EVERY: Duration = Duration::from_millis(50);
/// Buffered rows are written to the file once they reach this many bytes.
const BUFFER: usize = 1 << 16;
/// Rows in a block handed to the writer thread, and the blocks there are: the caller waits
/// for a free block only when the writer is this many rows behind.
const BLOCK_ROWS: usize = 2048;
const BLOCKS: usize = 4;

/// An open θ log.
pub struct ThetaLog {
    path: PathBuf,
    mode: Mode,
    last_flush: Instant,
}

enum Mode {
    /// Rows are formatted and written on the caller's thread.
    Here(Rows),
    /// A writer thread formats and writes them.
    Away(Away),
    /// The writer thread stopped on an error: its text, returned by every later call.
    Failed(String),
}

/// The log's text and file: formats rows into its buffer and writes it out.
struct Rows {
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
}

/// The caller's end of a writer thread.
struct Away {
    /// Rows being collected, handed over when full or at a flush.
    block: Block,
    jobs: Option<Sender<Job>>,
    /// Blocks the writer is done with.
    free: Receiver<Block>,
    /// The log's length after each [`Job::Flush`].
    flushed: Receiver<u64>,
    thread: Option<JoinHandle<Result<()>>>,
}

/// Rows as numbers: `iterations[i]` and `theta[i·width..(i+1)·width]`.
#[derive(Default)]
struct Block {
    width: usize,
    iterations: Vec<u64>,
    theta: Vec<f64>,
}

enum Job {
    /// Format these rows (and give the block back).
    Rows(Block),
    /// Write the buffered rows to the file.
    Write,
    /// Write them and send back the log's length.
    Flush,
}

/// The header row of a log of variables `names`.
fn header_line(names: &[String]) -> Vec<u8> {
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
    header
}

/// Give a log the columns of variables `names` (a resume added or dropped rows): its header
/// and first `rows` rows are rewritten with each column found by name, and a column it did not
/// have filled with that variable's `fill` value (where a variable that joined was held).
/// Rows past `rows` are the checkpoint's to drop. The file is replaced atomically, and a log
/// that already has these columns comes out the same, so a resume that died between this and
/// its checkpoint can do it again. Gives the new length, for the checkpoint.
pub fn reshape(path: &Path, rows: u64, names: &[String], fill: &[f64]) -> Result<u64> {
    let text = std::fs::read(path)
        .with_context(|| format!("{}: cannot read log to add columns", path.display()))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(text.as_slice());
    let old: Vec<String> = reader
        .headers()
        .map_err(|e| UserError(format!("{}:1: damaged log header: {e}", path.display())))?
        .iter()
        .map(str::to_string)
        .collect();
    let columns: Vec<Option<usize>> = names
        .iter()
        .map(|n| old.iter().skip(1).position(|o| o == n).map(|i| i + 1))
        .collect();
    let mut out = header_line(names);
    let mut done = 0;
    for record in reader.records() {
        if done == rows {
            break;
        }
        let record = record.map_err(|e| {
            UserError(format!(
                "{}:{}: damaged log row: {e}",
                path.display(),
                done + 2
            ))
        })?;
        out.extend_from_slice(record.get(0).unwrap_or_default().as_bytes());
        for (column, &value) in columns.iter().zip(fill) {
            out.push(b',');
            match column.and_then(|c| record.get(c)) {
                Some(text) => out.extend_from_slice(text.as_bytes()),
                None => push_value(&mut out, value, LOG_DECIMALS),
            }
        }
        out.push(b'\n');
        done += 1;
    }
    if done < rows {
        return Err(UserError(format!(
            "{}: the log has {done} rows but the checkpoint recorded {rows}; it was changed or lost",
            path.display()
        ))
        .into());
    }
    crate::tuner::checkpoint::write_atomically(path, &out)?;
    Ok(out.len() as u64)
}

/// Open a log to append to after a resume: rows written after the checkpoint (`bytes` long)
/// belong to updates the checkpoint does not hold, so they are cut off first. Either format.
pub fn cut_back(path: &Path, bytes: u64) -> Result<File> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("{}: cannot open log to resume", path.display()))?;
    let len = file.metadata()?.len();
    if len < bytes {
        return Err(crate::error::UserError(format!(
            "{}: byte {len}: the log ends before byte {bytes}, where the checkpoint recorded its end; it was cut short, changed or lost",
            path.display()
        ))
        .into());
    }
    file.set_len(bytes)
        .with_context(|| format!("{}: cannot truncate log", path.display()))?;
    use std::io::Seek;
    file.seek(std::io::SeekFrom::End(0))?;
    Ok(file)
}

/// A new, empty log file at `path`, its folder made if missing; fails if the file exists (a
/// run never overwrites a log unasked). Both log formats start here.
pub fn create_new(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create folder", dir.display()))?;
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("{}: cannot create log", path.display()))
}

impl ThetaLog {
    /// Start a new log; fails if the file exists (a run never overwrites a log unasked).
    pub fn create(path: &Path, names: &[String]) -> Result<ThetaLog> {
        let file = create_new(path)?;
        let mut rows = Rows::new(path, file, 0);
        let header = header_line(names);
        rows.buffer.truncate(rows.filled);
        rows.buffer.extend_from_slice(&header);
        rows.end_row(header.len())?;
        rows.flush()?;
        Ok(ThetaLog::wrap(rows))
    }

    /// Reopen a log for a resumed run: rows written after the checkpoint (`bytes` long) belong
    /// to updates the checkpoint does not hold, so they are cut off before appending.
    pub fn resume(path: &Path, bytes: u64) -> Result<ThetaLog> {
        let file = cut_back(path, bytes)?;
        Ok(ThetaLog::wrap(Rows::new(path, file, bytes)))
    }

    fn wrap(rows: Rows) -> ThetaLog {
        ThetaLog {
            path: rows.path.clone(),
            mode: Mode::Here(rows),
            last_flush: Instant::now(),
        }
    }

    /// From now on, rows are formatted and written by a thread of their own (see the module's
    /// documentation); the text is the same. Nothing changes if they already are.
    pub fn in_background(&mut self) -> Result<()> {
        let Mode::Here(_) = self.mode else {
            return Ok(());
        };
        let Mode::Here(rows) = std::mem::replace(&mut self.mode, Mode::Failed(String::new()))
        else {
            unreachable!("matched above")
        };
        let (jobs, jobs_rx) = channel();
        let (free_tx, free) = channel();
        let (flushed_tx, flushed) = channel();
        for _ in 1..BLOCKS {
            let _ = free_tx.send(Block::default());
        }
        let spawned = std::thread::Builder::new()
            .name("theta-log".into())
            .spawn(move || write_rows(rows, jobs_rx, free_tx, flushed_tx))
            .with_context(|| format!("{}: cannot start the log's writer", self.path.display()));
        let thread = match spawned {
            Ok(thread) => thread,
            Err(e) => {
                self.mode = Mode::Failed(format!("{e:#}"));
                return Err(e);
            }
        };
        self.mode = Mode::Away(Away {
            block: Block::default(),
            jobs: Some(jobs),
            free,
            flushed,
            thread: Some(thread),
        });
        Ok(())
    }

    /// Append one row; flushes if the last flush was long enough ago.
    pub fn append(&mut self, iteration: u64, theta: &[f64]) -> Result<()> {
        self.append_row(iteration, theta)?;
        self.flush_if_due(Instant::now())
    }

    /// Append one row (to the buffer, or to the block for the writer), without looking at the
    /// clock.
    #[inline]
    pub fn append_row(&mut self, iteration: u64, theta: &[f64]) -> Result<()> {
        match &mut self.mode {
            Mode::Here(rows) => rows.append_row(iteration, theta),
            Mode::Away(away) => {
                let block = &mut away.block;
                if block.width != theta.len() || block.iterations.len() >= BLOCK_ROWS {
                    if !block.iterations.is_empty() {
                        self.hand_over()?;
                    }
                    let Mode::Away(away) = &mut self.mode else {
                        unreachable!("hand_over keeps the writer or fails")
                    };
                    away.block.width = theta.len();
                    away.block.push(iteration, theta);
                } else {
                    block.push(iteration, theta);
                }
                Ok(())
            }
            Mode::Failed(e) => Err(anyhow!("{e}")),
        }
    }

    /// Flush if 50 ms have passed between the last flush and `now`. With a writer thread the
    /// rows are handed over to be written, without waiting for it.
    pub fn flush_if_due(&mut self, now: Instant) -> Result<()> {
        if now.saturating_duration_since(self.last_flush) < FLUSH_EVERY {
            return Ok(());
        }
        if let Mode::Away(_) = self.mode {
            self.send(Job::Write)?;
            self.last_flush = Instant::now();
            return Ok(());
        }
        self.flush().map(|_| ())
    }

    /// Push buffered rows to the file; returns the log's length, for the checkpoint. With a
    /// writer thread, waits until it has written every row handed to it.
    pub fn flush(&mut self) -> Result<u64> {
        let bytes = match &mut self.mode {
            Mode::Here(rows) => rows.flush()?,
            Mode::Away(_) => {
                self.send(Job::Flush)?;
                let Mode::Away(away) = &mut self.mode else {
                    unreachable!("send keeps the writer or fails")
                };
                match away.flushed.recv() {
                    Ok(bytes) => bytes,
                    Err(_) => return Err(self.writer_failed()),
                }
            }
            Mode::Failed(e) => bail!("{e}"),
        };
        self.last_flush = Instant::now();
        Ok(bytes)
    }

    /// Hand the rows collected so far, then `job`, to the writer.
    fn send(&mut self, job: Job) -> Result<()> {
        if let Mode::Away(away) = &self.mode
            && !away.block.iterations.is_empty()
        {
            self.hand_over()?;
        }
        let Mode::Away(away) = &mut self.mode else {
            return Ok(());
        };
        let sent = away.jobs.as_ref().is_some_and(|j| j.send(job).is_ok());
        if sent {
            Ok(())
        } else {
            Err(self.writer_failed())
        }
    }

    /// Hand the current block to the writer and take a free one (waiting for the writer if it
    /// has none).
    #[cold]
    fn hand_over(&mut self) -> Result<()> {
        let Mode::Away(away) = &mut self.mode else {
            return Ok(());
        };
        let Ok(mut next) = away.free.recv() else {
            return Err(self.writer_failed());
        };
        next.width = away.block.width;
        let full = std::mem::replace(&mut away.block, next);
        let sent = away
            .jobs
            .as_ref()
            .is_some_and(|j| j.send(Job::Rows(full)).is_ok());
        if sent {
            Ok(())
        } else {
            Err(self.writer_failed())
        }
    }

    /// The writer thread stopped: its error, which later calls repeat.
    #[cold]
    fn writer_failed(&mut self) -> anyhow::Error {
        let mode = std::mem::replace(&mut self.mode, Mode::Failed(String::new()));
        let error = match mode {
            Mode::Away(mut away) => {
                away.jobs = None;
                match away.thread.take().map(JoinHandle::join) {
                    Some(Ok(Err(e))) => e,
                    _ => anyhow!("{}: the log's writer stopped", self.path.display()),
                }
            }
            Mode::Failed(e) => anyhow!("{e}"),
            Mode::Here(_) => anyhow!("{}: the log's writer stopped", self.path.display()),
        };
        self.mode = Mode::Failed(format!("{error:#}"));
        error
    }
}

impl Block {
    #[inline]
    fn push(&mut self, iteration: u64, theta: &[f64]) {
        self.iterations.push(iteration);
        self.theta.extend_from_slice(theta);
    }
}

/// The writer thread: formats the blocks of rows it is handed, in order, and writes them.
fn write_rows(
    mut rows: Rows,
    jobs: Receiver<Job>,
    free: Sender<Block>,
    flushed: Sender<u64>,
) -> Result<()> {
    for job in jobs {
        match job {
            Job::Rows(mut block) => {
                let width = block.width;
                for (i, &k) in block.iterations.iter().enumerate() {
                    rows.append_row(k, &block.theta[i * width..(i + 1) * width])?;
                }
                block.iterations.clear();
                block.theta.clear();
                // The caller may be gone (dropped after its last flush): nothing to give back.
                let _ = free.send(block);
            }
            Job::Write => rows.write_buffer()?,
            Job::Flush => {
                let bytes = rows.flush()?;
                let _ = flushed.send(bytes);
            }
        }
    }
    rows.write_buffer()
}

impl Rows {
    fn new(path: &Path, file: File, bytes: u64) -> Rows {
        Rows {
            path: path.to_path_buf(),
            file,
            bytes,
            buffer: Vec::with_capacity(BUFFER + 1024),
            filled: 0,
            last_theta: Vec::new(),
            last_values: None,
        }
    }

    /// Append one row to the buffer.
    fn append_row(&mut self, iteration: u64, theta: &[f64]) -> Result<()> {
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

    /// Write the buffered rows; the log's length.
    fn flush(&mut self) -> Result<u64> {
        self.write_buffer()?;
        Ok(self.bytes)
    }
}

/// Rows of θ as format 1 writes them (4 places at most), each after a number of its own
/// (`n,iteration,θ1,…`), formatted in place into a buffer kept between rows: `spsa report
/// --format history` streams a log's history through one.
#[derive(Default)]
pub struct RowText {
    buffer: Vec<u8>,
    filled: usize,
}

impl RowText {
    /// Append the line `n,iteration,θ1,…`.
    pub fn push(&mut self, n: u64, iteration: u64, theta: &[f64]) {
        let start = self.filled;
        let end = start + (2 + theta.len()) * (1 + FIXED_ROOM);
        if self.buffer.len() < end {
            self.buffer.resize(end, 0);
        }
        let written = write_fixed(n as f64, 0, room(&mut self.buffer, start)).and_then(|lead| {
            self.buffer[start + lead] = b',';
            let at = start + lead + 1;
            fixed_row(&mut self.buffer[at..end], iteration, theta).map(|(len, _)| lead + 1 + len)
        });
        self.filled += match written {
            Some(len) => len,
            None => {
                let mut row = Vec::new();
                push_value(&mut row, n as f64, 0);
                row.push(b',');
                row.extend_from_slice(&plain_row(iteration, theta));
                self.buffer.truncate(start);
                self.buffer.extend_from_slice(&row);
                row.len()
            }
        };
    }

    /// The lines appended since the last [`RowText::clear`].
    pub fn text(&self) -> &[u8] {
        &self.buffer[..self.filled]
    }

    pub fn clear(&mut self) {
        self.filled = 0;
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

impl Drop for Rows {
    /// Rows still buffered go to the file, as a `BufWriter` would write them.
    fn drop(&mut self) {
        let _ = self.write_buffer();
    }
}

impl Drop for ThetaLog {
    /// With a writer thread: the rows collected so far go to it, and it finishes writing
    /// before the log is gone (errors are dropped, as a `BufWriter`'s are).
    fn drop(&mut self) {
        if let Mode::Away(away) = &mut self.mode {
            let block = std::mem::take(&mut away.block);
            if let Some(jobs) = away.jobs.take() {
                if !block.iterations.is_empty() {
                    let _ = jobs.send(Job::Rows(block));
                }
                drop(jobs);
            }
            if let Some(thread) = away.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

/// A classic log line: an iteration number, then at least one number, no header words.
pub fn is_classic_row(line: &[u8]) -> bool {
    let Ok(line) = std::str::from_utf8(line) else {
        return false;
    };
    let mut fields = line.split(',');
    fields
        .next()
        .is_some_and(|f| f.trim().parse::<u64>().is_ok())
        && line.contains(',')
        && fields.all(|f| f.trim().parse::<f64>().is_ok())
}

/// Parse `iteration,θ1,…,θn` into `row`; `None` if the line is not exactly that.
pub fn parse_row(line: &[u8], row: &mut [f64]) -> Option<u64> {
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

    /// Each test runs with the rows written here and by a writer thread.
    fn both(mut test: impl FnMut(&dyn Fn(&mut ThetaLog))) {
        test(&|_| {});
        test(&|log| log.in_background().unwrap());
    }

    #[test]
    fn writes_header_rows_and_resumes_by_truncating() {
        both(|mode| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("sub/x.log");
            let mut log = ThetaLog::create(&path, &["a".into(), "Pawn \"x\"".into()]).unwrap();
            mode(&mut log);
            log.append(1, &[1.0, -2.123456]).unwrap();
            let at = log.flush().unwrap();
            log.append(2, &[3.0, 4.0]).unwrap();
            log.flush().unwrap();
            drop(log);
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(text, "iteration,a,\"Pawn \"\"x\"\"\"\n1,1,-2.1235\n2,3,4\n");
            assert!(ThetaLog::create(&path, &[]).is_err(), "never overwrites");
            let mut log = ThetaLog::resume(&path, at).unwrap();
            mode(&mut log);
            log.append(2, &[5.0, 6.0]).unwrap();
            log.flush().unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.ends_with("1,1,-2.1235\n2,5,6\n"), "{text}");
            assert!(ThetaLog::resume(&path, 10_000).is_err());
        });
    }

    /// New columns are filled where the variable was held, rows past the checkpoint go,
    /// and doing it again (a resume that died before its checkpoint) changes nothing.
    #[test]
    fn reshape_adds_columns_by_name_keeps_the_checkpoints_rows_and_can_be_repeated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let mut log = ThetaLog::create(&path, &["a".into(), "Pawn \"x\"".into()]).unwrap();
        log.append(1, &[1.0, -2.123456]).unwrap();
        log.append(2, &[3.0, 4.0]).unwrap();
        log.append(3, &[5.0, 6.0]).unwrap();
        log.flush().unwrap();
        drop(log);
        let names = ["a".into(), "Pawn \"x\"".into(), "new".into()];
        let len = reshape(&path, 2, &names, &[0.0, 0.0, 7.25]).unwrap();
        let want = "iteration,a,\"Pawn \"\"x\"\"\",new\n1,1,-2.1235,7.25\n2,3,4,7.25\n";
        assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
        assert_eq!(len, want.len() as u64);
        assert_eq!(reshape(&path, 2, &names, &[0.0, 0.0, 9.0]).unwrap(), len);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            want,
            "the same again"
        );
        let mut log = ThetaLog::resume(&path, len).unwrap();
        log.append(3, &[5.0, 6.0, 8.0]).unwrap();
        log.flush().unwrap();
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .ends_with("2,3,4,7.25\n3,5,6,8\n")
        );
        let e = reshape(&path, 9, &names, &[0.0; 3]).unwrap_err();
        assert!(
            format!("{e:#}").contains("has 3 rows but the checkpoint recorded 9"),
            "{e:#}"
        );
    }

    #[test]
    fn a_row_with_the_same_values_copies_their_text_also_across_buffers() {
        both(|mode| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.log");
            let mut log = ThetaLog::create(&path, &["a".into(), "b".into()]).unwrap();
            mode(&mut log);
            let mut want = String::from("iteration,a,b\n");
            let mut theta = [12.5, -3.25];
            // Enough rows to fill the buffer (and the writer's blocks) a few times: each value
            // repeats for 3 rows, the last of them written in 2 forms (after 9 999 the integer
            // part gets longer).
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
                    row.push_str(&crate::vars::format_value(t, LOG_DECIMALS));
                }
                want.push_str(&row);
                want.push('\n');
                if k == 10_007 {
                    // A flush in the middle returns the length written so far, and the file
                    // holds exactly that: every row handed over is written.
                    let at = log.flush().unwrap();
                    assert_eq!(at, want.len() as u64);
                    assert!(std::fs::read_to_string(&path).unwrap() == want);
                }
            }
            let at = log.flush().unwrap();
            drop(log);
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text == want, "rows differ");
            assert_eq!(at, want.len() as u64);
        });
    }

    #[test]
    fn rows_with_values_past_the_fixed_form_are_written_in_full() {
        both(|mode| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.log");
            let mut log = ThetaLog::create(&path, &["a".into(), "b".into()]).unwrap();
            mode(&mut log);
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
        });
    }

    /// Rows not flushed when the log is dropped still reach the file, also from the writer.
    #[test]
    fn dropping_the_log_writes_what_is_left() {
        both(|mode| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.log");
            let mut log = ThetaLog::create(&path, &["a".into()]).unwrap();
            mode(&mut log);
            let mut want = String::from("iteration,a\n");
            for k in 1..=5000u64 {
                log.append_row(k, &[k as f64 / 8.0]).unwrap();
                want.push_str(&format!(
                    "{k},{}\n",
                    crate::vars::format_value(k as f64 / 8.0, LOG_DECIMALS)
                ));
            }
            drop(log);
            assert!(std::fs::read_to_string(&path).unwrap() == want);
        });
    }

    /// A write that fails (the disk is full) is reported with the file's name, whether the
    /// rows are written here or by the writer thread, and again by every later call.
    #[test]
    fn a_failing_write_is_reported_with_the_files_name() {
        both(|mode| {
            let full = Path::new("/dev/full");
            let file = OpenOptions::new().write(true).open(full).unwrap();
            let mut log = ThetaLog::wrap(Rows::new(full, file, 0));
            mode(&mut log);
            let mut failed = None;
            for k in 1..=20_000u64 {
                if let Err(e) = log.append_row(k, &[1.5, -2.25, k as f64]) {
                    failed = Some(e);
                    break;
                }
            }
            let e = match failed {
                Some(e) => e,
                None => log.flush().unwrap_err(),
            };
            let text = format!("{e:#}");
            assert!(
                text.starts_with("/dev/full: cannot write log: ") && text.contains("No space"),
                "{text}"
            );
            if let Mode::Failed(_) = log.mode {
                // The writer thread is gone: a later flush cannot claim rows were written.
                let again = format!("{:#}", log.flush().unwrap_err());
                assert_eq!(again, text);
                let again = log.append_row(1, &[0.0, 0.0, 0.0]).unwrap_err();
                assert_eq!(format!("{again:#}"), text);
            } else {
                assert!(
                    matches!(log.mode, Mode::Here(_)),
                    "only a writer thread fails"
                );
            }
        });
    }
}
