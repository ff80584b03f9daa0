//! Every parser fuzzed on the stable toolchain: inputs made by mutating real files of each
//! format (the repository's configs, variables, books, logs, checkpoints, ...) from a fixed
//! seed, each handed to the parser's seam under `catch_unwind` and timed.
//!
//! A finding is a panic, an input that took longer than the slow limit, or a refusal whose
//! message does not name the file. Inputs that make a parser say something new (a message not
//! seen before, digits and quoted parts aside) join the corpus that later inputs are mutated
//! from: no coverage instrumentation, but the parser's own messages steer the search deeper
//! than mutating the seeds alone.
//!
//! Compiled only with the cargo feature `fuzzing` (off by default). `tools/fuzz_parsers.rs`
//! (`scripts/fuzz.sh`) runs millions of inputs per parser; the unit test below runs a short
//! seeded run of each in CI's tests, which turn the feature on (docs/development.md, "Fuzzing").

mod seeds;
pub mod targets;
mod web;

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use crate::platform::{Clock, cpu_time};

pub use targets::{Target, all};

/// What a parser made of one input.
pub enum Outcome {
    /// Read.
    Accepted,
    /// Refused, with the message the user would see.
    Refused(String),
    /// Refused as a fault of `spsa` (exit 1) where the input is the user's to fix (exit 2).
    Failed(String),
}

/// What is wrong with one input's handling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The parser panicked: the message and its place.
    Panic(String),
    /// The parser took this long (a hang, or close to one).
    Slow(Duration),
    /// The refusal does not name the file.
    Unnamed(String),
    /// The refusal would exit 1, as a fault of `spsa`: a damaged file is the user's (exit 2).
    NotUsers(String),
}

/// One finding: which input (by its number in the run), what happened, and the input itself.
#[derive(Clone, Debug)]
pub struct Finding {
    pub index: u64,
    pub kind: Kind,
    pub input: Vec<u8>,
}

/// One target's run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub target: &'static str,
    pub inputs: u64,
    pub elapsed: Duration,
    /// CPU time of the fuzzing thread (the wall time of a shared machine says little).
    pub cpu: Duration,
    pub accepted: u64,
    pub refused: u64,
    /// Different messages met (digits and quoted parts aside).
    pub messages: usize,
    /// Inputs kept to mutate further (seeds included).
    pub corpus: usize,
    /// The messages met, by shape (see `messages`).
    pub shapes: Vec<String>,
    pub slowest: Duration,
    pub findings: Vec<Finding>,
}

impl Report {
    /// Inputs per second of CPU.
    pub fn per_second(&self) -> f64 {
        self.inputs as f64 / self.cpu.as_secs_f64().max(1e-9)
    }
}

/// The input being parsed, by its number: what a watchdog reports of a hang.
pub type Current = Arc<Mutex<(u64, Vec<u8>)>>;

/// How to run a target.
#[derive(Clone, Debug)]
pub struct Settings {
    pub seed: u64,
    pub inputs: u64,
    /// An input that takes longer is a finding.
    pub slow: Duration,
    /// Stop after this many findings.
    pub max_findings: usize,
    /// Where the input being parsed is kept (for a watchdog that reports a hang or a crash).
    pub current: Option<Current>,
    /// From this input on, write each input to this file before parsing it (to catch the
    /// one that crashes the process).
    pub save_from: Option<(u64, std::path::PathBuf)>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            seed: 1,
            inputs: 1000,
            slow: Duration::from_millis(100),
            max_findings: 20,
            current: None,
            save_from: None,
        }
    }
}

/// Every thread's folder, for [`remove_files`].
static FOLDERS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Delete the folders of fuzzed inputs now: a process that ends through `exit` runs no
/// thread-local destructor, and `/dev/shm` is memory.
pub fn remove_files() {
    for dir in FOLDERS.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Delete `dir` with the others in [`remove_files`].
pub(crate) fn remove_later(dir: std::path::PathBuf) {
    FOLDERS.lock().unwrap_or_else(|p| p.into_inner()).push(dir);
}

/// SplitMix64: a few instructions per draw, fixed by this code alone.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn draw(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.draw() % n as u64) as usize
        }
    }
}

