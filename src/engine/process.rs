//! [`UciEngine`]: one engine process driven over UCI, with a deadline on every wait.

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::{Instant, timeout, timeout_at};
use tracing::{debug, trace, warn};

use super::log::{Direction, LineLog, LogSeat};
use super::options::{self, OptionError, OptionTable, OptionValue};
use super::parse::{EngineLine, SearchLine, parse_line, parse_search_line};
use super::watchdog::{Verdict, Watchdog};
use super::{BestMove, EngineFault, GoCommand, Player, Score, SearchReply};

/// How to start an engine, and how long to wait for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSpec {
    /// Name for logs, errors and PGN tags (not necessarily the engine's `id name`).
    pub name: String,
    pub command: PathBuf,
    pub args: Vec<String>,
    /// Working directory of the process; the caller's when `None`.
    pub working_dir: Option<PathBuf>,
    /// `uci` → `uciok`.
    pub handshake_timeout: Duration,
    /// `isready` → `readyok` (after the handshake, after options, at every new game); also the
    /// limit for writing one command.
    pub ready_timeout: Duration,
    /// `quit` → process exit, before we kill it.
    pub quit_timeout: Duration,
    /// Log every line to and from the engine here (`--engine-log`); `None`: no log.
    pub log: Option<LogSeat>,
}

impl EngineSpec {
    /// A spec with default timeouts: 10 s handshake, 10 s ready, 500 ms quit.
    pub fn new(name: impl Into<String>, command: impl Into<PathBuf>) -> Self {
        EngineSpec {
            name: name.into(),
            command: command.into(),
            args: Vec::new(),
            working_dir: None,
            handshake_timeout: Duration::from_secs(10),
            ready_timeout: Duration::from_secs(10),
            quit_timeout: Duration::from_millis(500),
            log: None,
        }
    }
}

/// Errors of [`UciEngine::set_option`] and [`UciEngine::configure`]: a bad wish, or a broken engine.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Option(#[from] OptionError),
    #[error(transparent)]
    Fault(#[from] EngineFault),
}

impl OptionError {
    /// The option error in `err`'s chain, also when an [`EngineError`] wraps it (its
    /// transparent variant hides the wrapped error from the chain). Here, beside the wrapper,
    /// so that the options' file needs nothing of the process's.
    pub fn find(err: &anyhow::Error) -> Option<&OptionError> {
        err.chain().find_map(|e| {
            e.downcast_ref::<OptionError>()
                .or(match e.downcast_ref::<EngineError>() {
                    Some(EngineError::Option(o)) => Some(o),
                    _ => None,
                })
        })
    }
}

/// Transparent: whatever the wrapped error is.
impl crate::error::UserFacing for EngineError {
    fn is_user_error(&self) -> bool {
        match self {
            EngineError::Option(e) => crate::error::UserFacing::is_user_error(e),
            EngineError::Fault(e) => crate::error::UserFacing::is_user_error(e),
        }
    }
}

/// Lines longer than this are truncated (the rest is read and dropped), so a runaway engine
/// cannot make us buffer without bound.
const MAX_LINE: usize = 1 << 20;

/// Reads lines from the engine's stdout into one reused buffer, either through the runtime
/// ([`LineReader::read`]) or by blocking the thread ([`LineReader::read_blocking`], for a thread
/// that serves one engine and nothing else). Both see the same buffered bytes, so the two can
/// alternate. Cancel-safe: if a read is abandoned at a deadline, the partial line stays buffered
/// and the next read continues it.
struct LineReader<R = ChildStdout> {
    inner: R,
    buf: Box<[u8]>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// A line that began in an earlier read (or is the part of one read so far); a line that
    /// lies whole in `buf` is not copied here but read in place (`in_buf`).
    line: Vec<u8>,
    /// Where the current line lies in `buf`, when it lies there whole.
    in_buf: Option<(usize, usize)>,
    complete: bool,
    /// The engine log, which sees every line read.
    log: Option<LineLog>,
}

enum Read {
    Line,
    Eof,
    Timeout,
}

impl<R> LineReader<R> {
    #[cfg(test)]
    fn new(inner: R) -> Self {
        Self::logged(inner, None)
    }

    fn logged(inner: R, log: Option<LineLog>) -> Self {
        LineReader {
            inner,
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
            line: Vec::with_capacity(1024),
            in_buf: None,
            complete: false,
            log,
        }
    }

    /// A line was read: into the engine log, if there is one.
    fn note(&self) {
        if let Some(log) = &self.log {
            log.lines(Direction::From, &self.text());
        }
    }

    /// Take buffered bytes up to and including a newline as the current line; true when a whole
    /// line is there. Consumes every buffered byte when there is no newline (keeping them for
    /// the line's rest). A line that lies whole in the buffer stays there (most lines: no copy).
    fn take_line(&mut self) -> bool {
        if self.complete {
            self.line.clear();
            self.in_buf = None;
            self.complete = false;
        }
        let avail = &self.buf[self.start..self.end];
        let (take, used, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i, i + 1, true),
            None => (avail.len(), avail.len(), false),
        };
        if done && self.line.is_empty() {
            // Whole in the buffer (64 KiB, shorter than MAX_LINE: no truncation is due).
            self.in_buf = Some((self.start, self.start + take));
        } else {
            let room = MAX_LINE.saturating_sub(self.line.len());
            self.line.extend_from_slice(&avail[..take.min(room)]);
        }
        self.start += used;
        self.complete = done;
        done
    }

    /// The current line's bytes, without its newline.
    fn bytes(&self) -> &[u8] {
        match self.in_buf {
            Some((from, to)) => &self.buf[from..to],
            None => &self.line,
        }
    }

    /// The current line as text (invalid UTF-8 replaced; engines print ASCII, checked fast).
    fn text(&self) -> Cow<'_, str> {
        let bytes = self.bytes();
        match std::str::from_utf8(bytes) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(bytes),
        }
    }
}

