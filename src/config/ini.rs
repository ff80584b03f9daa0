//! The classic INI config, exactly as users of the original tool have it:
//!
//! ```ini
//! [Main]
//! Simulate = 1
//! Variables = ../vars/simul_1var.var
//! Log = ../logs/simul_1var.log
//! GameLog = ../logs/game_$THREAD.log
//! Iterations = 50000
//! A = 5000
//! Gamma = 0.101
//! Alpha = 0.602
//!
//! [Engine]          ; required only when Simulate = 0
//! Engine1 = ../engines/stockfish
//! Engine2 = ../engines/stockfish
//! EPDBook = ../openings/book.epd
//! BaseTime = 1000   ; milliseconds
//! IncTime = 10      ; milliseconds
//! TimeMargin = 200  ; optional: clock overrun allowed before a time forfeit, ms (default 50)
//! Concurrency = 2
//! DrawScoreLimit = 10
//! DrawMoveLimit = 10
//! WinScoreLimit = 600
//! WinMoveLimit = 5
//! ```

use std::collections::HashMap;
use std::path::Path;

use super::{
    AdjudicationConfig, Config, ConfigError, EngineConfig, GamesConfig, LimitsConfig, check,
    default_checkpoint, default_log, resolve, resolve_command, resolve_input,
};
use crate::spsa::Schedule;

/// Every key the classic format knows, by section, in its usual spelling.
const KEYS: [(&str, &[&str]); 2] = [
    (
        "Main",
        &[
            "Simulate",
            "Variables",
            "Log",
            "GameLog",
            "Iterations",
            "A",
            "Gamma",
            "Alpha",
        ],
    ),
    (
        "Engine",
        &[
            "Engine1",
            "Engine2",
            "EPDBook",
            "BaseTime",
            "IncTime",
            "TimeMargin",
            "Concurrency",
            "DrawScoreLimit",
            "DrawMoveLimit",
            "WinScoreLimit",
            "WinMoveLimit",
        ],
    ),
];

/// The key/value pairs of the file, by canonical (section, key), with their line numbers.
struct Entries<'a> {
    path: &'a Path,
    values: HashMap<(&'static str, &'static str), (String, usize)>,
}

pub(super) fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let entries = read_entries(text, path)?;
    entries.into_config()
}

fn read_entries<'a>(text: &str, path: &'a Path) -> Result<Entries<'a>, ConfigError> {
    let at = |line: usize, message: String| ConfigError::AtLine {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut section: Option<(&'static str, &'static [&'static str])> = None;
    let mut values = HashMap::new();
    for (index, raw) in crate::textfile::strip_bom_str(text).lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            let name = name
                .strip_suffix(']')
                .ok_or_else(|| at(line_no, format!("malformed section header `{line}`")))?
                .trim();
            section = Some(
                KEYS.iter()
                    .find(|(s, _)| s.eq_ignore_ascii_case(name))
                    .copied()
                    .ok_or_else(|| {
                        at(
                            line_no,
                            format!("unknown section [{name}] (known: [Main], [Engine])"),
                        )
                    })?,
            );
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| at(line_no, format!("expected `Key = value`, found `{line}`")))?;
        let (key, value) = (key.trim(), strip_comment(value.trim()));
        let (section_name, known) =
            section.ok_or_else(|| at(line_no, format!("key `{key}` before any [section]")))?;
        let canonical = known
            .iter()
            .find(|k| k.eq_ignore_ascii_case(key))
            .ok_or_else(|| {
                at(
                    line_no,
                    format!(
                        "unknown key `{key}` in [{section_name}] (known: {})",
                        known.join(", ")
                    ),
                )
            })?;
        if values
            .insert((section_name, *canonical), (value.to_string(), line_no))
            .is_some()
        {
            return Err(at(
                line_no,
                format!("[{section_name}] {canonical} is given twice"),
            ));
        }
    }
    Ok(Entries { path, values })
}

/// Drop a trailing ` ; comment` or ` # comment` (only after white space, so paths keep `#`).
fn strip_comment(value: &str) -> &str {
    let cut = value
        .char_indices()
        .find(|&(i, c)| {
            (c == ';' || c == '#') && i > 0 && value[..i].ends_with(char::is_whitespace)
        })
        .map(|(i, _)| i)
        .unwrap_or(value.len());
    value[..cut].trim_end()
}

