//! Generate the bundled opening book `openings/` by talking to Stockfish directly.
//!
//! Method (see `openings/README.md`):
//! 1. Random walks of `PLIES` plies from the start position. At every position on the way, a
//!    shallow MultiPV search (depth `PRUNE_DEPTH`) lists the candidate moves; only moves within
//!    `PRUNE_WINDOW` cp of the best one are allowed, so obviously bad moves are pruned. Results
//!    are cached per position, so the shallow searches near the root are shared by many walks.
//! 2. Every distinct end position is evaluated at depth `EVAL_DEPTH`; only those with
//!    |eval| ≤ `BALANCED_CP` are kept.
//! 3. Diversity: at most `PER_PAWN_STRUCTURE` positions per pawn structure, picked round-robin
//!    over the first move so that every opening move family is represented.
//!
//! Usage: `cargo run --release --example make_book -- [stockfish path] [out dir] [count] [options]`
//! (defaults: /usr/games/stockfish, openings, 300). Options override the recipe's constants, so the
//! same walk makes a larger or deeper book: `--plies N`, `--candidates N`, `--prune-depth N`,
//! `--eval-depth N`, `--balanced-cp N`, `--per-structure N`, `--name FILE` (default
//! `balanced_<plies>ply.epd`), `--no-pgn`, and `--preset large` (the bundled
//! `balanced_8ply_large.epd`). Without options it makes `balanced_6ply.epd` and
//! `balanced_small.pgn` exactly as bundled. Deterministic for a given Stockfish build (one thread,
//! fixed seed), and it uses one core only.
//!
//! Chess960: `--variant chess960` starts every walk from one of the 960 start arrays (the same for
//! both sides, numbered by the standard scheme, 518 being the standard one) and `--variant dfrc`
//! from White's and Black's arrays drawn apart; `--seed N` picks them (default fixed, so the
//! book is reproducible) and `--per-array N` keeps at most N candidates from one start (default
//! 2). Stockfish gets `UCI_Chess960`, moves are in Chess960 UCI (castling as king takes rook),
//! positions keep X-FEN castling for chess960 and Shredder-FEN (the rooks' files) for DFRC, and
//! the round-robin of step 3 goes over start arrays instead of first moves.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::{Epd, Fen};
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position, Role};
use spsa::game::chess960_start_fen;

const MULTIPV: u32 = 6;
const ROOT_MULTIPV: u32 = 10;
const PRUNE_WINDOW: i32 = 50;
const SEED: u64 = 20240607;
/// The default seed of the Chess960 and DFRC books.
const SEED_960: u64 = 960;

/// Which start positions the walks begin from.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    Standard,
    Chess960,
    Dfrc,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::Chess960 => "chess960",
            Variant::Dfrc => "dfrc",
        }
    }
}

/// The parts of the recipe a caller may change; the defaults make the bundled small book.
struct Recipe {
    plies: usize,
    prune_depth: u32,
    eval_depth: u32,
    balanced_cp: i32,
    per_structure: usize,
    candidates: usize,
    count: usize,
    name: Option<String>,
    pgn: bool,
    variant: Variant,
    seed: Option<u64>,
    per_array: usize,
}

impl Default for Recipe {
    fn default() -> Recipe {
        Recipe {
            plies: 6,
            prune_depth: 8,
            eval_depth: 13,
            balanced_cp: 40,
            per_structure: 2,
            candidates: 1000,
            count: 300,
            name: None,
            pgn: true,
            variant: Variant::Standard,
            seed: None,
            per_array: 2,
        }
    }
}

impl Recipe {
    /// The large book: 8 plies deep, where thousands of distinct balanced lines exist. The
    /// searches are a little shallower (depth 7 pruning, depth 11 balance, ±50 cp) so it costs
    /// about 65 ms of one core a candidate, a third of the small book's recipe, and finishes on
    /// a shared machine; 11,000 candidates leave room for 5,000 after the diversity rule.
    fn large() -> Recipe {
        Recipe {
            plies: 8,
            prune_depth: 7,
            eval_depth: 11,
            balanced_cp: 50,
            candidates: 11000,
            count: 5000,
            name: Some("balanced_8ply_large.epd".to_string()),
            pgn: false,
            ..Recipe::default()
        }
    }
}

