//! The replay log (the θ log's format 2, what a new run writes): per row only what that row
//! knows, θ itself now and then. (Format 1, θ whole on every row, is the CSV θ log, [`super::log`].)
//!
//! A run is a deterministic replay of its definition, its seed and its ordered results, so an
//! SPSA row holds the iteration k whose update was applied, the measured signal, and a 32-bit
//! checksum of θ's bits after it (25 bytes with its frame, whatever the number of variables).
//! θ is written whole only in snapshots: one at the start, one after every [`snapshot_every`]
//! rows (at labels that are multiples of it, so a resumed log is the uninterrupted one byte for byte; snapshots cost about 2 KB a row however wide θ is, and a replay from the nearest one
//! is at most that many updates), and one at every change of the variables (a reshape). The
//! optimizer itself (every constant, bound and part, bit for bit) and the run's seed are a
//! record of the log, so the log alone replays: [`LogReader`] finds the nearest snapshot, applies
//! the rows after it with [`crate::spsa::driver::step`] (the driver's own arithmetic) and checks
//! each row's checksum; a mismatch is an error naming the file and the row.
//!
//! Methods that cannot be replayed (the local search, the gradient methods, a shared run's
//! mirror) write rows with θ whole. Every reader of θ history (resume, `spsa report` and its
//! formats, `--plot`, the page, `spsa verify --iteration`) reads through [`LogReader`], which
//! also reads the two earlier forms: the CSV log with a header row (format 1, every run before
//! this one) and the classic tool's CSV without one (format 0).
//!
//! The file: the line [`MAGIC`], then records `[tag: u8][payload length: u32 LE][payload]`,
//! numbers little-endian:
//!
//! | tag | payload |
//! |---|---|
//! | `N` | the variables' names: count u32, then each as length u32 and UTF-8 bytes |
//! | `D` | the replay's definition: seed u64, then the optimizer ([`Spsa::encode`]) |
//! | `S` | a snapshot, not a row: row label u64, count u32, θ as f64 each, checksum u32 |
//! | `T` | a row with θ whole: label u64, count u32, θ as f64 each, checksum u32 |
//!
//! The checksum of `S` and `T` ([`theta_record_sum`]: θ's and the label's) came with issue
//! 55; records written before it end with θ, and read as they are.
//! | `R` | an SPSA row, label the previous row's + 1: k u64, signal f64, checksum u32 |

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::error::UserError;
use crate::spsa::Spsa;
use crate::spsa::driver::step;

/// The first line of a format-2 log.
pub const MAGIC: &[u8] = b"spsa theta log 2 (binary; read it with `spsa report`)\n";
const FLUSH_EVERY: Duration = Duration::from_millis(50);
const BUFFER: usize = 1 << 16;
const FRAME: usize = 5;

/// Rows between snapshots for θ of `width` variables: about 2 KB of snapshot a row (8 bytes a
/// variable every width/256 rows), and at least 64 rows.
pub fn snapshot_every(width: usize) -> u64 {
    (width as u64).div_ceil(256).max(64)
}

/// The checksum that ends an `S` or `T` record: θ's, and the label's bits.
fn theta_record_sum(label: u64, theta: &[f64]) -> u32 {
    let label = label.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    checksum(theta) ^ (label >> 32) as u32 ^ label as u32
}

/// A 32-bit checksum of θ's bits (every bit of every value counts, and the count).
pub fn checksum(theta: &[f64]) -> u32 {
    const M: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = [
        0x243F_6A88_85A3_08D3u64,
        0x1319_8A2E_0370_7344,
        0xA409_3822_299F_31D0,
        0x082E_FA98_EC4E_6C89,
    ];
    let chunks = theta.chunks_exact(4);
    let rest = chunks.remainder();
    let mix = |h: &mut u64, x: &f64| *h = (*h ^ x.to_bits()).wrapping_mul(M).rotate_left(29);
    for c in chunks {
        h.iter_mut().zip(c).for_each(|(h, x)| mix(h, x));
    }
    h.iter_mut().zip(rest).for_each(|(h, x)| mix(h, x));
    let mut x = h[0]
        ^ h[1].rotate_left(16)
        ^ h[2].rotate_left(32)
        ^ h[3].rotate_left(48)
        ^ theta.len() as u64;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 32) as u32 ^ x as u32
}

/// Which form a θ log is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The classic tool's CSV: no header row, the names from the variables file.
    Classic,
    /// CSV with a header row, every row θ whole (`spsa` before issue 45).
    Csv,
    /// Rows of results replayed between snapshots (this module).
    Replay,
}

impl Format {
    /// What `spsa report` says the log is.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Classic => "format 0 (the classic tool's CSV, no header row)",
            Format::Csv => "format 1 (CSV, θ whole on every row)",
            Format::Replay => "format 2 (results replayed between θ snapshots)",
        }
    }

    /// The form of a log whose first bytes are `head`.
    pub fn of(head: &[u8]) -> Format {
        let head = crate::textfile::strip_bom(head);
        if head.starts_with(MAGIC) {
            return Format::Replay;
        }
        let end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
        if crate::tuner::log::is_classic_row(&head[..end]) {
            Format::Classic
        } else {
            Format::Csv
        }
    }
}

/// The form of the log at `path` (format 2 for a file that does not exist yet).
pub fn format_of(path: &Path) -> Result<Format> {
    use std::io::Read;
    let mut head = Vec::new();
    match File::open(path) {
        Ok(f) => {
            f.take(4096)
                .read_to_end(&mut head)
                .with_context(|| format!("{}: cannot read θ log", path.display()))?;
            Ok(Format::of(&head))
        }
        Err(_) => Ok(Format::Replay),
    }
}

/// An open format-2 log being written.
pub struct ReplayLog {
    path: PathBuf,
    file: File,
    buffer: Vec<u8>,
    /// Bytes in the file and the buffer.
    bytes: u64,
    last_flush: Instant,
    /// The last row's label, and whether there was one (a snapshot of the start has label 0).
    label: u64,
    /// A definition is in the log: SPSA rows can be written as results.
    defined: bool,
    /// The definition in force (the `D` record's payload: the seed, then the optimizer), empty
    /// when none is.
    definition: Vec<u8>,
    /// A snapshot after every row whose label is a multiple of this.
    every: u64,
    /// The error of a write that failed.
    failed: Option<String>,
}

