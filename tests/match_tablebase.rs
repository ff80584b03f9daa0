//! `spsa match` with Syzygy tablebase adjudication, on the real 3-4-piece tables (fetched once by
//! tests/fetch_syzygy.sh) and the bundled sparring engine.

use crate::match_common;
use crate::syzygy_tables;

use std::path::Path;

use match_common::*;

/// Five pieces, White to move: any search takes the queen (Rxd5) and reaches KRvKP, a table win.
const CAPTURE_INTO_TABLES: &str = "4k3/p7/8/3q4/8/8/8/3RK3 w - - 0 1";

fn write_book(dir: &Path) -> String {
    let book = dir.join("tb.epd");
    std::fs::write(&book, format!("{CAPTURE_INTO_TABLES}\n")).unwrap();
    book.to_str().unwrap().to_string()
}

/// Both games of the pair end right after the capture with White's table win.
fn assert_tablebase_games(out: &str, pgn: &str) {
    let c = counts(out);
    assert_consistent(&c);
    assert_eq!((c.games, c.wins, c.draws, c.losses), (2, 1, 0, 1), "{out}");
    assert_eq!(tags(pgn, "Termination"), ["adjudication", "adjudication"]);
    assert_eq!(tags(pgn, "Result"), ["1-0", "1-0"]);
    assert_eq!(tags(pgn, "PlyCount"), ["1", "1"]);
    assert_eq!(
        pgn.matches("{White wins by tablebase} 1-0").count(),
        2,
        "{pgn}"
    );
}

#[test]
fn the_tb_flag_ends_games_by_the_tables_verdict() {
    let Some(tables) = syzygy_tables::tables() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let book = write_book(dir.path());
    let pgn = dir.path().join("games.pgn");
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--depth",
        "3",
        "--book",
        &book,
        "--pairs",
        "1",
        "--progress",
        "0",
        "--tb",
        tables.to_str().unwrap(),
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert_tablebase_games(&out, &std::fs::read_to_string(&pgn).unwrap());
}

#[test]
fn a_toml_tb_path_is_relative_to_the_config() {
    let Some(tables) = syzygy_tables::tables() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&tables, dir.path().join("syzygy")).unwrap();
    let book = write_book(dir.path());
    let conf = dir.path().join("m.toml");
    std::fs::write(
        &conf,
        format!(
            "[engine1]\ncommand = \"{}\"\n[games]\nbook = \"{book}\"\ndepth = 3\npgn = \"games.pgn\"\n[adjudication]\ntb_path = \"syzygy\"\n",
            sparring()
        ),
    )
    .unwrap();
    let o = run(&[
        "match",
        "--config",
        conf.to_str().unwrap(),
        "--pairs",
        "1",
        "--progress",
        "0",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let pgn = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    assert_tablebase_games(&out, &pgn);
}

#[test]
fn an_unusable_tb_folder_is_a_user_error_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let book = write_book(dir.path());
    let pgn = dir.path().join("games.pgn");
    for tb in [dir.path().join("missing"), dir.path().to_path_buf()] {
        let o = run(&[
            "match",
            "--engine1",
            sparring(),
            "--depth",
            "3",
            "--book",
            &book,
            "--tb",
            tb.to_str().unwrap(),
            "--pgn",
            pgn.to_str().unwrap(),
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(tb.to_str().unwrap()), "{err}");
        assert!(!pgn.exists());
    }
}
