//! `spsa init --engine PATH [--option NAME ...] -o VARS.var`: a variables file from the spin
//! options an engine declares, so a new tune starts from one command.
//!
//! Each chosen spin option becomes a row: start = its default, bounds = its range, and the
//! gains by the rule engine authors paste into fishtest and OpenBench today: c_end = (max − min)/20
//! but at least [`C_END_MIN`] (a spin option is an integer, and a smaller probe rounds to no probe
//! at all; OpenBench's lines keep the same floor), and R_end = 0.002. simul_elo is 0 (unknown): fill it in
//! (the Elo lost at ±100 from the best value, a guess is fine) and `spsa plan` chooses better
//! gains. Without --option, every spin option is taken except the ones that steer the engine
//! rather than its play ([`is_engine_control`]).

use crate::engine::options::find_option;
use crate::engine::{OptionKind, UciOption};
use crate::error::UserError;
use crate::vars::{self, Variable};

/// The TUNE rule: c_end is this fraction of the range.
pub const C_END_FRACTION_OF_RANGE: f64 = 1.0 / 20.0;
/// The smallest c_end the rule gives: half a unit, so an integer option's probe is not rounded away.
pub const C_END_MIN: f64 = 0.5;
/// The TUNE rule's R_end.
pub const R_END: f64 = 0.002;

/// Words in option names that mark engine controls (case-insensitive), skipped unless named.
const CONTROL_WORDS: [&str; 12] = [
    "hash",
    "thread",
    "cache",
    "multipv",
    "overhead",
    "skill level",
    "search time",
    "search depth",
    "thinking time",
    "slow mover",
    "nodestime",
    "contempt",
];

/// Whether an option steers the engine (memory, threads, output, time use, strength limits)
/// rather than how it plays: tuning those is not what a variables file is for. Underscores and
/// hyphens count as spaces, so Patricia's `Skill_Level` is Stockfish's `Skill Level`.
pub fn is_engine_control(name: &str) -> bool {
    let lower = name.to_ascii_lowercase().replace(['_', '-'], " ");
    lower.starts_with("uci ")
        || lower.starts_with("syzygy")
        || CONTROL_WORDS.iter().any(|w| lower.contains(w))
}

/// One spin option as a variable, by the TUNE rule; `None` when it has no usable range.
fn variable_of(option: &UciOption) -> Option<Variable> {
    let OptionKind::Spin { default, min, max } = &option.kind else {
        return None;
    };
    let (min, max) = (((*min)?) as f64, ((*max)?) as f64);
    if max <= min {
        return None;
    }
    let start = default
        .map_or(0.5 * (min + max), |d| d as f64)
        .clamp(min, max);
    Some(Variable {
        name: option.name.clone(),
        start,
        min,
        max,
        c_end: ((max - min) * C_END_FRACTION_OF_RANGE).max(C_END_MIN),
        r_end: R_END,
        simul_elo: 0.0,
    })
}

/// The variables for these declared options: the named ones (each must be a spin option with
/// a range), or every non-control spin option. Also returns the names skipped as controls.
pub fn select(
    engine: &str,
    declared: &[UciOption],
    wanted: &[String],
) -> Result<(Vec<Variable>, Vec<String>), UserError> {
    if wanted.is_empty() {
        let mut skipped = Vec::new();
        let mut vars = Vec::new();
        for o in declared {
            if !matches!(o.kind, OptionKind::Spin { .. }) {
                continue;
            }
            if is_engine_control(&o.name) {
                skipped.push(o.name.clone());
            } else if let Some(v) = variable_of(o) {
                vars.push(v);
            } else {
                skipped.push(o.name.clone());
            }
        }
        if vars.is_empty() {
            return Err(UserError(format!(
                "{engine}: no spin option to tune (skipped as engine controls or without a range: {})",
                if skipped.is_empty() {
                    "none".to_string()
                } else {
                    skipped.join(", ")
                }
            )));
        }
        return Ok((vars, skipped));
    }
    let mut vars: Vec<Variable> = Vec::new();
    for name in wanted {
        let Some(o) = find_option(declared, name) else {
            return Err(UserError(format!(
                "--option `{name}`: {engine} declares no such option; its options:\n{}",
                crate::engine::options::describe_options(declared)
            )));
        };
        let Some(v) = variable_of(o) else {
            return Err(UserError(format!(
                "--option `{name}`: {o} is not a spin option with min < max, so it cannot be tuned"
            )));
        };
        if vars.iter().any(|x| x.name == v.name) {
            return Err(UserError(format!("--option `{name}` is given twice")));
        }
        vars.push(v);
    }
    Ok((vars, Vec::new()))
}

/// The file text: a comment naming the engine and the rule, then the variables CSV.
pub fn file_text(engine: &str, vars: &[Variable]) -> String {
    let start: Vec<f64> = vars.iter().map(|v| v.start).collect();
    format!(
        "# spsa init --engine {engine}: start = default, bounds = the option's range,\n\
         # c_end = (max - min)/20 but at least 0.5, and R_end = 0.002 (fishtest's and OpenBench's rule).\n\
         # simul_elo 0 = unknown: set it (Elo lost at +-100 from the best value) and run `spsa plan`.\n{}",
        vars::to_csv(vars, &start)
    )
}