/// Words that parsers trip on: numbers at and past every limit, NaN and infinities, signs, empty
/// and quoted fields, separators, byte-order marks, invalid and multi-byte UTF-8.
const TOKENS: &[&[u8]] = &[
    b"0",
    b"-0",
    b"-1",
    b"1",
    b"2",
    b"0.5",
    b"-0.0",
    b"1e309",
    b"-1e309",
    b"1e-320",
    b"1e308",
    b"NaN",
    b"nan",
    b"inf",
    b"-inf",
    b"infinity",
    b"18446744073709551615",
    b"18446744073709551616",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"-9223372036854775809",
    b"4294967295",
    b"4294967296",
    b"2147483647",
    b"-2147483648",
    b"65535",
    b"65536",
    b"255",
    b"256",
    b"99999999999999999999999999999999999999",
    b"1e18",
    b"1e19",
    b"1e20",
    b"0x1F",
    b"+",
    b"-",
    b".",
    b"",
    b"\"",
    b"\"\"",
    b"'",
    b",",
    b",,,,",
    b";",
    b"=",
    b"[",
    b"]",
    b"[[",
    b"]]",
    b"{",
    b"}",
    b"#",
    b"#:",
    b"\\",
    b"\r\n",
    b"\n",
    b"\n\n",
    b"\r",
    b"\t",
    b" ",
    b"\0",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xc3",
    b"\xe2\x82",
    b"\xf0\x9d\x9b\x89",
    b"\xce\xb8",
    b"true",
    b"false",
    b"null",
    b"[]",
    b"{}",
    b"$THREAD",
    b"../",
    b"/",
    b"%",
    b"%00",
    b"(none)",
    b"0000",
    b"e1e1",
    b"O-O-O",
    b"1-0",
    b"*",
];

/// Bytes worth putting anywhere.
const BYTES: &[u8] = b"\0\n\r\t ,;:=\"'#[]{}()-+.0123456789eE\\/\x7f\x80\xbf\xc0\xff";

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-' | b'_')
}

/// A long run of one character or of digits (a huge number, a long name).
fn long_run(rng: &mut Rng) -> Vec<u8> {
    let n = [1, 20, 40, 310, 400, 5000, 70_000][rng.below(7)];
    let unit: &[u8] = [&b"9"[..], b"a", b"0", b" ", b",", b"\xce\xb8", b"1."][rng.below(7)];
    unit.repeat(n)
}

fn token(rng: &mut Rng) -> Vec<u8> {
    if rng.below(8) == 0 {
        long_run(rng)
    } else {
        TOKENS[rng.below(TOKENS.len())].to_vec()
    }
}

/// The word around `at` (a maximal run of letters, digits, `.+-_`), or an empty range at `at`.
fn word_at(s: &[u8], at: usize) -> (usize, usize) {
    let mut a = at.min(s.len());
    let mut b = a;
    while a > 0 && is_word(s[a - 1]) {
        a -= 1;
    }
    while b < s.len() && is_word(s[b]) {
        b += 1;
    }
    (a, b)
}

