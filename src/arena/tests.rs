//! The arena's own rules, with scripted seats instead of engine processes: per-game options are
//! sent only when they change, a crashed engine is restarted and keeps its options, an engine
//! that cannot come back loses by start-up failure until it can, and an option the engine
//! rejects stops play instead of costing games.

use std::time::Duration;

use super::*;
use crate::engine::GoCommand;
use crate::game::fake::{ScriptedPlayer, Step};
use crate::game::{BookOrder, EndReason, GameResult, Opening, TimeControl};

/// A scripted player with the life cycle of an engine process: faults that kill a real process
/// leave it down until `restart`, which can be told to fail.
struct ScriptedSeat {
    player: ScriptedPlayer,
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
            running: true,
            declared: vec!["X"],
            configured: Vec::new(),
            restarts: 0,
            failing_restarts: 0,
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

/// Fool's mate: White plays f3 and g4, Black mates with e5 and Qh4.
const WHITE_LOSES: [&str; 2] = ["f2f3", "g2g4"];
const BLACK_WINS: [&str; 2] = ["e7e5", "d8h4"];

fn steps(moves: &[&str]) -> Vec<Step> {
    moves.iter().map(|m| Step::mv(m)).collect()
}

fn arena(a: ScriptedSeat, b: ScriptedSeat) -> Arena<ScriptedSeat> {
    let book = Book::from_openings(vec![Opening::start_position()], BookOrder::Sequential, 1)
        .expect("one opening");
    let game = GameSettings {
        time_control: TimeControl::Nodes(1000),
        ..GameSettings::default()
    };
    Arena::seat(vec![(a, b)], book, game)
}

fn x(v: f64) -> OptionSet {
    vec![("X".to_string(), OptionValue::Number(v))]
}

#[tokio::test]
async fn per_game_options_are_sent_only_when_they_change() {
    let a = ScriptedSeat::new("A", &steps(&[&WHITE_LOSES[..], &BLACK_WINS[..]].concat()));
    let mut a_moves = steps(&WHITE_LOSES);
    let b = ScriptedSeat::new("B", &steps(&[&BLACK_WINS[..], &WHITE_LOSES[..]].concat()));
    let mut b_moves = steps(&BLACK_WINS);
    let arena = arena(a, b);

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
    {
        let mut slot = arena.slots[0].lock().await;
        slot.a.uci.player = ScriptedPlayer::new("A", a_moves.drain(..));
        slot.b.uci.player = ScriptedPlayer::new("B", b_moves.drain(..));
    }
    let g3 = arena.play_game(0, 0, true, &x(3.0), &x(2.0)).await.unwrap();
    assert_eq!(
        g3.record.end,
        EndReason::Checkmate {
            winner: shakmaty::Color::Black
        }
    );

    let slot = arena.slots[0].lock().await;
    assert_eq!(slot.a.uci.configured, vec![x(1.0), x(3.0)]);
    assert_eq!(slot.b.uci.configured, vec![x(2.0)]);
    assert_eq!((slot.a.uci.restarts, slot.b.uci.restarts), (0, 0));
}

#[tokio::test]
async fn a_crash_costs_that_game_and_the_engine_comes_back_with_its_options() {
    let mut crashing = vec![Step::Fault(EngineFault::Disconnected("boom".into()))];
    crashing.extend(steps(&WHITE_LOSES));
    let a = ScriptedSeat::new("A", &crashing);
    let b = ScriptedSeat::new("B", &steps(&BLACK_WINS));
    let arena = arena(a, b);

    let g1 = arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    assert_eq!(
        g1.record.end,
        EndReason::Disconnected {
            by: shakmaty::Color::White
        }
    );
    assert_eq!(g1.record.result, GameResult::BlackWins);
    assert_eq!(g1.faults, vec![("A".to_string(), "crash".to_string())]);
    {
        let slot = arena.slots[0].lock().await;
        assert!(slot.a.uci.running, "restarted after the crash");
        assert_eq!(slot.a.uci.restarts, 1);
    }

    // The restart re-sent A's options itself, so the next game plays without configuring again.
    let g2 = arena.play_game(0, 0, true, &x(1.0), &x(2.0)).await.unwrap();
    assert_eq!(
        g2.record.end,
        EndReason::Checkmate {
            winner: shakmaty::Color::Black
        }
    );
    let slot = arena.slots[0].lock().await;
    assert_eq!(slot.a.uci.configured, vec![x(1.0)]);
    assert_eq!(slot.a.uci.restarts, 1);
}

#[tokio::test]
async fn an_engine_that_cannot_restart_loses_by_startup_until_it_can() {
    let mut crashing = vec![Step::Fault(EngineFault::Disconnected("boom".into()))];
    crashing.extend(steps(&WHITE_LOSES));
    let mut a = ScriptedSeat::new("A", &crashing);
    // The restart after the crash fails, and so do both tries before the second game.
    a.failing_restarts = 3;
    let b = ScriptedSeat::new("B", &steps(&BLACK_WINS));
    let arena = arena(a, b);

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
    let slot = arena.slots[0].lock().await;
    assert_eq!(slot.a.uci.restarts, 4);
    assert_eq!(slot.a.uci.configured, vec![x(1.0), x(1.0)]);
    assert_eq!(slot.b.uci.player.remaining(), 0);
}

#[tokio::test]
async fn an_option_the_engine_rejects_stops_play_instead_of_costing_games() {
    let a = ScriptedSeat::new("A", &steps(&WHITE_LOSES));
    let b = ScriptedSeat::new("B", &steps(&BLACK_WINS));
    let arena = arena(a, b);
    let bad = vec![("Y".to_string(), OptionValue::Number(1.0))];

    let err = arena.validate(&bad, &x(2.0)).await.unwrap_err();
    assert!(err.to_string().contains("`Y`"), "{err}");
    let err = arena
        .play_game(0, 0, true, &bad, &x(2.0))
        .await
        .expect_err("an unknown option is an error");
    assert!(err.to_string().contains("no option `Y`"), "{err}");
    let slot = arena.slots[0].lock().await;
    assert!(slot.a.uci.player.calls.is_empty(), "no game was started");
    assert!(slot.a.uci.configured.is_empty());
}
