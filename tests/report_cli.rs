//! `spsa report` and `spsa simulate --runs`: the numbers of a report on a known log and checkpoint
//! (checked against the schedule formulas, not against the code that computes them), the paste-able
//! outputs, the plots, and the study.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use spsa::report::history::History;
use spsa::report::status::{self, Status};
use spsa::tuner::checkpoint::{self, Counts, RunState, VERSION};
use spsa::vars::{self, Variable};

fn spsa() -> Command {
    Command::new(env!("CARGO_BIN_EXE_spsa"))
}

fn run(dir: &Path, args: &[&str]) -> Output {
    spsa().args(args).current_dir(dir).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const N: u64 = 100;
const A: f64 = 10.0;
const ALPHA: f64 = 0.602;
const GAMMA: f64 = 0.101;
const APPLIED: u64 = 50;

fn known_vars() -> Vec<Variable> {
    vars::parse(
        "Trend Up,10,0,100,2,0.002,0\nFlat,0,-5,5,1,0.1,0\n",
        Path::new("inline"),
    )
    .unwrap()
}

/// θ after update k: `Trend Up` climbs 0.2 per iteration, `Flat` wiggles by ±0.01.
fn theta_at(k: u64) -> [f64; 2] {
    [
        10.0 + 0.2 * k as f64,
        if k.is_multiple_of(2) { 0.01 } else { -0.01 },
    ]
}

/// A run stopped at iteration 50 of 100: log and checkpoint in `dir/logs`.
fn write_known_run(dir: &Path, pentanomial: [u64; 5]) -> (PathBuf, PathBuf) {
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let log = logs.join("k.log");
    let ck = logs.join("k.checkpoint.var");
    let mut text = String::from("iteration,Trend Up,Flat\n");
    for k in 1..=APPLIED {
        let t = theta_at(k);
        text.push_str(&format!("{k},{},{}\n", t[0], t[1]));
    }
    std::fs::write(&log, text).unwrap();
    let state = RunState {
        version: VERSION,
        seed: "1".into(),
        applied: APPLIED,
        finished: false,
        theta: theta_at(APPLIED).to_vec(),
        start: vec![10.0, 0.0],
        next_fresh: APPLIED + 1,
        missing: Vec::new(),
        log_bytes: 0,
        iterations: N,
        curve_iterations: 0,
        a: A,
        alpha: ALPHA,
        gamma: GAMMA,
        pairs_per_iteration: 1,
        holdout: None,
        holdout_openings: None,
        held: Vec::new(),
        outputs: Default::default(),
        counts: Counts {
            pairs: pentanomial.iter().sum(),
            pentanomial,
            ..Counts::default()
        },
        joined: Vec::new(),
        sources: Vec::new(),
    };
    checkpoint::write(&ck, &state, &known_vars()).unwrap();
    (log, ck)
}

/// c_k and R_k straight from the formulas of the schedule.
fn formula_gains(c_end: f64, r_end: f64, k: f64) -> (f64, f64) {
    let n = N as f64;
    let c_k = c_end * n.powf(GAMMA) / k.powf(GAMMA);
    let a_k = r_end * c_end * c_end * (A + n).powf(ALPHA) / (A + k).powf(ALPHA);
    (c_k, a_k / (c_k * c_k))
}

fn analyse(dir: &Path) -> Status {
    let ck = checkpoint::read(&dir.join("logs/k.checkpoint.var")).unwrap();
    let h = History::read(&dir.join("logs/k.log")).unwrap();
    status::analyse(&ck, Some(&h), 0.1)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn report_numbers_follow_the_formulas() {
    // All pairs drawn 1-1: E[match²] = 0, so the noise term vanishes and the limit is c_k/2.
    let dir = tempfile::tempdir().unwrap();
    write_known_run(dir.path(), [0, 0, APPLIED, 0, 0]);
    let st = analyse(dir.path());
    assert_eq!(st.applied, APPLIED);
    // 50 rows: 10% is 5, below the minimum of 10 rows → iterations 41..=50.
    assert_eq!(st.window, Some((41, 50, 10)));
    let k = APPLIED as f64;
    for (v, var) in st.vars.iter().zip(known_vars()) {
        let (c_k, r_k) = formula_gains(var.c_end, var.r_end, k);
        assert!(close(v.c_k, c_k), "{}: c_k {} vs {c_k}", v.name, v.c_k);
        assert!(close(v.r_k, r_k), "{}: R_k {} vs {r_k}", v.name, v.r_k);
        assert!(close(v.drift_ck, (v.current - v.start) / c_k));
        assert!(close(v.drift_c_end, (v.current - v.start) / var.c_end));
    }
    let (c_up, _) = formula_gains(2.0, 0.002, k);
    let up = st.vars[0].trend.unwrap();
    assert!(close(up.slope_per_1000, 200.0), "{up:?}");
    // The line rises 0.2·9 over iterations 41..50: 1.8 / c_k ≈ 0.84 c_k > 0.5 → moving.
    assert!(close(up.change_ck, 1.8 / c_up), "{up:?}");
    assert_eq!(up.limit_ck, 0.5);
    assert!(!up.settled());
    assert!(close(st.vars[0].drift_ck, 10.0 / c_up), "θ rose by 10");
    // c_end of the first variable is 2: θ rose by 10 = 5 c_end, whatever k is.
    assert!(
        close(st.vars[0].drift_c_end, 5.0),
        "{}",
        st.vars[0].drift_c_end
    );
    let flat = st.vars[1].trend.unwrap();
    assert!(flat.change_ck.abs() < 0.05 && flat.settled(), "{flat:?}");

    let table = stdout(&run(dir.path(), &["report", "logs/k.log"]));
    assert!(
        table.starts_with("iteration 50 of 100 (not finished)"),
        "{table}"
    );
    let up_line = table.lines().find(|l| l.starts_with("Trend Up")).unwrap();
    let flat_line = table.lines().find(|l| l.starts_with("Flat")).unwrap();
    assert!(up_line.ends_with("moving"), "{up_line}");
    assert!(flat_line.ends_with("yes"), "{flat_line}");
    // Rounded like users read values: no long fractions anywhere.
    assert!(
        table
            .split_whitespace()
            .all(|w| w.split('.').nth(1).is_none_or(|f| f.len() <= 6)),
        "{table}"
    );
}

#[test]
fn noise_widens_the_settled_limit() {
    // Every pair won or lost 2-0: E[match²] = 4. σ = sqrt(Σ_k (R_k·c_k)²·4) over k = 41..=50.
    let dir = tempfile::tempdir().unwrap();
    write_known_run(dir.path(), [APPLIED / 2, 0, 0, 0, APPLIED / 2]);
    let st = analyse(dir.path());
    for (v, var) in st.vars.iter().zip(known_vars()) {
        let sum: f64 = (41..=50)
            .map(|k| {
                let (c, r) = formula_gains(var.c_end, var.r_end, k as f64);
                (r * c).powi(2)
            })
            .sum();
        let sigma = (sum * 4.0).sqrt();
        let want = (2.0 * sigma / v.c_k).max(0.5);
        let got = v.trend.unwrap().limit_ck;
        assert!(close(got, want), "{}: limit {got} vs {want}", v.name);
    }
    // Flat has R_end 0.1: its noise limit is above the floor.
    assert!(st.vars[1].trend.unwrap().limit_ck > 0.5);
}

#[test]
fn report_finds_files_from_log_checkpoint_or_config_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    write_known_run(dir.path(), [0, 0, APPLIED, 0, 0]);
    std::fs::write(
        dir.path().join("t.var"),
        "Trend Up,10,0,100,2,0.002,0\nFlat,0,-5,5,1,0.1,0\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("t.conf"),
        "[Main]\nSimulate = 1\nVariables = t.var\nLog = logs/k.log\nIterations = 100\nA = 10\nGamma = 0.101\nAlpha = 0.602\n",
    )
    .unwrap();
    let by_log = run(dir.path(), &["report", "logs/k.log", "--format", "uci"]);
    let by_ck = run(
        dir.path(),
        &["report", "logs/k.checkpoint.var", "--format", "uci"],
    );
    let by_conf = run(
        dir.path(),
        &["report", "--config", "t.conf", "--format", "uci"],
    );
    assert!(by_log.status.success(), "{}", stderr(&by_log));
    assert_eq!(
        stdout(&by_log),
        "setoption name Trend Up value 20\nsetoption name Flat value 0\n"
    );
    assert_eq!(stdout(&by_ck), stdout(&by_log));
    assert_eq!(stdout(&by_conf), stdout(&by_log));
    let pairs = run(
        dir.path(),
        &[
            "report",
            "logs/k.log",
            "--format",
            "pairs",
            "--decimals",
            "2",
        ],
    );
    assert_eq!(stdout(&pairs), "Trend Up, 20\nFlat, 0.01\n");

    // The CSV loads back as a variables file with the same θ and definitions.
    let csv = stdout(&run(
        dir.path(),
        &["report", "logs/k.log", "--format", "csv"],
    ));
    let back = vars::parse(&csv, Path::new("out.var")).unwrap();
    let want = theta_at(APPLIED);
    for ((b, v), t) in back.iter().zip(known_vars()).zip(want) {
        assert_eq!(
            (&b.name, b.min, b.max, b.c_end, b.r_end),
            (&v.name, v.min, v.max, v.c_end, v.r_end)
        );
        assert!((b.start - t).abs() < 1e-9, "{} vs {t}", b.start);
    }

    // User errors exit 2 with the path in the message.
    let missing = run(dir.path(), &["report", "logs/nope.log"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("logs/nope.log"),
        "{}",
        stderr(&missing)
    );
    std::fs::write(dir.path().join("logs/lone.log"), "iteration,a\n1,2\n").unwrap();
    let lone = run(dir.path(), &["report", "logs/lone.log"]);
    assert_eq!(lone.status.code(), Some(2));
    assert!(
        stderr(&lone).contains("lone.checkpoint.var: no checkpoint"),
        "{}",
        stderr(&lone)
    );
    let bad_plot = run(dir.path(), &["report", "logs/k.log", "--plot", "x.jpg"]);
    assert_eq!(bad_plot.status.code(), Some(2), "{}", stderr(&bad_plot));
}

#[test]
fn plots_are_written_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    write_known_run(dir.path(), [0, 0, APPLIED, 0, 0]);
    let o = run(dir.path(), &["report", "logs/k.log", "--plot", "p.png"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("iteration 50 of 100"),
        "the table still goes to stdout"
    );
    let file = std::fs::File::open(dir.path().join("p.png")).unwrap();
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), (1200, 1000));
    // Mostly white, but with plenty of drawn (non-white) pixels: lines, text, axes.
    let step = info.color_type.samples();
    let inked = pixels
        .chunks(step)
        .filter(|p| p[..3] != [255, 255, 255])
        .count();
    let total = (info.width * info.height) as usize;
    assert!(
        inked > total / 100 && inked < total / 2,
        "{inked} of {total}"
    );

    let o = run(
        dir.path(),
        &["report", "logs/k.log", "--plot", "n.svg", "--normalized"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(dir.path().join("n.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    for text in ["Trend Up", "Flat", "(θ − start) / c_end", "iteration"] {
        assert!(svg.contains(text), "SVG lacks {text:?}");
    }
    assert!(
        svg.contains("<polyline") || svg.contains("<path"),
        "has lines"
    );
}

const STUDY_VARS: &str = "x,100,-1000,1000,100,0.002,1\ny,-50,-200,200,20,0.002,10\n";
const STUDY_CONF: &str = "[Main]\nSimulate = 1\nVariables = t.var\nLog = logs/t.log\nIterations = 3000\nA = 300\nGamma = 0.101\nAlpha = 0.602\n";

#[test]
fn study_reports_spreads_writes_nothing_and_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.var"), STUDY_VARS).unwrap();
    std::fs::write(dir.path().join("t.conf"), STUDY_CONF).unwrap();
    let args = ["simulate", "t.conf", "--runs", "12", "--seed", "5"];
    let a = run(dir.path(), &args);
    assert!(a.status.success(), "{}", stderr(&a));
    let text = stdout(&a);
    assert!(
        text.starts_with("12 simulated runs of 3000 iterations, seeds 5..=16"),
        "{text}"
    );
    assert!(text.contains("\nx ") && text.contains("\ny "), "{text}");
    assert!(text.contains("Elo loss"), "{text}");
    assert!(
        !dir.path().join("logs").exists(),
        "a study writes no log or checkpoint"
    );
    let b = run(dir.path(), &args);
    assert_eq!(stdout(&b), text, "same seed, same study");
    // Starting after a real run is not refused (nothing is overwritten), and --resume makes no sense.
    assert!(
        run(dir.path(), &["simulate", "t.conf", "--seed", "1"])
            .status
            .success()
    );
    assert!(run(dir.path(), &args).status.success());
    let clash = run(
        dir.path(),
        &["simulate", "t.conf", "--runs", "2", "--resume"],
    );
    assert_eq!(clash.status.code(), Some(2));
    let zero = run(dir.path(), &["simulate", "t.conf", "--runs", "0"]);
    assert_eq!(zero.status.code(), Some(2), "{}", stderr(&zero));
}

#[test]
fn report_of_a_real_simulated_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.var"), STUDY_VARS).unwrap();
    std::fs::write(dir.path().join("t.conf"), STUDY_CONF).unwrap();
    let sim = run(dir.path(), &["simulate", "t.conf", "--seed", "3"]);
    assert!(sim.status.success(), "{}", stderr(&sim));
    let rep = run(dir.path(), &["report", "logs/t.log"]);
    let text = stdout(&rep);
    assert!(
        text.starts_with("iteration 3000 of 3000 (finished)"),
        "{text}"
    );
    assert!(text.contains("iterations 2701..3000"), "{text}");
    // The final values in the report are the run's final table's values.
    let csv = stdout(&run(
        dir.path(),
        &["report", "logs/t.log", "--format", "csv"],
    ));
    let back = vars::parse(&csv, Path::new("out")).unwrap();
    let ck = checkpoint::read(&dir.path().join("logs/t.checkpoint.var")).unwrap();
    for (b, t) in back.iter().zip(&ck.state.theta) {
        assert!((b.start - t).abs() <= 5e-5);
    }
}

/// A run of `iterations` stopped after `applied`, all pairs drawn 1-1 (so the limit is c_k/2),
/// with θ after update k given by `theta`.
fn write_run(
    dir: &Path,
    vars_text: &str,
    iterations: u64,
    applied: u64,
    theta: impl Fn(u64) -> Vec<f64>,
) -> Status {
    write_run_with(
        dir,
        vars_text,
        iterations,
        applied,
        [0, 0, applied, 0, 0],
        theta,
    )
}

/// [`write_run`] with the checkpoint's pentanomial counts given (a tune from positions has none).
fn write_run_with(
    dir: &Path,
    vars_text: &str,
    iterations: u64,
    applied: u64,
    pentanomial: [u64; 5],
    theta: impl Fn(u64) -> Vec<f64>,
) -> Status {
    let vars = vars::parse(vars_text, Path::new("inline")).unwrap();
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    let mut text = format!("iteration,{}\n", names.join(","));
    for k in 1..=applied {
        let row: Vec<String> = theta(k).iter().map(f64::to_string).collect();
        text.push_str(&format!("{k},{}\n", row.join(",")));
    }
    std::fs::write(logs.join("r.log"), text).unwrap();
    let state = RunState {
        version: VERSION,
        seed: "1".into(),
        applied,
        finished: applied == iterations,
        theta: theta(applied),
        start: vars.iter().map(|v| v.start).collect(),
        next_fresh: applied + 1,
        missing: Vec::new(),
        log_bytes: 0,
        iterations,
        curve_iterations: 0,
        a: A,
        alpha: ALPHA,
        gamma: GAMMA,
        pairs_per_iteration: 1,
        holdout: None,
        holdout_openings: None,
        held: Vec::new(),
        outputs: Default::default(),
        counts: Counts {
            pairs: pentanomial.iter().sum(),
            pentanomial,
            ..Counts::default()
        },
        joined: Vec::new(),
        sources: Vec::new(),
    };
    checkpoint::write(&logs.join("r.checkpoint.var"), &state, &vars).unwrap();
    let ck = checkpoint::read(&logs.join("r.checkpoint.var")).unwrap();
    let h = History::read(&logs.join("r.log")).unwrap();
    status::analyse(&ck, Some(&h), 0.1)
}

/// Defect 9 of issue 12: a flat trend is not called settled when the schedule could not have
/// moved the variable across the window (`frozen`), nor when the trend, carried over the
/// iterations still to play, points far away (`drifting`).
#[test]
fn settled_is_not_claimed_when_the_window_cannot_tell() {
    use status::Verdict;
    // R_end 0.0001: steps of about 0.0015 θ an iteration, c_k about 11: across 10 iterations
    // even ten won pairs in a row move θ by 0.003 c_k, far below the c_k/2 limit.
    let dir = tempfile::tempdir().unwrap();
    let st = write_run(dir.path(), "Tiny,0,-100,100,10,0.0001,0\n", N, 50, |_| {
        vec![0.0]
    });
    let t = st.vars[0].trend.unwrap();
    assert!(t.change_ck.abs() < t.limit_ck, "{t:?}");
    assert!(t.possible_ck < t.limit_ck, "{t:?}");
    assert_eq!(t.verdict, Verdict::Frozen);
    let table = stdout(&run(dir.path(), &["report", "logs/r.log"]));
    let line = table.lines().find(|l| l.starts_with("Tiny")).unwrap();
    assert!(line.ends_with("frozen"), "{table}");

    // R_end 0.1 over 1000 iterations: big steps. θ creeps up 0.005 an iteration: 0.045 across
    // the window (below c_k/2 ≈ 1.4), but carried over the 950 iterations still to play it
    // moves θ by more than the limit.
    let dir = tempfile::tempdir().unwrap();
    let st = write_run(dir.path(), "Slow,0,-100,100,2,0.1,0\n", 1000, 50, |k| {
        vec![0.005 * k as f64]
    });
    let t = st.vars[0].trend.unwrap();
    assert!(
        t.change_ck.abs() < t.limit_ck && t.possible_ck >= t.limit_ck,
        "{t:?}"
    );
    assert!(t.projected_ck >= t.limit_ck, "{t:?}");
    assert_eq!(t.verdict, Verdict::Drifting);
    let table = stdout(&run(dir.path(), &["report", "logs/r.log"]));
    let line = table.lines().find(|l| l.starts_with("Slow")).unwrap();
    assert!(line.ends_with("drifting"), "{table}");

    // The same creep in a finished run has nowhere left to go: settled.
    let dir = tempfile::tempdir().unwrap();
    let st = write_run(dir.path(), "Slow,0,-100,100,2,0.1,0\n", 50, 50, |k| {
        vec![0.005 * k as f64]
    });
    let t = st.vars[0].trend.unwrap();
    assert_eq!(
        (t.projected_ck, t.verdict),
        (0.0, Verdict::Settled),
        "{t:?}"
    );
}

/// A tune from positions has no games: its signals are loss differences −(L+ − L−)/2, about
/// 10⁻⁴, with the large R_end that go with them. Its noise limit comes from those (the loss
/// log), not from game results: measured in pair results (|match| up to 2) the limit was
/// thousands of c_k and every variable read `yes` while it was still climbing.
#[test]
fn a_positions_run_is_judged_by_its_loss_differences() {
    use status::{SignalScale, Verdict};
    let dir = tempfile::tempdir().unwrap();
    // θ climbs 2 an iteration: 18 across the window, about 1.1 c_k (c_50 ≈ 16).
    let vars_text = "Climbing,150,0,400,15,300,0\n";
    let games_view = write_run_with(dir.path(), vars_text, N, 50, [0; 5], |k| {
        vec![150.0 + 2.0 * k as f64]
    });
    // Signals ±1e-4 around a loss of 0.09, 400 positions an iteration, a validation row now
    // and then (which has no signal).
    let n = 400.0;
    let signal = |k: u64| if k.is_multiple_of(2) { 1e-4 } else { -1e-4 };
    let mut text = String::new();
    for k in 1..=50u64 {
        let (p, m) = (0.09 * n - n * signal(k), 0.09 * n + n * signal(k));
        text.push_str(&format!("{k},{p:.8},{m:.8},400,\n"));
        if k.is_multiple_of(10) {
            text.push_str(&format!("{k},0,0,0,0.1\n"));
        }
    }
    std::fs::write(dir.path().join("logs/r.loss.csv"), text).unwrap();

    let rows = spsa::report::loss_curve::read(&dir.path().join("logs/r.loss.csv")).unwrap();
    let signals: Vec<f64> = rows.iter().filter_map(|r| r.signal).collect();
    assert_eq!(signals.len(), 50);
    assert!(
        signals.iter().all(|s| (s.abs() - 1e-4).abs() < 1e-9),
        "{signals:?}"
    );
    let scale = SignalScale::losses(&signals).unwrap();
    let ck = checkpoint::read(&dir.path().join("logs/r.checkpoint.var")).unwrap();
    let h = History::read(&dir.path().join("logs/r.log")).unwrap();
    let st = status::analyse_scaled(&ck, Some(&h), 0.1, scale);
    let t = st.vars[0].trend.unwrap();
    // σ = sqrt(Σ_k (R_k·c_k)²·E[s²]) over iterations 41..=50, E[s²] = 1e-8.
    let sum: f64 = (41..=50)
        .map(|k| {
            let (c, r) = formula_gains(15.0, 300.0, k as f64);
            (r * c).powi(2)
        })
        .sum();
    let c_k = formula_gains(15.0, 300.0, 50.0).0;
    let want = (2.0 * (sum * 1e-8).sqrt() / c_k).max(0.5);
    assert!(close(t.limit_ck, want), "limit {} vs {want}", t.limit_ck);
    assert!(close(t.change_ck, 18.0 / c_k), "{t:?}");
    assert_eq!(t.verdict, Verdict::Moving, "{t:?}");
    // Read as games (no pairs: E[match²] taken as 1) the same climb hid under the noise.
    let g = games_view.vars[0].trend.unwrap();
    assert!(g.limit_ck > 100.0 && g.verdict == Verdict::Settled, "{g:?}");

    let table = stdout(&run(dir.path(), &["report", "logs/r.log"]));
    let line = table.lines().find(|l| l.starts_with("Climbing")).unwrap();
    assert!(line.ends_with("moving"), "{table}");
    assert!(
        table.contains("the iterations' loss differences"),
        "{table}"
    );
}

/// Defect 12 of issue 12: a classic tool's θ log (no header row, full precision, variables in
/// the variables file's order) is read with `--config`, which names the columns and gives the
/// schedule; there is no checkpoint.
#[test]
fn report_reads_a_classic_log_through_its_config() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("logs")).unwrap();
    std::fs::write(
        root.join("t.var"),
        "Trend Up,10,0,100,2,0.002,0\nFlat,0,-5,5,1,0.1,0\n",
    )
    .unwrap();
    std::fs::write(
        root.join("t.conf"),
        "[Main]\nSimulate = 1\nVariables = t.var\nLog = logs/c.log\nIterations = 100\nA = 10\nGamma = 0.101\nAlpha = 0.602\n",
    )
    .unwrap();
    let mut log = String::new();
    for k in 1..=APPLIED {
        let t = theta_at(k);
        log.push_str(&format!("{k},{:.15},{:.15}\n", t[0] + 1e-9, t[1]));
    }
    std::fs::write(root.join("logs/c.log"), &log).unwrap();

    let table = run(root, &["report", "--config", "t.conf"]);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(
        text.starts_with("iteration 50 of 100 (not finished); no games recorded"),
        "{text}"
    );
    let up = text.lines().find(|l| l.starts_with("Trend Up")).unwrap();
    assert!(up.ends_with("moving"), "{text}");
    let uci = run(root, &["report", "--config", "t.conf", "--format", "uci"]);
    assert_eq!(
        stdout(&uci),
        "setoption name Trend Up value 20\nsetoption name Flat value 0\n"
    );
    let h = History::read_named(
        &root.join("logs/c.log"),
        Some(&["Trend Up".to_string(), "Flat".to_string()]),
    )
    .unwrap();
    assert_eq!(h.rows(), APPLIED as usize);
    assert_eq!(h.values[0][0], 10.2 + 1e-9, "full precision kept");
    let plot = run(root, &["report", "--config", "t.conf", "--plot", "c.svg"]);
    assert!(plot.status.success(), "{}", stderr(&plot));
    assert!(root.join("c.svg").exists());

    // Without the config nothing names the columns: a user error saying what to pass.
    let bare = run(root, &["report", "logs/c.log"]);
    assert_eq!(bare.status.code(), Some(2));
    assert!(stderr(&bare).contains("pass --config"), "{}", stderr(&bare));
    // A variables file that does not fit the log is named as such.
    std::fs::write(root.join("t.var"), "Only,1,0,2,1,0.1,0\n").unwrap();
    let misfit = run(root, &["report", "--config", "t.conf"]);
    assert_eq!(misfit.status.code(), Some(2));
    assert!(
        stderr(&misfit).contains("logs/c.log:1: 2 value columns, but the variables file has 1"),
        "{}",
        stderr(&misfit)
    );
}
