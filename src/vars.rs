//! The seven-column variables CSV: `name, start, min, max, c_end, R_end, simul_elo`.
//!
//! Rows in the fishtest/OpenBench parameter format, `name, int|float, value, min, max, c_end,
//! r_end`, are accepted too (start = value, simul_elo = 0), so a tune's parameter block can be
//! pasted in as it is.
//!
//! Every row is validated where it is read, so a bad file is reported with its path, line and
//! field before anything else happens. The same format is written back (with the current θ in the
//! `start` column) so that a finished or checkpointed run can be fed in again as a plain input.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One tuned parameter as the user declared it.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    /// Any text without a comma; engine option names may hold spaces and brackets.
    pub name: String,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// The perturbation size at the last iteration.
    pub c_end: f64,
    /// The ratio a_end / c_end² at the last iteration.
    pub r_end: f64,
    /// Simulated Elo loss at ±100 from the optimum (only the simulator reads it).
    pub simul_elo: f64,
}

/// A variables-file problem, always naming the file and line.
#[derive(Debug, thiserror::Error)]
pub enum VarsError {
    #[error("{path}: cannot read variables file: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: no variables (every line is empty or a # comment)")]
    Empty { path: PathBuf },
}

/// A variables file that cannot be read or used is the user's to fix.
impl crate::error::UserFacing for VarsError {
    fn is_user_error(&self) -> bool {
        true
    }
}

/// The column names, in file order; used for messages and for the header we write.
pub const COLUMNS: [&str; 7] = ["name", "start", "min", "max", "c_end", "R_end", "simul_elo"];

/// Read and validate a variables file.
pub fn load(path: &Path) -> Result<Vec<Variable>, VarsError> {
    let text = std::fs::read_to_string(path).map_err(|cause| VarsError::Io {
        path: path.to_path_buf(),
        cause,
    })?;
    parse(&text, path)
}

/// Add `var` (read at `line`) to `vars` unless an earlier row has its name.
fn push_unique(
    vars: &mut Vec<Variable>,
    seen: &mut std::collections::HashMap<String, usize>,
    var: Variable,
    line: usize,
) -> Result<(), String> {
    if let Some(first) = seen.get(&var.name) {
        return Err(format!(
            "duplicate variable name `{}` (first at line {first})",
            var.name
        ));
    }
    seen.insert(var.name.clone(), line);
    vars.push(var);
    Ok(())
}

/// The line of the variables file `path` whose row names `name` (for an error about that row).
pub fn line_of(path: &Path, name: &str) -> Option<usize> {
    let text = std::fs::read_to_string(path).ok()?;
    crate::textfile::strip_bom_str(&text)
        .lines()
        .position(|line| {
            let first = line.split(',').next().unwrap_or_default().trim();
            !line.trim_start().starts_with('#') && first.trim_matches('"') == name
        })
        .map(|i| i + 1)
}

