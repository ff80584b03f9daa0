//! `spsa positions GAMES.pgn... -o OUT.epd`: labelled positions from finished games (ours from
//! `spsa match --pgn`, or anyone's), labelled with the game's result from White's side.
//!
//! Per game: the positions after each ply from `--skip-plies` on (book moves are not the engines'
//! choices), except positions in check (a static score is meaningless there), positions with no
//! legal move, and — for adjudicated games (`Termination "adjudication"`) — the last
//! `--adjudicated-tail` plies, unless `--keep-adjudicated-tail`. Games without a result (`*`) are
//! skipped. At most `--per-game N` positions per game are drawn (seeded), and a position already
//! taken (same placement, side, castling, en passant) is never taken twice. With
//! `--validation-out FILE --validation-fraction F`, a seeded fraction F of the *games* goes to the
//! validation file, so no game feeds both sets. With `--distinct-games`, a game whose start
//! position and moves repeat an earlier game's is left out whole (a deterministic engine playing
//! itself plays both games of a pair alike; keeping both would weight that game twice and could
//! put one copy in each set).
//!
//! Every input is read and checked before anything is written; outputs are written atomically.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use super::labelled::{LabelledPositions, Outcome};
use crate::error::UserError;
use crate::game::book::read_pgn_games;

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
    #[arg(long, default_value_t = 8)]
    pub skip_plies: usize,
    /// At most this many positions per game.
    #[arg(long, default_value_t = 10)]
    pub per_game: usize,
    /// Plies dropped from the end of adjudicated games.
    #[arg(long, default_value_t = 10)]
    pub adjudicated_tail: usize,
    /// Keep the last plies of adjudicated games too.
    #[arg(long)]
    pub keep_adjudicated_tail: bool,
    /// Seed of the per-game draws and of the validation split.
    #[arg(long, default_value_t = 1)]
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

/// What an extraction found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    pub train: LabelledPositions,
    pub validation: LabelledPositions,
    pub games: usize,
    /// Games without a result.
    pub unfinished: usize,
    /// Candidate positions dropped because an equal one was taken already.
    pub duplicates: usize,
    /// Games left out whole by `--distinct-games`.
    pub repeated_games: usize,
}

