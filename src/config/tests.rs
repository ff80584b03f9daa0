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
        (
            format!("{SIM_TOML}[simulation]\npentanomial = [1, 2, 3]\n"),
            "conf/t.toml: key `simulation.pentanomial`: expected 5 numbers",
        ),
        (
            format!("{SIM_TOML}[simulation]\ndraw_rate = 0.5\npentanomial = [1, 2, 3, 2, 1]\n"),
            "conf/t.toml: key `simulation.pentanomial`: give draw_rate or pentanomial",
        ),
        (
            format!("{SIM_TOML}[simulation]\npentanomial = [0, 0, 10, 2, 1]\n"),
            "conf/t.toml: key `simulation.pentanomial`: needs pairs below 1 point",
        ),
        (
            format!("{SIM_TOML}[simulation]\npentanomial = [1, -2, 10, 2, 1]\n"),
            "conf/t.toml: key `simulation.pentanomial`: counts must be 0 or more, not -2",
        ),
    ];
    for (text, want) in cases {
        let err = toml(&text).unwrap_err().to_string();
        assert!(err.starts_with(want), "got {err:?}, want {want:?}");
    }
}

#[test]
fn a_pentanomial_replaces_the_draw_rate_and_a_classic_config_keeps_decisive_games() {
    use crate::stats::pairs::PairModel;
    let c = toml(&format!(
        "{SIM_TOML}[simulation]\npentanomial = [1, 25, 50, 25, 1]\n"
    ))
    .unwrap();
    let PairModel::Pentanomial(p) = c.pair_model() else {
        panic!("{:?}", c.pair_model())
    };
    assert!((p[2] - 50.0 / 102.0).abs() < 1e-9, "{p:?}");
    let c = toml(&format!("{SIM_TOML}[simulation]\ndraw_rate = 0.25\n")).unwrap();
    assert_eq!(c.pair_model(), PairModel::Games { draw_rate: 0.25 });
    assert_eq!(toml(SIM_TOML).unwrap().pair_model(), PairModel::default());
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
    assert_eq!(g.variant, crate::game::Variant::Auto, "the book decides");
    assert!(
        g.bind_cores,
        "slots that fill the cores are bound unless told not to"
    );
    let unbound = text.replace("depth = 3\n", "depth = 3\nbind_cores = false\n");
    assert!(!toml(&unbound).unwrap().games.unwrap().bind_cores);
    let misspelt = text.replace("depth = 3\n", "depth = 3\nbind_cores = \"no\"\n");
    let err = toml(&misspelt).unwrap_err().to_string();
    assert!(
        err.contains("t.toml:21") && err.contains("expected a boolean"),
        "{err}"
    );
    let chess960 = text.replace("depth = 3\n", "depth = 3\nvariant = \"chess960\"\n");
    let g = toml(&chess960).unwrap().games.unwrap();
    assert_eq!(g.variant, crate::game::Variant::Chess960);
    let atomic = text.replace("depth = 3\n", "depth = 3\nvariant = \"atomic\"\n");
    let err = toml(&atomic).unwrap_err().to_string();
    assert!(
        err.contains("key `games.variant`") && err.contains("\"atomic\""),
        "{err}"
    );
    let bad = text.replace("depth = 3\n", "");
    assert!(
        toml(&bad)
            .unwrap_err()
            .to_string()
            .contains("needs a search limit")
    );
}

/// Defect 7 of issue 12: two search limits in TOML are an error naming the keys, not silently
/// reduced to one by precedence.
#[test]
fn toml_rejects_two_search_limits() {
    let base = format!(
        "{}\n[engine1]\ncommand = \"sf\"\n[games]\n",
        SIM_TOML.replace("simulate = true", "simulate = false")
    );
    let cases = [
        (
            "depth = 3\nnodes = 500\n",
            "`games.nodes` and `games.depth`",
        ),
        (
            "depth = 3\nmovetime_ms = 100\n",
            "`games.depth` and `games.movetime_ms`",
        ),
        (
            "base_time_ms = 1000\ninc_time_ms = 10\ndepth = 3\n",
            "`games.base_time_ms` and `games.depth`",
        ),
        (
            "base_time_ms = 1000\nnodes = 1\nmovetime_ms = 5\n",
            "`games.base_time_ms` and `games.nodes` and `games.movetime_ms`",
        ),
    ];
    for (limits, keys) in cases {
        let err = toml(&format!("{base}{limits}")).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "conf/t.toml: keys {keys}: a game has one search limit"
            )),
            "{err}"
        );
    }
    let one = toml(&format!("{base}base_time_ms = 1000\ninc_time_ms = 10\n")).unwrap();
    assert_eq!(one.games.unwrap().limits.chosen(), ["base_time_ms"]);
}

