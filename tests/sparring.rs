//! End-to-end tests of the bundled sparring engine, driven over UCI through
//! a real process. Moves are validated with shakmaty on this side.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::{Duration, Instant};

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

const TIMEOUT: Duration = Duration::from_secs(30);

struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sparring"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn sparring");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, cmd: &str) {
        writeln!(self.stdin, "{cmd}").expect("write to engine");
        self.stdin.flush().unwrap();
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first one starting with `prefix`.
    fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no '{prefix}' within {timeout:?}; got {seen:#?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("engine exited while waiting for '{prefix}'; got {seen:#?}")
                }
            }
        }
    }

    fn handshake(&mut self) -> Vec<String> {
        self.send("uci");
        let lines = self.until("uciok", TIMEOUT);
        self.send("isready");
        self.until("readyok", TIMEOUT);
        lines
    }

    /// Runs `go <args>` and returns (bestmove, last info line).
    fn go(&mut self, args: &str) -> (String, Option<Info>) {
        self.send(&format!("go {args}"));
        let lines = self.until("bestmove", TIMEOUT);
        let best = lines
            .last()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string();
        let info = lines.iter().rev().find_map(|l| Info::parse(l));
        (best, info)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Info {
    depth: u32,
    score: String,
    nodes: u64,
}

impl Info {
    fn parse(line: &str) -> Option<Info> {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.first() != Some(&"info") {
            return None;
        }
        let after = |k: &str| t.iter().position(|x| *x == k).map(|i| i + 1);
        let depth = t.get(after("depth")?)?.parse().ok()?;
        let s = after("score")?;
        let score = format!("{} {}", t.get(s)?, t.get(s + 1)?);
        let nodes = t.get(after("nodes")?)?.parse().ok()?;
        Some(Info {
            depth,
            score,
            nodes,
        })
    }

    fn cp(&self) -> i32 {
        let v = self.score.strip_prefix("cp ").expect("centipawn score");
        v.parse().unwrap()
    }
}

fn chess(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap()
}

fn legal(pos: &Chess, uci: &str) -> Option<shakmaty::Move> {
    UciMove::from_ascii(uci.as_bytes()).ok()?.to_move(pos).ok()
}

const MIDDLEGAME: &str = "r2q1rk1/1b2bppp/p1n1pn2/1pp5/3P4/P1NBPN2/1P2QPPP/R1B2RK1 w - - 0 12";

#[test]
fn handshake_lists_spin_options_with_ranges() {
    let mut e = Engine::start();
    let lines = e.handshake();
    assert!(lines.iter().any(|l| l.starts_with("id name ")));
    assert!(lines.iter().any(|l| l.starts_with("id author ")));
    let mut names = Vec::new();
    // The one check option: Chess960 castling, off unless a 960 run turns it on.
    assert!(
        lines
            .iter()
            .any(|l| l == "option name UCI_Chess960 type check default false"),
        "{lines:?}"
    );
    for l in lines
        .iter()
        .filter(|l| l.starts_with("option name ") && !l.contains(" type check "))
    {
        let rest = l.strip_prefix("option name ").unwrap();
        let (name, spec) = rest.split_once(" type ").expect(l);
        let t: Vec<&str> = spec.split_whitespace().collect();
        assert_eq!(t[0], "spin", "{l}");
        assert_eq!((t[1], t[3], t[5]), ("default", "min", "max"), "{l}");
        let (d, lo, hi): (i64, i64, i64) = (
            t[2].parse().unwrap(),
            t[4].parse().unwrap(),
            t[6].parse().unwrap(),
        );
        assert!(lo <= d && d <= hi, "{l}");
        assert!(!name.contains(','), "{l}");
        names.push(name.to_string());
    }
    for expected in [
        "Hash",
        "PawnValue",
        "KnightValue",
        "BishopValue",
        "RookValue",
        "QueenValue",
        "BishopPair",
        "Mobility",
        "PassedPawn",
        "Tempo",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "missing {expected}: {names:?}"
        );
    }
    assert!((9..=16).contains(&names.len()), "{names:?}");
    assert_eq!(lines.last().unwrap(), "uciok");
}

