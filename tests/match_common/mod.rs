//! Helpers shared by the `spsa match`/`spsa verify` tests: run the binary, read its result lines.

#![allow(dead_code)]

use crate::standin;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn spsa() -> Command {
    Command::new(env!("CARGO_BIN_EXE_spsa"))
}

pub fn sparring() -> &'static str {
    env!("CARGO_BIN_EXE_sparring")
}

pub fn standin() -> &'static str {
    standin::standin()
}

/// The shipped book, absolute.
pub fn book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("openings/balanced_6ply.epd")
}

pub fn run(args: &[&str]) -> Output {
    spsa().args(args).output().expect("spsa runs")
}

/// `spsa` with `args` started, its stdout and stderr piped.
pub fn spawn(args: &[&str]) -> std::process::Child {
    spsa()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spsa starts")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The counts `spsa match` prints.
#[derive(Debug, Default, PartialEq)]
pub struct Counts {
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub pairs: u64,
    pub penta: [u64; 5],
    pub score_pct: f64,
    pub faults: String,
}

fn numbers(s: &str) -> Vec<u64> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect()
}

/// Parse the `games:`, `score:` and `faults:` lines of the output.
pub fn counts(out: &str) -> Counts {
    let mut c = Counts::default();
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("games: ") {
            // games: 8 (+6 =1 -1), pairs: 4, pentanomial [0, 0.5, 1, 1.5, 2]: [0, 0, 1, 1, 2]
            let (head, penta) = rest.split_once("pentanomial").unwrap();
            let n = numbers(head);
            (c.games, c.wins, c.draws, c.losses, c.pairs) = (n[0], n[1], n[2], n[3], n[4]);
            let p = numbers(penta.split_once("]:").unwrap().1);
            c.penta.copy_from_slice(&p);
        } else if let Some(rest) = line.strip_prefix("score: ") {
            c.score_pct = rest.split('%').next().unwrap().parse().unwrap();
        } else if let Some(rest) = line.strip_prefix("faults: ") {
            c.faults = rest.to_string();
        }
    }
    assert!(c.games > 0 || out.contains("no games played"), "{out}");
    c
}

/// The counts are consistent: two games per pair, W+D+L = games, pentanomial sums to pairs and
/// agrees with the game counts.
pub fn assert_consistent(c: &Counts) {
    assert_eq!(c.games, 2 * c.pairs, "{c:?}");
    assert_eq!(c.wins + c.draws + c.losses, c.games, "{c:?}");
    assert_eq!(c.penta.iter().sum::<u64>(), c.pairs, "{c:?}");
    // Points from the pentanomial (in half-points) equal points from W/D/L.
    let halves: u64 = c.penta.iter().enumerate().map(|(i, n)| i as u64 * n).sum();
    assert_eq!(halves, 2 * c.wins + c.draws, "{c:?}");
}

/// PGN tag values of one tag, in file order.
pub fn tags(pgn: &str, tag: &str) -> Vec<String> {
    let prefix = format!("[{tag} \"");
    pgn.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.trim_end_matches("\"]").to_string())
        .collect()
}

/// The first `n` positions of the bundled book, as a book of their own.
pub fn small_book(dir: &Path, name: &str, n: usize) -> String {
    let text = std::fs::read_to_string(book()).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .take(n)
        .collect();
    assert_eq!(lines.len(), n);
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.to_str().unwrap().to_string()
}

/// Each game of a PGN file: its Event and FEN tags.
pub fn pgn_events_and_fens(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let tag = |block: &str, name: &str| {
        block
            .lines()
            .find_map(|l| l.strip_prefix(&format!("[{name} \"")))
            .map(|v| v.trim_end_matches("\"]").to_string())
            .unwrap_or_default()
    };
    text.split("[Event ")
        .skip(1)
        .map(|g| {
            let block = format!("[Event {g}");
            (tag(&block, "Event"), tag(&block, "FEN"))
        })
        .collect()
}

/// A PGN file's games as words, in the order they were written, with what depends on when
/// they were played left out: the Date tag and the comments (which carry search times). Two
/// runs that played the same games give the same words.
pub fn pgn_words_without_times(pgn: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(pgn).unwrap();
    let mut words = String::new();
    let mut depth = 0;
    for line in text.lines().filter(|l| !l.starts_with("[Date ")) {
        for c in line.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ if depth == 0 => words.push(c),
                _ => {}
            }
        }
        words.push('\n');
    }
    words.split_whitespace().map(str::to_string).collect()
}
