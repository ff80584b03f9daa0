//! `spsa match` and `spsa verify` end to end with the bundled sparring engine: counts add up,
//! the stronger settings win, PGN, config files, bad input, Ctrl-C, and verifying a tiny run.

use crate::child_common;
use crate::match_common;

use child_common::stderr_until;
use std::process::Stdio;
use std::time::{Duration, Instant};

use match_common::*;

#[test]
fn defaults_beat_weak_minor_pieces() {
    let book = book();
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--option2",
        "KnightValue=60",
        "--option2",
        "BishopValue=60",
        "--pairs",
        "4",
        "--concurrency",
        "2",
        "--book",
        book.to_str().unwrap(),
        "--depth",
        "2",
        "--seed",
        "7",
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let c = counts(&out);
    assert_eq!(c.pairs, 4);
    assert_consistent(&c);
    // Knights and bishops worth 60 centipawns give them away: the defaults score well over
    // half (in practice all or nearly all of the points).
    assert!(c.score_pct > 62.5, "{out}");
    assert_eq!(c.faults, "none");
    assert!(
        out.contains("match: sparring.1 (defaults) vs sparring.2 (KnightValue=60 BishopValue=60), 4 pairs, concurrency 2, depth=2, seed 7, book "),
        "{out}"
    );
    assert!(out.contains("Elo: "), "{out}");
    // The PGN holds both games of every pair, colours reversed, with the options tagged.
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(tags(&text, "Result").len(), 8);
    let mut rounds = tags(&text, "Round");
    rounds.sort();
    assert_eq!(
        rounds,
        ["1.1", "1.2", "2.1", "2.2", "3.1", "3.2", "4.1", "4.2"]
    );
    let white_opts = tags(&text, "WhiteOptions");
    assert_eq!(
        white_opts
            .iter()
            .filter(|o| o.as_str() == "KnightValue=60; BishopValue=60")
            .count(),
        4
    );
    assert!(tags(&text, "Termination").iter().all(|t| t != "abandoned"));
}

