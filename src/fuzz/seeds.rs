//! Seeds that the repository keeps no file of: written by this code's own writers, so they
//! follow the formats as they change.

use std::path::Path;

/// The first `n` lines of `text`.
pub fn head(bytes: &[u8], n: usize) -> Vec<u8> {
    let end = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(n.saturating_sub(1))
        .map_or(bytes.len(), |(i, _)| i + 1);
    bytes[..end].to_vec()
}

/// θ logs of every form: the classic tool's (no header), format 1 (CSV with a header) and
/// format 2 (replayable records), written by this code.
pub fn theta_logs() -> Vec<Vec<u8>> {
    use crate::spsa::driver::{Driver, DriverState, Rounding};
    use crate::spsa::{Schedule, Spsa};
    use crate::tuner::replay::ReplayLog;
    let legacy = include_bytes!("../../tests/legacy_format/legacy.log");
    let classic: Vec<u8> = head(legacy, 12)
        .split_inclusive(|b| *b == b'\n')
        .skip(1)
        .flatten()
        .copied()
        .collect();
    let vars = fuzz_vars(4);
    let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
    let start: Vec<f64> = vars.iter().map(|v| v.start).collect();
    let schedule = Schedule {
        iterations: 1000,
        a: 100.0,
        alpha: 0.602,
        gamma: 0.101,
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    // Steps (replayed from the seed), three in flight and applied out of order.
    let steps = dir.path().join("steps.log");
    let mut d = Driver::new(
        Spsa::new(&vars, schedule),
        Rounding::Continuous,
        1,
        7,
        DriverState::start(start.clone()),
    );
    let mut log = ReplayLog::create(&steps, &names).expect("a format-2 log");
    log.define(7, d.spsa(), 0, &start).expect("define");
    let mut flight = Vec::new();
    for row in 0..12u64 {
        while flight.len() < 3 {
            flight.push(d.next_trial().expect("a trial").iteration);
        }
        let k = flight.remove(1);
        let signal = [2.0, -1.0, 0.5, 1.0, -2.0, 0.0][(row % 6) as usize];
        d.apply(k, signal).expect("apply");
        log.append_step(d.applied(), k, signal, d.theta())
            .expect("append");
    }
    log.flush().expect("flush");
    drop(log);
    // Whole θ rows.
    let whole = dir.path().join("whole.log");
    let mut log = ReplayLog::create(&whole, &names).expect("a format-2 log");
    for k in 1..=6u64 {
        log.append_theta(k, &[k as f64 / 3.0, -2.5, 1e3 + k as f64, 0.0])
            .expect("append");
    }
    drop(log);
    vec![
        head(legacy, 12),
        classic,
        std::fs::read(&steps).expect("read"),
        std::fs::read(&whole).expect("read"),
    ]
}

/// `n` variables `v0`, `v1`, ... as a variables file says them.
fn fuzz_vars(n: usize) -> Vec<crate::vars::Variable> {
    let text: String = (0..n)
        .map(|i| format!("v{i},{i},-50,50,2,0.002,1\n"))
        .collect();
    crate::vars::parse(&text, Path::new("fuzz.var")).expect("variables")
}

pub fn checkpoints() -> Vec<Vec<u8>> {
    use crate::spsa::Schedule;
    use crate::tuner::RunState;
    use crate::tuner::checkpoint::{Parts, render, render_with};
    let vars = fuzz_vars(3);
    let schedule = Schedule {
        iterations: 500,
        a: 50.0,
        alpha: 0.602,
        gamma: 0.101,
    };
    let mut state = RunState::fresh(
        u64::MAX,
        vars.iter().map(|v| v.start).collect(),
        &schedule,
        2,
    );
    state.applied = 12;
    state.next_fresh = 15;
    state.missing = vec![13];
    state.theta = vec![0.5, 1.25, -3.0];
    state.holdout = Some(0.2);
    state.held = vec!["v1".into()];
    state.outputs = [("logs/x y.pgn".to_string(), 1234)].into();
    let mut parts = Parts::default();
    let adam: std::collections::BTreeMap<&str, Vec<f64>> =
        [("m", vec![0.1, 0.2]), ("v", vec![0.3, 0.4])].into();
    parts.set("adam", &adam).expect("a part");
    let plain = render(&state, &vars).expect("render");
    let mut seeds = vec![
        include_bytes!("../../tests/legacy_format/legacy.checkpoint.var").to_vec(),
        plain.clone().into_bytes(),
        render_with(&state, &parts, &vars)
            .expect("render")
            .into_bytes(),
    ];
    seeds.extend(damaged(&plain));
    seeds
}

/// The damaged checkpoints of issue 67, each refused with exit 1 before it (the file not named
/// for the last two): a byte that is not UTF-8 in the state, a field left out, an array that
/// lost a comma.
fn damaged(checkpoint: &str) -> Vec<Vec<u8>> {
    let mut invalid = checkpoint.as_bytes().to_vec();
    let at = checkpoint.find("#: theta").expect("θ in the state") + 3;
    invalid[at] = 0xff;
    let no_applied: String = checkpoint
        .lines()
        .filter(|l| !l.starts_with("#: applied"))
        .flat_map(|l| [l, "\n"])
        .collect();
    let no_comma = checkpoint.replacen("0.5, ", "0.5 ", 1);
    assert_ne!(no_comma, checkpoint, "θ's first value");
    vec![invalid, no_applied.into_bytes(), no_comma.into_bytes()]
}

/// The variables that follow the state in the `checkpoint-state` target: the three of
/// [`checkpoints`], θ in the start column.
pub const CHECKPOINT_VARS: &[u8] =
    b"v0,0.5,-50,50,2,0.002,1\nv1,1.25,-50,50,2,0.002,1\nv2,-3,-50,50,2,0.002,1\n";

/// The state of [`checkpoints`] as the TOML of its `#:` lines, damaged ones included.
pub fn checkpoint_states() -> Vec<Vec<u8>> {
    checkpoints()
        .iter()
        .skip(1)
        .map(|c| {
            c.split_inclusive(|b| *b == b'\n')
                .filter_map(|l| l.strip_prefix(b"#: "))
                .flatten()
                .copied()
                .collect()
        })
        .collect()
}

pub fn tracks() -> Vec<Vec<u8>> {
    use crate::spsa::track::{CSV_HEADER, Point};
    use crate::spsa::unit::Against;
    let mut text = CSV_HEADER.to_string();
    text += &Point::measured(0, 0, Against::Start, [0; 5]).csv_row();
    text += &Point::measured(1, 40, Against::Start, [0, 1, 4, 3, 2]).csv_row();
    text += &Point::measured(1, 40, Against::Defaults, [2, 3, 9, 1, 0]).csv_row();
    // A file written before 2026-12: θ in every row, the header naming the variables.
    let older = "point,iteration,against,pairs,p0,p1,p2,p3,p4,elo,low,high,x,y \"z\"\n\
                 1,40,start,10,0,1,4,3,2,35.22,-60.13,131.65,1.25,-7\n";
    vec![text.into_bytes(), older.as_bytes().to_vec()]
}

/// Three positions of the repository's coefficient file, in either form.
pub fn coefficient_seed(binary: bool) -> Vec<u8> {
    let all = crate::coefficients::read_binary(
        &include_bytes!("../../data/sf_low_valid.coefb")[..],
        Path::new("sf_low_valid.coefb"),
    )
    .expect("the repository's coefficient file");
    let some = all.select(&[0, 1, 2]);
    let mut out = Vec::new();
    if binary {
        crate::coefficients::write_binary(&some, &mut out).expect("write");
    } else {
        crate::coefficients::write_text(&some, &mut out).expect("write");
    }
    out
}

pub fn match_records() -> Vec<Vec<u8>> {
    use crate::matchrun::record::MatchRecord;
    let plain = MatchRecord::start(
        "spsa match",
        ["sparring <i>x</i>".into(), "sparring".into()],
        ["PawnValue=120,KnightValue=310".into(), "defaults".into()],
        "nodes=5000".into(),
        "nodes=5000, seed 9, book openings/balanced_6ply.epd".into(),
        400,
        None,
    );
    let sprt = crate::stats::sprt::Sprt::parse("0,5").expect("an SPRT");
    let mut tested = MatchRecord::start(
        "spsa verify x.toml",
        ["A".into(), "B".into()],
        ["defaults".into(), "defaults".into()],
        "10+0.1".into(),
        "10+0.1, seed 1, book openings/x.epd".into(),
        1000,
        Some(&sprt),
    );
    tested.pairs_played = 20;
    tested.wins = 15;
    tested.draws = 10;
    tested.losses = 15;
    tested.pentanomial = [2, 4, 8, 4, 2];
    tested.elo = Some(0.0);
    vec![
        serde_json::to_vec_pretty(&plain).expect("JSON"),
        serde_json::to_vec(&tested).expect("JSON"),
    ]
}
