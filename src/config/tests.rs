use super::*;

fn ini(text: &str) -> Result<Config, ConfigError> {
    ini::parse(text, Path::new("conf/t.conf"))
}

fn toml(text: &str) -> Result<Config, ConfigError> {
    toml_form::parse(text, Path::new("conf/t.toml"))
}

const SIM_INI: &str = "[Main]\nSimulate = 1\nVariables = ../vars/x.var\nLog = ../logs/x.log\nGameLog = ../logs/g_$THREAD.log\nIterations = 50000\nA = 5000\nGamma = 0.101\nAlpha = 0.602\n";

const SIM_TOML: &str = "simulate = true\nvariables = \"../vars/x.var\"\nlog = \"../logs/x.log\"\ngame_log = \"../logs/g_$THREAD.log\"\niterations = 50000\nA = 5000\ngamma = 0.101\nalpha = 0.602\n";

#[test]
fn classic_simulation_ini_loads() {
    let c = ini(SIM_INI).unwrap();
    assert!(c.simulate);
    assert_eq!(c.variables, Path::new("vars/x.var"));
    assert_eq!(c.log, Path::new("logs/x.log"));
    assert_eq!(c.checkpoint, Path::new("logs/x.checkpoint.var"));
    assert_eq!(c.schedule.iterations, 50000);
    assert_eq!(c.schedule.a, 5000.0);
    assert_eq!(c.concurrency, 1);
    assert!(c.games.is_none());
    assert_eq!(c.game_log_for(3).unwrap(), Path::new("logs/g_3.log"));
}

#[test]
fn toml_twin_means_the_same() {
    let a = ini(SIM_INI).unwrap();
    let b = toml(SIM_TOML).unwrap();
    assert_eq!(
        Config {
            path: a.path.clone(),
            ..b
        },
        a
    );
}

#[test]
fn classic_engine_ini_loads_with_comments_and_any_case() {
    let text = "[Main]\nSimulate = 0\nVariables = v.var\nIterations = 10\nA = 1\nGamma = 0.1\nAlpha = 0.6\n\n; engines\n[engine]\nEngine1 = ./e1 ; plus side\nEngine2 = stockfish\nEPDBook = b.epd\nBaseTime = 1000\nIncTime = 10\nConcurrency = 2\ndrawscorelimit = 10\nDrawMoveLimit = 10\nWinScoreLimit = 600\nWinMoveLimit = 5\n";
    let c = ini(text).unwrap();
    let g = c.games.unwrap();
    assert_eq!(g.engine1.command, Path::new("conf/e1"));
    assert_eq!(g.engine2.command, Path::new("stockfish"));
    assert_eq!(g.limits.base_time_ms, Some(1000));
    assert_eq!(g.limits.inc_time_ms, Some(10));
    assert_eq!(g.adjudication.draw_score_limit, 10);
    assert_eq!(g.adjudication.win_move_limit, 5);
    assert_eq!(c.concurrency, 2);
    assert_eq!(c.log, Path::new("conf/t.log"));
}

#[test]
fn ini_errors_name_file_line_and_key() {
    let cases = [
        (
            SIM_INI.replace("Iterations = 50000", "Iteratons = 50000"),
            "conf/t.conf:6: unknown key `Iteratons` in [Main]",
        ),
        (
            SIM_INI.replace("Iterations = 50000\n", ""),
            "conf/t.conf: [Main] is missing required key `Iterations`",
        ),
        (
            SIM_INI.replace("A = 5000", "A = lots"),
            "conf/t.conf:7: [Main] A: `lots` is not a number",
        ),
        (
            SIM_INI.replace("Iterations = 50000", "Iterations = 0"),
            "conf/t.conf:6: [Main] Iterations: must be at least 1",
        ),
        (
            SIM_INI.replace("Simulate = 1", "Simulate = 0"),
            "conf/t.conf: [Engine] is missing required key `Engine1` (needed when Simulate = 0)",
        ),
        (
            SIM_INI.replace("Simulate = 1", "Simulate = 2"),
            "conf/t.conf:2: [Main] Simulate: must be 0 or 1",
        ),
        (
            format!("{SIM_INI}[Books]\n"),
            "conf/t.conf:10: unknown section [Books]",
        ),
        (
            format!("{SIM_INI}A = 3\n"),
            "conf/t.conf:10: [Main] A is given twice",
        ),
        (
            "Simulate = 1\n".to_string(),
            "conf/t.conf:1: key `Simulate` before any [section]",
        ),
    ];
    for (text, want) in cases {
        let err = ini(&text).unwrap_err().to_string();
        assert!(err.starts_with(want), "got {err:?}, want {want:?}");
    }
}