impl<R: tokio::io::AsyncRead + Unpin> LineReader<R> {
    async fn next_line(&mut self) -> std::io::Result<bool> {
        use tokio::io::AsyncReadExt;
        loop {
            if self.take_line() {
                return Ok(true);
            }
            // `read` is cancel-safe: dropped at a deadline, it has consumed nothing.
            let n = self.inner.read(&mut self.buf).await?;
            if n == 0 {
                return Ok(false);
            }
            (self.start, self.end) = (0, n);
        }
    }

    async fn read(&mut self, deadline: Instant) -> Read {
        match timeout_at(deadline, self.next_line()).await {
            Ok(Ok(true)) => {
                self.note();
                Read::Line
            }
            Ok(Ok(false)) | Ok(Err(_)) => Read::Eof,
            Err(_) => Read::Timeout,
        }
    }
}

impl<R> LineReader<R> {
    /// The next line, blocking this thread in `read` on `pipe`: a blocking handle on the same
    /// pipe as `inner` (see [`BlockingOut`]). One system call per batch of lines the engine
    /// writes, and no runtime in between: this is the evaluation loop's path, where our own
    /// share of the CPU is what counts. No deadline: the [`Watchdog`] ends an overlong wait.
    fn read_blocking(&mut self, pipe: &mut std::fs::File) -> Read {
        use std::io::Read as _;
        loop {
            if self.take_line() {
                self.note();
                return Read::Line;
            }
            match pipe.read(&mut self.buf) {
                Ok(0) => return Read::Eof,
                Ok(n) => (self.start, self.end) = (0, n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Read::Eof,
            }
        }
    }
}

/// The engine's output opened a second time, blocking (the runtime's handle is non-blocking, and
/// the flag belongs to the open file, so it cannot be cleared there), with the watchdog that
/// bounds each blocking search. Made at a process's first blocking search.
struct BlockingOut {
    pipe: std::fs::File,
    watchdog: Watchdog,
}

impl BlockingOut {
    fn open(p: &Proc, log: Option<LineLog>) -> std::io::Result<BlockingOut> {
        let pipe = crate::platform::blocking_reader(&p.out.inner)?;
        let stdin = crate::platform::clone_writer(&p.stdin)?;
        let pid = p.child.id().ok_or(std::io::ErrorKind::NotFound)?;
        Ok(BlockingOut {
            pipe,
            watchdog: Watchdog::new(stdin, pid, log)?,
        })
    }
}

/// How much of an engine's stderr is kept: its last words when it fails to start or crashes.
const STDERR_TAIL: usize = 4096;

/// The end of what an engine wrote to stderr. A thread of its own drains the pipe as the engine
/// writes (blocking reads, whatever the runtime is doing), so a chatty engine never blocks on a
/// full pipe, and only the last [`STDERR_TAIL`] bytes are kept.
#[derive(Clone, Default)]
struct StderrTail(Arc<Mutex<TailState>>);

#[derive(Default)]
struct TailState {
    bytes: VecDeque<u8>,
    /// The pipe reached its end (every writer closed it).
    closed: bool,
}

impl StderrTail {
    fn drain(mut reader: std::io::PipeReader) -> std::io::Result<StderrTail> {
        let tail = StderrTail::default();
        let state = tail.0.clone();
        std::thread::Builder::new()
            .name("engine-stderr".into())
            .spawn(move || {
                let mut buf = [0u8; 4096];
                loop {
                    let n = std::io::Read::read(&mut reader, &mut buf).unwrap_or(0);
                    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
                    if n == 0 {
                        s.closed = true;
                        return;
                    }
                    s.bytes.extend(&buf[..n]);
                    let extra = s.bytes.len().saturating_sub(STDERR_TAIL);
                    s.bytes.drain(..extra);
                }
            })?;
        Ok(tail)
    }

    /// The kept text, once the pipe has closed or `wait` has passed (an engine's children may
    /// hold it open), as whole lines joined by ` | `; None when the engine said nothing.
    fn last_words(&self, wait: Duration) -> Option<String> {
        let until = std::time::Instant::now() + wait;
        loop {
            let s = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if s.closed || std::time::Instant::now() >= until {
                let bytes: Vec<u8> = s.bytes.iter().copied().collect();
                let text = String::from_utf8_lossy(&bytes);
                // A cut at the front of the buffer leaves a partial first line: drop it.
                let text = if s.bytes.len() >= STDERR_TAIL {
                    text.split_once('\n').map_or("", |(_, rest)| rest)
                } else {
                    &text
                };
                let lines: Vec<&str> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                return (!lines.is_empty()).then(|| lines.join(" | "));
            }
            drop(s);
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

struct Proc {
    child: Child,
    stdin: ChildStdin,
    out: LineReader,
    /// The end of the engine's stderr (None where no pipe could be made for it).
    stderr: Option<StderrTail>,
    /// For [`UciEngine::search_blocking`]; `None` until the first one (and where the platform
    /// has no blocking reader: those searches then go through the runtime).
    blocking: Option<BlockingOut>,
}

/// One UCI engine process. Killed when dropped, so no process outlives its owner.
pub struct UciEngine {
    spec: EngineSpec,
    proc: Option<Proc>,
    id_name: Option<String>,
    id_author: Option<String>,
    options: OptionTable,
    /// Options sent so far (engine spelling, wire value), in the order first sent; re-sent after
    /// a restart.
    applied: Vec<(String, Option<String>)>,
    /// Engine spelling → position in `applied`.
    applied_at: HashMap<String, usize>,
    buf: String,
    /// [`Player::search`] reads by blocking the thread (see [`UciEngine::block_searches`]).
    blocking_searches: bool,
    /// When a blocking search last gave the runtime a turn.
    yielded: std::time::Instant,
    /// How long unclocked searches took lately (see [`SearchPace`]).
    pace: SearchPace,
    /// Where every line to and from the engine is logged (`spec.log`).
    log: Option<LineLog>,
}

impl std::fmt::Debug for UciEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UciEngine")
            .field("name", &self.spec.name)
            .field("running", &self.proc.is_some())
            .finish_non_exhaustive()
    }
}

impl UciEngine {
    /// Spawn the engine, do the `uci` handshake (collecting `id` and every `option`) and an
    /// `isready`, each within the spec's deadline. Every failure is [`EngineFault::Startup`].
    pub async fn start(spec: EngineSpec) -> Result<Self, EngineFault> {
        let log = spec.log.as_ref().map(|seat| LineLog::new(seat, &spec.name));
        let mut engine = UciEngine {
            spec,
            proc: None,
            id_name: None,
            id_author: None,
            options: OptionTable::default(),
            applied: Vec::new(),
            applied_at: HashMap::new(),
            buf: String::with_capacity(256),
            blocking_searches: false,
            yielded: std::time::Instant::now(),
            pace: SearchPace::default(),
            log,
        };
        engine.launch().await?;
        Ok(engine)
    }

