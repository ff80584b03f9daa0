//! Fuzz every parser for as long as asked (docs/development.md, "Fuzzing"):
//!
//! ```text
//! scripts/fuzz.sh --inputs 1000000                # every parser, a million inputs each
//! scripts/fuzz.sh --inputs 200000 --target pgn,epd --seed 7
//! ```
//!
//! Built in the dev profile on purpose: overflow checks and debug assertions are on, so an
//! arithmetic overflow on hostile numbers is a finding, as it would be in the tests. Prints one
//! table row per parser (inputs, seconds, inputs/s, findings) and keeps every finding's input
//! in `--findings DIR` (default `target/fuzz-findings`). A parser stuck on one input for
//! `--hang-s` seconds (default 30) ends the run with that input saved and exit status 3.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use spsa::fuzz::{self, Kind, Settings};
use spsa::platform::{Clock, cpu_time};

struct Args {
    inputs: u64,
    seed: u64,
    targets: Option<Vec<String>>,
    slow: Duration,
    hang: Duration,
    findings: PathBuf,
    save_from: Option<u64>,
    messages: bool,
}

fn args() -> Args {
    let mut a = Args {
        inputs: 100_000,
        seed: 1,
        targets: None,
        slow: Duration::from_millis(100),
        hang: Duration::from_secs(30),
        findings: PathBuf::from("target/fuzz-findings"),
        save_from: None,
        messages: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next().unwrap_or_else(|| {
                eprintln!("{flag} needs a value");
                std::process::exit(2)
            })
        };
        let number = |v: String| -> u64 {
            v.replace('_', "").parse().unwrap_or_else(|_| {
                eprintln!("not a whole number: {v}");
                std::process::exit(2)
            })
        };
        match flag.as_str() {
            "--inputs" => a.inputs = number(value()),
            "--seed" => a.seed = number(value()),
            "--target" => a.targets = Some(value().split(',').map(String::from).collect()),
            "--slow-ms" => a.slow = Duration::from_millis(number(value())),
            "--hang-s" => a.hang = Duration::from_secs(number(value())),
            "--findings" => a.findings = PathBuf::from(value()),
            "--save-from" => a.save_from = Some(number(value())),
            "--messages" => a.messages = true,
            "--write-seeds" => {
                // Each parser's seeds as files, a folder each (a corpus for cargo-fuzz).
                let dir = PathBuf::from(value());
                for t in fuzz::all() {
                    let sub = dir.join(t.name);
                    std::fs::create_dir_all(&sub).expect("a seeds folder");
                    for (i, seed) in (t.seeds)().iter().enumerate() {
                        std::fs::write(sub.join(format!("seed-{i}")), seed).expect("a seed");
                    }
                }
                std::process::exit(0)
            }
            "--list" => {
                for t in fuzz::all() {
                    println!("{}", t.name);
                }
                std::process::exit(0)
            }
            // `cargo bench` and test harness flags.
            "--bench" => {}
            _ => {
                eprintln!(
                    "usage: fuzz_parsers [--inputs N] [--seed S] [--target a,b] [--slow-ms MS] \
                     [--hang-s S] [--findings DIR] [--save-from N] [--messages] [--write-seeds DIR] [--list]"
                );
                std::process::exit(2)
            }
        }
    }
    a
}

fn main() {
    let args = args();
    let targets: Vec<_> = fuzz::all()
        .into_iter()
        .filter(|t| {
            args.targets
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == t.name))
        })
        .collect();
    if targets.is_empty() {
        eprintln!("no such target (--list names them)");
        std::process::exit(2);
    }
    std::fs::create_dir_all(&args.findings).expect("the findings folder");
    // The watchdog: an input that holds a parser for `hang` ends the run, saved.
    let current = Arc::new(Mutex::new((0u64, Vec::new())));
    let name = Arc::new(Mutex::new(""));
    {
        let (current, name, dir, hang) = (
            current.clone(),
            name.clone(),
            args.findings.clone(),
            args.hang,
        );
        std::thread::spawn(move || {
            // Measured in the process's CPU time: a machine busy with other work starves a
            // niced run for seconds, which is no hang of the parser.
            let cpu = || cpu_time(Clock::Process);
            let mut last = (String::new(), u64::MAX, cpu());
            loop {
                std::thread::sleep(Duration::from_secs(1));
                let target = name.lock().map(|n| n.to_string()).unwrap_or_default();
                let (index, input) = current
                    .lock()
                    .map(|c| (c.0, c.1.clone()))
                    .unwrap_or_default();
                if (target.as_str(), index) != (last.0.as_str(), last.1) {
                    last = (target, index, cpu());
                } else if cpu().saturating_sub(last.2) > hang {
                    let path = dir.join(format!("{target}-{index}-hang.bin"));
                    let _ = std::fs::write(&path, &input);
                    eprintln!(
                        "HANG: {target} input #{index} has run {} s of CPU; kept in {}",
                        hang.as_secs(),
                        path.display()
                    );
                    fuzz::remove_files();
                    std::process::exit(3);
                }
            }
        });
    }
    println!(
        "seed {}, {} inputs per parser, slow limit {} ms",
        args.seed,
        args.inputs,
        args.slow.as_millis()
    );
    println!(
        "| parser | inputs | wall | CPU | inputs/s of CPU | accepted | messages | corpus | slowest | findings |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut findings = 0;
    for target in &targets {
        *name.lock().expect("name") = target.name;
        let settings = Settings {
            seed: args.seed,
            inputs: args.inputs,
            slow: args.slow,
            max_findings: 50,
            current: Some(current.clone()),
            save_from: args.save_from.map(|n| {
                (
                    n,
                    args.findings.join(format!("{}-current.bin", target.name)),
                )
            }),
        };
        let report = fuzz::run(target, &settings);
        println!(
            "| {} | {} | {:.1} s | {:.1} s | {:.0} | {:.1}% | {} | {} | {:.1} ms | {} |",
            report.target,
            report.inputs,
            report.elapsed.as_secs_f64(),
            report.cpu.as_secs_f64(),
            report.per_second(),
            100.0 * report.accepted as f64 / report.inputs.max(1) as f64,
            report.messages,
            report.corpus,
            report.slowest.as_secs_f64() * 1e3,
            report.findings.len()
        );
        if args.messages {
            for m in &report.shapes {
                eprintln!("  {}: {m}", report.target);
            }
        }
        for f in &report.findings {
            findings += 1;
            let kind = match &f.kind {
                Kind::Panic(_) => "panic",
                Kind::Slow(_) => "slow",
                Kind::Unnamed(_) => "unnamed",
                Kind::NotUsers(_) => "exit-1",
            };
            let path = args
                .findings
                .join(format!("{}-{}-{kind}.bin", report.target, f.index));
            let _ = std::fs::write(&path, &f.input);
            let shown = &f.input[..f.input.len().min(300)];
            eprintln!(
                "  {} #{}: {:?}\n    {} ({} bytes; kept in {})",
                report.target,
                f.index,
                f.kind,
                fuzz::escape(shown),
                f.input.len(),
                path.display()
            );
        }
        let _ = std::io::stdout().flush();
    }
    fuzz::remove_files();
    if findings > 0 {
        std::process::exit(1);
    }
}
