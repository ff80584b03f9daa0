//! Chess960 and DFRC end to end: the bundled book is the numbering scheme's, the sparring engine
//! plays Chess960 games against itself through `spsa match`, and python-chess (an independent
//! referee) replays every move of the PGN from its FEN with Chess960 rules; an engine without
//! `UCI_Chess960` is refused before any game.

use crate::match_common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};
use spsa::game::{
    Book, BookOptions, BookOrder, Variant, chess960_back_rank as back_rank, chess960_start_fen,
};

use match_common::*;

/// The files of the king-side and queen-side rooks of a back rank.
fn rook_files(rank: &str) -> (char, char) {
    let king = rank.find('K').expect("a king");
    let file = |i: usize| (b'a' + i as u8) as char;
    let rooks: Vec<usize> = rank.match_indices('R').map(|(i, _)| i).collect();
    let outer = rooks.iter().copied().find(|&i| i > king).expect("a rook");
    let inner = rooks.iter().copied().find(|&i| i < king).expect("a rook");
    (file(outer), file(inner))
}

/// `openings/chess960_sample.epd` as the numbering makes it: 24 Chess960 positions in X-FEN,
/// then 12 DFRC ones in Shredder-FEN.
fn sample_book_text() -> String {
    let mut text = String::from(
        "# Chess960 and Double Fischer Random start positions for `[games] variant = \"chess960\"`,\n\
         # numbered by the standard Chess960 scheme (518 is the standard array). Written by\n\
         # `sample_book_text` in tests/chess960.rs, which checks this file is exactly its output.\n\
         # 24 Chess960 positions (X-FEN castling KQkq), then 12 DFRC ones (White's and Black's arrays\n\
         # numbered apart, Shredder-FEN castling: the rooks' files).\n",
    );
    for i in 0..24 {
        let n = (i * 397 + 11) % 960;
        let b = back_rank(n);
        let lower = b.to_lowercase();
        text += &format!("{lower}/pppppppp/8/8/8/8/PPPPPPPP/{b} w KQkq - id \"chess960 {n}\";\n");
    }
    for i in 0..12 {
        let (w, b) = ((i * 397 + 11) % 960, (i * 641 + 200) % 960);
        let (white, black) = (back_rank(w), back_rank(b));
        let (wk, wq) = rook_files(&white);
        let (bk, bq) = rook_files(&black);
        let castling = format!(
            "{}{}{bk}{bq}",
            wk.to_ascii_uppercase(),
            wq.to_ascii_uppercase()
        );
        text += &format!(
            "{}/pppppppp/8/8/8/8/PPPPPPPP/{white} w {castling} - id \"dfrc {w} {b}\";\n",
            black.to_lowercase()
        );
    }
    text
}

fn sample_book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("openings/chess960_sample.epd")
}

#[test]
fn the_numbering_and_the_bundled_book() {
    assert_eq!(back_rank(518), "RNBQKBNR");
    assert_eq!(back_rank(0), "BBQNNRKR");
    assert_eq!(back_rank(959), "RKRNNQBB");
    // Every arrangement distinct, bishops on both colours, king between the rooks.
    let all: HashSet<String> = (0..960).map(back_rank).collect();
    assert_eq!(all.len(), 960);
    for r in &all {
        let b: Vec<usize> = r.match_indices('B').map(|(i, _)| i).collect();
        assert_ne!(b[0] % 2, b[1] % 2, "{r}");
        let (k, rooks) = (
            r.find('K').unwrap(),
            r.match_indices('R').map(|(i, _)| i).collect::<Vec<_>>(),
        );
        assert!(rooks[0] < k && k < rooks[1], "{r}");
    }
    let shipped = std::fs::read_to_string(sample_book()).expect("the bundled 960 book");
    assert_eq!(shipped, sample_book_text());
}

/// python3 with python-chess, or `None` (a skip, except on CI, where .ci/run installs it).
fn python_chess() -> Option<&'static str> {
    let ok = Command::new("python3")
        .args(["-c", "import chess"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI: python3 with python-chess is needed (.ci/run installs it)"
        );
        eprintln!("skipped: python3 with python-chess not found (python3 -m pip install chess)");
        return None;
    }
    Some("python3")
}

