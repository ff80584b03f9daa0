//! PGN export of a [`GameRecord`], in the PGN standard's export format so other tools
//! (pgn-extract, cutechess, python-chess, ...) read it.

use std::fmt::Write as _;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, Position};

use super::opening::START_FEN;
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
    let mode = if record.chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    let start: Chess = record
        .start_fen
        .parse::<Fen>()
        .ok()
        .and_then(|f| f.into_position(mode).ok())
        .unwrap_or_default();
    // A Chess960 game always names its start (X-FEN castling, which python-chess, pgn-extract
    // and cutechess read), even from the standard array.
    if record.chess960 {
        tag("Variant", "Chess960");
    }
    if record.chess960 || record.start_fen != START_FEN {
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

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;
    use std::time::Duration;

    use pgn_reader::{KnownOutcome, Outcome, RawComment, RawTag, Reader, SanPlus, Visitor};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use shakmaty::san::SanPlus as ShakSanPlus;

    use super::*;
    use crate::game::record::{EndReason, GameResult};

    /// Everything pgn-reader gives back, moves replayed (and so checked) with shakmaty.
    #[derive(Debug, Default)]
    struct Parsed {
        tags: Vec<(String, String)>,
        sans: Vec<String>,
        comments: Vec<String>,
        outcome: Option<String>,
    }

    struct Collect;

    impl Visitor for Collect {
        type Tags = Parsed;
        type Movetext = (Parsed, Chess);
        type Output = Result<Parsed, String>;

        fn begin_tags(&mut self) -> ControlFlow<Self::Output, Parsed> {
            ControlFlow::Continue(Parsed::default())
        }
        fn tag(
            &mut self,
            t: &mut Parsed,
            name: &[u8],
            value: RawTag<'_>,
        ) -> ControlFlow<Self::Output> {
            t.tags.push((
                String::from_utf8_lossy(name).into_owned(),
                value.decode_utf8_lossy().into_owned(),
            ));
            ControlFlow::Continue(())
        }
        fn begin_movetext(&mut self, t: Parsed) -> ControlFlow<Self::Output, (Parsed, Chess)> {
            let fen = t
                .tags
                .iter()
                .find(|(n, _)| n == "FEN")
                .map(|(_, v)| v.clone());
            let pos = match fen {
                Some(f) => match f
                    .parse::<Fen>()
                    .ok()
                    .and_then(|f| f.into_position(CastlingMode::Standard).ok())
                {
                    Some(p) => p,
                    None => return ControlFlow::Break(Err(format!("bad FEN tag {f}"))),
                },
                None => Chess::default(),
            };
            ControlFlow::Continue((t, pos))
        }
        fn san(&mut self, m: &mut (Parsed, Chess), san: SanPlus) -> ControlFlow<Self::Output> {
            match san.san.to_move(&m.1) {
                Ok(mv) => {
                    m.1.play_unchecked(mv);
                    m.0.sans.push(san.to_string());
                    ControlFlow::Continue(())
                }
                Err(e) => ControlFlow::Break(Err(format!("{san}: {e}"))),
            }
        }
        fn comment(
            &mut self,
            m: &mut (Parsed, Chess),
            c: RawComment<'_>,
        ) -> ControlFlow<Self::Output> {
            m.0.comments
                .push(String::from_utf8_lossy(c.as_bytes()).trim().to_string());
            ControlFlow::Continue(())
        }
        fn outcome(&mut self, m: &mut (Parsed, Chess), o: Outcome) -> ControlFlow<Self::Output> {
            m.0.outcome = Some(match o {
                Outcome::Known(KnownOutcome::Draw) => "1/2-1/2".into(),
                Outcome::Known(KnownOutcome::Decisive {
                    winner: Color::White,
                }) => "1-0".into(),
                Outcome::Known(KnownOutcome::Decisive {
                    winner: Color::Black,
                }) => "0-1".into(),
                Outcome::Unknown => "*".into(),
            });
            ControlFlow::Continue(())
        }
        fn end_game(&mut self, m: (Parsed, Chess)) -> Self::Output {
            Ok(m.0)
        }
    }

    fn parse_all(text: &str) -> Vec<Parsed> {
        let mut reader = Reader::new(std::io::Cursor::new(text.as_bytes()));
        let mut games = Vec::new();
        while let Some(game) = reader.read_game(&mut Collect).expect("io") {
            games.push(game.expect("legal PGN"));
        }
        games
    }

    fn tag<'a>(p: &'a Parsed, name: &str) -> Option<&'a str> {
        p.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A record of `uci` moves played from `fen` (`book` of them from the book).
    fn record(fen: &str, uci: &[&str], book: usize, end: EndReason) -> GameRecord {
        let mut pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let moves = uci
            .iter()
            .enumerate()
            .map(|(i, u)| {
                let m = u
                    .parse::<shakmaty::uci::UciMove>()
                    .unwrap()
                    .to_move(&pos)
                    .unwrap();
                PlayedMove {
                    uci: u.to_string(),
                    san: ShakSanPlus::from_move_and_play_unchecked(&mut pos, m).to_string(),
                    book: i < book,
                    score: (i >= book).then_some(Score::Cp(35 - 10 * i as i32)),
                    depth: (i >= book).then_some(12),
                    elapsed: Duration::from_millis(153),
                }
            })
            .collect();
        GameRecord {
            white: "Engine \"A\"".into(),
            black: "B\\C".into(),
            start_fen: fen.into(),
            chess960: false,
            moves,
            result: end.result(),
            end,
            fault: None,
            time_control: "10+0.1".into(),
            opening_source: "t:1".into(),
        }
    }

    #[test]
    fn standard_tags_moves_comments_and_result_round_trip() {
        let r = record(
            START_FEN,
            &["f2f3", "e7e5", "g2g4", "d8h4"],
            2,
            EndReason::Checkmate {
                winner: Color::Black,
            },
        );
        let options = PgnOptions {
            event: "SPSA tune".into(),
            date: "2025.01.02".into(),
            round: "17.2".into(),
            extra_tags: vec![("WhiteOptions".into(), "Hash=16 Foo=\"x\"".into())],
            ..PgnOptions::default()
        };
        let text = write_pgn(&r, &options);
        assert!(
            text.contains(
                "1. f3 {book} 1... e5 {book} 2. g4 {+0.15/12 0.153s} 2... Qh4# {+0.05/12 0.153s}"
            ),
            "{text}"
        );
        assert!(text.contains("{Black mates} 0-1"), "{text}");
        assert!(!text.contains("[SetUp"), "no FEN for the standard start");
        let games = parse_all(&text);
        assert_eq!(games.len(), 1);
        let g = &games[0];
        let names: Vec<&str> = g.tags.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "Event",
                "Site",
                "Date",
                "Round",
                "White",
                "Black",
                "Result",
                "PlyCount",
                "TimeControl",
                "Termination",
                "WhiteOptions"
            ]
        );
        assert_eq!(tag(g, "White"), Some("Engine \"A\""));
        assert_eq!(tag(g, "Black"), Some("B\\C"));
        assert_eq!(tag(g, "Result"), Some("0-1"));
        assert_eq!(tag(g, "PlyCount"), Some("4"));
        assert_eq!(tag(g, "Termination"), Some("normal"));
        assert_eq!(tag(g, "WhiteOptions"), Some("Hash=16 Foo=\"x\""));
        assert_eq!(g.sans, ["f3", "e5", "g4", "Qh4#"]);
        assert_eq!(g.comments.last().map(String::as_str), Some("Black mates"));
        assert_eq!(g.outcome.as_deref(), Some("0-1"));
    }

    #[test]
    fn chess960_games_name_the_variant_and_their_start_even_from_the_standard_array() {
        let mut r = record(
            START_FEN,
            &["e2e4", "e7e5"],
            0,
            EndReason::MaxLength { plies: 2 },
        );
        r.chess960 = true;
        let text = write_pgn(&r, &PgnOptions::default());
        assert!(
            text.contains(&format!(
                "[Variant \"Chess960\"]\n[SetUp \"1\"]\n[FEN \"{START_FEN}\"]\n"
            )),
            "{text}"
        );
        // A standard game from the start names neither.
        r.chess960 = false;
        let text = write_pgn(&r, &PgnOptions::default());
        assert!(
            !text.contains("[Variant") && !text.contains("[FEN"),
            "{text}"
        );
    }

    #[test]
    fn black_to_move_from_fen_and_no_comments() {
        let fen = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 5";
        let r = record(
            fen,
            &["d7d5", "c2c4", "e7e6"],
            0,
            EndReason::MaxLength { plies: 3 },
        );
        let options = PgnOptions {
            move_comments: false,
            ..PgnOptions::default()
        };
        let text = write_pgn(&r, &options);
        assert!(text.contains(
            "[SetUp \"1\"]\n[FEN \"rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 5\"]"
        ));
        assert!(
            text.contains("\n5... d5 6. c4 e6 {Draw by maximum game length (3 plies)} 1/2-1/2\n"),
            "{text}"
        );
        assert!(text.contains("[Termination \"adjudication\"]"));
        let g = &parse_all(&text)[0];
        assert_eq!(g.sans, ["d5", "c4", "e6"]);
        assert_eq!(g.outcome.as_deref(), Some("1/2-1/2"));
    }

    #[test]
    fn random_long_games_round_trip_and_wrap_at_80() {
        let mut text = String::new();
        let mut expected = Vec::new();
        for seed in 0..12u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut pos = Chess::default();
            let mut uci = Vec::new();
            while uci.len() < 160 && !pos.is_game_over() {
                let moves = pos.legal_moves();
                let m = moves[rng.random_range(0..moves.len())];
                uci.push(m.to_uci(CastlingMode::Standard).to_string());
                pos.play_unchecked(m);
            }
            let refs: Vec<&str> = uci.iter().map(String::as_str).collect();
            let end = if seed % 2 == 0 {
                EndReason::TimeForfeit { by: Color::White }
            } else {
                EndReason::IllegalMove {
                    by: Color::Black,
                    token: "a1a1}{x".into(),
                }
            };
            let r = record(START_FEN, &refs, 4, end);
            expected.push((
                r.moves.iter().map(|m| m.san.clone()).collect::<Vec<_>>(),
                r.result,
            ));
            text.push_str(&write_pgn(&r, &PgnOptions::default()));
        }
        for line in text.lines() {
            assert!(line.len() <= 80, "{} chars: {line}", line.len());
        }
        let games = parse_all(&text);
        assert_eq!(games.len(), expected.len());
        for (g, (sans, result)) in games.iter().zip(expected) {
            assert_eq!(g.sans, sans);
            assert_eq!(g.outcome.as_deref(), Some(result.pgn()));
        }
        assert_eq!(GameResult::WhiteWins.pgn(), "1-0");
    }

    #[test]
    fn score_formats() {
        assert_eq!(score_text(Score::Cp(35)), "+0.35");
        assert_eq!(score_text(Score::Cp(-120)), "-1.20");
        assert_eq!(score_text(Score::Cp(-5)), "-0.05");
        assert_eq!(score_text(Score::Cp(0)), "+0.00");
        assert_eq!(score_text(Score::Mate(3)), "+M3");
        assert_eq!(score_text(Score::Mate(-2)), "-M2");
    }
}