/// The line around `at`, its newline included.
fn line_at(s: &[u8], at: usize) -> (usize, usize) {
    let at = at.min(s.len());
    let a = s[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let b = s[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(s.len(), |i| at + i + 1);
    (a, b)
}

/// One mutation of `s` (`other` is another input to splice with).
fn mutate_once(s: &mut Vec<u8>, other: &[u8], rng: &mut Rng) {
    let len = s.len();
    let at = rng.below(len + 1);
    match rng.below(14) {
        0 if len > 0 => {
            let i = rng.below(len);
            s[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            s[i] = BYTES[rng.below(BYTES.len())];
        }
        2 => s.insert(at, BYTES[rng.below(BYTES.len())]),
        3 if len > 0 => {
            let n = 1 + rng.below(16.min(len - at.min(len - 1)));
            let a = at.min(len - 1);
            s.drain(a..(a + n).min(len));
        }
        4 => s.truncate(at),
        5..=7 => {
            // A word (a number, a name, a key) replaced by a hostile one.
            let (a, b) = word_at(s, at);
            let t = token(rng);
            s.splice(a..b, t);
        }
        8 => {
            let t = token(rng);
            s.splice(at..at, t);
        }
        9 if len > 0 => {
            // A chunk copied elsewhere, or a line repeated.
            let (a, b) = if rng.below(2) == 0 {
                line_at(s, at)
            } else {
                let a = rng.below(len);
                (a, (a + 1 + rng.below(64)).min(len))
            };
            let chunk = s[a..b].to_vec();
            let times = [1, 2, 3, 50, 1000][rng.below(5)].min(MAX_INPUT / chunk.len().max(1));
            let to = rng.below(len + 1);
            s.splice(to..to, chunk.repeat(times));
        }
        10 if len > 0 => {
            // A line deleted.
            let (a, b) = line_at(s, at);
            s.drain(a..b);
        }
        11 => {
            // This input's head with another's tail.
            let from = rng.below(other.len() + 1);
            s.truncate(at);
            s.extend_from_slice(&other[from..]);
        }
        12 => {
            if rng.below(4) == 0 {
                s.splice(0..0, b"\xef\xbb\xbf".iter().copied());
            } else {
                // Line ends turned into CRLF, or the last newline dropped.
                if rng.below(2) == 0 {
                    let mut t = Vec::with_capacity(s.len() + 16);
                    for &b in s.iter() {
                        if b == b'\n' {
                            t.push(b'\r');
                        }
                        t.push(b);
                    }
                    *s = t;
                } else if s.last() == Some(&b'\n') {
                    s.pop();
                }
            }
        }
        _ => {
            // A digit changed: numbers stay numbers, but different ones.
            if let Some(i) = (0..8)
                .map(|_| rng.below(len.max(1)))
                .find(|&i| s.get(i).is_some_and(u8::is_ascii_digit))
            {
                s[i] = b'0' + rng.below(10) as u8;
            }
        }
    }
}

/// Inputs stay below this size (a parser's cost per byte is not what is looked for).
const MAX_INPUT: usize = 256 << 10;

/// Inputs larger than this do not join the corpus (mutations of small inputs are cheaper and
/// reach the same checks).
const MAX_KEPT: usize = 16 << 10;

/// A new input: one of `corpus` with one to eight mutations.
pub fn mutate(corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut s = corpus[rng.below(corpus.len())].clone();
    let other = &corpus[rng.below(corpus.len())];
    let most = rng.below(8) + 1;
    let n = 1 + rng.below(most);
    for _ in 0..n {
        mutate_once(&mut s, other, rng);
    }
    s.truncate(MAX_INPUT);
    s
}

/// A message's shape: its plain words (letters only), quoted parts, numbers, paths and the
/// input's own text left out. Two refusals of one check have one shape.
fn shape(message: &str) -> String {
    let mut unquoted = String::new();
    let mut quote: Option<char> = None;
    for c in message.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '`' || c == '"' => quote = Some(c),
            None if c == '[' => quote = Some(']'),
            None => unquoted.push(c),
        }
    }
    let words: Vec<&str> = unquoted
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| ",.:;()".contains(c)))
        .filter(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_alphabetic()))
        .take(10)
        .collect();
    words.join(" ")
}

