//! The bundled opening books load, are valid, balanced-looking and diverse.

use std::collections::HashSet;
use std::path::PathBuf;

use shakmaty::{Color, Position, Role};
use spsa::game::{Book, BookOptions, BookOrder, START_FEN};

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("openings")
        .join(name)
}

#[test]
fn bundled_epd_book_loads_and_is_diverse() {
    let book = Book::load(path("balanced_6ply.epd"), &BookOptions::default()).expect("loads");
    assert!(book.len() >= 200, "{} openings", book.len());
    let mut fens = HashSet::new();
    let mut pawn_structures = HashSet::new();
    for o in book.openings() {
        let pos = o.position();
        assert!(!pos.is_game_over());
        assert_eq!(pos.turn(), Color::White, "6 plies from the start");
        assert_eq!(pos.fullmoves().get(), 4, "hmvc/fmvn opcodes honoured");
        fens.insert(o.fen());
        let b = pos.board();
        pawn_structures.insert((
            b.by_role(Role::Pawn) & b.by_color(Color::White),
            b.by_role(Role::Pawn) & b.by_color(Color::Black),
        ));
        assert!(o.id().is_some_and(|id| id.starts_with("bal6-")));
    }
    assert_eq!(fens.len(), book.len(), "no duplicates");
    assert!(
        pawn_structures.len() * 2 >= book.len(),
        "at most 2 per pawn structure"
    );
}

#[test]
fn bundled_pgn_book_loads_with_and_without_ply_limit() {
    let book = Book::load(path("balanced_small.pgn"), &BookOptions::default()).expect("loads");
    assert_eq!(book.len(), 20);
    for o in book.openings() {
        assert_eq!(o.start_fen(), START_FEN);
        assert_eq!(o.moves_uci().len(), 6);
    }
    // The PGN lines are the first lines of the EPD book: same end positions.
    let epd = Book::load(
        path("balanced_6ply.epd"),
        &BookOptions {
            order: BookOrder::Sequential,
            ..BookOptions::default()
        },
    )
    .expect("loads");
    for (p, e) in book.openings().iter().zip(epd.openings()) {
        assert_eq!(p.fen(), e.fen());
    }
    let short = Book::load(
        path("balanced_small.pgn"),
        &BookOptions {
            max_plies: Some(2),
            ..BookOptions::default()
        },
    )
    .expect("loads");
    assert!(short.openings().iter().all(|o| o.moves_uci().len() == 2));
}

/// The large book's lines: (EPD position, `ce`, `c0` moves), header lines skipped.
fn large_lines() -> Vec<(String, i32, Vec<String>)> {
    let text = std::fs::read_to_string(path("balanced_8ply_large.epd")).expect("bundled");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().take(4).collect();
            let op = |name: &str| {
                l.split(';')
                    .map(str::trim)
                    .find_map(|o| o.strip_prefix(name))
                    .map(|v| v.trim().trim_matches('"').to_string())
                    .unwrap_or_else(|| panic!("no {name} in {l}"))
            };
            let ce = op("ce ").parse().expect("ce is a number");
            let moves = op("c0 ").split_whitespace().map(String::from).collect();
            (fields.join(" "), ce, moves)
        })
        .collect()
}

