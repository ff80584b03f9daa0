//! Static evaluation. Every weight is a UCI spin option (see [`OPTIONS`]), so
//! the tuner has something real to move.
//!
//! The score is tapered between a middlegame and an endgame value by the
//! non-pawn material left on the board, and returned from the side to move's
//! point of view, in centipawns.

use std::collections::HashMap;
use std::sync::OnceLock;

use shakmaty::{Bitboard, Chess, Color, File, Position, Role, Square, attacks};

/// One tunable evaluation weight, exposed as `option name <name> type spin`.
pub struct OptionSpec {
    pub name: &'static str,
    pub default: i32,
    pub min: i32,
    pub max: i32,
    pub meaning: &'static str,
}

macro_rules! options {
    ($($idx:ident = $name:literal, $default:literal, $min:literal, $max:literal, $meaning:literal;)*) => {
        /// Indices into [`Params::values`].
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy, Debug)]
        #[repr(usize)]
        pub enum W { $($idx),* }

        pub const OPTIONS: &[OptionSpec] = &[
            $(OptionSpec { name: $name, default: $default, min: $min, max: $max, meaning: $meaning }),*
        ];
    };
}

options! {
    Pawn = "PawnValue", 100, 10, 400, "value of a pawn (cp)";
    Knight = "KnightValue", 320, 0, 1200, "value of a knight (cp)";
    Bishop = "BishopValue", 330, 0, 1200, "value of a bishop (cp)";
    Rook = "RookValue", 500, 0, 2000, "value of a rook (cp)";
    Queen = "QueenValue", 950, 0, 3000, "value of a queen (cp)";
    BishopPair = "BishopPair", 30, 0, 150, "bonus for owning two bishops (cp)";
    Mobility = "Mobility", 40, 0, 200, "tenths of a cp per safe square a knight or bishop attacks; rooks count half, queens a quarter";
    PassedPawn = "PassedPawn", 60, 0, 250, "passed pawn bonus on the 6th rank in the endgame (cp); scaled by rank, halved in the middlegame";
    DoubledPawn = "DoubledPawn", 12, 0, 100, "penalty per extra pawn on a file (cp)";
    IsolatedPawn = "IsolatedPawn", 12, 0, 100, "penalty per pawn without friendly pawns on adjacent files (cp)";
    RookOpenFile = "RookOpenFile", 20, 0, 100, "bonus for a rook on a file without pawns (cp); half on a file without own pawns";
    KingShelter = "KingShelter", 12, 0, 60, "middlegame bonus per own pawn on the two ranks in front of the king, king file and adjacent files, at most three count (cp)";
    Tempo = "Tempo", 10, 0, 50, "bonus for the side to move (cp)";
    PieceSquare = "PieceSquare", 100, 0, 300, "scale of the built-in piece-square tables (percent)";
}

/// One option as this process of the engine declares it: a core weight of [`OPTIONS`], an entry
/// of a piece-square table (with `--pst`) or a stand-in that changes nothing (with
/// `--extra-options N`, for measuring what many options cost a tuner).
#[derive(Clone, Debug)]
pub struct Declared {
    pub name: String,
    pub default: i32,
    pub min: i32,
    pub max: i32,
    /// Where its value lives in [`Params::values`].
    pub slot: usize,
}

/// Every option this process declares, in the order `uci` lists them, and a name index so
/// that setting 50,000 options costs 50,000 lookups, not 50,000 scans.
pub struct Catalog {
    pub declared: Vec<Declared>,
    /// Lower-cased name → index into `declared`.
    index: HashMap<String, usize>,
    /// The first slot of the piece-square tables when they are options, 12 tables of 64 squares
    /// ([`PST_TABLES`] order); `None` when the built-in tables are used.
    pub pst_at: Option<usize>,
    /// Length of [`Params::values`].
    pub slots: usize,
}