#[test]
fn same_seed_same_openings_and_config_file_with_flag_overrides() {
    let dir = tempfile::tempdir().unwrap();
    // A match-only TOML: no tuning keys needed.
    let conf = dir.path().join("m.toml");
    std::fs::write(
        &conf,
        format!(
            "concurrency = 2\nseed = 3\n[engine1]\ncommand = {:?}\n[engine1.options]\nKnightValue = 300\n\
             [games]\nbook = {:?}\ndepth = 4\nmax_plies = 40\n",
            sparring(),
            book().display().to_string()
        ),
    )
    .unwrap();
    let pgn = |name: &str| dir.path().join(name);
    let play = |pgn_name: &str| {
        run(&[
            "match",
            "--config",
            conf.to_str().unwrap(),
            "--depth",
            "1",
            "--pairs",
            "3",
            "--progress",
            "0",
            "--pgn",
            pgn(pgn_name).to_str().unwrap(),
        ])
    };
    let o = play("a.pgn");
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("3 pairs, concurrency 2, depth=1"), "{out}");
    let c = counts(&out);
    assert_consistent(&c);
    assert_eq!(c.pairs, 3);
    let a = std::fs::read_to_string(pgn("a.pgn")).unwrap();
    // max_plies from the config: no game longer than 40 plies.
    assert!(
        tags(&a, "PlyCount")
            .iter()
            .all(|p| p.parse::<u32>().unwrap() <= 40),
        "{a}"
    );
    let o = play("b.pgn");
    assert!(o.status.success());
    let b = std::fs::read_to_string(pgn("b.pgn")).unwrap();
    let mut fa = tags(&a, "FEN");
    let mut fb = tags(&b, "FEN");
    fa.sort();
    fb.sort();
    assert_eq!(fa, fb, "the seed fixes the openings");
    assert_eq!(fa.len(), 6);
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let book = book();
    let book = book.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bad_book = dir.path().join("bad.epd");
    std::fs::write(&bad_book, "this is not a fen\n").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--engine1", "/nonexistent/engine", "--depth", "1"],
            "/nonexistent/engine: engine not found",
        ),
        (
            vec![
                "--engine1",
                sparring(),
                "--option1",
                "Nope=3",
                "--depth",
                "1",
            ],
            "has no option `Nope`",
        ),
        (
            vec![
                "--engine1",
                sparring(),
                "--option1",
                "KnightValue",
                "--depth",
                "1",
            ],
            "--option1 `KnightValue`: expected NAME=VALUE",
        ),
        (
            vec![
                "--engine1",
                sparring(),
                "--option2",
                "KnightValue=99999",
                "--depth",
                "1",
            ],
            "outside its range",
        ),
        (
            vec![
                "--engine1",
                sparring(),
                "--book",
                "/nonexistent.epd",
                "--depth",
                "1",
            ],
            "/nonexistent.epd: book not found",
        ),
        (
            vec![
                "--engine1",
                sparring(),
                "--book",
                bad_book.to_str().unwrap(),
                "--depth",
                "1",
            ],
            "bad.epd:1",
        ),
        (vec!["--engine1", sparring()], "no search limit"),
        (
            vec!["--engine1", sparring(), "--tc", "ten"],
            "--tc `ten`: expected BASE_MS+INC_MS",
        ),
        (vec!["--depth", "1"], "no engine: give --engine1 PATH"),
        (
            vec!["--config", "/nonexistent.toml"],
            "/nonexistent.toml: cannot read config file",
        ),
        (
            vec!["--engine1", sparring(), "--depth", "1", "--pairs", "0"],
            "--pairs must be at least 1",
        ),
        (
            vec![
                "--engine1",
                sparring(),
                "--depth",
                "1",
                "--book",
                book,
                "--concurrency",
                "0",
            ],
            "--concurrency must be between 1 and 1024",
        ),
    ];
    for (args, want) in cases {
        let mut full = vec!["match", "--seed", "1"];
        full.extend(&args);
        let started = Instant::now();
        let o = run(&full);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let first = err.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("spsa: ") && first.contains(want),
            "{args:?}: wanted `{want}` in the first line of:\n{err}"
        );
        assert!(stdout(&o).is_empty(), "{args:?}: no results on bad input");
        assert!(started.elapsed() < Duration::from_secs(10), "{args:?}");
    }
    // Two limits at once are refused by the parser (also exit 2).
    let o = run(&[
        "match",
        "--engine1",
        sparring(),
        "--depth",
        "1",
        "--nodes",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// Send SIGINT (Ctrl-C) to `child`.
fn ctrl_c(child: &std::process::Child) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// `spsa` with `args`, sent SIGINT (Ctrl-C) once its `engines` engines are running and have
/// spent `searched` of CPU between them (seen in /proc: the games are under way, however long a
/// loaded machine took to start them): its output, and how long it took to end from the signal.
fn interrupted(
    args: &[&str],
    engines: usize,
    searched: Duration,
) -> (std::process::Output, Duration) {
    let child = spawn(args);
    let t = Instant::now();
    loop {
        let (running, cpu) = engines_of(child.id());
        if running >= engines && cpu >= searched {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{running} engines, {cpu:?} of CPU"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Instant::now();
    ctrl_c(&child);
    let o = child.wait_with_output().unwrap();
    (o, sent.elapsed())
}

/// The child processes of `pid` (its engines) and the CPU time they have used between them.
fn engines_of(pid: u32) -> (usize, Duration) {
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let (mut n, mut cpu) = (0, 0.0);
    for task in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ... utime stime`: fields after the comm, 0-based from state.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 12 && f[1] == pid.to_string() {
            n += 1;
            cpu +=
                (f[11].parse::<f64>().unwrap_or(0.0) + f[12].parse::<f64>().unwrap_or(0.0)) / ticks;
        }
    }
    (n, Duration::from_secs_f64(cpu))
}

/// `spsa` with `args`, sent SIGINT (Ctrl-C) once a line of its stderr contains `printed` (60 s
/// at most, not a fixed time: a loaded machine may take long to get there): its output.
fn interrupted_after_line(args: &[&str], printed: &str) -> std::process::Output {
    let mut child = spsa()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = stderr_until(&mut child, printed);
    ctrl_c(&child);
    let mut o = child.wait_with_output().unwrap();
    o.stderr = stderr.join().unwrap();
    o
}

#[test]
fn ctrl_c_stops_and_prints_the_results_so_far() {
    let book = book();
    // Interrupted once its first progress line is out (a pair is played by then).
    let o = interrupted_after_line(
        &[
            "match",
            "--engine1",
            sparring(),
            "--option2",
            "KnightValue=60",
            "--pairs",
            "10000",
            "--depth",
            "1",
            "--seed",
            "1",
            "--book",
            book.to_str().unwrap(),
            "--progress",
            "0.5",
        ],
        "games/s",
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let c = counts(&out);
    assert_consistent(&c);
    assert!(c.pairs > 0 && c.pairs < 10000, "{out}");
    assert!(err.contains("interrupted after"), "{err}");
    assert!(
        err.contains("pairs ") && err.contains("games/s"),
        "progress: {err}"
    );
}

/// Ctrl-C in the middle of long searches: each slot's thread blocks in the engine's pipe while
/// its engine searches, and the match still ends within about one move (1.5 s here), not at
/// the end of the games (80 moves and more each).
#[test]
fn ctrl_c_stops_a_match_within_one_move() {
    let book = book();
    // Mid-search: the engines are started and each slot is some way into a move.
    let (o, took) = interrupted(
        &[
            "match",
            "--engine1",
            sparring(),
            "--pairs",
            "100",
            "--concurrency",
            "2",
            "--movetime",
            "1500",
            "--seed",
            "1",
            "--book",
            book.to_str().unwrap(),
            "--progress",
            "0",
        ],
        // Both slots' engines started and some way into their first moves.
        4,
        Duration::from_millis(500),
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("interrupted after"), "{err}");
    assert!(out.contains("no games played"), "{out}");
    // The rest of one 1.5 s move, then the engines quit (bounded loosely for a loaded machine:
    // a game would take minutes).
    assert!(took < Duration::from_secs(4), "{took:?}\n{err}");
}

/// A tiny tuning run writes a checkpoint; `spsa verify` plays it against the start values.
/// A folder with `minors.var` (these lines) and `t.toml`: a 4-iteration sparring tune at
/// depth 1 with `extra` appended to the config.
fn tiny_run(vars: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("minors.var"), vars).unwrap();
    std::fs::write(
        d.join("t.toml"),
        format!(
            "variables = \"minors.var\"\nlog = \"t.log\"\niterations = 4\nA = 10\ngamma = 0.101\nalpha = 0.602\n\
             concurrency = 2\nseed = 5\n[engine1]\ncommand = {:?}\n[games]\nbook = {:?}\ndepth = 1\nmax_plies = 200\n\
             {extra}",
            sparring(),
            book().display().to_string()
        ),
    )
    .unwrap();
    dir
}

#[test]
fn verify_a_tiny_run() {
    let dir = tiny_run(
        "KnightValue,150,50,700,30,0.01,0\nBishopValue,150,50,700,30,0.01,0\n",
        "pgn = \"tuning.pgn\"\n",
    );
    let d = dir.path();
    let conf = d.join("t.toml");
    let conf = conf.to_str().unwrap();
    let o = run(&["run", conf]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(d.join("t.checkpoint.var").exists());
    let tuning_pgn = std::fs::read_to_string(d.join("tuning.pgn")).unwrap();

    let o = run(&["verify", conf, "--pairs", "2", "--progress", "0"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(
        out.contains("verify: tuned (") && out.contains("4 of 4 iterations) vs start ("),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("KnightValue ")), "{out}");
    assert!(out.contains("2 pairs, concurrency 2, depth=1"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("Elo: ")), "{out}");
    let c = counts(&out);
    assert_consistent(&c);
    assert_eq!(c.pairs, 2);
    // Verification games do not go into the run's PGN.
    assert_eq!(
        std::fs::read_to_string(d.join("tuning.pgn")).unwrap(),
        tuning_pgn
    );

    // Any two sets: the start values against themselves plus a PGN of it.
    std::fs::write(
        d.join("strong.var"),
        "KnightValue,320,50,700,30,0.01,0\nBishopValue,330,50,700,30,0.01,0\n",
    )
    .unwrap();
    let pgn = d.join("v.pgn");
    let o = run(&[
        "verify",
        conf,
        "--a",
        d.join("strong.var").to_str().unwrap(),
        "--b",
        d.join("minors.var").to_str().unwrap(),
        "--pairs",
        "2",
        "--concurrency",
        "1",
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("verify: A ("), "{out}");
    assert!(
        out.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["KnightValue", "320", "150"]),
        "{out}"
    );
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(tags(&text, "Result").len(), 4);
    assert!(tags(&text, "WhiteOptions").contains(&"KnightValue=320; BishopValue=330".into()));

    // --values: a variables file as the tuned side.
    let o = run(&[
        "verify",
        conf,
        "--values",
        d.join("strong.var").to_str().unwrap(),
        "--pairs",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("verify: tuned ("));

    // --iteration K: the θ log's row K is the tuned side, rounded.
    let log = crate::run_common::log_text(&d.join("t.log"));
    let row: Vec<f64> = log
        .lines()
        .find(|l| l.starts_with("2,"))
        .unwrap_or_else(|| panic!("no row 2 in {log}"))
        .split(',')
        .skip(1)
        .map(|v| v.parse::<f64>().unwrap().round())
        .collect();
    let o = run(&["verify", conf, "--iteration", "2", "--pairs", "1"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("t.log, iteration 2) vs start ("), "{out}");
    for (name, value) in ["KnightValue", "BishopValue"].iter().zip(&row) {
        let want = [*name, &value.to_string(), "150"];
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == want),
            "{name} should be {value}: {out}"
        );
    }
    assert_eq!(counts(&out).pairs, 1);
    // An iteration the log does not hold: a clear error, exit 2, nothing played.
    let o = run(&["verify", conf, "--iteration", "9", "--pairs", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("t.log: no row for iteration 9 (the log holds iterations up to 4)"),
        "{}",
        stderr(&o)
    );

    // No checkpoint: a clear error, exit 2.
    let o = run(&[
        "verify",
        conf,
        "--checkpoint",
        d.join("none.var").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("none.var: checkpoint not found"));
}

/// `[verify]` in the config: the tune ends with its verification match (at the run's
/// `--concurrency`, not the file's), the verdict is printed
/// with the summary and recorded beside the θ log; a resume of the finished run prints the
/// recorded verdict without playing again, and `--fresh` keeps the old record as a backup.
#[test]
fn a_tune_with_a_verify_table_ends_with_its_recorded_verdict() {
    // Minor pieces worth 60 where sparring's defaults are 320 and 330: four iterations cannot
    // repair that, so the tuned values must lose to the engine's defaults.
    let dir = tiny_run(
        "KnightValue,60,50,700,5,0.001,0\nBishopValue,60,50,700,5,0.001,0\n",
        "[verify]\npairs = 20\nagainst = \"defaults\"\n",
    );
    let d = dir.path();
    let conf = d.join("t.toml");
    let conf = conf.to_str().unwrap();
    // The config says Concurrency 2; the run's flag holds for its verification too.
    let o = run(&["run", conf, "--concurrency", "1"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(
        out.contains("vs the engine's defaults (no tuned option sent)"),
        "{out}"
    );
    assert!(out.contains("20 pairs, concurrency 1, "), "{out}");
    // The defaults' column is empty: nothing was sent to that side.
    assert!(
        out.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.first() == Some(&"KnightValue") && f.last() == Some(&"-")
        }),
        "{out}"
    );
    // The tune's summary has a games line of its own; the match's comes after `verify:`.
    let c = counts(&out[out.find("verify: ").unwrap()..]);
    assert_consistent(&c);
    assert_eq!(c.pairs, 20);
    let verdict = out
        .lines()
        .find(|l| l.starts_with("verdict: "))
        .unwrap_or_else(|| panic!("no verdict in {out}"));
    assert!(
        verdict.starts_with("verdict: tuned is worse than defaults: Elo -"),
        "{verdict}"
    );
    let record = std::fs::read_to_string(d.join("t.verify.txt")).unwrap();
    assert!(record.ends_with(&format!("{verdict}\n")), "{record}");
    assert!(record.contains("pentanomial"), "{record}");
    // `spsa report` shows the recorded verdict.
    let report = stdout(&run(&["report", d.join("t.log").to_str().unwrap()]));
    let shown = verdict.replacen("verdict: ", "verification: ", 1);
    assert!(report.contains(&format!("{shown}\n")), "{report}");

    let o = run(&["run", conf, "--resume"]);
    let again = stdout(&o);
    assert!(o.status.success(), "{again}{}", stderr(&o));
    assert!(
        again.contains(&format!("{verdict} (recorded in ")),
        "{again}"
    );
    assert!(!again.contains("verify: "), "played again: {again}");

    let o = run(&["run", conf, "--fresh"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(d.join("t.verify.txt.bak").exists());
    assert!(d.join("t.verify.txt").exists());
}

/// Many slots need more open files than a usual soft limit allows (about 10 per slot): the
/// match raises the soft limit up to the hard one instead of failing on "too many open files".
#[test]
fn many_slots_raise_the_open_files_limit() {
    let book = book();
    let cmd = format!(
        "ulimit -S -n 100 && exec {} match --engine1 {} --pairs 20 --concurrency 24 --depth 1 \
         --max-plies 40 --seed 1 --book {} --progress 0",
        env!("CARGO_BIN_EXE_spsa"),
        sparring(),
        book.display()
    );
    let o = std::process::Command::new("sh")
        .args(["-c", &cmd])
        .output()
        .unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let c = counts(&out);
    assert_consistent(&c);
    assert_eq!(c.pairs, 20, "{out}");
    assert_eq!(c.faults, "none", "{out}");
}

/// The CPUs a `Cpus_allowed_list` value names (`0-3,6`).
fn cpu_list(text: &str) -> Vec<usize> {
    text.trim()
        .split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<usize>>(),
            None => vec![part.parse().unwrap()],
        })
        .collect()
}

/// When the slots fill the cores this process may use, each slot's engines run on a core of
/// their own (and every core has one slot); with more slots, or `--no-bind-cores`, nothing is
/// bound. An engine wrapper writes the cores it may use, as the kernel shows them, then starts
/// the sparring engine.
#[test]
fn each_slot_and_its_engines_get_cores_of_their_own_when_they_fill_the_machine() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let cpus = cpu_list(&allowed);
    let book = book();
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("cores.txt");
    let wrapper = dir.path().join("engine.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status | cut -f2 >> {}\nexec {}\n",
            seen.display(),
            sparring()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let play = |slots: usize, extra: &[&str]| -> Vec<String> {
        let _ = std::fs::remove_file(&seen);
        let slots = slots.to_string();
        let mut args = vec![
            "match",
            "--engine1",
            wrapper.to_str().unwrap(),
            "--pairs",
            &slots,
            "--concurrency",
            &slots,
            "--depth",
            "1",
            "--max-plies",
            "16",
            "--seed",
            "1",
            "--book",
            book.to_str().unwrap(),
            "--progress",
            "0",
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        std::fs::read_to_string(&seen)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    // Filling the cores: one core per slot, each core's slot running both of its engines.
    let bound = play(cpus.len(), &[]);
    assert_eq!(bound.len(), 2 * cpus.len(), "{bound:?}");
    let mut per_core: Vec<usize> = bound.iter().flat_map(|l| cpu_list(l)).collect();
    per_core.sort();
    let twice: Vec<usize> = cpus.iter().flat_map(|&c| [c, c]).collect();
    assert_eq!(per_core, twice, "{bound:?} for {allowed}");
    // Told not to, or more slots than cores: every engine may use every core.
    let unbound = play(cpus.len(), &["--no-bind-cores"]);
    assert!(unbound.iter().all(|l| *l == allowed), "{unbound:?}");
    let crowded = play(cpus.len() + 1, &[]);
    assert_eq!(crowded.len(), 2 * (cpus.len() + 1));
    assert!(crowded.iter().all(|l| *l == allowed), "{crowded:?}");
}

#[test]
fn a_resumed_match_plays_the_pairs_its_record_lacks_and_counts_them_all() {
    let book = book();
    let dir = tempfile::tempdir().unwrap();
    let args = |pgn: &std::path::Path, pairs: &str| -> Vec<String> {
        [
            "match",
            "--engine1",
            sparring(),
            "--option2",
            "KnightValue=200",
            "--depth",
            "1",
            "--book",
            book.to_str().unwrap(),
            "--seed",
            "9",
            "--concurrency",
            "1",
            "--progress",
            "0",
            "--pgn",
            pgn.to_str().unwrap(),
            "--pairs",
            pairs,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let straight = dir.path().join("straight.pgn");
    let o = run(&args(&straight, "6")
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let whole = counts(&stdout(&o));

    // The same match stopped after 2 pairs, then resumed to 6.
    let split = dir.path().join("split.pgn");
    let o = run(&args(&split, "2")
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let mut resumed = args(&split, "6");
    resumed.push("--resume".into());
    let o = run(&resumed.iter().map(String::as_str).collect::<Vec<_>>());
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    // The speed is this run's: its own 4 pairs, the 2 before the resume named apart.
    let err = stderr(&o);
    assert!(
        err.lines()
            .any(|l| l.starts_with("8 games in ") && l.contains(" (4 before the resume), ")),
        "{err}"
    );
    let c = counts(&out);
    assert_eq!(c.pairs, 6, "{out}");
    assert_eq!(c, whole, "{out}");
    // The same openings in the same order, each once: pairs 3-6 follow pairs 1-2.
    assert_eq!(
        pgn_words_without_times(&split),
        pgn_words_without_times(&straight)
    );
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("split.match.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["pairs_played"], 6);
    assert_eq!(record["next_pair"], 6);
    assert_eq!(record["state"], "finished");

    // Resuming a finished match plays nothing more.
    let o = run(&resumed.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(counts(&stdout(&o)), whole);

    // Another match's record, or none, is refused before any game (exit 2), the record kept.
    let before = std::fs::read(dir.path().join("split.match.json")).unwrap();
    let mut other = resumed.clone();
    let depth = other.iter().position(|a| a == "1").unwrap();
    other[depth] = "2".into();
    let o = run(&other.iter().map(String::as_str).collect::<Vec<_>>());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("it is another match: its setting was `depth=1"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("split.match.json")).unwrap(),
        before
    );
    let mut none = args(&dir.path().join("never.pgn"), "6");
    none.push("--resume".into());
    let o = run(&none.iter().map(String::as_str).collect::<Vec<_>>());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--resume: no match record at"), "{err}");
}
