//! Iterative deepening PVS alpha-beta with quiescence search, a
//! transposition table, killer moves, history, null move pruning and late
//! move reductions.
//!
//! Determinism: nothing here depends on the clock unless a time limit is
//! given. The transposition table is logically emptied at the start of each
//! search (by generation), killers and history are reset, so the same
//! position, options and depth/node limit give the same move and node count.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, Color, EnPassantMode, Move, MoveList, Position, Role};

use crate::eval::{Params, evaluate};

pub const MATE: i32 = 32_000;
pub const INF: i32 = 32_500;
pub const MAX_PLY: usize = 128;
pub const MAX_DEPTH: i32 = 64;
const MATE_BOUND: i32 = MATE - MAX_PLY as i32;
/// As many moves as a [`MoveList`] holds: 270, for a position of impossible material (which
/// the engine accepts); no legal game reaches 219.
const MAX_MOVES: usize = 270;

/// Limits of one `go` command. `None` means "not given".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub depth: Option<i32>,
    pub nodes: Option<u64>,
    pub movetime: Option<u64>,
    pub wtime: Option<u64>,
    pub btime: Option<u64>,
    pub winc: Option<u64>,
    pub binc: Option<u64>,
    pub movestogo: Option<u64>,
    pub infinite: bool,
}

impl Limits {
    /// (soft, hard) time budgets in milliseconds for the side to move: no new
    /// iteration starts after `soft`, the search aborts at `hard`.
    pub fn time_budget(&self, turn: Color) -> Option<(u64, u64)> {
        let clock = match turn {
            Color::White => self.wtime.map(|t| (t, self.winc.unwrap_or(0))),
            Color::Black => self.btime.map(|t| (t, self.binc.unwrap_or(0))),
        };
        let from_clock = clock.map(|(time, inc)| {
            let overhead = 30.min(time / 10);
            let usable = time.saturating_sub(overhead).max(1);
            let mtg = self.movestogo.unwrap_or(30).clamp(1, 100);
            let target = (time / mtg + inc * 3 / 4).clamp(1, usable);
            ((target * 6 / 10).max(1), (target * 2).min(usable))
        });
        let from_movetime = self.movetime.map(|t| {
            let hard = t.saturating_sub(10.min(t / 10)).max(1);
            (hard / 2, hard)
        });
        match (from_clock, from_movetime) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.min(b.1))),
            (a, b) => a.or(b),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Copy)]
struct Entry {
    key: u64,
    generation: u32,
    mv: u16,
    score: i16,
    depth: i8,
    bound: Bound,
}

const EMPTY: Entry = Entry {
    key: 0,
    generation: 0,
    mv: 0,
    score: 0,
    depth: 0,
    bound: Bound::Upper,
};

/// Transposition table. Entries from an earlier search (another generation)
/// count as empty, which keeps every search independent of the ones before.
pub struct Tt {
    entries: Vec<Entry>,
    generation: u32,
}

impl Tt {
    pub fn new(megabytes: usize) -> Tt {
        let n = (megabytes.max(1) << 20) / std::mem::size_of::<Entry>();
        Tt {
            entries: vec![EMPTY; n.max(1)],
            generation: 0,
        }
    }

    fn next_generation(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Wrapped after 2^32 searches: really clear so stale entries
            // cannot masquerade as current ones.
            self.entries.fill(EMPTY);
            self.generation = 1;
        }
    }

    fn index(&self, key: u64) -> usize {
        ((u128::from(key) * self.entries.len() as u128) >> 64) as usize
    }

    fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.entries[self.index(key)];
        (e.generation == self.generation && e.key == key).then_some(e)
    }

    fn store(&mut self, key: u64, mv: u16, score: i32, depth: i32, bound: Bound) {
        let i = self.index(key);
        let old = &mut self.entries[i];
        if old.generation == self.generation && old.key != key && i32::from(old.depth) > depth + 2 {
            return;
        }
        *old = Entry {
            key,
            generation: self.generation,
            mv,
            score: score as i16,
            depth: depth.clamp(0, 127) as i8,
            bound,
        };
    }
}

