//! `spsa plan` end to end: on the classic 1-variable and the shipped 8-variable example
//! (schedules shortened so a debug build runs them in seconds), the planned c_end/R_end lose no
//! more than 1.5x the best setting an exhaustive sweep of shared (c_end, R_end) finds; the same
//! seed writes the same file; simul_elo 0 is named; bad input writes nothing.

use crate::run_common;

use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use run_common::{spsa_in, text};
use spsa::plan::study::{ModelOptimum, StudySetup, run_study};
use spsa::spsa::Schedule;
use spsa::vars::{self, Variable};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A simulation config in `dir` over `vars` with N iterations, A = N/10, Concurrency `conc`.
fn config(dir: &Path, vars: &Path, n: u64, conc: usize) -> PathBuf {
    let path = dir.join("plan.conf");
    std::fs::write(
        &path,
        format!(
            "[Main]\nSimulate = 1\nVariables = {}\nLog = plan.log\nIterations = {n}\nA = {}\n\
             Gamma = 0.101\nAlpha = 0.602\n[Engine]\nConcurrency = {conc}\n",
            vars.display(),
            n / 10
        ),
    )
    .unwrap();
    path
}

fn plan(dir: &Path, conf: &Path, out: &str, seed: &str) -> std::process::Output {
    spsa_in(
        dir,
        &[
            "plan",
            conf.to_str().unwrap(),
            "--runs",
            "6",
            "--seed",
            seed,
            "-o",
            out,
        ],
    )
}

/// Mean final loss of these variables' settings over `runs` seeded runs.
fn mean_loss(vars: &[Variable], n: u64, conc: usize, runs: usize, seed: u64) -> f64 {
    let setup = StudySetup {
        vars: vars.to_vec(),
        schedule: Schedule {
            iterations: n,
            a: (n / 10) as f64,
            alpha: 0.602,
            gamma: 0.101,
        },
        pair_model: spsa::stats::pairs::PairModel::default(),
        concurrency: conc,
        pairs: 1,
        optimum: ModelOptimum::Zero,
    };
    let study = run_study(&setup, runs, seed, 2, &ProgressBar::hidden());
    study.losses.iter().sum::<f64>() / runs as f64
}

/// The best mean loss of a shared sweep: every variable's c_end times one factor (for one
/// variable, every absolute c_end on the grid), one R_end for all.
fn best_shared_sweep(vars: &[Variable], n: u64, conc: usize) -> (f64, f64, f64) {
    let mut best = (f64::INFINITY, 0.0, 0.0);
    for factor in [0.5, 1.0, 2.0, 4.0, 8.0, 16.0] {
        for r in [5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2] {
            let swept: Vec<Variable> = vars
                .iter()
                .map(|v| Variable {
                    c_end: v.c_end * factor,
                    r_end: r,
                    ..v.clone()
                })
                .collect();
            let loss = mean_loss(&swept, n, conc, 6, 500);
            if loss < best.0 {
                best = (loss, factor, r);
            }
        }
    }
    best
}

fn plan_beats_sweep(var_file: &str, n: u64, conc: usize) {
    let dir = tempfile::tempdir().unwrap();
    let vars_path = repo().join("vars").join(var_file);
    let conf = config(dir.path(), &vars_path, n, conc);
    let o = plan(dir.path(), &conf, "out.var", "11");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("file settings"), "{out}");
    assert!(out.contains("within 1 Elo"), "{out}");
    // The draw rate is shown as a rate, not to the last bit of a float.
    let rate = out
        .split("draw rate ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("no draw rate in {out}"));
    assert!(
        rate.len() == 5 && rate.starts_with("0."),
        "draw rate `{rate}`"
    );
    let planned = vars::load(&dir.path().join("out.var")).unwrap();
    let original = vars::load(&vars_path).unwrap();
    for (p, v) in planned.iter().zip(&original) {
        assert_eq!(
            (&p.name, p.start, p.min, p.max, p.simul_elo),
            (&v.name, v.start, v.min, v.max, v.simul_elo),
            "only the gains change"
        );
    }
    // Judged on seeds neither the plan nor the sweep saw.
    let plan_loss = mean_loss(&planned, n, conc, 12, 9_000);
    let file_loss = mean_loss(&original, n, conc, 12, 9_000);
    let (sweep_loss, factor, r) = best_shared_sweep(&original, n, conc);
    eprintln!(
        "{var_file}, {n} iterations: plan {plan_loss:.3} Elo, best shared sweep {sweep_loss:.3} (c_end x{factor}, R_end {r}), file {file_loss:.3}"
    );
    assert!(
        plan_loss <= 1.5 * sweep_loss,
        "plan {plan_loss} vs sweep {sweep_loss}\n{out}"
    );
    assert!(plan_loss < file_loss, "{out}");
}

