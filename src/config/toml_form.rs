//! The TOML config: the classic settings under modern names, plus the settings the INI cannot
//! express. The schema is documented in docs/files.md; unknown keys are errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::{
    AdjudicationConfig, Against, Config, ConfigError, EngineConfig, GamesConfig, LimitsConfig,
    OptionOrigin, VerifyConfig, VerifyLimit, check, default_checkpoint, default_log, resolve,
    resolve_command, resolve_input,
};
use crate::spsa::Schedule;
use crate::spsa::rounding::RoundingMode;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    simulate: bool,
    // The tuning keys are required by `parse` and optional for `parse_games` (`spsa match`).
    variables: Option<String>,
    log: Option<String>,
    checkpoint: Option<String>,
    game_log: Option<String>,
    iterations: Option<u64>,
    #[serde(rename = "A", alias = "a")]
    a: Option<f64>,
    gamma: Option<f64>,
    alpha: Option<f64>,
    #[serde(default = "one")]
    concurrency: u64,
    seed: Option<u64>,
    database: Option<String>,
    throughput: Option<f64>,
    #[serde(default = "one")]
    pairs_per_iteration: u64,
    checkpoint_seconds: Option<f64>,
    #[serde(default)]
    simulation: Simulation,
    engine1: Option<Engine>,
    engine2: Option<Engine>,
    #[serde(default)]
    games: Games,
    #[serde(default)]
    adjudication: Adjudication,
    objective: Option<String>,
    positions: Option<super::positions::PositionsTable>,
    verify: Option<toml::Spanned<VerifyTables>>,
    track: Option<toml::Spanned<Track>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Track {
    share: Option<toml::Spanned<f64>>,
    against: Option<toml::Spanned<Vec<String>>>,
    pairs: Option<toml::Spanned<i64>>,
    stop_after_flat: Option<toml::Spanned<i64>>,
    stop_when_lower_above: Option<toml::Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Verify {
    pairs: Option<u64>,
    sprt: Option<String>,
    against: Option<String>,
    /// A clock for the verification instead of the tune's limit (a tune at fixed nodes
    /// verified at a short clock).
    base_time_ms: Option<u64>,
    inc_time_ms: Option<u64>,
    /// A fixed node count or depth for the step instead of the tune's limit.
    nodes: Option<u64>,
    depth: Option<u32>,
    /// A fixed-pairs step fails when its Elo interval lies wholly below this.
    fail_below: Option<f64>,
}

/// `[verify]` (one step) or `[[verify]]` (a ladder: each table a step, played in order).
enum VerifyTables {
    One(Verify),
    Ladder(Vec<toml::Spanned<Verify>>),
}

impl<'de> Deserialize<'de> for VerifyTables {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Tables;
        impl<'de> serde::de::Visitor<'de> for Tables {
            type Value = VerifyTables;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a [verify] table or [[verify]] tables")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<VerifyTables, A::Error> {
                Verify::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(VerifyTables::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<VerifyTables, A::Error> {
                Vec::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(VerifyTables::Ladder)
            }
        }
        d.deserialize_any(Tables)
    }
}

fn one() -> u64 {
    1
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Simulation {
    #[serde(default)]
    draw_rate: f64,
    /// A pair's points at equal strength (0, ½, 1, 1½, 2), as counts or probabilities.
    pentanomial: Option<Vec<f64>>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Engine {
    /// The executable; or `source`, to build it.
    command: Option<toml::Spanned<String>>,
    source: Option<toml::Spanned<Source>>,
    #[serde(default)]
    args: Vec<String>,
    workdir: Option<String>,
    /// With their place in the file, for messages and to keep file order.
    #[serde(default)]
    options: BTreeMap<String, toml::Spanned<toml::Value>>,
    /// Options whose value is a file (a network, a book): the path, relative to the config.
    #[serde(default)]
    files: BTreeMap<String, toml::Spanned<String>>,
}

/// `source = { git = "…", commit = "…", build = "…", binary = "…" }`: an engine built from a
/// commit of its repository.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Source {
    git: toml::Spanned<String>,
    commit: toml::Spanned<String>,
    build: toml::Spanned<String>,
    binary: toml::Spanned<String>,
    build_timeout_s: Option<toml::Spanned<f64>>,
}

/// The engine's command, or its source (checked: one of the two; a binary inside the tree).
fn command_or_source(
    e: &Engine,
    table: &str,
    path: &Path,
    text: &str,
) -> Result<(PathBuf, Option<super::EngineSource>), ConfigError> {
    let at = |offset: usize, key: &str, message: String| ConfigError::AtLine {
        path: path.to_path_buf(),
        line: line_of(text, offset),
        message: format!("key `{table}.{key}`: {message}"),
    };
    let s = match (&e.command, &e.source) {
        (Some(c), None) => return Ok((resolve_command(path, c.get_ref()), None)),
        (Some(_), Some(s)) => {
            return Err(at(
                s.span().start,
                "source",
                "an engine is given by `command` or by `source`, not both".into(),
            ));
        }
        (None, None) => {
            return Err(ConfigError::InFile {
                path: path.to_path_buf(),
                message: format!(
                    "missing key `{table}.command` (the engine's executable) or `{table}.source` (its repository, commit, build command and binary)"
                ),
            });
        }
        (None, Some(s)) => s.get_ref(),
    };
    let timeout = match &s.build_timeout_s {
        None => super::EngineSource::DEFAULT_TIMEOUT,
        Some(t) => {
            let v = *t.get_ref();
            if !(v.is_finite() && v > 0.0) {
                return Err(at(
                    t.span().start,
                    "source.build_timeout_s",
                    format!("must be a number of seconds above 0, not {v}"),
                ));
            }
            Duration::from_secs_f64(v)
        }
    };
    let keys = [&s.git, &s.commit, &s.build, &s.binary];
    let span = |key: &str| match key {
        "git" => &s.git,
        "commit" => &s.commit,
        "build" => &s.build,
        _ => &s.binary,
    };
    // A folder is relative to the config.
    let mut source = super::EngineSource::new(keys.map(|k| k.get_ref().as_str()), timeout, |git| {
        resolve(path, git)
    })
    .map_err(|(key, message)| at(span(key).span().start, &format!("source.{key}"), message))?;
    source.table = table.to_string();
    source.lines = super::SourceLines {
        git: line_of(text, s.git.span().start),
        commit: line_of(text, s.commit.span().start),
        build: line_of(text, s.build.span().start),
        binary: line_of(text, s.binary.span().start),
    };
    // Until it is built, the command is the binary's path in the tree (its file name is the
    // engine's name, as `--engine NAME=PATH` names it).
    Ok((PathBuf::from(s.binary.get_ref()), Some(source)))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Games {
    book: Option<String>,
    #[serde(default = "random")]
    book_order: String,
    book_plies: Option<u32>,
    variant: Option<String>,
    holdout: Option<f64>,
    verify_book: Option<String>,
    base_time_ms: Option<u64>,
    inc_time_ms: Option<u64>,
    nodes: Option<u64>,
    depth: Option<u32>,
    movetime_ms: Option<u64>,
    nodestime: Option<u64>,
    time_margin_ms: Option<u64>,
    stall_timeout_ms: Option<u64>,
    max_plies: Option<u32>,
    pgn: Option<String>,
    engine_log: Option<String>,
    #[serde(default = "yes")]
    bind_cores: bool,
    #[serde(default)]
    rounding: RoundingMode,
}

fn yes() -> bool {
    true
}

fn random() -> String {
    "random".into()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Adjudication {
    #[serde(default)]
    draw_score_limit: i32,
    #[serde(default)]
    draw_move_limit: u32,
    #[serde(default)]
    draw_min_move: u32,
    #[serde(default)]
    win_score_limit: i32,
    #[serde(default)]
    win_move_limit: u32,
    #[serde(default)]
    both_agree: bool,
    tb_path: Option<String>,
}

/// `adjudication.tb_path`, relative to the config's folder; it must be a folder.
fn tb_path(adj: &Adjudication, config: &Path) -> Result<Option<PathBuf>, ConfigError> {
    let Some(value) = &adj.tb_path else {
        return Ok(None);
    };
    let dir = resolve(config, value);
    if !dir.is_dir() {
        return Err(ConfigError::InFile {
            path: config.to_path_buf(),
            message: format!(
                "key `adjudication.tb_path`: {}: not a folder of Syzygy tables",
                dir.display()
            ),
        });
    }
    Ok(Some(dir))
}

pub(super) fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    parse_with(text, path, true)
}

/// A config read only for its engines and games (`spsa match`): the tuning keys (`variables`,
/// `iterations`, `A`, `gamma`, `alpha`) may be left out and are then placeholders.
pub(super) fn parse_games(text: &str, path: &Path) -> Result<Config, ConfigError> {
    parse_with(text, path, false)
}

fn parse_with(text: &str, path: &Path, tuning: bool) -> Result<Config, ConfigError> {
    let in_file = |message: String| ConfigError::InFile {
        path: path.to_path_buf(),
        message,
    };
    let text = crate::textfile::strip_bom_str(text);
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let message = e.message().trim().to_string();
        match line {
            Some(line) => ConfigError::AtLine {
                path: path.to_path_buf(),
                line,
                message,
            },
            None => in_file(message),
        }
    })?;
    let required = |name: &str, present: bool| {
        if tuning && !present {
            Err(in_file(format!("missing key `{name}`")))
        } else {
            Ok(())
        }
    };
    required("variables", file.variables.is_some())?;
    let positions = super::positions::build(
        file.objective.as_deref(),
        file.positions.as_ref(),
        file.simulate,
        path,
        text,
    )?;
    // SPSA's schedule keys mean something only to SPSA: the local search and the gradient
    // methods (which count passes and epochs) do without them.
    if positions
        .as_ref()
        .is_none_or(|p| p.method == super::positions::Method::Spsa)
    {
        required("iterations", file.iterations.is_some())?;
        required("A", file.a.is_some())?;
        required("gamma", file.gamma.is_some())?;
        required("alpha", file.alpha.is_some())?;
    }
    let schedule = Schedule {
        iterations: checked(
            path,
            "iterations",
            check::iterations(file.iterations.unwrap_or(1)),
        )?,
        a: checked(path, "A", check::non_negative(file.a.unwrap_or(0.0)))?,
        gamma: checked(
            path,
            "gamma",
            check::non_negative(file.gamma.unwrap_or(0.0)),
        )?,
        alpha: checked(
            path,
            "alpha",
            check::non_negative(file.alpha.unwrap_or(0.0)),
        )?,
    };
    let concurrency = checked(path, "concurrency", check::concurrency(file.concurrency))?;
    let pairs_per_iteration = checked(
        path,
        "pairs_per_iteration",
        check::pairs_per_iteration(file.pairs_per_iteration),
    )?;
    let draw_rate = checked(
        path,
        "simulation.draw_rate",
        check::probability(file.simulation.draw_rate),
    )?;
    let pentanomial = file
        .simulation
        .pentanomial
        .as_deref()
        .map(|p| {
            checked(
                path,
                "simulation.pentanomial",
                check::pentanomial(p, draw_rate),
            )
        })
        .transpose()?;
    let checkpoint_seconds = file
        .checkpoint_seconds
        .map(|s| checked(path, "checkpoint_seconds", check::non_negative(s)))
        .transpose()?;
    let log = file
        .log
        .as_deref()
        .map(|l| resolve(path, l))
        .unwrap_or_else(|| default_log(path));
    let games = match (&file.engine1, file.simulate) {
        (None, true) => None,
        (None, false) => {
            return Err(in_file(
                "missing table [engine1] (needed when simulate = false)".into(),
            ));
        }
        (Some(e1), _) => Some(games(&file, e1, path, text, positions.is_none())?),
    };
    let verify = match file.verify.as_ref() {
        None => Vec::new(),
        Some(tables) => match tables.get_ref() {
            VerifyTables::One(v) => {
                vec![verify(
                    v,
                    tables.span().start,
                    None,
                    games.is_some(),
                    path,
                    text,
                )?]
            }
            VerifyTables::Ladder(steps) if steps.is_empty() => {
                return Err(ConfigError::AtLine {
                    path: path.to_path_buf(),
                    line: line_of(text, tables.span().start),
                    message: "key `verify`: an empty list of steps".into(),
                });
            }
            VerifyTables::Ladder(steps) => steps
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let start = v.span().start;
                    verify(v.get_ref(), start, Some(i + 1), games.is_some(), path, text)
                })
                .collect::<Result<_, _>>()?,
        },
    };
    let track = file
        .track
        .as_ref()
        .map(|t| track(t, &file, games.as_ref(), positions.is_some(), path, text))
        .transpose()?;
    Ok(Config {
        path: path.to_path_buf(),
        simulate: file.simulate,
        variables: resolve_input(path, file.variables.as_deref().unwrap_or("")),
        checkpoint: file
            .checkpoint
            .as_deref()
            .map(|c| resolve(path, c))
            .unwrap_or_else(|| default_checkpoint(&log)),
        log,
        game_log: file.game_log.as_deref().map(|g| resolve(path, g)),
        schedule,
        concurrency,
        pairs_per_iteration,
        seed: file.seed,
        checkpoint_interval: checkpoint_seconds.map(Duration::from_secs_f64),
        draw_rate,
        pentanomial,
        games,
        positions,
        database: file.database.clone(),
        throughput: file
            .throughput
            .map(|p| checked(path, "throughput", check::throughput(p)))
            .transpose()?,
        option_origins: option_origins(&file, text),
        verify,
        track,
    })
}

