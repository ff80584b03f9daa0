//! One epoch of the exact-gradient methods (texel loss and its gradient) over 1M positions with
//! 20 weights, next to the memory-bandwidth bound of reading the same bytes once, measured in the
//! same run; and the load time and size of the coefficient file in its text and binary forms.
//!
//! ```text
//! cargo bench --bench gradient_epoch                 # 1M positions, 7 repetitions
//! cargo bench --bench gradient_epoch -- 200000 5     # positions, repetitions
//! ```
//!
//! Prints the memory a tune holds against the loaded data (target ≤ 1.1), then medians and the
//! ratios side by side, in wall time and in CPU time (the process's, all
//! threads: waiting for a core left out): epoch time / bandwidth time (target ≤ 3), from 1 to 2
//! threads the wall speed-up (linear would be 2) and the CPU per position (no contention: the
//! same), and the plain per-position form (libm's exp) against the epoch.

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

/// Seconds of CPU time `clock` has counted: this process's (every thread, ended ones included)
/// or this thread's. The kernel's exact count, where /proc/…/schedstat of a running thread is
/// only brought up to date at a scheduler tick (4 ms steps here).
fn cpu_seconds(clock: libc::clockid_t) -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the clock ids are the kernel's own constants.
    let rc = unsafe { libc::clock_gettime(clock, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Wall and CPU seconds of one measurement (CPU over every thread of the process, so on a
/// loaded machine the time spent waiting for a core is left out, and threads count in full).
#[derive(Clone, Copy)]
struct Time {
    wall: f64,
    cpu: f64,
}

fn timed<T>(f: impl FnOnce() -> T) -> Time {
    let (cpu, wall) = (cpu_seconds(libc::CLOCK_PROCESS_CPUTIME_ID), Instant::now());
    black_box(f());
    Time {
        wall: wall.elapsed().as_secs_f64(),
        cpu: cpu_seconds(libc::CLOCK_PROCESS_CPUTIME_ID) - cpu,
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
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
    // What a tune holds while it runs: the objective's own copy (blocked coefficients, results,
    // constants); the run drops the loaded rows once the objectives are built.
    println!(
        "memory while tuning: {:.1} MB held by the objective = {:.2}x the {:.1} MB loaded \
         (with the rows kept beside it: {:.2}x)",
        bytes as f64 / 1e6,
        bytes as f64 / data.heap_bytes() as f64,
        data.heap_bytes() as f64 / 1e6,
        (bytes + data.heap_bytes()) as f64 / data.heap_bytes() as f64
    );
    let words = vec![1u64; bytes / 8];
    let mut grad = vec![0.0; WEIGHTS];

    // Every measurement of a repetition back to back (read-once and epoch on 1 and 2 threads,
    // and the per-position reference), so all of them see the same machine state.
    println!("load average before: {}", load_average());
    let (mut epoch, mut band) = (vec![Vec::new(); 2], vec![Vec::new(); 2]);
    let mut reference_times = Vec::new();
    for _ in 0..reps {
        for (t, obj) in objectives.iter().enumerate() {
            band[t].push(timed(|| stream(&words, t + 1)));
            epoch[t].push(timed(|| {
                obj.loss_and_gradient(&loss, &theta, 0..n, &mut grad)
            }));
        }
        reference_times.push(timed(|| reference(&data, &loss, &theta)));
    }
    println!("load average after: {}", load_average());
    // Medians of each figure, and of each repetition's ratio (measured side by side).
    let med = |xs: &[Time], f: fn(&Time) -> f64| median(xs.iter().map(f).collect());
    let med_ratio = |a: &[Time], b: &[Time], f: fn(&Time) -> f64| {
        median(a.iter().zip(b).map(|(a, b)| f(a) / f(b)).collect())
    };
    let wall: fn(&Time) -> f64 = |t| t.wall;
    let cpu: fn(&Time) -> f64 = |t| t.cpu;
    println!(
        "threads  epoch_wall_ms  read_wall_ms  epoch/read_wall  epoch_cpu_ms  cpu_ms_per_thread  \
         read_cpu_ms  epoch/read_cpu  ns_cpu/position  positions/s/core"
    );
    for t in 0..2 {
        let e_cpu = med(&epoch[t], cpu);
        println!(
            "{:>7}  {:>13.1}  {:>12.1}  {:>15.2}  {:>12.1}  {:>17.1}  {:>11.1}  {:>14.2}  {:>15.1}  {:>16.0}",
            t + 1,
            med(&epoch[t], wall) * 1e3,
            med(&band[t], wall) * 1e3,
            med_ratio(&epoch[t], &band[t], wall),
            e_cpu * 1e3,
            e_cpu * 1e3 / (t + 1) as f64,
            med(&band[t], cpu) * 1e3,
            med_ratio(&epoch[t], &band[t], cpu),
            e_cpu * 1e9 / n as f64,
            n as f64 / e_cpu
        );
    }
    println!(
        "read once: {:.2} GB/s on 1 thread (wall, median)",
        bytes as f64 / med(&band[0], wall) / 1e9
    );
    println!(
        "per-position reference (libm exp, one position at a time, 1 thread): {:.1} ms CPU, {:.2}x the epoch",
        med(&reference_times, cpu) * 1e3,
        med_ratio(&reference_times, &epoch[0], cpu)
    );
    println!(
        "1 -> 2 threads: wall speed-up epoch {:.2}x, read-once {:.2}x (linear: 2.00x); \
         CPU per position epoch {:.2}x, read-once {:.2}x (no contention: 1.00x)",
        med_ratio(&epoch[0], &epoch[1], wall),
        med_ratio(&band[0], &band[1], wall),
        med_ratio(&epoch[1], &epoch[0], cpu),
        med_ratio(&band[1], &band[0], cpu),
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