/// Positional arguments (engine, out dir, count) as before, then options; `--preset` first.
fn parse_args(args: &[String]) -> (String, String, Recipe) {
    let mut recipe = if args
        .windows(2)
        .any(|w| w[0] == "--preset" && w[1] == "large")
    {
        Recipe::large()
    } else {
        Recipe::default()
    };
    let mut positional = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--no-pgn" {
            recipe.pgn = false;
            continue;
        }
        if !a.starts_with("--") {
            positional.push(a.clone());
            continue;
        }
        let v = it
            .next()
            .unwrap_or_else(|| panic!("{a} needs a value"))
            .clone();
        let num =
            |v: &str| -> usize { v.parse().unwrap_or_else(|_| panic!("{a}: bad number {v}")) };
        match a.as_str() {
            "--preset" if v == "large" => {}
            "--plies" => recipe.plies = num(&v),
            "--candidates" => recipe.candidates = num(&v),
            "--count" => recipe.count = num(&v),
            "--prune-depth" => recipe.prune_depth = num(&v) as u32,
            "--eval-depth" => recipe.eval_depth = num(&v) as u32,
            "--balanced-cp" => recipe.balanced_cp = num(&v) as i32,
            "--per-structure" => recipe.per_structure = num(&v),
            "--name" => recipe.name = Some(v),
            "--seed" => recipe.seed = Some(num(&v) as u64),
            "--per-array" => recipe.per_array = num(&v),
            "--variant" => {
                recipe.variant = match v.as_str() {
                    "standard" => Variant::Standard,
                    "chess960" | "960" => Variant::Chess960,
                    "dfrc" => Variant::Dfrc,
                    _ => panic!("--variant: standard, chess960 or dfrc, not {v}"),
                }
            }
            _ => panic!("unknown option {a} {v}"),
        }
    }
    let stockfish = positional
        .first()
        .cloned()
        .unwrap_or_else(|| "/usr/games/stockfish".to_string());
    let out_dir = positional
        .get(1)
        .cloned()
        .unwrap_or_else(|| "openings".to_string());
    if let Some(c) = positional.get(2).and_then(|c| c.parse().ok()) {
        recipe.count = c;
    }
    if recipe.variant != Variant::Standard {
        // Neither the small PGN book nor the standard book's file name fits a 960 book.
        recipe.pgn = false;
    }
    (stockfish, out_dir, recipe)
}

struct Engine {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Engine {
    fn start(path: &str, chess960: bool) -> Engine {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {path}: {e}"));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut engine = Engine {
            child,
            stdin,
            stdout,
        };
        engine.send("uci");
        engine.wait_for("uciok");
        engine.send("setoption name Threads value 1");
        engine.send("setoption name Hash value 16");
        if chess960 {
            engine.send("setoption name UCI_Chess960 value true");
        }
        engine.send("isready");
        engine.wait_for("readyok");
        engine
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to engine");
        self.stdin.flush().expect("flush");
    }

