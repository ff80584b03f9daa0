//! One epoch of the exact-gradient methods (texel loss and its gradient) over 1M positions with
//! 20 weights, next to the memory-bandwidth bound of reading the same bytes once, measured in the
//! same run; and the load time and size of the coefficient file in its text and binary forms.
//!
//! ```text
//! cargo bench --bench gradient_epoch                 # 1M positions, 7 repetitions
//! cargo bench --bench gradient_epoch -- 200000 5     # positions, repetitions
//! ```
//!
//! Prints medians and the ratios side by side: epoch time / bandwidth time (target ≤ 3), the
//! speed-up from 1 to 2 threads for both (linear would be 2), and the plain per-position form
//! (libm's exp) against the epoch.

use std::hint::black_box;
use std::time::Instant;

use rand::{RngExt, SeedableRng};

use spsa::coefficients::objective::Objective;
use spsa::coefficients::{self, Coefficients};
use spsa::positions::{Loss, LossKind, Outcome};
use spsa::vars::Variable;

const WEIGHTS: usize = 20;

/// Positions like an exported tapered evaluation: each weight nonzero with probability 0.7,
/// small integer coefficients, a scale of 19200 (sparring's).
fn synthetic(n: usize) -> Coefficients {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let names = (0..WEIGHTS).map(|i| format!("W{i}")).collect();
    let mut c = Coefficients::new(names, 19200.0);
    let mut entries = Vec::with_capacity(WEIGHTS);
    for _ in 0..n {
        entries.clear();
        for i in 0..WEIGHTS {
            if rng.random::<f64>() < 0.7 {
                entries.push((i as u16, rng.random_range(-60_000..60_000) as f32));
            }
        }
        let r = [Outcome::BlackWins, Outcome::Draw, Outcome::WhiteWins][rng.random_range(0..3)];
        c.push(r, 0.0, &entries);
    }
    c
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Seconds to sum `words` (as many bytes as the data) on `threads` threads.
fn stream(words: &[u64], threads: usize) -> f64 {
    let t = Instant::now();
    if threads == 1 {
        // On the calling thread, so its on-CPU time can be read.
        black_box(words.iter().fold(0u64, |a, &b| a.wrapping_add(b)));
        return t.elapsed().as_secs_f64();
    }
    let per = words.len().div_ceil(threads);
    let total: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = words
            .chunks(per)
            .map(|c| s.spawn(move || c.iter().fold(0u64, |a, &b| a.wrapping_add(b))))
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .fold(0, u64::wrapping_add)
    });
    black_box(total);
    t.elapsed().as_secs_f64()
}

/// Seconds this thread has spent on a CPU (Linux's /proc/thread-self/schedstat, in ns), so a
/// measurement on a loaded machine leaves out the time spent waiting for a core; None elsewhere.
fn on_cpu() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// Seconds of wall and of on-CPU time (when known) that `f` takes on this thread.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, Option<f64>) {
    let (cpu, wall) = (on_cpu(), Instant::now());
    black_box(f());
    let cpu = match (cpu, on_cpu()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    (wall.elapsed().as_secs_f64(), cpu)
}

