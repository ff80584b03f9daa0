//! `spsa positions GAMES.pgn... -o OUT.epd`: labelled positions from games (see
//! [`crate::positions::extract`]).

use anyhow::Result;

pub fn command(args: &crate::positions::extract::PositionsArgs) -> Result<()> {
    crate::positions::extract::run(args)
}