/// The piece-square tables as options: (name, role, middlegame or endgame), in slot order.
pub const PST_TABLES: [(&str, Role, bool); 12] = [
    ("PawnMg", Role::Pawn, true),
    ("PawnEg", Role::Pawn, false),
    ("KnightMg", Role::Knight, true),
    ("KnightEg", Role::Knight, false),
    ("BishopMg", Role::Bishop, true),
    ("BishopEg", Role::Bishop, false),
    ("RookMg", Role::Rook, true),
    ("RookEg", Role::Rook, false),
    ("QueenMg", Role::Queen, true),
    ("QueenEg", Role::Queen, false),
    ("KingMg", Role::King, true),
    ("KingEg", Role::King, false),
];
/// The range of a piece-square entry as an option (cp).
const PST_RANGE: (i32, i32) = (-300, 300);

impl Catalog {
    /// The core weights, then with `pst` one option per square a piece can stand on of each
    /// table (`PstKnightMgE4`; pawns skip the first and last rank: 736 in all), then `extra`
    /// options `Extra1`… that change nothing.
    pub fn new(pst: bool, extra: usize) -> Catalog {
        let mut declared: Vec<Declared> = OPTIONS
            .iter()
            .enumerate()
            .map(|(slot, o)| Declared {
                name: o.name.to_string(),
                default: o.default,
                min: o.min,
                max: o.max,
                slot,
            })
            .collect();
        let mut slots = OPTIONS.len();
        let pst_at = pst.then_some(slots);
        if pst {
            for (t, (table, role, mg)) in PST_TABLES.iter().enumerate() {
                for idx in 0..64 {
                    let rank = 8 - idx / 8; // tables are written rank 8 first
                    if *role == Role::Pawn && (rank == 1 || rank == 8) {
                        continue;
                    }
                    let file = (b'A' + (idx % 8) as u8) as char;
                    declared.push(Declared {
                        name: format!("Pst{table}{file}{rank}"),
                        default: builtin_square(*role, *mg, idx),
                        min: PST_RANGE.0,
                        max: PST_RANGE.1,
                        slot: slots + t * 64 + idx,
                    });
                }
            }
            slots += PST_TABLES.len() * 64;
        }
        for i in 1..=extra {
            declared.push(Declared {
                name: format!("Extra{i}"),
                default: 0,
                min: -1000,
                max: 1000,
                slot: slots,
            });
            slots += 1;
        }
        let index = declared
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.to_ascii_lowercase(), i))
            .collect();
        Catalog {
            declared,
            index,
            pst_at,
            slots,
        }
    }

    /// The option called `name` (case-insensitive, as UCI GUIs vary).
    pub fn find(&self, name: &str) -> Option<&Declared> {
        self.index
            .get(&name.to_ascii_lowercase())
            .map(|&i| &self.declared[i])
    }
}

static CATALOG: OnceLock<Catalog> = OnceLock::new();

/// Choose what this process declares, once, before the first command (see [`Catalog::new`]).
pub fn set_catalog(pst: bool, extra: usize) {
    let _ = CATALOG.set(Catalog::new(pst, extra));
}

/// What this process declares: the core weights only unless [`set_catalog`] said otherwise.
pub fn catalog() -> &'static Catalog {
    CATALOG.get_or_init(|| Catalog::new(false, 0))
}

/// The current value of every option of the [`catalog`], each at its slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub values: Vec<i32>,
    /// The catalog's [`Catalog::pst_at`].
    pub pst_at: Option<usize>,
}

impl Default for Params {
    fn default() -> Self {
        let c = catalog();
        let mut values = vec![0; c.slots];
        for d in &c.declared {
            values[d.slot] = d.default;
        }
        Params {
            values,
            pst_at: c.pst_at,
        }
    }
}

impl Params {
    #[inline]
    pub fn get(&self, w: W) -> i32 {
        self.values[w as usize]
    }