thread_local! {
    /// Set while this thread runs a fuzzed parser: its panics are kept, not printed.
    static QUIET: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Threads of a server under fuzzing (`spsa serve`'s router): their panics are kept for the
/// request that caused them.
pub const SERVER_THREADS: &str = "fuzz-server";

static SERVER_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// The last panic of a server thread, if one panicked since the last call.
pub fn take_server_panic() -> Option<String> {
    SERVER_PANIC
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
}

/// A panic hook that keeps a fuzzed parser's panic message (and place) for the report, and
/// leaves every other thread's panics to the hook that was there.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let server = std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with(SERVER_THREADS));
            if QUIET.with(Cell::get) || server {
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                let place = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                let text = format!("{message}{place}");
                if server {
                    *SERVER_PANIC.lock().unwrap_or_else(|p| p.into_inner()) = Some(text);
                } else {
                    LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
                }
            } else {
                previous(info);
            }
        }));
    });
}

/// What one input did: a finding, the parser's outcome (none after a panic), its CPU time.
pub struct Checked {
    pub finding: Option<Kind>,
    pub outcome: Option<Outcome>,
    pub took: Duration,
}

/// Hand one input to `target` and judge what it did (`slow` is CPU time).
pub fn check(target: &Target, input: &[u8], slow: Duration) -> Checked {
    install_hook();
    QUIET.with(|q| q.set(true));
    let started = cpu_time(Clock::Thread);
    let result = catch_unwind(AssertUnwindSafe(|| (target.parse)(input)));
    let took = cpu_time(Clock::Thread).saturating_sub(started);
    QUIET.with(|q| q.set(false));
    match result {
        Err(_) => {
            let message = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_default();
            Checked {
                finding: Some(Kind::Panic(message)),
                outcome: None,
                took,
            }
        }
        Ok(outcome) => {
            let finding = if took > slow {
                Some(Kind::Slow(took))
            } else if let Outcome::Failed(m) = &outcome {
                Some(Kind::NotUsers(m.clone()))
            } else if let Outcome::Refused(m) = &outcome
                && let Some(name) = target.names
                && !m.contains(name)
            {
                Some(Kind::Unnamed(m.clone()))
            } else {
                None
            };
            Checked {
                finding,
                outcome: Some(outcome),
                took,
            }
        }
    }
}

/// Run `settings.inputs` inputs through `target`.
pub fn run(target: &Target, settings: &Settings) -> Report {
    let mut rng = Rng::new(settings.seed ^ fnv(target.name.as_bytes()));
    let mut corpus: Vec<Vec<u8>> = (target.seeds)();
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let seeds = corpus.len() as u64;
    let mut seen: HashSet<String> = HashSet::new();
    let mut report = Report {
        target: target.name,
        ..Report::default()
    };
    let started = Instant::now();
    let cpu_started = cpu_time(Clock::Thread);
    for index in 0..settings.inputs {
        // The seeds themselves first, then mutations.
        let input = if index < seeds {
            corpus[index as usize].clone()
        } else {
            mutate(&corpus, &mut rng)
        };
        if let Some(current) = &settings.current {
            let mut c = current.lock().unwrap_or_else(|p| p.into_inner());
            c.0 = index;
            c.1.clear();
            c.1.extend_from_slice(&input);
        }
        if let Some((from, path)) = &settings.save_from
            && index >= *from
        {
            let _ = std::fs::write(path, &input);
        }
        let Checked {
            finding: kind,
            outcome,
            took,
        } = check(target, &input, settings.slow);
        report.slowest = report.slowest.max(took);
        report.inputs += 1;
        let new = match &outcome {
            Some(Outcome::Accepted) => {
                report.accepted += 1;
                // A few accepted inputs too, so mutations stay near valid files.
                seen.insert(format!("ok {}", input.len().ilog2_or_zero()))
            }
            Some(Outcome::Refused(m) | Outcome::Failed(m)) => {
                report.refused += 1;
                seen.insert(shape(m))
            }
            None => false,
        };
        if new && corpus.len() < 4096 && input.len() <= MAX_KEPT {
            corpus.push(input.clone());
        }
        if let Some(kind) = kind {
            let repeat = report.findings.iter().any(|f| same_place(&f.kind, &kind));
            if !repeat {
                report.findings.push(Finding { index, kind, input });
            }
            if report.findings.len() >= settings.max_findings {
                break;
            }
        }
    }
    report.elapsed = started.elapsed();
    report.cpu = cpu_time(Clock::Thread).saturating_sub(cpu_started);
    report.messages = seen.len();
    report.shapes = seen.into_iter().collect();
    report.shapes.sort();
    report.corpus = corpus.len();
    report
}

