//! Labelled positions: chess positions with the result of the game they came from, read from the
//! EPD/FEN forms tuning data sets use, and held compactly (users load millions of them).
//!
//! Accepted lines (results are always from White's side):
//! - `<EPD> c9 "1-0";` — the `quiet-labeled.epd` form (other EPD operations are ignored);
//! - `<FEN or EPD> [1.0]`, `[0.5]`, `[0.0]`, `[1-0]`, `[1/2-1/2]`, `[0-1]`, optionally with a `;`
//!   between the position and the bracket (`<FEN>; [1/2-1/2]`).
//!
//! Empty lines and lines starting with `#` are skipped; a UTF-8 byte order mark is stripped. A line
//! with no result, an unreadable result, or a missing or illegal position is an input error naming
//! the file and the line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::packed::PackedSetup;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

use crate::game::epd::{epd_line_to_fen, split_operations};

/// A game's result from White's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Outcome {
    BlackWins = 0,
    Draw = 1,
    WhiteWins = 2,
}

impl Outcome {
    /// White's score: 0, ½ or 1 (the texel target R).
    pub fn white_score(self) -> f64 {
        f64::from(self as u8) / 2.0
    }

    /// −1, 0 or +1 (the tanh target R).
    pub fn white_sign(self) -> f64 {
        f64::from(self as u8) - 1.0
    }

    /// `1-0`, `1/2-1/2` or `0-1`.
    pub fn as_pgn(self) -> &'static str {
        match self {
            Outcome::WhiteWins => "1-0",
            Outcome::Draw => "1/2-1/2",
            Outcome::BlackWins => "0-1",
        }
    }

    fn from_u8(b: u8) -> Outcome {
        match b {
            0 => Outcome::BlackWins,
            1 => Outcome::Draw,
            _ => Outcome::WhiteWins,
        }
    }

    /// Read a result label: `1-0`, `0-1`, `1/2-1/2` (also `1/2`), or White's score as a number
    /// (`1`, `1.0`, `0.5`, `0`), optionally in double quotes.
    pub fn parse(label: &str) -> Option<Outcome> {
        let s = label.trim().trim_matches('"').trim();
        match s {
            "1-0" => return Some(Outcome::WhiteWins),
            "0-1" => return Some(Outcome::BlackWins),
            "1/2-1/2" | "1/2" | "½-½" => return Some(Outcome::Draw),
            _ => {}
        }
        let v: f64 = s.parse().ok()?;
        if v == 1.0 {
            Some(Outcome::WhiteWins)
        } else if v == 0.5 {
            Some(Outcome::Draw)
        } else if v == 0.0 {
            Some(Outcome::BlackWins)
        } else {
            None
        }
    }
}

/// Why a labelled-positions file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PositionsError {
    #[error("{path}: {cause}")]
    Io { path: PathBuf, cause: io::Error },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: no labelled positions in the file")]
    Empty { path: PathBuf },
    #[error("too many labelled positions for one set (the packed store is limited to 4 GiB)")]
    TooLarge,
}

/// A labelled-positions file that cannot be read or used is the user's to fix.
impl crate::error::UserFacing for PositionsError {
    fn is_user_error(&self) -> bool {
        true
    }
}

/// Many labelled positions in a compact store: each position is shakmaty's packed setup
/// (occupancy bitboard + piece nibbles + counters, at most 24 bytes for legal positions, about 20
/// on average) in one byte arena, plus a 4-byte end offset and a 1-byte outcome. About 25 bytes per
/// position: a million positions take about 25 MB.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelledPositions {
    bytes: Vec<u8>,
    ends: Vec<u32>,
    outcomes: Vec<u8>,
}