/// `[track]`, checked at each key's line: the share in (0, 0.5], opponents "start" and
/// "defaults" (the latter needs engines), at least [`crate::stats::MIN_INTERVAL_SAMPLES`] pairs
/// so every point has an interval, and a tune by games or simulated games to measure.
fn track(
    table: &toml::Spanned<Track>,
    file: &File,
    games: Option<&GamesConfig>,
    by_positions: bool,
    path: &Path,
    text: &str,
) -> Result<crate::spsa::track::TrackPlan, ConfigError> {
    use crate::spsa::track::{Against, DEFAULT_PAIRS, StopRule, TrackPlan};
    let at = |span: std::ops::Range<usize>, key: &str, message: String| ConfigError::AtLine {
        path: path.to_path_buf(),
        line: line_of(text, span.start),
        message: format!("key `track.{key}`: {message}"),
    };
    let t = table.get_ref();
    if by_positions {
        return Err(at(
            table.span(),
            "share",
            "the live Elo curve plays games: it needs a tune by games (or a simulated one), not objective = \"positions\"".into(),
        ));
    }
    let engines = games.filter(|_| !file.simulate);
    if let Some(g) = engines
        && (g.book.is_none() || (g.holdout <= 0.0 && g.verify_book.is_none()))
    {
        return Err(at(
            table.span(),
            "share",
            "the live Elo curve measures on openings the tune never plays: give [games] a book with holdout above 0, or a verify_book".into(),
        ));
    }
    let share = match &t.share {
        None => {
            return Err(at(
                table.span(),
                "share",
                "missing (the share of games that measure, for example 0.1)".into(),
            ));
        }
        Some(s) if *s.get_ref() > 0.0 && *s.get_ref() <= 0.5 => *s.get_ref(),
        Some(s) => {
            return Err(at(
                s.span(),
                "share",
                format!(
                    "the share of games that measure must be above 0 and at most 0.5, not {}",
                    s.get_ref()
                ),
            ));
        }
    };
    let against = match &t.against {
        None => vec![Against::Start],
        Some(list) => {
            let mut out: Vec<Against> = Vec::new();
            for name in list.get_ref() {
                let a = Against::parse(name).ok_or_else(|| {
                    at(
                        list.span(),
                        "against",
                        format!("expected \"start\" or \"defaults\", found \"{name}\""),
                    )
                })?;
                if out.contains(&a) {
                    return Err(at(
                        list.span(),
                        "against",
                        format!("\"{name}\" is named twice"),
                    ));
                }
                if a == Against::Defaults && engines.is_none() {
                    return Err(at(
                        list.span(),
                        "against",
                        "\"defaults\" are the engine's own option values: a simulated run has none"
                            .into(),
                    ));
                }
                out.push(a);
            }
            if out.is_empty() {
                return Err(at(
                    list.span(),
                    "against",
                    "name at least one of \"start\" and \"defaults\"".into(),
                ));
            }
            out
        }
    };
    let min = crate::stats::MIN_INTERVAL_SAMPLES;
    let pairs = match &t.pairs {
        None => DEFAULT_PAIRS,
        Some(p) if *p.get_ref() >= min as i64 && *p.get_ref() <= 100_000 => *p.get_ref() as u32,
        Some(p) => {
            return Err(at(
                p.span(),
                "pairs",
                format!(
                    "pairs per measurement must be from {min} (fewer give no interval) to 100000, not {}",
                    p.get_ref()
                ),
            ));
        }
    };
    let after_flat = match &t.stop_after_flat {
        None => None,
        Some(k) if *k.get_ref() >= 1 && *k.get_ref() <= 1000 => Some(*k.get_ref() as u32),
        Some(k) => {
            return Err(at(
                k.span(),
                "stop_after_flat",
                format!(
                    "the number of measurements must be from 1 to 1000, not {}",
                    k.get_ref()
                ),
            ));
        }
    };
    let lower_above = match &t.stop_when_lower_above {
        None => None,
        Some(x) if x.get_ref().is_finite() => Some(*x.get_ref()),
        Some(x) => {
            return Err(at(
                x.span(),
                "stop_when_lower_above",
                format!("must be a finite Elo value, not {}", x.get_ref()),
            ));
        }
    };
    Ok(TrackPlan {
        share,
        against,
        pairs,
        stop: StopRule {
            after_flat,
            lower_above,
        },
    })
}