    pub fn spec(&self) -> &EngineSpec {
        &self.spec
    }
    /// The engine's `id name`, if it sent one.
    pub fn id_name(&self) -> Option<&str> {
        self.id_name.as_deref()
    }
    pub fn id_author(&self) -> Option<&str> {
        self.id_author.as_deref()
    }
    /// Every option the engine declared during the handshake, in its order.
    pub fn options(&self) -> &OptionTable {
        &self.options
    }
    /// Whether the process is running (false after a fatal fault until [`UciEngine::restart`]).
    pub fn is_running(&self) -> bool {
        self.proc.is_some()
    }
    /// From now on (restarts included) let [`Player::search`] read the answer by blocking this
    /// thread, as [`UciEngine::search_blocking`] does: for an engine that lives alone on its
    /// thread (an arena slot's), where the runtime has nothing else to do during a search.
    pub fn block_searches(&mut self) {
        self.blocking_searches = true;
    }

    /// The OS process id, while running.
    pub fn pid(&self) -> Option<u32> {
        self.proc.as_ref().and_then(|p| p.child.id())
    }

    async fn launch(&mut self) -> Result<(), EngineFault> {
        // The engine is named once, here; the message is the whole story of the failed start.
        let whom = format!(
            "cannot start engine `{}` ({})",
            self.spec.name,
            self.spec.command.display()
        );
        let startup = |msg: String| EngineFault::Startup(format!("{whom}: {msg}"));
        // A relative path with a folder part (`./eng`) means "from here", also when the engine
        // gets its own working directory (where the OS would otherwise look for it).
        let program = if self.spec.command.is_relative()
            && self.spec.command.components().count() > 1
        {
            std::path::absolute(&self.spec.command).unwrap_or_else(|_| self.spec.command.clone())
        } else {
            self.spec.command.clone()
        };
        let mut cmd = Command::new(&program);
        cmd.args(&self.spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        // stderr into a pipe of our own, drained by a thread (see [`StderrTail`]); our end of
        // the writing side goes with `cmd` at the end of this function.
        let stderr = match std::io::pipe() {
            Ok((reader, writer)) => {
                cmd.stderr(writer);
                StderrTail::drain(reader).ok()
            }
            Err(_) => {
                cmd.stderr(Stdio::null());
                None
            }
        };
        if let Some(dir) = &self.spec.working_dir {
            cmd.current_dir(dir);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| startup(format!("cannot run it: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(startup("no pipes to the process".into()));
        };
        self.proc = Some(Proc {
            child,
            stdin,
            out: LineReader::logged(stdout, self.log.clone()),
            stderr,
            blocking: None,
        });

        // An engine that exits at once (a wrong command, `/bin/true`) closes its input before or
        // while we write `uci`: that is an exit before answering, with its status.
        let limit = self.spec.ready_timeout;
        self.note_sent("uci");
        let p = self.proc.as_mut().expect("just started");
        let written = timeout(limit, async {
            p.stdin.write_all(b"uci\n").await?;
            p.stdin.flush().await
        })
        .await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                let status = self.reap().await;
                return Err(startup(format!("exited before answering `uci` ({status})")));
            }
            Err(_) => {
                self.kill().await;
                return Err(startup(format!("did not read `uci` within {limit:?}")));
            }
        }
        let deadline = Instant::now() + self.spec.handshake_timeout;
        let (mut id_name, mut id_author, mut opts) = (None, None, Vec::new());
        loop {
            let read = self.proc_mut()?.out.read(deadline).await;
            match read {
                Read::Line => {
                    let p = self.proc.as_ref().expect("running");
                    let text = p.out.text();
                    trace!(engine = %self.spec.name, "<< {text}");
                    match parse_line(&text) {
                        EngineLine::UciOk => break,
                        EngineLine::Id { key: "name", value } => id_name = Some(value.to_string()),
                        EngineLine::Id {
                            key: "author",
                            value,
                        } => id_author = Some(value.to_string()),
                        EngineLine::Option(line) => match options::parse_option_line(line) {
                            Some(o) => opts.push(o),
                            None => {
                                warn!(engine = %self.spec.name, "unreadable option line: {line}")
                            }
                        },
                        _ => {}
                    }
                }
                Read::Eof => {
                    let status = self.reap().await;
                    return Err(startup(format!("exited before answering `uci` ({status})")));
                }
                Read::Timeout => {
                    self.kill().await;
                    return Err(startup(format!(
                        "no `uciok` within {:?}",
                        self.spec.handshake_timeout
                    )));
                }
            }
        }
        self.id_name = id_name;
        self.id_author = id_author;
        self.options = OptionTable::new(opts);
        let ready = self.spec.ready_timeout;
        self.is_ready().await.map_err(|e| match e {
            EngineFault::Stalled { .. } => startup(format!("no `readyok` within {ready:?}")),
            e => startup(format!("{e}")),
        })?;
        debug!(engine = %self.spec.name, id = ?self.id_name, options = self.options.len(), "engine ready");
        Ok(())
    }

    /// A command about to be written, into the engine log.
    fn note_sent(&self, command: &str) {
        if let Some(log) = &self.log {
            log.lines(Direction::To, command);
        }
    }

    fn proc_mut(&mut self) -> Result<&mut Proc, EngineFault> {
        self.proc.as_mut().ok_or_else(|| {
            EngineFault::Disconnected(format!(
                "engine `{}` is not running (restart it)",
                self.spec.name
            ))
        })
    }

    /// Write one command line and flush it (within `ready_timeout`: an engine that stops reading
    /// its input must not block us).
    async fn send(&mut self, cmd: &str) -> Result<(), EngineFault> {
        self.buf.clear();
        self.buf.push_str(cmd);
        self.send_buf().await
    }

    /// Send the command in `self.buf` (one or more lines without the last newline) in one write.
    /// The buffer is reused: no allocation per command.
    async fn send_buf(&mut self) -> Result<(), EngineFault> {
        debug!(engine = %self.spec.name, ">> {}", self.buf);
        self.note_sent(&self.buf);
        let limit = self.spec.ready_timeout;
        self.buf.push('\n');
        let p = self.proc.as_mut().ok_or_else(|| {
            EngineFault::Disconnected(format!(
                "engine `{}` is not running (restart it)",
                self.spec.name
            ))
        })?;
        let line = self.buf.as_bytes();
        let write = async {
            p.stdin.write_all(line).await?;
            p.stdin.flush().await
        };
        let result = timeout(limit, write).await;
        self.buf.pop();
        match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                let status = self.reap().await;
                Err(EngineFault::Disconnected(format!(
                    "engine `{}`: cannot write `{}`: {e} ({status})",
                    self.spec.name, self.buf
                )))
            }
            Err(_) => {
                self.kill().await;
                Err(EngineFault::Disconnected(format!(
                    "engine `{}`: writing `{}` blocked for {limit:?}; killed",
                    self.spec.name, self.buf
                )))
            }
        }
    }