    fn wait_for(&mut self, token: &str) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).expect("read") == 0 {
                panic!("engine exited");
            }
            let line = line.trim().to_string();
            let done = line.split_whitespace().next() == Some(token);
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    /// MultiPV search: (first move, score cp from the side to move) for each line, best first.
    fn search(&mut self, fen: &str, depth: u32, multipv: u32) -> Vec<(String, i32)> {
        self.send(&format!("setoption name MultiPV value {multipv}"));
        self.send(&format!("position fen {fen}"));
        self.send(&format!("go depth {depth}"));
        let lines = self.wait_for("bestmove");
        let mut best: BTreeMap<u32, (String, i32)> = BTreeMap::new();
        for line in &lines {
            let tokens: Vec<&str> = line.split_whitespace().collect();
            if tokens.first() != Some(&"info") || !tokens.contains(&"pv") {
                continue;
            }
            let get = |key: &str| {
                tokens
                    .iter()
                    .position(|t| *t == key)
                    .and_then(|i| tokens.get(i + 1))
            };
            let line_depth: u32 = get("depth").and_then(|d| d.parse().ok()).unwrap_or(0);
            if line_depth != depth {
                continue;
            }
            let k: u32 = get("multipv").and_then(|d| d.parse().ok()).unwrap_or(1);
            let score = match (get("cp"), get("mate")) {
                (Some(cp), _) => cp.parse().unwrap_or(0),
                (None, Some(m)) => {
                    if m.starts_with('-') {
                        -30000
                    } else {
                        30000
                    }
                }
                _ => continue,
            };
            let Some(mv) = get("pv") else { continue };
            best.insert(k, (mv.to_string(), score));
        }
        best.into_values().collect()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

fn fen_of(pos: &Chess) -> String {
    shakmaty::fen::Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// A start position: its label (`518`, or `12 300` for DFRC's White and Black arrays) and the
/// position with Chess960 castling (standard castling for the standard start).
fn start_position(variant: Variant, rng: &mut ChaCha8Rng) -> (String, Chess) {
    let (white, black) = match variant {
        Variant::Standard => return ("standard".to_string(), Chess::default()),
        Variant::Chess960 => {
            let n = rng.random_range(0..960);
            (n, n)
        }
        Variant::Dfrc => (rng.random_range(0..960), rng.random_range(0..960)),
    };
    let label = if variant == Variant::Dfrc {
        format!("{white} {black}")
    } else {
        white.to_string()
    };
    let fen = chess960_start_fen(white, black);
    let pos = fen
        .parse::<Fen>()
        .ok()
        .and_then(|f| f.into_position(CastlingMode::Chess960).ok())
        .unwrap_or_else(|| panic!("start position {label}: {fen}"));
    (label, pos)
}

/// The EPD of `pos`: shakmaty writes X-FEN castling (KQkq for the outermost rooks, a file for an
/// inner one); DFRC books get Shredder-FEN, every right as its rook's file.
fn epd_of(pos: &Chess, variant: Variant) -> String {
    let epd = Epd::from_position(pos, EnPassantMode::Legal).to_string();
    if variant != Variant::Dfrc {
        return epd;
    }
    let rights = pos.castles().castling_rights();
    let mut castling = String::new();
    for color in Color::ALL {
        for rook in (rights & color.backrank()).into_iter().rev() {
            let file = rook.file().char();
            castling.push(if color == Color::White {
                file.to_ascii_uppercase()
            } else {
                file
            });
        }
    }
    if castling.is_empty() {
        castling.push('-');
    }
    let mut fields: Vec<&str> = epd.split(' ').collect();
    fields[2] = &castling;
    fields.join(" ")
}

fn pawn_key(pos: &Chess) -> (u64, u64) {
    let board = pos.board();
    let pawns = board.by_role(Role::Pawn);
    (
        (pawns & board.by_color(Color::White)).0,
        (pawns & board.by_color(Color::Black)).0,
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (stockfish, out_dir, recipe) = parse_args(&args);
    let Recipe {
        plies,
        prune_depth,
        eval_depth,
        balanced_cp,
        per_structure,
        candidates,
        count,
        ..
    } = recipe;
    let started = std::time::Instant::now();

    let variant = recipe.variant;
    let chess960 = variant != Variant::Standard;
    let seed = recipe
        .seed
        .unwrap_or(if chess960 { SEED_960 } else { SEED });
    let engine_id = engine_name(&stockfish);
    let mut engine = Engine::start(&stockfish, chess960);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut candidates_cache: HashMap<String, Vec<String>> = HashMap::new();
    // epd -> (start label, start position, moves)
    let mut leaves: BTreeMap<String, (String, Chess, Vec<String>)> = BTreeMap::new();
    let mut per_start: HashMap<String, usize> = HashMap::new();
    let mut walks = 0;
    while leaves.len() < candidates && walks < candidates * 20 {
        walks += 1;
        let (label, start) = start_position(variant, &mut rng);
        if chess960 && per_start.get(&label).copied().unwrap_or(0) >= recipe.per_array {
            continue;
        }
        let mut pos = start.clone();
        let mut moves = Vec::new();
        for ply in 0..plies {
            let fen = fen_of(&pos);
            let allowed = candidates_cache.entry(fen.clone()).or_insert_with(|| {
                let multipv = if ply == 0 { ROOT_MULTIPV } else { MULTIPV };
                let lines = engine.search(&fen, prune_depth, multipv);
                let best = lines.first().map_or(0, |l| l.1);
                lines
                    .into_iter()
                    .filter(|(_, s)| *s >= best - PRUNE_WINDOW)
                    .map(|(m, _)| m)
                    .collect()
            });
            if allowed.is_empty() {
                break;
            }
            let pick = allowed[rng.random_range(0..allowed.len())].clone();
            let m = pick
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(&pos).ok())
                .unwrap_or_else(|| panic!("engine move {pick} is not legal in {fen}"));
            pos.play_unchecked(m);
            moves.push(pick);
        }
        if moves.len() == plies && !pos.is_game_over() {
            let epd = epd_of(&pos, variant);
            if let std::collections::btree_map::Entry::Vacant(e) = leaves.entry(epd) {
                *per_start.entry(label.clone()).or_insert(0) += 1;
                e.insert((label, start, moves));
            }
        }
    }
    eprintln!(
        "{} walks, {} distinct candidates, {} shallow searches",
        walks,
        leaves.len(),
        candidates_cache.len()
    );

    // Evaluate and keep balanced positions.
    struct Kept {
        epd: String,
        start: String,
        moves: Vec<String>,
        eval: i32,
        pawns: (u64, u64),
        halfmoves: u32,
        fullmoves: u32,
    }
    let mut by_first: BTreeMap<String, Vec<Kept>> = BTreeMap::new();
    for (i, (epd, (label, start, moves))) in leaves.iter().enumerate() {
        let mut pos = start.clone();
        for m in moves {
            let mv = m.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(mv);
        }
        engine.send("ucinewgame");
        let lines = engine.search(&fen_of(&pos), eval_depth, 1);
        let Some(&(_, stm_eval)) = lines.first() else {
            continue;
        };
        let white_eval = if pos.turn() == Color::White {
            stm_eval
        } else {
            -stm_eval
        };
        if i % 100 == 0 {
            eprintln!("evaluated {i}/{}", leaves.len());
        }
        if white_eval.abs() <= balanced_cp {
            // Round-robin over first moves, or over start arrays for 960 books.
            let key = if chess960 {
                label.clone()
            } else {
                moves[0].clone()
            };
            by_first.entry(key).or_default().push(Kept {
                epd: epd.clone(),
                start: label.clone(),
                moves: moves.clone(),
                eval: white_eval,
                pawns: pawn_key(&pos),
                halfmoves: pos.halfmoves(),
                fullmoves: pos.fullmoves().get(),
            });
        }
    }

    // Diversity: round-robin over first moves, at most per_structure per pawn structure.
    let mut structures: HashMap<(u64, u64), usize> = HashMap::new();
    let mut chosen: Vec<Kept> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut queues: Vec<std::vec::IntoIter<Kept>> =
        by_first.into_values().map(|v| v.into_iter()).collect();
    while chosen.len() < count {
        let mut progressed = false;
        for q in queues.iter_mut() {
            for k in q.by_ref() {
                let n = structures.entry(k.pawns).or_insert(0);
                if *n < per_structure && seen.insert(k.epd.clone()) {
                    *n += 1;
                    chosen.push(k);
                    progressed = true;
                    break;
                }
            }
            if chosen.len() >= count {
                break;
            }
        }
        if !progressed {
            break;
        }
    }
    eprintln!("kept {} balanced, diverse positions", chosen.len());

    let from = match variant {
        Variant::Standard => "the start".to_string(),
        Variant::Chess960 => format!(
            "Chess960 start arrays\n# (variant chess960: one array of the 960 for both sides, \
             numbered by the standard scheme,\n# 518 the standard one; X-FEN castling; \
             {} arrays drawn with seed {seed}, at most {} candidates from one)",
            per_start.len(),
            recipe.per_array
        ),
        Variant::Dfrc => format!(
            "Double Fischer Random start arrays\n# (variant dfrc: White's and Black's arrays \
             of the 960 drawn apart, numbered by the standard\n# scheme; Shredder-FEN castling; \
             {} pairs drawn with seed {seed}, at most {} candidates from one)",
            per_start.len(),
            recipe.per_array
        ),
    };
    let round_robin = if chess960 {
        "start arrays"
    } else {
        "first moves"
    };
    let c0 = if chess960 {
        "c0 = the moves from the start array in Chess960 UCI (castling as king takes rook),\n\
         # c1 = the start array's number (White's then Black's for DFRC).\n"
    } else {
        "c0 = the moves from the start in UCI.\n"
    };
    let header = format!(
        "# spsa bundled opening book: {n} balanced positions {plies} plies from {from}.\n\
         # Made by `cargo run --release --example make_book{cmd}` with {engine_id}:\n\
         # random walks of {plies} plies, each move among Stockfish's MultiPV {MULTIPV} (root {ROOT_MULTIPV})\n\
         # at depth {prune_depth} within {PRUNE_WINDOW} cp of the best; end positions kept when\n\
         # |eval| <= {balanced_cp} cp at depth {eval_depth} (1 thread, 16 MB hash); at most\n\
         # {per_structure} per pawn structure, round-robin over {round_robin}. Seed {seed}.\n\
         # Variant {variant}.\n\
         # Opcodes: hmvc/fmvn = move counters, ce = Stockfish eval in cp from White's view,\n\
         # {c0}",
        variant = variant.name(),
        n = chosen.len(),
        cmd = if args.is_empty() {
            String::new()
        } else {
            format!(" -- {}", args.join(" "))
        },
    );
    let width = 3.max(count.to_string().len());
    let mut epd_out = header.clone();
    let id_prefix = match variant {
        Variant::Standard => format!("bal{plies}"),
        Variant::Chess960 => format!("c960-{plies}"),
        Variant::Dfrc => format!("dfrc-{plies}"),
    };
    for (i, k) in chosen.iter().enumerate() {
        let c1 = if chess960 {
            format!(" c1 \"{}\";", k.start)
        } else {
            String::new()
        };
        let _ = writeln!(
            epd_out,
            "{} hmvc {}; fmvn {}; id \"{id_prefix}-{:0width$}\"; ce {}; c0 \"{}\";{c1}",
            k.epd,
            k.halfmoves,
            k.fullmoves,
            i + 1,
            k.eval,
            k.moves.join(" "),
        );
    }
    std::fs::create_dir_all(&out_dir).expect("create out dir");
    let name = recipe.name.clone().unwrap_or_else(|| match variant {
        Variant::Standard => format!("balanced_{plies}ply.epd"),
        _ => format!("{}_balanced_{plies}ply.epd", variant.name()),
    });
    let epd_path = format!("{out_dir}/{name}");
    std::fs::write(&epd_path, epd_out).expect("write epd");
    eprintln!(
        "wrote {epd_path} in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    if !recipe.pgn {
        return;
    }

    // The small PGN book: the first 20 lines as games from the start position.
    let mut pgn = String::new();
    for (i, k) in chosen.iter().take(20).enumerate() {
        let _ = write!(
            pgn,
            "[Event \"spsa balanced book\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n\
             [Round \"{}\"]\n[White \"?\"]\n[Black \"?\"]\n[Result \"*\"]\n\
             [Annotator \"{} depth {eval_depth}: {:+} cp\"]\n\n",
            i + 1,
            engine_id,
            k.eval
        );
        let mut pos = Chess::default();
        let mut text = String::new();
        for (ply, m) in k.moves.iter().enumerate() {
            let mv = m.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            if ply % 2 == 0 {
                let _ = write!(text, "{}. ", ply / 2 + 1);
            }
            let _ = write!(text, "{} ", San::from_move(&pos, mv));
            pos.play_unchecked(mv);
        }
        let _ = writeln!(pgn, "{text}*\n");
    }
    std::fs::write(format!("{out_dir}/balanced_small.pgn"), pgn).expect("write pgn");
    eprintln!("wrote {epd_path} and {out_dir}/balanced_small.pgn");
}

fn engine_name(path: &str) -> String {
    let mut engine = Engine::start(path, false);
    engine.send("uci");
    engine
        .wait_for("uciok")
        .iter()
        .find_map(|l| l.strip_prefix("id name ").map(str::to_string))
        .unwrap_or_else(|| path.to_string())
}