/// Findings of one kind at one place are one finding.
fn same_place(a: &Kind, b: &Kind) -> bool {
    match (a, b) {
        (Kind::Panic(x), Kind::Panic(y)) => {
            x.rsplit(" at ").next() == y.rsplit(" at ").next() && x.contains(" at ")
        }
        (Kind::Slow(_), Kind::Slow(_)) => true,
        (Kind::Unnamed(x), Kind::Unnamed(y)) | (Kind::NotUsers(x), Kind::NotUsers(y)) => {
            shape(x) == shape(y)
        }
        _ => false,
    }
}

trait Ilog2OrZero {
    fn ilog2_or_zero(self) -> u32;
}

impl Ilog2OrZero for usize {
    fn ilog2_or_zero(self) -> u32 {
        self.checked_ilog2().unwrap_or(0)
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// An input as a Rust byte-string literal (for a regression test).
pub fn escape(input: &[u8]) -> String {
    let mut out = String::from("b\"");
    for &b in input {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI's short seeded run of every parser: any panic, hang or refusal that does not name
    /// its file fails, with the input to keep as a regression test beside the parser.
    #[test]
    fn every_parser_survives_a_short_seeded_run() {
        let settings = Settings {
            seed: 55,
            inputs: 4000,
            // Generous: the test binary's other tests share the machine.
            slow: Duration::from_secs(5),
            ..Settings::default()
        };
        let mut failures = Vec::new();
        for target in all() {
            let report = run(&target, &settings);
            assert_eq!(report.inputs, settings.inputs, "{}", target.name);
            for f in &report.findings {
                failures.push(format!(
                    "{} input #{}: {:?}\n  input: {}",
                    target.name,
                    f.index,
                    f.kind,
                    escape(&f.input[..f.input.len().min(2000)])
                ));
            }
        }
        remove_files();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn a_run_is_a_pure_function_of_its_seed() {
        let target = all().into_iter().find(|t| t.name == "vars").unwrap();
        let settings = Settings {
            inputs: 300,
            ..Settings::default()
        };
        let a = run(&target, &settings);
        let b = run(&target, &settings);
        assert_eq!(
            (a.accepted, a.refused, a.corpus),
            (b.accepted, b.refused, b.corpus)
        );
    }

    #[test]
    fn a_panic_is_a_finding_with_its_place() {
        let target = Target {
            name: "panics",
            names: None,
            seeds: || vec![b"x".to_vec()],
            parse: |input| {
                if input.is_empty() {
                    panic!("empty");
                }
                Outcome::Accepted
            },
        };
        match check(&target, b"", Duration::from_secs(1)).finding {
            Some(Kind::Panic(m)) => assert!(m.starts_with("empty at src/fuzz/mod.rs:"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(check(&target, b"x", Duration::from_secs(1)).finding, None);
    }

    #[test]
    fn a_message_without_the_file_is_a_finding() {
        let target = Target {
            name: "unnamed",
            names: Some("f.txt"),
            seeds: || vec![],
            parse: |input| Outcome::Refused(String::from_utf8_lossy(input).into_owned()),
        };
        let named = check(&target, b"f.txt:3: bad", Duration::from_secs(1));
        assert_eq!(named.finding, None);
        let unnamed = check(&target, b"bad", Duration::from_secs(1));
        assert_eq!(unnamed.finding, Some(Kind::Unnamed("bad".into())));
    }

    #[test]
    fn shapes_leave_out_digits_and_quotes() {
        assert_eq!(
            shape("f:12: unknown key `Foo` in \"x\" 3.5"),
            shape("f:9: unknown key `Bar` in \"yy\" 7.25")
        );
        assert_ne!(shape("f:1: bad min"), shape("f:1: bad max"));
    }
}
