//! Every end-to-end test in one test binary (`tests/layers.rs` is the other): one link of the
//! large crate instead of one per file, and the harness's threads keep both cores busy across
//! what used to be separate binaries run one after another. Each former `tests/NAME.rs` is the
//! module `NAME` (`cargo test --test suite NAME::`); the helpers they share are modules here,
//! compiled once. Tests of one binary run concurrently, so none may change the process's
//! environment, working directory or signal handling, and each uses its own database, role
//! and temporary folder.
//!
//! libtest starts the tests in the order of their names, so a long test named late runs on
//! alone at the end while the other threads idle. The team's browser tests (33 s and 20 s, the
//! longest after db_ladder's) are `door_browser`, not `web_team` as they were: they start
//! among the database's tests instead of last.

mod child_common;
mod coefficients_common;
mod match_common;
mod pg_common;
mod run_common;
mod standin;
mod syzygy_tables;
mod web_common;

mod chess960;
mod cli_conventions;
mod coefficients_cli;
mod config_paths;
mod damaged_files;
mod db_door;
mod db_engines;
mod db_fuzz;
mod db_heldout;
mod db_ladder;
mod db_layout;
mod db_match;
mod db_patch;
mod db_reshape;
mod db_shared;
mod db_shares;
mod db_source;
mod db_tls;
mod db_track;
mod disk_full;
mod docs_commands;
mod door_browser;
mod engine_log;
mod engine_many_options;
mod engine_real;
mod engine_standin;
mod engine_stderr;
mod engine_vampirc;
mod exit_codes;
mod game_books;
mod game_pgn_extract;
mod gradient_run;
mod gradient_uci;
mod heldout_openings;
mod init_cli;
mod log_formats;
mod match_faults;
mod match_real;
mod match_sparring;
mod match_sprt;
mod match_tablebase;
mod plan_cli;
mod plan_measure;
mod positions_eval;
mod positions_run;
mod positions_truth;
mod report_cli;
mod reshape_cli;
mod rough_edges;
mod simulate_cli;
mod simulate_statistics;
mod sparring;
mod sparring_coefficients;
mod track;
mod tune_experiment;
mod tune_real;
mod tuner_seams;
mod verify_ladder;
mod web_browser;

/// With `autotests = false`, a new `tests/NAME.rs` that is not a module here would never run:
/// every file of tests/ is one (or one of the two binaries' roots).
#[test]
fn every_test_file_is_a_module_of_the_suite() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let root = std::fs::read_to_string(dir.join("suite.rs")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let module = match name.strip_suffix(".rs") {
            Some("suite" | "layers") | None => continue,
            Some(module) => module.to_string(),
        };
        if !root.lines().any(|l| l == format!("mod {module};")) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "add `mod NAME;` to tests/suite.rs for {missing:?}"
    );
}
