//! PGN written by `spsa::game` checked by an independent reader: `pgn-extract` (Debian package
//! `pgn-extract`, installed in /usr/games). Skipped with a message when it is not installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use spsa::game::fake::{ScriptedPlayer, Step};
use spsa::game::{
    Adjudication, GameSettings, Opening, PgnOptions, START_FEN, TimeControl, play_game, write_pgn,
};

fn pgn_extract() -> Option<PathBuf> {
    let candidates = ["/usr/games/pgn-extract", "/usr/bin/pgn-extract"];
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .or_else(|| {
            Command::new("pgn-extract")
                .arg("-h")
                .output()
                .ok()
                .map(|_| PathBuf::from("pgn-extract"))
        })
}

/// Errors pgn-extract reports for `file`, or `Ok` when it read all `games` games cleanly.
fn check(tool: &Path, file: &Path, games: usize) -> Result<(), String> {
    let out = Command::new(tool)
        .arg("-r")
        .arg(file)
        .output()
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let matched = if games == 1 {
        "1 game matched out of 1.".to_string()
    } else {
        format!("{games} games matched out of {games}.")
    };
    if !out.status.success() || stderr.contains("Line number") || !stderr.contains(&matched) {
        return Err(stderr.into_owned());
    }
    Ok(())
}

async fn games() -> Vec<String> {
    let settings = GameSettings {
        time_control: TimeControl::Clock {
            base_ms: 1000,
            inc_ms: 10,
        },
        adjudication: Adjudication::classic(0, 0, 500, 2),
        ..GameSettings::default()
    };
    let mut out = Vec::new();
    let options = PgnOptions {
        event: "pgn-extract check".into(),
        extra_tags: vec![("WhiteOptions".into(), "KnightValue=\"320\"".into())],
        ..PgnOptions::default()
    };

    // Fool's mate from a book move.
    let opening = Opening::new(START_FEN, &["f2f3"], "t:1").unwrap();
    let mut w = ScriptedPlayer::moves("White Engine", &["g2g4"]);
    let mut b = ScriptedPlayer::new("Black", [Step::cp("e7e5", 10), Step::mate("d8h4", 1)]);
    let r = play_game(&mut w, &mut b, &opening, &settings).await;
    out.push(write_pgn(&r, &options));

    // Black to move from a FEN, won by adjudication.
    let fen = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1";
    let opening = Opening::new(fen, &[], "t:2").unwrap();
    let mut w = ScriptedPlayer::new("w", [Step::cp("c2c4", -600)]);
    let mut b = ScriptedPlayer::new("b", [Step::cp("d7d5", 550), Step::cp("e7e6", 700)]);
    let r = play_game(&mut w, &mut b, &opening, &settings).await;
    out.push(write_pgn(&r, &options));

    // A time forfeit, and an illegal move with a token that needs cleaning.
    let opening = Opening::start_position();
    let mut w = ScriptedPlayer::new("w", [Step::slow("e2e4", 1500)]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let r = play_game(&mut w, &mut b, &opening, &settings).await;
    out.push(write_pgn(&r, &options));
    let mut w = ScriptedPlayer::moves("w", &["e2e4", "e1e3}"]);
    let mut b = ScriptedPlayer::moves("b", &["e7e5"]);
    let r = play_game(&mut w, &mut b, &opening, &settings).await;
    out.push(write_pgn(&r, &options));
    out
}

#[tokio::test(start_paused = true)]
async fn pgn_extract_reads_our_pgn_without_errors() {
    let Some(tool) = pgn_extract() else {
        eprintln!("pgn-extract not installed: skipping (apt-get install pgn-extract)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let games = games().await;
    let path = dir.path().join("games.pgn");
    std::fs::write(&path, games.concat()).unwrap();
    check(&tool, &path, games.len()).unwrap_or_else(|e| panic!("pgn-extract: {e}"));

    // The check itself can fail: a broken game is reported.
    let bad = games[0].replace("g4", "Ke3");
    let bad_path = dir.path().join("bad.pgn");
    std::fs::write(&bad_path, bad).unwrap();
    assert!(check(&tool, &bad_path, 1).is_err());
}
