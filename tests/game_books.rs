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