    /// After EOF or a write error: collect the exit status (briefly), drop the process.
    async fn reap(&mut self) -> String {
        let Some(mut p) = self.proc.take() else {
            return "not running".into();
        };
        let status = match timeout(Duration::from_millis(200), p.child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            _ => {
                let _ = timeout(Duration::from_secs(1), p.child.kill()).await;
                "closed its output; killed".into()
            }
        };
        let words = p
            .stderr
            .as_ref()
            .and_then(|t| t.last_words(Duration::from_millis(200)));
        match words {
            Some(words) => format!("{status}; its stderr ended with: {words}"),
            None => status,
        }
    }

    /// Kill the process (if running) and wait for it.
    pub async fn kill(&mut self) {
        if let Some(mut p) = self.proc.take() {
            debug!(engine = %self.spec.name, "killing");
            let _ = timeout(Duration::from_secs(2), p.child.kill()).await;
        }
    }

    /// `quit`, then kill if it is still running after the spec's `quit_timeout`.
    pub async fn quit(&mut self) {
        if self.proc.is_none() {
            return;
        }
        if self.send("quit").await.is_err() {
            return;
        }
        if let Some(mut p) = self.proc.take()
            && timeout(self.spec.quit_timeout, p.child.wait())
                .await
                .is_err()
        {
            debug!(engine = %self.spec.name, "did not quit; killing");
            let _ = timeout(Duration::from_secs(2), p.child.kill()).await;
        }
    }

    /// Kill whatever is left of the process, start it again, repeat the handshake and re-send
    /// every option set so far. Use after any fault whose `needs_restart()` is true.
    pub async fn restart(&mut self) -> Result<(), EngineFault> {
        self.kill().await;
        self.launch().await?;
        self.buf.clear();
        for (name, value) in &self.applied {
            push_setoption_line(&mut self.buf, name, value.as_deref());
        }
        if !self.buf.is_empty() {
            self.buf.pop(); // send_buf adds the last newline
            self.send_buf().await?;
        }
        self.is_ready().await
    }

    /// `isready` and wait for `readyok` within the spec's `ready_timeout`, discarding anything
    /// else (a late `bestmove`, stray `info`). No answer: the process is killed and the result is
    /// `Stalled { answered_stop: false }`.
    pub async fn is_ready(&mut self) -> Result<(), EngineFault> {
        self.send("isready").await?;
        let start = Instant::now();
        let deadline = start + self.spec.ready_timeout;
        loop {
            let read = self.proc_mut()?.out.read(deadline).await;
            match read {
                Read::Line => {
                    if parse_line(&self.proc_mut()?.out.text()) == EngineLine::ReadyOk {
                        return Ok(());
                    }
                }
                Read::Eof => return Err(self.disconnected("waiting for `readyok`").await),
                Read::Timeout => {
                    self.kill().await;
                    warn!(engine = %self.spec.name, "no readyok within {:?}; killed", self.spec.ready_timeout);
                    return Err(EngineFault::Stalled {
                        waited: start.elapsed(),
                        answered_stop: false,
                    });
                }
            }
        }
    }

    async fn disconnected(&mut self, doing: &str) -> EngineFault {
        let status = self.reap().await;
        EngineFault::Disconnected(format!(
            "engine `{}` closed its output while {doing} ({status})",
            self.spec.name
        ))
    }

    /// Check a configuration's wishes against the declared options without sending anything.
    pub fn validate_options<'a>(
        &self,
        wanted: impl IntoIterator<Item = (&'a str, &'a OptionValue)>,
    ) -> Result<(), OptionError> {
        options::validate(&self.spec.name, &self.options, wanted)
    }