/// The large book: at least 5,000 distinct positions through spsa's own loader, each the end
/// of its recorded 8-ply line of legal moves, balanced by the recipe's limit, and big enough
/// that its tuning part alone covers 2,000 pairs without replaying an opening.
#[test]
fn large_epd_book_loads_distinct_legal_and_balanced() {
    use shakmaty::fen::Epd;
    use shakmaty::uci::UciMove;
    use shakmaty::{Chess, EnPassantMode};
    use spsa::game::{BookPart, Holdout};

    let options = BookOptions {
        order: BookOrder::Sequential,
        ..BookOptions::default()
    };
    let book = Book::load(path("balanced_8ply_large.epd"), &options).expect("loads");
    assert!(book.len() >= 5000, "{} openings", book.len());
    let fens: HashSet<String> = book.openings().iter().map(|o| o.fen()).collect();
    assert_eq!(fens.len(), book.len(), "no duplicates");
    let lines = large_lines();
    assert_eq!(lines.len(), book.len());
    for (o, (epd, ce, moves)) in book.openings().iter().zip(&lines) {
        let pos = o.position();
        assert!(!pos.is_game_over());
        assert_eq!(pos.turn(), Color::White, "8 plies from the start");
        assert_eq!(pos.fullmoves().get(), 5, "hmvc/fmvn opcodes honoured");
        assert!(o.id().is_some_and(|id| id.starts_with("bal8-")));
        assert!(ce.abs() <= 50, "{epd}: ce {ce}");
        // The recorded line is legal and ends in this position.
        assert_eq!(moves.len(), 8, "{epd}");
        let mut replay = Chess::default();
        for m in moves {
            let mv = m
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(&replay).ok())
                .unwrap_or_else(|| panic!("{epd}: illegal {m}"));
            replay.play_unchecked(mv);
        }
        assert_eq!(
            Epd::from_position(&replay, EnPassantMode::Legal).to_string(),
            *epd
        );
    }
    let h = Holdout {
        share: 0.2,
        seed: 1,
    };
    let tuning = Book::load(path("balanced_8ply_large.epd"), &options)
        .unwrap()
        .part(h, BookPart::Tuning)
        .unwrap();
    assert!(tuning.len() >= 4000, "{}", tuning.len());
}

/// A sample of the large book scored by Stockfish now: the book is balanced, not just its
/// recorded `ce`. Needs /usr/games/stockfish; about a minute of one core.
/// `cargo test --test game_books -- --ignored --nocapture`
#[test]
#[ignore]
fn large_book_sample_is_balanced_by_stockfish() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let mut sf = Command::new("/usr/games/stockfish")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("stockfish installed");
    let mut input = sf.stdin.take().unwrap();
    let mut output = BufReader::new(sf.stdout.take().unwrap());
    let mut wait_for = |token: &str| -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            assert!(output.read_line(&mut line).unwrap() > 0, "stockfish exited");
            let done = line.split_whitespace().next() == Some(token);
            lines.push(line);
            if done {
                return lines;
            }
        }
    };
    writeln!(input, "uci").unwrap();
    wait_for("uciok");
    writeln!(
        input,
        "setoption name Threads value 1\nsetoption name Hash value 16"
    )
    .unwrap();
    let lines = large_lines();
    let step = lines.len() / 50;
    let mut evals = Vec::new();
    for (epd, _, _) in lines.iter().step_by(step).take(50) {
        writeln!(input, "ucinewgame\nposition fen {epd} 0 5\ngo depth 12").unwrap();
        let out = wait_for("bestmove");
        let cp = out
            .iter()
            .rev()
            .find_map(|l| {
                let t: Vec<&str> = l.split_whitespace().collect();
                let i = t.iter().position(|w| *w == "cp")?;
                t.get(i + 1)?.parse::<i32>().ok()
            })
            .unwrap_or_else(|| panic!("{epd}: no score"));
        evals.push(cp); // White to move: White's view.
    }
    writeln!(input, "quit").unwrap();
    sf.wait().unwrap();
    let n = evals.len() as f64;
    let mean = evals.iter().map(|&e| f64::from(e)).sum::<f64>() / n;
    let mean_abs = evals.iter().map(|&e| f64::from(e.abs())).sum::<f64>() / n;
    let within = evals.iter().filter(|e| e.abs() <= 100).count();
    println!(
        "{} positions at depth 12: mean {mean:+.1} cp, mean |eval| {mean_abs:.1} cp, {within} within ±100 cp; {evals:?}",
        evals.len()
    );
    assert!(mean.abs() <= 30.0 && mean_abs <= 60.0, "{evals:?}");
    assert!(within as f64 >= 0.9 * n, "{evals:?}");
}
