//! The engine log (`--engine-log FILE`, `[games] engine_log`): every line to and from every
//! engine of a run, in one file, as fastchess's `-log engine=true` writes it.
//!
//! ```text
//! # spsa engine log, opened at Unix time 1764201600.123 s; fields: ms since then, slot, engine, > to it or < from it, the line
//! 0.412 1 sparring.1 > uci
//! 3.870 1 sparring.1 < id name sparring
//! 5.104 2 sparring.2 < uciok
//! 41.337 1 sparring.1 > position startpos moves e2e4
//! 41.340 1 sparring.1 > go depth 3
//! 44.018 1 sparring.1 < bestmove e7e5
//! ```
//!
//! Each line: milliseconds since the log was opened (when a line was written, or read by us),
//! the concurrency slot (1, 2, …), the engine's name (spaces as `_`, so the fields split on
//! spaces), `>` for a line sent to the engine or `<` for one read from it, and the line itself.
//! The file is appended to (a resumed run, or a run and its verification, add a header line and
//! their own lines).
//!
//! All engines share one buffered writer behind a mutex; a line is formatted first and handed to
//! it whole, in one `write_all`, so the file receives only whole lines, never two engines' lines
//! mixed (a kill loses at most the buffered lines, never half of one). It is flushed at the end of
//! each game (or scoring of positions), when the engines quit, and when the last engine and the
//! arena let go of it. An engine without a log holds `None` and pays one branch per line.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// One run's engine log (cheap to clone: the clones share the file).
#[derive(Clone)]
pub struct EngineLog(Arc<Shared>);

struct Shared {
    path: PathBuf,
    began: Instant,
    out: Mutex<Out>,
}

struct Out {
    writer: BufWriter<File>,
    /// The first write error: later lines are dropped, and it is reported once.
    failed: bool,
}

impl EngineLog {
    /// Open `path` for appending (created if missing, its folder too) and write the header
    /// line.
    pub fn open(path: &Path) -> std::io::Result<EngineLog> {
        if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let began = Instant::now();
        let unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let mut writer = BufWriter::with_capacity(64 * 1024, file);
        writeln!(
            writer,
            "# spsa engine log, opened at Unix time {unix:.3} s; fields: ms since then, slot, engine, > to it or < from it, the line"
        )?;
        writer.flush()?;
        Ok(EngineLog(Arc::new(Shared {
            path: path.to_path_buf(),
            began,
            out: Mutex::new(Out {
                writer,
                failed: false,
            }),
        })))
    }

    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// The log as the engines of concurrency slot `slot` (1, 2, …) write it.
    pub fn seat(&self, slot: usize) -> LogSeat {
        LogSeat {
            log: self.clone(),
            slot,
        }
    }

    /// Write out the buffered lines.
    pub fn flush(&self) {
        let mut out = self.lock();
        if !out.failed
            && let Err(e) = out.writer.flush()
        {
            self.failed(&mut out, &e);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Out> {
        self.0.out.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn failed(&self, out: &mut Out, e: &std::io::Error) {
        out.failed = true;
        tracing::warn!(
            "the engine log {} cannot be written ({e}); its later lines are lost",
            self.0.path.display()
        );
    }

    fn write(&self, line: &str) {
        let mut out = self.lock();
        if !out.failed
            && let Err(e) = out.writer.write_all(line.as_bytes())
        {
            self.failed(&mut out, &e);
        }
    }
}

impl std::fmt::Debug for EngineLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("EngineLog").field(&self.0.path).finish()
    }
}

/// The same log (not merely the same path).
impl PartialEq for EngineLog {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for EngineLog {}

/// Where an engine logs its lines: the run's log and the engine's slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSeat {
    pub log: EngineLog,
    pub slot: usize,
}

/// Which way a line went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Direction {
    /// Sent to the engine (`>`).
    To,
    /// Read from the engine (`<`).
    From,
}

/// One engine's pen on the log: the log and the line's prefix (`slot name`).
#[derive(Clone)]
pub(super) struct LineLog {
    log: EngineLog,
    tag: String,
}

impl LineLog {
    pub(super) fn new(seat: &LogSeat, engine: &str) -> LineLog {
        LineLog {
            log: seat.log.clone(),
            tag: format!("{} {}", seat.slot, engine.replace(char::is_whitespace, "_")),
        }
    }

    /// Log `text`, one entry per line in it (a command may be several lines, sent in one write).
    pub(super) fn lines(&self, direction: Direction, text: &str) {
        let ms = self.log.0.began.elapsed().as_secs_f64() * 1000.0;
        let arrow = match direction {
            Direction::To => '>',
            Direction::From => '<',
        };
        let mut entry = String::with_capacity(self.tag.len() + text.len() + 24);
        for line in text.split('\n') {
            let _ = writeln!(
                entry,
                "{ms:.3} {} {arrow} {}",
                self.tag,
                line.trim_end_matches('\r')
            );
        }
        self.log.write(&entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_tagged_and_whole_and_the_file_is_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.log");
        std::fs::write(&path, "earlier\n").unwrap();
        let log = EngineLog::open(&path).unwrap();
        let a = LineLog::new(&log.seat(1), "my engine");
        let b = LineLog::new(&log.seat(2), "other");
        a.lines(Direction::To, "position startpos\ngo depth 2");
        b.lines(Direction::From, "bestmove e2e4\r");
        log.flush();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "earlier");
        assert!(lines[1].starts_with("# spsa engine log"), "{text}");
        let fields = |l: &str| -> Vec<String> {
            let f: Vec<&str> = l.splitn(5, ' ').collect();
            assert!(f[0].parse::<f64>().is_ok(), "{l}");
            f[1..].iter().map(|s| s.to_string()).collect()
        };
        assert_eq!(
            fields(lines[2]),
            ["1", "my_engine", ">", "position startpos"]
        );
        assert_eq!(fields(lines[3]), ["1", "my_engine", ">", "go depth 2"]);
        assert_eq!(fields(lines[4]), ["2", "other", "<", "bestmove e2e4"]);
        assert_eq!(lines.len(), 5);
        assert_eq!(log, log.clone());
        assert_ne!(log, EngineLog::open(&path).unwrap());
    }
}
