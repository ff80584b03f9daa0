//! `spsa positions GAMES.pgn... -o OUT.epd`: labelled positions from games (which positions:
//! [`crate::positions::extract`]). Every input is read and checked before anything is written;
//! outputs are written atomically.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::error::UserError;
use crate::positions::LabelledPositions;
use crate::positions::extract::{ExtractOptions, extract};

/// The command's flags.
#[derive(clap::Args, Debug, Clone)]
pub struct PositionsArgs {
    /// PGN files to read.
    #[arg(required = true, value_name = "GAMES.pgn")]
    pub games: Vec<PathBuf>,
    /// Write the labelled positions here (`<EPD> c9 "1-0";` lines).
    #[arg(short = 'o', long = "out", value_name = "OUT.epd")]
    pub out: PathBuf,
    /// Skip this many plies at the start of every game (the book).
    #[arg(long, default_value_t = ExtractOptions::default().skip_plies)]
    pub skip_plies: usize,
    /// At most this many positions per game.
    #[arg(long, default_value_t = ExtractOptions::default().per_game)]
    pub per_game: usize,
    /// Plies dropped from the end of adjudicated games.
    #[arg(long, default_value_t = ExtractOptions::default().adjudicated_tail)]
    pub adjudicated_tail: usize,
    /// Keep the last plies of adjudicated games too.
    #[arg(long)]
    pub keep_adjudicated_tail: bool,
    /// Seed of the per-game draws and of the validation split.
    #[arg(long, default_value_t = ExtractOptions::default().seed)]
    pub seed: u64,
    /// Write the validation positions here.
    #[arg(long, requires = "validation_fraction", value_name = "FILE")]
    pub validation_out: Option<PathBuf>,
    /// The fraction of games whose positions go to --validation-out.
    #[arg(long, requires = "validation_out", value_name = "F")]
    pub validation_fraction: Option<f64>,
    /// Leave out a game whose start and moves repeat an earlier game's (self-play of a
    /// deterministic engine repeats every pair's game).
    #[arg(long)]
    pub distinct_games: bool,
}

impl PositionsArgs {
    fn options(&self) -> ExtractOptions {
        ExtractOptions {
            skip_plies: self.skip_plies,
            per_game: self.per_game,
            adjudicated_tail: self.adjudicated_tail,
            keep_adjudicated_tail: self.keep_adjudicated_tail,
            seed: self.seed,
            validation_fraction: self.validation_fraction.unwrap_or(0.0),
            distinct_games: self.distinct_games,
        }
    }
}

/// Read every PGN, extract, write the outputs, summarise on stderr.
pub fn command(args: &PositionsArgs) -> Result<()> {
    let mut inputs = Vec::with_capacity(args.games.len());
    for p in &args.games {
        let bytes = std::fs::read(p)
            .map_err(|e| UserError(format!("{}: cannot read: {e}", p.display())))?;
        inputs.push((p.clone(), bytes));
    }
    let found = extract(&inputs, &args.options())?;
    if found.train.is_empty() {
        return Err(UserError(format!(
            "no positions extracted from {} games ({} without a result): nothing written",
            found.games, found.unfinished
        ))
        .into());
    }
    write_set(&args.out, &found.train)?;
    if let Some(v) = &args.validation_out {
        write_set(v, &found.validation)?;
    }
    eprintln!(
        "{} games ({} without a result{}): {} positions to {}{}, {} duplicates dropped",
        found.games,
        found.unfinished,
        if args.distinct_games {
            format!(", {} repeating an earlier one", found.repeated_games)
        } else {
            String::new()
        },
        found.train.len(),
        args.out.display(),
        match &args.validation_out {
            Some(v) => format!(", {} to {}", found.validation.len(), v.display()),
            None => String::new(),
        },
        found.duplicates
    );
    Ok(())
}

fn write_set(path: &Path, set: &LabelledPositions) -> Result<()> {
    let mut bytes = Vec::with_capacity(set.len() * 80);
    set.write_epd(&mut bytes)?;
    crate::tuner::checkpoint::write_atomically(path, &bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: PositionsArgs,
    }

    #[test]
    fn writes_nothing_on_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let pgn = dir.path().join("bad.pgn");
        std::fs::write(&pgn, "[Result \"1-0\"]\n\n1. e4 e5 2. Ke3 1-0\n").unwrap();
        let out = dir.path().join("out.epd");
        let mut a = Cli::parse_from(["spsa", "g.pgn", "-o", "out.epd"]).args;
        a.games = vec![pgn];
        a.out = out.clone();
        let e = command(&a).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("bad.pgn:1") && msg.contains("illegal move"),
            "{msg}"
        );
        assert!(!out.exists());
        // A good file: written, and it reads back.
        let good = dir.path().join("good.pgn");
        std::fs::write(
            &good,
            "[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 1-0\n",
        )
        .unwrap();
        a.games = vec![good];
        command(&a).unwrap();
        let back = LabelledPositions::load(&out).unwrap();
        assert!(!back.is_empty());
    }
}