/// The loss and gradient as the plain per-position form computes them (libm's exp, one
/// position at a time): what the blocked, vectorised pass is measured against.
fn reference(data: &Coefficients, loss: &Loss, w: &[f64]) -> (f64, Vec<f64>) {
    let mut g = vec![0.0; WEIGHTS];
    let mut sum = 0.0;
    for p in 0..data.len() {
        let (l, d) = loss.point_with_derivative(data.results[p], data.score(p, w));
        sum += l;
        let (idx, coef) = data.row(p);
        for (&i, &c) in idx.iter().zip(coef) {
            g[usize::from(i)] += d * f64::from(c) / data.scale;
        }
    }
    (sum, g)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let n: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let reps: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(7);

    let data = synthetic(n);
    let vars: Vec<Variable> = data
        .variables
        .iter()
        .map(|name| Variable {
            name: name.clone(),
            start: 100.0,
            min: -1000.0,
            max: 1000.0,
            c_end: 5.0,
            r_end: 0.002,
            simul_elo: 0.0,
        })
        .collect();
    let theta: Vec<f64> = (0..WEIGHTS).map(|i| 50.0 + 10.0 * i as f64).collect();
    let loss = Loss::new(LossKind::Texel, 1.0);
    let objectives: Vec<Objective> = [1usize, 2]
        .iter()
        .map(|&t| Objective::new(&data, &vars, t).unwrap())
        .collect();
    // The bound is measured over the bytes the epoch reads (its blocked layout), not the file's.
    let bytes = objectives[0].bytes_read();
    eprintln!(
        "{n} positions, {} entries ({:.1} per position), {:.1} MB as loaded, {:.1} MB read per epoch",
        data.entries(),
        data.entries() as f64 / n as f64,
        data.heap_bytes() as f64 / 1e6,
        bytes as f64 / 1e6
    );
    let words = vec![1u64; bytes / 8];
    let mut grad = vec![0.0; WEIGHTS];

    // Every measurement of a repetition back to back (read-once and epoch on 1 and 2 threads,
    // and the per-position reference), so all of them see the same machine state.
    let (mut epoch, mut band) = (vec![Vec::new(); 2], vec![Vec::new(); 2]);
    let mut reference_times = Vec::new();
    // One thread, on-CPU seconds: (read once, epoch, reference) per repetition.
    let mut cpu: Vec<(f64, f64, f64)> = Vec::new();
    for _ in 0..reps {
        let mut cpu_rep = [None; 3];
        for (t, obj) in objectives.iter().enumerate() {
            let (wall, c) = timed(|| stream(&words, t + 1));
            band[t].push(wall);
            if t == 0 {
                cpu_rep[0] = c;
            }
            let (wall, c) = timed(|| obj.loss_and_gradient(&loss, &theta, 0..n, &mut grad));
            epoch[t].push(wall);
            if t == 0 {
                cpu_rep[1] = c;
            }
        }
        let (wall, c) = timed(|| reference(&data, &loss, &theta));
        reference_times.push(wall);
        cpu_rep[2] = c;
        if let [Some(b), Some(e), Some(r)] = cpu_rep {
            cpu.push((b, e, r));
        }
    }
    let rows: Vec<(usize, f64, f64)> = (0..2)
        .map(|t| (t + 1, median(epoch[t].clone()), median(band[t].clone())))
        .collect();
    println!("threads  epoch_ms  read_once_ms  epoch/read  positions/s/core  GB/s_read");
    for &(threads, e, b) in &rows {
        println!(
            "{threads:>7}  {:>8.1}  {:>12.1}  {:>10.2}  {:>16.0}  {:>9.2}",
            e * 1e3,
            b * 1e3,
            e / b,
            n as f64 / e / threads as f64,
            bytes as f64 / b / 1e9
        );
    }
    let r = median(reference_times);
    println!(
        "per-position reference (libm exp, one position at a time, 1 thread): {:.1} ms, {:.2}x the epoch",
        r * 1e3,
        r / rows[0].1
    );
    if !cpu.is_empty() {
        let pick = |f: fn(&(f64, f64, f64)) -> f64| median(cpu.iter().map(f).collect());
        println!(
            "1 thread, on-CPU time (medians; waiting for a core left out): epoch {:.1} ms, \
             read-once {:.1} ms, epoch/read {:.2} (median of the repetitions' ratios), \
             reference/epoch {:.2}",
            pick(|c| c.1) * 1e3,
            pick(|c| c.0) * 1e3,
            pick(|c| c.1 / c.0),
            pick(|c| c.2 / c.1)
        );
    }
    // Where the epoch's time goes: the vectorised loss and derivative alone, over as many
    // scores in blocks of 512 (what the pass hands it), on-CPU when known.
    let mut scores: Vec<f64> = (0..n).map(|p| (p % 1000) as f64 - 500.0).collect();
    let (wall, cpu_loss) = timed(|| {
        let mut sum = 0.0;
        for (q, o) in scores.chunks_mut(512).zip(data.results.chunks(512)) {
            sum += loss.block_with_derivative(o, q);
        }
        sum
    });
    println!(
        "loss+derivative alone (block_with_derivative): {:.1} ms{}",
        wall * 1e3,
        cpu_loss.map_or(String::new(), |c| format!(" ({:.1} ms on-CPU)", c * 1e3))
    );
    let (e1, b1) = (rows[0].1, rows[0].2);
    let (e2, b2) = (rows[1].1, rows[1].2);
    println!(
        "speed-up 1 -> 2 threads: epoch {:.2}x, read-once {:.2}x (linear: 2.00x)",
        e1 / e2,
        b1 / b2
    );

    // Load time and size of both file forms.
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("bench.coef");
    let binary = dir.path().join("bench.coefb");
    coefficients::write_text(
        &data,
        std::io::BufWriter::new(std::fs::File::create(&text).unwrap()),
    )
    .unwrap();
    coefficients::write_binary(
        &data,
        std::io::BufWriter::new(std::fs::File::create(&binary).unwrap()),
    )
    .unwrap();
    println!("form    size_MB  load_s  (median of 3, file in page cache)");
    let mut loads = Vec::new();
    for (form, path) in [("text", &text), ("binary", &binary)] {
        let size = std::fs::metadata(path).unwrap().len() as f64 / 1e6;
        let times: Vec<f64> = (0..3)
            .map(|_| {
                let t = Instant::now();
                let c = coefficients::load(path).unwrap();
                assert_eq!(c.len(), n);
                t.elapsed().as_secs_f64()
            })
            .collect();
        let t = median(times);
        loads.push(t);
        println!("{form:<6}  {size:>7.1}  {t:>6.2}");
    }
    println!("binary loads {:.1}x faster than text", loads[0] / loads[1]);
}
