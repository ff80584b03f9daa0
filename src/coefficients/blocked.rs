//! The coefficients rearranged for the epoch's hot loop: positions in blocks of [`BLOCK`]; in a
//! block, the variables most positions use are stored dense and interleaved in groups of
//! [`GROUP`] positions (for each group, each such variable's [`GROUP`] coefficients in turn), so
//! the block is one linear stream of f32, and both the dot products (`score[p] += w·c[p]`, the
//! group's scores held in registers across the variables) and the gradient (`Σ_p ℓ'_p·c[p]`, a
//! [`GROUP`]-lane sum per variable) are plain loops the compiler vectorises, with no gather of
//! weights and no scatter into the gradient. A variable few of the block's positions use is kept
//! sparse instead (a `u8` position in the block and the coefficient).
//!
//! Built once per [`super::objective::Objective`] from the compressed rows; the values are the
//! file's own f32 coefficients, so the scores and gradient are those of the rows up to the order
//! of the f64 additions (exact for integer data).

use std::ops::Range;

use super::Coefficients;

/// Positions per block: a block's scores (2 KiB of f64) and its dense coefficients (1 KiB per
/// variable) stay in L1 between the three passes over it (dot products, loss, gradient). A `u8`
/// holds a position within it.
pub const BLOCK: usize = 256;

/// Positions interleaved: 8 f64 scores are two AVX registers (four SSE2 ones).
pub const GROUP: usize = 8;

/// A variable is stored dense in a block when at least 1/`DENSE_FROM` of the block's positions
/// use it: then a vectorised pass over all of them (zeros included) is cheaper than visiting the
/// entries one by one, and the bytes are about the same (4 per position against 5 per entry).
const DENSE_FROM: usize = 4;

/// Where block `b`'s parts start (block `b + 1`'s entry says where they end).
#[derive(Clone, Copy, Debug)]
struct Head {
    /// Its interleaved dense coefficients in `dense`.
    dense_at: u32,
    /// Its dense variables in `dense_variables`.
    dense_variables: u32,
    /// Its sparse variables in `sparse`.
    sparse: u32,
}

/// One variable's entries in one block: `sparse_at[at..at + len]` (positions in the block,
/// ascending) and `sparse_coef` alike.
#[derive(Clone, Copy, Debug)]
struct Sparse {
    variable: u16,
    at: u32,
    len: u32,
}

/// Positions in blocks (see the module documentation).
#[derive(Clone, Debug)]
pub struct Blocked {
    heads: Vec<Head>,
    dense: Vec<f32>,
    dense_variables: Vec<u16>,
    sparse: Vec<Sparse>,
    sparse_at: Vec<u8>,
    sparse_coef: Vec<f32>,
}

/// Per-thread working space of the hot loop, reused from block to block.
#[derive(Default)]
pub struct Scratch {
    /// The weights of the block's dense variables, in its order.
    weights: Vec<f64>,
}

impl Blocked {
    pub fn new(data: &Coefficients) -> Blocked {
        let n = data.len();
        let variables = data.variables.len();
        let mut out = Blocked {
            heads: Vec::with_capacity(n / BLOCK + 2),
            dense: Vec::new(),
            dense_variables: Vec::new(),
            sparse: Vec::new(),
            sparse_at: Vec::new(),
            sparse_coef: Vec::new(),
        };
        // Per variable, the block's entries in position order.
        let mut entries: Vec<Vec<(u8, f32)>> = vec![Vec::new(); variables];
        // Per dense variable, its value at each position of the block.
        let mut cells: Vec<Vec<f64>> = Vec::new();
        for start in (0..n).step_by(BLOCK) {
            out.heads.push(out.head());
            let len = BLOCK.min(n - start);
            entries.iter_mut().for_each(Vec::clear);
            for p in start..start + len {
                let (idx, coef) = data.row(p);
                for (&i, &c) in idx.iter().zip(coef) {
                    entries[usize::from(i)].push(((p - start) as u8, c));
                }
            }
            let mut dense = 0;
            for (variable, list) in entries.iter().enumerate() {
                if list.is_empty() {
                    continue;
                }
                if cells.len() == dense {
                    cells.push(vec![0.0; BLOCK]);
                }
                if list.len() * DENSE_FROM >= len && dense_cells(list, &mut cells[dense]) {
                    out.dense_variables.push(variable as u16);
                    dense += 1;
                } else {
                    let at = out.sparse_at.len() as u32;
                    out.sparse_at.extend(list.iter().map(|e| e.0));
                    out.sparse_coef.extend(list.iter().map(|e| e.1));
                    out.sparse.push(Sparse {
                        variable: variable as u16,
                        at,
                        len: list.len() as u32,
                    });
                }
            }
            // Interleave: group by group, variable by variable (zeros past the block's end).
            for g in 0..len.div_ceil(GROUP) {
                for column in &cells[..dense] {
                    out.dense
                        .extend(column[g * GROUP..][..GROUP].iter().map(|&c| c as f32));
                }
            }
        }
        out.heads.push(out.head());
        out
    }

    /// Where the next block's parts start.
    fn head(&self) -> Head {
        Head {
            dense_at: self.dense.len() as u32,
            dense_variables: self.dense_variables.len() as u32,
            sparse: self.sparse.len() as u32,
        }
    }