    /// Slot of the option called `name` (case-insensitive, as UCI GUIs vary).
    #[cfg(test)]
    pub fn index_of(name: &str) -> Option<usize> {
        catalog().find(name).map(|d| d.slot)
    }

    /// A piece's middlegame and endgame square values (`idx` from its own side, rank 8 first).
    #[inline]
    fn square_values(&self, role: Role, idx: usize) -> (i32, i32) {
        match self.pst_at {
            None => (
                builtin_square(role, true, idx),
                builtin_square(role, false, idx),
            ),
            Some(at) => {
                let t = at + (role as usize - 1) * 128 + idx;
                (self.values[t], self.values[t + 64])
            }
        }
    }

    pub fn piece_value(&self, role: Role) -> i32 {
        match role {
            Role::Pawn => self.get(W::Pawn),
            Role::Knight => self.get(W::Knight),
            Role::Bishop => self.get(W::Bishop),
            Role::Rook => self.get(W::Rook),
            Role::Queen => self.get(W::Queen),
            Role::King => 0,
        }
    }
}

// Piece-square tables from White's point of view, written as seen on a
// diagram (rank 8 first). Index a White square with `sq ^ 56`.
#[rustfmt::skip]
const PAWN_MG: [i32; 64] = [
      0,   0,   0,   0,   0,   0,   0,   0,
     40,  40,  40,  45,  45,  40,  40,  40,
     12,  14,  18,  26,  26,  18,  14,  12,
      4,   6,  10,  20,  20,  10,   6,   4,
      0,   0,   6,  18,  18,   4,   0,   0,
      4,   2,   2,   6,   6,  -4,   2,   4,
      4,   6,   6, -12, -12,   8,   8,   4,
      0,   0,   0,   0,   0,   0,   0,   0,
];
#[rustfmt::skip]
const PAWN_EG: [i32; 64] = [
      0,   0,   0,   0,   0,   0,   0,   0,
     70,  70,  65,  60,  60,  65,  70,  70,
     40,  40,  35,  30,  30,  35,  40,  40,
     20,  18,  15,  12,  12,  15,  18,  20,
      8,   6,   4,   2,   2,   4,   6,   8,
      0,   0,   0,   0,   0,   0,   0,   0,
     -4,  -4,  -4,  -4,  -4,  -4,  -4,  -4,
      0,   0,   0,   0,   0,   0,   0,   0,
];
#[rustfmt::skip]
const KNIGHT: [i32; 64] = [
    -50, -35, -25, -20, -20, -25, -35, -50,
    -30, -15,   0,   5,   5,   0, -15, -30,
    -20,   5,  12,  16,  16,  12,   5, -20,
    -20,   5,  16,  20,  20,  16,   5, -20,
    -20,   0,  14,  18,  18,  14,   0, -20,
    -25,   0,  10,  12,  12,  10,   0, -25,
    -35, -15,   0,   4,   4,   0, -15, -35,
    -50, -30, -25, -20, -20, -25, -30, -50,
];
#[rustfmt::skip]
const BISHOP: [i32; 64] = [
    -20, -10, -10, -10, -10, -10, -10, -20,
    -10,   0,   0,   0,   0,   0,   0, -10,
    -10,   0,   5,  10,  10,   5,   0, -10,
    -10,   5,   5,  10,  10,   5,   5, -10,
    -10,   0,  10,  10,  10,  10,   0, -10,
    -10,  10,  10,   8,   8,  10,  10, -10,
    -10,  10,   0,   4,   4,   0,  10, -10,
    -20, -10, -14, -10, -10, -14, -10, -20,
];
#[rustfmt::skip]
const ROOK: [i32; 64] = [
      5,   5,   5,   8,   8,   5,   5,   5,
     15,  20,  20,  20,  20,  20,  20,  15,
     -5,   0,   0,   0,   0,   0,   0,  -5,
     -5,   0,   0,   0,   0,   0,   0,  -5,
     -5,   0,   0,   0,   0,   0,   0,  -5,
     -5,   0,   0,   0,   0,   0,   0,  -5,
     -8,  -4,   0,   0,   0,   0,  -4,  -8,
     -4,  -2,   2,   6,   6,   4,  -2,  -4,
];
#[rustfmt::skip]
const QUEEN: [i32; 64] = [
    -20, -10, -10,  -5,  -5, -10, -10, -20,
    -10,   0,   0,   0,   0,   0,   0, -10,
    -10,   0,   5,   5,   5,   5,   0, -10,
     -5,   0,   5,   5,   5,   5,   0,  -5,
     -5,   0,   5,   5,   5,   5,   0,  -5,
    -10,   2,   5,   5,   5,   5,   0, -10,
    -10,   0,   2,   0,   0,   0,   0, -10,
    -20, -10, -10,  -2,  -5, -10, -10, -20,
];
#[rustfmt::skip]
const KING_MG: [i32; 64] = [
    -40, -40, -40, -50, -50, -40, -40, -40,
    -40, -40, -40, -50, -50, -40, -40, -40,
    -40, -40, -40, -50, -50, -40, -40, -40,
    -40, -40, -40, -50, -50, -40, -40, -40,
    -30, -40, -40, -50, -50, -40, -40, -30,
    -20, -30, -30, -40, -40, -30, -30, -20,
      0,   0, -10, -20, -20, -10,   0,   0,
     15,  30,  10, -10,   0,  10,  30,  15,
];
#[rustfmt::skip]
const KING_EG: [i32; 64] = [
    -50, -35, -25, -20, -20, -25, -35, -50,
    -30, -15,   0,   5,   5,   0, -15, -30,
    -25,   0,  15,  20,  20,  15,   0, -25,
    -25,   5,  20,  30,  30,  20,   5, -25,
    -25,   5,  20,  30,  30,  20,   5, -25,
    -25,   0,  15,  20,  20,  15,   0, -25,
    -30, -15,   0,   5,   5,   0, -15, -30,
    -50, -35, -25, -20, -20, -25, -35, -50,
];