#[test]
fn toml_errors_name_line_or_key() {
    let cases = [
        (
            SIM_TOML.replace("iterations = 50000", "iteratons = 50000"),
            "conf/t.toml:5: unknown field `iteratons`",
        ),
        (
            SIM_TOML.replace("iterations = 50000", "iterations = 0"),
            "conf/t.toml: key `iterations`: must be at least 1",
        ),
        (
            SIM_TOML.replace("A = 5000", "A = \"x\""),
            "conf/t.toml:6: invalid type",
        ),
        (
            SIM_TOML.replace("simulate = true", "simulate = false"),
            "conf/t.toml: missing table [engine1]",
        ),
        (
            format!("{SIM_TOML}[simulation]\ndraw_rate = 1.5\n"),
            "conf/t.toml: key `simulation.draw_rate`",
        ),
        (
            SIM_TOML.replace("iterations = 50000", ""),
            "conf/t.toml: missing key `iterations`",
        ),
    ];
    for (text, want) in cases {
        let err = toml(&text).unwrap_err().to_string();
        assert!(err.starts_with(want), "got {err:?}, want {want:?}");
    }
}

#[test]
fn toml_tb_path_is_a_folder_beside_the_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("syzygy")).unwrap();
    let games = "[engine1]\ncommand = \"/usr/games/stockfish\"\n[games]\nnodes = 100\n";
    let conf = dir.path().join("m.toml");
    std::fs::write(
        &conf,
        format!("{games}[adjudication]\ntb_path = \"syzygy\"\n"),
    )
    .unwrap();
    let g = Config::load_games(&conf).unwrap().games.unwrap();
    assert_eq!(g.adjudication.tb_path, Some(dir.path().join("syzygy")));

    std::fs::write(
        &conf,
        format!("{games}[adjudication]\ntb_path = \"nowhere\"\n"),
    )
    .unwrap();
    let err = Config::load_games(&conf).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{}: key `adjudication.tb_path`: ", conf.display()))
            && err.contains("nowhere: not a folder"),
        "{err}"
    );
}

#[test]
fn toml_engine_settings() {
    let text = format!(
        "{}\nconcurrency = 2\nseed = 7\n[engine1]\ncommand = \"../target/sparring\"\n[engine1.options]\nHash = 16\nOwnBook = false\n[games]\nbook = \"b.epd\"\nbook_order = \"sequential\"\ndepth = 3\n[adjudication]\nwin_score_limit = 600\nwin_move_limit = 4\nboth_agree = true\n",
        SIM_TOML.replace("simulate = true", "simulate = false")
    );
    let c = toml(&text).unwrap();
    assert_eq!(c.seed, Some(7));
    let g = c.games.unwrap();
    assert_eq!(g.engine1, g.engine2, "engine2 defaults to engine1");
    assert_eq!(
        g.engine1.options,
        vec![
            ("Hash".into(), "16".into()),
            ("OwnBook".into(), "false".into())
        ]
    );
    assert!(!g.book_random);
    assert_eq!(g.limits.depth, Some(3));
    assert!(g.adjudication.both_agree);
    let bad = text.replace("depth = 3\n", "");
    assert!(
        toml(&bad)
            .unwrap_err()
            .to_string()
            .contains("needs a search limit")
    );
}