impl ReplayLog {
    /// Start a new log of variables `names`; fails if the file exists.
    pub fn create(path: &Path, names: &[String]) -> Result<ReplayLog> {
        let file = super::log::create_new(path)?;
        let mut log = ReplayLog::wrap(path, file, 0, names.len());
        log.buffer.extend_from_slice(MAGIC);
        log.bytes = MAGIC.len() as u64;
        log.names(names);
        log.flush()?;
        Ok(log)
    }

    /// Reopen a log for a resumed run, cut back to the checkpoint's `bytes`: what the reader
    /// finds there (the last row, the definition) is where writing goes on. Gives the log and
    /// what was read.
    pub fn resume(path: &Path, bytes: u64) -> Result<(ReplayLog, LogReader)> {
        let file = crate::tuner::log::cut_back(path, bytes)?;
        let reader = LogReader::open(path, None)?;
        if reader.format != Format::Replay {
            return Err(UserError(format!(
                "{}: not a format-2 θ log where the checkpoint recorded its end (byte {bytes})",
                path.display()
            ))
            .into());
        }
        let mut log = ReplayLog::wrap(path, file, bytes, reader.width());
        log.label = reader.last_label().unwrap_or(0);
        log.defined = reader.defined_at_end();
        if let Some((seed, spsa)) = reader.defs.last() {
            log.definition = definition_bytes(*seed, spsa);
        }
        Ok((log, reader))
    }

    fn wrap(path: &Path, file: File, bytes: u64, width: usize) -> ReplayLog {
        ReplayLog {
            path: path.to_path_buf(),
            file,
            buffer: Vec::with_capacity(BUFFER + 1024),
            bytes,
            last_flush: Instant::now(),
            label: 0,
            defined: false,
            definition: Vec::new(),
            every: snapshot_every(width),
            failed: None,
        }
    }

    fn record(&mut self, tag: u8, payload_len: usize, fill: impl FnOnce(&mut Vec<u8>)) {
        let start = self.buffer.len();
        self.buffer.push(tag);
        self.buffer
            .extend_from_slice(&(payload_len as u32).to_le_bytes());
        fill(&mut self.buffer);
        // Checked in every build (the dev profile has no debug assertions): a frame whose length
        // field disagrees with its payload would make the rest of the log unreadable.
        assert_eq!(self.buffer.len() - start, FRAME + payload_len);
        self.bytes += (FRAME + payload_len) as u64;
    }

    /// The variables' names (at the start, and when a reshape changes them).
    pub fn names(&mut self, names: &[String]) {
        let len = 4 + names.iter().map(|n| 4 + n.len()).sum::<usize>();
        self.record(b'N', len, |out| {
            out.extend_from_slice(&(names.len() as u32).to_le_bytes());
            for n in names {
                out.extend_from_slice(&(n.len() as u32).to_le_bytes());
                out.extend_from_slice(n.as_bytes());
            }
        });
        self.every = snapshot_every(names.len());
    }

    /// From here on, rows are results replayed by `spsa` with `seed`; θ after row `label` is
    /// `theta` (written as a snapshot).
    pub fn define(&mut self, seed: u64, spsa: &Spsa, label: u64, theta: &[f64]) -> Result<()> {
        let def = definition_bytes(seed, spsa);
        self.record(b'D', def.len(), |out| out.extend_from_slice(&def));
        self.definition = def;
        self.defined = true;
        self.label = label;
        self.snapshot(label, theta);
        self.write_if_full()
    }

    fn theta_record(&mut self, tag: u8, label: u64, theta: &[f64]) {
        self.record(tag, 16 + 8 * theta.len(), |out| {
            out.extend_from_slice(&label.to_le_bytes());
            out.extend_from_slice(&(theta.len() as u32).to_le_bytes());
            for x in theta {
                out.extend_from_slice(&x.to_le_bytes());
            }
            out.extend_from_slice(&theta_record_sum(label, theta).to_le_bytes());
        });
    }

    fn snapshot(&mut self, label: u64, theta: &[f64]) {
        self.theta_record(b'S', label, theta);
    }

    /// A definition is in the log (see [`ReplayLog::define`]).
    pub fn is_defined(&self) -> bool {
        self.defined
    }

    /// The definition in force is `seed` and `spsa`, bit for bit: results of a driver with
    /// them replay from here.
    pub fn is_defined_as(&self, seed: u64, spsa: &Spsa) -> bool {
        self.defined && self.definition == definition_bytes(seed, spsa)
    }

    /// A row with θ whole (a method that cannot be replayed).
    pub fn append_theta(&mut self, label: u64, theta: &[f64]) -> Result<()> {
        self.theta_record(b'T', label, theta);
        self.label = label;
        self.write_if_full()
    }

    /// The row of an applied SPSA update: iteration `k`'s `signal` moved θ to `theta`. Written as
    /// a result when the log can replay it (a definition, the next label), else θ whole.
    #[inline]
    pub fn append_step(&mut self, label: u64, k: u64, signal: f64, theta: &[f64]) -> Result<()> {
        if !self.defined || label != self.label + 1 {
            return self.append_theta(label, theta);
        }
        let sum = checksum(theta);
        self.record(b'R', 20, |out| {
            out.extend_from_slice(&k.to_le_bytes());
            out.extend_from_slice(&signal.to_le_bytes());
            out.extend_from_slice(&sum.to_le_bytes());
        });
        self.label = label;
        // At fixed labels, not counted from the last one: a resumed run's log is the
        // uninterrupted run's, byte for byte.
        if label.is_multiple_of(self.every) {
            self.snapshot(label, theta);
        }
        self.write_if_full()
    }

    #[inline]
    fn write_if_full(&mut self) -> Result<()> {
        if self.buffer.len() >= BUFFER {
            self.write_buffer()?;
        }
        Ok(())
    }

    /// Write the buffer. A write that failed (a full disk) fails every later call too: the
    /// file may hold part of it, so no length is claimed again.
    fn write_buffer(&mut self) -> Result<()> {
        if let Some(e) = &self.failed {
            bail!("{e}");
        }
        let result = self
            .file
            .write_all(&self.buffer)
            .with_context(|| format!("{}: cannot write log", self.path.display()));
        self.buffer.clear();
        if let Err(e) = &result {
            self.failed = Some(format!("{e:#}"));
        }
        result
    }

    /// Flush if 50 ms have passed since the last flush.
    pub fn flush_if_due(&mut self, now: Instant) -> Result<()> {
        if now.saturating_duration_since(self.last_flush) < FLUSH_EVERY {
            return Ok(());
        }
        self.flush().map(|_| ())
    }

