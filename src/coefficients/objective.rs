//! The mean loss over a coefficient set and its exact gradient with respect to the tuned
//! variables, computed in one pass over the flat arrays, split over threads.
//!
//! For position p with score q_p = (C_p + Σ_j c_pj·w_j)/scale, the mean loss is
//! L = (1/N)·Σ_p ℓ(R_p, q_p) and ∂L/∂w_j = (1/N)·Σ_p ℓ'(R_p, q_p)·c_pj/scale: one read of each
//! entry for the dot product, one for the scatter into the gradient, with the row still in cache.

use std::ops::Range;

use super::Coefficients;
use crate::positions::{Loss, Outcome};
use crate::vars::Variable;

/// Why a coefficient file does not fit a variables file.
#[derive(Debug, thiserror::Error)]
pub enum MappingError {
    #[error(
        "variable `{0}` of the coefficient file is not in the variables file (add it; min = max = its value holds it fixed)"
    )]
    Missing(String),
}

/// What the optimisers need of a training or validation set: its size, the mean loss at θ, and
/// the mean loss over a range of positions with its gradient (exact from a coefficient file, or
/// estimated through UCI by [`super::estimated`]).
pub trait Model: Sync {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn loss(&self, loss: &Loss, theta: &[f64]) -> f64;
    fn loss_and_gradient(
        &self,
        loss: &Loss,
        theta: &[f64],
        range: Range<usize>,
        grad: &mut [f64],
    ) -> f64;
}

impl Model for Objective<'_> {
    fn len(&self) -> usize {
        Objective::len(self)
    }
    fn loss(&self, loss: &Loss, theta: &[f64]) -> f64 {
        Objective::loss(self, loss, theta)
    }
    fn loss_and_gradient(
        &self,
        loss: &Loss,
        theta: &[f64],
        range: Range<usize>,
        grad: &mut [f64],
    ) -> f64 {
        Objective::loss_and_gradient(self, loss, theta, range, grad)
    }
}

/// A coefficient set seen through a variables file: the loss and gradient as functions of θ
/// (the variables file's order).
pub struct Objective<'a> {
    data: &'a Coefficients,
    /// The same rows as a dense matrix, when that is no larger (see [`Dense`]).
    dense: Option<Dense>,
    /// θ index of each coefficient-file variable.
    column: Vec<usize>,
    dimension: usize,
    threads: usize,
}

