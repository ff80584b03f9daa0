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
//! `sparring --pst` also declares its piece-square tables as 736 spin options
//! (`PstKnightMgE4`: table, square from the piece's own side), for tunes of many
//! parameters; `--extra-options N` adds N options `Extra1`… that change nothing,
//! for measuring what sending many options costs.
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

//!
//! This library is the engine; the `sparring` binary (`main.rs` beside it) only calls [`main`].
//! It is a package of its own (`Cargo.toml` beside it) so that the dev profile builds it at the
//! dependencies' opt-level, not at the `spsa` crate's 1: the tests' matches spend most of their
//! CPU in its search (docs/records/development.md, "CI: the tests' CPU").

mod eval;
mod export;
mod search;
mod uci;

/// The `sparring` command: its arguments from the process, then the UCI loop (or the
/// coefficient export).
pub fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("coefficients") {
        std::process::exit(export::run(&args[1..]));
    }
    match declarations(&args) {
        Ok((pst, extra)) => eval::set_catalog(pst, extra),
        Err(e) => {
            eprintln!(
                "sparring: {e}\nusage: sparring [--pst] [--extra-options N] | sparring coefficients IN.epd OUT.coef"
            );
            std::process::exit(2);
        }
    }
    uci::run();
}

/// `--pst` (the piece-square tables as 736 options) and `--extra-options N` (N options that
/// change nothing, for measuring what many options cost).
fn declarations(args: &[String]) -> Result<(bool, usize), String> {
    let (mut pst, mut extra) = (false, 0);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--pst" => pst = true,
            "--extra-options" => {
                let n = it.next().ok_or("--extra-options needs a count")?;
                extra = n
                    .parse()
                    .map_err(|_| format!("--extra-options: `{n}` is not a count"))?;
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok((pst, extra))
}
