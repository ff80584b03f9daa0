//! The UCI loop. The main thread reads commands; `go` starts a search thread
//! that owns the transposition table until it prints `bestmove` and hands the
//! table back, so `isready` and `stop` are answered while it searches.

use std::fmt::Write as _;
use std::io::{self, BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

use crate::eval::{OPTIONS, Params, catalog, evaluate, white_tapered};
use crate::search::{Limits, Report, Searcher, Tt, format_score, hash_of};

const HASH_DEFAULT: usize = 16;
const HASH_MIN: usize = 1;
const HASH_MAX: usize = 1024;

/// Writes one line to stdout and flushes it; the stdout lock keeps lines
/// from the two threads whole.
pub fn send(line: &str) {
    let mut out = io::stdout().lock();
    // A closed stdout means nobody listens any more; nothing useful to do.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

struct Running {
    stop: Arc<AtomicBool>,
    infinite: bool,
    handle: JoinHandle<Tt>,
}

pub struct Engine {
    params: Params,
    hash_mb: usize,
    tt: Option<Tt>,
    pos: Chess,
    /// Hashes of the positions before `pos` in the current game.
    history: Vec<u64>,
    running: Option<Running>,
    /// `UCI_Chess960`: how FEN castling fields are read and castling moves spelled.
    castling: CastlingMode,
}

impl Engine {
    pub fn new() -> Engine {
        Engine {
            params: Params::default(),
            hash_mb: HASH_DEFAULT,
            tt: None,
            pos: Chess::default(),
            history: Vec::new(),
            running: None,
            castling: CastlingMode::Standard,
        }
    }

    /// Handles one input line; returns false on `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = tokens.split_first() else {
            return true;
        };
        match cmd {
            "uci" => self.uci(),
            "isready" => send("readyok"),
            "ucinewgame" => {
                self.finish_search();
                self.pos = Chess::default();
                self.history.clear();
            }
            "setoption" => {
                self.finish_search();
                self.set_option(args);
            }
            "position" => {
                self.finish_search();
                self.set_position(args);
            }
            "go" => {
                self.finish_search();
                self.go(args);
            }
            "stop" => self.stop_search(),
            "quit" => {
                self.stop_search();
                return false;
            }
            "eval" => {
                self.finish_search();
                send(&format!(
                    "info string eval cp {} white {}",
                    evaluate(&self.pos, &self.params),
                    white_tapered(&self.pos, &self.params)
                ));
            }
            "help" => {
                for o in OPTIONS {
                    send(&format!(
                        "info string {} (default {}, {}..{}): {}",
                        o.name, o.default, o.min, o.max, o.meaning
                    ));
                }
                let c = catalog();
                if c.pst_at.is_some() {
                    send(
                        "info string Pst<table><square> (--pst): a piece-square entry in cp, \
                         the square seen from the piece's own side, tables PawnMg PawnEg \
                         KnightMg … KingEg; pawns have no first or last rank",
                    );
                }
                let extra = c
                    .declared
                    .iter()
                    .filter(|d| d.name.starts_with("Extra"))
                    .count();
                if extra > 0 {
                    send(&format!(
                        "info string Extra1..Extra{extra} (--extra-options): change nothing"
                    ));
                }
            }
            // Accepted and ignored: no pondering, no debug output, no
            // registration.
            "ponderhit" | "debug" | "register" => {}
            _ => send(&format!("info string unknown command: {cmd}")),
        }
        true
    }

    fn uci(&self) {
        send(&format!("id name Sparring {}", env!("CARGO_PKG_VERSION")));
        send("id author the spsa authors");
        send(&format!(
            "option name Hash type spin default {HASH_DEFAULT} min {HASH_MIN} max {HASH_MAX}"
        ));
        send("option name UCI_Chess960 type check default false");
        // One write for every declaration: with `--extra-options 50000` a line each would be
        // 50,000 flushes.
        let mut text = String::new();
        for o in &catalog().declared {
            let _ = writeln!(
                text,
                "option name {} type spin default {} min {} max {}",
                o.name, o.default, o.min, o.max
            );
        }
        text.push_str("uciok");
        send(&text);
    }

    /// Stops a running search, waits for its `bestmove`, and takes the
    /// transposition table back.
    fn stop_search(&mut self) {
        if let Some(r) = &self.running {
            r.stop.store(true, Ordering::Relaxed);
        }
        self.finish_search();
    }

    /// Waits for a running search to end and takes the transposition table
    /// back. A search with limits runs to its end, so a script that sends
    /// `go depth 5` and the next command without waiting still gets the
    /// whole search; an infinite one is stopped.
    fn finish_search(&mut self) {
        if let Some(r) = self.running.take() {
            if r.infinite {
                r.stop.store(true, Ordering::Relaxed);
            }
            match r.handle.join() {
                Ok(tt) => self.tt = Some(tt),
                Err(_) => send("info string search thread failed"),
            }
        }
    }

    fn set_option(&mut self, args: &[&str]) {
        let name_at = args.iter().position(|t| t.eq_ignore_ascii_case("name"));
        let value_at = args.iter().position(|t| t.eq_ignore_ascii_case("value"));
        let Some(name_at) = name_at else {
            send("info string setoption without name");
            return;
        };
        let name_end = value_at.filter(|&v| v > name_at).unwrap_or(args.len());
        let name = args[name_at + 1..name_end].join(" ");
        let value = value_at
            .map(|v| args[v + 1..].join(" "))
            .unwrap_or_default();
        if name.eq_ignore_ascii_case("UCI_Chess960") {
            match value.to_ascii_lowercase().as_str() {
                "true" => self.castling = CastlingMode::Chess960,
                "false" => self.castling = CastlingMode::Standard,
                _ => send(&format!(
                    "info string option UCI_Chess960: value '{value}' is not true or false"
                )),
            }
            return;
        }
        let Ok(v) = value.parse::<i64>() else {
            send(&format!(
                "info string option {name}: value '{value}' is not an integer"
            ));
            return;
        };
        if name.eq_ignore_ascii_case("Hash") {
            let mb = v.clamp(HASH_MIN as i64, HASH_MAX as i64) as usize;
            if mb as i64 != v {
                send(&format!("info string option Hash: {v} clamped to {mb}"));
            }
            if mb != self.hash_mb {
                self.hash_mb = mb;
                self.tt = None; // reallocated at the next go
            }
            return;
        }
        match catalog().find(&name) {
            Some(o) => {
                let clamped = v.clamp(i64::from(o.min), i64::from(o.max)) as i32;
                if i64::from(clamped) != v {
                    send(&format!(
                        "info string option {}: {v} clamped to {clamped}",
                        o.name
                    ));
                }
                self.params.values[o.slot] = clamped;
            }
            None => send(&format!("info string unknown option: {name}")),
        }
    }

    fn set_position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|t| *t == "moves");
        let setup_end = moves_at.unwrap_or(args.len());
        let pos = match args.first() {
            Some(&"startpos") => Chess::default(),
            Some(&"fen") => {
                let fen = args[1..setup_end].join(" ");
                match parse_fen(&fen, self.castling) {
                    Some(p) => p,
                    None => {
                        send(&format!("info string invalid fen: {fen}"));
                        return;
                    }
                }
            }
            _ => {
                send("info string position needs startpos or fen");
                return;
            }
        };
        let mut pos = pos;
        let mut history = Vec::new();
        for mv in moves_at.map_or(&[][..], |i| &args[i + 1..]) {
            let legal = UciMove::from_ascii(mv.as_bytes())
                .ok()
                .and_then(|u| u.to_move(&pos).ok());
            match legal {
                Some(m) => {
                    history.push(hash_of(&pos));
                    pos.play_unchecked(m);
                }
                None => {
                    send(&format!(
                        "info string illegal move {mv}; ignoring it and the rest"
                    ));
                    break;
                }
            }
        }
        self.pos = pos;
        self.history = history;
    }

    fn go(&mut self, args: &[&str]) {
        let limits = parse_go(args);
        let limits_infinite = limits.infinite;
        let stop = Arc::new(AtomicBool::new(false));
        let mut tt = self.tt.take().unwrap_or_else(|| Tt::new(self.hash_mb));
        let params = self.params.clone();
        let pos = self.pos.clone();
        let history = self.history.clone();
        let castling = self.castling;
        let flag = Arc::clone(&stop);
        let handle = thread::spawn(move || {
            let mut searcher = Searcher::new(&params, &mut tt, Arc::clone(&flag), history);
            let mut printed = 0;
            let out = searcher.search(&pos, &limits, &mut |r| {
                printed = r.nodes;
                send(&info_line(r, castling));
            });
            if let Some(last) = &out.last
                && out.nodes != printed
            {
                // Aborted mid-iteration: report the totals.
                let mut r = last.clone();
                r.nodes = out.nodes;
                send(&info_line(&r, castling));
            }
            if limits.infinite {
                // UCI: never answer an infinite search before `stop`.
                while !flag.load(Ordering::Relaxed) {
                    thread::sleep(Duration::from_millis(1));
                }
            }
            let best = out.best.map_or_else(
                || "0000".to_string(),
                |m| UciMove::from_move(m, castling).to_string(),
            );
            send(&format!("bestmove {best}"));
            drop(searcher);
            tt
        });
        self.running = Some(Running {
            stop,
            infinite: limits_infinite,
            handle,
        });
    }
}