impl<'a> Objective<'a> {
    /// Matches the file's variables to `vars` by name (case-insensitive, as UCI options are).
    /// Every file variable must be tuned or held fixed by the variables file; variables the
    /// file does not name have a zero gradient (the evaluation does not use them).
    pub fn new(
        data: &'a Coefficients,
        vars: &[Variable],
        threads: usize,
    ) -> Result<Objective<'a>, MappingError> {
        let column = data
            .variables
            .iter()
            .map(|name| {
                vars.iter()
                    .position(|v| v.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| MappingError::Missing(name.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Objective {
            data,
            dense: Dense::of(data),
            column,
            dimension: vars.len(),
            threads: threads.max(1),
        })
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Whether the epoch runs over the dense copy of the rows (see [`Dense`]).
    pub fn is_dense(&self) -> bool {
        self.dense.is_some()
    }

    /// Use the sparse rows even where a dense copy would do (to measure one against the other).
    pub fn force_sparse(&mut self) {
        self.dense = None;
    }

    /// The bytes one epoch reads: the rows in the form it uses, the results and the constants
    /// (the bound of reading the data once is measured over this many).
    pub fn bytes_per_epoch(&self) -> usize {
        let n = self.data.len();
        let rows = match &self.dense {
            Some(d) => d.x.len() * 4,
            None => (n + 1) * 4 + self.data.entries() * 6,
        };
        rows + n + self.data.constants.as_ref().map_or(0, |c| c.len() * 4)
    }

    /// The weights in the file's order, from θ.
    fn weights(&self, theta: &[f64]) -> Vec<f64> {
        self.column.iter().map(|&c| theta[c]).collect()
    }

    /// The weights in a table a `u16` index cannot overrun: the hot loop needs no bounds checks.
    fn weight_table(&self, theta: &[f64]) -> Box<IndexTable> {
        let mut w = zero_table();
        for (j, &c) in self.column.iter().enumerate() {
            w[j] = theta[c];
        }
        w
    }

    /// Every position's (result, score in cp), for the K fit.
    pub fn scored(&self, theta: &[f64]) -> Vec<(Outcome, f64)> {
        let w = self.weights(theta);
        (0..self.data.len())
            .map(|p| (self.data.results[p], self.data.score(p, &w)))
            .collect()
    }

    /// Mean loss over all positions.
    pub fn loss(&self, loss: &Loss, theta: &[f64]) -> f64 {
        let n = self.data.len();
        let sum: f64 = match &self.dense {
            Some(dense) => {
                let w = dense.padded(self.weights(theta));
                self.split(0..n)
                    .map_reduce(|range| partial_dense(self.data, dense, loss, &w, range, None))
                    .into_iter()
                    .sum()
            }
            None => {
                let w = self.weight_table(theta);
                self.split(0..n)
                    .map_reduce(|range| partial(self.data, loss, &w, range, None))
                    .into_iter()
                    .sum()
            }
        };
        if n == 0 { 0.0 } else { sum / n as f64 }
    }

    /// Mean loss over the positions in `range`, and its gradient with respect to θ in `grad`.
    pub fn loss_and_gradient(
        &self,
        loss: &Loss,
        theta: &[f64],
        range: Range<usize>,
        grad: &mut [f64],
    ) -> f64 {
        assert_eq!(grad.len(), self.dimension);
        let n = range.len();
        let parts: Vec<(f64, Vec<f64>)> = match &self.dense {
            Some(dense) => {
                let w = dense.padded(self.weights(theta));
                self.split(range).map_reduce(|r| {
                    let mut g = vec![0.0; dense.width];
                    let l = partial_dense(self.data, dense, loss, &w, r, Some(&mut g));
                    (l, g)
                })
            }
            None => {
                let w = self.weight_table(theta);
                self.split(range).map_reduce(|r| {
                    let mut g = zero_table();
                    let l = partial(self.data, loss, &w, r, Some(&mut g));
                    (l, g[..self.column.len()].to_vec())
                })
            }
        };
        grad.iter_mut().for_each(|g| *g = 0.0);
        let mut sum = 0.0;
        let inv_n = if n == 0 { 0.0 } else { 1.0 / n as f64 };
        for (l, g) in parts {
            sum += l;
            for (j, &c) in self.column.iter().enumerate() {
                grad[c] += g[j] * inv_n;
            }
        }
        sum * inv_n
    }

    /// `range` cut into one contiguous piece per thread.
    fn split(&self, range: Range<usize>) -> Split {
        Split {
            range,
            threads: self.threads,
        }
    }
}

/// One f64 per possible `u16` index (512 KiB, of which only the first variables' cache lines
/// are ever touched).
type IndexTable = [f64; 1 << 16];

fn zero_table() -> Box<IndexTable> {
    vec![0.0; 1 << 16]
        .into_boxed_slice()
        .try_into()
        .expect("length 2^16")
}

/// Contiguous pieces of a range, each run on its own scoped thread.
struct Split {
    range: Range<usize>,
    threads: usize,
}

/// Below this many positions per thread, spawning costs more than it saves.
const MIN_PER_THREAD: usize = 4096;

impl Split {
    fn map_reduce<T: Send>(self, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
        let n = self.range.len();
        let threads = self.threads.min(n / MIN_PER_THREAD).max(1);
        if threads == 1 {
            return vec![f(self.range)];
        }
        let per = n.div_ceil(threads);
        let f = &f;
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let a = self.range.start + t * per;
                    let b = (a + per).min(self.range.end);
                    s.spawn(move || f(a..b))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("objective thread panicked"))
                .collect()
        })
    }
}

