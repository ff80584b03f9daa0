//! Every call into the operating system, behind one small interface: pipes and their blocking
//! reads and writes, process groups and kills, signals, CPU affinity and time slices, CPU
//! clocks, open-file limits, file modes, positioned reads and the fsync of a folder.
//!
//! This is the one place a port to another OS implements: each function below forwards to the
//! OS's own file (`unix.rs` today, chosen by `#[cfg]`), and no other file of `src/` calls the
//! OS (`tests/layers.rs` fails, naming file and line, on `libc`, `std::os`, `tokio::signal`,
//! `/proc` or a `cfg` on the OS anywhere else). What each function must do for a port:
//! docs/development.md, "Porting to another OS". The module knows nothing of UCI, chess or
//! SPSA, and imports nothing of the crate.

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;

#[cfg(not(unix))]
compile_error!(
    "no platform module for this OS: see docs/development.md, \"Porting to another OS\""
);

// Pipes.

/// Anything holding an open pipe's OS handle (a child's stdin or stdout, an end of [`pipe`]):
/// what the pipe functions take. On Unix, a file descriptor.
pub trait Pipe: os::Handle {}
impl<T: os::Handle> Pipe for T {}

/// A pipe whose two ends the async runtime writes and reads (for tests of what reads pipes).
pub fn pipe() -> io::Result<(
    impl tokio::io::AsyncWrite + Unpin + Send + 'static,
    impl tokio::io::AsyncRead + Pipe + Unpin + Send + 'static,
)> {
    os::pipe()
}

/// The read end `pipe` opened a second time, for blocking reads: the same pipe, with flags of
/// its own (the runtime's handle is non-blocking). Bytes are read from one pipe, by whichever
/// handle asks first. An error where the OS offers no such handle: the caller then reads
/// through the runtime.
pub fn blocking_reader(pipe: &impl Pipe) -> io::Result<File> {
    os::blocking_reader(pipe)
}

/// A second handle on the write end `pipe`, for another thread to write to the same pipe.
pub fn clone_writer(pipe: &impl Pipe) -> io::Result<File> {
    os::clone_writer(pipe)
}

/// Write all of `bytes` to the write end `pipe` (which the runtime holds non-blocking) from
/// this thread, waiting for room until `deadline`: `TimedOut` when it passes, `BrokenPipe`
/// when the reader has gone.
pub fn write_all_until(pipe: &impl Pipe, bytes: &[u8], deadline: Instant) -> io::Result<()> {
    os::write_all_until(pipe, bytes, deadline)
}

// Processes.

/// Start `cmd`'s process as the leader of a process group of its own, so that
/// [`kill_group`] ends it with every process it starts.
pub fn own_process_group(cmd: &mut tokio::process::Command) {
    os::own_process_group(cmd)
}

/// Kill process `pid` at once (SIGKILL on Unix); nothing when it has gone.
pub fn kill(pid: u32) {
    os::kill(pid)
}

/// Kill the process group led by `pid` (see [`own_process_group`]) at once.
pub fn kill_group(pid: u32) {
    os::kill_group(pid)
}

/// Whether a process with this id exists on this machine, whoever's it is (one that has ended
/// but is not yet reaped counts).
pub fn process_exists(pid: u32) -> bool {
    os::process_exists(pid)
}

/// Whether process `pid` has ended: gone, or ended and waiting to be reaped (a zombie).
pub fn process_ended(pid: u32) -> bool {
    os::process_ended(pid)
}

/// This machine's name (empty when it cannot be read).
pub fn host_name() -> String {
    os::host_name()
}

// Signals.

/// Resolves when the user presses Ctrl-C (SIGINT).
pub async fn ctrl_c() {
    os::ctrl_c().await
}

/// Resolves on Ctrl-C (SIGINT) or a request to terminate (SIGTERM).
pub async fn ctrl_c_or_terminate() {
    os::ctrl_c_or_terminate().await
}

// CPUs and time.

/// The CPUs this process may run on, in ascending order (empty where it cannot be asked).
pub fn allowed_cpus() -> Vec<usize> {
    os::allowed_cpus()
}

/// Bind the calling thread to `cpus`; threads and processes it starts afterwards inherit the
/// binding. `Unsupported` where the OS cannot bind.
pub fn bind_this_thread(cpus: &[usize]) -> io::Result<()> {
    os::bind_this_thread(cpus)
}

/// Ask the scheduler for time slices of `slice` for the calling thread, keeping its policy and
/// priority; processes it starts afterwards keep the default. False where the OS does not
/// offer it (nothing changes then).
pub fn ask_for_time_slice(slice: Duration) -> bool {
    os::ask_for_time_slice(slice)
}

/// Whose CPU time [`cpu_time`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The calling thread's.
    Thread,
    /// This process's, all its threads.
    Process,
}

/// CPU time spent so far by the calling thread or by this process (zero where it cannot be
/// read): what a piece of work costs, whatever else the machine runs.
pub fn cpu_time(clock: Clock) -> Duration {
    os::cpu_time(clock)
}

// Files.

/// This process's limit on open files: (soft, hard). None where there is no such limit or it
/// cannot be read.
pub fn open_files_limit() -> Option<(u64, u64)> {
    os::open_files_limit()
}

/// Set the soft limit on open files (at most the hard one).
pub fn set_open_files_limit(soft: u64) -> io::Result<()> {
    os::set_open_files_limit(soft)
}

/// Let everyone read and run `file`, its owner write it (mode 0755); nothing where files carry
/// no such mode.
pub fn make_executable(file: &File) -> io::Result<()> {
    os::make_executable(file)
}

/// Fill `out` with the bytes of `file` from byte `at`, without moving (or needing) a shared
/// cursor: `UnexpectedEof` when the file ends first.
pub fn read_exact_at(file: &File, out: &mut [u8], at: u64) -> io::Result<()> {
    os::read_exact_at(file, out, at)
}

/// Make a rename or creation in folder `dir` durable (fsync of the folder).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    os::sync_dir(dir)
}
