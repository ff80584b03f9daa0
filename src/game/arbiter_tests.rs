//! The arbiter against scripted fake players, one test per way a game can end.

use std::time::Duration;

use shakmaty::Color::{Black, White};

use super::*;
use crate::engine::Score;
use crate::game::START_FEN;
use crate::game::fake::{ScriptedPlayer, Step};
use crate::game::record::GameResult;
use crate::game::settings::{Adjudication, DrawAdjudication, TimeControl, WinAdjudication};

fn nodes_settings() -> GameSettings {
    GameSettings {
        time_control: TimeControl::Nodes(1000),
        ..GameSettings::default()
    }
}

fn opening(fen: &str, moves: &[&str]) -> Opening {
    Opening::new(fen, moves, "test:1").expect("valid test opening")
}

fn start() -> Opening {
    Opening::start_position()
}

async fn play(
    white: &mut ScriptedPlayer,
    black: &mut ScriptedPlayer,
    opening: &Opening,
    settings: &GameSettings,
) -> GameRecord {
    play_game(white, black, opening, settings).await
}

#[tokio::test(start_paused = true)]
async fn checkmate_ends_the_game_for_the_mating_side() {
    let mut w = ScriptedPlayer::moves("w", &["f2f3", "g2g4"]);
    let mut b = ScriptedPlayer::moves("b", &["e7e5", "d8h4"]);
    let r = play(&mut w, &mut b, &start(), &nodes_settings()).await;
    assert_eq!(r.end, EndReason::Checkmate { winner: Black });
    assert_eq!(r.result, GameResult::BlackWins);
    assert_eq!(r.moves.last().map(|m| m.san.as_str()), Some("Qh4#"));
    assert_eq!(r.fault, None);
    assert_eq!((w.remaining(), b.remaining()), (0, 0));
    assert_eq!((w.new_games, b.new_games), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn stalemate_is_a_draw() {
    let o = opening("7k/8/8/6Q1/8/8/8/K7 w - - 0 1", &[]);
    let mut w = ScriptedPlayer::moves("w", &["g5g6"]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    assert_eq!(r.end, EndReason::Stalemate);
    assert_eq!(r.result, GameResult::Draw);
}

#[tokio::test(start_paused = true)]
async fn threefold_repetition_by_engine_moves() {
    let shuffle = ["g1f3", "f3g1", "g1f3", "f3g1"];
    let mut w = ScriptedPlayer::moves("w", &shuffle);
    let mut b = ScriptedPlayer::moves("b", &["g8f6", "f6g8", "g8f6", "f6g8"]);
    let r = play(&mut w, &mut b, &start(), &nodes_settings()).await;
    assert_eq!(r.end, EndReason::ThreefoldRepetition);
    assert_eq!(r.result, GameResult::Draw);
    assert_eq!(r.moves.len(), 8);
}

#[tokio::test(start_paused = true)]
async fn threefold_repetition_counts_book_moves() {
    // The book already visits the start position twice; four engine plies bring it back a
    // third time. Without counting the book the scripts would run out (a disconnect).
    let o = opening(START_FEN, &["g1f3", "g8f6", "f3g1", "f6g8"]);
    let mut w = ScriptedPlayer::moves("w", &["g1f3", "f3g1"]);
    let mut b = ScriptedPlayer::moves("b", &["g8f6", "f6g8"]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    assert_eq!(r.end, EndReason::ThreefoldRepetition);
    assert_eq!(r.moves.len(), 8);
    assert_eq!(r.moves.iter().filter(|m| m.book).count(), 4);
    // Engines get the start FEN and the whole history, book moves included.
    assert_eq!(w.calls[0].start_fen, START_FEN);
    assert_eq!(w.calls[0].moves, ["g1f3", "g8f6", "f3g1", "f6g8"]);
    assert_eq!(b.calls[1].moves.len(), 7);
}

#[tokio::test(start_paused = true)]
async fn en_passant_right_that_cannot_be_used_does_not_break_repetition() {
    // Book 1. e4 Nf6. The position after 1. e4 has the FEN en passant square e3, which no black
    // pawn can use, so it is the same position as after 1. e4 Nf6 2. Nf3 Ng8 3. Ng1: that is
    // its second occurrence, and after 4. Nf3 Ng8 5. Ng1 its third (ply 9). Counting the en
    // passant square regardless of legality would need one more ply.
    let o = opening(START_FEN, &["e2e4", "g8f6"]);
    let mut w = ScriptedPlayer::moves("w", &["g1f3", "f3g1", "g1f3", "f3g1"]);
    let mut b = ScriptedPlayer::moves("b", &["f6g8", "g8f6", "f6g8", "g8f6"]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    assert_eq!(r.end, EndReason::ThreefoldRepetition);
    assert_eq!(r.moves.len(), 9);
}

#[tokio::test(start_paused = true)]
async fn fifty_move_rule() {
    let o = opening("8/8/8/8/8/8/R7/K6k w - - 99 80", &[]);
    let mut w = ScriptedPlayer::moves("w", &["a2b2"]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    assert_eq!(r.end, EndReason::FiftyMoveRule);
    assert_eq!(r.result, GameResult::Draw);
}

#[tokio::test(start_paused = true)]
async fn mate_on_the_hundredth_ply_beats_the_fifty_move_rule() {
    // Back-rank mate with the rook, a quiet move at halfmove clock 99.
    let o = opening("6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 80", &[]);
    let mut w = ScriptedPlayer::moves("w", &["a1a8"]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    assert_eq!(r.end, EndReason::Checkmate { winner: White });
}

#[tokio::test(start_paused = true)]
async fn insufficient_material_after_a_capture() {
    let o = opening("k7/8/8/8/8/8/p7/K7 w - - 0 1", &[]);
    let mut w = ScriptedPlayer::moves("w", &["a1a2"]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    assert_eq!(r.end, EndReason::InsufficientMaterial);
    assert_eq!(r.result, GameResult::Draw);
}

#[tokio::test(start_paused = true)]
async fn illegal_move_loses() {
    let mut w = ScriptedPlayer::moves("w", &["e2e4", "e4e6"]);
    let mut b = ScriptedPlayer::moves("b", &["e7e5"]);
    let r = play(&mut w, &mut b, &start(), &nodes_settings()).await;
    assert_eq!(
        r.end,
        EndReason::IllegalMove {
            by: White,
            token: "e4e6".into()
        }
    );
    assert_eq!(r.result, GameResult::BlackWins);
    assert_eq!(r.end.termination(), "rules infraction");
    assert_eq!(r.moves.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn unparsable_move_loses() {
    let mut w = ScriptedPlayer::moves("w", &["e2e4"]);
    let mut b = ScriptedPlayer::moves("b", &["Nf6"]);
    let r = play(&mut w, &mut b, &start(), &nodes_settings()).await;
    assert_eq!(
        r.end,
        EndReason::UnparsableMove {
            by: Black,
            token: "Nf6".into()
        }
    );
    assert_eq!(r.result, GameResult::WhiteWins);
}

#[tokio::test(start_paused = true)]
async fn castling_in_king_two_squares_form_is_accepted() {
    let o = opening(
        "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 1",
        &[],
    );
    let mut w = ScriptedPlayer::moves("w", &["e1g1", "x"]);
    let mut b = ScriptedPlayer::moves("b", &["e8c8"]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    let sans: Vec<&str> = r.moves.iter().map(|m| m.san.as_str()).collect();
    assert_eq!(sans, ["O-O", "O-O-O"]);
    assert!(matches!(r.end, EndReason::UnparsableMove { by: White, .. }));
}

#[tokio::test(start_paused = true)]
async fn moves_are_recorded_and_sent_in_the_standard_spelling() {
    let o = opening("r3k3/1P6/8/8/8/8/8/4K2R w K - 0 1", &[]);
    // King takes rook for castling, an upper-case promotion, spaces around a token.
    let mut w = ScriptedPlayer::moves("w", &["e1h1", "b7a8Q ", "x"]);
    let mut b = ScriptedPlayer::moves("b", &[" e8d7 ", "d7e7"]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    assert!(matches!(r.end, EndReason::UnparsableMove { by: White, .. }));
    let ucis: Vec<&str> = r.moves.iter().map(|m| m.uci.as_str()).collect();
    assert_eq!(ucis, ["e1g1", "e8d7", "b7a8q", "d7e7"]);
    let sent = ["e1g1", "e8d7", "b7a8q", "d7e7"];
    assert_eq!(w.calls[2].moves, sent, "what the engines are sent");
    let sans: Vec<&str> = r.moves.iter().map(|m| m.san.as_str()).collect();
    assert_eq!(sans, ["O-O", "Kd7", "bxa8=Q", "Ke7"]);
}

fn opening960(fen: &str, moves: &[&str]) -> Opening {
    Opening::new_in(shakmaty::CastlingMode::Chess960, fen, moves, "test:1")
        .expect("valid Chess960 test opening")
}

#[tokio::test(start_paused = true)]
async fn chess960_castling_is_king_takes_rook_in_the_book_and_from_engines() {
    // King b1 and g8, rooks in the corners (Shredder-FEN letters): White castles queen side
    // in the book (b1a1), Black king side with a king that stays on g8 (g8h8).
    let o = opening960(
        "r5kr/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1",
        &["b1a1"],
    );
    assert_eq!(
        o.start_fen(),
        "r5kr/pppppppp/8/8/8/8/PPPPPPPP/RK5R w KQkq - 0 1",
        "X-FEN castling in the start FEN"
    );
    assert_eq!(o.moves_uci(), ["b1a1"]);
    let mut w = ScriptedPlayer::moves("w", &["a2a3", "x"]);
    let mut b = ScriptedPlayer::moves("b", &["g8h8", "f8e8"]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    assert!(r.chess960);
    let ucis: Vec<&str> = r.moves.iter().map(|m| m.uci.as_str()).collect();
    let sans: Vec<&str> = r.moves.iter().map(|m| m.san.as_str()).collect();
    assert_eq!(ucis, ["b1a1", "g8h8", "a2a3", "f8e8"]);
    assert_eq!(sans, ["O-O-O", "O-O", "a3", "Rfe8"]);
    // What the engines are sent: the X-FEN start and king-takes-rook castling.
    assert_eq!(b.calls[1].start_fen, o.start_fen());
    assert_eq!(b.calls[1].moves, ["b1a1", "g8h8", "a2a3"]);
    assert!(matches!(r.end, EndReason::UnparsableMove { by: White, .. }));
}

#[tokio::test(start_paused = true)]
async fn chess960_castling_sent_in_the_two_squares_form_is_respelled() {
    // The standard array read as Chess960 (#518): e1g1 is accepted as castling and
    // recorded and sent as e1h1, so a 960 engine reads it; the same game in standard
    // chess keeps e1g1 (pinned above).
    let o = opening960(
        "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 1",
        &[],
    );
    let mut w = ScriptedPlayer::moves("w", &["e1g1", "x"]);
    let mut b = ScriptedPlayer::moves("b", &["e8a8"]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    let ucis: Vec<&str> = r.moves.iter().map(|m| m.uci.as_str()).collect();
    let sans: Vec<&str> = r.moves.iter().map(|m| m.san.as_str()).collect();
    assert_eq!(ucis, ["e1h1", "e8a8"]);
    assert_eq!(sans, ["O-O", "O-O-O"]);
    assert_eq!(w.calls[1].moves, ["e1h1", "e8a8"]);
    assert!(matches!(r.end, EndReason::UnparsableMove { by: White, .. }));
}

#[tokio::test(start_paused = true)]
async fn no_move_while_legal_moves_exist_loses() {
    let mut w = ScriptedPlayer::new("w", [Step::no_move()]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let r = play(&mut w, &mut b, &start(), &nodes_settings()).await;
    assert_eq!(r.end, EndReason::NoMoveWithLegalMoves { by: White });
    assert_eq!(r.result, GameResult::BlackWins);
}

fn clock(base_ms: u64, inc_ms: u64, margin_ms: u64) -> GameSettings {
    GameSettings {
        time_control: TimeControl::Clock { base_ms, inc_ms },
        time_margin: Duration::from_millis(margin_ms),
        stall_slack: Duration::from_millis(1000),
        ..GameSettings::default()
    }
}

#[tokio::test(start_paused = true)]
async fn clocks_are_sent_and_charged() {
    let mut w = ScriptedPlayer::new("w", [Step::slow("e2e4", 400), Step::mv("x")]);
    let mut b = ScriptedPlayer::new("b", [Step::slow("e7e5", 250)]);
    let r = play(&mut w, &mut b, &start(), &clock(1000, 100, 0)).await;
    assert!(matches!(r.end, EndReason::UnparsableMove { by: White, .. }));
    let go0 = &w.calls[0].go;
    assert_eq!((go0.wtime_ms, go0.btime_ms), (Some(1000), Some(1000)));
    assert_eq!((go0.winc_ms, go0.binc_ms), (Some(100), Some(100)));
    assert_eq!(w.calls[0].deadline, Duration::from_millis(2000));
    let go1 = &b.calls[0].go;
    assert_eq!((go1.wtime_ms, go1.btime_ms), (Some(700), Some(1000)));
    let go2 = &w.calls[1].go;
    assert_eq!((go2.wtime_ms, go2.btime_ms), (Some(700), Some(850)));
    assert_eq!(r.moves[0].elapsed, Duration::from_millis(400));
    assert_eq!(r.time_control, "1+0.1");
}

#[tokio::test(start_paused = true)]
async fn time_forfeit_without_margin() {
    let mut w = ScriptedPlayer::new("w", [Step::slow("e2e4", 1001)]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let r = play(&mut w, &mut b, &start(), &clock(1000, 0, 0)).await;
    assert_eq!(r.end, EndReason::TimeForfeit { by: White });
    assert_eq!(r.result, GameResult::BlackWins);
    assert_eq!(r.end.termination(), "time forfeit");
    assert!(r.moves.is_empty(), "the late move is not played");
}

#[tokio::test(start_paused = true)]
async fn time_margin_tolerates_small_overruns_only() {
    // 40 ms over with a 50 ms margin: fine, the clock is reset to zero (+ increment 0).
    let mut w = ScriptedPlayer::new("w", [Step::slow("e2e4", 1040), Step::slow("d2d4", 51)]);
    let mut b = ScriptedPlayer::moves("b", &["e7e5"]);
    let r = play(&mut w, &mut b, &start(), &clock(1000, 0, 50)).await;
    assert_eq!(b.calls[0].go.wtime_ms, Some(0));
    // Then 51 ms on an empty clock: beyond the margin.
    assert_eq!(r.end, EndReason::TimeForfeit { by: White });
    assert_eq!(r.moves.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn movetime_overrun_beyond_margin_forfeits() {
    let settings = GameSettings {
        time_control: TimeControl::MoveTime(100),
        time_margin: Duration::from_millis(20),
        ..GameSettings::default()
    };
    let mut w = ScriptedPlayer::new("w", [Step::slow("e2e4", 120), Step::slow("d2d4", 121)]);
    let mut b = ScriptedPlayer::moves("b", &["e7e5"]);
    let r = play(&mut w, &mut b, &start(), &settings).await;
    assert_eq!(w.calls[0].go.movetime_ms, Some(100));
    assert_eq!(r.end, EndReason::TimeForfeit { by: White });
    assert_eq!(r.moves.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn disconnect_loses_and_names_the_faulting_colour() {
    let fault = EngineFault::Disconnected("exit status 1".into());
    let mut w = ScriptedPlayer::moves("w", &["e2e4"]);
    let mut b = ScriptedPlayer::new("b", [Step::Fault(fault.clone())]);
    let r = play(&mut w, &mut b, &start(), &nodes_settings()).await;
    assert_eq!(r.end, EndReason::Disconnected { by: Black });
    assert_eq!(r.result, GameResult::WhiteWins);
    assert_eq!(
        r.fault,
        Some(Fault {
            color: Black,
            fault: fault.clone()
        })
    );
    assert!(r.fault.unwrap().fault.needs_restart());
}

#[tokio::test(start_paused = true)]
async fn stall_in_a_nodes_game_loses_after_the_stall_timeout() {
    let settings = GameSettings {
        time_control: TimeControl::Nodes(1000),
        stall_timeout: Duration::from_secs(7),
        ..GameSettings::default()
    };
    // An engine that ignores `go nodes` and would think for a minute.
    let mut w = ScriptedPlayer::new("w", [Step::slow("e2e4", 60_000)]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let t0 = tokio::time::Instant::now();
    let r = play(&mut w, &mut b, &start(), &settings).await;
    assert_eq!(t0.elapsed(), Duration::from_secs(7));
    assert_eq!(w.calls[0].deadline, Duration::from_secs(7));
    assert_eq!(w.calls[0].go.nodes, Some(1000));
    assert_eq!(r.end, EndReason::Stalled { by: White });
    assert_eq!(r.end.termination(), "stalled connection");
    assert!(matches!(
        r.fault,
        Some(Fault {
            color: White,
            fault: EngineFault::Stalled { .. }
        })
    ));
}

#[tokio::test(start_paused = true)]
async fn new_game_failure_loses_for_that_side() {
    let mut w = ScriptedPlayer::moves("w", &[]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    b.new_game_fault = Some(EngineFault::Startup("no such file".into()));
    let r = play(&mut w, &mut b, &start(), &nodes_settings()).await;
    assert_eq!(r.end, EndReason::StartupFailed { by: Black });
    assert_eq!(r.result, GameResult::WhiteWins);
    assert_eq!(r.fault.map(|f| f.color), Some(Black));
}

#[tokio::test(start_paused = true)]
async fn maximum_length_counts_book_plies_and_draws() {
    let settings = GameSettings {
        max_plies: 6,
        ..nodes_settings()
    };
    let o = opening(START_FEN, &["e2e4", "e7e5"]);
    let mut w = ScriptedPlayer::moves("w", &["g1f3", "f1c4", "d2d3"]);
    let mut b = ScriptedPlayer::moves("b", &["b8c6", "g8f6", "f8c5"]);
    let r = play(&mut w, &mut b, &o, &settings).await;
    assert_eq!(r.end, EndReason::MaxLength { plies: 6 });
    assert_eq!(r.result, GameResult::Draw);
    assert_eq!(r.moves.len(), 6);
    assert_eq!((w.remaining(), b.remaining()), (1, 1));
}

const QUIET: [&str; 8] = [
    "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5",
];

fn scored(scores: &[Option<Score>]) -> (ScriptedPlayer, ScriptedPlayer) {
    let step = |i: usize| Step::Reply {
        best: crate::engine::BestMove::Move(QUIET[i].to_string()),
        score: scores[i],
        delay: Duration::ZERO,
    };
    let w = ScriptedPlayer::new("w", (0..scores.len()).step_by(2).map(step));
    let b = ScriptedPlayer::new("b", (1..scores.len()).step_by(2).map(step));
    (w, b)
}

#[tokio::test(start_paused = true)]
async fn classic_draw_adjudication() {
    let settings = GameSettings {
        adjudication: Adjudication::classic(10, 4, 0, 0),
        ..nodes_settings()
    };
    let cp = |c| Some(Score::Cp(c));
    let (mut w, mut b) = scored(&[cp(30), cp(5), cp(-10), cp(10), cp(0), cp(-99)]);
    let r = play(&mut w, &mut b, &start(), &settings).await;
    assert_eq!(r.end, EndReason::DrawAdjudication);
    assert_eq!(r.result, GameResult::Draw);
    assert_eq!(
        r.moves.len(),
        5,
        "ply 1 breaks the streak, plies 2..=5 make it"
    );
    assert_eq!(r.end.termination(), "adjudication");
}

#[tokio::test(start_paused = true)]
async fn engines_without_scores_are_never_adjudicated() {
    let settings = GameSettings {
        adjudication: Adjudication::classic(10, 1, 10, 1),
        max_plies: 8,
        ..nodes_settings()
    };
    let (mut w, mut b) = scored(&[None; 8]);
    let r = play(&mut w, &mut b, &start(), &settings).await;
    assert_eq!(r.end, EndReason::MaxLength { plies: 8 });
}

#[tokio::test(start_paused = true)]
async fn classic_win_adjudication_with_cp_scores() {
    let settings = GameSettings {
        adjudication: Adjudication::classic(0, 0, 400, 3),
        ..nodes_settings()
    };
    let cp = |c| Some(Score::Cp(c));
    // White thinks it is lost (-450), Black agrees (+450), White -500: Black wins.
    let (mut w, mut b) = scored(&[cp(-450), cp(450), cp(-500), cp(0)]);
    let r = play(&mut w, &mut b, &start(), &settings).await;
    assert_eq!(r.end, EndReason::WinAdjudication { winner: Black });
    assert_eq!(r.result, GameResult::BlackWins);
    assert_eq!(r.moves.len(), 3);
}

#[tokio::test(start_paused = true)]
async fn mate_scores_trigger_win_adjudication() {
    let settings = GameSettings {
        adjudication: Adjudication::classic(0, 0, 30_000, 2),
        ..nodes_settings()
    };
    let (mut w, mut b) = scored(&[Some(Score::Mate(9)), Some(Score::Mate(-8)), None]);
    let r = play(&mut w, &mut b, &start(), &settings).await;
    assert_eq!(r.end, EndReason::WinAdjudication { winner: White });
    assert_eq!(r.moves.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn both_sides_forms_through_the_arbiter() {
    let cp = |c| Some(Score::Cp(c));
    let draw = GameSettings {
        adjudication: Adjudication {
            draw: DrawAdjudication {
                score_cp: 20,
                moves: 2,
                both_sides: true,
                min_fullmove: 3,
            },
            ..Adjudication::default()
        },
        ..nodes_settings()
    };
    // Drawish from ply 1, but only from move 3 on may it be adjudicated: after 3. Bc4.
    let (mut w, mut b) = scored(&[cp(0), cp(0), cp(0), cp(0), cp(0), cp(0)]);
    let r = play(&mut w, &mut b, &start(), &draw).await;
    assert_eq!(r.end, EndReason::DrawAdjudication);
    assert_eq!(r.moves.len(), 5);

    let resign = GameSettings {
        adjudication: Adjudication {
            win: WinAdjudication {
                score_cp: 300,
                moves: 2,
                both_sides: true,
            },
            ..Adjudication::default()
        },
        ..nodes_settings()
    };
    let (mut w, mut b) = scored(&[cp(300), cp(-300), cp(350), cp(-310), cp(0)]);
    let r = play(&mut w, &mut b, &start(), &resign).await;
    assert_eq!(r.end, EndReason::WinAdjudication { winner: White });
    assert_eq!(r.moves.len(), 4);
}

#[tokio::test(start_paused = true)]
async fn black_to_move_opening_starts_with_black() {
    let o = opening(START_FEN, &["e2e4"]);
    let mut w = ScriptedPlayer::moves("w", &[]);
    let mut b = ScriptedPlayer::moves("b", &["a7a6", "x"]);
    let r = play(&mut w, &mut b, &o, &nodes_settings()).await;
    // White's script is empty: it fails on its first search, after Black's move.
    assert_eq!(r.end, EndReason::Disconnected { by: White });
    assert_eq!(r.moves.len(), 2);
    assert_eq!(b.calls[0].moves, ["e2e4"]);
}

/// Settings that end games by the real 3-4-piece tables; `None` when they cannot be had.
fn tablebase_settings() -> Option<GameSettings> {
    let dir = crate::game::tablebase::syzygy_tables::tables()?;
    Some(GameSettings {
        tablebases: Some(crate::game::Tablebases::open(&dir).expect("the fetched tables load")),
        ..nodes_settings()
    })
}

#[tokio::test(start_paused = true)]
async fn a_capture_into_a_won_table_position_ends_the_game() {
    let Some(settings) = tablebase_settings() else {
        return;
    };
    // Five pieces (beyond the tables); White takes the queen and reaches a won KRvKP.
    let o = opening("4k3/p7/8/3q4/8/8/8/3RK3 w - - 0 1", &[]);
    let mut w = ScriptedPlayer::moves("w", &["d1d5", "e1e2"]);
    let mut b = ScriptedPlayer::moves("b", &["e8f8"]);
    let r = play(&mut w, &mut b, &o, &settings).await;
    assert_eq!(r.end, EndReason::TablebaseWin { winner: White });
    assert_eq!(r.result, GameResult::WhiteWins);
    assert_eq!(r.end.termination(), "adjudication");
    assert_eq!(r.end.to_string(), "White wins by tablebase");
    assert_eq!(r.moves.len(), 1);
    assert_eq!((w.remaining(), b.remaining()), (1, 1));

    // Without tables the same game goes on.
    let mut w = ScriptedPlayer::moves("w", &["d1d5", "e1e2"]);
    let mut b = ScriptedPlayer::moves("b", &["e8f8"]);
    let plain = GameSettings {
        max_plies: 3,
        ..nodes_settings()
    };
    let r = play(&mut w, &mut b, &o, &plain).await;
    assert_eq!(r.end, EndReason::MaxLength { plies: 3 });
}

#[tokio::test(start_paused = true)]
async fn a_drawn_table_position_ends_before_any_search() {
    let Some(settings) = tablebase_settings() else {
        return;
    };
    let o = opening("4k3/8/8/2r5/8/8/5R2/4K3 w - - 0 1", &[]);
    let mut w = ScriptedPlayer::moves("w", &["f2f3"]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let r = play(&mut w, &mut b, &o, &settings).await;
    assert_eq!(r.end, EndReason::TablebaseDraw);
    assert_eq!(r.result, GameResult::Draw);
    assert_eq!(r.end.to_string(), "Draw by tablebase");
    assert!(r.moves.is_empty());
    assert_eq!(w.remaining(), 1, "no engine was asked to move");
}

#[tokio::test(start_paused = true)]
async fn checkmate_comes_before_the_tables() {
    let Some(settings) = tablebase_settings() else {
        return;
    };
    // Five pieces; Qxh1 mates and leaves KQvKP, which the tables cover: the rules end it.
    let o = opening("7k/1p3K2/8/8/8/8/8/1Q5n w - - 0 1", &[]);
    let mut w = ScriptedPlayer::moves("w", &["b1h1"]);
    let mut b = ScriptedPlayer::moves("b", &[]);
    let r = play(&mut w, &mut b, &o, &settings).await;
    assert_eq!(r.end, EndReason::Checkmate { winner: White });
}