/// Σ c·w over one row, in four running sums: one sum would make every entry wait for the
/// previous addition (4 cycles each), which was the slowest part of the pass. Exact for
/// integer data, as any order is; otherwise equal to rounding.
#[inline(always)]
fn dot(index: &[u16], coef: &[f32], w: &IndexTable) -> f64 {
    const LANES: usize = 4;
    let mut acc = [0.0f64; LANES];
    let mut ic = index.chunks_exact(LANES);
    let mut cc = coef.chunks_exact(LANES);
    for (i, c) in (&mut ic).zip(&mut cc) {
        for l in 0..LANES {
            acc[l] += f64::from(c[l]) * w[usize::from(i[l])];
        }
    }
    for (l, (&i, &c)) in ic.remainder().iter().zip(cc.remainder()).enumerate() {
        acc[l] += f64::from(c) * w[usize::from(i)];
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// Positions per block: their scores, then their loss derivatives, stay in L1 between the
/// three passes over the block (dot products, the vectorised loss, the gradient scatter).
const BLOCK: usize = 512;

/// The hot loop: sum of losses over `range`, and, when `scatter` is given, each position's
/// ℓ'/scale handed to it (which adds that times the row to the gradient). Per block: the scores
/// row by row (`raw`: Σ c·w), then [`Loss::block_with_derivative`] over the block (a vectorised
/// loop: it was half of an epoch when called per position), then the scatter.
#[inline(always)]
fn blocked(
    data: &Coefficients,
    loss: &Loss,
    range: Range<usize>,
    raw: impl Fn(usize) -> f64,
    mut scatter: Option<impl FnMut(usize, f64)>,
) -> f64 {
    let inv_scale = 1.0 / data.scale;
    let constants = data.constants.as_deref();
    let mut buffer = [0.0f64; BLOCK];
    let mut sum = 0.0;
    let mut start = range.start;
    while start < range.end {
        let end = (start + BLOCK).min(range.end);
        let q = &mut buffer[..end - start];
        for (p, slot) in (start..).zip(q.iter_mut()) {
            let constant = constants.map_or(0.0, |c| f64::from(c[p]));
            *slot = (constant + raw(p)) * inv_scale;
        }
        sum += loss.block_with_derivative(&data.results[start..end], q);
        if let Some(add) = scatter.as_mut() {
            for (p, &d) in (start..).zip(q.iter()) {
                add(p, d * inv_scale);
            }
        }
        start = end;
    }
    sum
}

/// [`blocked`] over the sparse rows: `w` and `g` indexed by the file's variable index.
fn partial(
    data: &Coefficients,
    loss: &Loss,
    w: &IndexTable,
    range: Range<usize>,
    g: Option<&mut IndexTable>,
) -> f64 {
    let raw = |p: usize| {
        let (index, coef) = data.row(p);
        dot(index, coef, w)
    };
    let scatter = g.map(|g| {
        move |p: usize, d: f64| {
            let (index, coef) = data.row(p);
            for (&i, &c) in index.iter().zip(coef) {
                g[usize::from(i)] += d * f64::from(c);
            }
        }
    });
    blocked(data, loss, range, raw, scatter)
}

/// The rows as a dense row-major matrix of `f32`, one column per file variable. Built when it
/// takes no more memory than the sparse entries (4 bytes per variable and position against 6 per
/// entry and 4 per position: about two thirds of the variables nonzero), as in hand-written
/// evaluations with a few dozen terms, where most are nonzero in most positions. The pass over
/// it is a straight stream the compiler vectorises, with the gradient in a small dense array,
/// where the sparse pass gathers and scatters entry by entry. Entries for the same variable in a
/// row are added in `f32` (exact for integer coefficients, as exported engines write them, up to
/// 2^24).
struct Dense {
    /// Values per row: the variables, padded with zero columns to a multiple of 4 from 5 on.
    width: usize,
    x: Vec<f32>,
}

impl Dense {
    fn of(data: &Coefficients) -> Option<Dense> {
        let (n, columns) = (data.len(), data.variables.len());
        let width = if columns <= 4 {
            columns
        } else {
            columns.div_ceil(4) * 4
        };
        let dense_bytes = n.checked_mul(width)?.checked_mul(4)?;
        if width == 0 || dense_bytes > data.entries() * 6 + n * 4 {
            return None;
        }
        let mut x = vec![0.0f32; n * width];
        for (p, row) in x.chunks_exact_mut(width).enumerate() {
            let (index, coef) = data.row(p);
            for (&i, &c) in index.iter().zip(coef) {
                row[usize::from(i)] += c;
            }
        }
        Some(Dense { width, x })
    }

    /// The weights (file order) padded to the row width.
    fn padded(&self, w: Vec<f64>) -> Vec<f64> {
        let mut w = w;
        w.resize(self.width, 0.0);
        w
    }
}

/// Σ x·w over a dense row, in four running sums (see [`dot`]).
#[inline(always)]
fn dot_dense(row: &[f32], w: &[f64]) -> f64 {
    const LANES: usize = 4;
    let mut acc = [0.0f64; LANES];
    let mut xc = row.chunks_exact(LANES);
    let mut wc = w.chunks_exact(LANES);
    for (x, w) in (&mut xc).zip(&mut wc) {
        for l in 0..LANES {
            acc[l] += f64::from(x[l]) * w[l];
        }
    }
    for (l, (&x, &w)) in xc.remainder().iter().zip(wc.remainder()).enumerate() {
        acc[l] += f64::from(x) * w;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// [`blocked`] over the dense rows: `w` and `g` in the file's order, one per column. On a CPU
/// with AVX2 the same code runs compiled for it (4 doubles per vector instead of 2): the
/// default build targets baseline x86-64. The same operations in the same order (Rust does not
/// fuse multiplies and adds), so the same sums.
fn partial_dense(
    data: &Coefficients,
    dense: &Dense,
    loss: &Loss,
    w: &[f64],
    range: Range<usize>,
    g: Option<&mut [f64]>,
) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the only feature the function is compiled for.
        return unsafe { partial_dense_avx2(data, dense, loss, w, range, g) };
    }
    partial_dense_baseline(data, dense, loss, w, range, g)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn partial_dense_avx2(
    data: &Coefficients,
    dense: &Dense,
    loss: &Loss,
    w: &[f64],
    range: Range<usize>,
    g: Option<&mut [f64]>,
) -> f64 {
    partial_dense_baseline(data, dense, loss, w, range, g)
}

#[inline(always)]
fn partial_dense_baseline(
    data: &Coefficients,
    dense: &Dense,
    loss: &Loss,
    w: &[f64],
    range: Range<usize>,
    g: Option<&mut [f64]>,
) -> f64 {
    // A width known when compiling unrolls the row loops into a few vector operations, with
    // the weights in registers.
    macro_rules! widths {
        ($($n:literal)*) => {
            match dense.width {
                $($n => return partial_dense_fixed::<$n>(data, dense, loss, w, range, g),)*
                _ => {}
            }
        };
    }
    widths!(1 2 3 4 8 12 16 20 24 28 32 36 40 44 48);
    let width = dense.width;
    let row = |p: usize| &dense.x[p * width..(p + 1) * width];
    let scatter = g.map(|g| {
        move |p: usize, d: f64| {
            for (gj, &x) in g.iter_mut().zip(row(p)) {
                *gj += d * f64::from(x);
            }
        }
    });
    blocked(data, loss, range, |p| dot_dense(row(p), w), scatter)
}

/// [`partial_dense_baseline`] for rows `W` wide: the same operations in the same order.
#[inline(always)]
fn partial_dense_fixed<const W: usize>(
    data: &Coefficients,
    dense: &Dense,
    loss: &Loss,
    w: &[f64],
    range: Range<usize>,
    g: Option<&mut [f64]>,
) -> f64 {
    let (rows, _) = dense.x.as_chunks::<W>();
    let w: &[f64; W] = w.try_into().expect("weights padded to the row width");
    let scatter = g.map(|g| {
        let g: &mut [f64; W] = g.try_into().expect("gradient padded to the row width");
        move |p: usize, d: f64| {
            for (gj, &x) in g.iter_mut().zip(&rows[p]) {
                *gj += d * f64::from(x);
            }
        }
    });
    blocked(data, loss, range, |p| dot_dense(&rows[p], w), scatter)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::positions::LossKind;

    fn var(name: &str, start: f64) -> Variable {
        Variable {
            name: name.into(),
            start,
            min: -1000.0,
            max: 1000.0,
            c_end: 5.0,
            r_end: 0.002,
            simul_elo: 0.0,
        }
    }

    /// The exact gradient agrees with central finite differences of the loss, for both losses,
    /// on one thread and on several (the split must not change the sums beyond rounding).
    #[test]
    fn gradient_matches_finite_differences() {
        let mut text =
            String::from("spsa-coefficients 1\nscale 2\nvariable A\nvariable B\nvariable C\n");
        for p in 0..20_000 {
            let r = ["1", "0.5", "0"][p % 3];
            let a = (p % 7) as i32 - 3;
            let b = (p % 11) as i32 - 5;
            text.push_str(&format!("{r} const={} 0:{a} 2:{b} 1:{}\n", p % 5, p % 2));
        }
        let data = super::super::parse_text(&text, Path::new("t")).unwrap();
        // Variables in another order than the file, and one the file does not use.
        let vars = [
            var("c", 20.0),
            var("Unused", 1.0),
            var("a", 100.0),
            var("b", -30.0),
        ];
        let theta: Vec<f64> = vars.iter().map(|v| v.start).collect();
        for kind in [LossKind::Texel, LossKind::Tanh] {
            let loss = Loss::new(kind, 1.1);
            let mut grads = Vec::new();
            for threads in [1, 3] {
                let obj = Objective::new(&data, &vars, threads).unwrap();
                let mut g = vec![0.0; 4];
                let l = obj.loss_and_gradient(&loss, &theta, 0..data.len(), &mut g);
                assert!((l - obj.loss(&loss, &theta)).abs() < 1e-12);
                for i in 0..4 {
                    let h = 1e-3;
                    let mut up = theta.clone();
                    up[i] += h;
                    let mut down = theta.clone();
                    down[i] -= h;
                    let numeric = (obj.loss(&loss, &up) - obj.loss(&loss, &down)) / (2.0 * h);
                    assert!(
                        (numeric - g[i]).abs() < 1e-9 + 1e-6 * g[i].abs(),
                        "{kind:?} {i}: {numeric} vs {}",
                        g[i]
                    );
                }
                assert_eq!(g[1], 0.0);
                grads.push(g);
            }
            for (a, b) in grads[0].iter().zip(&grads[1]) {
                assert!((a - b).abs() <= 1e-12 * a.abs().max(1e-9));
            }
        }
    }

    /// The blocked pass (vectorised loss, polynomial exp) agrees with a plain per-position f64
    /// reference (libm's exp, one running sum) to 1e-12 relative, over a range that starts and
    /// ends inside blocks, with constants, for both losses and 1 or 2 threads.
    #[test]
    fn blocked_pass_matches_the_per_position_reference() {
        let mut text = String::from("spsa-coefficients 1\nscale 800\nvariable A\nvariable B\n");
        for p in 0..9_000 {
            let r = ["1", "0.5", "0"][p % 3];
            let a = (p * 7919 % 41) as i32 - 20;
            let b = (p * 104_729 % 13) as i32 - 6;
            text.push_str(&format!(
                "{r} const={} 0:{a} 1:{b}\n",
                (p % 17) as i32 * 300 - 2400
            ));
        }
        let data = super::super::parse_text(&text, Path::new("t")).unwrap();
        let vars = [var("A", 730.0), var("B", -410.0)];
        let theta = [730.0, -410.0];
        let range = 123..8_901;
        for kind in [LossKind::Texel, LossKind::Tanh] {
            let loss = Loss::new(kind, 0.9);
            let (mut l_ref, mut g_ref) = (0.0, [0.0; 2]);
            for p in range.clone() {
                let (l, d) = loss.point_with_derivative(data.results[p], data.score(p, &theta));
                l_ref += l;
                let (idx, coef) = data.row(p);
                for (&i, &c) in idx.iter().zip(coef) {
                    g_ref[usize::from(i)] += d * f64::from(c) / data.scale;
                }
            }
            let n = range.len() as f64;
            for (threads, sparse) in [(1, false), (2, false), (1, true), (2, true)] {
                let mut obj = Objective::new(&data, &vars, threads).unwrap();
                if sparse {
                    obj.force_sparse();
                }
                assert_eq!(obj.is_dense(), !sparse);
                let mut g = [0.0; 2];
                let l = obj.loss_and_gradient(&loss, &theta, range.clone(), &mut g);
                assert!(
                    (l - l_ref / n).abs() <= 1e-12 * l,
                    "{kind:?}: {l} vs {}",
                    l_ref / n
                );
                for j in 0..2 {
                    let r = g_ref[j] / n;
                    assert!(
                        (g[j] - r).abs() <= 1e-12 * r.abs(),
                        "{kind:?} {j}: {} vs {r}",
                        g[j]
                    );
                }
            }
        }
    }

    #[test]
    fn a_file_variable_missing_from_the_variables_file_is_named() {
        let data = super::super::parse_text(
            "spsa-coefficients 1\nvariable A\nvariable Knight\n1 0:1\n",
            Path::new("t"),
        )
        .unwrap();
        let e = Objective::new(&data, &[var("A", 1.0)], 1).err().unwrap();
        assert!(e.to_string().contains("`Knight`"), "{e}");
    }

    /// The dense pass and the sparse one give the same loss and gradient (to rounding: the sums
    /// run in another order) on rows with repeated, missing and reordered entries, on one thread
    /// and on several; a set with few entries per variable stays sparse.
    #[test]
    fn dense_and_sparse_passes_agree() {
        let mut text = String::from("spsa-coefficients 1\nscale 96\nphase-range 24\n");
        for v in 0..5 {
            text.push_str(&format!("variable V{v}\n"));
        }
        for p in 0..20_000usize {
            let r = ["1", "0.5", "0"][p % 3];
            let e = |k: usize| match (p * (k + 31) % 23) as i32 - 11 {
                0 => 12,
                v => v,
            };
            // Tapered, an index twice in the middlegame part, one variable often missing.
            text.push_str(&format!(
                "{r} const={} phase={} mg 4:{} 0:{} 0:{} 2:{} eg 1:{} 3:{}\n",
                (p % 9) as i32 * 40 - 160,
                p % 25,
                e(0),
                e(1),
                e(2),
                if p % 16 == 0 { 0 } else { e(3) },
                e(4),
                e(5)
            ));
        }
        let data = super::super::parse_text(&text, Path::new("t")).unwrap();
        let vars: Vec<Variable> = (0..5).map(|v| var(&format!("V{v}"), 0.0)).collect();
        let theta = [310.0, -120.0, 45.0, 900.0, -15.0];
        for kind in [LossKind::Texel, LossKind::Tanh] {
            let loss = Loss::new(kind, 1.1);
            let mut sparse = Objective::new(&data, &vars, 1).unwrap();
            sparse.force_sparse();
            let mut g_sparse = [0.0; 5];
            let l_sparse = sparse.loss_and_gradient(&loss, &theta, 0..data.len(), &mut g_sparse);
            for threads in [1, 3] {
                let dense = Objective::new(&data, &vars, threads).unwrap();
                assert!(dense.is_dense());
                assert!(dense.bytes_per_epoch() < sparse.bytes_per_epoch());
                let mut g = [0.0; 5];
                let l = dense.loss_and_gradient(&loss, &theta, 0..data.len(), &mut g);
                assert!(
                    (l - l_sparse).abs() <= 1e-12 * l_sparse,
                    "{l} vs {l_sparse}"
                );
                assert!((dense.loss(&loss, &theta) - l).abs() <= 1e-12 * l);
                for j in 0..5 {
                    assert!(
                        (g[j] - g_sparse[j]).abs() <= 1e-12 * g_sparse[j].abs(),
                        "{kind:?} {j}: {} vs {}",
                        g[j],
                        g_sparse[j]
                    );
                }
            }
        }
        // 40 variables, 2 entries per position: the dense form would be 160 bytes a row.
        let mut text = String::from("spsa-coefficients 1\n");
        for v in 0..40 {
            text.push_str(&format!("variable W{v}\n"));
        }
        for p in 0..100 {
            text.push_str(&format!("1 {}:1 {}:-2\n", p % 40, (p * 7) % 40));
        }
        let data = super::super::parse_text(&text, Path::new("t")).unwrap();
        let vars: Vec<Variable> = (0..40).map(|v| var(&format!("W{v}"), 0.0)).collect();
        assert!(!Objective::new(&data, &vars, 1).unwrap().is_dense());
    }
}