/// Parse variables from text; `path` is only used in messages.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Variable>, VarsError> {
    let invalid = |line: usize, message: String| VarsError::Invalid {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut vars: Vec<Variable> = Vec::new();
    // Names seen so far, with the line of each: a file of 50,000 variables is checked in
    // one pass, not by comparing every pair.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (index, raw) in crate::textfile::strip_bom_str(text).lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != COLUMNS.len() {
            return Err(invalid(
                line_no,
                format!(
                    "expected 7 comma-separated fields ({}), found {}",
                    COLUMNS.join(", "),
                    fields.len()
                ),
            ));
        }
        if is_header(&fields) {
            continue;
        }
        if let Some(var) = fishtest_row(&fields).map_err(|m| invalid(line_no, m))? {
            var.check().map_err(|m| invalid(line_no, m))?;
            push_unique(&mut vars, &mut seen, var, line_no).map_err(|m| invalid(line_no, m))?;
            continue;
        }
        let name = fields[0].to_string();
        if name.is_empty() {
            return Err(invalid(line_no, "field `name` is empty".into()));
        }
        let mut numbers = [0.0f64; 6];
        for (slot, (field, column)) in numbers
            .iter_mut()
            .zip(fields[1..].iter().zip(&COLUMNS[1..]))
        {
            *slot = field
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    invalid(
                        line_no,
                        format!("field `{column}` of `{name}`: `{field}` is not a finite number"),
                    )
                })?;
        }
        let [start, min, max, c_end, r_end, simul_elo] = numbers;
        let var = Variable {
            name,
            start,
            min,
            max,
            c_end,
            r_end,
            simul_elo,
        };
        var.check().map_err(|m| invalid(line_no, m))?;
        push_unique(&mut vars, &mut seen, var, line_no).map_err(|m| invalid(line_no, m))?;
    }
    if vars.is_empty() {
        return Err(VarsError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(vars)
}

/// A fishtest/OpenBench parameter row, `name, int|float, value, min, max, c_end, r_end`, read as
/// a variable starting at `value` with `simul_elo` 0. `Ok(None)` when the row is not of that form
/// (its second field is not the word `int` or `float`).
fn fishtest_row(fields: &[&str]) -> Result<Option<Variable>, String> {
    let kind = fields[1];
    if !(kind.eq_ignore_ascii_case("int") || kind.eq_ignore_ascii_case("float")) {
        return Ok(None);
    }
    let name = fields[0];
    if name.is_empty() {
        return Err("field `name` is empty".into());
    }
    const FIELDS: [&str; 5] = ["value", "min", "max", "c_end", "r_end"];
    let mut numbers = [0.0f64; 5];
    for (slot, (field, column)) in numbers.iter_mut().zip(fields[2..].iter().zip(FIELDS)) {
        *slot = field
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                format!("field `{column}` of `{name}` ({kind} parameter row): `{field}` is not a finite number")
            })?;
    }
    let [start, min, max, c_end, r_end] = numbers;
    Ok(Some(Variable {
        name: name.to_string(),
        start,
        min,
        max,
        c_end,
        r_end,
        simul_elo: 0.0,
    }))
}

/// A header row is tolerated when every numeric column fails to parse and the first field is
/// literally `name` (our own output starts with one).
fn is_header(fields: &[&str]) -> bool {
    fields[0].eq_ignore_ascii_case("name") && fields[1..].iter().all(|f| f.parse::<f64>().is_err())
}

impl Variable {
    /// The range and gain checks, as a message naming the field.
    pub fn check(&self) -> Result<(), String> {
        let name = &self.name;
        if self.min > self.max {
            return Err(format!(
                "`{name}`: min ({}) is greater than max ({})",
                self.min, self.max
            ));
        }
        if self.start < self.min || self.start > self.max {
            return Err(format!(
                "`{name}`: start ({}) is outside [min, max] = [{}, {}]",
                self.start, self.min, self.max
            ));
        }
        if self.c_end <= 0.0 {
            return Err(format!("`{name}`: c_end ({}) must be > 0", self.c_end));
        }
        if self.r_end < 0.0 {
            return Err(format!("`{name}`: R_end ({}) must be >= 0", self.r_end));
        }
        Ok(())
    }
}

/// Format a value the way users read it: at most `decimals` places, trailing zeros dropped.
pub fn format_value(value: f64, decimals: usize) -> String {
    let mut s = Vec::new();
    push_value(&mut s, value, decimals);
    String::from_utf8(s).unwrap_or_default()
}

/// A setting users read and the program reads back (bounds, gains): rounded as the θ log
/// rounds ([`format_value`] with 4 places), so floating-point noise such as
/// `0.15000000000000002` (a range of 3 over 20) is written `0.15`; a value whose further
/// places are real (an R_end of 0.00002) is written in full.
pub fn format_setting(value: f64) -> String {
    let shown = format_value(value, 4);
    let noise = 1e-9 * value.abs().max(1e-300);
    match shown.parse::<f64>() {
        Ok(back) if (back - value).abs() <= noise => shown,
        _ => value.to_string(),
    }
}