#[test]
fn self_play_game_uses_only_legal_moves() {
    let mut e = Engine::start();
    e.handshake();
    e.send("ucinewgame");
    let mut pos = Chess::default();
    let mut moves: Vec<String> = Vec::new();
    let mut seen = vec![pos.zobrist_hash::<shakmaty::zobrist::Zobrist64>(EnPassantMode::Legal)];
    let mut ended = false;
    for _ in 0..300 {
        if pos.is_game_over() || pos.halfmoves() >= 100 {
            ended = true;
            break;
        }
        let h = *seen.last().unwrap();
        if seen.iter().filter(|&&x| x == h).count() >= 3 {
            ended = true;
            break;
        }
        e.send(&format!("position startpos moves {}", moves.join(" ")));
        let (best, _) = e.go("depth 2");
        let m =
            legal(&pos, &best).unwrap_or_else(|| panic!("illegal bestmove {best} after {moves:?}"));
        pos.play_unchecked(m);
        seen.push(pos.zobrist_hash::<shakmaty::zobrist::Zobrist64>(EnPassantMode::Legal));
        moves.push(best);
    }
    assert!(moves.len() >= 10, "game too short: {moves:?}");
    if ended && pos.is_game_over() {
        // At the end, the engine must report that there is no move, or
        // (insufficient material) still find a legal one.
        e.send(&format!("position startpos moves {}", moves.join(" ")));
        let (best, _) = e.go("depth 1");
        if pos.legal_moves().is_empty() {
            assert_eq!(best, "0000");
        } else {
            assert!(legal(&pos, &best).is_some());
        }
    }
}

#[test]
fn same_position_options_and_limit_give_same_move_and_nodes() {
    let run = |e: &mut Engine, limit: &str| {
        e.send(&format!("position fen {MIDDLEGAME}"));
        e.go(limit)
    };
    let mut a = Engine::start();
    a.handshake();
    a.send("setoption name Mobility value 55");
    let (m1, i1) = run(&mut a, "depth 4");
    let (m2, i2) = run(&mut a, "depth 4");
    let mut b = Engine::start();
    b.handshake();
    b.send("setoption name Mobility value 55");
    let (m3, i3) = run(&mut b, "depth 4");
    let (n1, n2, n3) = (i1.unwrap().nodes, i2.unwrap().nodes, i3.unwrap().nodes);
    assert_eq!((&m1, n1), (&m2, n2));
    assert_eq!((&m1, n1), (&m3, n3));
    let (m4, i4) = run(&mut b, "nodes 2500");
    let (m5, i5) = run(&mut a, "nodes 2500");
    assert_eq!((m4, i4.unwrap().nodes), (m5, i5.unwrap().nodes));
}

#[test]
fn setoption_changes_the_evaluation() {
    // Black has no queen.
    let fen = "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let mut e = Engine::start();
    e.handshake();
    e.send(&format!("position fen {fen}"));
    let (_, default) = e.go("depth 2");
    let default = default.unwrap();
    assert_eq!(default.depth, 2, "last info is the requested depth");
    let default = default.cp();
    e.send("setoption name QueenValue value 0");
    e.send(&format!("position fen {fen}"));
    let (_, zero) = e.go("depth 2");
    let zero = zero.unwrap().cp();
    assert!(default > 700, "default score {default}");
    assert!(zero.abs() < 200, "score with QueenValue 0: {zero}");
    // Option names are case-insensitive; the change is undone.
    e.send("setoption name queenvalue value 950");
    e.send(&format!("position fen {fen}"));
    let (_, back) = e.go("depth 2");
    assert_eq!(back.unwrap().cp(), default);
}

