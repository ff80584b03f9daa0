//! `UciEngine` against the real Debian engines (`apt-get install stockfish toga2 glaurung`).
//! A missing engine fails the test; set `SPSA_SKIP_REAL_ENGINES=1` to skip them deliberately.

use std::path::Path;
use std::time::{Duration, Instant};

use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};
use spsa::engine::{
    BestMove, EngineError, EngineFault, EngineSpec, GoCommand, OptionError, OptionKind,
    OptionValue, Player, UciEngine,
};

const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

async fn engine(name: &str, path: &str) -> Option<UciEngine> {
    if !Path::new(path).exists() {
        if std::env::var_os("SPSA_SKIP_REAL_ENGINES").is_some() {
            eprintln!("skipping: {path} not installed");
            return None;
        }
        panic!("{path} is not installed (apt-get install {name}, or set SPSA_SKIP_REAL_ENGINES=1)");
    }
    let mut e = UciEngine::start(EngineSpec::new(name, path))
        .await
        .expect("engine starts");
    // Books would answer instantly without any search info.
    if e.options().iter().any(|o| o.name == "OwnBook") {
        e.set_option("OwnBook", false).await.unwrap();
    }
    e.set_option("Hash", 16.0).await.unwrap();
    e.is_ready().await.unwrap();
    Some(e)
}

fn spin(e: &UciEngine, name: &str) -> (i64, i64, i64) {
    let o = e
        .options()
        .iter()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("{name} missing from {:?}", e.options()));
    match o.kind {
        OptionKind::Spin {
            default: Some(d),
            min: Some(lo),
            max: Some(hi),
        } => (d, lo, hi),
        ref k => panic!("{name}: {k:?}"),
    }
}

/// The move is legal in the position after `moves`.
fn assert_legal(moves: &[String], best: &BestMove) {
    let mut pos = Chess::default();
    for m in moves {
        let m = m.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
    }
    let BestMove::Move(m) = best else {
        panic!("no move")
    };
    assert!(
        m.parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .is_some(),
        "{m} is not legal"
    );
}

#[tokio::test]
async fn toga_options_search_and_stall() {
    let Some(mut e) = engine("toga2", "/usr/games/toga2").await else {
        return;
    };
    assert_eq!(e.id_name(), Some("Toga II 3.0"));
    for name in [
        "Material",
        "King Safety",
        "Pawn Structure",
        "Passed Pawns",
        "Piece Activity",
    ] {
        assert_eq!(spin(&e, name), (100, 0, 400), "{name}");
    }
    assert!(matches!(
        &e.options().iter().find(|o| o.name == "NullMove Pruning").unwrap().kind,
        OptionKind::Combo { vars, .. } if vars == &["Always", "Fail High", "Never"]
    ));

    // Validation against the real list.
    let bad = [("King Safety".to_string(), OptionValue::Number(401.0))];
    let err = e
        .validate_options(bad.iter().map(|(n, v)| (n.as_str(), v)))
        .unwrap_err();
    assert!(matches!(
        err,
        OptionError::OutOfRange {
            min: 0,
            max: 400,
            ..
        }
    ));
    let msg = err.to_string();
    assert!(
        msg.contains("`toga2`") && msg.contains("`King Safety`"),
        "{msg}"
    );
    assert!(
        msg.contains("Passed Pawns (spin 0..=400, default 100)"),
        "{msg}"
    );
    let err = e.set_option("Kings Safety", 100.0).await.unwrap_err();
    assert!(matches!(
        err,
        EngineError::Option(OptionError::Unknown { .. })
    ));

    let good = [
        ("material".to_string(), OptionValue::Number(120.4)),
        ("King Safety".to_string(), OptionValue::Number(80.0)),
        (
            "NullMove Pruning".to_string(),
            OptionValue::from("fail high"),
        ),
    ];
    e.configure(good.iter().map(|(n, v)| (n.as_str(), v)))
        .await
        .unwrap();
    e.new_game().await.unwrap();

    // Depth-limited search.
    let moves = vec!["e2e4".to_string()];
    let go = GoCommand {
        depth: Some(4),
        ..GoCommand::default()
    };
    let r = e
        .search(STARTPOS, &moves, &go, Duration::from_secs(10))
        .await
        .unwrap();
    assert_legal(&moves, &r.best);
    assert_eq!(r.depth, Some(4), "{r:?}");
    assert!(r.score.is_some() && r.nodes.is_some(), "{r:?}");

    // Toga ignores `go nodes`: it searches on until our deadline, then obeys `stop`.
    let go = GoCommand {
        nodes: Some(1000),
        ..GoCommand::default()
    };
    let t = Instant::now();
    let err = e
        .search(STARTPOS, &moves, &go, Duration::from_millis(400))
        .await
        .unwrap_err();
    assert!(
        t.elapsed() < Duration::from_millis(1000),
        "{:?}",
        t.elapsed()
    );
    assert!(
        matches!(err, EngineFault::Stalled { answered_stop: true, waited } if waited >= Duration::from_millis(400)),
        "{err:?}"
    );
    assert!(!err.needs_restart());
    // Still in sync: the next search answers normally.
    let go = GoCommand {
        depth: Some(2),
        ..GoCommand::default()
    };
    let r = e
        .search(STARTPOS, &[], &go, Duration::from_secs(10))
        .await
        .unwrap();
    assert_legal(&[], &r.best);
    assert_eq!(r.depth, Some(2));
    e.quit().await;
}

