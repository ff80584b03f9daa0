//! The coefficients rearranged for the epoch's hot loop: positions in blocks of [`BLOCK`], and
//! within a block one column per variable the block uses, so the dot products run as
//! `score[p] += w·c[p]` down a column and the gradient as `Σ_p ℓ'_p·c[p]` down the same column:
//! both are plain loops over contiguous f32 that the compiler vectorises, with no gather of
//! weights and no scatter into the gradient. A column most of whose positions are zero is kept
//! sparse instead (a `u8` position in the block and the coefficient).
//!
//! Built once per [`super::objective::Objective`] from the compressed rows; the values are the
//! file's own f32 coefficients, so the scores and gradient are those of the rows up to the order
//! of the f64 additions (exact for integer data).

use super::Coefficients;

/// Positions per block: a block's scores (2 KiB of f64) and one column at a time stay in L1
/// between the three passes over it (dot products, loss, gradient). A `u8` holds a position
/// within it.
pub const BLOCK: usize = 256;

/// A column is stored dense when at least 1/`DENSE_FROM` of the block's positions use it: then a
/// vectorised pass over all of them (zeros included) is cheaper than visiting the entries one by
/// one, and the bytes are about the same (4 per position against 5 per entry).
const DENSE_FROM: usize = 4;

/// One variable's coefficients over one block.
#[derive(Clone, Copy, Debug)]
enum Column {
    /// `dense[at..at + block length]`, one per position of the block.
    Dense { variable: u16, at: u32 },
    /// `sparse_at[at..at + len]` (positions in the block, ascending) and `sparse_coef` alike.
    Sparse { variable: u16, at: u32, len: u32 },
}

/// Positions in blocks of columns (see the module documentation).
#[derive(Clone, Debug)]
pub struct Blocked {
    /// Columns of block `b` are `columns[block_columns[b]..block_columns[b + 1]]`.
    block_columns: Vec<u32>,
    columns: Vec<Column>,
    dense: Vec<f32>,
    sparse_at: Vec<u8>,
    sparse_coef: Vec<f32>,
}

impl Blocked {
    pub fn new(data: &Coefficients) -> Blocked {
        let n = data.len();
        let variables = data.variables.len();
        let mut out = Blocked {
            block_columns: vec![0],
            columns: Vec::new(),
            dense: Vec::new(),
            sparse_at: Vec::new(),
            sparse_coef: Vec::new(),
        };
        // Per variable, the block's entries in position order.
        let mut entries: Vec<Vec<(u8, f32)>> = vec![Vec::new(); variables];
        let mut cell = vec![0.0f64; BLOCK];
        for start in (0..n).step_by(BLOCK) {
            let len = BLOCK.min(n - start);
            entries.iter_mut().for_each(Vec::clear);
            for p in start..start + len {
                let (idx, coef) = data.row(p);
                for (&i, &c) in idx.iter().zip(coef) {
                    entries[usize::from(i)].push(((p - start) as u8, c));
                }
            }
            for (variable, list) in entries.iter().enumerate() {
                if list.is_empty() {
                    continue;
                }
                let variable = variable as u16;
                if list.len() * DENSE_FROM >= len && dense_cells(list, &mut cell[..len]) {
                    let at = out.dense.len() as u32;
                    out.dense.extend(cell[..len].iter().map(|&c| c as f32));
                    out.columns.push(Column::Dense { variable, at });
                } else {
                    let at = out.sparse_at.len() as u32;
                    out.sparse_at.extend(list.iter().map(|e| e.0));
                    out.sparse_coef.extend(list.iter().map(|e| e.1));
                    out.columns.push(Column::Sparse {
                        variable,
                        at,
                        len: list.len() as u32,
                    });
                }
            }
            out.block_columns.push(out.columns.len() as u32);
        }
        out
    }

    /// Bytes of the arrays an epoch reads here (the results and constants are read from the
    /// [`Coefficients`] beside them).
    pub fn heap_bytes(&self) -> usize {
        self.block_columns.len() * 4
            + self.columns.len() * std::mem::size_of::<Column>()
            + self.dense.len() * 4
            + self.sparse_at.len()
            + self.sparse_coef.len() * 4
    }