/// The built-in table entry of a piece on `idx` (its own side's view, rank 8 first).
#[inline]
fn builtin_square(role: Role, mg: bool, idx: usize) -> i32 {
    match role {
        Role::Pawn if mg => PAWN_MG[idx],
        Role::Pawn => PAWN_EG[idx],
        Role::Knight => KNIGHT[idx],
        Role::Bishop => BISHOP[idx],
        Role::Rook => ROOK[idx],
        Role::Queen => QUEEN[idx],
        Role::King if mg => KING_MG[idx],
        Role::King => KING_EG[idx],
    }
}

/// Passed pawn bonus by relative rank, in sixteenths of `PassedPawn`.
const PASSED_SCALE: [i32; 8] = [0, 2, 3, 5, 9, 16, 26, 0];

/// Game phase weights: a full board has phase 24 (pure middlegame), a board
/// with kings and pawns only has phase 0 (pure endgame).
pub const PHASE_MAX: i32 = 24;

fn phase_of(role: Role) -> i32 {
    match role {
        Role::Knight | Role::Bishop => 1,
        Role::Rook => 2,
        Role::Queen => 4,
        Role::Pawn | Role::King => 0,
    }
}

fn adjacent_files(file: File) -> Bitboard {
    let mut bb = Bitboard::EMPTY;
    if let Some(f) = file.offset(-1) {
        bb |= Bitboard::from_file(f);
    }
    if let Some(f) = file.offset(1) {
        bb |= Bitboard::from_file(f);
    }
    bb
}

