//! Standard output for every command. Results go through [`write`] (or the [`out!`] and
//! [`outln!`] macros), never `print!`: a reader that stops early (`spsa report LOG | head -1`)
//! closes the pipe, and `print!` panics on that. Here a closed pipe becomes [`PipeClosed`], an
//! error the exit policy treats as a quiet end with status 0, as ripgrep does.

use std::fmt;
use std::io::{self, Write};

/// Standard output was closed by its reader: not a failure, the command just ends.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed")]
pub struct PipeClosed;

/// Not a failure at all: the command ends quietly with status 0 (see `cli::exit`).
impl crate::error::UserFacing for PipeClosed {
    fn is_user_error(&self) -> bool {
        false
    }
}

/// Write to standard output and flush, so a whole line or table leaves in one piece before the
/// command goes on (a kill after this never leaves half a record).
pub fn write(args: fmt::Arguments<'_>) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    written(out.write_fmt(args).and_then(|()| out.flush()))
}

/// [`write`] for bytes: a stream of many lines (`spsa report --format history`) goes out in
/// blocks of whole lines.
pub fn write_bytes(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    written(out.write_all(bytes).and_then(|()| out.flush()))
}

fn written(result: io::Result<()>) -> anyhow::Result<()> {
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(PipeClosed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to standard output")),
    }
}

/// `print!` that returns an error instead of panicking (see the module's docs).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write(format_args!($($arg)*)) };
}

/// `println!` that returns an error instead of panicking (see the module's docs).
#[macro_export]
macro_rules! outln {
    () => { $crate::output::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Whether an error is a closed standard output (exit 0, nothing printed).
pub fn is_pipe_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<PipeClosed>())
}

/// A panic is a bug in `spsa`: say so in one line with the version, then let the default hook
/// print its message (and a backtrace when RUST_BACKTRACE asks). Exit status 101.
pub fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        eprintln!(
            "spsa {}: this is a bug, please report it (with the message below and the command you ran)",
            env!("CARGO_PKG_VERSION")
        );
        default(info);
    }));
}