    /// Validate and send one `setoption` (spin values rounded, names in the engine's spelling).
    /// Does not wait for the engine; follow with [`UciEngine::is_ready`] (or use `configure`).
    pub async fn set_option(
        &mut self,
        name: &str,
        value: impl Into<OptionValue>,
    ) -> Result<(), EngineError> {
        let (name, value) = options::resolve(&self.spec.name, &self.options, name, &value.into())?;
        self.buf.clear();
        push_setoption(&mut self.buf, &name, value.as_deref());
        self.send_buf().await?;
        self.note_applied(name, value);
        Ok(())
    }

    fn note_applied(&mut self, name: String, value: Option<String>) {
        match self.applied_at.get(&name) {
            Some(&i) => self.applied[i].1 = value,
            None => {
                self.applied_at.insert(name.clone(), self.applied.len());
                self.applied.push((name, value));
            }
        }
    }

    /// Whether the engine already has this value (a button is pressed every time).
    fn has_applied(&self, name: &str, value: &Option<String>) -> bool {
        value.is_some()
            && self
                .applied_at
                .get(name)
                .is_some_and(|&i| self.applied[i].1 == *value)
    }

    /// Validate every wish first (nothing is sent if one is bad), then send, in one write, every
    /// wish the engine does not already have, and wait for `readyok`. One write lets the pipe
    /// carry the lines as fast as the engine reads them: 50,000 options are one buffer, not
    /// 50,000 wake-ups of each side.
    pub async fn configure<'a>(
        &mut self,
        wanted: impl IntoIterator<Item = (&'a str, &'a OptionValue)>,
    ) -> Result<(), EngineError> {
        let mut resolved = Vec::new();
        for (name, value) in wanted {
            resolved.push(options::resolve(
                &self.spec.name,
                &self.options,
                name,
                value,
            )?);
        }
        self.buf.clear();
        let mut fresh = Vec::new();
        for (name, value) in resolved {
            if !self.has_applied(&name, &value) {
                push_setoption_line(&mut self.buf, &name, value.as_deref());
                fresh.push((name, value));
            }
        }
        if !self.buf.is_empty() {
            self.buf.pop(); // send_buf adds the last newline
            self.send_buf().await?;
        }
        for (name, value) in fresh {
            self.note_applied(name, value);
        }
        Ok(self.is_ready().await?)
    }

    /// `position` and `go` in one write: one syscall and one engine wake-up per move.
    fn compose_search(&mut self, start_fen: &str, moves: &[String], go: &GoCommand) {
        self.buf.clear();
        push_position(&mut self.buf, start_fen, moves);
        self.buf.push('\n');
        push_go(&mut self.buf, go);
    }

    /// One search through the runtime.
    async fn run_search(
        &mut self,
        start_fen: &str,
        moves: &[String],
        go: &GoCommand,
        deadline: Duration,
    ) -> Result<SearchReply, EngineFault> {
        self.proc_mut()?;
        self.compose_search(start_fen, moves, go);
        self.send_buf().await?;
        let start = Instant::now();
        let give_up = start + deadline;
        let mut progress = SearchProgress::default();
        loop {
            let p = self.proc_mut()?;
            match p.out.read(give_up).await {
                Read::Line => {
                    if let Some(reply) = progress.line(&p.out.text(), || start.elapsed()) {
                        return Ok(reply);
                    }
                }
                Read::Eof => return Err(self.disconnected("searching").await),
                Read::Timeout => {
                    return Err(self.stop_late_search(start.elapsed(), deadline).await);
                }
            }
        }
    }

    /// [`Player::search`] without the runtime: the command is written and the answer read by
    /// blocking this thread, so an evaluation costs us one `write`, and one `read` per batch of
    /// lines the engine writes, instead of the runtime's wake-ups. The deadline is kept by the
    /// process's [`Watchdog`]: `stop` when it passes, a kill after the grace.
    /// Only for a thread that serves this engine alone (the position evaluator's, an arena
    /// slot's): it blocks the runtime it runs on until the engine answers. Before a search, when
    /// [`YIELD_EVERY`] has passed since the last, the runtime gets a turn, so a caller that has
    /// gone (a shutdown abandoning the work) is seen within a search. Faults are as from
    /// `search`.
    pub async fn search_blocking(
        &mut self,
        start_fen: &str,
        moves: &[String],
        go: &GoCommand,
        deadline: Duration,
    ) -> Result<SearchReply, EngineFault> {
        let mut started = std::time::Instant::now();
        if started.duration_since(self.yielded) >= YIELD_EVERY {
            tokio::task::yield_now().await;
            started = std::time::Instant::now();
            self.yielded = started;
        }
        if self.proc_mut()?.blocking.is_none() {
            let p = self.proc.as_mut().expect("checked above");
            match BlockingOut::open(p, self.log.clone()) {
                Ok(b) => p.blocking = Some(b),
                Err(e) => {
                    debug!(engine = %self.spec.name, "no blocking reads ({e}); through the runtime");
                    return self.run_search(start_fen, moves, go, deadline).await;
                }
            }
        }
        self.compose_search(start_fen, moves, go);
        trace!(engine = %self.spec.name, ">> {}", self.buf);
        self.note_sent(&self.buf);
        self.buf.push('\n');
        let p = self.proc.as_mut().expect("checked above");
        let limit = started + self.spec.ready_timeout;
        let written = crate::platform::write_all_until(&p.stdin, self.buf.as_bytes(), limit);
        self.buf.pop();
        if let Err(e) = written {
            let status = self.reap().await;
            return Err(EngineFault::Disconnected(format!(
                "engine `{}`: cannot write `{}`: {e} ({status})",
                self.spec.name, self.buf
            )));
        }
        let p = self.proc.as_mut().expect("checked above");
        let out = p.blocking.as_mut().expect("opened above");
        out.watchdog
            .arm(started, started + deadline, stop_grace(deadline));
        if let Some(left) = self.pace.pause_left(go, started, std::time::Instant::now()) {
            // Its first `info` lines wait in the pipe and are read in one wake-up.
            std::thread::sleep(left);
        }
        let mut progress = SearchProgress::default();
        loop {
            match p.out.read_blocking(&mut out.pipe) {
                Read::Line => {
                    if let Some(reply) = progress.line(&p.out.text(), || started.elapsed()) {
                        return match out.watchdog.disarm() {
                            Verdict::InTime => {
                                self.pace.record(go, reply.elapsed);
                                Ok(reply)
                            }
                            Verdict::Stopped { after } | Verdict::Killed { after } => {
                                Err(EngineFault::Stalled {
                                    waited: after,
                                    answered_stop: true,
                                })
                            }
                        };
                    }
                }
                Read::Eof | Read::Timeout => {
                    if let Verdict::Killed { after } = out.watchdog.disarm() {
                        warn!(engine = %self.spec.name, waited = ?after, "ignored stop; killed");
                        self.kill().await;
                        return Err(EngineFault::Stalled {
                            waited: after,
                            answered_stop: false,
                        });
                    }
                    return Err(self.disconnected("searching").await);
                }
            }
        }
    }

    /// No `bestmove` within the deadline: ask the engine to stop and give it a short grace to
    /// answer; kill it if it does not.
    async fn stop_late_search(&mut self, waited: Duration, deadline: Duration) -> EngineFault {
        debug!(engine = %self.spec.name, ?waited, "deadline passed; sending stop");
        if let Err(e) = self.send("stop").await {
            return e;
        }
        let grace_end = Instant::now() + stop_grace(deadline);
        loop {
            let p = match self.proc_mut() {
                Ok(p) => p,
                Err(e) => return e,
            };
            match p.out.read(grace_end).await {
                Read::Line => {
                    if matches!(parse_line(&p.out.text()), EngineLine::BestMove { .. }) {
                        return EngineFault::Stalled {
                            waited,
                            answered_stop: true,
                        };
                    }
                }
                Read::Eof => return self.disconnected("stopping").await,
                Read::Timeout => {
                    warn!(engine = %self.spec.name, ?waited, "ignored stop; killed");
                    self.kill().await;
                    return EngineFault::Stalled {
                        waited,
                        answered_stop: false,
                    };
                }
            }
        }
    }
}