    /// Write what is buffered; the log's length, for the checkpoint.
    pub fn flush(&mut self) -> Result<u64> {
        self.write_buffer()?;
        self.last_flush = Instant::now();
        Ok(self.bytes)
    }
}

/// A definition record's payload: the seed, then the optimizer.
fn definition_bytes(seed: u64, spsa: &Spsa) -> Vec<u8> {
    let mut def = seed.to_le_bytes().to_vec();
    spsa.encode(&mut def);
    def
}

impl Drop for ReplayLog {
    fn drop(&mut self) {
        let _ = self.write_buffer();
    }
}

/// One record of a format-2 log, as the reader indexes it.
#[derive(Clone, Debug)]
enum Entry {
    /// The names at `at` (payload range).
    Names,
    /// A definition: its index in `defs`.
    Def(usize),
    /// θ after the rows before it (a snapshot, or a row with θ whole when `row` is set).
    Theta { values: Range<usize>, row: bool },
    /// A replayed row.
    Step { k: u64, signal: f64, sum: u32 },
}

/// A row as the reader lists it: its label (the applied-update count for SPSA, an epoch, …).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Row {
    label: u64,
    /// Its record in `entries` (format 2) or the byte where its line starts (CSV).
    at: usize,
    /// Where its line ends, before the newline (CSV; 0 for format 2).
    end: usize,
}

/// Where the reader finds the log's bytes: the file, read where a record is needed and never
/// whole (a log of 50,000 variables holds 400 KB of snapshot per 196 rows), or bytes already
/// in memory.
enum Store {
    File(File),
    Memory(Vec<u8>),
}

impl Store {
    /// `out.len()` bytes from byte `at`.
    fn read_at(&self, at: usize, out: &mut [u8]) -> std::io::Result<()> {
        match self {
            Store::File(f) => crate::platform::read_exact_at(f, out, at as u64),
            Store::Memory(bytes) => match bytes.get(at..at.saturating_add(out.len())) {
                Some(b) => {
                    out.copy_from_slice(b);
                    Ok(())
                }
                None => Err(std::io::ErrorKind::UnexpectedEof.into()),
            },
        }
    }

    /// The bytes `from..to` in order, buffered.
    fn scan(&self, from: usize, to: usize) -> std::io::Result<Box<dyn BufRead + '_>> {
        match self {
            Store::File(f) => {
                let mut f = f;
                f.seek(SeekFrom::Start(from as u64))?;
                let part = f.take(to.saturating_sub(from) as u64);
                Ok(Box::new(BufReader::with_capacity(BUFFER, part)))
            }
            Store::Memory(bytes) => Ok(Box::new(&bytes[from.min(to)..to])),
        }
    }
}

/// The one reader of θ history: every form of the log, θ after any row, replayed from the
/// nearest snapshot and checked against each row's checksum. It keeps an index of the rows
/// (a few dozen bytes each) and reads θ from the file as it is asked for, so its memory grows
/// with the rows and not with rows × variables.
pub struct LogReader {
    path: PathBuf,
    pub format: Format,
    store: Store,
    /// The log's length when it was opened (a live run's goes on growing).
    len: usize,
    /// The variables' names (the last ones, for a format-2 log a reshape renamed).
    pub names: Vec<String>,
    rows: Vec<Row>,
    entries: Vec<(Entry, usize)>,
    /// The entries that hold θ whole, ascending: where a replay starts, found by bisection.
    thetas: Vec<usize>,
    defs: Vec<(u64, Spsa)>,
    /// The entry of each definition (`def_entries[d]` is `defs[d]`'s), ascending.
    def_entries: Vec<usize>,
    /// Where each variable stood before it joined: the values of the first snapshot that has
    /// it (its start), for the rows written before a reshape added it.
    fill: Vec<f64>,
}

impl LogReader {
    /// Read the log at `path`; `classic_names` name the columns of a classic log (which has no
    /// header row). A record or line cut short at the end (a live run's) is left out.
    pub fn open(path: &Path, classic_names: Option<&[String]>) -> Result<LogReader> {
        let file = File::open(path)
            .map_err(|e| UserError(format!("{}: cannot read θ log: {e}", path.display())))?;
        let len = file
            .metadata()
            .map_err(|e| UserError(format!("{}: cannot read θ log: {e}", path.display())))?
            .len() as usize;
        LogReader::index(Store::File(file), len, path, classic_names)
    }

    /// Read a log held in memory (see [`LogReader::open`]).
    pub fn parse(
        bytes: Vec<u8>,
        path: &Path,
        classic_names: Option<&[String]>,
    ) -> Result<LogReader> {
        let len = bytes.len();
        LogReader::index(Store::Memory(bytes), len, path, classic_names)
    }

    fn index(
        store: Store,
        len: usize,
        path: &Path,
        classic_names: Option<&[String]>,
    ) -> Result<LogReader> {
        let mut reader = LogReader {
            path: path.to_path_buf(),
            format: Format::Replay,
            store,
            len,
            names: Vec::new(),
            rows: Vec::new(),
            entries: Vec::new(),
            thetas: Vec::new(),
            defs: Vec::new(),
            def_entries: Vec::new(),
            fill: Vec::new(),
        };
        // The first line says which form the log is in (at most 16 MB of it: a header of
        // 50,000 names is about 500 KB).
        let mut first = Vec::new();
        reader
            .store
            .scan(0, len)
            .and_then(|s| s.take(1 << 24).read_until(b'\n', &mut first))
            .map_err(|e| reader.io_error(e))?;
        reader.format = Format::of(&first);
        let start = first.len() - crate::textfile::strip_bom(&first).len();
        match reader.format {
            Format::Replay => reader.index_records(start)?,
            Format::Classic | Format::Csv => reader.index_lines(start, classic_names)?,
        }
        Ok(reader)
    }

