//! `sparring coefficients IN.epd OUT.coef`: the static evaluation of every labelled position as
//! an exact linear function of the options, in `spsa`'s coefficient file format (text form,
//! version 1; the format's documentation in `spsa`'s README and its `coefficients` module is the
//! contract: this engine uses none of `spsa`'s code).
//!
//! The evaluation's middlegame and endgame parts are exactly linear in the options (see
//! [`crate::eval::FINE`]), so each option's coefficient is the change of the parts when that
//! option goes from 0 to 1 with the others at 0, and the constant is the parts at all zeros.
//! The file says `scale 800` (parts are in 1/800 cp) and `phase-range 24` (the game phase),
//! so every number in it is an integer and a reader that multiplies the taper out gets the
//! unrounded evaluation exactly. The engine's own score is that value rounded to a centipawn
//! (and clamped at ±20000, which only absurd options reach).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

use crate::eval::{FINE, OPTIONS, PHASE_MAX, Params, phase, white_parts};

/// Runs the command; returns the process exit status (2 for bad input, nothing written).
pub fn run(args: &[String]) -> i32 {
    let [input, output] = args else {
        eprintln!("usage: sparring coefficients IN.epd OUT.coef");
        return 2;
    };
    match export(Path::new(input), Path::new(output)) {
        Ok(n) => {
            eprintln!("sparring: wrote the coefficients of {n} positions to {output}");
            0
        }
        Err(e) => {
            eprintln!("sparring: {e}");
            2
        }
    }
}

/// One labelled line: the position and White's result as written in the format (`1`, `0.5`,
/// `0`). Accepts `<EPD> c9 "1-0";` and `<FEN or EPD>[;] [1.0]` / `[1-0]` forms.
fn parse_line(line: &str) -> Result<(Chess, &'static str), String> {
    let (position, label) = if let Some(at) = line.find(" c9 ") {
        let rest = &line[at + 4..];
        let label = rest
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches('"');
        (&line[..at], label)
    } else if let (Some(open), Some(close)) = (line.rfind('['), line.rfind(']')) {
        if close < open {
            return Err("unbalanced [ ]".into());
        }
        (&line[..open], line[open + 1..close].trim())
    } else {
        return Err("no result (c9 \"1-0\"; or [1.0])".into());
    };
    let result = match label {
        "1-0" | "1" | "1.0" => "1",
        "0-1" | "0" | "0.0" => "0",
        "1/2-1/2" | "1/2" | "0.5" => "0.5",
        other => return Err(format!("result `{other}` is not 1-0, 1/2-1/2 or 0-1")),
    };
    let position = position.trim().trim_end_matches(';').trim();
    let fen: Fen = position
        .parse()
        .map_err(|e| format!("position `{position}`: {e}"))?;
    let pos: Chess = fen
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("position `{position}`: {e}"))?;
    Ok((pos, result))
}

fn export(input: &Path, output: &Path) -> Result<usize, String> {
    let file = File::open(input).map_err(|e| format!("{}: {e}", input.display()))?;
    // Read everything first: a bad line leaves nothing written.
    let mut positions = Vec::new();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", input.display()))?;
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = parse_line(line).map_err(|e| format!("{}:{}: {e}", input.display(), n + 1))?;
        positions.push(parsed);
    }
    if positions.is_empty() {
        return Err(format!("{}: no labelled positions", input.display()));
    }

    let tmp = output.with_extension("coef.tmp");
    let write = || -> std::io::Result<()> {
        let mut out = BufWriter::new(File::create(&tmp)?);
        writeln!(out, "spsa-coefficients 1")?;
        writeln!(
            out,
            "# sparring {}: static evaluation, White's view",
            env!("CARGO_PKG_VERSION")
        )?;
        writeln!(out, "scale {FINE}")?;
        writeln!(out, "phase-range {PHASE_MAX}")?;
        for o in OPTIONS {
            writeln!(out, "variable {}", o.name)?;
        }
        let mut zero = Params {
            values: vec![0; OPTIONS.len()],
            pst_at: None,
        };
        let mut line = String::new();
        let mut mg = Vec::with_capacity(OPTIONS.len());
        let mut eg = Vec::with_capacity(OPTIONS.len());
        for (pos, result) in &positions {
            let (mg0, eg0) = white_parts(pos, &zero);
            mg.clear();
            eg.clear();
            for i in 0..OPTIONS.len() {
                zero.values[i] = 1;
                let (m, e) = white_parts(pos, &zero);
                zero.values[i] = 0;
                mg.push(m - mg0);
                eg.push(e - eg0);
            }
            let ph = i64::from(phase(pos));
            line.clear();
            use std::fmt::Write as _;
            let _ = write!(line, "{result} phase={ph}");
            // The parts at all-zero options, tapered: what no option moves.
            let constant = mg0 * ph + eg0 * (i64::from(PHASE_MAX) - ph);
            if constant != 0 {
                let _ = write!(line, " const={}", constant as f64 / f64::from(PHASE_MAX));
            }
            line.push_str(" mg");
            for (i, c) in mg.iter().enumerate().filter(|(_, c)| **c != 0) {
                let _ = write!(line, " {i}:{c}");
            }
            line.push_str(" eg");
            for (i, c) in eg.iter().enumerate().filter(|(_, c)| **c != 0) {
                let _ = write!(line, " {i}:{c}");
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        out.flush()?;
        out.get_ref().sync_all()
    };
    write()
        .and_then(|()| std::fs::rename(&tmp, output))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("{}: {e}", output.display())
        })?;
    Ok(positions.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labelled_line_forms() {
        for (line, want) in [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - c9 \"1-0\";",
                "1",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [0.5]",
                "0.5",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1; [0-1]",
                "0",
            ),
        ] {
            assert_eq!(parse_line(line).unwrap().1, want, "{line}");
        }
        assert!(parse_line("8/8/8/8 w - - [1.0]").is_err());
        assert!(parse_line("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - [2]").is_err());
    }
}
