//! PGN export of a [`GameRecord`], in the PGN standard's export format so other tools
//! (pgn-extract, cutechess, python-chess, ...) read it.

use std::fmt::Write as _;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, Position};

use super::book::START_FEN;
use super::record::{GameRecord, PlayedMove};
use crate::engine::Score;

/// The tags the arbiter cannot know, and output switches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnOptions {
    pub event: String,
    pub site: String,
    /// `YYYY.MM.DD`; unknown parts as `??`.
    pub date: String,
    pub round: String,
    /// Extra tags after the standard ones, e.g. the options each side played with.
    pub extra_tags: Vec<(String, String)>,
    /// Per-move comments: `{book}` for book moves, `{+0.35/12 0.153s}` for engine moves
    /// (score from the mover's view, depth, time used).
    pub move_comments: bool,
}

impl Default for PgnOptions {
    fn default() -> PgnOptions {
        PgnOptions {
            event: "?".into(),
            site: "?".into(),
            date: "????.??.??".into(),
            round: "?".into(),
            extra_tags: Vec::new(),
            move_comments: true,
        }
    }
}

/// The maximum line length of the movetext.
const LINE_WIDTH: usize = 80;

fn escape_tag(value: &str) -> String {
    value
        .chars()
        .filter(|c| !c.is_control())
        .flat_map(|c| match c {
            '\\' => vec!['\\', '\\'],
            '"' => vec!['\\', '"'],
            c => vec![c],
        })
        .collect()
}

/// A tag name must be a PGN symbol: letters, digits and `_`.
fn clean_tag_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if cleaned.is_empty() {
        "Tag".into()
    } else {
        cleaned
    }
}

fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .filter(|c| *c != '}' && *c != '{')
        .collect()
}

fn score_text(score: Score) -> String {
    match score {
        Score::Cp(cp) => {
            let sign = if cp < 0 { '-' } else { '+' };
            let abs = cp.unsigned_abs();
            format!("{sign}{}.{:02}", abs / 100, abs % 100)
        }
        Score::Mate(n) if n > 0 => format!("+M{n}"),
        Score::Mate(n) => format!("-M{}", n.unsigned_abs()),
    }
}

fn move_comment(m: &PlayedMove) -> String {
    if m.book {
        return "book".into();
    }
    let time = format!("{:.3}s", m.elapsed.as_secs_f64());
    match (m.score, m.depth) {
        (Some(s), Some(d)) => format!("{}/{d} {time}", score_text(s)),
        (Some(s), None) => format!("{} {time}", score_text(s)),
        (None, _) => time,
    }
}

/// Write one game as PGN text (ending with a blank line, so games can be appended).
pub fn write_pgn(record: &GameRecord, options: &PgnOptions) -> String {
    let mut out = String::new();
    let mut tag = |name: &str, value: &str| {
        let _ = writeln!(out, "[{} \"{}\"]", clean_tag_name(name), escape_tag(value));
    };
    tag("Event", &options.event);
    tag("Site", &options.site);
    tag("Date", &options.date);
    tag("Round", &options.round);
    tag("White", &record.white);
    tag("Black", &record.black);
    tag("Result", record.result.pgn());
    let start: Chess = record
        .start_fen
        .parse::<Fen>()
        .ok()
        .and_then(|f| f.into_position(CastlingMode::Standard).ok())
        .unwrap_or_default();
    if record.start_fen != START_FEN {
        tag("SetUp", "1");
        tag("FEN", &record.start_fen);
    }
    tag("PlyCount", &record.ply_count().to_string());
    tag("TimeControl", &record.time_control);
    tag("Termination", record.end.termination());
    for (name, value) in &options.extra_tags {
        tag(name, value);
    }
    out.push('\n');

    // Movetext as words, then wrapped.
    let mut words: Vec<String> = Vec::new();
    let mut turn = start.turn();
    let mut fullmove = start.fullmoves().get();
    let mut need_black_number = true;
    for m in &record.moves {
        match turn {
            Color::White => words.push(format!("{fullmove}.")),
            Color::Black if need_black_number => words.push(format!("{fullmove}...")),
            Color::Black => {}
        }
        words.push(m.san.clone());
        need_black_number = false;
        if options.move_comments {
            push_comment(&mut words, &move_comment(m));
            need_black_number = true;
        }
        if turn == Color::Black {
            fullmove += 1;
        }
        turn = !turn;
    }
    push_comment(&mut words, &record.end.to_string());
    words.push(record.result.pgn().to_string());

    let mut line = String::new();
    for word in words {
        if !line.is_empty() && line.len() + 1 + word.len() > LINE_WIDTH {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    out.push_str(&line);
    out.push_str("\n\n");
    out
}

/// A `{comment}` split into words so it can wrap.
fn push_comment(words: &mut Vec<String>, text: &str) {
    let text = comment_text(text);
    let parts: Vec<&str> = text.split_whitespace().collect();
    if parts.is_empty() {
        return;
    }
    let last = parts.len() - 1;
    for (i, part) in parts.iter().enumerate() {
        let mut w = String::new();
        if i == 0 {
            w.push('{');
        }
        w.push_str(part);
        if i == last {
            w.push('}');
        }
        words.push(w);
    }
}