    fn io_error(&self, e: std::io::Error) -> anyhow::Error {
        UserError(format!("{}: cannot read θ log: {e}", self.path.display())).into()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rows in the log.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// Row `i`'s label.
    pub fn label(&self, i: usize) -> u64 {
        self.rows[i].label
    }

    pub fn last_label(&self) -> Option<u64> {
        self.rows.last().map(|r| r.label)
    }

    fn width(&self) -> usize {
        self.names.len()
    }

    /// A definition is in force at the end of the log (SPSA rows can follow as results).
    fn defined_at_end(&self) -> bool {
        !self.defs.is_empty()
    }

    /// Whether the log ends where a checkpoint's `theta` stands: its last record, a result
    /// (by checksum) or a snapshot (bit for bit). Rows with θ whole, or no row at all, are not
    /// checked.
    pub fn ends_at(&self, theta: &[f64]) -> bool {
        match self.entries.last() {
            Some((Entry::Step { sum, .. }, _)) => checksum(theta) == *sum,
            Some((Entry::Theta { values, row: false }, _)) => {
                self.values(values.clone()).is_ok_and(|stored| {
                    stored.len() == theta.len()
                        && stored
                            .iter()
                            .zip(theta)
                            .all(|(a, b)| a.to_bits() == b.to_bits())
                })
            }
            _ => true,
        }
    }

    fn error(&self, at: usize, what: &str) -> anyhow::Error {
        UserError(format!("{}: byte {at}: {what}", self.path.display())).into()
    }

    /// Index a format-2 log's records from byte `start` (after a byte-order mark), reading
    /// each once, in order: a snapshot is checked against the row before it and gives the
    /// start of the variables it adds, then only its place is kept.
    fn index_records(&mut self, start: usize) -> Result<()> {
        let len = self.len;
        let mut scan = self.store.scan(start, len).map_err(|e| self.io_error(e))?;
        let mut at = start + MAGIC.len();
        let mut skip = vec![0u8; MAGIC.len()];
        scan.read_exact(&mut skip).map_err(|e| self.io_error(e))?;
        let mut label = 0u64;
        let mut entries: Vec<(Entry, usize)> = Vec::new();
        let mut rows = Vec::new();
        let mut defs = Vec::new();
        let mut names = Vec::new();
        let mut fill: Vec<f64> = Vec::new();
        let mut p = Vec::new();
        while at + FRAME <= len {
            let mut frame = [0u8; FRAME];
            scan.read_exact(&mut frame).map_err(|e| self.io_error(e))?;
            let tag = frame[0];
            let plen = u32::from_le_bytes(frame[1..].try_into().expect("4 bytes")) as usize;
            let payload = at + FRAME..at + FRAME + plen;
            // A result has 20 bytes and θ 12 + 8 per variable: any other length is damage,
            // whether or not it runs past the end.
            let fits = match tag {
                b'R' => plen == 20,
                // With the checksum (since issue 55) or without (logs before it).
                b'S' | b'T' => plen >= 12 && plen.is_multiple_of(4),
                b'N' => plen >= 4,
                b'D' => plen >= 8,
                _ => {
                    return Err(self.error(at, &format!("unknown record `{}`", tag.escape_ascii())));
                }
            };
            if !fits {
                return Err(self.error(
                    at,
                    &format!("damaged `{}` record (length {plen})", tag as char),
                ));
            }
            if payload.end > len {
                // Cut short: a live log's last record, or a torn one. θ of the current width
                // is the one length a record of θ may have.
                let width = 8 * names.len();
                // Names or a definition whose bytes so far are already whole were not cut:
                // their length was damaged.
                let whole = match tag {
                    b'S' | b'T' => plen != 16 + width && plen != 12 + width,
                    _ => {
                        p.clear();
                        (&mut scan)
                            .take((len - at - FRAME) as u64)
                            .read_to_end(&mut p)
                            .map_err(|e| self.io_error(e))?;
                        match tag {
                            b'N' => names_end(&p).is_some(),
                            _ => p.len() >= 8 && Spsa::decode(&p[8..]).is_some(),
                        }
                    }
                };
                if whole {
                    return Err(self.error(
                        at,
                        &format!(
                            "damaged `{}` record (length {plen}, past the end at byte {len})",
                            tag as char
                        ),
                    ));
                }
                break;
            }
            p.resize(plen, 0);
            scan.read_exact(&mut p).map_err(|e| self.io_error(e))?;
            let u64_at = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().expect("8 bytes"));
            let entry = match tag {
                b'N' => {
                    names = read_names(&p).ok_or_else(|| self.error(at, "damaged names record"))?;
                    Entry::Names
                }
                b'D' => {
                    let (spsa, rest) = Spsa::decode(&p[8..])
                        .ok_or_else(|| self.error(at, "damaged definition record"))?;
                    if !rest.is_empty() {
                        return Err(self.error(at, "damaged definition record"));
                    }
                    defs.push((u64_at(0), spsa));
                    Entry::Def(defs.len() - 1)
                }
                b'S' | b'T' => {
                    let n = u32::from_le_bytes(p[8..12].try_into().expect("4 bytes")) as usize;
                    let summed = plen == 16 + 8 * n;
                    if !summed && plen != 12 + 8 * n {
                        return Err(self.error(at, "damaged θ record"));
                    }
                    let row = tag == b'T';
                    let theta = f64s(&p[12..12 + 8 * n]);
                    if summed {
                        let sum = u32::from_le_bytes(p[plen - 4..].try_into().expect("4 bytes"));
                        if theta_record_sum(u64_at(0), &theta) != sum {
                            return Err(self.error(
                                at,
                                "θ does not match the record's checksum; the log was changed or damaged",
                            ));
                        }
                    }
                    // The variables it adds stood here before they joined.
                    if theta.len() > fill.len() {
                        fill.extend_from_slice(&theta[fill.len()..]);
                    }
                    // A snapshot taken after a result must hold the θ that result's checksum
                    // names.
                    if let (false, Some((Entry::Step { sum, .. }, _))) = (row, entries.last())
                        && checksum(&theta) != *sum
                    {
                        return Err(self.error(
                            at,
                            "the snapshot does not match the checksum of the row before it",
                        ));
                    }
                    if row {
                        label = u64_at(0);
                        rows.push(Row {
                            label,
                            at: entries.len(),
                            end: 0,
                        });
                    }
                    Entry::Theta {
                        values: payload.start + 12..payload.start + 12 + 8 * n,
                        row,
                    }
                }
                b'R' => {
                    label += 1;
                    rows.push(Row {
                        label,
                        at: entries.len(),
                        end: 0,
                    });
                    Entry::Step {
                        k: u64_at(0),
                        signal: f64::from_bits(u64_at(8)),
                        sum: u32::from_le_bytes(p[16..20].try_into().expect("4 bytes")),
                    }
                }
                _ => return Err(self.error(at, "unknown record")),
            };
            entries.push((entry, at));
            at = payload.end;
        }
        drop(scan);
        self.thetas = (entries.iter().enumerate())
            .filter(|(_, (e, _))| matches!(e, Entry::Theta { .. }))
            .map(|(i, _)| i)
            .collect();
        self.def_entries = (entries.iter().enumerate())
            .filter(|(_, (e, _))| matches!(e, Entry::Def(_)))
            .map(|(i, _)| i)
            .collect();
        self.entries = entries;
        self.rows = rows;
        self.defs = defs;
        self.names = names;
        self.fill = fill;
        Ok(())
    }