/// Compact move key (from, to, promotion) used by the table and killers.
fn pack(m: Move) -> u16 {
    let from = m.from().map_or(0, |s| s as u16);
    let to = m.to() as u16;
    let promo = m.promotion().map_or(0, |r| r as u16);
    from | (to << 6) | (promo << 12)
}

fn score_to_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE_BOUND {
        s + ply as i32
    } else if s <= -MATE_BOUND {
        s - ply as i32
    } else {
        s
    }
}

fn score_from_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE_BOUND {
        s - ply as i32
    } else if s <= -MATE_BOUND {
        s + ply as i32
    } else {
        s
    }
}

/// `cp <x>` or `mate <n>` as UCI wants it.
pub fn format_score(s: i32) -> String {
    if s >= MATE_BOUND {
        format!("mate {}", (MATE - s + 1) / 2)
    } else if s <= -MATE_BOUND {
        format!("mate -{}", (MATE + s) / 2)
    } else {
        format!("cp {s}")
    }
}

/// One finished iteration (or the partial last one), for `info` lines.
#[derive(Clone, Debug)]
pub struct Report {
    pub depth: i32,
    pub seldepth: usize,
    pub score: i32,
    pub nodes: u64,
    pub elapsed: Duration,
    pub pv: Vec<Move>,
}

/// Outcome of a whole search.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub best: Option<Move>,
    pub last: Option<Report>,
    pub nodes: u64,
}

pub struct Searcher<'a> {
    params: &'a Params,
    tt: &'a mut Tt,
    stop: Arc<AtomicBool>,
    start: Instant,
    hard_deadline: Option<Instant>,
    node_limit: u64,
    nodes: u64,
    seldepth: usize,
    aborted: bool,
    /// Hashes of the positions before the current one: game history, then
    /// the search path.
    hashes: Vec<u64>,
    killers: Vec<[u16; 2]>,
    history: Vec<i32>,
    pv: Vec<Vec<Move>>,
    /// The sort keys of the moves of the node at each ply (see [`Picker`]).
    order_keys: Vec<[u64; MAX_MOVES]>,
    root_best: Option<(Move, i32)>,
}

