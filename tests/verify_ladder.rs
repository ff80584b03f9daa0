//! The confirmation ladder (`[[verify]]`, issue 57) end to end on the sparring engine: steps
//! played in order after the tune, each at its own limit and against its own opponent, each
//! recorded as it ends; the first failed step stops the ladder; a kill -9 between steps resumes
//! at the next unplayed step and never replays a finished one; the verdicts reach the summary,
//! the record and `spsa report`; a record of another ladder is refused.

use crate::match_common::*;
use std::time::{Duration, Instant};

/// A tune of minor pieces worth 60 (sparring's defaults are 320 and 330), which four iterations
/// cannot repair, and its three-step ladder: 10 pairs at 300 nodes against the start that
/// pass (both sides play the same values, and only an interval below -1000 Elo fails), an
/// SPRT against the engine's defaults that must accept H0, and a step never reached.
fn ladder_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("minors.var"),
        "KnightValue,60,50,700,5,0.001,0\nBishopValue,60,50,700,5,0.001,0\n",
    )
    .unwrap();
    std::fs::write(
        d.join("t.toml"),
        format!(
            "variables = \"minors.var\"\nlog = \"t.log\"\niterations = 4\nA = 10\ngamma = 0.101\nalpha = 0.602\n\
             concurrency = 1\nseed = 5\n[engine1]\ncommand = {:?}\n[games]\nbook = {:?}\ndepth = 1\nmax_plies = 200\n\
             [[verify]]\npairs = 10\nnodes = 300\nfail_below = -1000\n\
             [[verify]]\nsprt = \"0,30\"\npairs = 400\nagainst = \"defaults\"\n\
             [[verify]]\npairs = 2\ndepth = 2\n",
            sparring(),
            book().display().to_string()
        ),
    )
    .unwrap();
    dir
}

const STEP1: &str =
    "10 pairs (fails when the Elo interval lies below -1000) at 300 nodes against the start";
const STEP2: &str = "SPRT [0,30] (at most 400 pairs) at the tune's limit against the defaults";

#[test]
fn a_ladder_plays_its_steps_in_order_stops_at_the_first_failure_and_resumes_between_steps() {
    let dir = ladder_run();
    let d = dir.path();
    let conf = d.join("t.toml");
    let conf = conf.to_str().unwrap();
    let record = d.join("t.verify.txt");

    // The tune and its first step; killed (-9) once the first step is recorded.
    let mut child = spawn(&["run", conf]);
    let t = Instant::now();
    loop {
        let text = std::fs::read_to_string(&record).unwrap_or_default();
        if text.contains("step 1 of 3 passed") {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "ended ({status}) before step 1 was recorded: {}{}",
                stdout(&o),
                stderr(&o)
            );
        }
        assert!(t.elapsed() < Duration::from_secs(120), "no step recorded");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    let o = child.wait_with_output().unwrap();
    let first = stdout(&o);
    assert!(
        first.contains(&format!("step 1 of 3: {STEP1}\n")),
        "{first}"
    );
    // The step's own limit, not the tune's depth 1.
    assert!(
        first.contains("10 pairs, concurrency 1, nodes=300"),
        "{first}"
    );
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.matches("verdict: ").count(), 1, "{text}");
    assert!(
        text.starts_with(&format!("step 1 of 3: {STEP1}\nverify: tuned (")),
        "{text}"
    );

    // The resume prints the recorded step, plays the second, which fails, and stops there.
    let o = run(&["run", conf, "--resume"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let recorded = out
        .lines()
        .find(|l| l.starts_with("step 1 of 3 passed: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(recorded.contains(" (recorded in "), "{recorded}");
    assert!(
        !out.contains(&format!("step 1 of 3: {STEP1}")),
        "replayed: {out}"
    );
    assert_eq!(out.matches("verify: tuned (").count(), 1, "{out}");
    assert!(out.contains(&format!("step 2 of 3: {STEP2}\n")), "{out}");
    assert!(
        out.contains("vs the engine's defaults (no tuned option sent)"),
        "{out}"
    );
    assert!(out.contains("concurrency 1, depth=1"), "{out}");
    let verdict = out
        .lines()
        .find(|l| l.starts_with("step 2 of 3 failed: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(verdict.contains("accepted H0"), "{verdict}");
    assert!(
        out.contains("verification: step 3 of 3 not played (the ladder stopped at step 2)\n"),
        "{out}"
    );
    assert!(
        out.contains("verification: failed at step 2 of 3\n"),
        "{out}"
    );
    assert!(!out.contains("step 3 of 3: "), "step 3 played: {out}");
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.matches("verdict: ").count(), 2, "{text}");
    assert_eq!(text.matches(&format!("step 1 of 3: {STEP1}")).count(), 1);
    assert!(text.ends_with("step 2 of 3 failed\n"), "{text}");

    // Once more: everything is recorded, nothing is played.
    let o = run(&["run", conf, "--resume"]);
    let again = stdout(&o);
    assert!(o.status.success(), "{again}{}", stderr(&o));
    assert!(!again.contains("verify: "), "played again: {again}");
    assert!(
        again.contains("verification: failed at step 2 of 3"),
        "{again}"
    );

    // `spsa report` shows each step's verdict and where the ladder stopped.
    let o = run(&["report", d.join("t.log").to_str().unwrap()]);
    let report = stdout(&o);
    assert!(o.status.success(), "{report}{}", stderr(&o));
    assert!(
        report.contains("verification: step 1 of 3 passed: "),
        "{report}"
    );
    assert!(
        report.contains(&format!("verification: {verdict}\n")),
        "{report}"
    );
    assert!(
        report.contains("verification: failed at step 2 of 3"),
        "{report}"
    );

    // A record of another ladder is refused, naming it, before anything is played.
    let edited = std::fs::read_to_string(d.join("t.toml"))
        .unwrap()
        .replace("sprt = \"0,30\"", "sprt = \"0,20\"");
    std::fs::write(d.join("t.toml"), edited).unwrap();
    let o = run(&["run", conf, "--resume"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("t.verify.txt: it records step 2 as `SPRT [0,30]"),
        "{err}"
    );
    assert!(err.contains("move the record aside"), "{err}");
}

/// A bad step stops `spsa run` before anything is written: exit 2, naming the file, the line
/// of the step's table and the step.
#[test]
fn a_bad_step_is_refused_at_its_line_before_the_tune() {
    let dir = ladder_run();
    let d = dir.path();
    let text = std::fs::read_to_string(d.join("t.toml")).unwrap();
    let text = text.replace(
        "[[verify]]\npairs = 2\ndepth = 2\n",
        "[[verify]]\ndepth = 2\n",
    );
    std::fs::write(d.join("t.toml"), &text).unwrap();
    let line = text.lines().count() - 1;
    let o = run(&["run", d.join("t.toml").to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "t.toml:{line}: [[verify]] step 3: a step needs `pairs` (a number of pairs) or `sprt` (a test), or both"
        )),
        "{err}"
    );
    assert!(!d.join("t.log").exists() && !d.join("t.checkpoint.var").exists());
}