impl Entries<'_> {
    fn error(&self, line: usize, section: &str, key: &str, message: String) -> ConfigError {
        ConfigError::AtLine {
            path: self.path.to_path_buf(),
            line,
            message: format!("[{section}] {key}: {message}"),
        }
    }

    fn get(&self, section: &'static str, key: &'static str) -> Option<&(String, usize)> {
        self.values.get(&(section, key))
    }

    fn required(
        &self,
        section: &'static str,
        key: &'static str,
        why: &str,
    ) -> Result<&(String, usize), ConfigError> {
        self.get(section, key).ok_or_else(|| ConfigError::InFile {
            path: self.path.to_path_buf(),
            message: format!("[{section}] is missing required key `{key}`{why}"),
        })
    }

    /// Parse a present key with `parse`, then `validate` it.
    fn value<T: std::str::FromStr, U>(
        &self,
        section: &'static str,
        key: &'static str,
        what: &str,
        validate: impl Fn(T) -> Result<U, String>,
    ) -> Result<Option<U>, ConfigError> {
        let Some((raw, line)) = self.get(section, key) else {
            return Ok(None);
        };
        let parsed = raw
            .parse::<T>()
            .map_err(|_| self.error(*line, section, key, format!("`{raw}` is not {what}")))?;
        validate(parsed)
            .map(Some)
            .map_err(|m| self.error(*line, section, key, m))
    }

    /// A key that must be present, parsed and validated.
    fn required_value<T: std::str::FromStr, U: Default>(
        &self,
        section: &'static str,
        key: &'static str,
        what: &str,
        validate: impl Fn(T) -> Result<U, String>,
    ) -> Result<U, ConfigError> {
        self.required(section, key, "")?;
        Ok(self
            .value(section, key, what, validate)?
            .unwrap_or_default())
    }

    fn into_config(self) -> Result<Config, ConfigError> {
        let path = self.path;
        let simulate = self
            .value("Main", "Simulate", "0 or 1", |v: u8| match v {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(format!("must be 0 or 1, not {v}")),
            })?
            .ok_or_else(|| ConfigError::InFile {
                path: path.to_path_buf(),
                message: "[Main] is missing required key `Simulate`".into(),
            })?;
        let variables = resolve_input(path, &self.required("Main", "Variables", "")?.0);
        let log = self
            .get("Main", "Log")
            .map(|(v, _)| resolve(path, v))
            .unwrap_or_else(|| default_log(path));
        let game_log = self.get("Main", "GameLog").map(|(v, _)| resolve(path, v));
        let schedule = Schedule {
            iterations: self.required_value(
                "Main",
                "Iterations",
                "a whole number",
                check::iterations,
            )?,
            a: self.required_value("Main", "A", "a number", check::non_negative)?,
            gamma: self.required_value("Main", "Gamma", "a number", check::non_negative)?,
            alpha: self.required_value("Main", "Alpha", "a number", check::non_negative)?,
        };
        let concurrency = self
            .value(
                "Engine",
                "Concurrency",
                "a whole number",
                check::concurrency,
            )?
            .unwrap_or(1);
        let games = if simulate && self.get("Engine", "Engine1").is_none() {
            None
        } else {
            Some(self.games()?)
        };
        Ok(Config {
            path: path.to_path_buf(),
            simulate,
            variables,
            checkpoint: default_checkpoint(&log),
            log,
            game_log,
            schedule,
            concurrency,
            pairs_per_iteration: 1,
            seed: None,
            checkpoint_interval: None,
            draw_rate: 0.0,
            pentanomial: None,
            games,
            positions: None,
            database: None,
            throughput: None,
            option_origins: Vec::new(),
            verify: Vec::new(),
            track: None,
        })
    }

    fn games(&self) -> Result<GamesConfig, ConfigError> {
        let why = " (needed when Simulate = 0)";
        let engine = |key: &'static str| -> Result<EngineConfig, ConfigError> {
            Ok(EngineConfig {
                command: resolve_command(self.path, &self.required("Engine", key, why)?.0),
                args: Vec::new(),
                workdir: None,
                options: Vec::new(),
                files: Vec::new(),
                source: None,
            })
        };
        let ms = |key: &'static str| -> Result<Option<u64>, ConfigError> {
            Ok(self
                .value(
                    "Engine",
                    key,
                    "a number of milliseconds",
                    check::non_negative,
                )?
                .map(|v| v.round() as u64))
        };
        let engine1 = engine("Engine1")?;
        let engine2 = engine("Engine2")?;
        let book = resolve_input(self.path, &self.required("Engine", "EPDBook", why)?.0);
        self.required("Engine", "BaseTime", why)?;
        let base_time_ms = ms("BaseTime")?;
        if let (Some(t), Some((_, line))) = (base_time_ms, self.get("Engine", "BaseTime"))
            && t < 100
        {
            tracing::warn!(
                "{}:{line}: BaseTime = {t} is in milliseconds; that is very short",
                self.path.display()
            );
        }
        let score = |key: &'static str| -> Result<i32, ConfigError> {
            Ok(self
                .value("Engine", key, "a whole number of centipawns", |v: i32| {
                    if v >= 0 {
                        Ok(v)
                    } else {
                        Err(format!("must be >= 0, not {v}"))
                    }
                })?
                .unwrap_or(0))
        };
        let moves = |key: &'static str| -> Result<u32, ConfigError> {
            Ok(self
                .value("Engine", key, "a whole number of moves", |v: u32| {
                    Ok::<_, String>(v)
                })?
                .unwrap_or(0))
        };
        let defaults = GamesConfig::with_engines(engine1, engine2);
        Ok(GamesConfig {
            book: Some(book),
            limits: LimitsConfig {
                base_time_ms,
                inc_time_ms: ms("IncTime")?.or(Some(0)),
                time_margin_ms: ms("TimeMargin")?.unwrap_or(defaults.limits.time_margin_ms),
                ..defaults.limits
            },
            adjudication: AdjudicationConfig {
                draw_score_limit: score("DrawScoreLimit")?,
                draw_move_limit: moves("DrawMoveLimit")?,
                win_score_limit: score("WinScoreLimit")?,
                win_move_limit: moves("WinMoveLimit")?,
                ..AdjudicationConfig::default()
            },
            ..defaults
        })
    }
}