impl LabelledPositions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Read a labelled-positions file (see the module docs for the forms). An empty file is an
    /// error: a tune on nothing is a mistake in the config.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PositionsError> {
        let path = path.as_ref();
        let io_err = |cause| PositionsError::Io {
            path: path.to_path_buf(),
            cause,
        };
        let file = File::open(path).map_err(io_err)?;
        let set = Self::read(path, BufReader::with_capacity(1 << 16, file))?;
        if set.is_empty() {
            return Err(PositionsError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(set)
    }

    /// Read labelled lines from `reader`; `path` names the source in errors. Empty input gives an
    /// empty set.
    pub fn read(path: &Path, mut reader: impl BufRead) -> Result<Self, PositionsError> {
        let invalid = |line: usize, message: String| PositionsError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut set = LabelledPositions::new();
        let mut raw = Vec::with_capacity(256);
        let mut line_no = 0usize;
        loop {
            raw.clear();
            let n = reader
                .read_until(b'\n', &mut raw)
                .map_err(|cause| PositionsError::Io {
                    path: path.to_path_buf(),
                    cause,
                })?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let mut bytes = raw.as_slice();
            if line_no == 1 {
                bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            }
            let text = std::str::from_utf8(bytes)
                .map_err(|_| invalid(line_no, "not UTF-8 text".into()))?;
            let Some((pos, outcome)) =
                parse_labelled_line(text).map_err(|m| invalid(line_no, m))?
            else {
                continue;
            };
            set.push(&pos, outcome)?;
        }
        Ok(set)
    }

    /// Add one position.
    pub fn push(&mut self, pos: &Chess, outcome: Outcome) -> Result<(), PositionsError> {
        let packed = pack(pos);
        self.push_packed(packed.as_bytes(), outcome)
    }

    fn push_packed(&mut self, packed: &[u8], outcome: Outcome) -> Result<(), PositionsError> {
        self.bytes.extend_from_slice(packed);
        let end = u32::try_from(self.bytes.len()).map_err(|_| PositionsError::TooLarge)?;
        self.ends.push(end);
        self.outcomes.push(outcome as u8);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The packed bytes of position `i` (equal bytes: equal position and counters).
    pub fn packed(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    pub fn outcome(&self, i: usize) -> Outcome {
        Outcome::from_u8(self.outcomes[i])
    }

    /// Every outcome, in order.
    pub fn outcomes(&self) -> impl ExactSizeIterator<Item = Outcome> + '_ {
        self.outcomes.iter().map(|&b| Outcome::from_u8(b))
    }

    /// Position `i` as a shakmaty position (for feature extraction, move generation).
    pub fn position(&self, i: usize) -> Chess {
        let setup = PackedSetup::try_from_bytes(self.packed(i))
            .ok()
            .and_then(|p| p.unpack_standard().ok())
            .expect("packed from a legal position");
        setup
            .position(CastlingMode::Standard)
            .expect("packed from a legal position")
    }

    /// Whether White is to move in position `i` (the side the engine's score is from).
    pub fn white_to_move(&self, i: usize) -> bool {
        self.position(i).turn() == Color::White
    }

    /// Append position `i`'s FEN to `buf`; returns the side to move (the side an engine's score
    /// is from).
    pub fn write_fen(&self, i: usize, buf: &mut String) -> Color {
        // Straight from the packed setup: it was legal when packed, so no second validation.
        let setup = PackedSetup::try_from_bytes(self.packed(i))
            .ok()
            .and_then(|p| p.unpack_standard().ok())
            .expect("packed from a legal position");
        let turn = setup.turn;
        Fen::try_from_setup(setup)
            .unwrap_or_else(shakmaty::fen::LossyFenError::ignore)
            .append_to_string(buf);
        turn
    }

    /// Position `i`'s FEN.
    pub fn fen(&self, i: usize) -> String {
        let mut s = String::with_capacity(90);
        self.write_fen(i, &mut s);
        s
    }

    /// A new set of the positions at `indices`, in that order.
    pub fn select(&self, indices: impl IntoIterator<Item = usize>) -> LabelledPositions {
        let mut out = LabelledPositions::new();
        for i in indices {
            out.push_packed(self.packed(i), self.outcome(i))
                .expect("a subset fits where the whole did");
        }
        out
    }

    /// Split off a validation set: a seeded random `fraction` of the positions (at least one
    /// each side when there are two or more). Returns (training, validation), each in file order.
    pub fn split_validation(&self, fraction: f64, seed: u64) -> (Self, Self) {
        let n = self.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        let mut want = ((n as f64) * fraction.clamp(0.0, 1.0)).round() as usize;
        if n >= 2 && fraction > 0.0 {
            want = want.clamp(1, n - 1);
        }
        let mut valid: Vec<usize> = order[..want].to_vec();
        let mut train: Vec<usize> = order[want..].to_vec();
        valid.sort_unstable();
        train.sort_unstable();
        (self.select(train), self.select(valid))
    }

    /// Write the set as `quiet-labeled.epd` lines: `<EPD> c9 "1-0";`.
    pub fn write_epd(&self, mut out: impl Write) -> io::Result<()> {
        let mut line = String::with_capacity(128);
        for i in 0..self.len() {
            line.clear();
            let pos = self.position(i);
            shakmaty::fen::Epd::from_position(&pos, EnPassantMode::Legal)
                .append_to_string(&mut line);
            line.push_str(" c9 \"");
            line.push_str(self.outcome(i).as_pgn());
            line.push_str("\";\n");
            out.write_all(line.as_bytes())?;
        }
        out.flush()
    }

    /// Bytes held (for the docs' memory figure and the benchmark).
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + 4 * self.ends.capacity() + self.outcomes.capacity()
    }
}