/// How long each move of a generated config's games may take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    Depth(u32),
    Nodes(u64),
    /// Base and increment per game, in milliseconds.
    Clock {
        base_ms: u64,
        inc_ms: u64,
    },
}

/// What `spsa init --config` writes into a ready tune's config.
pub struct TuneConfig<'a> {
    /// The engine's path as the config names it (absolute, so the config works from anywhere).
    pub engine: &'a str,
    /// The engine's command-line arguments (`spsa init --arg`): the ones it declared its
    /// options under, so the tune starts it the same way.
    pub args: &'a [String],
    /// The options every game sets: Threads 1, Hash 16, Ponder and OwnBook off, where declared.
    pub fixed: Vec<(String, String)>,
    /// Paths relative to the config's folder.
    pub variables: &'a str,
    pub log: &'a str,
    pub book: &'a str,
    pub limit: Limit,
    pub concurrency: usize,
    pub iterations: u64,
}

/// The options a tune fixes rather than tunes, with the values to send: one thread (a search's
/// nodes must not depend on a race), a small hash, no pondering, no own book (the book is ours).
pub fn fixed_options(declared: &[UciOption]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let named = |want: &str| declared.iter().find(|o| o.name.eq_ignore_ascii_case(want));
    // `Threads`, Toga's `Number of Threads`: the shortest such name, not Glaurung's `Maximum
    // Number of Threads per Split Point`.
    if let Some(o) = declared
        .iter()
        .filter(|o| o.name.to_ascii_lowercase().contains("thread"))
        .filter(|o| matches!(o.kind, OptionKind::Spin { .. }))
        .min_by_key(|o| o.name.len())
    {
        out.push((o.name.clone(), "1".into()));
    }
    if let Some(o) = named("Hash")
        && let OptionKind::Spin { min, max, .. } = o.kind
    {
        let hash = 16.clamp(min.unwrap_or(1), max.unwrap_or(i64::MAX));
        out.push((o.name.clone(), hash.to_string()));
    }
    for name in ["Ponder", "OwnBook"] {
        if let Some(o) = named(name).filter(|o| matches!(o.kind, OptionKind::Check { .. })) {
            out.push((o.name.clone(), "false".into()));
        }
    }
    out
}

