//! Coefficient files: an engine's evaluation exported as a linear function of its weights, so a
//! tuner can compute the loss over millions of positions and its exact gradient in milliseconds
//! (issue 9; the format is the contract between `spsa` and engines that export it, such as the
//! bundled sparring engine, which writes it with its own code).
//!
//! # Text form (version 1)
//!
//! ```text
//! spsa-coefficients 1
//! # comment lines start with '#', blank lines are skipped
//! scale 800          # optional, default 1: coefficients and constants are in 1/scale centipawns
//! phase-range 24     # optional, default 1: phases run from 0 (endgame) to this (middlegame)
//! variable PawnValue # one line per variable, in index order: index 0, 1, 2, ...
//! variable KnightValue
//! 1 0:2 1:-1                               # untapered: result, then index:coefficient pairs
//! 0.5 const=-37.5 0:1 1:3                  # with a part not being tuned
//! 0 phase=17 mg 0:1 1:2 eg 0:1.5 1:2       # tapered: middlegame and endgame parts
//! ```
//!
//! A position line starts with the game result from White's point of view (`1`, `0.5` or `0`;
//! `1-0`, `1/2-1/2` and `0-1` are accepted too, as in labelled-position files). Then, in any order before
//! the coefficients: `const=C` (a part of the score no variable moves) and `phase=P` (0 ≤ P ≤
//! phase-range). Without `phase=` the rest of the line is `index:coefficient` pairs; with it, the
//! word `mg` and the middlegame pairs, then `eg` and the endgame pairs. An index may appear more
//! than once (the coefficients add up). The score of the position, in centipawns from White's
//! point of view, is
//!
//! ```text
//! untapered: (C + Σ c_i·w_i) / scale
//! tapered:   (C + (P·Σ mg_i·w_i + (R − P)·Σ eg_i·w_i) / R) / scale      R = phase-range
//! ```
//!
//! where `w_i` is the value of variable `i` in the units the engine receives (its `setoption`
//! values). Integer coefficients with an integer `scale` and `phase-range` let an engine whose
//! evaluation works in fractions of a centipawn export it exactly: the loader multiplies each
//! tapered line out into one coefficient per variable, in units of 1/(scale·phase-range), so
//! integers stay integers (exact in `f32` up to 2^24).
//!
//! # Binary form (version 1)
//!
//! The same data as the loader holds it, little-endian: the magic `SPSACOEF`, `u32` version,
//! `u32` flags (bit 0: constants present), `u32` variable count, `u64` positions, `u64` entries,
//! `f64` scale (already multiplied by the phase range); each variable name as `u32` length and
//! UTF-8 bytes; `u8` results (0 Black wins, 1 draw, 2 White wins); `f32` constants (if flagged); `u16` entries per position; `u16`
//! indices; `f32` coefficients. `spsa coefficients IN OUT.coefb` converts; the loader tells the
//! two forms apart by the magic.
//!
//! # In memory
//!
//! Flat arrays in compressed sparse rows (one `row_start` offset per position, `u16` index and
//! `f32` coefficient per entry): 6 bytes per entry plus 5 per position (9 with constants), nothing per position on
//! the heap.

mod binary;
mod blocked;
pub mod estimated;
pub mod fit;
pub mod objective;
mod text;

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use rand::SeedableRng;
use rand::seq::SliceRandom;

use crate::config::positions::{PositionsConfig, Validation};
use crate::positions::Outcome;

pub use binary::write_binary;
pub use text::write_text;

/// Magic bytes that open the binary form.
pub const BINARY_MAGIC: &[u8; 8] = b"SPSACOEF";
/// The first word of the text form.
pub const TEXT_MAGIC: &str = "spsa-coefficients";
/// The format version this code reads and writes.
pub const VERSION: u32 = 1;

/// Why a coefficient file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CoefficientError {
    #[error("{}: cannot read or write the coefficient file", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A bad line of the text form, or a bad record of the binary form (`line` 0).
    #[error("{}{}: {field}: {message}", path.display(), if *line > 0 { format!(":{line}") } else { String::new() })]
    Format {
        path: PathBuf,
        line: usize,
        field: String,
        message: String,
    },
}

/// A coefficient file that cannot be read, or written where the user asked, is the user's to
/// fix.
impl crate::error::UserFacing for CoefficientError {
    fn is_user_error(&self) -> bool {
        true
    }
}