/// A `[verify]` table or one `[[verify]]` step (`step`: its number), checked at its line: its
/// keys, at most one limit (a clock, `nodes` or `depth`), `fail_below` only without an SPRT,
/// and that there are engines to play it with.
fn verify(
    v: &Verify,
    offset: usize,
    step: Option<usize>,
    has_engines: bool,
    path: &Path,
    text: &str,
) -> Result<VerifyConfig, ConfigError> {
    let at = |message: String| ConfigError::AtLine {
        path: path.to_path_buf(),
        line: line_of(text, offset),
        message: match step {
            Some(k) => format!("[[verify]] step {k}: {message}"),
            None => message,
        },
    };
    if !has_engines {
        return Err(at(
            "[verify] plays games: it needs an [engine1] table (a simulated run has nothing to verify)"
                .into(),
        ));
    }
    if v.pairs == Some(0) {
        return Err(at("key `verify.pairs`: must be at least 1".into()));
    }
    if step.is_some() && v.pairs.is_none() && v.sprt.is_none() {
        return Err(at(
            "a step needs `pairs` (a number of pairs) or `sprt` (a test), or both".into(),
        ));
    }
    if let Some(sprt) = &v.sprt {
        crate::stats::sprt::Sprt::parse(sprt).map_err(|e| at(format!("key `verify.sprt`: {e}")))?;
    }
    let against = match v.against.as_deref() {
        None | Some("start") => Against::Start,
        Some("defaults") => Against::Defaults,
        Some(other) => {
            return Err(at(format!(
                "key `verify.against`: expected \"start\" or \"defaults\", found \"{other}\""
            )));
        }
    };
    let clock = match (v.base_time_ms, v.inc_time_ms) {
        (None, None) => None,
        (Some(0), _) => return Err(at("key `verify.base_time_ms`: must be at least 1".into())),
        (Some(base), inc) => Some((base, inc.unwrap_or(0))),
        (None, Some(_)) => {
            return Err(at(
                "key `verify.inc_time_ms`: needs `verify.base_time_ms` too".into(),
            ));
        }
    };
    let limit = match (clock, v.nodes, v.depth) {
        (None, None, None) => VerifyLimit::Tune,
        (Some((base, inc)), None, None) => VerifyLimit::Clock(base, inc),
        (None, Some(0), None) => return Err(at("key `verify.nodes`: must be at least 1".into())),
        (None, Some(n), None) => VerifyLimit::Nodes(n),
        (None, None, Some(0)) => return Err(at("key `verify.depth`: must be at least 1".into())),
        (None, None, Some(d)) => VerifyLimit::Depth(d),
        _ => {
            return Err(at(
                "one limit per step: a clock (`base_time_ms`, `inc_time_ms`), `nodes` or `depth`, not more"
                    .into(),
            ));
        }
    };
    let fail_below = match (v.fail_below, &v.sprt) {
        (None, _) => 0.0,
        (Some(_), Some(_)) => {
            return Err(at(
                "key `verify.fail_below`: a step with an SPRT passes or fails by its test (H1 or H0), so it takes no `fail_below`"
                    .into(),
            ));
        }
        (Some(x), None) if x.is_finite() => x,
        (Some(x), None) => {
            return Err(at(format!(
                "key `verify.fail_below`: must be a finite Elo value, not {x}"
            )));
        }
    };
    Ok(VerifyConfig {
        pairs: v.pairs,
        sprt: v.sprt.clone(),
        against,
        limit,
        fail_below,
    })
}

