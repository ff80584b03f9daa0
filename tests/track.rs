//! The live Elo curve (`[track]`) end to end: the simulated known-truth coverage of its 95%
//! intervals, exactness across kill -9 and `--resume`, the stop rule, refused keys, and on the
//! sparring engine, that its games never use a tuning opening.

use crate::match_common;
use crate::run_common;

use std::collections::BTreeSet;
use std::path::Path;

use match_common::{run, small_book, sparring, stderr};
use run_common::{kill_9_midway, log_iterations, spsa_in as in_dir, text};

/// x costs 64 Elo at its start and y 22.5: the tune has far to climb, and its R_end lets it.
const VARS: &str = "x,800,-1000,1000,50,0.05,1\ny,-150,-200,200,20,0.05,10\n";

fn sim_toml(iterations: u64, seed: u64, track: &str) -> String {
    format!(
        "simulate = true\nvariables = \"t.var\"\nlog = \"logs/t.log\"\niterations = {iterations}\n\
         A = 100\ngamma = 0.101\nalpha = 0.602\nseed = {seed}\ncheckpoint_seconds = 0.05\n\
         [simulation]\ndraw_rate = 0.3\n[track]\n{track}"
    )
}

fn setup(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.var"), VARS).unwrap();
    std::fs::write(dir.path().join("t.toml"), toml).unwrap();
    dir
}

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}{}", text(&o.stdout), stderr(o));
    text(&o.stdout)
}

/// The rows of a track file: its twelve fields each (θ is the log's, not the curve's).
fn rows(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "point,iteration,against,pairs,p0,p1,p2,p3,p4,elo,low,high"
    );
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    assert!(rows.iter().all(|r| r.len() == 12), "{text}");
    rows
}

/// θ after each applied result, by row, as `spsa report --format history` gives it back from
/// the θ log: where a point's θ is read (its `iteration` column is the row).
fn history(dir: &Path) -> std::collections::HashMap<u64, Vec<f64>> {
    let out = ok(&in_dir(
        dir,
        &["report", "logs/t.log", "--format", "history"],
    ));
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("row,iteration,x,y"), "{out}");
    lines
        .map(|l| {
            let f: Vec<f64> = l.split(',').map(|v| v.parse().unwrap()).collect();
            (f[0] as u64, f[2..].to_vec())
        })
        .collect()
}

/// The model's Elo of θ against the start values: score Elo, the Elo a match measures, whatever
/// the draw rate (draws lower a pair's noise, not its Elo).
fn model_elo(theta: &[f64]) -> f64 {
    let elo = |x: f64, y: f64| -(0.0001 * x * x + 0.001 * y * y);
    elo(theta[0], theta[1]) - elo(800.0, -150.0)
}

#[test]
fn the_95_percent_interval_covers_the_models_elo_about_95_percent_of_the_time() {
    let (mut covered, mut total, mut error) = (0u32, 0u32, 0.0f64);
    for seed in 1..=12u64 {
        let dir = setup(&sim_toml(3000, seed, "share = 0.5\npairs = 32\n"));
        let out = ok(&in_dir(dir.path(), &["run", "t.toml"]));
        // The summary says what the run gained so far, pooled over the second half's points.
        assert!(
            out.contains("track: vs start: gained +")
                && out.contains("(pooled 48 points, iterations 1504-3000)"),
            "{out}"
        );
        let rows = rows(&dir.path().join("logs/t.track.csv"));
        let theta_at = history(dir.path());
        // One point every 32 iterations, and one at the end.
        assert_eq!(rows.len(), 94, "seed {seed}");
        for r in &rows {
            let truth = model_elo(&theta_at[&r[1].parse::<u64>().unwrap()]);
            let (low, high): (f64, f64) = (r[10].parse().unwrap(), r[11].parse().unwrap());
            total += 1;
            covered += u32::from(low <= truth && truth <= high);
            error += r[9].parse::<f64>().unwrap() - truth;
        }
        // The curve starts at 0 (θ is the start) and rises: its second half is well above.
        let late: Vec<f64> = rows[47..].iter().map(|r| r[9].parse().unwrap()).collect();
        let mean = late.iter().sum::<f64>() / late.len() as f64;
        assert!(
            mean > 20.0,
            "seed {seed}: the second half's mean Elo is {mean}"
        );
    }
    let coverage = f64::from(covered) / f64::from(total);
    let bias = error / f64::from(total);
    println!(
        "coverage of the model's Elo by the 95% interval: {covered}/{total} = {coverage:.3}; mean error {bias:+.2} Elo"
    );
    assert!((0.90..=0.99).contains(&coverage), "coverage {coverage}");
    // One point's error has a standard deviation of about 35 Elo: the mean of 1128, about 1.
    assert!(
        bias.abs() < 4.0,
        "the measurements are unbiased: mean error {bias}"
    );
}