#[tokio::test]
async fn glaurung_options_and_search() {
    let Some(mut e) = engine("glaurung", "/usr/games/glaurung").await else {
        return;
    };
    assert_eq!(e.id_name(), Some("Glaurung 2.2"));
    for name in [
        "Pawn Structure (Endgame)",
        "Pawn Structure (Middle Game)",
        "Passed Pawns (Endgame)",
        "Mobility (Middle Game)",
        "Space",
        "Aggressiveness",
        "Cowardice",
    ] {
        assert_eq!(spin(&e, name), (100, 0, 200), "{name}");
    }
    assert_eq!(spin(&e, "King Safety Max Value"), (500, 100, 1000));
    let err = e
        .set_option("Pawn Structure (Endgame)", -0.6)
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        EngineError::Option(OptionError::OutOfRange { .. })
    ));
    e.set_option("pawn structure (endgame)", 150.5)
        .await
        .unwrap();
    e.set_option("Threads", 1.0).await.unwrap();
    e.new_game().await.unwrap();
    let moves = vec!["d2d4".to_string(), "g8f6".to_string()];
    let go = GoCommand {
        movetime_ms: Some(100),
        ..GoCommand::default()
    };
    let r = e
        .search(STARTPOS, &moves, &go, Duration::from_secs(5))
        .await
        .unwrap();
    assert_legal(&moves, &r.best);
    assert!(
        r.score.is_some() && r.depth.is_some_and(|d| d >= 1),
        "{r:?}"
    );
    assert!(r.elapsed >= Duration::from_millis(90), "{r:?}");
    e.quit().await;
}

#[tokio::test]
async fn stockfish_options_and_search() {
    let Some(mut e) = engine("stockfish", "/usr/games/stockfish").await else {
        return;
    };
    assert!(e.id_name().unwrap().starts_with("Stockfish"));
    let (_, lo, _) = spin(&e, "Hash");
    assert_eq!(lo, 1);
    assert_eq!(spin(&e, "Threads").1, 1);
    e.set_option("UCI_ShowWDL", true).await.unwrap();
    e.set_option("Clear Hash", OptionValue::Press)
        .await
        .unwrap();
    e.new_game().await.unwrap();
    let go = GoCommand {
        depth: Some(10),
        ..GoCommand::default()
    };
    let r = e
        .search(STARTPOS, &[], &go, Duration::from_secs(10))
        .await
        .unwrap();
    assert_legal(&[], &r.best);
    assert_eq!(r.depth, Some(10), "{r:?}");
    assert!(
        r.score.is_some() && r.nodes.is_some_and(|n| n > 100),
        "{r:?}"
    );
    // Mate in one for white: the score is a mate.
    let fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1";
    let r = e
        .search(fen, &[], &go, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(r.best, BestMove::Move("a1a8".into()));
    assert_eq!(r.score, Some(spsa::engine::Score::Mate(1)));
    e.quit().await;
}