/// Extract labelled positions from PGN texts (`(name, bytes)` pairs) as the flags say.
pub fn extract(inputs: &[(PathBuf, Vec<u8>)], args: &PositionsArgs) -> Result<Extracted> {
    let fraction = args.validation_fraction.unwrap_or(0.0);
    if !(0.0..1.0).contains(&fraction) {
        return Err(UserError(format!(
            "--validation-fraction must be in [0, 1), not {fraction}"
        ))
        .into());
    }
    let mut out = Extracted::default();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut games_seen: HashSet<(u64, Vec<shakmaty::Move>)> = HashSet::new();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    for (path, bytes) in inputs {
        // Each game with its own rules: Chess960 games replay from their FEN with Chess960
        // castling.
        read_pgn_games(path, bytes, None, None, |game| {
            out.games += 1;
            let outcome = match game.result.as_deref().map(str::trim) {
                Some("1-0") => Outcome::WhiteWins,
                Some("0-1") => Outcome::BlackWins,
                Some("1/2-1/2") => Outcome::Draw,
                _ => {
                    out.unfinished += 1;
                    return Ok(());
                }
            };
            if args.distinct_games {
                let start: Zobrist64 = game.start.zobrist_hash(EnPassantMode::Legal);
                if !games_seen.insert((start.0, game.moves.clone())) {
                    out.repeated_games += 1;
                    return Ok(());
                }
            }
            let to_validation = rng.random::<f64>() < fraction;
            let adjudicated = game
                .termination
                .as_deref()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("adjudication"));
            let plies = game.moves.len();
            let end = if adjudicated && !args.keep_adjudicated_tail {
                plies.saturating_sub(args.adjudicated_tail)
            } else {
                plies
            };
            // Positions after ply p (p = 1..=plies), for p in [skip + 1, end].
            let mut pos = game.start.clone();
            let mut candidates: Vec<Chess> = Vec::new();
            for (i, m) in game.moves.iter().enumerate() {
                pos.play_unchecked(*m);
                let ply = i + 1;
                if ply <= args.skip_plies || ply > end {
                    continue;
                }
                if pos.is_check() || pos.legal_moves().is_empty() {
                    continue;
                }
                candidates.push(pos.clone());
            }
            candidates.shuffle(&mut rng);
            let target = if to_validation {
                &mut out.validation
            } else {
                &mut out.train
            };
            let mut taken = 0;
            for c in candidates {
                if taken >= args.per_game {
                    break;
                }
                let c = standard_castling(c);
                let key: Zobrist64 = c.zobrist_hash(EnPassantMode::Legal);
                if !seen.insert(key.0) {
                    out.duplicates += 1;
                    continue;
                }
                target
                    .push(&c, outcome)
                    .map_err(|e| crate::game::BookError::Invalid {
                        path: path.clone(),
                        line: game.line,
                        message: e.to_string(),
                    })?;
                taken += 1;
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// `pos` with standard castling, as labelled-position files hold it: a Chess960 position whose
/// castling rights read the same in standard chess keeps them; one whose rights need Chess960
/// (a king off e1, a rook off the corner) loses them, which no static evaluation of the
/// position misses.
fn standard_castling(pos: Chess) -> Chess {
    if pos.castles().mode() == CastlingMode::Standard {
        return pos;
    }
    let mut setup = pos.to_setup(EnPassantMode::Legal);
    if let Ok(p) = setup.clone().position(CastlingMode::Standard) {
        return p;
    }
    setup.castling_rights = shakmaty::Bitboard::EMPTY;
    setup.position(CastlingMode::Standard).unwrap_or(pos)
}

/// Run the command: read every PGN, extract, write the outputs, summarise on stderr.
pub fn run(args: &PositionsArgs) -> Result<()> {
    let mut inputs = Vec::with_capacity(args.games.len());
    for p in &args.games {
        let bytes = std::fs::read(p)
            .map_err(|e| UserError(format!("{}: cannot read: {e}", p.display())))?;
        inputs.push((p.clone(), bytes));
    }
    let found = extract(&inputs, args)?;
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

    fn args(extra: &[&str]) -> PositionsArgs {
        let mut v = vec!["spsa", "g.pgn", "-o", "out.epd"];
        v.extend_from_slice(extra);
        Cli::parse_from(v).args
    }

    /// Two decisive games, one adjudicated, one unfinished; the same opening in each.
    const PGN: &str = r#"[Event "t"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 1-0

[Event "t"]
[Result "0-1"]
[Termination "adjudication"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 0-1

[Event "t"]
[Result "*"]

1. d4 d5 *

[Event "t"]
[Result "1/2-1/2"]

1. e4 e5 2. Qh5 Nc6 3. Qxf7+ Kxf7 4. Nf3 d6 5. d3 Nf6 1/2-1/2
"#;

    fn run_on(a: &PositionsArgs) -> Extracted {
        extract(&[(PathBuf::from("g.pgn"), PGN.as_bytes().to_vec())], a).unwrap()
    }

    #[test]
    fn skips_book_checks_duplicates_and_adjudicated_tails() {
        let e = run_on(&args(&["--skip-plies", "4", "--per-game", "100"]));
        assert_eq!((e.games, e.unfinished), (4, 1));
        // Game 1: plies 5..=14 → 10 positions. Game 2 (adjudicated, same moves): its first
        // positions repeat game 1's and the last 10 plies are dropped → nothing new. Game 4:
        // plies 5..=10, minus the position after 3. Qxf7+ (check) → 5.
        assert_eq!(e.train.len(), 15);
        assert_eq!(
            e.duplicates, 0,
            "the tail rule removed game 2's positions first"
        );
        let outcomes: Vec<Outcome> = e.train.outcomes().collect();
        assert_eq!(
            outcomes
                .iter()
                .filter(|o| **o == Outcome::WhiteWins)
                .count(),
            10
        );
        assert_eq!(outcomes.iter().filter(|o| **o == Outcome::Draw).count(), 5);
        for i in 0..e.train.len() {
            assert!(!e.train.position(i).is_check());
        }
        // Keeping the adjudicated tail: game 2's positions are all duplicates of game 1's.
        let e = run_on(&args(&[
            "--skip-plies",
            "4",
            "--per-game",
            "100",
            "--keep-adjudicated-tail",
        ]));
        assert_eq!(e.train.len(), 15);
        assert_eq!(e.duplicates, 10);
    }

    #[test]
    fn per_game_cap_seed_and_validation_split() {
        // The adjudicated game gives nothing here (its tail is all of it).
        let base = [
            "--skip-plies",
            "2",
            "--per-game",
            "3",
            "--adjudicated-tail",
            "14",
        ];
        let with = |extra: &[&str]| args(&[&base[..], extra].concat());
        let e1 = run_on(&with(&["--seed", "5"]));
        let e2 = run_on(&with(&["--seed", "5"]));
        assert_eq!(e1, e2);
        assert_eq!(e1.train.len(), 6);
        let other = run_on(&with(&["--seed", "6"]));
        assert_ne!(e1.train, other.train);
        let v = run_on(&with(&[
            "--validation-out",
            "v.epd",
            "--validation-fraction",
            "0.5",
        ]));
        assert_eq!(v.train.len() + v.validation.len(), 6);
        assert!(
            v.train.len().is_multiple_of(3),
            "whole games go to one side"
        );
    }

    /// `--distinct-games` leaves out a repeated game whole, whatever its result; without it the
    /// repeat is read and only its positions are deduplicated.
    #[test]
    fn distinct_games_leaves_out_repeats() {
        let twice = format!("{PGN}\n{}", PGN.replace("1-0", "1/2-1/2"));
        let read = |a: &PositionsArgs| {
            extract(&[(PathBuf::from("g.pgn"), twice.as_bytes().to_vec())], a).unwrap()
        };
        let base = ["--skip-plies", "4", "--per-game", "100"];
        let all = read(&args(&base));
        assert_eq!((all.games, all.repeated_games), (8, 0));
        assert_eq!(all.train.len(), 15);
        assert_eq!(all.duplicates, 15);
        let distinct = read(&args(&[&base[..], &["--distinct-games"]].concat()));
        // Games 1 and 2 share their moves (different results): the second is a repeat too.
        assert_eq!((distinct.games, distinct.unfinished), (8, 2));
        assert_eq!(distinct.repeated_games, 3 + 1);
        // The same positions as the file read once (drawn in another order: the left-out game
        // draws nothing), and none of them met twice.
        let keys = |e: &Extracted| {
            let mut k: Vec<u64> = (0..e.train.len())
                .map(|i| {
                    let z: Zobrist64 = e.train.position(i).zobrist_hash(EnPassantMode::Legal);
                    z.0
                })
                .collect();
            k.sort_unstable();
            k
        };
        assert_eq!(keys(&distinct), keys(&run_on(&args(&base))));
        assert_eq!(distinct.duplicates, 0);
    }

    #[test]
    fn chess960_games_replay_and_other_variants_are_refused() {
        let a = args(&["--skip-plies", "0"]);
        // King on d1, rooks on a1/h1: O-O-O puts the king on c1 and the a-rook on d1.
        let fen = "r2k3r/pppqbppp/2npbn2/4p3/4P3/2NPBN2/PPPQBPPP/R2K3R w KQkq - 0 1";
        let pgn = format!(
            "[Variant \"Chess960\"]\n[SetUp \"1\"]\n[FEN \"{fen}\"]\n[Result \"1-0\"]\n\n\
             1. O-O-O O-O 2. a3 a6 1-0\n"
        );
        let found = extract(&[(PathBuf::from("g.pgn"), pgn.into_bytes())], &a).unwrap();
        assert_eq!((found.games, found.train.len()), (1, 4));
        let atomic = "[Variant \"Atomic\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n";
        let err = extract(&[(PathBuf::from("a.pgn"), atomic.as_bytes().to_vec())], &a)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a.pgn:1") && err.contains("Atomic"), "{err}");
    }

    #[test]
    fn writes_nothing_on_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let pgn = dir.path().join("bad.pgn");
        std::fs::write(&pgn, "[Result \"1-0\"]\n\n1. e4 e5 2. Ke3 1-0\n").unwrap();
        let out = dir.path().join("out.epd");
        let mut a = args(&[]);
        a.games = vec![pgn];
        a.out = out.clone();
        let e = run(&a).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("bad.pgn:1") && msg.contains("illegal move"),
            "{msg}"
        );
        assert!(!out.exists());
        // A good file: written, and it reads back.
        let good = dir.path().join("good.pgn");
        std::fs::write(&good, PGN).unwrap();
        a.games = vec![good];
        run(&a).unwrap();
        let back = LabelledPositions::load(&out).unwrap();
        assert!(!back.is_empty());
    }
}