/// Append a value with at most `decimals` (≤ 9) places, trailing zeros dropped, rounding half
/// away from zero. It converts through integers instead of the float formatter (about 5× fewer
/// instructions); the θ log writes its rows with the same digits ([`write_fixed`]).
pub fn push_value(out: &mut Vec<u8>, value: f64, decimals: usize) {
    let mut room = [0u8; FIXED_ROOM];
    match write_fixed(value, decimals, &mut room) {
        Some(n) => out.extend_from_slice(&room[..n]),
        None => out.extend_from_slice(value.to_string().as_bytes()),
    }
}

/// Room for the longest value [`write_fixed`] writes: a sign, 16 integer digits (below 9·10¹⁵),
/// a point and 9 places.
pub const FIXED_ROOM: usize = 32;

/// Two ASCII digits for each number below 100.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The digits of [`push_value`] at the start of `out`; their count, or `None` for a value the
/// integer path cannot hold (not finite, or 9·10¹⁵ or more once scaled), which [`push_value`]
/// writes as Rust prints it. Bytes of `out` after the count are scratch. Inlined, so the θ
/// log's constant 4 places compile to a path of their own.
#[inline]
pub fn write_fixed(value: f64, decimals: usize, out: &mut [u8; FIXED_ROOM]) -> Option<usize> {
    const POW10: [u64; 10] = [
        1,
        10,
        100,
        1_000,
        10_000,
        100_000,
        1_000_000,
        10_000_000,
        100_000_000,
        1_000_000_000,
    ];
    let decimals = decimals.min(9);
    let scale = POW10[decimals];
    let scaled = value.abs() * scale as f64 + 0.5;
    // Too large (infinity included) or NaN.
    if scaled.is_nan() || scaled >= 9.0e15 {
        return None;
    }
    // Truncation after adding ½ rounds half away from zero, without a libm call. Through i64
    // (one instruction; the value is below 2⁶³), not u64 (a branch and two conversions).
    let scaled = scaled as i64 as u64;
    if scaled == 0 {
        out[0] = b'0';
        return Some(1);
    }
    // A sign that a positive value's first digit overwrites.
    out[0] = b'-';
    let mut n = usize::from(value < 0.0);
    if decimals == 4 && scaled < 100_000_000 {
        // The θ log's values below 10⁴.
        return Some(n + write_four_places(scaled, &mut out[n..]));
    }
    // The θ log's 4 places and whole numbers divide by constants (a multiplication).
    let (int, mut frac) = match decimals {
        0 => (scaled, 0),
        4 => (scaled / 10_000, scaled % 10_000),
        _ => (scaled / scale, scaled % scale),
    };
    n += write_integer(int, &mut out[n..]);
    if frac != 0 && decimals == 4 {
        // All four places from two pairs, then the trailing zeros dropped.
        let (hi, lo) = (frac as usize / 100 * 2, frac as usize % 100 * 2);
        out[n] = b'.';
        out[n + 1..n + 3].copy_from_slice(&DIGIT_PAIRS[hi..hi + 2]);
        out[n + 3..n + 5].copy_from_slice(&DIGIT_PAIRS[lo..lo + 2]);
        let zeros = if !frac.is_multiple_of(10) {
            0
        } else if !frac.is_multiple_of(100) {
            1
        } else if !frac.is_multiple_of(1000) {
            2
        } else {
            3
        };
        n += 5 - zeros;
    } else if frac != 0 {
        let mut width = decimals;
        while frac.is_multiple_of(10) {
            frac /= 10;
            width -= 1;
        }
        out[n] = b'.';
        n += 1;
        for slot in out[n..n + width].iter_mut().rev() {
            *slot = b'0' + (frac % 10) as u8;
            frac /= 10;
        }
        n += width;
    }
    Some(n)
}

