//! The mean loss over a coefficient set and its exact gradient with respect to the tuned
//! variables, computed in one pass over the flat arrays, split over threads.
//!
//! For position p with score q_p = (C_p + Σ_j c_pj·w_j)/scale, the mean loss is
//! L = (1/N)·Σ_p ℓ(R_p, q_p) and ∂L/∂w_j = (1/N)·Σ_p ℓ'(R_p, q_p)·c_pj/scale: one read of each
//! entry for the dot product, one for the scatter into the gradient, with the row still in cache.

use std::ops::Range;

use super::Coefficients;
use super::blocked::{BLOCK, Blocked, Scratch};
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

impl crate::error::UserFacing for MappingError {
    fn is_user_error(&self) -> bool {
        true
    }
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

impl Model for Objective {
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

/// The θ index of each of the file's variables, matched by name (case-insensitive, as UCI
/// options are): every file variable must be tuned or held fixed by the variables file.
pub fn columns(data: &Coefficients, vars: &[Variable]) -> Result<Vec<usize>, MappingError> {
    data.variables
        .iter()
        .map(|name| {
            vars.iter()
                .position(|v| v.name.eq_ignore_ascii_case(name))
                .ok_or_else(|| MappingError::Missing(name.clone()))
        })
        .collect()
}

/// A coefficient set seen through a variables file: the loss and gradient as functions of θ
/// (the variables file's order).
///
/// It keeps its own copy of the data, in the hot loop's layout only, so the caller can drop the
/// [`Coefficients`] it was built from: while tuning, the data are in memory once.
pub struct Objective {
    /// The coefficients in the hot loop's layout.
    blocked: Blocked,
    results: Vec<Outcome>,
    /// The part of each score no variable moves (None when every one is 0).
    constants: Option<Vec<f32>>,
    scale: f64,
    /// θ index of each coefficient-file variable.
    column: Vec<usize>,
    dimension: usize,
    threads: usize,
}

impl Objective {
    /// Matches the file's variables to `vars` by name (case-insensitive, as UCI options are).
    /// Every file variable must be tuned or held fixed by the variables file; variables the
    /// file does not name have a zero gradient (the evaluation does not use them).
    pub fn new(
        data: &Coefficients,
        vars: &[Variable],
        threads: usize,
    ) -> Result<Objective, MappingError> {
        let column = columns(data, vars)?;
        Ok(Objective {
            blocked: Blocked::new(data),
            results: data.results.clone(),
            constants: data.constants.clone(),
            scale: data.scale,
            column,
            dimension: vars.len(),
            threads: threads.max(1),
        })
    }

    pub fn len(&self) -> usize {
        self.results.len()
    }

    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Bytes an epoch reads: the blocked coefficients, the results and the constants (what the
    /// memory-bandwidth bound is measured against), which is all the data the objective holds.
    pub fn bytes_read(&self) -> usize {
        self.blocked.heap_bytes()
            + self.results.len()
            + self.constants.as_ref().map_or(0, |c| c.len() * 4)
    }

    /// The weights in the file's order, from θ.
    fn weights(&self, theta: &[f64]) -> Vec<f64> {
        self.column.iter().map(|&c| theta[c]).collect()
    }

    /// Every position's (result, score in cp), for the K fit.
    pub fn scored(&self, theta: &[f64]) -> Vec<(Outcome, f64)> {
        let w = self.weights(theta);
        let n = self.len();
        let mut out = Vec::with_capacity(n);
        let mut q = [0.0f64; BLOCK];
        let mut scratch = Scratch::default();
        for b in 0..n.div_ceil(BLOCK) {
            let range = b * BLOCK..((b + 1) * BLOCK).min(n);
            let scores = self.block_scores(b, range.clone(), &w, &mut q, &mut scratch);
            out.extend(
                self.results[range]
                    .iter()
                    .copied()
                    .zip(scores.iter().copied()),
            );
        }
        out
    }

    /// The scores in cp of the positions `range` (within block `b`), in `q`'s block-local
    /// slots; returns those slots.
    #[inline(always)]
    fn block_scores<'q>(
        &self,
        b: usize,
        range: Range<usize>,
        w: &[f64],
        q: &'q mut [f64; BLOCK],
        scratch: &mut Scratch,
    ) -> &'q mut [f64] {
        let local = range.start - b * BLOCK..range.end - b * BLOCK;
        match &self.constants {
            Some(c) => q[local.clone()]
                .iter_mut()
                .zip(&c[range])
                .for_each(|(q, &c)| *q = f64::from(c)),
            None => q[local.clone()].fill(0.0),
        }
        self.blocked.add_scores(b, local.clone(), w, q, scratch);
        let inv_scale = 1.0 / self.scale;
        let scores = &mut q[local];
        scores.iter_mut().for_each(|q| *q *= inv_scale);
        scores
    }

