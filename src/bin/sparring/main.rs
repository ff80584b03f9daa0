//! Sparring: a small UCI chess engine bundled with `spsa`.
//!
//! Its evaluation weights are UCI spin options, so the tuner has something
//! real to tune out of the box, and the test suite does not depend on any
//! installed engine. It uses only `shakmaty` and `std`, and nothing from the
//! `spsa` library.

mod eval;
mod search;
mod uci;

fn main() {
    uci::run();
}
