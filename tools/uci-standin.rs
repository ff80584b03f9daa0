//! `uci-standin`: a small, deterministic UCI engine that misbehaves on request. For tests only.
//!
//! It tracks the position from `position startpos|fen <fen> [moves ...]` with shakmaty and plays
//! a legal move: the first capture in UCI-string order, else the first legal move in that order.
//! Moves are counted per process ("its own moves" = `go` commands answered since start).
//!
//! Flags (all optional, combinable):
//!   --crash-after N      exit abruptly (status 3, no output) when asked for move N+1
//!   --hang-after N       from move N+1 on, never answer `go` and ignore everything but EOF
//!   --ignore-stop        `stop` does not cut a `--think` / `go infinite` search short
//!   --illegal-after N    from move N+1 on, answer a legal-looking illegal move (a1a1 if none)
//!   --none-after N       from move N+1 on, answer `bestmove (none)`
//!   --null-after N       from move N+1 on, answer `bestmove 0000`
//!   --no-score-after N   from move N+1 on, answer `bestmove` without any `info ... score` line
//!   --garbage            interleave junk lines (binary-ish bytes, 100 kB lines, malformed info)
//!   --deep-info          before each bestmove print
//!                        `info depth 300 seldepth 400 multipv 1 score mate 200 wdl 10 20 970 nodes ...`
//!   --slow-uciok MS      wait MS milliseconds before `uciok`
//!   --no-uciok           never send `uciok`
//!   --no-readyok         never answer `isready`
//!   --score CP           report this score (`info depth 1 score cp CP ...`) every move (default 0)
//!   --score-option NAME  report the current value of spin option NAME as the score instead
//!   --spin NAME=DEF:MIN:MAX  declare a spin option (repeatable; NAME may contain spaces)
//!   --info-flood N       print N info lines (depth 1..N, score cp = depth) before each bestmove
//!   --think MS           think MS milliseconds before answering (`stop` ends it early)
//!   --ignore-quit        `quit` does nothing (the process lives until killed or stdin closes)
//!   --id NAME            `id name NAME` (default "uci-standin")
//!
//! `go infinite` thinks until `stop`. EOF on stdin always ends the process.

use std::collections::HashMap;
use std::io::{BufRead, BufWriter, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position, Square};

#[derive(Default)]
struct Flags {
    crash_after: Option<u64>,
    hang_after: Option<u64>,
    ignore_stop: bool,
    illegal_after: Option<u64>,
    none_after: Option<u64>,
    no_score_after: Option<u64>,
    null_after: Option<u64>,
    garbage: bool,
    deep_info: bool,
    slow_uciok: Option<u64>,
    no_uciok: bool,
    no_readyok: bool,
    score: i64,
    score_option: Option<String>,
    spins: Vec<(String, i64, i64, i64)>,
    info_flood: u64,
    think: u64,
    ignore_quit: bool,
    id: String,
}

fn usage(msg: &str) -> ! {
    eprintln!("uci-standin: {msg} (see the top of src/bin/uci-standin.rs)");
    std::process::exit(2)
}

fn parse_flags() -> Flags {
    let mut f = Flags {
        id: "uci-standin".into(),
        ..Flags::default()
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |what: &str| {
            args.next()
                .unwrap_or_else(|| usage(&format!("{what} needs a value")))
        };
        let num = |s: String| {
            s.parse::<u64>()
                .unwrap_or_else(|_| usage(&format!("bad number {s}")))
        };
        match a.as_str() {
            "--crash-after" => f.crash_after = Some(num(val(&a))),
            "--hang-after" => f.hang_after = Some(num(val(&a))),
            "--ignore-stop" => f.ignore_stop = true,
            "--illegal-after" => f.illegal_after = Some(num(val(&a))),
            "--none-after" => f.none_after = Some(num(val(&a))),
            "--no-score-after" => f.no_score_after = Some(num(val(&a))),
            "--null-after" => f.null_after = Some(num(val(&a))),
            "--garbage" => f.garbage = true,
            "--deep-info" => f.deep_info = true,
            "--slow-uciok" => f.slow_uciok = Some(num(val(&a))),
            "--no-uciok" => f.no_uciok = true,
            "--no-readyok" => f.no_readyok = true,
            "--score" => {
                let v = val(&a);
                f.score = v
                    .parse()
                    .unwrap_or_else(|_| usage(&format!("bad score {v}")))
            }
            "--score-option" => f.score_option = Some(val(&a)),
            "--spin" => {
                let v = val(&a);
                let parsed = v.rsplit_once('=').and_then(|(name, nums)| {
                    let n: Vec<i64> = nums
                        .split(':')
                        .map(|x| x.parse().ok())
                        .collect::<Option<_>>()?;
                    (n.len() == 3).then(|| (name.to_string(), n[0], n[1], n[2]))
                });
                f.spins
                    .push(parsed.unwrap_or_else(|| usage(&format!("bad --spin {v}"))));
            }
            "--info-flood" => f.info_flood = num(val(&a)),
            "--think" => f.think = num(val(&a)),
            "--ignore-quit" => f.ignore_quit = true,
            "--id" => f.id = val(&a),
            other => usage(&format!("unknown flag {other}")),
        }
    }
    f
}

