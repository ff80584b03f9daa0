//! The `spsa` binary: parse the command line, start the runtime, run the command, map the error
//! to an exit status (`spsa::cli::exit`, the one exit policy). The commands are in `spsa::cli`.

use std::process::ExitCode;

use clap::Parser;
use spsa::cli::{Cli, dispatch};

fn main() -> ExitCode {
    spsa::output::install_panic_hook();
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    // One thread: our work per engine line is tiny, and a single-threaded scheduler avoids the
    // cross-thread wake-ups that dominated our CPU time with engines printing many lines.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("spsa: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let done = runtime.block_on(dispatch(cli.command));
    // A blocking task still under way (a name lookup of a server that is gone) must not hold
    // up the exit after a stop.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    spsa::cli::exit::status(done)
}
