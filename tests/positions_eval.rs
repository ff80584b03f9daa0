//! Scoring labelled positions through real UCI processes: the scripted stand-in (exact scores,
//! crashes, hangs, missing scores), the sparring engine, and Toga II's ignored node limit.

use crate::standin;

use std::path::Path;
use std::time::Duration;

use spsa::arena::EngineSetup;
use spsa::config::positions::PositionSearch;
use spsa::engine::{EngineSpec, OptionValue};
use spsa::positions::eval::{
    EvalEngine, EvalSettings, Evaluator, FenBatch, SCORE_BOUND_CP, paired_loss,
};
use spsa::positions::{LabelledPositions, Loss, LossKind};

const POSITIONS: &str = "\
rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [1-0]
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 [0-1]
r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3 [1/2-1/2]
r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4 [1-0]
r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4 [0.5]
8/5k2/8/8/8/8/3K4/6R1 b - - 0 60 [1.0]
";

fn positions() -> LabelledPositions {
    LabelledPositions::read(Path::new("t.epd"), POSITIONS.as_bytes()).unwrap()
}

fn standin(args: &[&str]) -> EngineSetup {
    let mut spec = EngineSpec::new("standin", standin::standin());
    spec.args = ["--spin", "Val=0:-5000:5000", "--score-option", "Val"]
        .iter()
        .chain(args)
        .map(|s| s.to_string())
        .collect();
    spec.ready_timeout = Duration::from_secs(5);
    EngineSetup {
        spec,
        fixed: Vec::new(),
    }
}

fn depth1(deadline_ms: u64) -> EvalSettings {
    EvalSettings {
        search: PositionSearch::Depth(1),
        deadline: Duration::from_millis(deadline_ms),
    }
}

fn val(v: f64) -> Vec<(String, f64)> {
    vec![("Val".to_string(), v)]
}

fn all() -> Vec<usize> {
    (0..6).collect()
}

#[tokio::test]
async fn scores_are_whites_view_and_clipped() {
    let set = positions();
    let tuned = ["Val".to_string()];
    let mut e = EvalEngine::start(&standin(&[]), depth1(10_000), &tuned)
        .await
        .unwrap();
    let s = e.score(&set, &all(), &val(37.0)).await.unwrap();
    let want: Vec<Option<f64>> = [37.0, -37.0, 37.0, 37.0, -37.0, -37.0]
        .into_iter()
        .map(Some)
        .collect();
    assert_eq!(s.scores, want);
    assert!(s.faults.is_empty());
    // A new value is sent; beyond the bound it is clipped.
    let s = e.score(&set, &[0, 1], &val(4000.0)).await.unwrap();
    assert_eq!(s.scores, [Some(SCORE_BOUND_CP), Some(-SCORE_BOUND_CP)]);
    // Mate scores (the stand-in's deep info line: mate 200 for the side to move) hit the bound.
    let mut e = EvalEngine::start(&standin(&["--deep-info"]), depth1(10_000), &tuned)
        .await
        .unwrap();
    let s = e.score(&set, &[0, 1], &val(5.0)).await.unwrap();
    assert_eq!(s.scores, [Some(SCORE_BOUND_CP), Some(-SCORE_BOUND_CP)]);
}

#[tokio::test]
async fn unknown_tuned_option_is_an_error_before_any_search() {
    let e = EvalEngine::start(&standin(&[]), depth1(10_000), &["Nope".to_string()]).await;
    let msg = format!("{:#}", e.err().unwrap());
    assert!(msg.contains("no option") && msg.contains("Nope"), "{msg}");
}

#[tokio::test]
async fn a_crash_costs_one_position_and_the_values_come_back_after_restart() {
    let set = positions();
    let tuned = ["Val".to_string()];
    let mut e = EvalEngine::start(&standin(&["--crash-after", "2"]), depth1(10_000), &tuned)
        .await
        .unwrap();
    let s = e.score(&set, &all(), &val(11.0)).await.unwrap();
    assert_eq!(
        s.scores,
        [Some(11.0), Some(-11.0), None, Some(11.0), Some(-11.0), None]
    );
    assert_eq!(s.faults, ["crash", "crash"]);
}

#[tokio::test]
async fn missing_scores_and_hangs_are_counted_and_skipped() {
    let set = positions();
    let tuned = ["Val".to_string()];
    let mut e = EvalEngine::start(&standin(&["--no-score-after", "1"]), depth1(10_000), &tuned)
        .await
        .unwrap();
    let s = e.score(&set, &[0, 1, 2], &val(3.0)).await.unwrap();
    assert_eq!(s.scores, [Some(3.0), None, None]);
    assert_eq!(s.faults, ["no score", "no score"]);

    // A hang: stopped at the deadline, killed (it ignores stop), restarted, and the next
    // position is scored by the fresh process. The deadline leaves a loaded machine time for
    // the answers that do come.
    let mut e = EvalEngine::start(&standin(&["--hang-after", "1"]), depth1(1500), &tuned)
        .await
        .unwrap();
    let s = e.score(&set, &[0, 1, 2], &val(3.0)).await.unwrap();
    assert_eq!(s.scores, [Some(3.0), None, Some(3.0)]);
    assert_eq!(s.faults, ["stall"]);
}