/// A TOML string, quoted and escaped.
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The text of a ready tune's config, every key commented (docs/files.md has the rest).
pub fn config_text(c: &TuneConfig<'_>) -> String {
    let options: String = c
        .fixed
        .iter()
        .map(|(name, value)| {
            let value = match value.as_str() {
                "true" | "false" => value.clone(),
                v if v.parse::<i64>().is_ok() => value.clone(),
                v => toml_str(v),
            };
            format!("{} = {value}\n", toml_str(name))
        })
        .collect();
    let limit = match c.limit {
        Limit::Depth(d) => {
            format!(
                "depth = {d}                         # each move searched to this depth (load-proof)\n"
            )
        }
        Limit::Nodes(n) => format!(
            "nodes = {n}                     # each move searched this many nodes (some engines ignore it)\n"
        ),
        Limit::Clock { base_ms, inc_ms } => format!(
            "base_time_ms = {base_ms}               # a clock per game: base time ...\n\
             inc_time_ms = {inc_ms}                 # ... and increment per move, in ms\n"
        ),
    };
    let args = if c.args.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = c.args.iter().map(|a| toml_str(a)).collect();
        format!(
            "args = [{}]   # as `spsa init --arg` gave them\n",
            list.join(", ")
        )
    };
    let a = (c.iterations / 10).max(1);
    format!(
        "# A tune of {engine}'s spin options, written by `spsa init --config`.\n\
         # Start it with `spsa run THIS_FILE`; watch it with `spsa report` (docs/tuning.md).\n\
         variables = {vars}   # the variables: start, bounds, c_end, R_end (docs/files.md)\n\
         log = {log}          # the θ log; its checkpoint, PGN and verdict go beside it\n\
         iterations = {n}                 # game pairs to play (one SPSA iteration each)\n\
         A = {a}                           # the step size's stability constant, about N/10\n\
         alpha = 0.602                     # how fast the step size shrinks\n\
         gamma = 0.101                     # how fast the perturbation shrinks\n\
         concurrency = {conc}                   # game pairs at once: this machine's cores\n\
         \n\
         [engine1]                         # the engine; θ+ and θ− both play it\n\
         command = {engine}\n\
         {args}\
         [engine1.options]                 # sent once after the handshake, never tuned\n\
         {options}\
         \n\
         [games]\n\
         book = {book}   # openings: 20% held out for [verify], the rest tuned on\n\
         {limit}\
         max_plies = 400                   # a draw after this many plies\n\
         bind_cores = true                 # each game's engines on a core of their own (false: where Linux puts them)\n\
         \n\
         [adjudication]                    # end decided games early, by both engines' scores\n\
         win_score_limit = 600             # a win when the mover reports >= +600 cp ...\n\
         win_move_limit = 5                # ... for this many moves in a row\n\
         draw_score_limit = 10             # a draw when both report within ±10 cp ...\n\
         draw_move_limit = 10              # ... for this many moves in a row ...\n\
         draw_min_move = 30                # ... after move 30\n\
         \n\
         [verify]                          # when the tune ends: tuned values against the start\n\
         sprt = \"0,5\"                      # SPRT: H0 Elo <= 0 against H1 Elo >= 5 ...\n\
         pairs = 2000                      # ... stopping at this many pairs if undecided\n\
         against = \"start\"                 # or \"defaults\": the engine's own values\n\
         \n\
         [track]                           # while it tunes: θ against the start on held-out openings,\n\
         share = 0.1                       # ... costing 10% of the games (the tune runs ~10% slower),\n\
         pairs = 32                        # ... this many pairs a point; it shows \"gained so far\"\n",
        engine = toml_str(c.engine),
        vars = toml_str(c.variables),
        log = toml_str(c.log),
        n = c.iterations,
        conc = c.concurrency,
        book = toml_str(c.book),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::options::parse_option_line;

    fn declared() -> Vec<UciOption> {
        [
            "option name Hash type spin default 16 min 1 max 1024",
            "option name Threads type spin default 1 min 1 max 512",
            "option name Knight Value type spin default 320 min 0 max 1200",
            "option name Ponder type check default false",
            "option name UCI_Elo type spin default 1500 min 1320 max 3190",
            "option name Tempo type spin default 10 min 0 max 50",
            "option name Style type combo default Normal var Solid var Normal",
            "option name Skill_Level type spin default 21 min 1 max 21",
            "option name NMPBase type spin default 4 min 1 max 5",
        ]
        .iter()
        .map(|l| parse_option_line(l).unwrap())
        .collect()
    }

    #[test]
    fn every_play_spin_by_the_tune_rule() {
        let (vars, skipped) = select("e", &declared(), &[]).unwrap();
        assert_eq!(skipped, ["Hash", "Threads", "UCI_Elo", "Skill_Level"]);
        assert_eq!(vars.len(), 3);
        assert_eq!(
            vars[0],
            Variable {
                name: "Knight Value".into(),
                start: 320.0,
                min: 0.0,
                max: 1200.0,
                c_end: 60.0,
                r_end: 0.002,
                simul_elo: 0.0,
            }
        );
        assert_eq!(vars[1].c_end, 2.5);
        assert_eq!(
            (vars[2].name.as_str(), vars[2].c_end),
            ("NMPBase", 0.5),
            "a range of 4 gives 0.2 by the fraction; the floor keeps half a unit"
        );
        let text = file_text("e", &vars);
        let back = vars::parse(&text, std::path::Path::new("x.var")).unwrap();
        assert_eq!(back, vars, "the file loads back as the same variables");
    }

    #[test]
    fn named_options_must_be_tunable_spins() {
        let (vars, _) = select("e", &declared(), &["knight  value".into(), "Hash".into()]).unwrap();
        assert_eq!(vars[0].name, "Knight Value");
        assert_eq!(vars[1].name, "Hash", "a named control is taken");
        for (wanted, msg) in [
            ("Nope", "--option `Nope`: e declares no such option"),
            ("Ponder", "is not a spin option"),
            ("Style", "is not a spin option"),
        ] {
            let err = select("e", &declared(), &[wanted.into()]).unwrap_err();
            assert!(err.0.contains(msg), "{wanted}: {err}");
        }
        let err = select("e", &declared(), &["Tempo".into(), "tempo".into()]).unwrap_err();
        assert!(err.0.contains("given twice"), "{err}");
        let only_controls: Vec<UciOption> = declared()[..2].to_vec();
        let err = select("e", &only_controls, &[]).unwrap_err();
        assert!(err.0.contains("no spin option to tune"), "{err}");
    }

    #[test]
    fn fixed_options_pick_the_engines_own_controls() {
        let declared: Vec<UciOption> = [
            "option name Maximum Number of Threads per Split Point type spin default 5 min 4 max 8",
            "option name Threads type spin default 1 min 1 max 8",
            "option name Hash type spin default 32 min 4 max 4096",
            "option name Ponder type check default true",
            "option name OwnBook type check default true",
            "option name Knight Value type spin default 320 min 0 max 1200",
        ]
        .iter()
        .map(|l| parse_option_line(l).unwrap())
        .collect();
        let fixed = fixed_options(&declared);
        let want = [
            ("Threads", "1"),
            ("Hash", "16"),
            ("Ponder", "false"),
            ("OwnBook", "false"),
        ];
        assert_eq!(fixed, want.map(|(n, v)| (n.to_string(), v.to_string())));
        // A hash whose range does not reach 16 is clamped into it; no such option, none sent.
        let small =
            [parse_option_line("option name Hash type spin default 1 min 1 max 8").unwrap()];
        assert_eq!(
            fixed_options(&small),
            [("Hash".to_string(), "8".to_string())]
        );
        assert!(fixed_options(&[]).is_empty());
    }
}
