//! Paths in a config, end to end through the `spsa` binary: a config named without a folder
//! (`spsa run t.toml` from inside its folder, as classic users type it) still finds an engine
//! given as `./eng` beside it, and never some `eng` on PATH (issue 12, defect 5).

use crate::run_common;
use run_common::{log_iterations, spsa_in as spsa, text};

const SPARRING: &str = env!("CARGO_BIN_EXE_sparring");
const BOOK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/openings/balanced_6ply.epd");
const VARS: &str = "KnightValue,300,50,700,30,0.01,0\n";

/// A folder `conf/` holding the config, the variables and a copy of the engine named `eng`, and
/// an empty folder `conf/wd` for an engine working directory.
fn setup(config_name: &str, config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("conf");
    std::fs::create_dir_all(conf.join("wd")).unwrap();
    std::fs::copy(SPARRING, conf.join("eng")).unwrap();
    std::fs::write(conf.join("t.var"), VARS).unwrap();
    std::fs::write(conf.join(config_name), config).unwrap();
    dir
}

#[test]
fn run_with_a_bare_config_name_starts_the_dot_slash_engine_beside_it() {
    let config = format!(
        "variables = \"t.var\"\nlog = \"../logs/t.log\"\niterations = 2\nA = 1\ngamma = 0.101\nalpha = 0.602\nseed = 1\n[engine1]\ncommand = \"./eng\"\n[engine2]\ncommand = \"./eng\"\nworkdir = \"wd\"\n[games]\nbook = \"{BOOK}\"\ndepth = 1\nmax_plies = 60\n"
    );
    let dir = setup("t.toml", &config);
    let out = spsa(&dir.path().join("conf"), &["run", "t.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(log_iterations(&dir.path().join("logs/t.log")), [1, 2]);
}

#[test]
fn match_with_a_bare_classic_config_name_starts_the_dot_slash_engine_beside_it() {
    let config = format!(
        "[Main]\nSimulate = 0\nVariables = t.var\nIterations = 2\nA = 1\nGamma = 0.1\nAlpha = 0.6\n[Engine]\nEngine1 = ./eng\nEngine2 = ./eng\nEPDBook = {BOOK}\nBaseTime = 1000\n"
    );
    let dir = setup("t.conf", &config);
    let conf = dir.path().join("conf");
    let out = spsa(
        &conf,
        &[
            "match",
            "--config",
            "t.conf",
            "--pairs",
            "1",
            "--depth",
            "1",
            "--max-plies",
            "60",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Elo"), "{}", text(&out.stdout));
}