/// Pack a legal position (counters kept: the half-move clock can matter to a search).
fn pack(pos: &Chess) -> PackedSetup {
    PackedSetup::pack_standard(&pos.to_setup(EnPassantMode::Legal))
        .expect("a legal standard position packs")
}

/// One line: `Ok(None)` for a blank or `#` line, else the position and its result.
fn parse_labelled_line(line: &str) -> Result<Option<(Chess, Outcome)>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let (position_text, label) = if let Some(open) = line.rfind('[') {
        let close = line[open..]
            .find(']')
            .map(|c| open + c)
            .ok_or_else(|| format!("unclosed `[` in {line:?}"))?;
        if !line[close + 1..].trim().trim_end_matches(';').is_empty() {
            return Err(format!("text after the result `]` in {line:?}"));
        }
        let before = line[..open].trim_end();
        let before = before.strip_suffix(';').unwrap_or(before).trim_end();
        (before, line[open + 1..close].to_string())
    } else {
        let label = c9_operand(line).ok_or_else(|| {
            format!(
                "no result: expected `c9 \"1-0\";` or `[1.0]`/`[1-0]` after the position in {line:?}"
            )
        })?;
        (line, label)
    };
    if position_text.is_empty() {
        return Err("no position before the result".into());
    }
    let outcome = Outcome::parse(&label).ok_or_else(|| {
        format!("unreadable result {label:?} (expected 1-0, 0-1, 1/2-1/2, 1.0, 0.5 or 0.0)")
    })?;
    let (fen, _) = epd_line_to_fen(position_text)?;
    let parsed: Fen = fen.parse().map_err(|e| format!("bad FEN {fen:?}: {e}"))?;
    let pos: Chess = parsed
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("illegal position {fen:?}: {e}"))?;
    Ok(Some((pos, outcome)))
}