#[test]
fn one_variable_plan_is_near_the_best_sweep() {
    plan_beats_sweep("simul_1var.var", 5000, 1);
}

#[test]
fn shipped_eight_variables_plan_is_near_the_best_sweep() {
    plan_beats_sweep("simul_8var.var", 3000, 4);
}

#[test]
fn same_seed_same_file_and_zero_simul_elo_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let vars_path = dir.path().join("v.var");
    std::fs::write(
        &vars_path,
        "a,50,-100,100,5,0.002,20\nflat,10,-100,100,7,0.003,0\n",
    )
    .unwrap();
    let conf = config(dir.path(), &vars_path, 1000, 1);
    let first = plan(dir.path(), &conf, "one.var", "4");
    assert!(first.status.success(), "{}", text(&first.stderr));
    let err = text(&first.stderr);
    assert!(
        err.contains("warning: `flat` has simul_elo 0: the model has nothing to find, so it keeps c_end 7 and R_end 0.003"),
        "{err}"
    );
    let second = plan(dir.path(), &conf, "two.var", "4");
    let one = std::fs::read_to_string(dir.path().join("one.var")).unwrap();
    let two = std::fs::read_to_string(dir.path().join("two.var")).unwrap();
    assert_eq!(one, two, "same seed, same plan");
    assert_eq!(
        text(&first.stdout).replace("one.var", ""),
        text(&second.stdout).replace("two.var", "")
    );
    let planned = vars::load(&dir.path().join("one.var")).unwrap();
    assert_eq!((planned[1].c_end, planned[1].r_end), (7.0, 0.003));
    assert!(one.starts_with("# spsa plan "), "{one}");
}

#[test]
fn bad_input_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let vars_path = dir.path().join("v.var");
    std::fs::write(&vars_path, "a,50,-100,100,5,0.002,0\n").unwrap();
    let conf = config(dir.path(), &vars_path, 1000, 1);
    let o = plan(dir.path(), &conf, "out.var", "1");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("nothing to plan"),
        "{}",
        text(&o.stderr)
    );
    assert!(!dir.path().join("out.var").exists());
    std::fs::write(&vars_path, "a,500,-100,100,5,0.002,1\n").unwrap();
    let o = plan(dir.path(), &conf, "out.var", "1");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("v.var:1"), "{}", text(&o.stderr));
    assert!(!dir.path().join("out.var").exists());
}

/// The file-settings loss of variable `name` in the plan's table (its sixth column).
fn file_loss(stdout: &str, name: &str) -> f64 {
    let row = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} row in {stdout}"));
    row.split_whitespace().nth(5).unwrap().parse().unwrap()
}

