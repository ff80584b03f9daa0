//! What a tune's options cost a game: the bundled sparring engine declaring 16, 752 (`--pst`:
//! its piece-square tables), 5,000 and 50,000 options (`--extra-options N`, options that change
//! nothing), each set to new values the way a tune sets them before a game.
//!
//! Per engine it prints, as medians of `OPTIONS_COST_ROUNDS` rounds (default 5):
//! - the handshake (`uci` to `readyok`: the engine lists its options, we read every line);
//! - `configure` with every option changed (what a game of a tune sends, one write) and with
//!   none changed (nothing sent, one `isready`);
//! - the same options sent the way `spsa` sent them before, one `setoption` write each, then
//!   `isready`, and the ratio of the two, measured side by side in the same rounds;
//! - looking every name up in the declarations by scanning them (as before) and by the index,
//!   with their ratio;
//! - one search of 10,000 nodes from the start position, for scale: a game is some 80 of them.
//!
//! Run: `cargo bench --bench options_cost` (release). `OPTIONS_COST_SIZES=16,752` picks sizes
//! (16 is the plain engine, 752 `--pst`, any other N `--extra-options N-16`).

use std::time::{Duration, Instant};

use spsa::engine::options::{OptionTable, find_option};
use spsa::engine::{EngineSpec, GoCommand, OptionValue, Player, UciEngine};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const SPARRING: &str = env!("CARGO_BIN_EXE_sparring");
/// The plain engine's declarations: Hash, UCI_Chess960 and its 14 weights.
const PLAIN: usize = 16;
/// With `--pst`: the plain ones and 736 piece-square entries.
const PST: usize = PLAIN + 736;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn spec(size: usize) -> EngineSpec {
    let mut spec = EngineSpec::new("sparring", SPARRING);
    spec.args = match size {
        PLAIN => vec![],
        PST => vec!["--pst".into()],
        n => vec!["--extra-options".into(), (n - PLAIN).to_string()],
    };
    spec.handshake_timeout = Duration::from_secs(120);
    spec.ready_timeout = Duration::from_secs(120);
    spec
}

/// Every spin option but Hash, at its default plus `shift` (within its range).
fn wishes(engine: &UciEngine, shift: i64) -> Vec<(String, OptionValue)> {
    engine
        .options()
        .iter()
        .filter(|o| o.name != "Hash")
        .filter_map(|o| match o.kind {
            spsa::engine::OptionKind::Spin {
                default: Some(d),
                min,
                max,
            } => {
                let v = (d + shift).clamp(min.unwrap_or(i64::MIN), max.unwrap_or(i64::MAX));
                Some((o.name.clone(), OptionValue::Number(v as f64)))
            }
            _ => None,
        })
        .collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let rounds: usize = std::env::var("OPTIONS_COST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let sizes: Vec<usize> = std::env::var("OPTIONS_COST_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![PLAIN, PST, 5_000, 50_000]);
    println!(
        "options_cost: sparring, {rounds} rounds, medians; load {}",
        load()
    );
    println!(
        "{:>7} {:>11} {:>13} {:>12} {:>14} {:>7} {:>12} {:>12} {:>7} {:>13}",
        "options",
        "handshake",
        "configure",
        "unchanged",
        "line by line",
        "ratio",
        "scan lookup",
        "index",
        "ratio",
        "10k-node go"
    );
    for size in sizes {
        let mut handshake = Vec::new();
        let mut batched = Vec::new();
        let mut unchanged = Vec::new();
        let mut by_line = Vec::new();
        let mut scan = Vec::new();
        let mut index = Vec::new();
        let mut search = Vec::new();
        for round in 0..rounds {
            let t = Instant::now();
            let mut e = UciEngine::start(spec(size)).await.expect("sparring starts");
            handshake.push(t.elapsed());
            assert_eq!(e.options().len(), size, "declared options");
            let (up, down) = (wishes(&e, 1), wishes(&e, -1));
            // Alternate which way goes first, so neither always meets a warm engine.
            let (first, second) = if round % 2 == 0 {
                (&up, &down)
            } else {
                (&down, &up)
            };
            let t = Instant::now();
            e.configure(first.iter().map(|(n, v)| (n.as_str(), v)))
                .await
                .unwrap();
            batched.push(t.elapsed());
            let t = Instant::now();
            e.configure(first.iter().map(|(n, v)| (n.as_str(), v)))
                .await
                .unwrap();
            unchanged.push(t.elapsed());
            let t = Instant::now();
            for (n, v) in second {
                e.set_option(n, v.clone()).await.unwrap();
            }
            e.is_ready().await.unwrap();
            by_line.push(t.elapsed());

            let declared: Vec<_> = e.options().to_vec();
            let names: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
            // The scan is quadratic: past 5,000 options time every k-th name (spread over the
            // list, so the sample's scans are as long as the whole's) and scale up.
            let stride = names.len().div_ceil(5_000);
            let t = Instant::now();
            let mut sampled = 0;
            for n in names.iter().step_by(stride) {
                std::hint::black_box(find_option(&declared, n));
                sampled += 1;
            }
            scan.push(t.elapsed().mul_f64(names.len() as f64 / sampled as f64));
            let t = Instant::now();
            let table = OptionTable::new(declared);
            for n in &names {
                std::hint::black_box(table.find(n));
            }
            index.push(t.elapsed());

            let t = Instant::now();
            let go = GoCommand {
                nodes: Some(10_000),
                ..GoCommand::default()
            };
            e.search(START, &[], &go, Duration::from_secs(60))
                .await
                .expect("search");
            search.push(t.elapsed());
            e.quit().await;
        }
        let (b, l) = (median(batched), median(by_line));
        let (s, i) = (median(scan), median(index));
        println!(
            "{:>7} {:>11} {:>13} {:>12} {:>14} {:>6.1}x {:>12} {:>12} {:>6.0}x {:>13}",
            size,
            ms(median(handshake)),
            ms(b),
            ms(median(unchanged)),
            ms(l),
            l.as_secs_f64() / b.as_secs_f64(),
            ms(s),
            ms(i),
            s.as_secs_f64() / i.as_secs_f64(),
            ms(median(search)),
        );
    }
}

/// The 1-minute load average, for the record.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}
