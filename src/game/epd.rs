//! EPD and FEN lines: a book's positions, and the position field of labelled-position files.

use std::path::Path;

use shakmaty::CastlingMode;

use super::opening::{BookError, Opening, invalid, parse_position};

/// EPD or FEN lines. The first four fields are the EPD position; then either the FEN's two
/// counters, or EPD operations (`bm e4; id "x";`, honouring `hmvc` and `fmvn`), or nothing.
pub(super) fn parse_epd(
    path: &Path,
    bytes: &[u8],
    mode: CastlingMode,
) -> Result<Vec<Opening>, BookError> {
    let bytes = crate::textfile::strip_bom(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        invalid(path, line, "not UTF-8 text")
    })?;
    let mut openings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (fen, id) = epd_line_to_fen(line).map_err(|m| invalid(path, line_no, m))?;
        let start = parse_position(&fen, mode).map_err(|e| e.at(path, line_no))?;
        let source = format!("{}:{line_no}", path.display());
        let opening = Opening::from_moves(mode, start, Vec::new(), source, id)
            .map_err(|m| invalid(path, line_no, m))?;
        openings.push(opening);
    }
    Ok(openings)
}

/// Turn one EPD/FEN line into a full FEN and the `id` opcode.
pub(crate) fn epd_line_to_fen(line: &str) -> Result<(String, Option<String>), String> {
    let mut fields: Vec<&str> = Vec::with_capacity(4);
    let mut rest = line;
    while fields.len() < 4 {
        rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with(';') {
            return Err(format!(
                "expected 4 EPD fields (board, side, castling, en passant) in {line:?}"
            ));
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || c == ';')
            .unwrap_or(rest.len());
        fields.push(&rest[..end]);
        rest = &rest[end..];
    }
    let rest = rest.trim();
    let mut halfmove = "0".to_string();
    let mut fullmove = "1".to_string();
    let mut id = None;
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    let numeric = |s: &&str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if tokens.len() >= 2
        && numeric(&tokens[0])
        && numeric(&tokens[1].trim_end_matches(';'))
        && (tokens.len() == 2 || tokens[1].ends_with(';') || tokens[2].starts_with(';'))
    {
        // Full FEN: the two counters follow (optionally a trailing `;`).
        halfmove = tokens[0].to_string();
        fullmove = tokens[1].trim_end_matches(';').to_string();
    } else {
        for op in split_operations(rest) {
            let op = op.trim();
            let (opcode, operand) = op.split_once(char::is_whitespace).unwrap_or((op, ""));
            let operand = operand.trim();
            match opcode {
                "hmvc" if numeric(&operand) => halfmove = operand.to_string(),
                "fmvn" if numeric(&operand) => fullmove = operand.to_string(),
                "hmvc" | "fmvn" => return Err(format!("bad {opcode} operand {operand:?}")),
                "id" => id = Some(operand.trim_matches('"').to_string()),
                _ => {}
            }
        }
    }
    if fullmove == "0" {
        fullmove = "1".to_string();
    }
    Ok((
        format!(
            "{} {} {} {} {halfmove} {fullmove}",
            fields[0], fields[1], fields[2], fields[3]
        ),
        id,
    ))
}

/// Split EPD operations on `;`, respecting double-quoted strings.
pub(crate) fn split_operations(s: &str) -> Vec<&str> {
    let mut ops = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => {
                ops.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        ops.push(&s[start..]);
    }
    ops.into_iter().filter(|o| !o.trim().is_empty()).collect()
}