/// A real engine's weights (simulate = false, an engine named; nothing is played) are planned
/// with the optimum unknown: drawn in each range, so a weight starting at its bound 0 is not
/// taken for optimal. The same file as a simulation keeps the classic optimum 0 and names the
/// weights whose range does not hold it.
#[test]
fn a_real_engines_weights_are_planned_with_their_optimum_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("w.var"),
        "Material,150,0,400,20,0.01,30\nShelter,0,0,50,4,0.01,40\n",
    )
    .unwrap();
    let toml = |simulate: bool| {
        format!(
            "simulate = {simulate}\nvariables = \"w.var\"\nlog = \"w.log\"\niterations = 300\nA = 30\n\
             gamma = 0.101\nalpha = 0.602\n[engine1]\ncommand = \"/usr/games/toga2\"\n[games]\ndepth = 1\n"
        )
    };
    std::fs::write(d.join("real.toml"), toml(false)).unwrap();
    std::fs::write(d.join("sim.toml"), toml(true)).unwrap();
    let real = plan(d, &d.join("real.toml"), "real.var", "3");
    let sim = plan(d, &d.join("sim.toml"), "sim.var", "3");
    assert!(real.status.success(), "{}", text(&real.stderr));
    assert!(sim.status.success(), "{}", text(&sim.stderr));
    let (real_out, sim_out) = (text(&real.stdout), text(&sim.stdout));
    assert!(real_out.contains("model optimum: unknown"), "{real_out}");
    assert!(
        !text(&real.stderr).contains("warning"),
        "{}",
        text(&real.stderr)
    );
    assert!(
        sim_out.contains("model optimum: 0 for every variable"),
        "{sim_out}"
    );
    let warned = text(&sim.stderr);
    assert!(
        warned.contains("`Shelter`: the model's optimum is 0")
            && warned.contains("its lower bound 0..50"),
        "{warned}"
    );
    // At its bound 0, Shelter costs (almost) nothing under the classic convention and real Elo
    // when its optimum is unknown.
    assert!(file_loss(&sim_out, "Shelter") < 0.1, "{sim_out}");
    assert!(file_loss(&real_out, "Shelter") > 1.0, "{real_out}");
    // A real engine's plan keeps the probe limit (5 Elo at ±c_end under the seventh column);
    // the model's own plan needs none.
    assert!(
        real_out.contains("no c_end loses more than 5 Elo"),
        "{real_out}"
    );
    assert!(!sim_out.contains("--probe-loss"), "{sim_out}");
    for v in vars::load(&d.join("real.var")).unwrap() {
        let loss = 1e-4 * v.simul_elo * v.c_end * v.c_end;
        assert!(loss <= 5.0, "{}: c_end {} loses {loss}", v.name, v.c_end);
    }
    assert!(text_of(&d.join("real.var")).contains("--probe-loss 5"));
}

fn text_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// `--variables FILE` plans FILE (a path from the current folder) instead of the config's
/// variables file: the same plan as a config that names FILE, and the written file says how it
/// was made. An unreadable FILE is named, with exit 2 and nothing written.
#[test]
fn variables_flag_plans_another_file_with_the_same_config() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("conf")).unwrap();
    std::fs::write(
        d.join("other.var"),
        "Knight,300,0,600,20,0.002,5\nBishop,320,0,600,20,0.002,5\n",
    )
    .unwrap();
    std::fs::write(d.join("conf/own.var"), "Rook,500,0,900,20,0.002,5\n").unwrap();
    let toml = |vars: &str| {
        format!(
            "simulate = true\nvariables = \"{vars}\"\nlog = \"x.log\"\niterations = 200\nA = 20\n\
             gamma = 0.101\nalpha = 0.602\n"
        )
    };
    std::fs::write(d.join("conf/own.toml"), toml("own.var")).unwrap();
    std::fs::write(d.join("conf/other.toml"), toml("../other.var")).unwrap();
    let args = |conf: &str, out: &str, extra: &[&'static str]| {
        let mut a = vec!["plan", conf, "--runs", "4", "--seed", "7", "-o", out];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        spsa_in(d, &a)
    };
    let flagged = run(args(
        "conf/own.toml",
        "flagged.var",
        &["--variables", "other.var"],
    ));
    assert!(flagged.status.success(), "{}", text(&flagged.stderr));
    let named = run(args("conf/other.toml", "named.var", &[]));
    assert!(named.status.success(), "{}", text(&named.stderr));
    let body = |f: &str| {
        let t = std::fs::read_to_string(d.join(f)).unwrap();
        t.lines().skip(1).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(body("flagged.var"), body("named.var"));
    assert!(body("flagged.var").contains("Knight") && !body("flagged.var").contains("Rook"));
    let header = std::fs::read_to_string(d.join("flagged.var")).unwrap();
    assert!(
        header.starts_with("# spsa plan conf/own.toml --variables other.var --iterations 200"),
        "{header}"
    );
    let missing = run(args(
        "conf/own.toml",
        "missing.var",
        &["--variables", "conf/gone.var"],
    ));
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing.stderr));
    assert!(
        text(&missing.stderr).contains("conf/gone.var"),
        "{}",
        text(&missing.stderr)
    );
    assert!(!d.join("missing.var").exists());
}
