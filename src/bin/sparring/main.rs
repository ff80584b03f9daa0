//! Sparring: a small UCI chess engine bundled with `spsa`.
//!
//! Its evaluation weights are UCI spin options, so the tuner has something
//! real to tune out of the box, and the test suite does not depend on any
//! installed engine. It uses only `shakmaty` and `std`, and nothing from the
//! `spsa` library.
//!
//! ```text
//! cargo build --release --bin sparring
//! printf 'uci\nposition startpos moves e2e4\ngo depth 6\n' | target/release/sparring
//! ```
//!
//! Besides the standard commands it understands `help`, which lists the
//! evaluation options with their meaning as `info string` lines, and `eval`,
//! which prints the static evaluation of the current position as
//! `info string eval cp <side to move's cp> white <White's unrounded score in
//! 1/19200 cp>`.
//!
//! `sparring coefficients IN.epd OUT.coef` writes the static evaluation of
//! every labelled position as a linear function of the options, in `spsa`'s
//! coefficient file format (see [`export`]), for exact-gradient tuning.
//!
//! Search: iterative deepening PVS with quiescence, a transposition table
//! (`Hash`), killers, history, null move and late move reductions. With a
//! depth or node limit the result is deterministic: same position, options
//! and limit give the same move and node count.
//!
//! Modules: [`eval`] (weights and static evaluation), [`search`], [`uci`]
//! (protocol loop; the search runs on its own thread).

mod eval;
mod export;
mod search;
mod uci;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("coefficients") {
        std::process::exit(export::run(&args[1..]));
    }
    uci::run();
}