    /// Mean loss over all positions.
    pub fn loss(&self, loss: &Loss, theta: &[f64]) -> f64 {
        let n = self.len();
        let w = self.weights(theta);
        let sum: f64 = self
            .map_chunks(0..n, |range| self.partial(loss, &w, range, None))
            .into_iter()
            .sum();
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
        let w = self.weights(theta);
        let parts = self.map_chunks(range, |r| {
            let mut g = vec![0.0; w.len()];
            let l = self.partial(loss, &w, r, Some(&mut g));
            (l, g)
        });
        grad.iter_mut().for_each(|g| *g = 0.0);
        let mut sum = 0.0;
        let mut g_file = vec![0.0; w.len()];
        for (l, g) in parts {
            sum += l;
            for (a, b) in g_file.iter_mut().zip(g) {
                *a += b;
            }
        }
        let inv_n = if n == 0 { 0.0 } else { 1.0 / n as f64 };
        let factor = inv_n / self.scale;
        for (j, &c) in self.column.iter().enumerate() {
            grad[c] += g_file[j] * factor;
        }
        sum * inv_n
    }

    /// `f` over `range` cut at the multiples of [`CHUNK`], the chunks shared out in contiguous
    /// runs over the threads; the results in chunk order. The cuts do not depend on the thread
    /// count, and the caller sums the results in order, so every thread count gives the same
    /// bits.
    fn map_chunks<T: Send>(
        &self,
        range: Range<usize>,
        f: impl Fn(Range<usize>) -> T + Sync,
    ) -> Vec<T> {
        let mut chunks = Vec::with_capacity(range.len() / CHUNK + 2);
        let mut start = range.start;
        while start < range.end {
            let end = ((start / CHUNK + 1) * CHUNK).min(range.end);
            chunks.push(start..end);
            start = end;
        }
        let threads = self.threads.min(chunks.len()).max(1);
        if threads == 1 {
            return chunks.into_iter().map(f).collect();
        }
        let per = chunks.len().div_ceil(threads);
        let f = &f;
        std::thread::scope(|s| {
            let handles: Vec<_> = chunks
                .chunks(per)
                .map(|run| s.spawn(move || run.iter().cloned().map(f).collect::<Vec<T>>()))
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("objective thread panicked"))
                .collect()
        })
    }

    /// The sum of losses over `range`, and, when `g` is given, Σ ℓ'·c into it (file order, not
    /// yet divided by the scale): [`Objective::hot_loop`] built for AVX2 where the CPU has it
    /// (4 f64 lanes instead of SSE2's 2; the same operations in the same order, so the same bits).
    fn partial(&self, loss: &Loss, w: &[f64], range: Range<usize>, g: Option<&mut [f64]>) -> f64 {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above: all `hot_loop_avx2` needs.
            return unsafe { self.hot_loop_avx2(loss, w, range, g) };
        }
        self.hot_loop(loss, w, range, g)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn hot_loop_avx2(
        &self,
        loss: &Loss,
        w: &[f64],
        range: Range<usize>,
        g: Option<&mut [f64]>,
    ) -> f64 {
        self.hot_loop(loss, w, range, g)
    }

    /// Per block: the scores column by column, the vectorised loss and derivative
    /// ([`Loss::block_with_derivative`]), the gradient column by column.
    #[inline(always)]
    fn hot_loop(
        &self,
        loss: &Loss,
        w: &[f64],
        range: Range<usize>,
        mut g: Option<&mut [f64]>,
    ) -> f64 {
        let mut q = [0.0f64; BLOCK];
        let mut scratch = Scratch::default();
        let mut sum = 0.0;
        let mut start = range.start;
        while start < range.end {
            let b = start / BLOCK;
            let end = ((b + 1) * BLOCK).min(range.end);
            let scores = self.block_scores(b, start..end, w, &mut q, &mut scratch);
            sum += loss.block_with_derivative(&self.results[start..end], scores);
            let local = start - b * BLOCK..end - b * BLOCK;
            if let Some(g) = g.as_deref_mut() {
                self.blocked.add_gradient(b, local, &mut q, g);
            }
            start = end;
        }
        sum
    }
}