/// Defect 5 of issue 12: a command with a `/` stays a path from the config's folder, also for a
/// config named without a folder; only a bare name is left for the PATH search.
#[test]
fn engine_commands_with_a_slash_stay_paths_beside_a_bare_config_name() {
    let text = |e1: &str, e2: &str| {
        format!(
            "[Main]\nSimulate = 0\nVariables = v.var\nIterations = 10\nA = 1\nGamma = 0.1\nAlpha = 0.6\n[Engine]\nEngine1 = {e1}\nEngine2 = {e2}\nEPDBook = b.epd\nBaseTime = 1000\n"
        )
    };
    let commands = |config: &str, e1: &str, e2: &str| {
        let g = ini::parse(&text(e1, e2), Path::new(config))
            .unwrap()
            .games
            .unwrap();
        (g.engine1.command, g.engine2.command)
    };
    assert_eq!(
        commands("aggr.conf", "./stockfish", "engines/foo"),
        ("./stockfish".into(), "engines/foo".into())
    );
    assert_eq!(
        commands("conf/aggr.conf", "../sf", "stockfish"),
        ("./sf".into(), "stockfish".into())
    );
    let t = toml_form::parse(
        "variables = \"v.var\"\niterations = 1\nA = 1\ngamma = 0.1\nalpha = 0.6\n[engine1]\ncommand = \"./eng\"\n[games]\ndepth = 1\n",
        Path::new("t.toml"),
    )
    .unwrap();
    assert_eq!(t.games.unwrap().engine1.command, Path::new("./eng"));
}

/// Defect 8 of issue 12: an option value of the wrong type names the file, its line and key; and
/// options keep their file order.
#[test]
fn toml_option_values_of_the_wrong_type_name_file_line_and_key() {
    let base = format!(
        "{}\n[engine1]\ncommand = \"sf\"\n[engine1.options]\nThreads = 1\nHash = 16\n",
        SIM_TOML.replace("simulate = true", "simulate = false")
    );
    let games = "[games]\ndepth = 1\n";
    let ok = toml(&format!("{base}{games}")).unwrap().games.unwrap();
    assert_eq!(
        ok.engine1.options,
        [("Threads".into(), "1".into()), ("Hash".into(), "16".into())]
    );
    let line_of_bad = base.lines().count() + 1;
    for (value, kind) in [
        ("[16]", "array"),
        ("{ a = 1 }", "table"),
        ("1979-05-27", "datetime"),
    ] {
        let err = toml(&format!("{base}Book = {value}\n{games}"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "conf/t.toml:{line_of_bad}: key `engine1.options.Book`: expected a string, number or boolean, found {kind}"
            )
        );
    }
    let err = toml(&format!(
        "{base}{games}[engine2]\ncommand = \"sf\"\n[engine2.options]\nHash = [1]\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(&format!(
            "conf/t.toml:{}: key `engine2.options.Hash`",
            line_of_bad + 5
        )),
        "{err}"
    );
}

