//! What vampirc-uci 0.11 gets right and wrong, checked rather than assumed. These tests pin the
//! facts behind the split in `src/engine/` (vampirc for option declarations, our tokenizer for
//! `info`/`bestmove`). If vampirc changes, they fail and the split should be revisited.

use std::io::Write;
use std::process::{Command, Stdio};

use spsa::engine::options::{parse_option_line, parse_option_own};
use spsa::engine::parse::{EngineLine, parse_line};
use spsa::engine::{OptionKind, Score};
use vampirc_uci::{UciInfoAttribute, UciMessage, UciOptionConfig, parse_one};

/// Run vampirc on a line, reporting a panic as `None` (test-only; production never does this).
fn vampirc(line: &str) -> Option<UciMessage> {
    // The panic message goes to the test's captured output.
    std::panic::catch_unwind(|| parse_one(line)).ok()
}

#[test]
fn vampirc_info_and_bestmove_claims() {
    // Panics on a depth above 255.
    assert!(vampirc("info depth 300 score cp 10").is_none());
    assert!(
        matches!(parse_line("info depth 300 score cp 10"), EngineLine::Info(i) if i.depth == Some(300))
    );

    // `bestmove (none)` and `bestmove 0000` are Unknown.
    for l in ["bestmove (none)", "bestmove 0000"] {
        assert!(matches!(vampirc(l), Some(UciMessage::Unknown(..))), "{l}");
    }

    // Everything after `wdl` is swallowed into one `Any` attribute.
    let l = "info depth 20 score cp 13 wdl 10 20 970 nodes 12345 pv e2e4 e7e5";
    let Some(UciMessage::Info(attrs)) = vampirc(l) else {
        panic!()
    };
    assert!(
        !attrs
            .iter()
            .any(|a| matches!(a, UciInfoAttribute::Nodes(_)))
    );
    assert!(
        attrs.iter().any(
            |a| matches!(a, UciInfoAttribute::Any(k, v) if k == "wdl" && v.contains("pv e2e4"))
        )
    );

    // `score mate 200` wraps (i8) to a negative number.
    let Some(UciMessage::Info(attrs)) = vampirc("info depth 20 score mate 200") else {
        panic!()
    };
    let mate = attrs.iter().find_map(|a| match a {
        UciInfoAttribute::Score { mate, .. } => *mate,
        _ => None,
    });
    assert_eq!(mate, Some(-56));
    assert!(
        matches!(parse_line("info score mate 200"), EngineLine::Info(i) if i.score == Some(Score::Mate(200)))
    );

    // What it gets right: an ordinary bestmove with ponder.
    assert!(matches!(
        vampirc("bestmove e2e4 ponder e7e5"),
        Some(UciMessage::BestMove {
            ponder: Some(_),
            ..
        })
    ));
}

#[test]
fn vampirc_truncates_long_spin_bounds() {
    let l = "option name Big type spin default 1 min 0 max 99999999999999";
    let Some(UciMessage::Option(UciOptionConfig::Spin { max, .. })) = vampirc(l) else {
        panic!()
    };
    assert_eq!(
        max,
        Some(999_999_999_999),
        "12 digits kept, the rest silently dropped"
    );
    // Which is why such lines go to our reader.
    assert!(matches!(
        parse_option_line(l).unwrap().kind,
        OptionKind::Spin {
            max: Some(99_999_999_999_999),
            ..
        }
    ));
}

fn option_lines(path: &str) -> Option<Vec<String>> {
    if !std::path::Path::new(path).exists() {
        if std::env::var_os("SPSA_SKIP_REAL_ENGINES").is_some() {
            return None;
        }
        panic!("{path} is not installed (or set SPSA_SKIP_REAL_ENGINES=1)");
    }
    let mut child = Command::new(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"uci\nquit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(
        text.lines()
            .filter(|l| l.starts_with("option"))
            .map(str::to_string)
            .collect(),
    )
}

/// vampirc reads every option line of the three Debian engines, and agrees with our own reader.
#[test]
fn vampirc_reads_real_engines_option_lines() {
    for (path, at_least) in [
        ("/usr/games/stockfish", 20),
        ("/usr/games/toga2", 30),
        ("/usr/games/glaurung", 50),
    ] {
        let Some(lines) = option_lines(path) else {
            continue;
        };
        assert!(
            lines.len() >= at_least,
            "{path}: {} option lines",
            lines.len()
        );
        for l in &lines {
            let Some(UciMessage::Option(cfg)) = vampirc(l) else {
                panic!("{path}: vampirc cannot read {l:?}")
            };
            let ours = parse_option_own(l).unwrap();
            assert_eq!(cfg.get_name(), ours.name, "{l}");
            let via = parse_option_line(l).unwrap();
            match (&via.kind, &ours.kind) {
                // vampirc reads `default ` (nothing after) as None, we as "": both mean empty.
                (OptionKind::String { default: None }, OptionKind::String { default: Some(d) }) => {
                    assert!(d.is_empty(), "{l}")
                }
                (a, b) => assert_eq!(a, b, "{l}"),
            }
        }
        eprintln!("{path}: vampirc read all {} option lines", lines.len());
    }
}