/// How long the searches of an engine without a clock (`go depth`, `go nodes`) took lately, so
/// that its reader can sleep through the first half of the next one instead of waking for every
/// `info` line the engine prints meanwhile (Stockfish prints one per iteration, each flushed: a
/// wake-up of our thread each, which is most of what a match costs us). Iterative deepening
/// prints most of its lines in a search's first half (each iteration takes about twice the
/// one before), and half of the shortest of the last searches ends before the engine answers
/// unless a search is twice as short as any of the last eight (a node or depth limit keeps a
/// search's length steady from one move to the next). Half, not a quarter: measured side by
/// side (match_speed, quiet machine), a quarter woke us 728 times a game, half 560, three
/// quarters 439 but cost 3% of wall time. Never on a clock or a movetime: there the time is
/// charged, and every line is read as it comes.
#[derive(Clone, Debug, Default)]
struct SearchPace {
    /// The last [`SearchPace::KEPT`] unclocked searches' lengths, as a ring.
    recent: [Duration; SearchPace::KEPT],
    /// How many were recorded (the ring's next slot is this modulo its length).
    seen: usize,
}

impl SearchPace {
    const KEPT: usize = 8;
    /// Shorter pauses are not worth a timer's wake-up.
    const SHORTEST: Duration = Duration::from_micros(500);

    fn unclocked(go: &GoCommand) -> bool {
        go.wtime_ms.is_none() && go.btime_ms.is_none() && go.movetime_ms.is_none()
    }

    fn record(&mut self, go: &GoCommand, took: Duration) {
        if Self::unclocked(go) {
            self.recent[self.seen % Self::KEPT] = took;
            self.seen += 1;
        }
    }

    /// How long to sleep before reading a search with these limits: half the shortest of
    /// the last [`SearchPace::KEPT`], once that many were seen; none on a clock or when short.
    fn pause(&self, go: &GoCommand) -> Option<Duration> {
        if !Self::unclocked(go) || self.seen < Self::KEPT {
            return None;
        }
        let half = *self.recent.iter().min()? / 2;
        (half >= Self::SHORTEST).then_some(half)
    }

    /// What is left at `now` of the pause of a search that started at `started`. The pause
    /// runs from the search's start, not from when the reader gets to sleep: the engine it
    /// woke often runs first, and a pause begun after that would outlast the search and leave
    /// the core idle until it ends.
    fn pause_left(
        &self,
        go: &GoCommand,
        started: std::time::Instant,
        now: std::time::Instant,
    ) -> Option<Duration> {
        let left = (started + self.pause(go)?).saturating_duration_since(now);
        (!left.is_zero()).then_some(left)
    }
}

/// How often a thread blocked in searches gives its runtime a turn (a visit costs the runtime a
/// poll of its I/O; a stop is seen that much later at most).
pub const YIELD_EVERY: Duration = Duration::from_millis(50);

/// How long an engine that overran its search deadline gets to answer `stop`.
fn stop_grace(deadline: Duration) -> Duration {
    (deadline / 4).clamp(Duration::from_millis(100), Duration::from_secs(1))
}

/// What a search has reported so far: the last score and depth of the main line (multipv 1),
/// the last node count.
#[derive(Default)]
struct SearchProgress {
    score: Option<Score>,
    depth: Option<u32>,
    nodes: Option<u64>,
}

impl SearchProgress {
    /// Take one engine line; the reply once it is `bestmove`.
    fn line(&mut self, text: &str, elapsed: impl FnOnce() -> Duration) -> Option<SearchReply> {
        match parse_search_line(text) {
            SearchLine::Info {
                multipv,
                depth,
                score,
                nodes,
            } => {
                if multipv.is_none_or(|m| m <= 1) {
                    self.score = score.or(self.score);
                    self.depth = depth.or(self.depth);
                }
                self.nodes = nodes.or(self.nodes);
                None
            }
            SearchLine::BestMove { best } => Some(SearchReply {
                best: match best {
                    Some(m) => BestMove::Move(m.to_string()),
                    None => BestMove::NoMove,
                },
                score: self.score,
                depth: self.depth,
                nodes: self.nodes,
                elapsed: elapsed(),
            }),
            SearchLine::Other => None,
        }
    }
}