/// Parses a FEN leniently: bad castling rights, a bad en passant square and
/// impossible amounts of material are dropped or accepted; positions the
/// search could not handle (no king, side not to move in check) are not.
fn parse_fen(fen: &str, castling: CastlingMode) -> Option<Chess> {
    let setup: Fen = fen.parse().ok()?;
    let e = match setup.into_position(castling) {
        Ok(p) => return Some(p),
        Err(e) => e,
    };
    let e = match e.ignore_invalid_castling_rights() {
        Ok(p) => return Some(p),
        Err(e) => e,
    };
    let e = match e.ignore_invalid_ep_square() {
        Ok(p) => return Some(p),
        Err(e) => e,
    };
    e.ignore_too_much_material().ok()
}

pub fn parse_go(args: &[&str]) -> Limits {
    let mut l = Limits::default();
    let mut it = args.iter().peekable();
    while let Some(&key) = it.next() {
        let mut number = || it.peek().and_then(|v| v.parse::<i64>().ok());
        match key {
            "infinite" => l.infinite = true,
            "depth" => l.depth = number().map(|v| v.clamp(1, 64) as i32),
            "nodes" => l.nodes = number().map(|v| v.max(1) as u64),
            "movetime" => l.movetime = number().map(|v| v.max(1) as u64),
            "wtime" => l.wtime = number().map(|v| v.max(0) as u64),
            "btime" => l.btime = number().map(|v| v.max(0) as u64),
            "winc" => l.winc = number().map(|v| v.max(0) as u64),
            "binc" => l.binc = number().map(|v| v.max(0) as u64),
            "movestogo" => l.movestogo = number().map(|v| v.max(1) as u64),
            // searchmoves, ponder, mate and anything unknown are ignored.
            _ => {}
        }
    }
    let limited = l.depth.is_some()
        || l.nodes.is_some()
        || l.movetime.is_some()
        || l.wtime.is_some()
        || l.btime.is_some();
    if !limited {
        l.infinite = true; // a bare `go` searches until `stop`
    }
    l
}