/// A tiny deterministic generator for junk lines.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

struct Standin {
    f: Flags,
    out: BufWriter<std::io::Stdout>,
    rx: Receiver<Option<Vec<u8>>>,
    pos: Chess,
    spin_values: HashMap<String, i64>,
    moves_played: u64,
    rng: Lcg,
    hung: bool,
}

impl Standin {
    fn emit(&mut self, line: &str) {
        let _ = writeln!(self.out, "{line}");
    }

    fn flush(&mut self) {
        if self.out.flush().is_err() {
            std::process::exit(0);
        }
    }

    fn junk(&mut self) {
        if !self.f.garbage {
            return;
        }
        let kind = self.rng.next() % 6;
        let _ = match kind {
            0 => {
                let bytes: Vec<u8> = (0..40)
                    .map(|_| (self.rng.next() % 256) as u8)
                    .filter(|&b| b != b'\n')
                    .collect();
                self.out
                    .write_all(&bytes)
                    .and_then(|_| self.out.write_all(b"\n"))
            }
            1 => {
                let long = "x".repeat(100_000);
                writeln!(self.out, "info string {long}")
            }
            2 => writeln!(self.out, "info depth abc score cp nodes -5 wdl 1 2 pv"),
            3 => writeln!(
                self.out,
                "info depth 99999999999999999999999 score mate -99999999999999999"
            ),
            4 => writeln!(self.out, "\r\n   \t"),
            _ => writeln!(self.out, "bestmovex e2e4 readyokay uciokay"),
        };
    }

    /// Wait until `ms` passed or `stop` arrived (unless stop is ignored). Returns false on EOF/quit.
    fn think(&mut self, ms: Option<u64>) -> bool {
        let end = ms.map(|ms| Instant::now() + Duration::from_millis(ms));
        loop {
            let msg = match end {
                Some(end) => {
                    let now = Instant::now();
                    if now >= end {
                        return true;
                    }
                    match self.rx.recv_timeout(end - now) {
                        Ok(m) => m,
                        Err(RecvTimeoutError::Timeout) => return true,
                        Err(RecvTimeoutError::Disconnected) => None,
                    }
                }
                None => self.rx.recv().unwrap_or(None),
            };
            let Some(line) = msg else { return false };
            let cmd = String::from_utf8_lossy(&line).trim().to_string();
            match cmd.as_str() {
                "quit" => return false,
                "stop" if !self.f.ignore_stop => return true,
                "isready" if !self.f.no_readyok => {
                    self.emit("readyok");
                    self.flush();
                }
                _ => {}
            }
        }
    }

    fn set_position(&mut self, rest: &str) {
        let mut toks = rest.split_ascii_whitespace().peekable();
        let mut pos = match toks.next() {
            Some("startpos") => Chess::default(),
            Some("fen") => {
                let fen: Vec<&str> = toks.by_ref().take_while(|t| *t != "moves").collect();
                match fen
                    .join(" ")
                    .parse::<Fen>()
                    .ok()
                    .and_then(|f| f.into_position(CastlingMode::Standard).ok())
                {
                    Some(p) => p,
                    None => {
                        self.emit("info string bad fen");
                        Chess::default()
                    }
                }
            }
            _ => return,
        };
        for t in toks.filter(|t| *t != "moves") {
            match t.parse::<UciMove>().ok().and_then(|m| m.to_move(&pos).ok()) {
                Some(m) => pos.play_unchecked(m),
                None => {
                    self.emit(&format!("info string illegal move {t}"));
                    break;
                }
            }
        }
        self.pos = pos;
    }

    fn choose(&self) -> Option<String> {
        let mut legal: Vec<(bool, String)> = self
            .pos
            .legal_moves()
            .iter()
            .map(|m: &Move| {
                (
                    !m.is_capture(),
                    m.to_uci(CastlingMode::Standard).to_string(),
                )
            })
            .collect();
        legal.sort();
        legal.into_iter().next().map(|(_, m)| m)
    }

    /// A from-to pair with one of our pieces on `from` that is not a legal move.
    fn illegal(&self) -> String {
        let legal: Vec<String> = self
            .pos
            .legal_moves()
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        let ours = self.pos.us();
        for from in ours {
            for to in Square::ALL {
                let cand = format!("{from}{to}");
                if from != to && !legal.contains(&cand) {
                    return cand;
                }
            }
        }
        "a1a1".into()
    }

