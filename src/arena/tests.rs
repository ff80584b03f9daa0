//! The arena's own rules, with scripted seats instead of engine processes: per-game options are
//! sent only when they change, a crashed engine is restarted and keeps its options, an engine
//! that cannot come back loses by start-up failure until it can, and an option the engine
//! rejects stops play instead of costing games. The seats live on the slot's thread, as real
//! engines do; tests look at them through `Arena::inspect`.

use std::time::Duration;

use super::*;
use crate::engine::GoCommand;
use crate::game::fake::{ScriptedPlayer, Step};
use crate::game::{BookOrder, EndReason, GameResult, Opening, TimeControl};

/// A scripted player with the life cycle of an engine process: faults that kill a real process
/// leave it down until `restart`, which can be told to fail.
struct ScriptedSeat {
    player: ScriptedPlayer,
    /// Set when the seat is dropped (a real engine process is killed then).
    dropped: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    running: bool,
    /// Option names it declares; anything else is rejected like an unknown UCI option.
    declared: Vec<&'static str>,
    /// Every `configure` call, in order.
    configured: Vec<OptionSet>,
    restarts: usize,
    /// How many of the next restarts fail.
    failing_restarts: usize,
}

impl ScriptedSeat {
    fn new(name: &str, moves: &[Step]) -> ScriptedSeat {
        ScriptedSeat {
            player: ScriptedPlayer::new(name, moves.iter().cloned()),
            dropped: None,
            running: true,
            declared: vec!["X"],
            configured: Vec::new(),
            restarts: 0,
            failing_restarts: 0,
        }
    }
}