#[test]
fn finds_mate_in_one() {
    let mut e = Engine::start();
    e.handshake();
    e.send("position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    let (best, info) = e.go("depth 4");
    assert_eq!(best, "a1a8");
    assert_eq!(info.unwrap().score, "mate 1");
}

#[test]
fn finds_mate_in_two() {
    let fen = "6k1/8/8/8/8/8/1R6/R5K1 w - - 0 1";
    let mut e = Engine::start();
    e.handshake();
    e.send(&format!("position fen {fen}"));
    let (best, info) = e.go("depth 5");
    assert_eq!(info.unwrap().score, "mate 2");
    // Every reply to the chosen move must allow a mate in one.
    let mut pos = chess(fen);
    pos.play_unchecked(legal(&pos, &best).expect("legal"));
    assert!(!pos.legal_moves().is_empty());
    for reply in pos.legal_moves() {
        let mut p = pos.clone();
        p.play_unchecked(reply);
        let mates = p.legal_moves().iter().any(|&m| {
            let mut q = p.clone();
            q.play_unchecked(m);
            q.is_checkmate()
        });
        assert!(mates, "{best} allows an escape");
    }
}

#[test]
fn mated_and_stalemated_positions_answer_0000() {
    let mut e = Engine::start();
    e.handshake();
    // Fool's mate: White is checkmated.
    e.send("position startpos moves f2f3 e7e5 g2g4 d8h4");
    assert_eq!(e.go("depth 3").0, "0000");
    e.send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    assert_eq!(e.go("depth 3").0, "0000");
}

#[test]
fn stop_ends_an_infinite_search_promptly() {
    let mut e = Engine::start();
    e.handshake();
    e.send(&format!("position fen {MIDDLEGAME}"));
    e.send("go infinite");
    // Searching: its first iteration is out (not a fixed time, which a loaded machine may need
    // just to start the search).
    e.until("info depth 1 ", TIMEOUT);
    // isready is answered while searching, and no bestmove came yet.
    e.send("isready");
    let before = e.until("readyok", Duration::from_secs(2));
    assert!(
        !before.iter().any(|l| l.starts_with("bestmove")),
        "{before:?}"
    );
    let t = Instant::now();
    e.send("stop");
    let lines = e.until("bestmove", Duration::from_secs(2));
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    let best = lines.last().unwrap().split_whitespace().nth(1).unwrap();
    assert!(legal(&chess(MIDDLEGAME), best).is_some(), "{best}");
}

#[test]
fn infinite_search_waits_for_stop_even_after_a_forced_mate() {
    let mut e = Engine::start();
    e.handshake();
    e.send("position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    e.send("go infinite");
    e.until("info depth 1 ", TIMEOUT);
    e.send("isready");
    let before = e.until("readyok", Duration::from_secs(2));
    assert!(
        !before.iter().any(|l| l.starts_with("bestmove")),
        "{before:?}"
    );
    e.send("stop");
    let lines = e.until("bestmove", Duration::from_secs(2));
    assert_eq!(lines.last().unwrap(), "bestmove a1a8");
}

#[test]
fn node_limit_is_respected() {
    let mut e = Engine::start();
    e.handshake();
    for limit in [1u64, 700, 4000] {
        e.send(&format!("position fen {MIDDLEGAME}"));
        let (best, info) = e.go(&format!("nodes {limit}"));
        assert!(legal(&chess(MIDDLEGAME), &best).is_some(), "{best}");
        if limit > 1 {
            let nodes = info.unwrap().nodes;
            assert!(
                nodes <= limit && nodes * 10 >= limit * 9,
                "{nodes} vs {limit}"
            );
        }
    }
}

#[test]
fn time_limits_are_respected() {
    let mut e = Engine::start();
    e.handshake();
    e.send(&format!("position fen {MIDDLEGAME}"));
    let t = Instant::now();
    e.go("movetime 200");
    let took = t.elapsed();
    assert!(
        took < Duration::from_millis(600),
        "movetime 200 took {took:?}"
    );
    // A short clock: must move well within the remaining time.
    e.send(&format!("position fen {MIDDLEGAME}"));
    let t = Instant::now();
    let (best, _) = e.go("wtime 500 btime 500 winc 0 binc 0");
    assert!(
        t.elapsed() < Duration::from_millis(450),
        "{:?}",
        t.elapsed()
    );
    assert!(legal(&chess(MIDDLEGAME), &best).is_some());
}

#[test]
fn garbage_input_does_not_crash_it() {
    let mut e = Engine::start();
    e.handshake();
    for junk in [
        "",
        "   ",
        "xyzzy",
        "go depth",
        "go depth banana",
        "go nodes -5",
        "position",
        "position fen",
        "position fen not a fen at all",
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "setoption",
        "setoption name",
        "setoption name PawnValue",
        "setoption name PawnValue value",
        "setoption name PawnValue value 99999999999999999999999",
        "setoption name Hash value 0",
        "setoption name NoSuchOption value 3",
        "position startpos moves e2e4 zz e7e5",
        "position startpos moves e2e5",
        "debug on",
        "ponderhit",
    ] {
        e.send(junk);
    }
    e.send_bytes(b"\xff\xfe\x00garbage\x80\n");
    e.send(&"a".repeat(100_000));
    e.send("isready");
    e.until("readyok", TIMEOUT);
    // Illegal move: the rest of the list is ignored and reported.
    e.send("position startpos moves e2e4 e7e5 e1e3 d7d5");
    let lines = e.until("info string", TIMEOUT);
    assert!(lines.last().unwrap().contains("e1e3"), "{lines:?}");
    let (best, _) = e.go("depth 2");
    let mut pos = Chess::default();
    for m in ["e2e4", "e7e5"] {
        let mv = legal(&pos, m).unwrap();
        pos.play_unchecked(mv);
    }
    assert!(legal(&pos, &best).is_some(), "{best} after 1.e4 e5");
    assert!(e.child.try_wait().unwrap().is_none(), "engine exited");
}

#[test]
fn quit_ends_the_process_even_while_searching() {
    let mut e = Engine::start();
    e.handshake();
    e.send("go infinite");
    e.until("info depth 1 ", TIMEOUT);
    e.send("quit");
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(2) {
        if e.child.try_wait().unwrap().is_some() {
            return;
        }
        thread::sleep(Duration::from_millis(10));
    }
    panic!("engine still running 2 s after quit");
}

/// Plays one game from `opening`; returns the score of `a` (1, 0.5 or 0).
fn play_game(a: &mut Engine, b: &mut Engine, a_white: bool, opening: &str, go: &str) -> f64 {
    use shakmaty::zobrist::Zobrist64;
    let mut pos = Chess::default();
    let mut moves: Vec<String> = Vec::new();
    for m in opening.split_whitespace() {
        pos.play_unchecked(legal(&pos, m).unwrap());
        moves.push(m.to_string());
    }
    let mut seen = vec![pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal)];
    a.send("ucinewgame");
    b.send("ucinewgame");
    loop {
        if pos.is_checkmate() {
            let white_won = pos.turn() == shakmaty::Color::Black;
            return if white_won == a_white { 1.0 } else { 0.0 };
        }
        let h = *seen.last().unwrap();
        if pos.is_stalemate()
            || pos.is_insufficient_material()
            || pos.halfmoves() >= 100
            || seen.iter().filter(|&&x| x == h).count() >= 3
            || moves.len() >= 400
        {
            return 0.5;
        }
        let a_to_move = (pos.turn() == shakmaty::Color::White) == a_white;
        let e = if a_to_move { &mut *a } else { &mut *b };
        e.send(&format!("position startpos moves {}", moves.join(" ")));
        let (best, _) = e.go(go);
        pos.play_unchecked(legal(&pos, &best).expect("legal move"));
        seen.push(pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal));
        moves.push(best);
    }
}

