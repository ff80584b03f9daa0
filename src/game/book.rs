//! Opening books: EPD/FEN files and PGN files (read by `epd.rs` and `pgn_read.rs`), validated at
//! load, a deterministic order, and a run's seeded split into tuning and held-out openings.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use shakmaty::CastlingMode;

use super::epd::parse_epd;
use super::opening::{BookError, Opening};
use super::pgn_read::parse_pgn;

/// The knights' places among the five squares left after bishops and queen, by the Chess960
/// scheme's fourth digit.
const KNIGHTS: [&str; 10] = [
    "NN---", "N-N--", "N--N-", "N---N", "-NN--", "-N-N-", "-N--N", "--NN-", "--N-N", "---NN",
];

/// White's back rank of Chess960 position `n` (taken modulo 960) in the standard numbering (518
/// is RNBQKBNR), as `tools/make_book` and `openings/chess960_sample.epd` number the arrays.
pub fn chess960_back_rank(n: usize) -> String {
    let n = n % 960;
    let mut rank = [' '; 8];
    let (n, light) = (n / 4, n % 4);
    rank[2 * light + 1] = 'B';
    let (n, dark) = (n / 4, n % 4);
    rank[2 * dark] = 'B';
    let (n, queen) = (n / 6, n % 6);
    let empty = |rank: &[char; 8]| (0..8).filter(|&i| rank[i] == ' ').collect::<Vec<_>>();
    let queen = empty(&rank)[queen];
    rank[queen] = 'Q';
    for (i, c) in empty(&rank).into_iter().zip(KNIGHTS[n].chars()) {
        if c == 'N' {
            rank[i] = 'N';
        }
    }
    for (i, c) in empty(&rank).into_iter().zip("RKR".chars()) {
        rank[i] = c;
    }
    rank.iter().collect()
}

/// The start position of White's Chess960 array `white` and Black's `black` (the same number for
/// Chess960, two for DFRC) as a FEN with Shredder-FEN castling (the rooks' files), which reads
/// unambiguously for every pair of arrays.
pub fn chess960_start_fen(white: usize, black: usize) -> String {
    let (w, b) = (chess960_back_rank(white), chess960_back_rank(black));
    let files = |rank: &str| -> String {
        rank.match_indices('R')
            .map(|(i, _)| (b'a' + i as u8) as char)
            .rev()
            .collect()
    };
    format!(
        "{}/pppppppp/8/8/8/8/PPPPPPPP/{w} w {}{} - 0 1",
        b.to_lowercase(),
        files(&w).to_uppercase(),
        files(&b)
    )
}

/// Which castling rules a book is read with (`[games] variant`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Variant {
    /// The book decides: Chess960 when one of its positions (or a PGN game's `Variant` tag)
    /// needs it, else standard.
    #[default]
    Auto,
    Standard,
    /// Chess960 and Double Fischer Random: X-FEN or Shredder-FEN castling fields.
    Chess960,
}

impl Variant {
    /// The config's spelling: `standard`, `chess960` (also `960`, `fischerandom`, `dfrc`).
    pub fn parse(s: &str) -> Option<Variant> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(Variant::Auto),
            "standard" | "chess" => Some(Variant::Standard),
            "chess960" | "960" | "fischerandom" | "frc" | "dfrc" => Some(Variant::Chess960),
            _ => None,
        }
    }
}

/// In which order [`Book::opening_for`] hands out openings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BookOrder {
    /// A seeded random permutation of the whole book, a new one for each pass (cycle).
    #[default]
    Random,
    /// File order, wrapping around.
    Sequential,
}

/// Options for [`Book::load`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BookOptions {
    pub order: BookOrder,
    pub seed: u64,
    /// PGN books: play at most this many plies of each game (`None`: all of them).
    pub max_plies: Option<usize>,
    /// Standard, Chess960, or decided by the book.
    pub variant: Variant,
}