fn info_line(r: &Report, castling: CastlingMode) -> String {
    let ms = r.elapsed.as_millis();
    let nps = (u128::from(r.nodes) * 1000).checked_div(ms).unwrap_or(0);
    let pv: Vec<String> =
        r.pv.iter()
            .map(|&m| UciMove::from_move(m, castling).to_string())
            .collect();
    format!(
        "info depth {} seldepth {} score {} nodes {} time {ms} nps {nps} pv {}",
        r.depth,
        r.seldepth,
        format_score(r.score),
        r.nodes,
        pv.join(" ")
    )
}

/// Reads commands until `quit` or end of input. Bytes that are not UTF-8
/// are replaced, never fatal.
pub fn run() {
    let mut engine = Engine::new();
    let mut input = io::stdin().lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                if !engine.handle(&line) {
                    return;
                }
            }
        }
    }
    engine.stop_search();
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::EnPassantMode;

    #[test]
    fn go_parsing() {
        let l = parse_go(&[
            "wtime",
            "1000",
            "btime",
            "-5",
            "winc",
            "10",
            "movestogo",
            "x",
        ]);
        assert_eq!(l.wtime, Some(1000));
        assert_eq!(l.btime, Some(0));
        assert_eq!(l.winc, Some(10));
        assert_eq!(l.movestogo, None);
        assert!(!l.infinite);
        assert!(parse_go(&[]).infinite);
        assert_eq!(parse_go(&["depth", "0"]).depth, Some(1));
        assert_eq!(parse_go(&["nodes", "123", "infinite"]).nodes, Some(123));
    }

    #[test]
    fn position_with_illegal_move_keeps_the_legal_prefix() {
        let mut e = Engine::new();
        e.set_position(&["startpos", "moves", "e2e4", "e7e5", "e1e3", "d2d4"]);
        assert_eq!(e.history.len(), 2);
        assert_eq!(
            Fen::from_position(&e.pos, EnPassantMode::Legal).to_string(),
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
        );
    }

    #[test]
    fn setoption_names_with_spaces_and_clamping() {
        let mut e = Engine::new();
        e.set_option(&["name", "knightvalue", "value", "5000"]);
        assert_eq!(
            e.params.values[Params::index_of("KnightValue").unwrap()],
            1200
        );
        e.set_option(&["name", "Hash", "value", "2"]);
        assert_eq!(e.hash_mb, 2);
        e.set_option(&["name", "No", "Such", "value", "1"]);
        e.set_option(&["name", "PawnValue", "value", "abc"]);
        assert_eq!(e.params, {
            let mut p = Params::default();
            p.values[Params::index_of("KnightValue").unwrap()] = 1200;
            p
        });
    }
}
