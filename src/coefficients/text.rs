//! The text form: reader (streaming, line by line, one reused buffer) and writer.

use std::io::{BufRead, Write};
use std::path::Path;

use super::{CoefficientError, Coefficients, TEXT_MAGIC, VERSION};
use crate::positions::Outcome;

#[derive(Clone, Copy, PartialEq)]
enum Section {
    None,
    Mg,
    Eg,
}

/// Header settings collected before the first position line.
struct Header {
    scale: f64,
    phase_range: f64,
    variables: Vec<String>,
}

/// One position line's dense accumulator, reused across lines.
struct Scratch {
    acc: Vec<f64>,
    seen: Vec<bool>,
    touched: Vec<u16>,
    pairs: Vec<(Section, u16, f64)>,
    entries: Vec<(u16, f32)>,
}

pub(super) fn read(
    mut reader: impl BufRead,
    path: &Path,
) -> Result<Coefficients, CoefficientError> {
    let err = |line: usize, field: &str, msg: &dyn std::fmt::Display| {
        CoefficientError::format(path, line, field, msg)
    };
    let mut buf = String::new();
    let mut line_no = 0usize;
    let mut header: Option<Header> = None;
    let mut data: Option<(Coefficients, Scratch)> = None;

    loop {
        buf.clear();
        let n = reader
            .read_line(&mut buf)
            .map_err(|e| CoefficientError::io(path, e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let content = buf.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let mut tokens = content.split_ascii_whitespace();
        let first = tokens.next().unwrap_or("");

        let Some(h) = &mut header else {
            if first != TEXT_MAGIC {
                return Err(err(
                    line_no,
                    "header",
                    &format_args!("expected `{TEXT_MAGIC} {VERSION}` as the first line"),
                ));
            }
            match tokens.next().map(str::parse::<u32>) {
                Some(Ok(VERSION)) => {}
                _ => {
                    return Err(err(
                        line_no,
                        "version",
                        &format_args!("this program reads version {VERSION}"),
                    ));
                }
            }
            header = Some(Header {
                scale: 1.0,
                phase_range: 1.0,
                variables: Vec::new(),
            });
            continue;
        };

        if data.is_none() {
            let keyword_value = |tokens: &mut std::str::SplitAsciiWhitespace, field: &str| {
                let value = tokens
                    .next()
                    .and_then(|t| t.parse::<f64>().ok())
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .ok_or_else(|| err(line_no, field, &"expected a positive number"))?;
                if tokens.next().is_some() {
                    return Err(err(line_no, field, &"one value expected"));
                }
                Ok(value)
            };
            match first {
                "scale" => {
                    h.scale = keyword_value(&mut tokens, "scale")?;
                    continue;
                }
                "phase-range" => {
                    h.phase_range = keyword_value(&mut tokens, "phase-range")?;
                    continue;
                }
                "variable" => {
                    let name = tokens.collect::<Vec<_>>().join(" ");
                    if name.is_empty() {
                        return Err(err(line_no, "variable", &"a name is missing"));
                    }
                    if h.variables.iter().any(|v| v.eq_ignore_ascii_case(&name)) {
                        return Err(err(
                            line_no,
                            "variable",
                            &format_args!("`{name}` is named twice"),
                        ));
                    }
                    if h.variables.len() == usize::from(u16::MAX) {
                        return Err(err(line_no, "variable", &"at most 65535 variables"));
                    }
                    h.variables.push(name);
                    continue;
                }
                _ => {
                    if h.variables.is_empty() {
                        return Err(err(
                            line_no,
                            "variable",
                            &"no `variable NAME` line before the first position",
                        ));
                    }
                    let n = h.variables.len();
                    let coefficients =
                        Coefficients::new(h.variables.clone(), h.scale * h.phase_range);
                    data = Some((
                        coefficients,
                        Scratch {
                            acc: vec![0.0; n],
                            seen: vec![false; n],
                            touched: Vec::new(),
                            pairs: Vec::new(),
                            entries: Vec::new(),
                        },
                    ));
                }
            }
        }
        let (out, scratch) = data.as_mut().expect("set above");

        if matches!(first, "scale" | "phase-range" | "variable") {
            return Err(err(
                line_no,
                first,
                &"header lines must come before the first position",
            ));
        }
        let result = Outcome::parse(first).ok_or_else(|| {
            err(
                line_no,
                "result",
                &format_args!("`{first}` is not a result (1, 0.5, 0, 1-0, 1/2-1/2, 0-1)"),
            )
        })?;

        let range = h.phase_range;
        let nvars = h.variables.len();
        let mut constant = 0.0f64;
        let mut phase: Option<f64> = None;
        let mut section = Section::None;
        scratch.pairs.clear();
        for token in tokens {
            if let Some(v) = token.strip_prefix("const=") {
                constant = v
                    .parse::<f64>()
                    .ok()
                    .filter(|c| c.is_finite())
                    .ok_or_else(|| err(line_no, "const", &format_args!("`{v}` is not a number")))?;
            } else if let Some(v) = token.strip_prefix("phase=") {
                phase = Some(
                    v.parse::<f64>()
                        .ok()
                        .filter(|p| (0.0..=range).contains(p))
                        .ok_or_else(|| {
                            err(
                                line_no,
                                "phase",
                                &format_args!("`{v}` is not a number in [0, {range}]"),
                            )
                        })?,
                );
            } else if token == "mg" {
                section = Section::Mg;
            } else if token == "eg" {
                section = Section::Eg;
            } else if let Some((i, c)) = token.split_once(':') {
                let index = i
                    .parse::<usize>()
                    .ok()
                    .filter(|&i| i < nvars)
                    .ok_or_else(|| {
                        err(
                            line_no,
                            token,
                            &format_args!(
                                "index `{i}` is not one of the {nvars} variables (0..{})",
                                nvars - 1
                            ),
                        )
                    })?;
                let c = c
                    .parse::<f64>()
                    .ok()
                    .filter(|c| c.is_finite())
                    .ok_or_else(|| err(line_no, token, &format_args!("`{c}` is not a number")))?;
                scratch.pairs.push((section, index as u16, c));
            } else {
                return Err(err(
                    line_no,
                    token,
                    &"expected index:coefficient, const=, phase=, mg or eg",
                ));
            }
        }

        // Multiply out into one coefficient per variable, in units of 1/(scale·range).
        for &(sec, i, c) in &scratch.pairs {
            let factor = match (phase, sec) {
                (None, Section::None) => range,
                (Some(p), Section::Mg) => p,
                (Some(p), Section::Eg) => range - p,
                (None, _) => {
                    return Err(err(
                        line_no,
                        "phase",
                        &"mg/eg parts need phase= on the line",
                    ));
                }
                (Some(_), Section::None) => {
                    return Err(err(
                        line_no,
                        "mg",
                        &"with phase= the coefficients follow `mg` or `eg`",
                    ));
                }
            };
            if !std::mem::replace(&mut scratch.seen[usize::from(i)], true) {
                scratch.touched.push(i);
            }
            scratch.acc[usize::from(i)] += c * factor;
        }
        scratch.touched.sort_unstable();
        scratch.entries.clear();
        for &i in &scratch.touched {
            scratch.seen[usize::from(i)] = false;
            let v = std::mem::take(&mut scratch.acc[usize::from(i)]);
            if v != 0.0 {
                scratch.entries.push((i, v as f32));
            }
        }
        scratch.touched.clear();
        if out.index.len() + scratch.entries.len() > u32::MAX as usize {
            return Err(err(
                line_no,
                "entries",
                &"more than 2^32 entries in one file",
            ));
        }
        out.push(result, (constant * range) as f32, &scratch.entries);
    }

    match data {
        Some((out, _)) => Ok(out),
        None if header.is_none() => Err(err(
            line_no.max(1),
            "header",
            &format_args!("empty file: expected `{TEXT_MAGIC} {VERSION}`"),
        )),
        None => Err(err(line_no.max(1), "positions", &"no position lines")),
    }
}

/// Writes the text form of `c` (one untapered line per position, coefficients in stored units:
/// shortest decimals that read back to the same `f32`).
pub fn write_text(c: &Coefficients, mut out: impl Write) -> std::io::Result<()> {
    writeln!(out, "{TEXT_MAGIC} {VERSION}")?;
    writeln!(out, "scale {}", c.scale)?;
    for v in &c.variables {
        writeln!(out, "variable {v}")?;
    }
    let mut line = String::new();
    for p in 0..c.len() {
        use std::fmt::Write as _;
        line.clear();
        line.push_str(match c.results[p] {
            Outcome::WhiteWins => "1",
            Outcome::Draw => "0.5",
            Outcome::BlackWins => "0",
        });
        let k = c.constant(p);
        if k != 0.0 {
            let _ = write!(line, " const={k}");
        }
        let (idx, coef) = c.row(p);
        for (i, x) in idx.iter().zip(coef) {
            let _ = write!(line, " {i}:{x}");
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    out.flush()
}