/// The defaults must clearly beat minor pieces valued at 150 cp, the
/// starting point of the team's SPSA demonstration. 20 games at depth 3,
/// each opening with both colours. Slow in debug builds; run with
/// `cargo test --release --test sparring -- --ignored`.
#[test]
#[ignore]
fn defaults_beat_wrong_minor_piece_values() {
    let openings = [
        "e2e4 e7e5 g1f3 b8c6",
        "d2d4 d7d5 c2c4 e7e6",
        "e2e4 c7c5 g1f3 d7d6",
        "d2d4 g8f6 c2c4 g7g6",
        "e2e4 e7e6 d2d4 d7d5",
        "c2c4 e7e5 b1c3 g8f6",
        "e2e4 c7c6 d2d4 d7d5",
        "g1f3 d7d5 g2g3 g8f6",
        "e2e4 e7e5 f1c4 g8f6",
        "d2d4 d7d5 g1f3 g8f6",
    ];
    let mut a = Engine::start();
    a.handshake();
    let mut b = Engine::start();
    b.handshake();
    b.send("setoption name KnightValue value 150");
    b.send("setoption name BishopValue value 150");
    let mut score = 0.0;
    let mut games = 0;
    for opening in openings {
        for a_white in [true, false] {
            score += play_game(&mut a, &mut b, a_white, opening, "depth 3");
            games += 1;
        }
    }
    let pct = 100.0 * score / f64::from(games);
    println!("defaults vs KnightValue=BishopValue=150: {score}/{games} ({pct:.1}%)");
    assert!(pct >= 60.0, "defaults scored only {pct:.1}%");
}
