//! An engine with 50,000 options (the bundled sparring engine with `--extra-options 50000`):
//! every declaration is read, the first configuration goes out whole, and after that only the
//! options whose value changed are sent again, as the engine log shows; a restart sends them all again.

use std::path::Path;

use spsa::engine::log::EngineLog;
use spsa::engine::{EngineSpec, OptionValue, UciEngine};

const EXTRA: usize = 50_000;

/// The lines sent to the engine since the log's `from`-th line: (the lines, the log's length).
fn sent_since(log: &EngineLog, from: usize) -> (Vec<String>, usize) {
    log.flush();
    let text = std::fs::read_to_string(log.path()).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let sent = lines[from..]
        .iter()
        .filter_map(|l| l.split_once(" > ").map(|(_, cmd)| cmd.to_string()))
        .collect();
    (sent, lines.len())
}

fn wishes(value: impl Fn(usize) -> f64) -> Vec<(String, OptionValue)> {
    (1..=EXTRA)
        .map(|i| (format!("Extra{i}"), OptionValue::Number(value(i))))
        .collect()
}

#[tokio::test]
async fn fifty_thousand_options_go_out_once_and_then_only_when_changed() {
    let dir = tempfile::tempdir().unwrap();
    let log = EngineLog::open(&dir.path().join("engines.log")).unwrap();
    let mut spec = EngineSpec::new("sparring", env!("CARGO_BIN_EXE_sparring"));
    spec.args = vec!["--extra-options".into(), EXTRA.to_string()];
    spec.log = Some(log.seat(1));
    let mut e = UciEngine::start(spec).await.expect("sparring starts");
    // Hash, UCI_Chess960, the 14 weights and the extras, in the engine's order.
    assert_eq!(e.options().len(), 16 + EXTRA);
    assert_eq!(e.options()[16 + 41].name, "Extra42");
    assert!(e.options().find("EXTRA50000").is_some());
    let (_, mut at) = sent_since(&log, 0);

    let first = wishes(|i| (i % 7) as f64);
    e.configure(first.iter().map(|(n, v)| (n.as_str(), v)))
        .await
        .unwrap();
    let (sent, now) = sent_since(&log, at);
    at = now;
    // Every wish goes out the first time, a declared default too (an engine's declaration is
    // not proof of what it plays with).
    let changed: Vec<String> = (1..=EXTRA)
        .map(|i| format!("setoption name Extra{i} value {}", i % 7))
        .collect();
    assert_eq!(sent.len(), changed.len() + 1, "{:?}", &sent[..3]);
    assert_eq!(sent[..changed.len()], changed[..]);
    assert_eq!(sent.last().map(String::as_str), Some("isready"));

    // The same values again: nothing but `isready`. One changed: that one.
    e.configure(first.iter().map(|(n, v)| (n.as_str(), v)))
        .await
        .unwrap();
    let mut second = first.clone();
    second[41].1 = OptionValue::Number(-5.0);
    e.configure(second.iter().map(|(n, v)| (n.as_str(), v)))
        .await
        .unwrap();
    let (sent, now) = sent_since(&log, at);
    at = now;
    assert_eq!(
        sent,
        ["isready", "setoption name Extra42 value -5", "isready"],
    );

    // A bad wish anywhere sends nothing: the engine keeps what it had.
    let mut bad = second.clone();
    bad[EXTRA - 1].1 = OptionValue::Number(5000.0);
    bad[0].1 = OptionValue::Number(3.0);
    let err = e
        .configure(bad.iter().map(|(n, v)| (n.as_str(), v)))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Extra50000"), "{err}");
    let (sent, now) = sent_since(&log, at);
    at = now;
    assert!(sent.is_empty(), "{sent:?}");

    // A restart sends everything the engine had, in one go, then `isready`.
    e.restart().await.unwrap();
    let (sent, _) = sent_since(&log, at);
    let resent: Vec<&String> = sent.iter().filter(|l| l.starts_with("setoption")).collect();
    assert_eq!(resent.len(), changed.len());
    assert!(resent.contains(&&"setoption name Extra42 value -5".to_string()));
    assert_eq!(sent.last().map(String::as_str), Some("isready"));
    e.quit().await;
    assert!(Path::new(log.path()).exists());
}