/// The operand of the EPD `c9` operation, if the line has one.
fn c9_operand(line: &str) -> Option<String> {
    // Skip the four position fields; the operations follow.
    let mut rest = line;
    for _ in 0..4 {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace)?;
        rest = &rest[end..];
    }
    split_operations(rest).into_iter().find_map(|op| {
        let op = op.trim();
        let (code, operand) = op.split_once(char::is_whitespace)?;
        (code == "c9").then(|| operand.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    fn read(text: &str) -> Result<LabelledPositions, PositionsError> {
        LabelledPositions::read(Path::new("data.epd"), text.as_bytes())
    }

    #[test]
    fn every_label_form_reads_from_whites_side() {
        let text = "\u{feff}rnb1kbnr/pp1pppp1/7p/2q5/5P2/N1P1P3/P2P2PP/R1BQKBNR w KQkq - c9 \"1/2-1/2\";\n\
            # a comment\n\
            \n\
            rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [1.0]\n\
            rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 [0.5]\n\
            rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - [1-0]\n\
            rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1; [1/2-1/2]\n\
            rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [0-1]\n\
            rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - id \"x\"; c9 \"0-1\";\r\n";
        let set = read(text).unwrap();
        let got: Vec<Outcome> = set.outcomes().collect();
        use Outcome::*;
        assert_eq!(
            got,
            [Draw, WhiteWins, Draw, WhiteWins, Draw, BlackWins, BlackWins]
        );
        assert_eq!(
            set.fen(0),
            "rnb1kbnr/pp1pppp1/7p/2q5/5P2/N1P1P3/P2P2PP/R1BQKBNR w KQkq - 0 1"
        );
        assert_eq!(set.fen(1), START);
        assert!(!set.white_to_move(2));
        assert!(set.white_to_move(1));
        assert_eq!(Outcome::WhiteWins.white_score(), 1.0);
        assert_eq!(Outcome::Draw.white_score(), 0.5);
        assert_eq!(Outcome::BlackWins.white_sign(), -1.0);
    }

    #[test]
    fn counters_and_en_passant_survive_the_packing() {
        // A legal en passant square is kept; an impossible one is dropped, as engines ignore it.
        let text = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3 [1-0]\n\
            rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 7 12 [0-1]\n";
        let set = read(text).unwrap();
        assert_eq!(
            set.fen(0),
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"
        );
        assert_eq!(
            set.fen(1),
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 7 12"
        );
        assert!(set.heap_bytes() < 200);
    }

    fn error(text: &str) -> String {
        read(text).unwrap_err().to_string()
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let ok = format!("{START} [1-0]\n");
        let e = error(&format!("{ok}{START}\n"));
        assert!(e.starts_with("data.epd:2: no result"), "{e}");
        let e = error(&format!("{ok}{ok}{START} [0.7]\n"));
        assert!(
            e.starts_with("data.epd:3: unreadable result \"0.7\""),
            "{e}"
        );
        let e = error("[1-0]\n");
        assert!(e.starts_with("data.epd:1: no position"), "{e}");
        let e = error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - c9 \"1-0\";\n");
        assert!(e.starts_with("data.epd:1: "), "{e}");
        // The side not to move is in check: illegal.
        let e = error(&format!("{ok}4k3/8/8/8/8/8/8/4RK2 w - - 0 1 [1-0]\n"));
        assert!(e.starts_with("data.epd:2: illegal position"), "{e}");
        let e = error(&format!("{START} [1-0\n"));
        assert!(e.starts_with("data.epd:1: unclosed"), "{e}");
        let e = error(&format!("{START} [1-0] junk\n"));
        assert!(e.starts_with("data.epd:1: text after"), "{e}");
        let bad_utf8 = LabelledPositions::read(Path::new("x.epd"), &b"\xff\xfe\n"[..]);
        assert!(
            bad_utf8
                .unwrap_err()
                .to_string()
                .starts_with("x.epd:1: not UTF-8")
        );
    }

    #[test]
    fn missing_and_empty_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.epd");
        let e = LabelledPositions::load(&missing).unwrap_err().to_string();
        assert!(e.contains("none.epd"), "{e}");
        let empty = dir.path().join("empty.epd");
        std::fs::write(&empty, "# nothing\n").unwrap();
        let e = LabelledPositions::load(&empty).unwrap_err().to_string();
        assert!(e.contains("no labelled positions"), "{e}");
    }

    #[test]
    fn epd_output_reads_back_and_validation_split_is_seeded() {
        let mut set = LabelledPositions::new();
        let mut pos = Chess::default();
        for (i, m) in ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
            .iter()
            .enumerate()
        {
            let uci: shakmaty::uci::UciMove = m.parse().unwrap();
            let mv = uci.to_move(&pos).unwrap();
            pos.play_unchecked(mv);
            set.push(&pos, Outcome::from_u8((i % 3) as u8)).unwrap();
        }
        let mut out = Vec::new();
        set.write_epd(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.lines()
                .next()
                .unwrap()
                .ends_with("b KQkq - c9 \"0-1\";")
        );
        let back = read(&text).unwrap();
        assert_eq!(back.len(), 6);
        assert_eq!(
            back.outcomes().collect::<Vec<_>>(),
            set.outcomes().collect::<Vec<_>>()
        );
        let (t1, v1) = set.split_validation(0.34, 7);
        let (t2, v2) = set.split_validation(0.34, 7);
        assert_eq!((t1.len(), v1.len()), (4, 2));
        assert_eq!((&t1, &v1), (&t2, &v2));
        let (_, v3) = set.split_validation(0.01, 7);
        assert_eq!(v3.len(), 1);
    }
}