    /// The f64s stored at `range`.
    fn values(&self, range: Range<usize>) -> Result<Vec<f64>> {
        let mut bytes = vec![0u8; range.len()];
        self.store
            .read_at(range.start, &mut bytes)
            .map_err(|e| self.io_error(e))?;
        Ok(f64s(&bytes))
    }

    /// Index a CSV log's lines from byte `start` (after a byte-order mark): only complete lines
    /// that parse count, as a live log may end mid-row.
    fn index_lines(&mut self, start: usize, classic_names: Option<&[String]>) -> Result<()> {
        let mut scan = self
            .store
            .scan(start, self.len)
            .map_err(|e| self.io_error(e))?;
        let mut line = Vec::new();
        scan.read_until(b'\n', &mut line)
            .map_err(|e| self.io_error(e))?;
        let header = line.strip_suffix(b"\n").unwrap_or(&line);
        let mut at = start;
        let names = if self.format == Format::Classic {
            let Some(names) = classic_names else {
                return Err(UserError(format!(
                    "{}: a θ log without a header row (the classic tool's); pass --config CONF so the names come from its variables file",
                    self.path.display()
                ))
                .into());
            };
            let columns = header.split(|&b| b == b',').count() - 1;
            if columns != names.len() {
                return Err(UserError(format!(
                    "{}:1: {columns} value columns, but the variables file has {} variables",
                    self.path.display(),
                    names.len()
                ))
                .into());
            }
            // The first line is a row: read it again.
            scan = self
                .store
                .scan(start, self.len)
                .map_err(|e| self.io_error(e))?;
            names.to_vec()
        } else {
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(header);
            let header = reader
                .records()
                .next()
                .transpose()
                .map_err(|e| UserError(format!("{}: bad θ log header: {e}", self.path.display())))?
                .unwrap_or_default();
            if header.get(0) != Some("iteration") {
                return Err(UserError(format!(
                    "{}: not a θ log (the first line should start with `iteration,`)",
                    self.path.display()
                ))
                .into());
            }
            at += line.len();
            header.iter().skip(1).map(str::to_string).collect()
        };
        let mut row = vec![0.0; names.len()];
        let mut rows = Vec::new();
        loop {
            line.clear();
            let n = scan
                .read_until(b'\n', &mut line)
                .map_err(|e| self.io_error(e))?;
            let Some(text) = line.strip_suffix(b"\n") else {
                break; // the end, or half a line
            };
            let Some(label) = crate::tuner::log::parse_row(text, &mut row) else {
                break;
            };
            rows.push(Row {
                label,
                at,
                end: at + text.len(),
            });
            at += n;
        }
        drop(scan);
        self.names = names;
        self.rows = rows;
        Ok(())
    }

    /// θ after each row of `wanted` (ascending row indices), in order: `visit(row, label, θ)`.
    /// A format-2 log starts from the nearest snapshot at or before each and replays from there
    /// (never back), checking every replayed row's checksum.
    pub fn replay(
        &self,
        wanted: &[usize],
        mut visit: impl FnMut(usize, u64, &[f64]) -> Result<()>,
    ) -> Result<()> {
        if self.format != Format::Replay {
            let mut theta = vec![0.0; self.names.len()];
            let mut line = Vec::new();
            for &i in wanted {
                let row = self.rows[i];
                line.resize(row.end - row.at, 0);
                self.store
                    .read_at(row.at, &mut line)
                    .map_err(|e| self.io_error(e))?;
                if crate::tuner::log::parse_row(&line, &mut theta) != Some(row.label) {
                    return Err(self.error(row.at, "the line changed while the log was read"));
                }
                visit(i, row.label, &theta)?;
            }
            return Ok(());
        }
        // The replay: θ after the entries before `next`, with the definition in force there.
        let mut theta: Vec<f64> = Vec::new();
        let mut next = 0usize;
        let mut def: Option<usize> = None;
        let mut row_done: Option<usize> = None;
        for &want in wanted {
            // A snapshot right after the row holds θ after it (checked against the row's
            // checksum when the log was read): nothing to replay.
            let row_at = self.rows[want].at;
            let target = match self.entries.get(row_at + 1) {
                Some((Entry::Theta { row: false, .. }, _)) => row_at + 1,
                _ => row_at,
            };
            // Jump to the last θ record at or before the row, if it is past where we are.
            if let Some(start) = self.theta_at_or_before(target)
                && (start >= next || row_done.is_none_or(|r| r > want))
            {
                if let (Entry::Theta { values, .. }, _) = &self.entries[start] {
                    theta = self.values(values.clone())?;
                }
                def = self.def_before(start);
                next = start + 1;
            }
            while next <= target {
                let (entry, at) = &self.entries[next];
                match entry {
                    Entry::Names => {}
                    Entry::Def(d) => def = Some(*d),
                    Entry::Theta { values, .. } => theta = self.values(values.clone())?,
                    Entry::Step { k, signal, sum } => {
                        let Some((seed, spsa)) = def.map(|d| &self.defs[d]) else {
                            return Err(self.error(*at, "a result before any definition"));
                        };
                        if *k == 0 || theta.len() != spsa.len() {
                            return Err(
                                self.error(*at, "a result that does not fit the definition")
                            );
                        }
                        step(spsa, *seed, &mut theta, spsa.factors(*k), *signal);
                        if checksum(&theta) != *sum {
                            let i = self.rows.partition_point(|r| r.at < next);
                            let label = self
                                .rows
                                .get(i)
                                .filter(|r| r.at == next)
                                .map_or(0, |r| r.label);
                            return Err(UserError(format!(
                                "{}: row {label} (byte {at}): θ replayed from iteration {k}'s result does not match the row's checksum; the log was changed or damaged",
                                self.path.display()
                            ))
                            .into());
                        }
                    }
                }
                next += 1;
            }
            row_done = Some(want);
            if theta.len() < self.fill.len() {
                // A row from before a reshape: the variables that joined later stood where
                // they joined.
                let mut padded = theta.clone();
                padded.extend_from_slice(&self.fill[theta.len()..]);
                visit(want, self.rows[want].label, &padded)?;
            } else {
                visit(want, self.rows[want].label, &theta)?;
            }
        }
        Ok(())
    }