#[tokio::test]
async fn paired_loss_leaves_a_failed_position_out_of_both_sides() {
    let set = positions();
    let tuned = ["Val".to_string()];
    // Each process answers 3 searches and crashes on its 4th. θ+: positions 0-2 fine, 3
    // crashes; the restarted process scores 4, 5. θ−: position 0 (its 3rd search), 1 crashes;
    // the next process scores 2-4 and crashes on 5. Failed on either side: 1, 3, 5.
    let mut e = EvalEngine::start(&standin(&["--crash-after", "3"]), depth1(10_000), &tuned)
        .await
        .unwrap();
    let loss = Loss::new(LossKind::Texel, 1.0);
    let p = paired_loss(&mut e, &set, &all(), &val(100.0), &val(-100.0), &loss)
        .await
        .unwrap();
    assert_eq!((p.count, p.failed), (3, 3));
    let expect = |v: f64| -> f64 {
        [0usize, 2, 4]
            .into_iter()
            .map(|i| {
                let white = [true, false, true, true, false, false][i];
                loss.point(set.outcome(i), if white { v } else { -v })
            })
            .sum()
    };
    assert!((p.plus - expect(100.0)).abs() < 1e-12, "{p:?}");
    assert!((p.minus - expect(-100.0)).abs() < 1e-12, "{p:?}");
    assert_eq!(p.faults, ["crash", "crash", "crash"]);
}

fn sparring() -> EngineSetup {
    EngineSetup {
        spec: EngineSpec::new("sparring", env!("CARGO_BIN_EXE_sparring")),
        fixed: vec![("Hash".into(), OptionValue::Number(1.0))],
    }
}

#[tokio::test]
async fn sparring_scores_are_reproducible_and_move_with_the_weights() {
    let set = positions();
    let tuned = ["PawnValue".to_string(), "Tempo".to_string()];
    let ev = Evaluator::start(&sparring(), depth1(10_000), &tuned, 2)
        .await
        .unwrap();
    assert_eq!(ev.len(), 2);
    let at = |p: f64, t: f64| vec![("PawnValue".to_string(), p), ("Tempo".to_string(), t)];
    let a = ev.score_all(&set, &at(100.0, 10.0)).await.unwrap();
    let b = ev.score_all(&set, &at(100.0, 10.0)).await.unwrap();
    assert_eq!(a.scores, b.scores);
    assert!(a.scores.iter().all(Option::is_some));
    // The rook ending (Black to move, White a rook up): clearly good for White.
    assert!(a.scores[5].unwrap() > 300.0, "{:?}", a.scores);
    let c = ev.score_all(&set, &at(100.0, 40.0)).await.unwrap();
    assert_ne!(a.scores, c.scores);
    let loss = Loss::new(LossKind::Texel, 1.0);
    let (mean, _) = ev.mean_loss(&set, &at(100.0, 10.0), &loss).await.unwrap();
    assert!(mean > 0.0 && mean < 1.0);
    ev.quit_all().await;
}

#[tokio::test]
async fn an_engine_that_ignores_go_nodes_is_refused_with_the_fix() {
    let toga = Path::new("/usr/games/toga2");
    if !toga.exists() {
        eprintln!("skipped: no {}", toga.display());
        return;
    }
    let settings = EvalSettings {
        search: PositionSearch::Nodes(1000),
        deadline: Duration::from_millis(1500),
    };
    let setup = EngineSetup {
        spec: EngineSpec::new("toga2", toga),
        fixed: vec![("Hash".into(), OptionValue::Number(4.0))],
    };
    let e = EvalEngine::start(&setup, settings, &[]).await;
    let msg = format!("{:#}", e.err().unwrap());
    assert!(
        msg.contains("ignores `go nodes 1000`") && msg.contains("depth"),
        "{msg}"
    );
    // The same engine at depth 1 scores positions.
    let mut e = EvalEngine::start(&setup, depth1(10_000), &[])
        .await
        .unwrap();
    let s = e.score(&positions(), &all(), &[]).await.unwrap();
    assert!(s.scores.iter().all(Option::is_some), "{s:?}");
}

#[tokio::test]
async fn a_scoring_nobody_waits_for_ends_after_the_search_under_way() {
    // Each search takes 1 s: the six positions would take 6 s.
    let ev = Evaluator::start(
        &standin(&["--think", "1000"]),
        depth1(10_000),
        &["Val".into()],
        1,
    )
    .await
    .unwrap();
    let (set, at) = (positions(), val(50.0));
    let gave_up = tokio::time::timeout(Duration::from_millis(300), ev.score_all(&set, &at));
    assert!(gave_up.await.is_err());
    // The batch ends after its first search, the engine is quit, and the next scoring restarts
    // it with its values: far sooner than the rest of the abandoned batch would have taken.
    let started = std::time::Instant::now();
    let one = ev.score(0, FenBatch::of(&set, &[0]), &at).await.unwrap();
    assert_eq!(one.scores, [Some(50.0)]);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the abandoned batch ran on: {:?}",
        started.elapsed()
    );
    ev.quit_all().await;
}