    /// Adds `Σ_j w_j·c_pj` to `q[p - lo]` for the positions `lo..lo + q.len()` of block `b`
    /// (block-local), column by column in the block's order.
    #[inline(always)]
    pub fn add_scores(&self, b: usize, lo: usize, w: &[f64], q: &mut [f64]) {
        let n = q.len();
        for column in self.block(b) {
            match *column {
                Column::Dense { variable, at } => {
                    let w = w[usize::from(variable)];
                    let at = at as usize + lo;
                    for (s, &c) in q.iter_mut().zip(&self.dense[at..at + n]) {
                        *s += w * f64::from(c);
                    }
                }
                Column::Sparse { variable, at, len } => {
                    let w = w[usize::from(variable)];
                    let (at, len) = (at as usize, len as usize);
                    let (pos, coef) = (
                        &self.sparse_at[at..at + len],
                        &self.sparse_coef[at..at + len],
                    );
                    for (&p, &c) in pos.iter().zip(coef) {
                        let i = usize::from(p).wrapping_sub(lo);
                        if i < n {
                            q[i] += w * f64::from(c);
                        }
                    }
                }
            }
        }
    }

    /// Adds `Σ_p d[p - lo]·c_pj` to `g[j]` for every variable j of block `b`, over the positions
    /// `lo..lo + d.len()` (block-local); each column's sum is kept in 4 lanes.
    #[inline(always)]
    pub fn add_gradient(&self, b: usize, lo: usize, d: &[f64], g: &mut [f64]) {
        let n = d.len();
        for column in self.block(b) {
            match *column {
                Column::Dense { variable, at } => {
                    let at = at as usize + lo;
                    g[usize::from(variable)] += dot_in_lanes(d, &self.dense[at..at + n]);
                }
                Column::Sparse { variable, at, len } => {
                    let (at, len) = (at as usize, len as usize);
                    let (pos, coef) = (
                        &self.sparse_at[at..at + len],
                        &self.sparse_coef[at..at + len],
                    );
                    let mut sum = 0.0;
                    for (&p, &c) in pos.iter().zip(coef) {
                        let i = usize::from(p).wrapping_sub(lo);
                        if i < n {
                            sum += d[i] * f64::from(c);
                        }
                    }
                    g[usize::from(variable)] += sum;
                }
            }
        }
    }

    /// How many columns are stored dense and how many sparse (for tests of the layout).
    #[cfg(test)]
    pub fn column_kinds(&self) -> (usize, usize) {
        let dense = self
            .columns
            .iter()
            .filter(|c| matches!(c, Column::Dense { .. }))
            .count();
        (dense, self.columns.len() - dense)
    }

    fn block(&self, b: usize) -> &[Column] {
        &self.columns[self.block_columns[b] as usize..self.block_columns[b + 1] as usize]
    }
}

/// Fills `cell` with the column's value per position (entries of the same position added up in
/// f64); false when such a sum is not exactly an f32, so the column must stay sparse to be exact.
fn dense_cells(list: &[(u8, f32)], cell: &mut [f64]) -> bool {
    cell.iter_mut().for_each(|c| *c = 0.0);
    for &(p, c) in list {
        cell[usize::from(p)] += f64::from(c);
    }
    cell.iter().all(|&c| f64::from(c as f32) == c)
}

/// Σ d·c in 4 running sums, combined in a fixed order (vectorises; the same result every time).
#[inline(always)]
fn dot_in_lanes(d: &[f64], c: &[f32]) -> f64 {
    const LANES: usize = 4;
    let mut acc = [0.0f64; LANES];
    let mut dc = d.chunks_exact(LANES);
    let mut cc = c.chunks_exact(LANES);
    for (d, c) in (&mut dc).zip(&mut cc) {
        for l in 0..LANES {
            acc[l] += d[l] * f64::from(c[l]);
        }
    }
    for (l, (&d, &c)) in dc.remainder().iter().zip(cc.remainder()).enumerate() {
        acc[l] += d * f64::from(c);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}