    /// Replay every row, checking each one's checksum: an error names the file and the row
    /// that does not read.
    pub fn check(&self) -> Result<()> {
        let all: Vec<usize> = (0..self.rows()).collect();
        self.replay(&all, |_, _, _| Ok(()))
    }

    /// The last entry at or before `entry` that holds θ whole. By bisection: a walk back
    /// from every row wanted made a report of every row quadratic in the log's length.
    fn theta_at_or_before(&self, entry: usize) -> Option<usize> {
        let n = self.thetas.partition_point(|&e| e <= entry);
        n.checked_sub(1).map(|i| self.thetas[i])
    }

    /// The definition in force at `entry` (by bisection, as [`Self::theta_at_or_before`]).
    fn def_before(&self, entry: usize) -> Option<usize> {
        self.def_entries
            .partition_point(|&e| e < entry)
            .checked_sub(1)
    }

    /// Rows where θ is stored whole (snapshots and whole rows): reading them replays at most
    /// a few rows each. For CSV forms, every row.
    pub fn cheap_rows(&self) -> Vec<usize> {
        if self.format != Format::Replay {
            return (0..self.rows.len()).collect();
        }
        let mut out = Vec::new();
        let mut row = 0usize;
        for (e, (entry, _)) in self.entries.iter().enumerate() {
            while row < self.rows.len() && self.rows[row].at < e {
                row += 1;
            }
            match entry {
                Entry::Theta { row: true, .. } => out.push(row),
                Entry::Theta { row: false, .. } if row > 0 => out.push(row - 1),
                _ => {}
            }
        }
        out.dedup();
        out
    }

    /// The log as format 1 would have written it: `iteration,<names>` then a row of θ (4
    /// decimals at most) for every row, replayed. For scripts, tests and the classic tools.
    pub fn to_csv(&self) -> Result<String> {
        use crate::tuner::log::LOG_DECIMALS;
        let mut out = Vec::new();
        out.extend_from_slice(b"iteration");
        let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
        w.write_record(&self.names)?;
        let header = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
        if !self.names.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(&header);
        let all: Vec<usize> = (0..self.rows()).collect();
        self.replay(&all, |_, label, theta| {
            crate::vars::push_value(&mut out, label as f64, 0);
            for &x in theta {
                out.push(b',');
                crate::vars::push_value(&mut out, x, LOG_DECIMALS);
            }
            out.push(b'\n');
            Ok(())
        })?;
        Ok(String::from_utf8(out)?)
    }

    /// θ after the row labelled `label` (the last such row), if the log has it.
    pub fn theta_at_label(&self, label: u64) -> Result<Option<Vec<f64>>> {
        let Some(i) = self.rows.iter().rposition(|r| r.label == label) else {
            return Ok(None);
        };
        let mut out = None;
        self.replay(&[i], |_, _, theta| {
            out = Some(theta.to_vec());
            Ok(())
        })?;
        Ok(out)
    }
}

/// Little-endian f64s, 8 bytes each.
fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// The names of an `N` record.
fn read_names(p: &[u8]) -> Option<Vec<String>> {
    if names_end(p)? != p.len() {
        return None;
    }
    let count = u32::from_le_bytes(p.get(..4)?.try_into().ok()?) as usize;
    let mut at = 4;
    let mut names = Vec::with_capacity(count.min(p.len() / 4));
    for _ in 0..count {
        let len = u32::from_le_bytes(p.get(at..at + 4)?.try_into().ok()?) as usize;
        at += 4;
        names.push(String::from_utf8(p.get(at..at + len)?.to_vec()).ok()?);
        at += len;
    }
    Some(names)
}