/// A checkpoint with its folder's name taken out, to compare two runs' in different folders.
fn checkpoint_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("logs/t.checkpoint.var"))
        .unwrap()
        .replace(dir.to_str().unwrap(), "DIR")
}

#[test]
fn the_curve_survives_kill_9_ctrl_c_and_resume_exactly() {
    let n = 300_000;
    let toml = sim_toml(n, 9, "share = 0.1\nagainst = [\"start\"]\npairs = 16\n");
    let dir = setup(&toml);
    kill_9_midway(dir.path());
    let ck = checkpoint_text(dir.path());
    assert!(ck.contains("finished = false"), "killed mid-run:\n{ck}");
    assert!(ck.contains("[track]"), "{ck}");
    ok(&in_dir(dir.path(), &["run", "t.toml", "--resume"]));
    let its = log_iterations(&dir.path().join("logs/t.log"));
    assert_eq!(its, (1..=n).collect::<Vec<_>>(), "every iteration once");

    // Ctrl-C: a clean stop (a measurement in flight is given back), then a resume.
    let stopped = setup(&toml);
    let mut child = match_common::spsa()
        .args(["run", "t.toml"])
        .current_dir(stopped.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Ctrl-C once it is checkpointed and some way in, as seen while it is stopped.
    let log = stopped.path().join("logs/t.log");
    run_common::ctrl_c_when(
        &mut child,
        &stopped.path().join("logs/t.checkpoint.var"),
        |_| std::fs::metadata(&log).is_ok_and(|m| m.len() > 64 * 1024),
    );
    assert!(child.wait_with_output().unwrap().status.success());
    assert!(checkpoint_text(stopped.path()).contains("finished = false"));
    ok(&in_dir(stopped.path(), &["run", "t.toml", "--resume"]));

    let whole = setup(&toml);
    let out = ok(&in_dir(whole.path(), &["run", "t.toml"]));
    assert!(
        out.contains("track: iteration 300000 vs start: Elo"),
        "{out}"
    );
    let a = std::fs::read(dir.path().join("logs/t.track.csv")).unwrap();
    let b = std::fs::read(whole.path().join("logs/t.track.csv")).unwrap();
    assert!(
        a == b,
        "the resumed curve differs from an uninterrupted run's"
    );
    assert_eq!(rows(&dir.path().join("logs/t.track.csv")).len(), 2084);
    assert_eq!(checkpoint_text(dir.path()), checkpoint_text(whole.path()));
    let c = std::fs::read(stopped.path().join("logs/t.track.csv")).unwrap();
    assert!(c == b, "the curve after Ctrl-C and resume differs");
    assert_eq!(
        checkpoint_text(stopped.path()),
        checkpoint_text(whole.path())
    );
}

#[test]
fn a_stop_rule_ends_the_run_and_records_why() {
    let dir = setup(&sim_toml(
        200_000,
        3,
        "share = 0.5\npairs = 32\nstop_when_lower_above = 20\n",
    ));
    let out = in_dir(dir.path(), &["run", "t.toml"]);
    let text = ok(&out);
    assert!(
        text.contains("stopped by the [track] rule stop_when_lower_above: at iteration"),
        "{text}"
    );
    let ck = checkpoint_text(dir.path());
    assert!(ck.contains("finished = true"), "{ck}");
    assert!(ck.contains("stopped = \"stop_when_lower_above"), "{ck}");
    let rows = rows(&dir.path().join("logs/t.track.csv"));
    // It reads the gain so far (pooled), and stopped at the first point where its lower bound
    // passed the target.
    let series: Vec<(u64, [u64; 5])> = rows
        .iter()
        .map(|r| {
            let n = |i: usize| r[i].parse::<u64>().unwrap();
            (n(1), [n(4), n(5), n(6), n(7), n(8)])
        })
        .collect();
    let passes = |k: usize| spsa::stats::gain::lower_above(&series[..k], 20.0);
    assert!(passes(series.len()));
    assert!(
        (1..series.len()).all(|k| !passes(k)),
        "it stopped at the first point past the target"
    );
    let applied = log_iterations(&dir.path().join("logs/t.log")).len();
    assert!(applied < 200_000, "stopped early, at {applied}");
    assert!(ck.contains(&format!("#: applied = {applied}\n")), "{ck}");
    // `spsa report` shows the curve as a table and plots it beside the θ plot.
    let report = ok(&in_dir(
        dir.path(),
        &["report", "logs/t.log", "--plot", "p.svg"],
    ));
    assert!(
        report.contains(&format!("live Elo curve: {} measurements", rows.len())),
        "{report}"
    );
    let svg = std::fs::read_to_string(dir.path().join("p.elo.svg")).unwrap();
    assert!(
        svg.contains("against start") && svg.contains("<polygon"),
        "line, key and band"
    );
    // A resume finds nothing left to do.
    let again = in_dir(dir.path(), &["run", "t.toml", "--resume"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        rows.len(),
        self::rows(&dir.path().join("logs/t.track.csv")).len()
    );
}

#[test]
fn bad_track_keys_are_refused_with_file_line_and_key_and_nothing_written() {
    let cases = [
        (
            "share = 0.7\n",
            "t.toml:13: key `track.share`: the share of games that measure must be above 0 and at most 0.5",
        ),
        ("share = 0\n", "key `track.share`"),
        ("pairs = 32\n", "key `track.share`: missing"),
        (
            "share = 0.1\npairs = 4\n",
            "t.toml:14: key `track.pairs`: pairs per measurement must be from 10",
        ),
        (
            "share = 0.1\nagainst = [\"best\"]\n",
            "t.toml:14: key `track.against`: expected \"start\" or \"defaults\", found \"best\"",
        ),
        (
            "share = 0.1\nagainst = [\"defaults\"]\n",
            "t.toml:14: key `track.against`: \"defaults\" are the engine's own option values: a simulated run has none",
        ),
        (
            "share = 0.1\nagainst = []\n",
            "key `track.against`: name at least one",
        ),
        (
            "share = 0.1\nstop_after_flat = 0\n",
            "t.toml:14: key `track.stop_after_flat`",
        ),
        ("share = 0.1\nshares = 3\n", "t.toml:14"),
    ];
    for (track, want) in cases {
        let dir = setup(&sim_toml(100, 1, track));
        let out = in_dir(dir.path(), &["run", "t.toml"]);
        assert_eq!(out.status.code(), Some(2), "{track}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{track}: {}", stderr(&out));
        assert!(
            !dir.path().join("logs").exists(),
            "{track}: nothing written"
        );
    }
    // A shared run's curve measures on the book's held-out part, which travels to its workers;
    // a verify_book stays on the owner's machine: refused, by --db as by `database`.
    let config = |d: &Path, database: &str| {
        let t = std::fs::read_to_string(d.join("t.toml")).unwrap();
        let t = t.replace(
            "max_plies = 120\n",
            "max_plies = 120\nholdout = 0\nverify_book = \"ten.epd\"\n",
        );
        std::fs::write(d.join("t.toml"), format!("{database}{t}")).unwrap();
    };
    let flagged = sparring_setup(10, 1, "share = 0.1\n");
    config(flagged.path(), "");
    let keyed = sparring_setup(10, 1, "share = 0.1\n");
    config(keyed.path(), "database = \"postgres://localhost/none\"\n");
    for (d, args) in [
        (
            flagged.path(),
            vec!["run", "t.toml", "--db", "postgres://localhost/none"],
        ),
        (keyed.path(), vec!["run", "t.toml"]),
    ] {
        let out = in_dir(d, &args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(
                "t.toml: key `track`: a shared run's curve measures on the book's held-out part"
            ),
            "{}",
            stderr(&out)
        );
        assert!(!d.join("logs").exists(), "nothing written");
    }
}

/// Each game of a PGN file: its Event and FEN tags.
fn games(path: &Path) -> Vec<(String, String)> {
    match_common::pgn_events_and_fens(path)
}

#[test]
fn the_curves_games_never_use_a_tuning_opening() {
    let dir = sparring_setup(
        12,
        2,
        "share = 0.5\nagainst = [\"start\", \"defaults\"]\npairs = 10\n",
    );
    let d = dir.path();
    let conf = d.join("t.toml");
    let out = ok(&run(&["run", conf.to_str().unwrap()]));
    assert!(out.contains("vs defaults: Elo"), "{out}");
    let games = games(&d.join("logs/t.pgn"));
    let (track, tune): (Vec<_>, Vec<_>) = games.iter().partition(|(e, _)| e.contains(" track vs "));
    let tuning: BTreeSet<&String> = tune.iter().map(|(_, f)| f).collect();
    let measured: BTreeSet<&String> = track.iter().map(|(_, f)| f).collect();
    assert_eq!(tune.len(), 24);
    // One point, at the end (its interval, 20 iterations, is longer than the run): 10 pairs
    // against each opponent.
    assert_eq!(track.len(), 40, "{games:?}");
    assert_eq!(tuning.len(), 8, "the tune's part of the book");
    assert_eq!(measured.len(), 2, "the held-out part");
    assert!(tuning.is_disjoint(&measured), "{tuning:?} {measured:?}");
    let rows = std::fs::read_to_string(d.join("logs/t.track.csv")).unwrap();
    assert!(
        rows.contains(",12,start,10,") && rows.contains(",12,defaults,10,"),
        "{rows}"
    );
    // Against the defaults, the other side plays the values the engine declares.
    let pgn = std::fs::read_to_string(d.join("logs/t.pgn")).unwrap();
    let defaults_game = pgn
        .split("[Event ")
        .find(|g| g.contains(" track vs defaults"))
        .unwrap();
    assert!(
        defaults_game.contains("Options \"KnightValue=320; BishopValue=330\""),
        "{defaults_game}"
    );
}

/// A sparring tune at depth 1 from a 10-opening book (2 held out) with the `[track]` table
/// `track`; at Concurrency 1 its games are the same every time.
fn sparring_setup(iterations: u64, concurrency: usize, track: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_book(d, "ten.epd", 10);
    std::fs::write(
        d.join("t.var"),
        "KnightValue,200,50,700,30,0.01,0\nBishopValue,200,50,700,30,0.01,0\n",
    )
    .unwrap();
    std::fs::write(
        d.join("t.toml"),
        format!(
            "variables = \"t.var\"\nlog = \"logs/t.log\"\niterations = {iterations}\nA = 10\n\
             gamma = 0.101\nalpha = 0.602\nconcurrency = {concurrency}\nseed = 5\n[engine1]\n\
             command = {:?}\n[games]\nbook = \"ten.epd\"\ndepth = 1\nmax_plies = 120\n\
             pgn = \"logs/t.pgn\"\n[track]\n{track}",
            sparring()
        ),
    )
    .unwrap();
    dir
}

#[test]
fn a_real_engine_curve_survives_kill_9_and_resume_exactly() {
    let setup = || sparring_setup(30, 1, "share = 0.5\npairs = 10\n");
    let dir = setup();
    let d = dir.path();
    let mut child = match_common::spsa()
        .args(["run", "t.toml"])
        .current_dir(d)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed after the first point, while the tune goes on toward the second (as seen while it
    // is stopped: a fixed delay after the point could let a fast tune finish first).
    let track = d.join("logs/t.track.csv");
    run_common::kill_9_when(&mut child, &d.join("logs/t.checkpoint.var"), |_| {
        std::fs::read_to_string(&track).is_ok_and(|t| t.lines().count() >= 2)
    });
    assert!(
        checkpoint_text(d).contains("finished = false"),
        "killed mid-run"
    );
    ok(&in_dir(d, &["run", "t.toml", "--resume"]));

    let whole = setup();
    ok(&in_dir(whole.path(), &["run", "t.toml"]));
    let a = std::fs::read_to_string(&track).unwrap();
    let b = std::fs::read_to_string(whole.path().join("logs/t.track.csv")).unwrap();
    assert_eq!(
        a, b,
        "the resumed curve differs from an uninterrupted run's"
    );
    assert_eq!(a.lines().count(), 4, "points at 10, 20 and 30: {a}");
    // Every measurement game once in the PGN: 3 points of 10 pairs.
    let games = games(&d.join("logs/t.pgn"));
    let measured = games
        .iter()
        .filter(|(e, _)| e.contains(" track vs "))
        .count();
    assert_eq!((measured, games.len()), (60, 120));
    assert_eq!(checkpoint_text(d), checkpoint_text(whole.path()));
}

/// A sparring tune from a bad start (minor pieces at 60 where sparring's own values are 320
/// and 330), 100 openings of which 20 are held out, with the curve against the start and a
/// closing `[verify]` against the start: the curve rises above 0 (where it starts, θ being the
/// start), and its last point (θ at the end) agrees with the verification within their 95%
/// intervals.
#[test]
fn on_the_sparring_engine_the_curve_rises_and_its_last_point_agrees_with_verify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_book(d, "hundred.epd", 100);
    std::fs::write(
        d.join("t.var"),
        "KnightValue,60,50,700,40,0.1,0\nBishopValue,60,50,700,40,0.1,0\n",
    )
    .unwrap();
    std::fs::write(
        d.join("t.toml"),
        format!(
            "variables = \"t.var\"\nlog = \"logs/t.log\"\niterations = 90\nA = 12\n\
             gamma = 0.101\nalpha = 0.602\nconcurrency = 2\nseed = 8\n[engine1]\n\
             command = {:?}\n[games]\nbook = \"hundred.epd\"\nholdout = 0.2\ndepth = 1\n\
             max_plies = 160\n[track]\nshare = 0.4\npairs = 20\n[verify]\npairs = 40\n",
            sparring()
        ),
    )
    .unwrap();
    let out = ok(&in_dir(d, &["run", "t.toml"]));
    let text = std::fs::read_to_string(d.join("logs/t.track.csv")).unwrap();
    let points: Vec<Vec<String>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let field = |r: &Vec<String>, i: usize| r[i].parse::<f64>().unwrap();
    assert!(points.len() >= 3, "{points:?}");
    // The curve starts at 0 (θ is the start at iteration 0) and rises: every point, the last
    // included, is above 0 by its whole interval.
    let last = points.last().unwrap();
    assert_eq!(last[1], "90", "the last point measures θ at the end");
    for p in &points {
        assert!(field(p, 10) > 0.0, "a point not above the start: {p:?}");
    }
    // verdict: tuned is better than start: Elo +X [95%: +L, +H] …
    let verdict = out
        .lines()
        .find(|l| l.starts_with("verdict: "))
        .unwrap_or_else(|| panic!("no verdict in {out}"));
    let numbers: Vec<f64> = verdict
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .filter_map(|w| w.trim_start_matches('+').parse().ok())
        .collect();
    let (low, high) = (numbers[2], numbers[3]);
    assert!(
        low <= field(last, 11) && field(last, 10) <= high,
        "the last point {last:?} and the verification ({verdict}) disagree"
    );
}