/// The referee: replays every game of a PGN from its FEN with Chess960 rules, checks each move
/// is legal, that a game the rules end has the rules' result, and counts castlings. Prints one
/// line per game: `ok <plies> <O-O count> <O-O-O count> <result> <termination>`.
const REFEREE: &str = r#"
import sys, chess, chess.pgn
with open(sys.argv[1]) as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        h = game.headers
        assert h.get("Variant") == "Chess960", h
        assert h.get("SetUp") == "1" and "FEN" in h, h
        if game.errors:
            raise SystemExit(f"unreadable game: {game.errors}")
        board = chess.Board(h["FEN"], chess960=True)
        assert board.is_valid(), h["FEN"]
        short = long = 0
        for node in game.mainline():
            move = node.move
            if move not in board.legal_moves:
                raise SystemExit(f"illegal move {move} in {board.fen()}")
            if board.is_kingside_castling(move):
                short += 1
            if board.is_queenside_castling(move):
                long += 1
            board.push(move)
        outcome = board.outcome(claim_draw=True)
        result, term = h["Result"], h.get("Termination", "")
        if board.is_checkmate() or board.is_stalemate() or board.is_insufficient_material():
            assert outcome.result() == result, (result, outcome)
        if term == "normal":
            assert outcome is not None and outcome.result() == result, (result, board.fen())
        print("ok", len(list(game.mainline())), short, long, result, term.replace(" ", "_"))
"#;

#[test]
fn sparring_plays_chess960_with_castling_both_ways_checked_by_python_chess() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("castle960.epd");
    // Kings on d1 and d8 between rooks in the corners, where the sparring engine's king table
    // wants them on c or g: castling is natural. One side can only castle long and the other
    // only short in the first two lines (pieces in the way); both ways are open in the third,
    // in Shredder-FEN.
    std::fs::write(
        &book,
        "rnbk3r/pppqbppp/3p1n2/4p3/3PP3/2N1B3/PPPQ1PPP/R2K1BNR w KQkq - 0 1\n\
         r2k1bnr/pppq1ppp/2n1b3/3pp3/4P3/3P1N2/PPPQBPPP/RNBK3R w KQkq - 0 1\n\
         r2k3r/pppqbppp/2npbn2/4p3/4P3/2NPBN2/PPPQBPPP/R2K3R w HAha - 0 1\n",
    )
    .unwrap();
    let pgn = dir.path().join("games.pgn");
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--pairs",
        "3",
        "--concurrency",
        "2",
        "--book",
        book.to_str().unwrap(),
        "--sequential",
        "--depth",
        "3",
        "--max-plies",
        "120",
        "--seed",
        "1",
        "--progress",
        "0",
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(tags(&text, "Variant").len(), 6, "{text}");
    assert!(
        tags(&text, "Termination")
            .iter()
            .all(|t| t != "rules infraction" && t != "abandoned"),
        "{text}"
    );

    // `spsa positions` replays every Chess960 game from its FEN (castling included) to its end:
    // a move misread would be an illegal move naming the file and line.
    assert!(text.contains("O-O"), "{text}");
    let positions = dir.path().join("positions.epd");
    let o = run(&[
        "positions",
        pgn.to_str().unwrap(),
        "-o",
        positions.to_str().unwrap(),
        "--skip-plies",
        "0",
        "--per-game",
        "1000",
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("6 games"), "{err}");
    let extracted = std::fs::read_to_string(&positions).unwrap();
    // The pairs' games repeat each other, so about half the positions are duplicates.
    assert!(
        extracted.lines().filter(|l| !l.starts_with('#')).count() > 100,
        "{err}\n{extracted}"
    );

    let Some(python) = python_chess() else {
        return;
    };
    let referee = Command::new(python)
        .args(["-c", REFEREE, pgn.to_str().unwrap()])
        .output()
        .expect("python3 runs");
    let said = String::from_utf8_lossy(&referee.stdout).into_owned();
    assert!(
        referee.status.success(),
        "{said}{}\n{text}",
        String::from_utf8_lossy(&referee.stderr)
    );
    let games: Vec<Vec<&str>> = said.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(games.len(), 6, "{said}");
    assert!(games.iter().all(|g| g[0] == "ok" && g[1] != "0"), "{said}");
    // Castling both ways in one game.
    assert!(
        games.iter().any(|g| g[2] != "0" && g[3] != "0"),
        "no game castled both ways:\n{said}\n{text}"
    );
}

#[test]
fn an_engine_without_uci_chess960_is_refused_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--engine2",
        standin(),
        "--pairs",
        "1",
        "--book",
        sample_book().to_str().unwrap(),
        "--nodes",
        "100",
        "--progress",
        "0",
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("does not declare the UCI_Chess960 option"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.contains("UCI_Chess960")).count(),
        1,
        "{err}"
    );
    assert!(std::fs::read_to_string(&pgn).unwrap_or_default().is_empty());
}