/// Where the names at the start of `p` end, if they are whole there.
fn names_end(p: &[u8]) -> Option<usize> {
    let count = u32::from_le_bytes(p.get(..4)?.try_into().ok()?);
    let mut at = 4usize;
    for _ in 0..count {
        let len = u32::from_le_bytes(p.get(at..at.checked_add(4)?)?.try_into().ok()?) as usize;
        at = at.checked_add(4 + len)?;
        p.get(..at)?;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spsa::Schedule;
    use crate::spsa::driver::{Driver, DriverState, Rounding};
    use crate::vars::Variable;
    use std::fs::OpenOptions;

    fn vars(n: usize) -> Vec<Variable> {
        (0..n)
            .map(|i| Variable {
                name: format!("v{i}"),
                start: i as f64,
                min: -50.0,
                max: 50.0,
                c_end: 2.0,
                r_end: 0.002,
                simul_elo: 1.0,
            })
            .collect()
    }

    fn spsa(v: &[Variable]) -> Spsa {
        let schedule = Schedule {
            iterations: 1000,
            a: 100.0,
            alpha: 0.602,
            gamma: 0.101,
        };
        Spsa::new(v, schedule)
    }

    fn signal(k: u64) -> f64 {
        [2.0, -1.0, 0.5, 1.0, -2.0, 0.0][(k % 6) as usize]
    }

    /// A run of `rows` updates, three in flight and applied out of order, logged to `path`:
    /// θ after every row as the driver had it.
    fn write_run(path: &Path, v: &[Variable], rows: u64, seed: u64) -> Vec<Vec<f64>> {
        let names: Vec<String> = v.iter().map(|v| v.name.clone()).collect();
        let start: Vec<f64> = v.iter().map(|v| v.start).collect();
        let mut d = Driver::new(
            spsa(v),
            Rounding::Continuous,
            1,
            seed,
            DriverState::start(start.clone()),
        );
        let mut log = ReplayLog::create(path, &names).unwrap();
        log.define(seed, d.spsa(), 0, &start).unwrap();
        let mut want = Vec::new();
        let mut flight = Vec::new();
        while (want.len() as u64) < rows {
            while flight.len() < 3 {
                flight.push(d.next_trial().unwrap().iteration);
            }
            // The middle one finishes first: results arrive out of order.
            let k = flight.remove(1);
            d.apply(k, signal(k)).unwrap();
            log.append_step(d.applied(), k, signal(k), d.theta())
                .unwrap();
            want.push(d.theta().to_vec());
        }
        log.flush().unwrap();
        want
    }

    fn bits(theta: &[f64]) -> Vec<u64> {
        theta.iter().map(|x| x.to_bits()).collect()
    }

    /// A log knows which definition is in force, also after a resume reopened it: a shared
    /// run's owner defines it again only when its mirror's shape is another.
    #[test]
    fn the_definition_in_force_is_known_after_a_resume() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let v = vars(3);
        write_run(&path, &v, 10, 7);
        let len = std::fs::metadata(&path).unwrap().len();
        let (log, _) = ReplayLog::resume(&path, len).unwrap();
        assert!(log.is_defined_as(7, &spsa(&v)));
        assert!(!log.is_defined_as(8, &spsa(&v)), "another seed");
        assert!(!log.is_defined_as(7, &spsa(&vars(4))), "another shape");
        let fresh = ReplayLog::create(&dir.path().join("y.log"), &["a".into()]).unwrap();
        assert!(
            !fresh.is_defined_as(7, &spsa(&vars(1))),
            "no definition yet"
        );
    }

    #[test]
    fn replays_every_row_bit_for_bit_from_snapshots_and_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let v = vars(5);
        let want = write_run(&path, &v, 300, 9);
        let r = LogReader::open(&path, None).unwrap();
        assert_eq!(r.format, Format::Replay);
        assert_eq!(r.names, ["v0", "v1", "v2", "v3", "v4"]);
        assert_eq!(r.rows(), 300);
        assert_eq!(r.label(0), 1);
        let mut seen = 0;
        let all: Vec<usize> = (0..300).collect();
        r.replay(&all, |i, label, theta| {
            assert_eq!(label, i as u64 + 1);
            assert_eq!(bits(theta), bits(&want[i]), "row {i}");
            seen += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, 300);
        // Snapshots every 64 rows: those rows are cheap, and any row replays from one.
        assert_eq!(r.cheap_rows(), [63, 127, 191, 255]);
        let some = [5, 64, 200, 299];
        r.replay(&some, |i, _, theta| {
            assert_eq!(bits(theta), bits(&want[i]));
            Ok(())
        })
        .unwrap();
        assert_eq!(r.theta_at_label(77).unwrap().unwrap(), want[76]);
        assert!(r.ends_at(&want[299]) && !r.ends_at(&want[298]));
        // 25 bytes a row, whatever θ's width, besides the snapshots.
        let len = std::fs::metadata(&path).unwrap().len() as usize;
        let snapshots = 5 * (16 + 8 * 5 + FRAME);
        assert!(len < MAGIC.len() + 300 * 25 + snapshots + 400, "{len}");
    }

    #[test]
    fn a_changed_result_is_an_error_naming_the_file_and_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        write_run(&path, &vars(3), 20, 1);
        let r = LogReader::open(&path, None).unwrap();
        // Row 7's signal, changed by one bit.
        let Row { at, .. } = r.rows[6];
        let byte = r.entries[at].1 + FRAME + 8;
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[byte] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let r = LogReader::open(&path, None).unwrap();
        let e = r.replay(&[10], |_, _, _| Ok(())).unwrap_err();
        let text = format!("{e:#}");
        assert!(
            text.contains("x.log: row 7 (byte") && text.contains("checksum"),
            "{text}"
        );
        // Rows before it still read.
        assert!(r.replay(&[5], |_, _, _| Ok(())).is_ok());
    }

    #[test]
    fn a_record_cut_short_is_left_out_and_resume_goes_on_from_the_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let v = vars(2);
        let want = write_run(&path, &v, 10, 4);
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 3]).unwrap();
        let r = LogReader::open(&path, None).unwrap();
        assert_eq!(r.rows(), 9);
        // A checkpoint after row 5: the rest is cut, and writing goes on from row 5.
        let r = LogReader::open(&path, None).unwrap();
        let bytes = r.entries[r.rows[5].at].1 as u64;
        let (mut log, read) = ReplayLog::resume(&path, bytes).unwrap();
        assert_eq!(read.rows(), 5);
        assert!(read.ends_at(&want[4]));
        log.append_step(6, 6, 1.0, &want[5]).unwrap();
        log.flush().unwrap();
        let r = LogReader::open(&path, None).unwrap();
        assert_eq!(r.rows(), 6);
        // A row whose label does not follow (or a log with no definition) is written whole.
        let (mut log, _) =
            ReplayLog::resume(&path, std::fs::metadata(&path).unwrap().len()).unwrap();
        log.append_step(9, 9, 1.0, &[1.5, 2.5]).unwrap();
        drop(log);
        let r = LogReader::open(&path, None).unwrap();
        assert_eq!(r.last_label(), Some(9));
        assert_eq!(r.theta_at_label(9).unwrap().unwrap(), [1.5, 2.5]);
    }

    /// Rows before a reshape replay with the optimizer they were made with, rows after with
    /// the new one over more variables.
    #[test]
    fn a_reshape_starts_a_new_definition_and_the_old_rows_keep_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let v = vars(2);
        let before = write_run(&path, &v, 70, 2);
        let bytes = std::fs::metadata(&path).unwrap().len();
        let (mut log, _) = ReplayLog::resume(&path, bytes).unwrap();
        let wide = vars(3);
        let names: Vec<String> = wide.iter().map(|v| v.name.clone()).collect();
        let mut theta = before[69].clone();
        theta.push(wide[2].start);
        let s3 = spsa(&wide);
        log.names(&names);
        log.define(2, &s3, 70, &theta).unwrap();
        for k in 71..=80u64 {
            crate::spsa::driver::step(&s3, 2, &mut theta, s3.factors(k), signal(k));
            log.append_step(k, k, signal(k), &theta).unwrap();
        }
        drop(log);
        let r = LogReader::open(&path, None).unwrap();
        assert_eq!(r.names.len(), 3);
        assert_eq!(r.rows(), 80);
        r.replay(&[3, 69, 79], |i, _, got| {
            match i {
                79 => assert_eq!(bits(got), bits(&theta)),
                // Before it joined, the new variable stood at its start.
                _ => assert_eq!(bits(got), bits(&[&before[i][..], &[2.0]].concat())),
            }
            Ok(())
        })
        .unwrap();
    }

    /// A write that fails (the disk is full) is reported with the file's name, and every
    /// later call fails too: no length is claimed for rows that may not be in the file.
    #[test]
    fn a_failing_write_fails_every_later_call() {
        let full = Path::new("/dev/full");
        let file = OpenOptions::new().write(true).open(full).unwrap();
        let mut log = ReplayLog::wrap(full, file, 0, 3);
        let mut failed = None;
        for k in 1..=20_000u64 {
            if let Err(e) = log.append_theta(k, &[1.5, -2.25, k as f64]) {
                failed = Some(e);
                break;
            }
        }
        let text = format!("{:#}", failed.unwrap());
        assert!(text.starts_with("/dev/full: cannot write log: "), "{text}");
        assert_eq!(format!("{:#}", log.flush().unwrap_err()), text);
    }

    /// Where each row's record ends in a format-2 log (rows in order).
    fn row_ends(r: &LogReader) -> Vec<usize> {
        r.rows
            .iter()
            .map(|row| {
                let (entry, at) = &r.entries[row.at];
                at + FRAME
                    + match entry {
                        Entry::Step { .. } => 20,
                        Entry::Theta { values, .. } => 16 + values.len(),
                        _ => unreachable!("a row is a result or θ"),
                    }
            })
            .collect()
    }

    /// Issue 55: a log cut at any byte of its last records (two results, a snapshot, two more
    /// results) reads to its last whole record, and θ there is the run's, bit for bit.
    #[test]
    fn a_log_cut_at_any_byte_of_its_last_records_reads_to_its_last_whole_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let want = write_run(&path, &vars(3), 130, 5);
        let full = std::fs::read(&path).unwrap();
        let ends = row_ends(&LogReader::open(&path, None).unwrap());
        for cut in ends[125]..=full.len() {
            let r = LogReader::parse(full[..cut].to_vec(), &path, None)
                .unwrap_or_else(|e| panic!("cut at {cut}: {e:#}"));
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(r.rows(), whole, "cut at {cut}");
            let last = r.theta_at_label(whole as u64).unwrap().unwrap();
            assert_eq!(bits(&last), bits(&want[whole - 1]), "cut at {cut}");
        }
    }

    /// Every row `bytes` holds, or the error reading them gives.
    fn read_all(bytes: Vec<u8>, path: &Path) -> Result<Vec<(u64, Vec<u64>)>> {
        let r = LogReader::parse(bytes, path, None)?;
        let all: Vec<usize> = (0..r.rows()).collect();
        let mut rows = Vec::new();
        r.replay(&all, |_, label, theta| {
            rows.push((label, bits(theta)));
            Ok(())
        })?;
        Ok(rows)
    }

    /// Flip every bit of `full` in turn: each is an error naming the file and a byte (or the
    /// first line), or every row still reads as it was. Gives the flips that read.
    fn flip_every_bit(full: &[u8], path: &Path) -> usize {
        let want = read_all(full.to_vec(), path).unwrap();
        let mut read = 0;
        for byte in 0..full.len() {
            for bit in 0..8 {
                let mut bytes = full.to_vec();
                bytes[byte] ^= 1 << bit;
                match read_all(bytes, path) {
                    Ok(rows) => {
                        assert_eq!(rows, want, "bit {bit} of byte {byte} gave another θ");
                        read += 1;
                    }
                    Err(e) => {
                        let text = format!("{e:#}");
                        let named = text.starts_with(&format!("{}: ", path.display()))
                            && (text.contains("byte ")
                                || (byte < MAGIC.len() && text.contains("first line")));
                        assert!(named, "bit {bit} of byte {byte}: {text}");
                    }
                }
            }
        }
        read
    }

    /// Issue 55: a single flipped bit anywhere in an SPSA run's log is found (an error naming
    /// the file and the byte) or changes no θ (a snapshot's label, which nothing reads).
    #[test]
    fn a_flipped_bit_in_a_replayed_log_is_found_or_harmless() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        write_run(&path, &vars(2), 70, 3);
        let full = std::fs::read(&path).unwrap();
        // What reads: flips that leave θ's bits alone (a snapshot's label; a signal of 0, or
        // its last bits; a name's letters, which no checksum covers).
        let read = flip_every_bit(&full, &path);
        assert!(
            read < 8 * full.len() / 4,
            "{read} of {} flips read",
            8 * full.len()
        );
    }

    /// The same for a log of rows with θ whole (a method that cannot be replayed).
    #[test]
    fn a_flipped_bit_in_rows_of_whole_theta_is_found_or_harmless() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let mut log = ReplayLog::create(&path, &names).unwrap();
        for k in 1..=12u64 {
            log.append_theta(k, &[k as f64 / 3.0, -2.5, 1e3 + k as f64])
                .unwrap();
        }
        drop(log);
        let full = std::fs::read(&path).unwrap();
        flip_every_bit(&full, &path);
    }

    #[test]
    fn the_optimizer_round_trips_through_its_bytes() {
        let v = vars(4);
        let parts = [
            crate::spsa::Part::Always,
            crate::spsa::Part::Held,
            crate::spsa::Part::After {
                after: 10,
                curve: 500,
            },
            crate::spsa::Part::Always,
        ];
        let s = Spsa::with_parts(&v, *spsa(&v).schedule(), 900, &parts);
        let mut bytes = Vec::new();
        s.encode(&mut bytes);
        bytes.push(7);
        let (back, rest) = Spsa::decode(&bytes).unwrap();
        assert_eq!(rest, [7]);
        let mut again = Vec::new();
        back.encode(&mut again);
        assert_eq!(again, bytes[..bytes.len() - 1]);
        assert!(Spsa::decode(&bytes[..20]).is_none());
    }

    #[test]
    fn the_checksum_sees_every_bit_and_the_width() {
        let a = [1.0f64, 2.0, 3.0, 4.0, 5.0];
        let mut b = a;
        b[4] = f64::from_bits(b[4].to_bits() ^ 1);
        assert_ne!(checksum(&a), checksum(&b));
        assert_ne!(checksum(&a[..4]), checksum(&[1.0, 2.0, 3.0, 4.0, 0.0]));
        assert_ne!(checksum(&[0.0]), checksum(&[-0.0]));
    }

    #[test]
    fn csv_logs_read_through_the_same_reader_and_say_their_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        std::fs::write(&path, "iteration,a,b\n1,1,2\n2,3,4\n3,5").unwrap();
        let r = LogReader::open(&path, None).unwrap();
        assert_eq!((r.format, r.rows()), (Format::Csv, 2));
        assert_eq!(r.theta_at_label(2).unwrap().unwrap(), [3.0, 4.0]);
        std::fs::write(&path, "1,1.5,2\n2,3,4\n").unwrap();
        let names = ["a".to_string(), "b".to_string()];
        let r = LogReader::open(&path, Some(&names)).unwrap();
        assert_eq!((r.format, r.rows()), (Format::Classic, 2));
        assert!(Format::Classic.describe().starts_with("format 0"));
    }
}