impl CoefficientError {
    fn format(
        path: &Path,
        line: usize,
        field: impl Into<String>,
        message: impl fmt::Display,
    ) -> Self {
        CoefficientError::Format {
            path: path.to_path_buf(),
            line,
            field: field.into(),
            message: message.to_string(),
        }
    }
    fn io(path: &Path, source: std::io::Error) -> Self {
        CoefficientError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Positions as sparse linear functions of the variables, in flat arrays.
#[derive(Clone, Debug, PartialEq)]
pub struct Coefficients {
    /// Variable names by index.
    pub variables: Vec<String>,
    /// Stored coefficients and constants are in 1/`scale` centipawns.
    pub scale: f64,
    /// Result of each position's game from White's point of view.
    pub results: Vec<Outcome>,
    /// The part of each score no variable moves (None when every one is 0).
    pub constants: Option<Vec<f32>>,
    /// Entries of position `p` are `row_start[p]..row_start[p + 1]`.
    pub row_start: Vec<u32>,
    pub index: Vec<u16>,
    pub coef: Vec<f32>,
}

impl Coefficients {
    /// An empty set over these variables, to be filled with [`Coefficients::push`].
    pub fn new(variables: Vec<String>, scale: f64) -> Coefficients {
        Coefficients {
            variables,
            scale,
            results: Vec::new(),
            constants: None,
            row_start: vec![0],
            index: Vec::new(),
            coef: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.results.len()
    }

    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    /// Number of (index, coefficient) entries over all positions.
    pub fn entries(&self) -> usize {
        self.index.len()
    }

    /// Bytes the arrays occupy: what "memory near the data's own size" is measured against.
    pub fn heap_bytes(&self) -> usize {
        self.results.len()
            + self.constants.as_ref().map_or(0, |c| c.len() * 4)
            + self.row_start.len() * 4
            + self.index.len() * 2
            + self.coef.len() * 4
    }

    /// Appends a position (entries in stored units, indices below `variables.len()`).
    pub fn push(&mut self, result: Outcome, constant: f32, entries: &[(u16, f32)]) {
        if constant != 0.0 && self.constants.is_none() {
            self.constants = Some(vec![0.0; self.results.len()]);
        }
        if let Some(c) = &mut self.constants {
            c.push(constant);
        }
        self.results.push(result);
        for &(i, c) in entries {
            self.index.push(i);
            self.coef.push(c);
        }
        self.row_start.push(self.index.len() as u32);
    }

    /// The entries of position `p`.
    pub fn row(&self, p: usize) -> (&[u16], &[f32]) {
        let (a, b) = (self.row_start[p] as usize, self.row_start[p + 1] as usize);
        (&self.index[a..b], &self.coef[a..b])
    }

    pub fn constant(&self, p: usize) -> f32 {
        self.constants.as_ref().map_or(0.0, |c| c[p])
    }

    /// Score of position `p` in stored units (multiply by 1/`scale` for centipawns), summed in
    /// f64: with integer coefficients and weights it is exact.
    pub fn raw_score(&self, p: usize, weights: &[f64]) -> f64 {
        let (idx, coef) = self.row(p);
        let mut s = f64::from(self.constant(p));
        for (&i, &c) in idx.iter().zip(coef) {
            s += f64::from(c) * weights[i as usize];
        }
        s
    }

    /// Score of position `p` in centipawns from White's point of view.
    pub fn score(&self, p: usize, weights: &[f64]) -> f64 {
        self.raw_score(p, weights) / self.scale
    }

    /// The positions whose numbers `keep` lists, in that order (for train/validation splits).
    pub fn select(&self, keep: &[usize]) -> Coefficients {
        let mut out = Coefficients::new(self.variables.clone(), self.scale);
        let entries: usize = keep
            .iter()
            .map(|&p| (self.row_start[p + 1] - self.row_start[p]) as usize)
            .sum();
        out.results.reserve(keep.len());
        out.row_start.reserve(keep.len());
        out.index.reserve(entries);
        out.coef.reserve(entries);
        if self.constants.is_some() {
            out.constants = Some(Vec::with_capacity(keep.len()));
        }
        for &p in keep {
            let (idx, coef) = self.row(p);
            out.results.push(self.results[p]);
            if let Some(c) = &mut out.constants {
                c.push(self.constant(p));
            }
            out.index.extend_from_slice(idx);
            out.coef.extend_from_slice(coef);
            out.row_start.push(out.index.len() as u32);
        }
        out
    }

    /// Column `i` of the variables, by name (case-insensitive, as UCI option names are).
    pub fn variable_index(&self, name: &str) -> Option<usize> {
        self.variables
            .iter()
            .position(|v| v.eq_ignore_ascii_case(name))
    }
}

/// Reads a coefficient file in either form (told apart by its first bytes).
pub fn load(path: &Path) -> Result<Coefficients, CoefficientError> {
    let file = std::fs::File::open(path).map_err(|e| CoefficientError::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let head = reader
        .fill_buf()
        .map_err(|e| CoefficientError::io(path, e))?;
    if head.starts_with(BINARY_MAGIC) {
        binary::read(&mut reader, path)
    } else {
        text::read(reader, path)
    }
}

/// Parses the text form from memory (`path` names it in errors).
pub fn parse_text(text: &str, path: &Path) -> Result<Coefficients, CoefficientError> {
    text::read(text.as_bytes(), path)
}

/// Reads the binary form from any reader (`path` names it in errors).
pub fn read_binary(reader: impl Read, path: &Path) -> Result<Coefficients, CoefficientError> {
    binary::read(reader, path)
}

/// Train and validation sets of a `[positions]` table that names coefficient files: a validation file, or a seeded fraction held out. The training
/// positions are shuffled (seeded) so mini-batches are contiguous and still random.
pub fn split_sets(
    positions: &PositionsConfig,
    seed: u64,
) -> Result<(Coefficients, Option<Coefficients>)> {
    let all = load(&positions.train)?;
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    match &positions.validation {
        Validation::None => Ok((all.select(&order), None)),
        Validation::File(path) => {
            let v = load(path)?;
            if v.variables != all.variables {
                bail!(
                    "{}: its variables differ from those of {}",
                    path.display(),
                    positions.train.display()
                );
            }
            Ok((all.select(&order), Some(v)))
        }
        Validation::Fraction(f) => {
            let held = ((all.len() as f64) * f).round() as usize;
            if held == 0 || held == all.len() {
                bail!(
                    "{}: validation_fraction {f} of {} positions leaves no training or no validation positions",
                    positions.train.display(),
                    all.len()
                );
            }
            let (v, t) = order.split_at(held);
            Ok((all.select(t), Some(all.select(v))))
        }
    }
}

#[cfg(test)]
mod tests;