impl Drop for UciEngine {
    fn drop(&mut self) {
        if let Some(p) = self.proc.as_mut() {
            // kill_on_drop would do it too; being explicit keeps the promise visible.
            let _ = p.child.start_kill();
        }
    }
}

impl Player for UciEngine {
    fn name(&self) -> &str {
        &self.spec.name
    }

    async fn new_game(&mut self) -> Result<(), EngineFault> {
        self.send("ucinewgame").await?;
        self.is_ready().await
    }

    /// See [`Player::search`]. After `Stalled { answered_stop: false }`, a `Disconnected`, or a
    /// `readyok` timeout, the process has been killed: call [`UciEngine::restart`]. Read by
    /// blocking the thread after [`UciEngine::block_searches`], else through the runtime.
    async fn search(
        &mut self,
        start_fen: &str,
        moves: &[String],
        go: &GoCommand,
        deadline: Duration,
    ) -> Result<SearchReply, EngineFault> {
        if self.blocking_searches {
            self.search_blocking(start_fen, moves, go, deadline).await
        } else {
            self.run_search(start_fen, moves, go, deadline).await
        }
    }
}

/// [`push_setoption`] and a newline.
fn push_setoption_line(buf: &mut String, name: &str, value: Option<&str>) {
    push_setoption(buf, name, value);
    buf.push('\n');
}

/// `setoption name <name> [value <value>]`.
pub fn push_setoption(buf: &mut String, name: &str, value: Option<&str>) {
    buf.push_str("setoption name ");
    buf.push_str(name);
    if let Some(v) = value {
        buf.push_str(" value ");
        buf.push_str(v);
    }
}

/// `position startpos|fen <fen> [moves ...]`; `start_fen` may be `startpos`.
pub fn push_position(buf: &mut String, start_fen: &str, moves: &[String]) {
    let fen = start_fen.trim();
    if fen == "startpos" {
        buf.push_str("position startpos");
    } else {
        buf.push_str("position fen ");
        buf.push_str(fen);
    }
    if !moves.is_empty() {
        buf.push_str(" moves");
        for m in moves {
            buf.push(' ');
            buf.push_str(m);
        }
    }
}