impl Drop for ScriptedSeat {
    fn drop(&mut self) {
        if let Some(flag) = &self.dropped {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

impl Player for ScriptedSeat {
    fn name(&self) -> &str {
        self.player.name()
    }

    async fn new_game(&mut self) -> Result<(), EngineFault> {
        self.player.new_game().await
    }

    async fn search(
        &mut self,
        start_fen: &str,
        moves: &[String],
        go: &GoCommand,
        deadline: Duration,
    ) -> Result<crate::engine::SearchReply, EngineFault> {
        assert!(self.running, "{} asked to search while down", self.name());
        let reply = self.player.search(start_fen, moves, go, deadline).await;
        if let Err(fault) = &reply
            && fault.needs_restart()
        {
            self.running = false;
        }
        reply
    }
}

impl Seat for ScriptedSeat {
    fn is_running(&self) -> bool {
        self.running
    }

    async fn restart(&mut self) -> Result<(), EngineFault> {
        self.restarts += 1;
        if self.failing_restarts > 0 {
            self.failing_restarts -= 1;
            self.running = false;
            return Err(EngineFault::Startup("scripted start-up failure".into()));
        }
        self.running = true;
        Ok(())
    }

    fn validate(&self, options: &[(String, OptionValue)]) -> Result<(), OptionError> {
        match options
            .iter()
            .find(|(n, _)| !self.declared.contains(&n.as_str()))
        {
            Some((n, _)) => Err(OptionError::Unknown {
                engine: self.name().to_string(),
                option: n.clone(),
                available: self.declared.join(", "),
            }),
            None => Ok(()),
        }
    }

    async fn configure(&mut self, options: &[(String, OptionValue)]) -> Result<(), EngineError> {
        self.validate(options)?;
        if !self.running {
            return Err(EngineFault::Disconnected("down".into()).into());
        }
        self.configured.push(options.to_vec());
        Ok(())
    }

    async fn quit(&mut self) {
        self.running = false;
    }
}

/// What a test can see of a seat after the games.
struct View {
    configured: Vec<OptionSet>,
    restarts: usize,
    running: bool,
    remaining: usize,
    searches: usize,
}

impl View {
    fn of(seat: &ScriptedSeat) -> View {
        View {
            configured: seat.configured.clone(),
            restarts: seat.restarts,
            running: seat.running,
            remaining: seat.player.remaining(),
            searches: seat.player.calls.len(),
        }
    }
}

/// Both seats of the arena's one slot, as they are now.
async fn view(arena: &Arena<ScriptedSeat>) -> (View, View) {
    arena
        .inspect(0, |s| (View::of(&s.a.uci), View::of(&s.b.uci)))
        .await
}

/// Fool's mate: White plays f3 and g4, Black mates with e5 and Qh4.
const WHITE_LOSES: [&str; 2] = ["f2f3", "g2g4"];
const BLACK_WINS: [&str; 2] = ["e7e5", "d8h4"];

fn steps(moves: &[&str]) -> Vec<Step> {
    moves.iter().map(|m| Step::mv(m)).collect()
}

async fn arena(a: ScriptedSeat, b: ScriptedSeat) -> Arena<ScriptedSeat> {
    let book = Book::from_openings(vec![Opening::start_position()], BookOrder::Sequential, 1)
        .expect("one opening");
    let game = GameSettings {
        time_control: TimeControl::Nodes(1000),
        ..GameSettings::default()
    };
    Arena::seat(vec![(a, b)], book, game)
        .await
        .expect("scripted seats start")
}

fn x(v: f64) -> OptionSet {
    vec![("X".to_string(), OptionValue::Number(v))]
}

#[tokio::test]
async fn per_game_options_are_sent_only_when_they_change() {
    let a = ScriptedSeat::new("A", &steps(&[&WHITE_LOSES[..], &BLACK_WINS[..]].concat()));
    let a_moves = steps(&WHITE_LOSES);
    let b = ScriptedSeat::new("B", &steps(&[&BLACK_WINS[..], &WHITE_LOSES[..]].concat()));
    let b_moves = steps(&BLACK_WINS);
    let arena = arena(a, b).await;

    let g1 = arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    let g2 = arena
        .play_game(0, 0, false, &x(1.0), &x(2.0))
        .await
        .unwrap();
    assert_eq!(
        (g1.record.white.as_str(), g1.record.black.as_str()),
        ("A", "B")
    );
    assert_eq!(
        (g2.record.white.as_str(), g2.record.black.as_str()),
        ("B", "A")
    );
    // Both games are mated by Black: B won the first, A (now Black) the second.
    assert_eq!(g1.record.result, GameResult::BlackWins);
    assert_eq!(g2.record.result, GameResult::BlackWins);
    assert!(g1.faults.is_empty() && g2.faults.is_empty());

    // A's options change for the third game; B's do not.
    arena
        .inspect(0, move |s| {
            s.a.uci.player = ScriptedPlayer::new("A", a_moves);
            s.b.uci.player = ScriptedPlayer::new("B", b_moves);
        })
        .await;
    let g3 = arena.play_game(0, 0, true, &x(3.0), &x(2.0)).await.unwrap();
    assert_eq!(
        g3.record.end,
        EndReason::Checkmate {
            winner: shakmaty::Color::Black
        }
    );

    let (a, b) = view(&arena).await;
    assert_eq!(a.configured, vec![x(1.0), x(3.0)]);
    assert_eq!(b.configured, vec![x(2.0)]);
    assert_eq!((a.restarts, b.restarts), (0, 0));
}

#[tokio::test]
async fn a_crash_costs_that_game_and_the_engine_comes_back_with_its_options() {
    let mut crashing = vec![Step::Fault(EngineFault::Disconnected("boom".into()))];
    crashing.extend(steps(&WHITE_LOSES));
    let a = ScriptedSeat::new("A", &crashing);
    let b = ScriptedSeat::new("B", &steps(&BLACK_WINS));
    let arena = arena(a, b).await;

    let g1 = arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    assert_eq!(
        g1.record.end,
        EndReason::Disconnected {
            by: shakmaty::Color::White
        }
    );
    assert_eq!(g1.record.result, GameResult::BlackWins);
    assert_eq!(g1.faults, vec![("A".to_string(), "crash".to_string())]);
    let (a, _) = view(&arena).await;
    assert!(a.running, "restarted after the crash");
    assert_eq!(a.restarts, 1);

    // The restart re-sent A's options itself, so the next game plays without configuring again.
    let g2 = arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    assert_eq!(
        g2.record.end,
        EndReason::Checkmate {
            winner: shakmaty::Color::Black
        }
    );
    let (a, _) = view(&arena).await;
    assert_eq!(a.configured, vec![x(1.0)]);
    assert_eq!(a.restarts, 1);
}

#[tokio::test]
async fn an_engine_that_cannot_restart_loses_by_startup_until_it_can() {
    let mut crashing = vec![Step::Fault(EngineFault::Disconnected("boom".into()))];
    crashing.extend(steps(&WHITE_LOSES));
    let mut a = ScriptedSeat::new("A", &crashing);
    // The restart after the crash fails, and so do both tries before the second game.
    a.failing_restarts = 3;
    let b = ScriptedSeat::new("B", &steps(&BLACK_WINS));
    let arena = arena(a, b).await;

    let g1 = arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    assert_eq!(g1.record.result, GameResult::BlackWins);

    let g2 = arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    assert_eq!(
        g2.record.end,
        EndReason::StartupFailed {
            by: shakmaty::Color::White
        }
    );
    assert_eq!(g2.record.result, GameResult::BlackWins);
    assert!(g2.record.moves.is_empty(), "nothing was played");
    assert_eq!(g2.faults, vec![("A".to_string(), "startup".to_string())]);

    // The third game's restart works: A is configured again (a process that never came back
    // has lost its options) and plays.
    let g3 = arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    assert_eq!(
        g3.record.end,
        EndReason::Checkmate {
            winner: shakmaty::Color::Black
        }
    );
    let (a, b) = view(&arena).await;
    assert_eq!(a.restarts, 4);
    assert_eq!(a.configured, vec![x(1.0), x(1.0)]);
    assert_eq!(b.remaining, 0);
}

#[tokio::test]
async fn an_option_the_engine_rejects_stops_play_instead_of_costing_games() {
    let a = ScriptedSeat::new("A", &steps(&WHITE_LOSES));
    let b = ScriptedSeat::new("B", &steps(&BLACK_WINS));
    let arena = arena(a, b).await;
    let bad = vec![("Y".to_string(), OptionValue::Number(1.0))];

    let err = arena.validate(&bad, &x(2.0)).await.unwrap_err();
    assert!(err.to_string().contains("`Y`"), "{err}");
    let err = arena
        .play_game(0, 0, true, &bad, &x(2.0))
        .await
        .expect_err("an unknown option is an error");
    assert!(err.to_string().contains("no option `Y`"), "{err}");
    let (a, _) = view(&arena).await;
    assert_eq!(a.searches, 0, "no game was started");
    assert!(a.configured.is_empty());
}

#[tokio::test]
async fn a_game_nobody_waits_for_is_abandoned_and_its_engines_start_afresh() {
    let mut slow = vec![Step::slow("f2f3", 60_000)];
    slow.extend(steps(&WHITE_LOSES));
    let a = ScriptedSeat::new("A", &slow);
    let b = ScriptedSeat::new("B", &steps(&BLACK_WINS));
    let arena = arena(a, b).await;

    let gave_up = tokio::time::timeout(
        Duration::from_millis(200),
        arena.play_game(0, 0, true, &x(1.0), &x(2.0)),
    )
    .await;
    assert!(gave_up.is_err(), "the slow search is still running");
    // Shutdown drops the caller's future: the slot quits both engines rather than leave a
    // search running into the next game.
    let (a, b) = view(&arena).await;
    assert!(!a.running && !b.running, "both engines were quit");

    let g = arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    assert_eq!(
        g.record.end,
        EndReason::Checkmate {
            winner: shakmaty::Color::Black
        }
    );
    let (a, b) = view(&arena).await;
    assert_eq!((a.restarts, b.restarts), (1, 1));
    assert_eq!(a.configured, vec![x(1.0), x(1.0)], "options sent again");
}

#[tokio::test]
async fn dropping_the_arena_waits_until_its_engines_are_gone() {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut a = ScriptedSeat::new("A", &steps(&WHITE_LOSES));
    a.dropped = Some(flag.clone());
    let b = ScriptedSeat::new("B", &steps(&BLACK_WINS));
    let arena = arena(a, b).await;
    arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    assert!(!flag.load(std::sync::atomic::Ordering::SeqCst));
    drop(arena);
    assert!(
        flag.load(std::sync::atomic::Ordering::SeqCst),
        "the slot's engines were dropped before the arena's drop returned"
    );
}