/// Where each side's options were set; engine 2 without a table of its own plays engine 1's.
fn option_origins(file: &File, text: &str) -> Vec<OptionOrigin> {
    let engine2 = match &file.engine2 {
        Some(e2) => Some((e2, "engine2")),
        None => file.engine1.as_ref().map(|e1| (e1, "engine1")),
    };
    [
        (1, file.engine1.as_ref().map(|e1| (e1, "engine1"))),
        (2, engine2),
    ]
    .into_iter()
    .filter_map(|(side, engine)| engine.map(|(e, table)| (side, e, table)))
    .flat_map(|(side, e, table)| {
        e.options.iter().map(move |(name, value)| OptionOrigin {
            side,
            table: table.to_string(),
            name: name.clone(),
            line: line_of(text, value.span().start),
        })
    })
    .collect()
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Attach the file and key to a value check's message.
fn checked<T>(path: &Path, name: &str, r: Result<T, String>) -> Result<T, ConfigError> {
    r.map_err(|message| ConfigError::InFile {
        path: path.to_path_buf(),
        message: format!("key `{name}`: {message}"),
    })
}

/// An engine's options by name, with their values as sent.
type Options = Vec<(String, String)>;

/// An engine table's `files`, checked (none also an option; `Config::check_engine_files` looks
/// for the files when a run starts) and
/// added to its options as the file's path; returns the options and the files' option names.
fn engine_files(
    mut options: Options,
    e: &Engine,
    table: &str,
    path: &Path,
    text: &str,
) -> Result<(Options, Vec<String>), ConfigError> {
    let mut spanned: Vec<_> = e.files.iter().collect();
    spanned.sort_by_key(|(_, value)| value.span().start);
    let mut files = Vec::new();
    for (name, value) in spanned {
        let at = |message: String| ConfigError::AtLine {
            path: path.to_path_buf(),
            line: line_of(text, value.span().start),
            message: format!("key `{table}.files.{name}`: {message}"),
        };
        if options.iter().any(|(o, _)| o == name) {
            return Err(at(format!(
                "`{name}` is also set in `{table}.options`; set it in one place"
            )));
        }
        let file = resolve(path, value.get_ref());
        options.push((name.clone(), file.display().to_string()));
        files.push(name.clone());
    }
    Ok((options, files))
}

/// `need_limit`: a tune by games needs a search limit in [games]; a tune from positions does not
/// (its [games] only serves `spsa verify`, whose flags can give the limit).
fn games(
    file: &File,
    engine1: &Engine,
    path: &Path,
    text: &str,
    need_limit: bool,
) -> Result<GamesConfig, ConfigError> {
    let in_file = |message: String| ConfigError::InFile {
        path: path.to_path_buf(),
        message,
    };
    let engine = |e: &Engine, table: &str| -> Result<EngineConfig, ConfigError> {
        let mut spanned: Vec<_> = e.options.iter().collect();
        spanned.sort_by_key(|(_, value)| value.span().start);
        let options = spanned
            .into_iter()
            .map(|(name, value)| {
                let value_text = match value.get_ref() {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::Float(f) => f.to_string(),
                    toml::Value::Boolean(b) => b.to_string(),
                    other => {
                        return Err(ConfigError::AtLine {
                            path: path.to_path_buf(),
                            line: line_of(text, value.span().start),
                            message: format!(
                                "key `{table}.options.{name}`: expected a string, number or boolean, found {}",
                                other.type_str()
                            ),
                        });
                    }
                };
                Ok((name.clone(), value_text))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (options, files) = engine_files(options, e, table, path, text)?;
        let (command, source) = command_or_source(e, table, path, text)?;
        Ok(EngineConfig {
            command,
            args: e.args.clone(),
            workdir: e.workdir.as_deref().map(|w| resolve(path, w)),
            options,
            files,
            source,
        })
    };
    let g = &file.games;
    let book_random = match g.book_order.as_str() {
        // "" is the derived default when the [games] table is absent (a tune from positions).
        "random" | "" => true,
        "sequential" => false,
        other => {
            return Err(in_file(format!(
                "key `games.book_order`: expected \"random\" or \"sequential\", found \"{other}\""
            )));
        }
    };
    let variant = match g.variant.as_deref() {
        None => crate::game::Variant::Auto,
        Some(v) => crate::game::Variant::parse(v).ok_or_else(|| {
            in_file(format!(
                "key `games.variant`: expected \"standard\", \"chess960\" or \"auto\", found \"{v}\""
            ))
        })?,
    };
    let holdout = g.holdout.unwrap_or(crate::game::DEFAULT_HOLDOUT);
    if !crate::game::Holdout::valid_share(holdout) {
        return Err(in_file(format!(
            "key `games.holdout`: the held-out share of the book must be at least 0 and below 1 (0.2 holds out 20%), not {holdout}"
        )));
    }
    let limits = LimitsConfig {
        base_time_ms: g.base_time_ms,
        inc_time_ms: g.inc_time_ms,
        nodes: g.nodes,
        depth: g.depth,
        movetime_ms: g.movetime_ms,
        nodestime: g.nodestime,
        time_margin_ms: g.time_margin_ms.unwrap_or(50),
        stall_timeout_ms: g.stall_timeout_ms.unwrap_or(10_000),
        time_scale: None,
    };
    match limits.nodestime {
        Some(n) if limits.base_time_ms.is_none() => {
            return Err(in_file(format!(
                "key `games.nodestime` ({n}): counts a clock in nodes, so it needs `games.base_time_ms` (+ `inc_time_ms`)"
            )));
        }
        Some(0) => {
            return Err(in_file(
                "key `games.nodestime`: nodes per millisecond must be at least 1 (Stockfish's own value here is about 1,500)".into(),
            ));
        }
        _ => {}
    }
    match limits.chosen().as_slice() {
        [] if !need_limit => {}
        [] => {
            return Err(in_file(
                "[games] needs a search limit: base_time_ms (+ inc_time_ms), nodes, depth or movetime_ms".into(),
            ));
        }
        [_] => {}
        several => {
            let keys: Vec<String> = several.iter().map(|k| format!("`games.{k}`")).collect();
            return Err(in_file(format!(
                "keys {}: a game has one search limit; keep one of them (as `spsa match` takes one of --tc, --nodes, --depth, --movetime)",
                keys.join(" and ")
            )));
        }
    }
    if limits.inc_time_ms.is_some() && limits.base_time_ms.is_none() {
        return Err(in_file(
            "key `games.inc_time_ms`: needs `games.base_time_ms` too".into(),
        ));
    }
    let adj = &file.adjudication;
    for (name, v) in [
        ("draw_score_limit", adj.draw_score_limit),
        ("win_score_limit", adj.win_score_limit),
    ] {
        if v < 0 {
            return Err(in_file(format!(
                "key `adjudication.{name}`: must be >= 0, not {v}"
            )));
        }
    }
    Ok(GamesConfig {
        engine1: engine(engine1, "engine1")?,
        engine2: match &file.engine2 {
            Some(e2) => engine(e2, "engine2")?,
            None => engine(engine1, "engine1")?,
        },
        book: g.book.as_deref().map(|b| resolve_input(path, b)),
        book_random,
        book_plies: g.book_plies,
        variant,
        holdout,
        verify_book: g.verify_book.as_deref().map(|b| resolve_input(path, b)),
        limits,
        adjudication: AdjudicationConfig {
            draw_score_limit: adj.draw_score_limit,
            draw_move_limit: adj.draw_move_limit,
            draw_min_move: adj.draw_min_move,
            win_score_limit: adj.win_score_limit,
            win_move_limit: adj.win_move_limit,
            both_agree: adj.both_agree,
            tb_path: tb_path(adj, path)?,
        },
        max_plies: g.max_plies,
        pgn: g.pgn.as_deref().map(|p| resolve(path, p)),
        engine_log: g.engine_log.as_deref().map(|p| resolve(path, p)),
        bind_cores: g.bind_cores,
        rounding: g.rounding,
    })
}