/// `go` with the limits that are set, in the order UCI lists them.
pub fn push_go(buf: &mut String, go: &GoCommand) {
    use std::fmt::Write;
    buf.push_str("go");
    let fields: [(&str, Option<u64>); 8] = [
        ("wtime", go.wtime_ms),
        ("btime", go.btime_ms),
        ("winc", go.winc_ms),
        ("binc", go.binc_ms),
        ("movestogo", go.movestogo.map(u64::from)),
        ("depth", go.depth.map(u64::from)),
        ("nodes", go.nodes),
        ("movetime", go.movetime_ms),
    ];
    for (key, value) in fields {
        if let Some(v) = value {
            let _ = write!(buf, " {key} {v}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn partial_line_survives_a_deadline() {
        let (mut w, r) = tokio::io::duplex(1 << 16);
        let mut rd = LineReader::new(r);
        w.write_all(b"info dep").await.unwrap();
        let soon = Instant::now() + Duration::from_millis(30);
        assert!(matches!(rd.read(soon).await, Read::Timeout));
        w.write_all(b"th 5\r\nbestmove e2e4\n").await.unwrap();
        let later = Instant::now() + Duration::from_secs(1);
        assert!(matches!(rd.read(later).await, Read::Line));
        assert_eq!(rd.text(), "info depth 5\r");
        assert!(matches!(rd.read(later).await, Read::Line));
        assert_eq!(rd.text(), "bestmove e2e4");
        // An overlong line is truncated, and the next line is intact.
        let long = vec![b'x'; MAX_LINE + 10];
        let writer = tokio::spawn(async move {
            w.write_all(&long).await.unwrap();
            w.write_all(b"\nreadyok\n").await.unwrap();
            w
        });
        assert!(matches!(rd.read(later).await, Read::Line));
        assert_eq!(rd.bytes().len(), MAX_LINE);
        assert!(matches!(rd.read(later).await, Read::Line));
        assert_eq!(rd.text(), "readyok");
        drop(writer.await.unwrap());
        assert!(matches!(rd.read(later).await, Read::Eof));
    }

    #[tokio::test]
    async fn lines_are_read_in_place_or_carried_across_reads() {
        let (mut w, r) = tokio::io::duplex(1 << 16);
        let mut rd = LineReader::new(r);
        let later = Instant::now() + Duration::from_secs(1);
        w.write_all(b"info depth 1\ninfo \xff depth 2\nbestm")
            .await
            .unwrap();
        assert!(matches!(rd.read(later).await, Read::Line));
        assert_eq!(rd.text(), "info depth 1");
        assert!(rd.in_buf.is_some() && rd.line.is_empty(), "not copied");
        assert!(matches!(rd.read(later).await, Read::Line));
        assert_eq!(
            rd.text(),
            "info \u{fffd} depth 2",
            "invalid UTF-8 is replaced"
        );
        // The rest of a line that began in the previous read.
        w.write_all(b"ove e2e4\n\nreadyok\n").await.unwrap();
        assert!(matches!(rd.read(later).await, Read::Line));
        assert_eq!(rd.text(), "bestmove e2e4");
        assert!(rd.in_buf.is_none(), "carried");
        assert!(matches!(rd.read(later).await, Read::Line));
        assert_eq!(rd.text(), "", "an empty line");
        assert!(matches!(rd.read(later).await, Read::Line));
        assert_eq!(rd.text(), "readyok");
        drop(w);
        assert!(matches!(rd.read(later).await, Read::Eof));
    }

    // Two workers: the blocking read holds one while the writer runs on the other.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn blocking_and_runtime_reads_share_one_buffer() {
        let (mut w, r) = crate::platform::pipe().unwrap();
        // The blocking handle, opened as `BlockingOut` opens it: the same pipe, its own flags.
        let mut pipe = crate::platform::blocking_reader(&r).unwrap();
        let mut rd = LineReader::new(r);
        w.write_all(b"info dep").await.unwrap();
        // A partial line stays buffered while the blocking read waits for the rest.
        let rest = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            w.write_all(b"th 5\r\nbestmove e2e4\nreadyok\npartial")
                .await
                .unwrap();
            w
        });
        assert!(matches!(rd.read_blocking(&mut pipe), Read::Line));
        assert_eq!(rd.text(), "info depth 5\r");
        let mut w = rest.await.unwrap();
        // The bytes the blocking read buffered are the runtime read's next line, and back.
        assert!(matches!(
            rd.read(Instant::now() + Duration::from_secs(5)).await,
            Read::Line
        ));
        assert_eq!(rd.text(), "bestmove e2e4");
        assert!(matches!(rd.read_blocking(&mut pipe), Read::Line));
        assert_eq!(rd.text(), "readyok");
        w.write_all(b" line\n").await.unwrap();
        assert!(matches!(rd.read_blocking(&mut pipe), Read::Line));
        assert_eq!(rd.text(), "partial line");
        drop(w);
        assert!(matches!(rd.read_blocking(&mut pipe), Read::Eof));
    }

    #[test]
    fn unclocked_searches_pause_for_half_the_shortest_recent_one() {
        let nodes = GoCommand {
            nodes: Some(5000),
            ..GoCommand::default()
        };
        let clock = GoCommand {
            wtime_ms: Some(1000),
            btime_ms: Some(1000),
            ..GoCommand::default()
        };
        let movetime = GoCommand {
            movetime_ms: Some(100),
            ..GoCommand::default()
        };
        let ms = Duration::from_millis;
        let mut pace = SearchPace::default();
        for i in 0..SearchPace::KEPT as u64 {
            assert_eq!(
                pace.pause(&nodes),
                None,
                "not before {} searches",
                SearchPace::KEPT
            );
            pace.record(&nodes, ms(4 + i));
            // Clocked searches are neither paused nor counted.
            pace.record(&clock, ms(1));
        }
        assert_eq!(pace.pause(&nodes), Some(ms(2)));
        assert_eq!(pace.pause(&clock), None);
        assert_eq!(pace.pause(&movetime), None);
        // One short search shortens the pause; it is forgotten after KEPT more.
        pace.record(&nodes, ms(3));
        assert_eq!(pace.pause(&nodes), Some(Duration::from_micros(1500)));
        for _ in 0..SearchPace::KEPT {
            pace.record(&nodes, ms(10));
        }
        assert_eq!(pace.pause(&nodes), Some(Duration::from_micros(5000)));
        // Searches too short to be worth a timer: no pause.
        for _ in 0..SearchPace::KEPT {
            pace.record(&nodes, Duration::from_micros(900));
        }
        assert_eq!(pace.pause(&nodes), None);
    }

    #[test]
    fn a_pause_ends_its_length_after_the_search_started_not_after_the_reader_got_to_sleep() {
        let nodes = GoCommand {
            nodes: Some(5000),
            ..GoCommand::default()
        };
        let ms = Duration::from_millis;
        let mut pace = SearchPace::default();
        for _ in 0..SearchPace::KEPT {
            pace.record(&nodes, ms(8));
        }
        let started = std::time::Instant::now();
        assert_eq!(pace.pause_left(&nodes, started, started), Some(ms(4)));
        // The reader ran 3 ms after writing `go` (the engine it woke ran first): 1 ms is left.
        assert_eq!(
            pace.pause_left(&nodes, started, started + ms(3)),
            Some(ms(1))
        );
        // Later than the pause: no sleep at all.
        assert_eq!(pace.pause_left(&nodes, started, started + ms(4)), None);
        assert_eq!(pace.pause_left(&nodes, started, started + ms(30)), None);
        let clock = GoCommand {
            wtime_ms: Some(1000),
            btime_ms: Some(1000),
            ..GoCommand::default()
        };
        assert_eq!(pace.pause_left(&clock, started, started), None);
    }

    #[test]
    fn commands_are_composed_exactly() {
        let mut b = String::new();
        push_position(&mut b, "startpos", &[]);
        assert_eq!(b, "position startpos");
        b.clear();
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        push_position(&mut b, fen, &["e2e4".into(), "e7e5".into()]);
        assert_eq!(b, format!("position fen {fen} moves e2e4 e7e5"));
        b.clear();
        push_go(
            &mut b,
            &GoCommand {
                wtime_ms: Some(1000),
                btime_ms: Some(900),
                winc_ms: Some(10),
                binc_ms: Some(10),
                movestogo: Some(40),
                depth: Some(300),
                nodes: Some(5000),
                movetime_ms: None,
            },
        );
        assert_eq!(
            b,
            "go wtime 1000 btime 900 winc 10 binc 10 movestogo 40 depth 300 nodes 5000"
        );
        b.clear();
        push_go(&mut b, &GoCommand::default());
        assert_eq!(b, "go");
        for v in [0, 1, 9, 10, 99, 100, 12_345, u64::MAX] {
            b.clear();
            push_go(
                &mut b,
                &GoCommand {
                    nodes: Some(v),
                    ..GoCommand::default()
                },
            );
            assert_eq!(b, format!("go nodes {v}"));
        }
        b.clear();
        push_setoption(&mut b, "Pawn Structure (Endgame)", Some("120"));
        assert_eq!(b, "setoption name Pawn Structure (Endgame) value 120");
        b.clear();
        push_setoption(&mut b, "Clear Hash", None);
        assert_eq!(b, "setoption name Clear Hash");
    }
}