    fn go(&mut self, args: &str) -> bool {
        let n = self.moves_played; // moves answered so far; this is move n+1
        if self.f.crash_after.is_some_and(|k| n >= k) {
            std::process::exit(3);
        }
        if self.f.hang_after.is_some_and(|k| n >= k) {
            self.hung = true;
            return true;
        }
        self.junk();
        let infinite = args.split_ascii_whitespace().any(|t| t == "infinite");
        let think = if infinite { None } else { Some(self.f.think) };
        if (infinite || self.f.think > 0) && !self.think(think) {
            return false;
        }
        let best = if self.f.none_after.is_some_and(|k| n >= k) {
            "(none)".to_string()
        } else if self.f.null_after.is_some_and(|k| n >= k) {
            "0000".to_string()
        } else if self.f.illegal_after.is_some_and(|k| n >= k) {
            self.illegal()
        } else {
            self.choose().unwrap_or_else(|| "(none)".into())
        };
        let pv = if best.starts_with('(') {
            ""
        } else {
            best.as_str()
        };
        for d in 1..=self.f.info_flood {
            let _ = writeln!(
                self.out,
                "info depth {d} seldepth {} multipv 1 score cp {d} wdl 300 400 300 nodes {} nps 1000000 hashfull 10 tbhits 0 time {d} pv {pv} e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7",
                d + 5,
                d * 1000
            );
        }
        let score = match &self.f.score_option {
            Some(name) => self
                .spin_values
                .get(&name.to_ascii_lowercase())
                .copied()
                .unwrap_or(0),
            None => self.f.score,
        };
        if self.f.no_score_after.is_none_or(|k| n < k) {
            self.emit(&format!(
                "info depth 1 seldepth 1 score cp {score} nodes 1 time 0 pv {pv}"
            ));
        }
        if self.f.deep_info {
            self.emit(&format!(
                "info depth 300 seldepth 400 multipv 1 score mate 200 wdl 10 20 970 nodes 123456789012 nps 1000 time 5 pv {pv}"
            ));
        }
        self.junk();
        self.moves_played += 1;
        self.emit(&format!("bestmove {best}"));
        self.flush();
        true
    }

    fn handle(&mut self, cmd: &str) -> bool {
        let (head, rest) = cmd.split_once(' ').unwrap_or((cmd, ""));
        if self.hung {
            return true;
        }
        match head {
            "uci" => {
                self.junk();
                let id = self.f.id.clone();
                self.emit(&format!("id name {id}"));
                self.emit("id author the spsa team");
                for (name, def, min, max) in self.f.spins.clone() {
                    self.emit(&format!(
                        "option name {name} type spin default {def} min {min} max {max}"
                    ));
                }
                self.junk();
                self.flush();
                if let Some(ms) = self.f.slow_uciok {
                    std::thread::sleep(Duration::from_millis(ms));
                }
                if !self.f.no_uciok {
                    self.emit("uciok");
                }
            }
            "isready" => {
                self.junk();
                if !self.f.no_readyok {
                    self.emit("readyok");
                }
            }
            "setoption" => {
                // setoption name <name words> value <v>
                let rest = rest.strip_prefix("name ").unwrap_or(rest);
                if let Some((name, value)) = rest.rsplit_once(" value ")
                    && let Ok(v) = value.trim().parse::<i64>()
                {
                    self.spin_values.insert(name.trim().to_ascii_lowercase(), v);
                }
            }
            "ucinewgame" => self.pos = Chess::default(),
            "position" => self.set_position(rest),
            "go" => return self.go(rest),
            "quit" => return self.f.ignore_quit,
            _ => {}
        }
        self.flush();
        true
    }
}

fn main() {
    let f = parse_flags();
    let (tx, rx) = channel::<Option<Vec<u8>>>();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match lock.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    return;
                }
                Ok(_) => {
                    if tx.send(Some(buf.clone())).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let spin_values = f
        .spins
        .iter()
        .map(|(n, d, _, _)| (n.to_ascii_lowercase(), *d))
        .collect();
    let mut s = Standin {
        f,
        out: BufWriter::with_capacity(1 << 16, std::io::stdout()),
        rx,
        pos: Chess::default(),
        spin_values,
        moves_played: 0,
        rng: Lcg(0x5eed),
        hung: false,
    };
    while let Ok(Some(line)) = s.rx.recv() {
        let cmd = String::from_utf8_lossy(&line).trim().to_string();
        if !s.handle(&cmd) {
            break;
        }
    }
    let _ = s.out.flush();
}