impl<'a> Searcher<'a> {
    /// `history` holds the Zobrist hashes of the game's earlier positions
    /// (oldest first, not including the root) for repetition detection.
    pub fn new(
        params: &'a Params,
        tt: &'a mut Tt,
        stop: Arc<AtomicBool>,
        history: Vec<u64>,
    ) -> Searcher<'a> {
        Searcher {
            params,
            tt,
            stop,
            start: Instant::now(),
            hard_deadline: None,
            node_limit: u64::MAX,
            nodes: 0,
            seldepth: 0,
            aborted: false,
            hashes: history,
            killers: vec![[0; 2]; MAX_PLY + 2],
            history: vec![0; 2 * 64 * 64],
            pv: vec![Vec::new(); MAX_PLY + 2],
            order_keys: vec![[0; MAX_MOVES]; MAX_PLY + 2],
            root_best: None,
        }
    }

    /// Runs iterative deepening on `root`, calling `on_iteration` after each
    /// completed depth.
    pub fn search(
        &mut self,
        root: &Chess,
        limits: &Limits,
        on_iteration: &mut dyn FnMut(&Report),
    ) -> Outcome {
        self.start = Instant::now();
        self.tt.next_generation();
        let budget = limits.time_budget(root.turn());
        let soft = budget.map(|(s, _)| self.start + Duration::from_millis(s));
        self.hard_deadline = budget.map(|(_, h)| self.start + Duration::from_millis(h));
        self.node_limit = limits.nodes.unwrap_or(u64::MAX);
        let max_depth = limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        let root_hash = hash_of(root);

        let legal = root.legal_moves();
        let mut first = self.order(root, &legal, 0, 0);
        let mut best = self.pick(&mut first).map(|i| legal[i]);
        let mut last = None;
        if legal.is_empty() {
            return Outcome {
                best: None,
                last,
                nodes: 0,
            };
        }

        for depth in 1..=max_depth {
            self.root_best = None;
            self.seldepth = 0;
            let score = self.negamax(root, root_hash, depth, -INF, INF, 0);
            if self.aborted {
                // Keep a move of the partial iteration only if it was fully
                // searched and proved at least as good as the alternatives.
                if let Some((m, s)) = self.root_best {
                    best = Some(m);
                    let pv = if self.pv[0].first() == Some(&m) {
                        self.pv[0].clone()
                    } else {
                        vec![m]
                    };
                    last = Some(self.report(depth, s, pv));
                }
                break;
            }
            let pv = self.pv[0].clone();
            if let Some(&m) = pv.first() {
                best = Some(m);
            }
            let r = self.report(depth, score, pv);
            on_iteration(&r);
            last = Some(r);
            if score.abs() >= MATE_BOUND && MATE - score.abs() <= depth {
                break; // a mate within the horizon will not change
            }
            if soft.is_some_and(|t| Instant::now() >= t) {
                break;
            }
        }
        Outcome {
            best,
            last,
            nodes: self.nodes,
        }
    }

    fn report(&self, depth: i32, score: i32, pv: Vec<Move>) -> Report {
        Report {
            depth,
            seldepth: self.seldepth,
            score,
            nodes: self.nodes,
            elapsed: self.start.elapsed(),
            pv,
        }
    }

    /// Counts a node, or returns true if the search must stop now.
    #[inline]
    fn out_of_budget(&mut self) -> bool {
        if self.aborted {
            return true;
        }
        if self.nodes >= self.node_limit
            || (self.nodes & 1023 == 0
                && (self.stop.load(Ordering::Relaxed)
                    || self.hard_deadline.is_some_and(|t| Instant::now() >= t)))
        {
            self.aborted = true;
        }
        if !self.aborted {
            self.nodes += 1;
        }
        self.aborted
    }

    fn is_repetition(&self, pos: &Chess, hash: u64) -> bool {
        let n = self.hashes.len();
        let reach = (pos.halfmoves() as usize).min(n);
        (4..=reach)
            .step_by(2)
            .any(|back| self.hashes[n - back] == hash)
    }

    /// The order to search `moves` in (see [`Picker`]): the table's move, captures (most
    /// valuable victim, least valuable attacker), queen promotions, killers, then history.
    fn order(&mut self, pos: &Chess, moves: &MoveList, tt_move: u16, ply: usize) -> Picker {
        for (i, &m) in moves.iter().enumerate() {
            let below_max = i64::from(i32::MAX) - i64::from(self.move_score(pos, m, tt_move, ply));
            self.order_keys[ply][i] = ((below_max as u64) << 16) | i as u64;
        }
        Picker {
            ply,
            len: moves.len(),
            handed: 0,
        }
    }

    /// The place in its move list of the next move to search, best first.
    fn pick(&mut self, picker: &mut Picker) -> Option<usize> {
        let keys = &mut self.order_keys[picker.ply][..picker.len];
        if picker.handed == keys.len() {
            return None;
        }
        match picker.handed {
            0 => {
                let (at, _) = keys.iter().enumerate().min_by_key(|&(_, k)| *k)?;
                keys.swap(0, at);
            }
            1 => keys[1..].sort_unstable(),
            _ => {}
        }
        picker.handed += 1;
        Some((keys[picker.handed - 1] & 0xffff) as usize)
    }

    fn move_score(&self, pos: &Chess, m: Move, tt_move: u16, ply: usize) -> i32 {
        let key = pack(m);
        if key == tt_move && tt_move != 0 {
            return 3_000_000;
        }
        if let Some(victim) = m.capture() {
            return 2_000_000 + 10 * victim as i32 - m.role() as i32
                + m.promotion().map_or(0, |r| 10 * r as i32);
        }
        match m.promotion() {
            Some(Role::Queen) => return 1_900_000,
            Some(_) => return -1_000,
            None => {}
        }
        let k = &self.killers[ply];
        if key == k[0] {
            return 1_800_000;
        }
        if key == k[1] {
            return 1_700_000;
        }
        self.history[history_index(pos.turn(), m)]
    }

    fn negamax(
        &mut self,
        pos: &Chess,
        hash: u64,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
    ) -> i32 {
        self.pv[ply].clear();
        let pv_node = beta - alpha > 1;
        let in_check = pos.is_check();
        if in_check {
            depth += 1;
        }
        if depth <= 0 {
            return self.qsearch(pos, alpha, beta, ply);
        }
        if self.out_of_budget() {
            return 0;
        }
        if ply > 0 {
            if pos.halfmoves() >= 100
                || self.is_repetition(pos, hash)
                || pos.is_insufficient_material()
            {
                return 0;
            }
            // Mate distance pruning.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
            if ply >= MAX_PLY {
                return evaluate(pos, self.params);
            }
        }
        self.seldepth = self.seldepth.max(ply);

        let mut tt_move = 0;
        if let Some(e) = self.tt.probe(hash) {
            tt_move = e.mv;
            let s = score_from_tt(i32::from(e.score), ply);
            if !pv_node && ply > 0 && i32::from(e.depth) >= depth {
                match e.bound {
                    Bound::Exact => return s,
                    Bound::Lower if s >= beta => return s,
                    Bound::Upper if s <= alpha => return s,
                    _ => {}
                }
            }
        }

        // Null move pruning: give the opponent a free move; if we still beat
        // beta, this node is very likely a cut node.
        if !pv_node && !in_check && ply > 0 && depth >= 3 && has_pieces(pos) {
            let static_eval = evaluate(pos, self.params);
            if static_eval >= beta
                && let Ok(null) = pos.clone().swap_turn()
            {
                let r = 2 + depth / 6;
                let null_hash = hash_of(&null);
                self.hashes.push(hash);
                let s = -self.negamax(&null, null_hash, depth - 1 - r, -beta, -beta + 1, ply + 1);
                self.hashes.pop();
                if self.aborted {
                    return 0;
                }
                if s >= beta {
                    return if s >= MATE_BOUND { beta } else { s };
                }
            }
        }

        let legal = pos.legal_moves();
        if legal.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        let mut best = -INF;
        let mut best_move = 0;
        let alpha_orig = alpha;
        let mut picker = self.order(pos, &legal, tt_move, ply);
        while let Some(next) = self.pick(&mut picker) {
            let m = legal[next];
            // The move's rank in the order: the picker has handed out this many before it.
            let i = picker.handed - 1;
            let mut child = pos.clone();
            child.play_unchecked(m);
            let child_hash = pos
                .update_zobrist_hash(Zobrist64(hash), m, EnPassantMode::Legal)
                .map_or_else(|| hash_of(&child), |z| z.0);
            let quiet = !m.is_capture() && !m.is_promotion();
            self.hashes.push(hash);
            let score = if i == 0 {
                -self.negamax(&child, child_hash, depth - 1, -beta, -alpha, ply + 1)
            } else {
                let reduction = if depth >= 3 && i >= 3 && quiet && !in_check && !child.is_check() {
                    1 + i32::from(i >= 8 && depth >= 5)
                } else {
                    0
                };
                let mut s = -self.negamax(
                    &child,
                    child_hash,
                    depth - 1 - reduction,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                );
                if s > alpha && (reduction > 0 || s < beta) && !self.aborted {
                    s = -self.negamax(&child, child_hash, depth - 1, -beta, -alpha, ply + 1);
                }
                s
            };
            self.hashes.pop();
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    best_move = pack(m);
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(m);
                    head[ply].extend_from_slice(&tail[0]);
                    if ply == 0 {
                        self.root_best = Some((m, score));
                    }
                    if alpha >= beta {
                        if quiet {
                            let k = &mut self.killers[ply];
                            if k[0] != best_move {
                                k[1] = k[0];
                                k[0] = best_move;
                            }
                            let h = &mut self.history[history_index(pos.turn(), m)];
                            *h += depth * depth;
                            if *h > 1_000_000 {
                                self.history.iter_mut().for_each(|v| *v /= 2);
                            }
                        }
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if alpha > alpha_orig {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt
            .store(hash, best_move, score_to_tt(best, ply), depth, bound);
        best
    }

    fn qsearch(&mut self, pos: &Chess, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.pv[ply].clear();
        if self.out_of_budget() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if ply >= MAX_PLY {
            return evaluate(pos, self.params);
        }
        let in_check = pos.is_check();
        let mut best = -INF;
        if !in_check {
            let stand = evaluate(pos, self.params);
            if stand >= beta {
                return stand;
            }
            alpha = alpha.max(stand);
            best = stand;
        }
        let mut legal = pos.legal_moves();
        if in_check && legal.is_empty() {
            return -MATE + ply as i32;
        }
        if !in_check {
            legal.retain(|m| m.is_capture() || m.promotion() == Some(Role::Queen));
        }
        let mut picker = self.order(pos, &legal, 0, ply);
        while let Some(next) = self.pick(&mut picker) {
            let m = legal[next];
            let mut child = pos.clone();
            child.play_unchecked(m);
            let score = -self.qsearch(&child, -beta, -alpha, ply + 1);
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(m);
                    head[ply].extend_from_slice(&tail[0]);
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

/// Where the moves of one node stand in their order, best first. Their sort keys are in
/// [`Searcher::order_keys`] at the node's ply: the move's score (the lowest key is the best
/// move) and then its place in the generated list, so no two are equal and moves of equal
/// score keep the order they were generated in; the search stays deterministic. Most nodes
/// are cut off after their first move, so that one is found by a scan and the rest are sorted
/// only when a second is asked for.
struct Picker {
    ply: usize,
    len: usize,
    handed: usize,
}

fn history_index(turn: Color, m: Move) -> usize {
    let from = m.from().map_or(0, |s| s as usize);
    (turn as usize) * 4096 + from * 64 + m.to() as usize
}

fn has_pieces(pos: &Chess) -> bool {
    let b = pos.board();
    (pos.us() & !(b.pawns() | b.kings())).any()
}

pub fn hash_of(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, fen::Fen, uci::UciMove};

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    fn run(fen: &str, limits: Limits) -> (Outcome, Vec<Report>) {
        let params = Params::default();
        let mut tt = Tt::new(1);
        let stop = Arc::new(AtomicBool::new(false));
        let mut s = Searcher::new(&params, &mut tt, stop, Vec::new());
        let mut reports = Vec::new();
        let out = s.search(&pos(fen), &limits, &mut |r| reports.push(r.clone()));
        (out, reports)
    }

    fn uci(m: Move) -> String {
        UciMove::from_move(m, CastlingMode::Standard).to_string()
    }

    fn depth(d: i32) -> Limits {
        Limits {
            depth: Some(d),
            ..Limits::default()
        }
    }

    #[test]
    fn mate_in_one() {
        let (out, reps) = run("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", depth(3));
        assert_eq!(uci(out.best.unwrap()), "a1a8");
        assert_eq!(format_score(reps.last().unwrap().score), "mate 1");
    }

    #[test]
    fn takes_a_hanging_queen() {
        let (out, _) = run("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1", depth(2));
        assert_eq!(uci(out.best.unwrap()), "d2d5");
    }

    #[test]
    fn node_limit_is_exact_upper_bound() {
        let limits = Limits {
            nodes: Some(5_000),
            ..Limits::default()
        };
        let (out, _) = run(
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            limits,
        );
        assert_eq!(out.nodes, 5_000);
        assert!(out.best.is_some());
    }

    #[test]
    fn repetition_is_seen_through_game_history() {
        let mut p = Chess::default();
        let mut history = Vec::new();
        for m in ["g1f3", "g8f6", "f3g1", "f6g8"] {
            history.push(hash_of(&p));
            let mv = m.parse::<UciMove>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(mv);
        }
        let params = Params::default();
        let mut tt = Tt::new(1);
        let stop = Arc::new(AtomicBool::new(false));
        let s = Searcher::new(&params, &mut tt, stop, history.clone());
        assert!(s.is_repetition(&p, hash_of(&p)));
        assert!(!s.is_repetition(&p, hash_of(&p) ^ 1));
        // A pawn move since (halfmove clock 0) makes older positions unreachable.
        let fen = Fen::from_position(&p, EnPassantMode::Legal).to_string();
        let reset = pos(&fen.replace(" 4 3", " 0 3"));
        assert!(!s.is_repetition(&reset, hash_of(&reset)));
    }

    #[test]
    fn stalemate_has_no_best_move() {
        let (out, _) = run("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", depth(3));
        assert!(out.best.is_none());
    }

    #[test]
    fn time_budget_uses_side_to_move_clock() {
        let l = Limits {
            wtime: Some(10_000),
            btime: Some(1_000),
            ..Limits::default()
        };
        let (_, hw) = l.time_budget(Color::White).unwrap();
        let (_, hb) = l.time_budget(Color::Black).unwrap();
        assert!(hw > hb);
        assert!(hw < 10_000 / 2);
        let m = Limits {
            movetime: Some(100),
            ..Limits::default()
        };
        assert_eq!(m.time_budget(Color::White), Some((45, 90)));
        assert_eq!(Limits::default().time_budget(Color::White), None);
    }

    #[test]
    fn the_ordering_keys_hold_a_full_move_list() {
        assert!(MoveList::new().capacity() <= MAX_MOVES);
        // The most moves a position has: 270, with material no game reaches (shakmaty's own
        // example of a full list; the engine accepts such a FEN). Searched like any other.
        let full: Chess = "kBQQQQQQ/BR5Q/Q6Q/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .or_else(shakmaty::PositionError::ignore_too_much_material)
            .unwrap();
        assert_eq!(full.legal_moves().len(), MAX_MOVES);
        let params = Params::default();
        let mut tt = Tt::new(1);
        let stop = Arc::new(AtomicBool::new(false));
        let mut s = Searcher::new(&params, &mut tt, stop, Vec::new());
        let out = s.search(&full, &depth(2), &mut |_| {});
        assert!(out.best.is_some());
        assert!(out.nodes > MAX_MOVES as u64);
    }

    /// The picker hands out every move once, in the order of a stable sort by score: best
    /// first, equals in the order they were generated (what the search's determinism rests
    /// on), with a table move, killers and history in play.
    #[test]
    fn moves_are_picked_as_a_stable_sort_by_score_would_order_them() {
        let params = Params::default();
        let mut tt = Tt::new(1);
        let stop = Arc::new(AtomicBool::new(false));
        let mut s = Searcher::new(&params, &mut tt, stop, Vec::new());
        let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
        for (fen, tt_move) in [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                0,
            ),
            (kiwipete, 0),
            (
                kiwipete,
                pack(
                    UciMove::from_ascii(b"a2a4")
                        .unwrap()
                        .to_move(&pos(kiwipete))
                        .unwrap(),
                ),
            ),
        ] {
            let p = pos(fen);
            let legal = p.legal_moves();
            let quiet: Vec<Move> = legal.iter().copied().filter(|m| !m.is_capture()).collect();
            s.killers[0] = [pack(quiet[2]), pack(quiet[5])];
            for (k, &m) in quiet.iter().enumerate().skip(6) {
                s.history[history_index(p.turn(), m)] = (k % 3) as i32;
            }
            let mut expected: Vec<(i32, Move)> = legal
                .iter()
                .map(|&m| (s.move_score(&p, m, tt_move, 0), m))
                .collect();
            expected.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
            let mut picker = s.order(&p, &legal, tt_move, 0);
            let mut picked = Vec::new();
            while let Some(i) = s.pick(&mut picker) {
                picked.push(legal[i]);
            }
            let expected: Vec<Move> = expected.into_iter().map(|(_, m)| m).collect();
            assert_eq!(picked, expected, "{fen}");
        }
    }

    #[test]
    fn mate_scores_format() {
        assert_eq!(format_score(MATE - 1), "mate 1");
        assert_eq!(format_score(MATE - 3), "mate 2");
        assert_eq!(format_score(-MATE + 2), "mate -1");
        assert_eq!(format_score(35), "cp 35");
    }
}
