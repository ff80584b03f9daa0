//! The text files users hand us (variables, books, configs, θ logs) may come from editors that
//! start them with a UTF-8 byte-order mark. It is not content: every reader drops it here, so it
//! never becomes part of a first field, key or FEN. Bytes that are not UTF-8 are refused here
//! too, naming the file, the line and the byte ([`utf8`]).

use std::path::Path;

use crate::error::UserError;

/// The UTF-8 encoding of U+FEFF, the byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `bytes` without a leading UTF-8 byte-order mark.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// `text` without a leading byte-order mark.
pub fn strip_bom_str(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// `bytes` as text, or a refusal naming `path` and where the first byte that is not UTF-8 is
/// (line and byte, as a user's editor would find it): a damaged file is the user's to fix.
pub fn utf8<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str, UserError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        let what = match e.error_len() {
            Some(_) => "not UTF-8 text (damaged?)",
            None => "the file ends in the middle of a character (cut short?)",
        };
        UserError(format!("{}:{line}: byte {at}: {what}", path.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_is_not_utf8_is_refused_naming_file_line_and_byte() {
        let path = Path::new("t.checkpoint.var");
        assert_eq!(utf8(b"a\nb", path).unwrap(), "a\nb");
        let e = utf8(b"#: a = 1\n#: b = \xff\n", path).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.checkpoint.var:2: byte 16: not UTF-8 text (damaged?)"
        );
        let e = utf8(b"ok\n\xc3", Path::new("x.track.csv")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.track.csv:2: byte 3: the file ends in the middle of a character (cut short?)"
        );
    }

    #[test]
    fn only_a_leading_mark_goes() {
        assert_eq!(strip_bom(b"\xEF\xBB\xBFa,b"), b"a,b");
        assert_eq!(strip_bom(b"a\xEF\xBB\xBF"), b"a\xEF\xBB\xBF");
        assert_eq!(strip_bom(b""), b"");
        assert_eq!(strip_bom_str("\u{feff}[Main]"), "[Main]");
        assert_eq!(strip_bom_str("x\u{feff}"), "x\u{feff}");
    }

    /// Defect 6 of issue 12: a BOM before the first field of each kind of input file.
    #[test]
    fn every_reader_drops_a_leading_bom() {
        use crate::config::Config;
        use crate::game::{Book, BookOptions};
        use crate::report::history::History;
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
            path
        };
        let vars = crate::vars::load(&write(
            "v.var",
            "name,start,min,max,c_end,R_end,simul_elo\nPawn,100,0,200,10,0.002,1\n",
        ))
        .unwrap();
        assert_eq!(vars[0].name, "Pawn");
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let epd = Book::load(write("b.epd", &format!("{fen}\n")), &BookOptions::default()).unwrap();
        assert_eq!(epd.len(), 1);
        let pgn = Book::load(
            write("b.pgn", "[Event \"x\"]\n\n1. e4 e5 *\n"),
            &BookOptions::default(),
        )
        .unwrap();
        assert_eq!(pgn.openings()[0].moves_uci(), ["e2e4", "e7e5"]);
        let sim =
            "Simulate = 1\nVariables = v.var\nIterations = 5\nA = 1\nGamma = 0.1\nAlpha = 0.6\n";
        let ini = Config::load(&write("c.conf", &format!("[Main]\n{sim}"))).unwrap();
        assert_eq!(ini.schedule.iterations, 5);
        let toml = Config::load(&write(
            "c.toml",
            "iterations = 5\nsimulate = true\nvariables = \"v.var\"\nA = 1\ngamma = 0.1\nalpha = 0.6\n",
        ))
        .unwrap();
        assert_eq!(toml.schedule.iterations, 5);
        let log = History::read(&write("t.log", "iteration,Pawn\n1,100.5\n")).unwrap();
        assert_eq!(log.names, ["Pawn"]);
        assert_eq!(log.values[0], [100.5]);
    }
}
