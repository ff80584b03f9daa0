//! The binary form: the loader's arrays, little-endian, read in 64 KiB chunks so memory stays
//! at the data's size.

use std::io::{Read, Write};
use std::path::Path;

use super::{BINARY_MAGIC, CoefficientError, Coefficients, VERSION};
use crate::positions::Outcome;

const FLAG_CONSTANTS: u32 = 1;
const CHUNK: usize = 1 << 16;

/// Writes the binary form of `c`.
pub fn write_binary(c: &Coefficients, mut out: impl Write) -> std::io::Result<()> {
    out.write_all(BINARY_MAGIC)?;
    out.write_all(&VERSION.to_le_bytes())?;
    let flags = if c.constants.is_some() {
        FLAG_CONSTANTS
    } else {
        0
    };
    out.write_all(&flags.to_le_bytes())?;
    out.write_all(&(c.variables.len() as u32).to_le_bytes())?;
    out.write_all(&(c.len() as u64).to_le_bytes())?;
    out.write_all(&(c.entries() as u64).to_le_bytes())?;
    out.write_all(&c.scale.to_le_bytes())?;
    for v in &c.variables {
        out.write_all(&(v.len() as u32).to_le_bytes())?;
        out.write_all(v.as_bytes())?;
    }
    write_all(&mut out, &c.results, |x| [x as u8])?;
    if let Some(k) = &c.constants {
        write_all(&mut out, k, |x| x.to_le_bytes())?;
    }
    let lengths: Vec<u16> = c
        .row_start
        .windows(2)
        .map(|w| (w[1] - w[0]) as u16)
        .collect();
    write_all(&mut out, &lengths, |x| x.to_le_bytes())?;
    write_all(&mut out, &c.index, |x| x.to_le_bytes())?;
    write_all(&mut out, &c.coef, |x| x.to_le_bytes())?;
    out.flush()
}

fn write_all<T: Copy, const N: usize>(
    out: &mut impl Write,
    items: &[T],
    bytes: impl Fn(T) -> [u8; N],
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(CHUNK);
    for chunk in items.chunks(CHUNK / N) {
        buf.clear();
        for &x in chunk {
            buf.extend_from_slice(&bytes(x));
        }
        out.write_all(&buf)?;
    }
    Ok(())
}

/// Reads `n` items of `N` bytes each.
fn read_array<T, const N: usize>(
    input: &mut impl Read,
    n: usize,
    path: &Path,
    what: &str,
    from: impl Fn([u8; N]) -> T,
) -> Result<Vec<T>, CoefficientError> {
    let mut out = Vec::with_capacity(n);
    let mut buf = vec![0u8; CHUNK / N * N];
    let mut left = n;
    while left > 0 {
        let take = left.min(CHUNK / N);
        let bytes = &mut buf[..take * N];
        input
            .read_exact(bytes)
            .map_err(|e| truncated(path, what, e))?;
        out.extend(
            bytes
                .chunks_exact(N)
                .map(|b| from(b.try_into().expect("chunks of N"))),
        );
        left -= take;
    }
    Ok(out)
}

fn truncated(path: &Path, what: &str, e: std::io::Error) -> CoefficientError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        CoefficientError::format(path, 0, what, "the file ends early (truncated?)")
    } else {
        CoefficientError::io(path, e)
    }
}

fn read_u32(input: &mut impl Read, path: &Path, what: &str) -> Result<u32, CoefficientError> {
    let mut b = [0u8; 4];
    input
        .read_exact(&mut b)
        .map_err(|e| truncated(path, what, e))?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(input: &mut impl Read, path: &Path, what: &str) -> Result<u64, CoefficientError> {
    let mut b = [0u8; 8];
    input
        .read_exact(&mut b)
        .map_err(|e| truncated(path, what, e))?;
    Ok(u64::from_le_bytes(b))
}

pub(super) fn read(mut input: impl Read, path: &Path) -> Result<Coefficients, CoefficientError> {
    let bad = |field: &str, msg: &str| CoefficientError::format(path, 0, field, msg);
    let mut magic = [0u8; 8];
    input
        .read_exact(&mut magic)
        .map_err(|e| truncated(path, "magic", e))?;
    if &magic != BINARY_MAGIC {
        return Err(bad("magic", "not a binary coefficient file"));
    }
    if read_u32(&mut input, path, "version")? != VERSION {
        return Err(bad("version", "this program reads version 1"));
    }
    let flags = read_u32(&mut input, path, "flags")?;
    if flags & !FLAG_CONSTANTS != 0 {
        return Err(bad("flags", "unknown flags"));
    }
    let nvars = read_u32(&mut input, path, "variables")? as usize;
    let npos = read_u64(&mut input, path, "positions")?;
    let nnz = read_u64(&mut input, path, "entries")?;
    let mut scale = [0u8; 8];
    input
        .read_exact(&mut scale)
        .map_err(|e| truncated(path, "scale", e))?;
    let scale = f64::from_le_bytes(scale);
    if nvars == 0 || nvars > usize::from(u16::MAX) {
        return Err(bad("variables", "between 1 and 65535 variables expected"));
    }
    if nnz > u64::from(u32::MAX) || npos >= u64::from(u32::MAX) {
        return Err(bad("entries", "more than 2^32 entries or positions"));
    }
    if !(scale.is_finite() && scale > 0.0) {
        return Err(bad("scale", "must be a positive number"));
    }
    let (npos, nnz) = (npos as usize, nnz as usize);
    let mut variables = Vec::with_capacity(nvars);
    for _ in 0..nvars {
        let len = read_u32(&mut input, path, "variable name")? as usize;
        if len > 4096 {
            return Err(bad("variable name", "longer than 4096 bytes"));
        }
        let mut name = vec![0u8; len];
        input
            .read_exact(&mut name)
            .map_err(|e| truncated(path, "variable name", e))?;
        variables.push(String::from_utf8(name).map_err(|_| bad("variable name", "not UTF-8"))?);
    }
    let codes = read_array(&mut input, npos, path, "results", |[b]: [u8; 1]| b)?;
    let mut results = Vec::with_capacity(npos);
    for code in codes {
        results.push(match code {
            0 => Outcome::BlackWins,
            1 => Outcome::Draw,
            2 => Outcome::WhiteWins,
            _ => return Err(bad("results", "a result code other than 0, 1, 2")),
        });
    }
    let constants = if flags & FLAG_CONSTANTS != 0 {
        Some(read_array(
            &mut input,
            npos,
            path,
            "constants",
            f32::from_le_bytes,
        )?)
    } else {
        None
    };
    let lengths = read_array(&mut input, npos, path, "row lengths", u16::from_le_bytes)?;
    let mut row_start = Vec::with_capacity(npos + 1);
    let mut at = 0usize;
    row_start.push(0u32);
    for len in lengths {
        at += usize::from(len);
        row_start.push(at as u32);
    }
    if at != nnz {
        return Err(bad("row lengths", "do not add up to the entry count"));
    }
    let index = read_array(&mut input, nnz, path, "indices", u16::from_le_bytes)?;
    if index.iter().any(|&i| usize::from(i) >= nvars) {
        return Err(bad("indices", "an index beyond the variables"));
    }
    let coef = read_array(&mut input, nnz, path, "coefficients", f32::from_le_bytes)?;
    let mut rest = [0u8; 1];
    if input
        .read(&mut rest)
        .map_err(|e| CoefficientError::io(path, e))?
        != 0
    {
        return Err(bad("end", "bytes after the last coefficient"));
    }
    Ok(Coefficients {
        variables,
        scale,
        results,
        constants,
        row_start,
        index,
        coef,
    })
}