/// Positions per chunk: the unit a thread takes and whose partial sums are added in order
/// (a multiple of [`BLOCK`], large enough that what a chunk costs beside its positions is nil).
const CHUNK: usize = 16 * BLOCK;

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

    /// The sums of the losses and of their gradient over `range` in the plain per-position f64
    /// form (libm's exp, one running sum, row order), in file order.
    fn reference(
        data: &Coefficients,
        loss: &Loss,
        theta: &[f64],
        range: Range<usize>,
    ) -> (f64, Vec<f64>) {
        let (mut sum, mut g) = (0.0, vec![0.0; data.variables.len()]);
        for p in range {
            let (l, d) = loss.point_with_derivative(data.results[p], data.score(p, theta));
            sum += l;
            let (idx, coef) = data.row(p);
            for (&i, &c) in idx.iter().zip(coef) {
                g[usize::from(i)] += d * f64::from(c) / data.scale;
            }
        }
        (sum, g)
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
            let (l_ref, g_ref) = reference(&data, &loss, &theta, range.clone());
            let n = range.len() as f64;
            for threads in [1, 2] {
                let obj = Objective::new(&data, &vars, threads).unwrap();
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

    /// Positions whose variables are used by every position, by a third, by a few or by none
    /// in a block (so blocks hold dense and sparse columns, and empty ones), with repeated
    /// indices (some summing to values an f32 cannot hold, which must stay sparse), fractional
    /// coefficients, constants and fractional weights.
    fn mixed_density() -> (Coefficients, Vec<Variable>, Vec<f64>) {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let density = [1.0, 0.9, 0.34, 0.2, 0.05, 0.004, 0.0, 0.6];
        let names: Vec<String> = (0..density.len()).map(|j| format!("V{j}")).collect();
        let mut data = Coefficients::new(names.clone(), 800.0);
        let mut entries = Vec::new();
        for p in 0..10_000 {
            entries.clear();
            for (j, &d) in density.iter().enumerate() {
                if rng.random::<f64>() < d {
                    let c = if j == 3 {
                        rng.random_range(-500..500) as f32 * 0.37
                    } else {
                        rng.random_range(-4000..4000) as f32
                    };
                    entries.push((j as u16, c));
                }
            }
            // Repeats: one that adds up exactly, one (within the first blocks) whose f32 parts
            // sum to a value with more bits than an f32 has.
            entries.push((1, 3.0));
            if p < 600 && p % 7 == 0 {
                entries.push((7, 16_777_216.0));
                entries.push((7, 1.0));
            }
            let r = [Outcome::BlackWins, Outcome::Draw, Outcome::WhiteWins][p % 3];
            data.push(r, (p % 13) as f32 * 150.0 - 900.0, &entries);
        }
        let vars: Vec<Variable> = names.iter().map(|n| var(n, 0.0)).collect();
        let theta = (0..density.len())
            .map(|j| 0.01 * (j as f64 + 1.0) * if j % 2 == 0 { 1.0 } else { -0.7 })
            .collect();
        (data, vars, theta)
    }

    /// The blocked layout (dense and sparse columns, repeats, ranges that start and end inside
    /// blocks and chunks) gives the per-position f64 form's loss and gradient within 1e-12
    /// relative, and every thread count gives the same bits, as do the portable and AVX2 loops.
    #[test]
    fn dense_and_sparse_columns_match_the_rows_and_threads_do_not_change_the_bits() {
        let (data, vars, theta) = mixed_density();
        let one = Objective::new(&data, &vars, 1).unwrap();
        let kinds = one.blocked.column_kinds();
        assert!(
            kinds.0 > 0 && kinds.1 > 0,
            "dense and sparse columns: {kinds:?}"
        );
        // The scores the K fit takes, from the blocks (the rows are dropped while tuning), are
        // the rows' scores.
        let scored = one.scored(&theta);
        assert_eq!(scored.len(), data.len());
        for (p, &(result, q)) in scored.iter().enumerate() {
            let want = data.score(p, &theta);
            assert_eq!(result, data.results[p]);
            assert!(
                (q - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{p}: {q} vs {want}"
            );
        }
        for kind in [LossKind::Texel, LossKind::Tanh] {
            let loss = Loss::new(kind, 1.3);
            for range in [0..data.len(), 77..9_999, 4_000..4_200, 300..301, 5..5] {
                let (l_ref, g_ref) = reference(&data, &loss, &theta, range.clone());
                let n = range.len().max(1) as f64;
                let mut g1 = vec![0.0; vars.len()];
                let l1 = one.loss_and_gradient(&loss, &theta, range.clone(), &mut g1);
                assert!((l1 - l_ref / n).abs() <= 1e-12 * l1, "{kind:?} {range:?}");
                let scale = g_ref.iter().fold(0.0f64, |m, g| m.max(g.abs())) / n;
                for (j, (&g, &r)) in g1.iter().zip(&g_ref).enumerate() {
                    let r = r / n;
                    assert!(
                        (g - r).abs() <= 1e-12 * r.abs() + 1e-15 * scale,
                        "{kind:?} {range:?} {j}: {g} vs {r}"
                    );
                }
                for threads in [2, 3, 8] {
                    let many = Objective::new(&data, &vars, threads).unwrap();
                    let mut g = vec![0.0; vars.len()];
                    let l = many.loss_and_gradient(&loss, &theta, range.clone(), &mut g);
                    assert_eq!(l.to_bits(), l1.to_bits(), "{threads} threads {range:?}");
                    assert_eq!(
                        g.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                        g1.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                        "{threads} threads {range:?}"
                    );
                }
            }
            // The portable loop and the one the CPU picks (AVX2 here) give the same bits.
            let (mut g_portable, mut g_picked) = (vec![0.0; vars.len()], vec![0.0; vars.len()]);
            let range = 100..9_000;
            let l_portable = one.hot_loop(&loss, &theta, range.clone(), Some(&mut g_portable));
            let l_picked = one.partial(&loss, &theta, range, Some(&mut g_picked));
            assert_eq!(l_portable.to_bits(), l_picked.to_bits());
            assert_eq!(g_portable, g_picked);
            let all = one.loss(&loss, &theta);
            let many = Objective::new(&data, &vars, 3).unwrap().loss(&loss, &theta);
            assert_eq!(all.to_bits(), many.to_bits());
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
}