/// A run's split of its book into tuning and held-out openings: a seeded draw of `share` of the
/// openings that the tune never plays, so its verification is not the book talking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Holdout {
    /// The held-out share, in [0, 1); 0 means no split.
    pub share: f64,
    /// The run's seed.
    pub seed: u64,
}

/// The default held-out share of a run's book.
pub const DEFAULT_HOLDOUT: f64 = 0.2;

impl Holdout {
    /// Whether `share` is a usable held-out share: in [0, 1).
    pub fn valid_share(share: f64) -> bool {
        (0.0..1.0).contains(&share)
    }

    /// How many of `len` openings are held out: round(share·len), at least 1 when share > 0.
    pub fn held_out_len(&self, len: usize) -> usize {
        if self.share <= 0.0 || !self.share.is_finite() {
            return 0;
        }
        ((self.share * len as f64).round() as usize).clamp(1, len)
    }

    /// The held-out indices of a book of `len` openings, sorted: the first `held_out_len` of a
    /// permutation seeded by the run's seed on a stream the book's order never uses, so the
    /// split does not change with the order's cycles. Pure in (share, seed, len).
    pub fn held_out(&self, len: usize) -> Vec<usize> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(u64::MAX);
        let mut p: Vec<usize> = (0..len).collect();
        p.shuffle(&mut rng);
        p.truncate(self.held_out_len(len));
        p.sort_unstable();
        p
    }
}

/// Which openings of a split book to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BookPart {
    /// The openings a tune plays.
    Tuning,
    /// The openings only verification plays.
    HeldOut,
}

/// A loaded, validated opening book.
#[derive(Debug)]
pub struct Book {
    /// Where it was read (`None` for a book made in code).
    path: Option<PathBuf>,
    openings: Vec<Opening>,
    order: BookOrder,
    seed: u64,
    /// The permutation of the last cycle asked for (a cache: the order is a pure function).
    cycle_cache: Mutex<Option<(u64, Vec<u32>)>>,
}