/// Squares in front of `sq` (from `color`'s point of view) on its file and
/// the adjacent files: where an enemy pawn would stop or capture a passer.
fn passed_span(color: Color, sq: Square) -> Bitboard {
    let files = Bitboard::from_file(sq.file()) | adjacent_files(sq.file());
    let rank = sq.rank().to_u32();
    let ahead = match color {
        Color::White => {
            if rank >= 7 {
                Bitboard::EMPTY
            } else {
                Bitboard(!0u64 << (8 * (rank + 1)))
            }
        }
        Color::Black => Bitboard((1u64 << (8 * rank)) - 1),
    };
    files & ahead
}

/// The files that hold a square of `bb`, as bits 0 (file a) to 7 (file h).
fn files_of(bb: Bitboard) -> u32 {
    let mut x = bb.0;
    x |= x >> 32;
    x |= x >> 16;
    x |= x >> 8;
    (x & 0xff) as u32
}

fn pawn_attacks_bb(color: Color, pawns: Bitboard) -> Bitboard {
    let not_a = !Bitboard::from_file(File::A);
    let not_h = !Bitboard::from_file(File::H);
    match color {
        Color::White => (pawns & not_a).shift(7) | (pawns & not_h).shift(9),
        Color::Black => (pawns & not_a).shift(-9) | (pawns & not_h).shift(-7),
    }
}

/// Internal evaluation unit: 1/800 of a centipawn. Every term is an integer multiple of it
/// (percent scaling of the tables is 1/100, mobility 1/40 per quarter square, passed pawns
/// 1/16 and halved in the middlegame, open files halved), so the middlegame and endgame
/// scores are exactly linear in the weights; the taper divides by [`PHASE_MAX`] once, and
/// [`evaluate`] rounds once, at the end. That keeps the evaluation an exact linear function of
/// the options, which the coefficient export (`sparring coefficients`) relies on.
pub const FINE: i64 = 800;

/// Units of the tapered score: 1/[`TAPERED`] of a centipawn.
pub const TAPERED: i64 = FINE * PHASE_MAX as i64;