#[test]
fn the_variant_flag_overrides_the_book_s_choice() {
    let dir = tempfile::tempdir().unwrap();
    // Standard castling rights read as standard chess: `--variant standard` on a Chess960 book
    // is refused at the book, before any engine starts.
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--pairs",
        "1",
        "--book",
        sample_book().to_str().unwrap(),
        "--variant",
        "standard",
        "--depth",
        "1",
        "--progress",
        "0",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("chess960_sample.epd"), "{err}");
    // A standard position played as Chess960 on request: the PGN says so.
    let book = dir.path().join("start.epd");
    std::fs::write(
        &book,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n",
    )
    .unwrap();
    let pgn = dir.path().join("games.pgn");
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--pairs",
        "1",
        "--book",
        book.to_str().unwrap(),
        "--variant",
        "chess960",
        "--depth",
        "1",
        "--max-plies",
        "20",
        "--progress",
        "0",
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(tags(&text, "Variant"), ["Chess960", "Chess960"], "{text}");
    // A spelling the flag does not know is clap's refusal (exit 2), naming the value.
    let o = run(&["match", "--engine1", sparring(), "--variant", "atomic"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("atomic"), "{}", stderr(&o));
}

/// `tools/make_book --variant chess960|dfrc`: a tiny book of each kind from Stockfish at
/// shallow depths (seconds), read back through the project's book loader with Chess960 rules;
/// every position legal in Chess960 (shakmaty) and reached by its recorded moves from its start
/// array, no line twice, the header naming the variant.
const STOCKFISH: &str = "/usr/games/stockfish";

/// The example's binary, built by cargo as the test runs (a no-op when it is up to date).
fn make_book() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = crate::standin::cargo()
        .args(["build", "--quiet", "--example", "make_book"])
        .args(crate::standin::features())
        .output()
        .expect("cargo runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    target.join("debug/examples/make_book")
}

fn check_made_book(variant: &str) {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(make_book())
        .args([STOCKFISH, dir.path().to_str().unwrap(), "6"])
        .args(["--variant", variant, "--plies", "4", "--candidates", "12"])
        .args([
            "--prune-depth",
            "4",
            "--eval-depth",
            "6",
            "--balanced-cp",
            "400",
        ])
        .output()
        .expect("make_book runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let path = dir.path().join(format!("{variant}_balanced_4ply.epd"));
    let text = std::fs::read_to_string(&path).expect("the book");
    assert!(text.contains(&format!("# Variant {variant}.")), "{text}");
    assert!(text.contains(&format!("--variant {variant}")), "{text}");
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert_eq!(lines.iter().collect::<HashSet<_>>().len(), 6, "{text}");
    let starts: HashSet<&str> = lines
        .iter()
        .map(|l| l.split("c1 \"").nth(1).expect("c1").trim_end_matches("\";"))
        .collect();
    assert!(starts.len() >= 3, "not spread over arrays:\n{text}");

    let options = BookOptions {
        order: BookOrder::Sequential,
        seed: 1,
        max_plies: None,
        variant: Variant::Chess960,
    };
    let book = Book::load(&path, &options).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(book.len(), 6);
    assert!(book.chess960());
    for line in &lines {
        let fields: Vec<&str> = line.split(' ').take(4).collect();
        let castling = fields[2];
        if variant == "dfrc" {
            assert!(
                castling == "-"
                    || castling
                        .chars()
                        .all(|c| c.is_ascii_alphabetic() && !"KQkq".contains(c)),
                "not Shredder-FEN: {line}"
            );
        }
        let fen = format!("{} 0 1", fields.join(" "));
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Chess960)
            .unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(!pos.is_game_over(), "{line}");
        // The recorded moves replay from the start array to this very position.
        let c0 = line
            .split("c0 \"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let start_fen = start_of(line, variant);
        let mut replay: Chess = start_fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Chess960)
            .unwrap();
        for m in c0.split(' ') {
            let mv = m.parse::<UciMove>().unwrap().to_move(&replay).unwrap();
            replay.play_unchecked(mv);
        }
        assert_eq!(replay.board(), pos.board(), "{line}");
        assert_eq!(
            replay.castles().castling_rights(),
            pos.castles().castling_rights(),
            "{line}"
        );
    }
}

/// The start position of a book line, rebuilt from its `c1` array numbers by the numbering.
fn start_of(line: &str, variant: &str) -> String {
    let c1 = line
        .split("c1 \"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let nums: Vec<usize> = c1.split(' ').map(|n| n.parse().unwrap()).collect();
    let (w, b) = if variant == "dfrc" {
        (nums[0], nums[1])
    } else {
        (nums[0], nums[0])
    };
    chess960_start_fen(w, b)
}

#[test]
fn make_book_makes_chess960_and_dfrc_books_that_load_and_replay() {
    if !Path::new(STOCKFISH).exists() {
        eprintln!("skipped: {STOCKFISH} not found");
        return;
    }
    check_made_book("chess960");
    check_made_book("dfrc");
}