/// Defect 8 of issue 12: unwritable output paths are found before anything is written, and the
/// check itself writes nothing.
#[test]
fn check_outputs_finds_unwritable_paths_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("somefile"), "x").unwrap();
    std::fs::create_dir(root.join("adir")).unwrap();
    let config_path = root.join("t.toml");
    let load = |outputs: &str| {
        let text = format!(
            "variables = \"v.var\"\niterations = 1\nA = 1\ngamma = 0.1\nalpha = 0.6\nconcurrency = 2\n{outputs}\n[engine1]\ncommand = \"sf\"\n[games]\ndepth = 1\n"
        );
        toml_form::parse(&text, &config_path).unwrap()
    };
    // Fine: folders that do not exist yet under a writable one, and an existing log.
    let fine = load("log = \"new/deeper/x.log\"\ngame_log = \"logs/g_$THREAD.log\"");
    fine.check_outputs().unwrap();
    std::fs::write(root.join("old.log"), "iteration,a\n").unwrap();
    load("log = \"old.log\"").check_outputs().unwrap();
    let mut entries: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    entries.sort();
    assert_eq!(entries, ["adir", "old.log", "somefile"], "nothing created");
    let cases = [
        ("log = \"somefile/x.log\"", "θ log", "somefile/x.log"),
        ("log = \"adir\"", "θ log", "adir"),
        (
            "checkpoint = \"somefile/deeper/x.var\"",
            "checkpoint",
            "somefile/deeper/x.var",
        ),
        (
            "game_log = \"ok/../somefile/g_$THREAD.log\"",
            "game log",
            "somefile/g_1.log",
        ),
    ];
    for (outputs, what, bad) in cases {
        let err = load(outputs).check_outputs().unwrap_err().to_string();
        let want = format!(
            "{}: the {what} `{}` cannot be written: ",
            config_path.display(),
            root.join(bad).display()
        );
        assert!(err.starts_with(&want), "{err}\nwant {want}");
    }
    let mut with_pgn = load("");
    with_pgn.games.as_mut().unwrap().pgn = Some(root.join("somefile/games.pgn"));
    let err = with_pgn.check_outputs().unwrap_err().to_string();
    assert!(
        err.contains("the PGN file") && err.ends_with("is a file, not a folder"),
        "{err}"
    );
}

/// Defect 11 of issue 12: the classic INI's optional `TimeMargin` (ms) is TOML's `time_margin_ms`.
#[test]
fn ini_time_margin_is_the_toml_time_margin() {
    let text = "[Main]\nSimulate = 0\nVariables = v.var\nIterations = 10\nA = 1\nGamma = 0.1\nAlpha = 0.6\n[Engine]\nEngine1 = sf\nEngine2 = sf\nEPDBook = b.epd\nBaseTime = 1000\nIncTime = 10\n";
    let margin = |t: &str| ini(t).map(|c| c.games.unwrap().limits.time_margin_ms);
    assert_eq!(margin(text).unwrap(), 50, "default as in TOML");
    assert_eq!(
        margin(&format!("{text}timemargin = 250 ; ms\n")).unwrap(),
        250
    );
    let err = margin(&format!("{text}TimeMargin = soon\n")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "conf/t.conf:14: [Engine] TimeMargin: `soon` is not a number of milliseconds"
    );
    let toml_twin = toml(&format!(
        "{}\n[engine1]\ncommand = \"sf\"\n[games]\nbase_time_ms = 1000\ntime_margin_ms = 250\n",
        SIM_TOML.replace("simulate = true", "simulate = false")
    ))
    .unwrap();
    assert_eq!(toml_twin.games.unwrap().limits.time_margin_ms, 250);
}

/// Defect 8 of issue 12: a value the engine refuses (known only after its handshake) can be
/// reported at the config line that set it.
#[test]
fn an_engine_refusal_points_at_the_option_line() {
    let text = format!(
        "{}\n[engine1]\ncommand = \"sf\"\n[engine1.options]\nHash = \"big\"\n[games]\ndepth = 1\n",
        SIM_TOML.replace("simulate = true", "simulate = false")
    );
    let line = text.lines().position(|l| l.starts_with("Hash")).unwrap() + 1;
    let c = toml(&text).unwrap();
    for side in [1, 2] {
        let err = c
            .option_error(side, "hash", "a spin option cannot take \"big\"")
            .unwrap();
        assert_eq!(
            err.to_string(),
            format!(
                "conf/t.toml:{line}: key `engine1.options.Hash`: a spin option cannot take \"big\""
            )
        );
    }
    assert!(c.option_error(1, "Threads", "x").is_none());
    let own = toml(&format!(
        "{text}[engine2]\ncommand = \"sf\"\n[engine2.options]\nThreads = 2\n"
    ))
    .unwrap();
    assert!(
        own.option_error(2, "Hash", "x").is_none(),
        "engine2 has its own table"
    );
    let err = own.option_error(2, "Threads", "too many").unwrap();
    assert!(
        err.to_string()
            .ends_with("key `engine2.options.Threads`: too many"),
        "{err}"
    );
}