/// Middlegame and endgame score of one side, from its own point of view, in 1/[`FINE`] cp.
fn side_score(pos: &Chess, p: &Params, color: Color) -> (i64, i64) {
    let board = pos.board();
    let occupied = board.occupied();
    let us = board.by_color(color);
    let them = board.by_color(!color);
    let our_pawns = board.pawns() & us;
    let their_pawns = board.pawns() & them;
    let enemy_pawn_attacks = pawn_attacks_bb(!color, their_pawns);
    let safe = !us & !enemy_pawn_attacks;
    let w = |w: W| i64::from(p.get(w));

    let mut material = 0;
    let (mut pst_mg, mut pst_eg) = (0i64, 0i64);
    let mut mobility = 0i64; // in quarter squares
    let mut open_files = 0i64; // in half files
    let (mut mg, mut eg) = (0i64, 0i64);

    // Role by role rather than square by square: no lookup of each square's piece, and each
    // role's own terms without a test of the role per piece (the sums are the same in any
    // order). It is the hottest code of the engine's search.
    let index = |sq: Square| match color {
        Color::White => sq.to_usize() ^ 56,
        Color::Black => sq.to_usize(),
    };
    for role in Role::ALL {
        let value = i64::from(p.piece_value(role));
        for sq in us & board.by_role(role) {
            material += value;
            let (m, e) = p.square_values(role, index(sq));
            pst_mg += i64::from(m);
            pst_eg += i64::from(e);
        }
    }
    for sq in us & board.knights() {
        mobility += 4 * i64::from((attacks::knight_attacks(sq) & safe).count() as u32);
    }
    for sq in us & board.bishops() {
        mobility += 4 * i64::from((attacks::bishop_attacks(sq, occupied) & safe).count() as u32);
    }
    for sq in us & board.rooks() {
        mobility += 2 * i64::from((attacks::rook_attacks(sq, occupied) & safe).count() as u32);
        let file = Bitboard::from_file(sq.file());
        if (file & board.pawns()).is_empty() {
            open_files += 2;
        } else if (file & our_pawns).is_empty() {
            open_files += 1;
        }
    }
    for sq in us & board.queens() {
        mobility += i64::from((attacks::queen_attacks(sq, occupied) & safe).count() as u32);
    }

    // Table entries are percent-scaled: entry · scale / 100 cp = entry · scale · 8 fine units.
    let pst_scale = w(W::PieceSquare) * (FINE / 100);
    mg += material * FINE + pst_mg * pst_scale;
    eg += material * FINE + pst_eg * pst_scale;

    // Mobility: tenths of a cp per square, counted in quarter squares: · Mobility / 40 cp.
    let mob = mobility * w(W::Mobility) * (FINE / 40);
    mg += mob;
    eg += mob;

    let open = open_files * w(W::RookOpenFile) * (FINE / 2);
    mg += open;
    eg += open;

    if (board.bishops() & us).more_than_one() {
        mg += w(W::BishopPair) * FINE;
        eg += w(W::BishopPair) * FINE;
    }

    // Pawn structure. `pawn_files`: bit f is set when a pawn of ours stands on file f.
    let pawn_files = files_of(our_pawns);
    let beside = (pawn_files << 1) | (pawn_files >> 1);
    let mut isolated = 0i64;
    let mut passed_sixteenths = 0i64;
    for sq in our_pawns {
        if beside & (1 << sq.file().to_u32()) == 0 {
            isolated += 1;
        }
        if (passed_span(color, sq) & their_pawns).is_empty() {
            let rel_rank = match color {
                Color::White => sq.rank().to_usize(),
                Color::Black => 7 - sq.rank().to_usize(),
            };
            passed_sixteenths += i64::from(PASSED_SCALE[rel_rank]);
        }
    }
    mg -= isolated * w(W::IsolatedPawn) * FINE;
    eg -= isolated * w(W::IsolatedPawn) * FINE;
    // PassedPawn · scale / 16 in the endgame, half of it in the middlegame.
    let passed = passed_sixteenths * w(W::PassedPawn);
    mg += passed * (FINE / 32);
    eg += passed * (FINE / 16);

    // Doubled pawns: every pawn beyond the first on its file, which is all pawns less one per
    // file that has any.
    let doubled = i64::from(our_pawns.count() as u32) - i64::from(pawn_files.count_ones());
    mg -= doubled * w(W::DoubledPawn) * FINE;
    eg -= doubled * w(W::DoubledPawn) * FINE;

    // King shelter: own pawns on the two ranks in front of the king.
    if let Some(king) = board.king_of(color) {
        let files = Bitboard::from_file(king.file()) | adjacent_files(king.file());
        let rank = king.rank().to_u32() as i32;
        let mut ranks = Bitboard::EMPTY;
        for d in 1..=2 {
            let r = match color {
                Color::White => rank + d,
                Color::Black => rank - d,
            };
            if (0..8).contains(&r) {
                ranks |= Bitboard(0xff << (8 * r));
            }
        }
        let shelter = i64::from((files & ranks & our_pawns).count().min(3) as u32);
        mg += shelter * w(W::KingShelter) * FINE;
    }

    (mg, eg)
}

/// Game phase between 0 (endgame) and [`PHASE_MAX`] (opening).
pub fn phase(pos: &Chess) -> i32 {
    let board = pos.board();
    let mut ph = 0;
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        ph += phase_of(role) * board.by_role(role).count() as i32;
    }
    ph.min(PHASE_MAX)
}

/// Largest static evaluation: far below the mate scores of the search, so
/// extreme option values can never look like a mate.
pub const EVAL_LIMIT: i32 = 20_000;

/// White's middlegame and endgame scores in 1/[`FINE`] cp, the side to move's tempo bonus
/// included in both (from White's point of view): exactly linear in the options.
pub fn white_parts(pos: &Chess, p: &Params) -> (i64, i64) {
    let (wmg, weg) = side_score(pos, p, Color::White);
    let (bmg, beg) = side_score(pos, p, Color::Black);
    let tempo = i64::from(p.get(W::Tempo)) * FINE;
    let tempo = match pos.turn() {
        Color::White => tempo,
        Color::Black => -tempo,
    };
    (wmg - bmg + tempo, weg - beg + tempo)
}