/// `scaled` (below 10⁸) with four places, `int.frac`, at the start of `out` (room for 12
/// bytes): the integer's leading zeros dropped (one digit kept), and the places' trailing
/// zeros (the point too when none is left). Returns the length. All eight digits come out at
/// once, in the lanes of one word: the two halves in 32-bit lanes, split into pairs in 16-bit
/// lanes, then into digits in bytes, in reading order (the first digit in the low byte).
#[inline]
fn write_four_places(scaled: u64, out: &mut [u8]) -> usize {
    let halves = (scaled / 10_000) | ((scaled % 10_000) << 32);
    // x·10486 >> 20 is x / 100 for x below 10⁴, and x·103 >> 10 is x / 10 below 100 (both
    // checked for every x in the tests); no lane's product reaches the next lane's bits.
    let hundreds = ((halves * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let pairs = hundreds | (halves - hundreds * 100) << 16;
    let tens = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    let digits = tens | (pairs - tens * 10) << 8;
    let skip = (digits.trailing_zeros() / 8).min(3) as usize;
    let places = 4 - (digits.leading_zeros() / 8).min(4) as usize;
    let ascii = digits | 0x3030_3030_3030_3030;
    let int_len = 4 - skip;
    out[..4].copy_from_slice(&((ascii as u32) >> (8 * skip)).to_le_bytes());
    let point = u64::from(b'.') | (ascii >> 32) << 8;
    out[int_len..int_len + 8].copy_from_slice(&point.to_le_bytes());
    int_len + places + usize::from(places != 0)
}

/// `v` in decimal at the start of `out` (room for 20 digits); returns the digit count.
fn write_integer(mut v: u64, out: &mut [u8]) -> usize {
    let len = match v {
        0..10 => 1,
        10..100 => 2,
        100..1000 => 3,
        _ => v.ilog10() as usize + 1,
    };
    let mut at = len;
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        out[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        out[at - 2..at].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        out[at - 1] = b'0' + v as u8;
    }
    len
}

/// Write the variables CSV with `theta` in the start column (a header row first).
/// Values are written with enough precision to load back to the same file when re-written.
pub fn to_csv(vars: &[Variable], theta: &[f64]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", COLUMNS.join(","));
    for (v, &t) in vars.iter().zip(theta) {
        // Rounding must not push θ outside bounds that carry more decimals than we write.
        let mut shown = format_value(t, 4);
        if shown.parse::<f64>().is_ok_and(|s| s < v.min || s > v.max) {
            shown = t.to_string();
        }
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{}",
            v.name,
            shown,
            format_setting(v.min),
            format_setting(v.max),
            format_setting(v.c_end),
            format_setting(v.r_end),
            format_setting(v.simul_elo)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The θ log's formatter before it wrote into a fixed room: the fast one must agree byte
    /// for byte (old logs and checkpoints read back the same).
    fn reference_push_value(out: &mut Vec<u8>, value: f64, decimals: usize) {
        let decimals = decimals.min(9);
        let scale = 10u64.pow(decimals as u32);
        let scaled = value.abs() * scale as f64 + 0.5;
        if !scaled.is_finite() || scaled >= 9.0e15 {
            out.extend_from_slice(value.to_string().as_bytes());
            return;
        }
        let scaled = scaled as u64;
        if scaled == 0 {
            out.push(b'0');
            return;
        }
        if value < 0.0 {
            out.push(b'-');
        }
        let mut digits = [0u8; 24];
        let mut at = digits.len();
        let (mut int, mut frac) = (scaled / scale, scaled % scale);
        let mut width = decimals;
        while width > 0 && frac.is_multiple_of(10) {
            frac /= 10;
            width -= 1;
        }
        if frac != 0 {
            for _ in 0..width {
                at -= 1;
                digits[at] = b'0' + (frac % 10) as u8;
                frac /= 10;
            }
            at -= 1;
            digits[at] = b'.';
        }
        loop {
            at -= 1;
            digits[at] = b'0' + (int % 10) as u8;
            int /= 10;
            if int == 0 {
                break;
            }
        }
        out.extend_from_slice(&digits[at..]);
    }

    proptest::proptest! {
        #[test]
        fn push_value_writes_what_the_plain_formatter_wrote(
            bits in proptest::prelude::any::<u64>(),
            mantissa in -1.0e7f64..1.0e7,
            scale in 0u32..20,
            decimals in 0usize..12,
        ) {
            for value in [f64::from_bits(bits), mantissa, mantissa / 10f64.powi(scale as i32), mantissa * 10f64.powi(scale as i32)] {
                let (mut fast, mut plain) = (b"x,".to_vec(), b"x,".to_vec());
                push_value(&mut fast, value, decimals);
                reference_push_value(&mut plain, value, decimals);
                proptest::prop_assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&plain), "{} at {}", value, decimals);
            }
        }
    }

    #[test]
    fn push_value_edges() {
        for (value, decimals, want) in [
            (0.0, 4, "0"),
            (-0.00004, 4, "0"),
            (-0.00005, 4, "-0.0001"),
            (12.5, 0, "13"),
            (1_000_000.0, 0, "1000000"),
            (99.99995, 4, "100"),
            (-5.1370569, 4, "-5.1371"),
            (0.1, 9, "0.1"),
            (9.0e15, 0, "9000000000000000"),
            (f64::NAN, 4, "NaN"),
            (f64::NEG_INFINITY, 4, "-inf"),
            // Each integer length of the one-store path, and past it.
            (7.0, 4, "7"),
            (10.05, 4, "10.05"),
            (-100.5, 4, "-100.5"),
            (1000.001, 4, "1000.001"),
            (9999.99994, 4, "9999.9999"),
            (-9999.99995, 4, "-10000"),
            (12345.0625, 4, "12345.0625"),
        ] {
            let mut out = Vec::new();
            push_value(&mut out, value, decimals);
            let mut plain = Vec::new();
            reference_push_value(&mut plain, value, decimals);
            assert_eq!(String::from_utf8_lossy(&out), want, "{value}");
            assert_eq!(out, plain, "{value}");
        }
    }

    #[test]
    fn four_places_in_lanes_match_the_reference_for_every_half() {
        // Every integer part and every set of places (each half of the word on its own, the
        // other half held at a few values): the lane arithmetic has no carry between lanes.
        for x in 0..10_000u64 {
            for other in [0, 1, 10, 100, 1000, 5000, 9999] {
                for scaled in [x * 10_000 + other, other * 10_000 + x] {
                    if scaled == 0 {
                        continue;
                    }
                    let value = scaled as f64 / 10_000.0;
                    let mut room = [0u8; FIXED_ROOM];
                    let n = write_four_places(scaled, &mut room);
                    let mut plain = Vec::new();
                    reference_push_value(&mut plain, value, 4);
                    assert_eq!(&room[..n], &plain[..], "{scaled}");
                }
            }
        }
    }

    fn p(text: &str) -> Result<Vec<Variable>, VarsError> {
        parse(text, Path::new("t.var"))
    }

    #[test]
    fn parses_rows_comments_and_names_with_spaces() {
        let vars = p("# comment\n\nPawn Structure (Endgame),100,0,200,10,0.002,1\nvar[1] ,1.5, -3 ,3,0.5,0,0\n").unwrap();
        assert_eq!(vars.len(), 2);
        assert_eq!(vars[0].name, "Pawn Structure (Endgame)");
        assert_eq!(vars[1].name, "var[1]");
        assert_eq!(vars[1].start, 1.5);
        assert_eq!(vars[1].min, -3.0);
    }

    #[test]
    fn errors_name_line_and_field() {
        let cases = [
            ("a,1,0,2,1,0\n", "t.var:1: expected 7"),
            ("\n\na,x,0,2,1,0,1\n", "t.var:3: field `start` of `a`: `x`"),
            (
                "a,1,3,2,1,0,1\n",
                "t.var:1: `a`: min (3) is greater than max (2)",
            ),
            ("a,5,0,2,1,0,1\n", "t.var:1: `a`: start (5) is outside"),
            ("a,1,0,2,0,0,1\n", "t.var:1: `a`: c_end (0) must be > 0"),
            ("a,1,0,2,1,-1,1\n", "t.var:1: `a`: R_end (-1) must be >= 0"),
            (
                "a,1,0,2,1,0,1\na,1,0,2,1,0,1\n",
                "t.var:2: duplicate variable name `a` (first at line 1)",
            ),
            ("a,nan,0,2,1,0,1\n", "t.var:1: field `start`"),
            ("# only\n", "t.var: no variables"),
        ];
        for (text, want) in cases {
            let err = p(text).unwrap_err().to_string();
            assert!(
                err.starts_with(want),
                "{text:?}: got {err:?}, want {want:?}"
            );
        }
    }

    #[test]
    fn written_csv_loads_back() {
        let vars = p("k v,100,-1000,1000,100,0.002,1\nb,2,0,5,0.5,0.01,3\n").unwrap();
        let csv = to_csv(&vars, &[12.3456789, 2.0]);
        let back = p(&csv).unwrap();
        assert_eq!(back[0].start, 12.3457);
        assert_eq!(back[1], vars[1]);
        assert_eq!(back[0].name, "k v");
    }

    #[test]
    fn fishtest_rows_import() {
        let vars = p("# from fishtest\nKnightValue, int, 300, 200, 400, 10, 0.0020\nTempo,float,12.5,0,30,1.5,0.002\nx,1,0,2,1,0,1\n").unwrap();
        assert_eq!(vars.len(), 3);
        assert_eq!(
            vars[0],
            Variable {
                name: "KnightValue".into(),
                start: 300.0,
                min: 200.0,
                max: 400.0,
                c_end: 10.0,
                r_end: 0.002,
                simul_elo: 0.0,
            }
        );
        assert_eq!(vars[1].start, 12.5);
        assert_eq!(vars[1].c_end, 1.5);
        assert_eq!(vars[2].simul_elo, 1.0, "classic rows still mix in");
        let cases = [
            ("a,int,5,0,2,1,0\n", "t.var:1: `a`: start (5) is outside"),
            ("a,int,1,0,2,0,0\n", "t.var:1: `a`: c_end (0) must be > 0"),
            (
                "a,FLOAT,1,0,2,1,-1\n",
                "t.var:1: `a`: R_end (-1) must be >= 0",
            ),
            (
                "a,int,x,0,2,1,0\n",
                "t.var:1: field `value` of `a` (int parameter row): `x`",
            ),
            ("a,int,1,0,2,1\n", "t.var:1: expected 7"),
            (
                "a,int,1,0,2,1,0\na,1,0,2,1,0,1\n",
                "t.var:2: duplicate variable name `a`",
            ),
            (
                "a,1,0,2,1,0,1\na,int,1,0,2,1,0\n",
                "t.var:2: duplicate variable name `a`",
            ),
            (",int,1,0,2,1,0\n", "t.var:1: field `name` is empty"),
            (
                "a,integer,1,0,2,1,0\n",
                "t.var:1: field `start` of `a`: `integer`",
            ),
        ];
        for (text, want) in cases {
            let err = p(text).unwrap_err().to_string();
            assert!(
                err.starts_with(want),
                "{text:?}: got {err:?}, want {want:?}"
            );
        }
    }

    #[test]
    fn settings_are_written_without_float_noise_but_keep_real_places() {
        let noisy = (7.0 - 4.0) * 0.05;
        assert_ne!(noisy.to_string(), "0.15", "the noise this is about");
        assert_eq!(format_setting(noisy), "0.15");
        assert_eq!(format_setting(0.002), "0.002");
        assert_eq!(format_setting(0.00002), "0.00002");
        assert_eq!(format_setting(-3.0), "-3");
        assert_eq!(format_setting(1e-7), "0.0000001");
        for v in [noisy, 0.00002, 123.456789, 1e-7, 0.1 + 0.2] {
            let back: f64 = format_setting(v).parse().unwrap();
            assert!((back - v).abs() <= 1e-9 * v.abs(), "{v}");
        }
    }

    #[test]
    fn format_value_trims() {
        assert_eq!(format_value(1.50001, 2), "1.5");
        assert_eq!(format_value(-0.0001, 2), "0");
        assert_eq!(format_value(100.0, 4), "100");
        assert_eq!(format_value(-12.05, 4), "-12.05");
        assert_eq!(format_value(0.00012, 4), "0.0001");
        assert_eq!(format_value(-0.5, 0), "-1");
        assert_eq!(format_value(1e300, 2).parse::<f64>().unwrap(), 1e300);
        for v in [0.1, 123.456, -7.0625, 99.99995] {
            assert_eq!(
                format_value(v, 4).parse::<f64>().unwrap(),
                (v * 1e4_f64).round() / 1e4
            );
        }
    }
}
