//! Labelled positions from finished games (ours from `spsa match --pgn`, or anyone's), labelled
//! with the game's result from White's side; `spsa positions` reads and writes the files.
//!
//! Per game: the positions after each ply from `skip_plies` on (book moves are not the engines'
//! choices), except positions in check (a static score is meaningless there), positions with no
//! legal move, and — for adjudicated games (`Termination "adjudication"`) — the last
//! `adjudicated_tail` plies, unless `keep_adjudicated_tail`. Games without a result (`*`) are
//! skipped. At most `per_game` positions per game are drawn (seeded), and a position already
//! taken (same placement, side, castling, en passant) is never taken twice. With a
//! `validation_fraction` F, a seeded fraction F of the *games* goes to the validation set, so no
//! game feeds both sets. With `distinct_games`, a game whose start position and moves repeat an
//! earlier game's is left out whole (a deterministic engine playing itself plays both games of a
//! pair alike; keeping both would weight that game twice and could put one copy in each set).

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::Result;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use super::labelled::{LabelledPositions, Outcome};
use crate::error::UserError;
use crate::game::pgn_read::read_pgn_games;

/// Which positions of the games are taken (the `spsa positions` flags of the same names).
#[derive(Clone, Debug, PartialEq)]
pub struct ExtractOptions {
    /// Plies skipped at the start of every game (the book).
    pub skip_plies: usize,
    /// At most this many positions per game.
    pub per_game: usize,
    /// Plies dropped from the end of adjudicated games.
    pub adjudicated_tail: usize,
    pub keep_adjudicated_tail: bool,
    /// Seed of the per-game draws and of the validation split.
    pub seed: u64,
    /// The fraction of games whose positions go to the validation set, in [0, 1).
    pub validation_fraction: f64,
    /// Leave out a game whose start and moves repeat an earlier game's.
    pub distinct_games: bool,
}

impl Default for ExtractOptions {
    /// The command's defaults (its flags take them from here).
    fn default() -> ExtractOptions {
        ExtractOptions {
            skip_plies: 8,
            per_game: 10,
            adjudicated_tail: 10,
            keep_adjudicated_tail: false,
            seed: 1,
            validation_fraction: 0.0,
            distinct_games: false,
        }
    }
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
    /// Games left out whole by `distinct_games`.
    pub repeated_games: usize,
}

/// Extract labelled positions from PGN texts (`(name, bytes)` pairs) as `options` say.
pub fn extract(inputs: &[(PathBuf, Vec<u8>)], options: &ExtractOptions) -> Result<Extracted> {
    let fraction = options.validation_fraction;
    if !(0.0..1.0).contains(&fraction) {
        return Err(UserError(format!(
            "--validation-fraction must be in [0, 1), not {fraction}"
        ))
        .into());
    }
    let mut out = Extracted::default();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut games_seen: HashSet<(u64, Vec<shakmaty::Move>)> = HashSet::new();
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
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
            if options.distinct_games {
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
            let end = if adjudicated && !options.keep_adjudicated_tail {
                plies.saturating_sub(options.adjudicated_tail)
            } else {
                plies
            };
            // Positions after ply p (p = 1..=plies), for p in [skip + 1, end].
            let mut pos = game.start.clone();
            let mut candidates: Vec<Chess> = Vec::new();
            for (i, m) in game.moves.iter().enumerate() {
                pos.play_unchecked(*m);
                let ply = i + 1;
                if ply <= options.skip_plies || ply > end {
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
                if taken >= options.per_game {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The options of `spsa positions` without flags.
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

    fn run_on(a: &ExtractOptions) -> Extracted {
        extract(&[(PathBuf::from("g.pgn"), PGN.as_bytes().to_vec())], a).unwrap()
    }

    #[test]
    fn skips_book_checks_duplicates_and_adjudicated_tails() {
        let base = ExtractOptions {
            skip_plies: 4,
            per_game: 100,
            ..ExtractOptions::default()
        };
        let e = run_on(&base);
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
        let e = run_on(&ExtractOptions {
            keep_adjudicated_tail: true,
            ..base
        });
        assert_eq!(e.train.len(), 15);
        assert_eq!(e.duplicates, 10);
    }

    #[test]
    fn per_game_cap_seed_and_validation_split() {
        // The adjudicated game gives nothing here (its tail is all of it).
        let base = ExtractOptions {
            skip_plies: 2,
            per_game: 3,
            adjudicated_tail: 14,
            ..ExtractOptions::default()
        };
        let seed = |seed| ExtractOptions {
            seed,
            ..base.clone()
        };
        let e1 = run_on(&seed(5));
        let e2 = run_on(&seed(5));
        assert_eq!(e1, e2);
        assert_eq!(e1.train.len(), 6);
        let other = run_on(&seed(6));
        assert_ne!(e1.train, other.train);
        let v = run_on(&ExtractOptions {
            validation_fraction: 0.5,
            ..base
        });
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
        let read = |a: &ExtractOptions| {
            extract(&[(PathBuf::from("g.pgn"), twice.as_bytes().to_vec())], a).unwrap()
        };
        let base = ExtractOptions {
            skip_plies: 4,
            per_game: 100,
            ..ExtractOptions::default()
        };
        let all = read(&base);
        assert_eq!((all.games, all.repeated_games), (8, 0));
        assert_eq!(all.train.len(), 15);
        assert_eq!(all.duplicates, 15);
        let distinct = read(&ExtractOptions {
            distinct_games: true,
            ..base.clone()
        });
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
        assert_eq!(keys(&distinct), keys(&run_on(&base)));
        assert_eq!(distinct.duplicates, 0);
    }

    #[test]
    fn chess960_games_replay_and_other_variants_are_refused() {
        let a = ExtractOptions {
            skip_plies: 0,
            ..ExtractOptions::default()
        };
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
}