/// The unrounded tapered score from White's point of view, in 1/[`TAPERED`] cp.
pub fn white_tapered(pos: &Chess, p: &Params) -> i64 {
    let (mg, eg) = white_parts(pos, p);
    let ph = i64::from(phase(pos));
    mg * ph + eg * (i64::from(PHASE_MAX) - ph)
}

/// Rounds a tapered score to centipawns, halves up (so mirrored positions agree).
pub fn round_tapered(fine: i64) -> i64 {
    (fine + TAPERED / 2).div_euclid(TAPERED)
}

/// Static evaluation in centipawns from the side to move's point of view,
/// within ±[`EVAL_LIMIT`].
pub fn evaluate(pos: &Chess, p: &Params) -> i32 {
    let white = white_tapered(pos, p);
    let stm = match pos.turn() {
        Color::White => white,
        Color::Black => -white,
    };
    round_tapered(stm).clamp(i64::from(-EVAL_LIMIT), i64::from(EVAL_LIMIT)) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, fen::Fen};

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn start_position_is_tempo_only() {
        let p = Params::default();
        assert_eq!(evaluate(&Chess::default(), &p), p.get(W::Tempo));
    }

    #[test]
    fn mirrored_positions_evaluate_the_same() {
        use shakmaty::EnPassantMode;
        let p = Params::default();
        for fen in [
            "r1bqk2r/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQkq - 1 8",
            "8/5pk1/6p1/1P6/8/2R5/5PPP/r5K1 w - - 0 40",
        ] {
            let a = pos(fen);
            let b: Chess = a
                .to_setup(EnPassantMode::Legal)
                .into_mirrored()
                .position(CastlingMode::Standard)
                .unwrap();
            assert_eq!(evaluate(&a, &p), evaluate(&b, &p), "{fen}");
        }
    }

    #[test]
    fn extra_queen_is_worth_about_queen_value() {
        let with = pos("4k3/8/8/8/8/8/8/3QK3 w - - 0 1");
        let without = pos("4k3/8/8/8/8/8/8/4K3 w - - 0 1");
        let mut p = Params::default();
        let diff = evaluate(&with, &p) - evaluate(&without, &p);
        assert!((800..1200).contains(&diff), "diff {diff}");
        p.values[W::Queen as usize] = 0;
        let diff0 = evaluate(&with, &p) - evaluate(&without, &p);
        assert!(diff0.abs() < 200, "diff {diff0}");
    }

    #[test]
    fn extreme_options_stay_below_mate_scores() {
        let mut p = Params::default();
        for (v, o) in p.values.iter_mut().zip(OPTIONS) {
            *v = o.max;
        }
        let queens = pos("QQQQKQQQ/QQRRBBNN/8/8/8/8/8/7k b - - 0 1");
        assert_eq!(evaluate(&queens, &p), -EVAL_LIMIT);
    }

    #[test]
    fn passed_pawn_bonus_grows_with_rank() {
        let p = Params::default();
        let r4 = pos("4k3/8/8/8/4P3/8/8/4K3 w - - 0 1");
        let r6 = pos("4k3/8/4P3/8/8/8/8/4K3 w - - 0 1");
        assert!(evaluate(&r6, &p) > evaluate(&r4, &p));
    }

    #[test]
    fn option_table_is_consistent() {
        for o in OPTIONS {
            assert!(o.min <= o.default && o.default <= o.max, "{}", o.name);
            assert!(!o.name.contains(','), "{}", o.name);
        }
        assert_eq!(Params::index_of("knightvalue"), Some(W::Knight as usize));
        assert_eq!(Params::index_of("Nope"), None);
    }
}
