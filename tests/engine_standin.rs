//! `UciEngine` against the misbehaving stand-in engine: every fault, end to end.

use crate::standin;

use std::time::{Duration, Instant};

use spsa::engine::{
    BestMove, EngineError, EngineFault, EngineSpec, GoCommand, OptionError, OptionValue, Player,
    Score, UciEngine,
};

const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn spec(args: &[&str]) -> EngineSpec {
    let mut s = EngineSpec::new("standin", standin::standin());
    s.args = args.iter().map(|a| a.to_string()).collect();
    s.handshake_timeout = Duration::from_secs(5);
    s.ready_timeout = Duration::from_secs(2);
    s
}

async fn start(args: &[&str]) -> UciEngine {
    UciEngine::start(spec(args)).await.expect("stand-in starts")
}

fn depth1() -> GoCommand {
    GoCommand {
        depth: Some(1),
        ..GoCommand::default()
    }
}

/// Whether a process with this pid still exists (and is not a zombie).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z "),
        Err(_) => false,
    }
}

#[tokio::test]
async fn plays_legal_moves_and_reports_info() {
    let mut e = start(&["--score", "37"]).await;
    assert_eq!(e.id_name(), Some("uci-standin"));
    e.new_game().await.unwrap();
    let r = e
        .search(
            STARTPOS,
            &["e2e4".into(), "d7d5".into()],
            &depth1(),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(r.best, BestMove::Move("e4d5".into()), "prefers the capture");
    assert_eq!(r.score, Some(Score::Cp(37)));
    assert_eq!(r.depth, Some(1));
    assert_eq!(r.nodes, Some(1));
    assert!(r.elapsed < Duration::from_secs(5));
    let r = e
        .search("startpos", &[], &depth1(), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(r.best, BestMove::Move("a2a3".into()));
    e.quit().await;
    assert!(!e.is_running());
}

#[tokio::test]
async fn crash_is_disconnected_and_restart_recovers() {
    let mut e = start(&["--crash-after", "1"]).await;
    let first = e
        .search(STARTPOS, &[], &depth1(), Duration::from_secs(5))
        .await;
    assert!(first.is_ok(), "{first:?}");
    let err = e
        .search(
            STARTPOS,
            &["a2a3".into(), "a7a6".into()],
            &depth1(),
            Duration::from_secs(5),
        )
        .await
        .unwrap_err();
    let EngineFault::Disconnected(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(msg.contains("exit status: 3"), "{msg}");
    assert!(err.needs_restart());
    assert!(!e.is_running());
    // Further calls fail fast instead of hanging.
    assert!(matches!(
        e.search(STARTPOS, &[], &depth1(), Duration::from_secs(5))
            .await,
        Err(EngineFault::Disconnected(_))
    ));
    e.restart().await.unwrap();
    assert!(
        e.search(STARTPOS, &[], &depth1(), Duration::from_secs(5))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn hang_is_stalled_without_stop_and_process_is_killed() {
    let mut e = start(&["--hang-after", "0"]).await;
    let pid = e.pid().unwrap();
    let t = Instant::now();
    let err = e
        .search(STARTPOS, &[], &depth1(), Duration::from_millis(300))
        .await
        .unwrap_err();
    let spent = t.elapsed();
    let EngineFault::Stalled {
        waited,
        answered_stop,
    } = err
    else {
        panic!("{err:?}")
    };
    assert!(!answered_stop);
    assert!(waited >= Duration::from_millis(300) && waited < Duration::from_millis(600));
    // deadline 300 ms + grace max(300/4, 100 ms) = 100 ms, plus the kill.
    assert!(spent < Duration::from_millis(1500), "{spent:?}");
    assert!(err.needs_restart());
    assert!(!alive(pid), "hung process {pid} must be killed");
    e.restart().await.unwrap();
    assert_ne!(e.pid(), Some(pid));
}

#[tokio::test]
async fn stop_is_obeyed_and_engine_stays_in_sync() {
    let mut e = start(&["--think", "5000"]).await;
    let err = e
        .search(STARTPOS, &[], &depth1(), Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            EngineFault::Stalled {
                answered_stop: true,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!err.needs_restart());
    assert!(e.is_running());
    // The drained bestmove must not be mistaken for the next answer: this one also stalls.
    let t = Instant::now();
    let err = e
        .search(
            STARTPOS,
            &["a2a3".into()],
            &depth1(),
            Duration::from_millis(200),
        )
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        EngineFault::Stalled {
            answered_stop: true,
            ..
        }
    ));
    assert!(t.elapsed() >= Duration::from_millis(200));
    e.new_game().await.unwrap();
}

#[tokio::test]
async fn ignored_stop_is_stalled_and_killed() {
    let mut e = start(&["--think", "5000", "--ignore-stop"]).await;
    let pid = e.pid().unwrap();
    let err = e
        .search(STARTPOS, &[], &depth1(), Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            EngineFault::Stalled {
                answered_stop: false,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!e.is_running());
    assert!(!alive(pid));
}

#[tokio::test]
async fn slow_or_missing_uciok_and_readyok_are_startup_errors() {
    let mut s = spec(&["--slow-uciok", "3000"]);
    s.handshake_timeout = Duration::from_millis(300);
    let t = Instant::now();
    let err = UciEngine::start(s).await.unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2));
    let EngineFault::Startup(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains("no `uciok` within") && msg.contains("standin"),
        "{msg}"
    );

    // Slow but within the deadline is fine.
    let mut s = spec(&["--slow-uciok", "100"]);
    s.handshake_timeout = Duration::from_secs(3);
    assert!(UciEngine::start(s).await.is_ok());

    let mut s = spec(&["--no-uciok"]);
    s.handshake_timeout = Duration::from_millis(200);
    assert!(matches!(
        UciEngine::start(s).await,
        Err(EngineFault::Startup(_))
    ));

    let mut s = spec(&["--no-readyok"]);
    s.ready_timeout = Duration::from_millis(200);
    let err = UciEngine::start(s).await.unwrap_err();
    let EngineFault::Startup(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(msg.contains("no `readyok` within"), "{msg}");

    let s = EngineSpec::new("ghost", "/nonexistent/engine");
    let err = UciEngine::start(s).await.unwrap_err();
    assert!(err.to_string().contains("cannot run"), "{err}");
}

#[tokio::test]
async fn garbage_is_tolerated() {
    let mut e = start(&["--garbage", "--score", "-12"]).await;
    e.new_game().await.unwrap();
    for i in 0..4 {
        let moves: Vec<String> = if i % 2 == 0 {
            vec![]
        } else {
            vec!["e2e4".into()]
        };
        let r = e
            .search(STARTPOS, &moves, &depth1(), Duration::from_secs(5))
            .await
            .unwrap();
        assert!(
            matches!(r.best, BestMove::Move(ref m) if m.len() == 4),
            "{r:?}"
        );
        assert_eq!(r.score, Some(Score::Cp(-12)));
    }
}

#[tokio::test]
async fn no_move_and_illegal_answers_are_passed_through() {
    for (flag, want) in [
        ("--none-after", BestMove::NoMove),
        ("--null-after", BestMove::NoMove),
        ("--illegal-after", BestMove::Move("a1b1".into())),
    ] {
        let mut e = start(&[flag, "1"]).await;
        let first = e
            .search(STARTPOS, &[], &depth1(), Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(first.best, BestMove::Move("a2a3".into()));
        let r = e
            .search(
                STARTPOS,
                &["a2a3".into(), "h7h6".into()],
                &depth1(),
                Duration::from_secs(5),
            )
            .await
            .unwrap();
        // For --illegal-after: a move of one of our pieces that is not legal (rook onto knight).
        assert_eq!(r.best, want, "{flag}");
    }
}

#[tokio::test]
async fn deep_info_is_read_right() {
    let mut e = start(&["--deep-info"]).await;
    let r = e
        .search(STARTPOS, &[], &depth1(), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(r.depth, Some(300));
    assert_eq!(r.score, Some(Score::Mate(200)));
    assert_eq!(r.nodes, Some(123_456_789_012));
}

#[tokio::test]
async fn info_flood_keeps_up() {
    let n = 100_000u32;
    let mut e = start(&["--info-flood", &n.to_string(), "--score", "7"]).await;
    let t = Instant::now();
    let r = e
        .search(STARTPOS, &[], &depth1(), Duration::from_secs(20))
        .await
        .unwrap();
    let spent = t.elapsed();
    // The last info line (depth 1, score 7) comes after the flood.
    assert_eq!(r.score, Some(Score::Cp(7)));
    assert_eq!(r.depth, Some(1));
    eprintln!("{n} info lines in {spent:?} (debug build)");
    assert!(spent < Duration::from_secs(10), "{spent:?}");
}

#[tokio::test]
async fn options_are_validated_rounded_and_reach_the_engine() {
    let mut e = start(&[
        "--spin",
        "Pawn Structure (Endgame)=100:0:200",
        "--spin",
        "Aggression=0:-50:50",
        "--score-option",
        "Pawn Structure (Endgame)",
    ])
    .await;
    let names: Vec<&str> = e.options().iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["Pawn Structure (Endgame)", "Aggression"]);

    e.set_option("pawn structure (endgame)", 123.6)
        .await
        .unwrap();
    e.is_ready().await.unwrap();
    let r = e
        .search(STARTPOS, &[], &depth1(), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(
        r.score,
        Some(Score::Cp(124)),
        "rounded value reached the engine"
    );

    let err = e
        .set_option("Pawn Structure (Endgame)", 200.5)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::Option(OptionError::OutOfRange {
                min: 0,
                max: 200,
                ..
            })
        ),
        "{err:?}"
    );
    let wanted = [
        ("Aggression".to_string(), OptionValue::Number(-10.0)),
        ("Mobility".to_string(), OptionValue::Number(1.0)),
    ];
    let err = e
        .configure(wanted.iter().map(|(n, v)| (n.as_str(), v)))
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("`standin`") && msg.contains("`Mobility`"),
        "{msg}"
    );
    assert!(
        msg.contains("Aggression (spin -50..=50, default 0)"),
        "{msg}"
    );
    assert!(
        msg.contains("Pawn Structure (Endgame) (spin 0..=200, default 100)"),
        "{msg}"
    );

    // Options survive a restart.
    e.restart().await.unwrap();
    let r = e
        .search(STARTPOS, &[], &depth1(), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(r.score, Some(Score::Cp(124)));
}

#[tokio::test]
async fn dropping_kills_the_process() {
    let e = start(&["--hang-after", "0"]).await;
    let pid = e.pid().unwrap();
    assert!(alive(pid));
    drop(e);
    let t = Instant::now();
    while alive(pid) && t.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "process {pid} outlived its UciEngine");
}

#[tokio::test]
async fn quit_kills_an_engine_that_ignores_it() {
    let mut e = start(&["--ignore-quit"]).await;
    let pid = e.pid().unwrap();
    let t = Instant::now();
    e.quit().await;
    let spent = t.elapsed();
    assert!(
        spent >= Duration::from_millis(500) && spent < Duration::from_secs(2),
        "{spent:?}"
    );
    assert!(!alive(pid));
    assert!(!e.is_running());

    let mut e = start(&[]).await;
    let pid = e.pid().unwrap();
    let t = Instant::now();
    e.quit().await;
    assert!(t.elapsed() < Duration::from_millis(500));
    assert!(!alive(pid));
}

/// A stall the engine ended by obeying `stop`: how long into the search `stop` was sent.
fn stopped(err: EngineFault) -> Duration {
    match err {
        EngineFault::Stalled {
            waited,
            answered_stop: true,
        } => waited,
        other => panic!("expected a stall ended by stop: {other:?}"),
    }
}

/// `search_blocking` keeps `search`'s rules: the answer, a stop obeyed (engine kept, in sync),
/// a stop ignored or a hang (killed), a crash (disconnected). Its deadline is the watchdog's.
#[tokio::test]
async fn blocking_searches_keep_the_fault_rules() {
    let deadline = Duration::from_millis(300);
    let mut e = start(&["--score", "37"]).await;
    let r = e
        .search_blocking(STARTPOS, &[], &depth1(), deadline)
        .await
        .unwrap();
    assert_eq!(r.score, Some(Score::Cp(37)));
    assert!(matches!(r.best, BestMove::Move(_)));

    let mut e = start(&["--think", "5000"]).await;
    let pid = e.pid().unwrap();
    for moves in [vec![], vec!["a2a3".to_string()]] {
        let t = Instant::now();
        let err = e
            .search_blocking(STARTPOS, &moves, &depth1(), deadline)
            .await
            .unwrap_err();
        let waited = stopped(err);
        // The watchdog wakes at the deadline (the bound leaves room for a loaded machine).
        assert!(waited >= deadline && waited < deadline + Duration::from_millis(400));
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert_eq!(e.pid(), Some(pid), "an engine that obeys stop is kept");
    }
    e.new_game().await.unwrap();

    for args in [
        &["--think", "5000", "--ignore-stop"][..],
        &["--hang-after", "0"],
    ] {
        let mut e = start(args).await;
        let pid = e.pid().unwrap();
        let t = Instant::now();
        let err = e
            .search_blocking(STARTPOS, &[], &depth1(), deadline)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                EngineFault::Stalled {
                    answered_stop: false,
                    ..
                }
            ),
            "{args:?}: {err:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert!(!e.is_running());
        assert!(!alive(pid), "{args:?}: process {pid} must be killed");
        e.restart().await.unwrap();
    }

    let mut e = start(&["--crash-after", "0"]).await;
    let err = e
        .search_blocking(STARTPOS, &[], &depth1(), deadline)
        .await
        .unwrap_err();
    assert!(matches!(err, EngineFault::Disconnected(_)), "{err:?}");
    assert!(!e.is_running());
}

/// The watchdog sleeps towards the armed deadline: a search armed with a long deadline that
/// ended early leaves it asleep, and the next search's earlier deadline must wake it, so a
/// stall is stopped at its own deadline (as the runtime's timer would), not at the old one nor
/// at a polling tick's (it looked ten times a second before).
#[tokio::test]
async fn a_blocking_search_is_stopped_at_its_own_deadline_after_a_longer_one() {
    let mut e = start(&["--think", "400"]).await;
    let pid = e.pid().unwrap();
    // Through `Player::search` in blocking mode, as the arena's slots play.
    e.block_searches();
    e.search(STARTPOS, &[], &depth1(), Duration::from_secs(30))
        .await
        .unwrap();
    let short = Duration::from_millis(30);
    let t = Instant::now();
    let err = e
        .search(STARTPOS, &["a2a3".into()], &depth1(), short)
        .await
        .unwrap_err();
    let waited = stopped(err);
    assert!(
        waited >= short && waited < short + Duration::from_millis(60),
        "stop sent {waited:?} into a search with a {short:?} deadline"
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(e.pid(), Some(pid), "an engine that obeys stop is kept");
    e.new_game().await.unwrap();
    let r = e
        .search(STARTPOS, &[], &depth1(), Duration::from_secs(30))
        .await
        .unwrap();
    assert!(matches!(r.best, BestMove::Move(_)));
}