    /// Bytes of the arrays an epoch reads here (the results and constants are read from the
    /// [`Coefficients`] beside them).
    pub fn heap_bytes(&self) -> usize {
        self.heads.len() * std::mem::size_of::<Head>()
            + self.dense.len() * 4
            + self.dense_variables.len() * 2
            + self.sparse.len() * std::mem::size_of::<Sparse>()
            + self.sparse_at.len()
            + self.sparse_coef.len() * 4
    }

    /// Block `b`'s dense variables, its interleaved coefficients, and its sparse variables.
    fn block(&self, b: usize) -> (&[u16], &[f32], &[Sparse]) {
        let (h, next) = (self.heads[b], self.heads[b + 1]);
        (
            &self.dense_variables[h.dense_variables as usize..next.dense_variables as usize],
            &self.dense[h.dense_at as usize..next.dense_at as usize],
            &self.sparse[h.sparse as usize..next.sparse as usize],
        )
    }

    /// Adds `Σ_j w_j·c_pj` to `q[p]` for the positions `p` in `range` of block `b` (block-local).
    /// Other entries of `q` may change too (the rest of the groups `range` touches, and the
    /// positions of sparse entries), so they must not be read as scores.
    #[inline(always)]
    pub fn add_scores(
        &self,
        b: usize,
        range: Range<usize>,
        w: &[f64],
        q: &mut [f64; BLOCK],
        scratch: &mut Scratch,
    ) {
        let (variables, dense, sparse) = self.block(b);
        let nd = variables.len();
        if nd > 0 {
            scratch.weights.clear();
            scratch
                .weights
                .extend(variables.iter().map(|&v| w[usize::from(v)]));
            let groups = group_range(&range);
            let data = &dense[groups.start * nd * GROUP..groups.end * nd * GROUP];
            let (q_groups, _) = q.as_chunks_mut::<GROUP>();
            for (acc, group) in q_groups[groups]
                .iter_mut()
                .zip(data.chunks_exact(nd * GROUP))
            {
                let mut s = *acc;
                for (c, &w) in group.as_chunks::<GROUP>().0.iter().zip(&scratch.weights) {
                    for l in 0..GROUP {
                        s[l] += w * f64::from(c[l]);
                    }
                }
                *acc = s;
            }
        }
        for column in sparse {
            let w = w[usize::from(column.variable)];
            let (at, len) = (column.at as usize, column.len as usize);
            let (pos, coef) = (
                &self.sparse_at[at..at + len],
                &self.sparse_coef[at..at + len],
            );
            for (&p, &c) in pos.iter().zip(coef) {
                q[usize::from(p)] += w * f64::from(c);
            }
        }
    }

    /// Adds `Σ_p d[p]·c_pj` over the positions `p` in `range` of block `b` (block-local) to
    /// `g[j]` for every variable j the block uses. `d` outside `range` is set to zero first.
    #[inline(always)]
    pub fn add_gradient(&self, b: usize, range: Range<usize>, d: &mut [f64; BLOCK], g: &mut [f64]) {
        d[..range.start].fill(0.0);
        d[range.end..].fill(0.0);
        let (variables, dense, sparse) = self.block(b);
        let nd = variables.len();
        if nd > 0 {
            // Variable by variable down the groups (a stride of `nd` groups), the sum in
            // registers: with the variables in the inner loop, the compiler vectorised across
            // them instead, with shuffles.
            let groups = group_range(&range);
            let data = &dense[groups.start * nd * GROUP..groups.end * nd * GROUP];
            let d_groups = &d.as_chunks::<GROUP>().0[groups];
            for (k, &v) in variables.iter().enumerate() {
                let mut acc = [0.0f64; GROUP];
                for (dv, group) in d_groups.iter().zip(data.chunks_exact(nd * GROUP)) {
                    let c = &group[k * GROUP..][..GROUP];
                    for l in 0..GROUP {
                        acc[l] += dv[l] * f64::from(c[l]);
                    }
                }
                g[usize::from(v)] += lanes_sum(&acc);
            }
        }
        for column in sparse {
            let (at, len) = (column.at as usize, column.len as usize);
            let (pos, coef) = (
                &self.sparse_at[at..at + len],
                &self.sparse_coef[at..at + len],
            );
            let mut sum = 0.0;
            for (&p, &c) in pos.iter().zip(coef) {
                sum += d[usize::from(p)] * f64::from(c);
            }
            g[usize::from(column.variable)] += sum;
        }
    }

    /// How many (block, variable) pairs are stored dense and how many sparse (for tests of the
    /// layout).
    #[cfg(test)]
    pub fn column_kinds(&self) -> (usize, usize) {
        (self.dense_variables.len(), self.sparse.len())
    }
}

/// The groups that hold the positions in `range`.
fn group_range(range: &Range<usize>) -> Range<usize> {
    range.start / GROUP..range.end.div_ceil(GROUP)
}

/// The lanes added in a fixed order, first to last (so every run gives the same bits; a tree
/// order made the compiler shuffle lanes in the loop that fills them).
#[inline(always)]
fn lanes_sum(a: &[f64; GROUP]) -> f64 {
    a.iter().sum()
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