impl Book {
    /// Load `path`: PGN when its extension is `.pgn` (case-insensitive), else EPD/FEN lines.
    pub fn load(path: impl AsRef<Path>, options: &BookOptions) -> Result<Book, BookError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|cause| BookError::Io {
            path: path.to_path_buf(),
            cause,
        })?;
        Book::parse(path, &bytes, options)
    }

    /// A book from the bytes of the file `path` (which only names it, and says PGN by its
    /// extension): what [`Book::load`] does once it has read them.
    pub fn parse(path: &Path, bytes: &[u8], options: &BookOptions) -> Result<Book, BookError> {
        let is_pgn = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("pgn"));
        let read = |mode| {
            if is_pgn {
                parse_pgn(path, bytes, options.max_plies, mode)
            } else {
                parse_epd(path, bytes, mode)
            }
        };
        let openings = match options.variant {
            Variant::Standard => read(CastlingMode::Standard)?,
            Variant::Chess960 => read(CastlingMode::Chess960)?,
            // Every standard position is a Chess960 one too: one position that needs Chess960
            // makes the whole book Chess960, so every game is played under one set of rules.
            Variant::Auto => match read(CastlingMode::Standard) {
                Err(BookError::NeedsChess960 { .. }) => read(CastlingMode::Chess960)?,
                other => other?,
            },
        };
        if openings.is_empty() {
            return Err(BookError::Empty {
                path: path.to_path_buf(),
            });
        }
        let mut book = Book::from_openings(openings, options.order, options.seed)
            .unwrap_or_else(|| unreachable!("checked non-empty"));
        book.path = Some(path.to_path_buf());
        Ok(book)
    }

    /// Refuse a book whose size changed since a run drew its split from `drawn_from` openings
    /// (`None`: not recorded).
    pub fn check_split_size(&self, drawn_from: Option<u64>) -> Result<(), BookError> {
        match drawn_from {
            Some(n) if n != self.openings.len() as u64 => Err(BookError::Changed {
                path: self.path.clone().unwrap_or_default(),
                len: self.openings.len(),
                drawn_from: n,
            }),
            _ => Ok(()),
        }
    }

    /// One part of the book split by `holdout`, as a book of its own with the same order and
    /// seed. A share of 0 keeps every opening in both parts (no split). A book that cannot give
    /// both parts at least one opening is an error, not a silent fallback.
    pub fn part(self, holdout: Holdout, part: BookPart) -> Result<Book, BookError> {
        let len = self.openings.len();
        if holdout.share <= 0.0 {
            return Ok(self);
        }
        let held = holdout.held_out(len);
        if len < 2 || held.is_empty() || held.len() >= len {
            return Err(BookError::TooSmallToSplit {
                path: self.path.clone().unwrap_or_default(),
                len,
                share: holdout.share,
            });
        }
        let keep_held = part == BookPart::HeldOut;
        let openings: Vec<Opening> = self
            .openings
            .into_iter()
            .enumerate()
            .filter(|(i, _)| held.binary_search(i).is_ok() == keep_held)
            .map(|(_, o)| o)
            .collect();
        Ok(Book {
            path: self.path,
            openings,
            order: self.order,
            seed: self.seed,
            cycle_cache: Mutex::new(None),
        })
    }

    /// A book from openings made elsewhere; `None` when `openings` is empty.
    pub fn from_openings(openings: Vec<Opening>, order: BookOrder, seed: u64) -> Option<Book> {
        if openings.is_empty() || openings.len() > u32::MAX as usize {
            return None;
        }
        Some(Book {
            path: None,
            openings,
            order,
            seed,
            cycle_cache: Mutex::new(None),
        })
    }

    pub fn len(&self) -> usize {
        self.openings.len()
    }

    /// Whether the book's games are Chess960 (engines must be told `UCI_Chess960`).
    pub fn chess960(&self) -> bool {
        self.openings
            .iter()
            .any(|o| o.mode == CastlingMode::Chess960)
    }

    /// Never true: an empty book is an error at load.
    pub fn is_empty(&self) -> bool {
        self.openings.is_empty()
    }

    pub fn openings(&self) -> &[Opening] {
        &self.openings
    }

    /// The opening for game pair `pair_index`: a pure function of (seed, order, book, index),
    /// so a resumed run gets the same openings. Random order walks a seeded permutation of the
    /// whole book, then a different permutation for the next pass, and so on.
    pub fn opening_for(&self, pair_index: u64) -> &Opening {
        &self.openings[self.index_for(pair_index)]
    }

    /// The index in [`Book::openings`] of pair `pair_index`'s opening.
    pub fn index_for(&self, pair_index: u64) -> usize {
        let n = self.openings.len() as u64;
        let within = (pair_index % n) as usize;
        match self.order {
            BookOrder::Sequential => within,
            BookOrder::Random => {
                let cycle = pair_index / n;
                let mut cache = self
                    .cycle_cache
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                if cache.as_ref().is_none_or(|(c, _)| *c != cycle) {
                    *cache = Some((cycle, self.permutation(cycle)));
                }
                cache.as_ref().map_or(within, |(_, p)| p[within] as usize)
            }
        }
    }

    fn permutation(&self, cycle: u64) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(cycle);
        let mut p: Vec<u32> = (0..self.openings.len() as u32).collect();
        p.shuffle(&mut rng);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::START_FEN;
    use shakmaty::Position;
    use std::collections::HashSet;

    fn write(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        (dir, path)
    }

    fn load(name: &str, text: &str, options: &BookOptions) -> Result<Book, BookError> {
        let (_dir, path) = write(name, text);
        Book::load(&path, options)
    }

    fn sequential() -> BookOptions {
        BookOptions {
            order: BookOrder::Sequential,
            ..BookOptions::default()
        }
    }

    const EPD: &str = "# a comment header\n\
        \n\
        rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - ;\n\
        rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - bm Nf3; id \"open; game\";\n\
        r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3\n\
        rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - hmvc 7; fmvn 12;\n\
        rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3 7;\n\
        \t  \n";

    #[test]
    fn epd_and_fen_lines() {
        let book = load("b.epd", EPD, &sequential()).expect("loads");
        assert_eq!(book.len(), 5);
        let fens: Vec<&str> = book.openings().iter().map(|o| o.start_fen()).collect();
        assert_eq!(
            fens,
            [
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
                "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1",
                "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 7 12",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3 7",
            ]
        );
        assert_eq!(book.openings()[1].id(), Some("open; game"));
        assert!(book.openings()[0].source().ends_with("b.epd:3"));
        assert!(book.openings()[3].source().ends_with("b.epd:6"));
        assert!(book.openings()[0].moves_uci().is_empty());
    }

    fn error_of(name: &str, text: &str, options: &BookOptions) -> String {
        match load(name, text, options) {
            Ok(_) => panic!("{name} should not load"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn bad_epd_lines_name_file_and_line() {
        let good = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n";
        let cases = [
            (
                "# c\n".to_string() + good + "rnbqkbnr/pppppppp/8/8 w KQkq -\n",
                3,
                "bad FEN",
            ),
            (
                good.to_string() + "\n" + "rnbqkbnr/pppppppp w\n",
                3,
                "expected 4 EPD fields",
            ),
            // Black to move while White is in check: illegal.
            (
                "4k3/8/8/8/8/8/8/R3K2r b - -\n".into(),
                1,
                "illegal position",
            ),
            // Fool's mate: White is mated.
            (
                "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq -\n".into(),
                1,
                "already over",
            ),
            // Stalemate.
            ("7k/8/6Q1/8/8/8/8/K7 b - -\n".into(), 1, "already over"),
            // Insufficient material.
            ("7k/8/8/8/8/8/8/K7 w - -\n".into(), 1, "already over"),
            (
                good.to_string() + "4k3/8/8/8/8/8/4P3/4K3 w - - hmvc x;\n",
                2,
                "hmvc",
            ),
        ];
        for (text, line, what) in cases {
            let msg = error_of("bad.epd", &text, &sequential());
            assert!(msg.contains(&format!("bad.epd:{line}:")), "{msg}");
            assert!(msg.contains(what), "{msg} lacks {what}");
        }
    }

    #[test]
    fn empty_and_missing_books_are_errors() {
        let msg = error_of("e.epd", "# only comments\n\n", &sequential());
        assert!(
            msg.contains("no openings") && msg.contains("e.epd"),
            "{msg}"
        );
        let msg = error_of("e.pgn", "\n", &sequential());
        assert!(msg.contains("no openings"), "{msg}");
        let err = Book::load("/nonexistent/book.epd", &sequential()).unwrap_err();
        assert!(matches!(err, BookError::Io { .. }));
        assert!(err.to_string().contains("/nonexistent/book.epd"));
    }

    const PGN: &str = "[Event \"one\"]\n\
        [Result \"*\"]\n\
        \n\
        1. e4 e5 2. Nf3 {a comment} Nc6 (2... d6 3. d4) 3. Bb5 a6 *\n\
        \n\
        [Event \"two\"]\n\
        [SetUp \"1\"]\n\
        [FEN \"rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\"]\n\
        \n\
        1... d5 2. c4 *\n\
        \n\
        [Event \"three\"]\n\
        \n\
        *\n";

    #[test]
    fn pgn_games_from_start_and_fen() {
        let book = load("b.pgn", PGN, &sequential()).expect("loads");
        assert_eq!(book.len(), 3);
        let o = &book.openings()[0];
        assert_eq!(o.start_fen(), START_FEN);
        assert_eq!(
            o.moves_uci(),
            ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
        );
        assert!(o.source().ends_with("b.pgn:1"), "{}", o.source());
        let o = &book.openings()[1];
        assert_eq!(
            o.start_fen(),
            "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1"
        );
        assert_eq!(o.moves_uci(), ["d7d5", "c2c4"]);
        assert_eq!(
            o.fen(),
            "rnbqkbnr/ppp1pppp/8/3p4/2PP4/8/PP2PPPP/RNBQKBNR b KQkq - 0 2"
        );
        assert!(o.source().ends_with("b.pgn:6"), "{}", o.source());
        assert!(book.openings()[2].moves_uci().is_empty());
    }

    #[test]
    fn pgn_ply_limit() {
        let options = BookOptions {
            max_plies: Some(3),
            ..sequential()
        };
        let book = load("b.pgn", PGN, &options).expect("loads");
        assert_eq!(book.openings()[0].moves_uci(), ["e2e4", "e7e5", "g1f3"]);
        assert_eq!(book.openings()[1].moves_uci(), ["d7d5", "c2c4"]);
    }

    #[test]
    fn bad_pgn_games_name_the_game_line() {
        let illegal = "[Event \"ok\"]\n\n1. d4 *\n\n[Event \"bad\"]\n\n1. e4 e5 2. Ke3 *\n";
        let msg = error_of("x.pgn", illegal, &sequential());
        assert!(msg.contains("x.pgn:5:") && msg.contains("Ke3"), "{msg}");
        let bad_fen = "1. e4 *\n\n[FEN \"not a fen\"]\n\n1. e4 *\n";
        let msg = error_of("x.pgn", bad_fen, &sequential());
        assert!(msg.contains("x.pgn:3:") && msg.contains("bad FEN"), "{msg}");
        let over = "[Event \"mate\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n";
        let msg = error_of("x.pgn", over, &sequential());
        assert!(
            msg.contains("x.pgn:1:") && msg.contains("already over"),
            "{msg}"
        );
        // The same game cut before the mate is a fine opening.
        let options = BookOptions {
            max_plies: Some(3),
            ..sequential()
        };
        assert!(load("x.pgn", over, &options).is_ok());
        let variant = "[Variant \"Atomic\"]\n\n1. e4 *\n";
        let msg = error_of("x.pgn", variant, &sequential());
        assert!(msg.contains("x.pgn:1:") && msg.contains("variant"), "{msg}");
    }

    fn with_variant(variant: Variant) -> BookOptions {
        BookOptions {
            variant,
            ..sequential()
        }
    }

    /// #518 (the standard array), #0 in X-FEN, a DFRC line (White #0, Black #518) with
    /// Shredder-FEN letters for White and X-FEN for Black, a 960 line after castling rights
    /// were lost (reads as standard chess too).
    const BOOK960: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n\
        bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1\n\
        rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFkq - 0 1\n\
        bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w - - 0 1\n";

    #[test]
    fn a_book_with_a_chess960_position_is_read_as_chess960() {
        for variant in [Variant::Auto, Variant::Chess960] {
            let book = load("960.epd", BOOK960, &with_variant(variant)).expect("loads");
            assert!(book.chess960());
            assert!(
                book.openings()
                    .iter()
                    .all(|o| o.castling_mode() == CastlingMode::Chess960)
            );
            let fens: Vec<&str> = book.openings().iter().map(|o| o.start_fen()).collect();
            assert_eq!(
                fens,
                [
                    START_FEN,
                    "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1",
                    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1",
                    "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w - - 0 1",
                ],
                "X-FEN castling fields"
            );
            // Castling is king takes rook, also from the standard array.
            let castles: Vec<String> = book.openings()[0]
                .position()
                .legal_moves()
                .iter()
                .filter(|m| m.is_castle())
                .map(|m| m.to_uci(CastlingMode::Chess960).to_string())
                .collect();
            assert!(castles.is_empty(), "{castles:?}: pieces in the way");
            let o = Opening::new_in(
                CastlingMode::Chess960,
                "r5kr/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1",
                &["b1h1", "g8a8"],
                "t",
            )
            .expect("both castlings");
            assert_eq!(o.moves_uci(), ["b1h1", "g8a8"]);
        }
        // A standard book stays standard unless the config says otherwise.
        let standard = load("b.epd", EPD, &with_variant(Variant::Auto)).expect("loads");
        assert!(!standard.chess960());
        let forced = load("b.epd", EPD, &with_variant(Variant::Chess960)).expect("loads");
        assert!(forced.chess960());
    }

    #[test]
    fn a_chess960_position_in_a_standard_book_names_file_line_and_the_key() {
        let msg = error_of("960.epd", BOOK960, &with_variant(Variant::Standard));
        assert!(msg.contains("960.epd:2:"), "{msg}");
        assert!(msg.contains("Chess960 position"), "{msg}");
        assert!(msg.contains("variant = \"chess960\""), "{msg}");
        // Castling rights that no rule reads are an error in either mode.
        for variant in [Variant::Auto, Variant::Chess960] {
            let bad = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n\
                rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w Kkq - 0 1\n";
            let msg = error_of("bad.epd", bad, &with_variant(variant));
            assert!(
                msg.contains("bad.epd:2:") && msg.contains("illegal position"),
                "{msg}"
            );
        }
    }

    #[test]
    fn pgn_books_follow_their_variant_tag_and_refuse_a_mix() {
        let pgn960 = "[Variant \"Chess960\"]\n\
            [FEN \"r5kr/pppppppp/8/8/8/8/PPPPPPPP/RK5R w KQkq - 0 1\"]\n\n\
            1. O-O-O O-O *\n\n\
            [Variant \"Chess960\"]\n\n1. e4 *\n";
        let book = load("b.pgn", pgn960, &with_variant(Variant::Auto)).expect("loads");
        assert!(book.chess960());
        assert_eq!(book.openings()[0].moves_uci(), ["b1a1", "g8h8"]);
        assert_eq!(book.openings()[1].start_fen(), START_FEN);
        let msg = error_of("b.pgn", pgn960, &with_variant(Variant::Standard));
        assert!(
            msg.contains("b.pgn:1:") && msg.contains("Chess960"),
            "{msg}"
        );
        let mixed = format!("{pgn960}\n[Variant \"Standard\"]\n\n1. d4 *\n");
        let msg = error_of("m.pgn", &mixed, &with_variant(Variant::Auto));
        assert!(
            msg.contains("m.pgn:10:") && msg.contains("mixes variants"),
            "{msg}"
        );
    }

    #[test]
    fn variant_spellings() {
        assert_eq!(Variant::parse("chess960"), Some(Variant::Chess960));
        assert_eq!(Variant::parse(" DFRC "), Some(Variant::Chess960));
        assert_eq!(Variant::parse("standard"), Some(Variant::Standard));
        assert_eq!(Variant::parse("auto"), Some(Variant::Auto));
        assert_eq!(Variant::parse("atomic"), None);
    }

    fn numbered_book(n: usize, order: BookOrder, seed: u64) -> Book {
        // Told apart by their source.
        let openings = (0..n)
            .map(|i| Opening::new(START_FEN, &[], format!("#{i}")).expect("valid"))
            .collect();
        Book::from_openings(openings, order, seed).expect("non-empty")
    }

    fn order(book: &Book, range: std::ops::Range<u64>) -> Vec<String> {
        range
            .map(|i| book.opening_for(i).source().to_string())
            .collect()
    }

    #[test]
    fn sequential_order_wraps() {
        let book = numbered_book(3, BookOrder::Sequential, 0);
        assert_eq!(
            order(&book, 0..7),
            ["#0", "#1", "#2", "#0", "#1", "#2", "#0"]
        );
    }

    #[test]
    fn random_order_is_a_pure_function_of_seed_and_index() {
        let n = 50;
        let a = numbered_book(n, BookOrder::Random, 7);
        let b = numbered_book(n, BookOrder::Random, 7);
        let forward = order(&a, 0..200);
        // Asked in another order (as a resumed or concurrent run would): the same answers.
        let mut backward: Vec<String> = (0..200u64)
            .rev()
            .map(|i| b.opening_for(i).source().to_string())
            .collect();
        backward.reverse();
        assert_eq!(forward, backward);
        // Each cycle is a permutation of the whole book, and cycles differ.
        let cycles: Vec<&[String]> = forward.chunks(n).collect();
        for c in &cycles {
            assert_eq!(c.iter().collect::<HashSet<_>>().len(), n);
        }
        assert_ne!(cycles[0], cycles[1]);
        assert_ne!(
            forward[..n],
            order(&numbered_book(n, BookOrder::Sequential, 7), 0..50)[..]
        );
        // Another seed, another order.
        assert_ne!(
            forward,
            order(&numbered_book(n, BookOrder::Random, 8), 0..200)
        );
    }

    fn sources(book: &Book) -> HashSet<String> {
        book.openings()
            .iter()
            .map(|o| o.source().to_string())
            .collect()
    }

    #[test]
    fn split_parts_are_disjoint_cover_the_book_and_follow_the_seed() {
        let h = Holdout {
            share: 0.2,
            seed: 11,
        };
        let tuning = numbered_book(300, BookOrder::Random, 11)
            .part(h, BookPart::Tuning)
            .unwrap();
        let held = numbered_book(300, BookOrder::Random, 11)
            .part(h, BookPart::HeldOut)
            .unwrap();
        assert_eq!((tuning.len(), held.len()), (240, 60));
        let (t, v) = (sources(&tuning), sources(&held));
        assert!(t.is_disjoint(&v));
        assert_eq!(t.union(&v).count(), 300);
        // Every pair the tune could play, over many cycles, is a tuning opening.
        assert!((0..2000).all(|k| t.contains(tuning.opening_for(k).source())));
        // The same seed draws the same split; another seed another one.
        assert_eq!(h.held_out(300), h.held_out(300));
        assert_ne!(h.held_out(300), Holdout { seed: 12, ..h }.held_out(300));
        // The split does not depend on the book's order setting.
        let held_seq = numbered_book(300, BookOrder::Sequential, 11)
            .part(h, BookPart::HeldOut)
            .unwrap();
        assert_eq!(sources(&held_seq), v);
    }

    #[test]
    fn split_sizes_round_and_keep_one_opening_each_side() {
        let h = |share| Holdout { share, seed: 1 };
        assert_eq!(h(0.2).held_out_len(5000), 1000);
        assert_eq!(h(0.2).held_out_len(3), 1);
        assert_eq!(h(0.2).held_out_len(2), 1);
        assert_eq!(h(0.01).held_out_len(10), 1);
        assert_eq!(h(0.0).held_out_len(10), 0);
        assert_eq!(h(0.99).held_out_len(10), 10);
        // Both parts of a 2-opening book get one.
        let two = numbered_book(2, BookOrder::Random, 1);
        assert_eq!(two.part(h(0.2), BookPart::HeldOut).unwrap().len(), 1);
        // No share: the whole book in both parts.
        let all = numbered_book(5, BookOrder::Random, 1);
        assert_eq!(all.part(h(0.0), BookPart::HeldOut).unwrap().len(), 5);
        assert!(Holdout::valid_share(0.0) && Holdout::valid_share(0.5));
        assert!(!Holdout::valid_share(1.0) && !Holdout::valid_share(-0.1));
        assert!(!Holdout::valid_share(f64::NAN));
    }

    #[test]
    fn a_book_too_small_to_split_is_an_error_naming_the_file() {
        let (_dir, path) = write("one.epd", &format!("{START_FEN}\n"));
        let book = Book::load(&path, &BookOptions::default()).unwrap();
        let h = Holdout {
            share: 0.2,
            seed: 3,
        };
        let err = book.part(h, BookPart::Tuning).unwrap_err().to_string();
        assert!(err.contains("one.epd"), "{err}");
        assert!(err.contains("1 opening(s) cannot be split"), "{err}");
        assert!(err.contains("holdout = 0.2"), "{err}");
        // Nearly everything held out leaves nothing to tune on: refused too.
        let ten = numbered_book(10, BookOrder::Random, 1);
        let h = Holdout {
            share: 0.99,
            seed: 1,
        };
        assert!(matches!(
            ten.part(h, BookPart::Tuning),
            Err(BookError::TooSmallToSplit { len: 10, .. })
        ));
    }
}