#[test]
fn toml_database_names_the_shared_runs_database() {
    let c = toml(&format!(
        "{SIM_TOML}database = \"postgres://owner@127.0.0.1:5432/spsa\"\n"
    ))
    .unwrap();
    assert_eq!(
        c.database.as_deref(),
        Some("postgres://owner@127.0.0.1:5432/spsa")
    );
    assert_eq!(toml(SIM_TOML).unwrap().database, None);
}

#[test]
fn toml_verify_table_is_checked_at_its_line() {
    let games = SIM_TOML.replace("simulate = true", "simulate = false")
        + "[engine1]\ncommand = \"/usr/games/stockfish\"\n[games]\nnodes = 100\n";
    let c = toml(&format!(
        "{games}[verify]\nsprt = \"0,5\"\nagainst = \"defaults\"\n"
    ))
    .unwrap();
    assert_eq!(
        c.verify,
        [VerifyConfig {
            pairs: None,
            sprt: Some("0,5".into()),
            against: Against::Defaults,
            limit: VerifyLimit::Tune,
            fail_below: 0.0,
        }]
    );
    let c = toml(&format!("{games}[verify]\npairs = 400\n")).unwrap();
    assert_eq!(c.verify[0].against, Against::Start);
    // A tune at fixed nodes verified at a short clock.
    let c = toml(&format!(
        "{games}[verify]\nbase_time_ms = 1000\ninc_time_ms = 10\n"
    ))
    .unwrap();
    assert_eq!(c.verify[0].limit, VerifyLimit::Clock(1000, 10));
    assert_eq!(toml(&games).unwrap().verify, []);
    let verify_line = games.lines().count() + 1;
    for (table, wanted) in [
        ("pairs = 0\n", "key `verify.pairs`: must be at least 1"),
        ("sprt = \"5\"\n", "key `verify.sprt`"),
        (
            "against = \"tuned\"\n",
            "key `verify.against`: expected \"start\" or \"defaults\", found \"tuned\"",
        ),
        (
            "base_time_ms = 0\n",
            "key `verify.base_time_ms`: must be at least 1",
        ),
        (
            "inc_time_ms = 10\n",
            "key `verify.inc_time_ms`: needs `verify.base_time_ms` too",
        ),
    ] {
        let e = toml(&format!("{games}[verify]\n{table}"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("conf/t.toml:{verify_line}: ")),
            "{e}"
        );
        assert!(e.contains(wanted), "{e}");
    }
    let e = toml(&format!("{SIM_TOML}[verify]\npairs = 10\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("[verify] plays games"), "{e}");
    let e = toml(&format!("{games}[verify]\npair = 10\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `pair`"), "{e}");
}

/// `[[verify]]`: a ladder of steps in order, each checked at its own line (the step named).
#[test]
fn toml_verify_ladder_is_checked_at_each_steps_line() {
    let games = SIM_TOML.replace("simulate = true", "simulate = false")
        + "[engine1]\ncommand = \"/usr/games/stockfish\"\n[games]\nnodes = 100\n";
    let ladder = "[[verify]]\nsprt = \"0,2\"\nbase_time_ms = 10000\ninc_time_ms = 100\n\
                  [[verify]]\nsprt = \"0.5,2.5\"\npairs = 5000\nbase_time_ms = 60000\ninc_time_ms = 600\n\
                  [[verify]]\npairs = 200\nnodes = 20000\nagainst = \"defaults\"\nfail_below = -5\n\
                  [[verify]]\nsprt = \"-1.75,0.25\"\ndepth = 12\n";
    let c = toml(&format!("{games}{ladder}")).unwrap();
    let limits: Vec<VerifyLimit> = c.verify.iter().map(|v| v.limit).collect();
    assert_eq!(
        limits,
        [
            VerifyLimit::Clock(10_000, 100),
            VerifyLimit::Clock(60_000, 600),
            VerifyLimit::Nodes(20_000),
            VerifyLimit::Depth(12),
        ]
    );
    assert_eq!(c.verify[1].pairs, Some(5000));
    assert_eq!(c.verify[2].against, Against::Defaults);
    assert_eq!(c.verify[2].fail_below, -5.0);
    assert_eq!(c.verify[3].sprt.as_deref(), Some("-1.75,0.25"));
    assert_eq!(
        c.verify[0].describe(),
        "SPRT [0,2] at 10000+100 ms against the start"
    );
    assert_eq!(
        c.verify[2].describe(),
        "200 pairs (fails when the Elo interval lies below -5) at 20000 nodes against the defaults"
    );
    // A bad step is named, at the line of its own table.
    let first = games.lines().count() + 1;
    let good = "[[verify]]\npairs = 10\n";
    for (step, wanted) in [
        (
            "against = \"start\"\n",
            "[[verify]] step 2: a step needs `pairs` (a number of pairs) or `sprt` (a test), or both",
        ),
        (
            "pairs = 10\nnodes = 100\ndepth = 3\n",
            "[[verify]] step 2: one limit per step",
        ),
        (
            "pairs = 10\nbase_time_ms = 1000\nnodes = 100\n",
            "[[verify]] step 2: one limit per step",
        ),
        (
            "pairs = 10\nnodes = 0\n",
            "key `verify.nodes`: must be at least 1",
        ),
        (
            "pairs = 10\ndepth = 0\n",
            "key `verify.depth`: must be at least 1",
        ),
        ("sprt = \"0,2\"\nfail_below = 1\n", "takes no `fail_below`"),
        ("sprt = \"2,0\"\n", "[[verify]] step 2: key `verify.sprt`"),
    ] {
        let e = toml(&format!("{games}{good}[[verify]]\n{step}"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("conf/t.toml:{}: ", first + 2)),
            "{e}"
        );
        assert!(e.contains(wanted), "{e}");
    }
    let e = toml(&format!("{games}[[verify]]\npair = 10\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `pair`"), "{e}");
    let e = toml(&format!("{SIM_TOML}[[verify]]\npairs = 10\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("[verify] plays games"), "{e}");
    // A one-table ladder is the same as a [verify] table.
    assert_eq!(
        toml(&format!("{games}[[verify]]\npairs = 10\n"))
            .unwrap()
            .verify,
        toml(&format!("{games}[verify]\npairs = 10\n"))
            .unwrap()
            .verify
    );
}

#[test]
fn only_time_limits_are_scaled() {
    let mut clock = LimitsConfig {
        base_time_ms: Some(10_000),
        inc_time_ms: Some(100),
        ..LimitsConfig::default()
    };
    assert!(clock.is_timed());
    clock.scale_time(1.37);
    assert_eq!(
        (clock.base_time_ms, clock.inc_time_ms),
        (Some(13_700), Some(137))
    );
    assert_eq!(clock.time_scale, Some(1.37));
    let mut movetime = LimitsConfig {
        movetime_ms: Some(333),
        ..LimitsConfig::default()
    };
    movetime.scale_time(0.5);
    assert_eq!(movetime.movetime_ms, Some(167));
    let nodes = LimitsConfig {
        nodes: Some(5000),
        ..LimitsConfig::default()
    };
    assert!(!nodes.is_timed());
}

#[test]
fn an_engine_named_by_its_source_keeps_each_keys_line() {
    let games = "simulate = false\nvariables = \"v.var\"\niterations = 10\nA = 1\ngamma = 0.1\nalpha = 0.6\n[games]\ndepth = 2\n";
    let text = format!(
        "{games}[engine1]\nsource = {{ git = \"../src/eng\", commit = \"v1\", build = \"make\", binary = \"bin/eng\", build_timeout_s = 90 }}\n[engine2]\ncommand = \"stockfish\"\n"
    );
    let g = toml(&text).unwrap().games.unwrap();
    let s = g.engine1.source.as_ref().unwrap();
    let cwd = std::env::current_dir().unwrap();
    // A folder, relative to the config (conf/), made absolute; a URL is kept as written.
    assert_eq!(s.git, cwd.join("src/eng").display().to_string());
    assert_eq!(
        (s.commit.as_str(), s.build.as_str(), s.binary.as_str()),
        ("v1", "make", "bin/eng")
    );
    assert_eq!(s.timeout, Duration::from_secs(90));
    assert_eq!(
        (s.table.as_str(), s.lines.commit, s.lines.binary),
        ("engine1", 10, 10)
    );
    assert_eq!(g.engine1.command, Path::new("bin/eng"));
    assert!(g.engine2.source.is_none());
    let url = text.replace("../src/eng", "git@example.org:eng.git");
    let g = toml(&url).unwrap().games.unwrap();
    assert_eq!(g.engine1.source.unwrap().git, "git@example.org:eng.git");
    let default = text.replace(", build_timeout_s = 90", "");
    let s = toml(&default)
        .unwrap()
        .games
        .unwrap()
        .engine1
        .source
        .unwrap();
    assert_eq!(s.timeout, EngineSource::DEFAULT_TIMEOUT);

    for (bad, want) in [
        (
            text.replace("[engine1]\n", "[engine1]\ncommand = \"x\"\n"),
            "conf/t.toml:11: key `engine1.source`: an engine is given by `command` or by `source`, not both",
        ),
        (
            text.replace("source = {", "args = []\nnot_source = {"),
            "conf/t.toml:11: unknown field `not_source`",
        ),
        (
            text.replace("commit = \"v1\"", "commit = \"--upload-pack=x\""),
            "conf/t.toml:10: key `engine1.source.commit`: `--upload-pack=x` must not start with `-`",
        ),
        (
            text.replace("binary = \"bin/eng\"", "binary = \"/usr/bin/eng\""),
            "conf/t.toml:10: key `engine1.source.binary`: `/usr/bin/eng` must be a path inside the repository's tree",
        ),
        (
            text.replace("= 90", "= 0"),
            "conf/t.toml:10: key `engine1.source.build_timeout_s`: must be a number of seconds above 0, not 0",
        ),
        (
            text.replace("build = \"make\"", "build = \" \""),
            "conf/t.toml:10: key `engine1.source.build`: is empty",
        ),
    ] {
        let err = toml(&bad).unwrap_err().to_string();
        assert!(err.starts_with(want), "{err}\nwant {want}");
    }
    let neither = format!("{games}[engine1]\nargs = []\n");
    let err = toml(&neither).unwrap_err().to_string();
    assert_eq!(
        err,
        "conf/t.toml: missing key `engine1.command` (the engine's executable) or `engine1.source` (its repository, commit, build command and binary)"
    );
}

#[test]
fn toml_nodestime_counts_a_clock_in_nodes_and_needs_one() {
    let base = format!(
        "{}\n[engine1]\ncommand = \"sf\"\n[games]\n",
        SIM_TOML.replace("simulate = true", "simulate = false")
    );
    let c = toml(&format!(
        "{base}base_time_ms = 10000\ninc_time_ms = 100\nnodestime = 2000\n"
    ))
    .unwrap();
    let limits = c.games.unwrap().limits;
    assert_eq!(limits.nodestime, Some(2000));
    // A clock in nodes is the same on every machine: a shared run's workers do not scale it.
    assert!(!limits.is_timed());
    for (keys, expected) in [
        (
            "nodes = 5000\nnodestime = 2000\n",
            "key `games.nodestime` (2000): counts a clock in nodes, so it needs `games.base_time_ms`",
        ),
        (
            "nodestime = 2000\n",
            "key `games.nodestime` (2000): counts a clock in nodes",
        ),
        (
            "base_time_ms = 1000\nnodestime = 0\n",
            "key `games.nodestime`: nodes per millisecond must be at least 1",
        ),
    ] {
        let err = toml(&format!("{base}{keys}")).unwrap_err().to_string();
        assert!(err.contains(expected), "{keys}: {err}");
    }
}
