//! Sparring: a small UCI chess engine bundled with `spsa` (the engine is the library beside
//! this file, `lib.rs`; see its documentation).

// The engine's unit tests run in this binary's test harness, as they did before the engine
// became a library: its modules are compiled here for the tests only.
#![cfg_attr(test, allow(dead_code))]
#[cfg(test)]
mod eval;
#[cfg(test)]
mod export;
#[cfg(test)]
mod search;
#[cfg(test)]
mod uci;

fn main() {
    sparring_engine::main();
}
