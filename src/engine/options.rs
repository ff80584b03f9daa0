//! UCI option declarations (`option name ... type ...`), the values we set, and validation of a
//! configuration's wishes against what an engine declares.
//!
//! Declarations are read with vampirc-uci, which handles every option line of Stockfish 15.1,
//! Toga II 3.0 and Glaurung 2.2 (names with spaces and parentheses, combo values with spaces,
//! empty string defaults); see `tests/engine_vampirc.rs`. A line it cannot read (for example a
//! spin bound longer than 12 digits, which its grammar rejects) falls back to our own reader
//! below, so an odd declaration never costs us the whole option.

use std::collections::HashMap;
use std::fmt;

use vampirc_uci::{UciMessage, UciOptionConfig};

/// The type of a declared option, with its limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Spin {
        default: Option<i64>,
        min: Option<i64>,
        max: Option<i64>,
    },
    Check {
        default: Option<bool>,
    },
    Combo {
        default: Option<String>,
        vars: Vec<String>,
    },
    String {
        default: Option<String>,
    },
    Button,
}

/// One option as the engine declared it during the handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciOption {
    /// The engine's spelling; this is what we send back.
    pub name: String,
    pub kind: OptionKind,
}

impl fmt::Display for UciOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            OptionKind::Spin { default, min, max } => {
                let s = |v: &Option<i64>| v.map_or("?".to_string(), |v| v.to_string());
                write!(
                    f,
                    "{} (spin {}..={}, default {})",
                    self.name,
                    s(min),
                    s(max),
                    s(default)
                )
            }
            OptionKind::Check { default } => match default {
                Some(d) => write!(f, "{} (check, default {d})", self.name),
                None => write!(f, "{} (check)", self.name),
            },
            OptionKind::Combo { vars, .. } => {
                write!(f, "{} (combo: {})", self.name, vars.join(" / "))
            }
            OptionKind::String { .. } => write!(f, "{} (string)", self.name),
            OptionKind::Button => write!(f, "{} (button)", self.name),
        }
    }
}

/// Parse one `option ...` line: vampirc-uci first, our reader if it does not understand it.
/// Returns `None` for lines that are not an option declaration.
pub fn parse_option_line(line: &str) -> Option<UciOption> {
    // vampirc's option grammar reads at most 12 digits of a number and silently drops the rest
    // (`max 99999999999999` becomes 999999999999), so such lines go to our reader. Otherwise it is
    // panic-free on these lines (property-tested below) and only ever sees `option` lines during
    // the handshake, never the hot path.
    if !line.trim_start().starts_with("option") {
        return None;
    }
    let long_number = line.split_ascii_whitespace().any(|t| {
        let d = t.strip_prefix('-').unwrap_or(t);
        d.len() > 12 && d.bytes().all(|b| b.is_ascii_digit())
    });
    if long_number {
        return parse_option_own(line);
    }
    match vampirc_uci::parse_one(line) {
        UciMessage::Option(cfg) => Some(from_vampirc(cfg)),
        _ => parse_option_own(line),
    }
}

fn from_vampirc(cfg: UciOptionConfig) -> UciOption {
    match cfg {
        UciOptionConfig::Spin {
            name,
            default,
            min,
            max,
        } => UciOption {
            name,
            kind: OptionKind::Spin { default, min, max },
        },
        UciOptionConfig::Check { name, default } => UciOption {
            name,
            kind: OptionKind::Check { default },
        },
        UciOptionConfig::Combo { name, default, var } => UciOption {
            name,
            kind: OptionKind::Combo { default, vars: var },
        },
        UciOptionConfig::String { name, default } => UciOption {
            name,
            kind: OptionKind::String { default },
        },
        UciOptionConfig::Button { name } => UciOption {
            name,
            kind: OptionKind::Button,
        },
    }
}

/// Our own reader: `option name <words> type <t> [default <words>] [min N] [max N] [var <words>]*`.
pub fn parse_option_own(line: &str) -> Option<UciOption> {
    let mut toks = line.split_ascii_whitespace();
    if toks.next()? != "option" || toks.next()? != "name" {
        return None;
    }
    let toks: Vec<&str> = toks.collect();
    let type_at = toks.iter().position(|t| *t == "type")?;
    if type_at == 0 {
        return None;
    }
    let name = toks[..type_at].join(" ");
    let ty = *toks.get(type_at + 1)?;
    // Group the remaining tokens by keyword.
    let mut default: Option<Vec<&str>> = None;
    let mut min = None;
    let mut max = None;
    let mut vars: Vec<Vec<&str>> = Vec::new();
    let mut current: Option<&mut Vec<&str>> = None;
    let mut rest = toks[type_at + 2..].iter();
    while let Some(&t) = rest.next() {
        match t {
            "default" => {
                default = Some(Vec::new());
                current = default.as_mut();
            }
            "min" => {
                min = rest.next().and_then(|v| parse_i64_sat(v));
                current = None;
            }
            "max" => {
                max = rest.next().and_then(|v| parse_i64_sat(v));
                current = None;
            }
            "var" => {
                vars.push(Vec::new());
                current = vars.last_mut();
            }
            word => {
                if let Some(c) = current.as_mut() {
                    c.push(word);
                }
            }
        }
    }
    let default = default.map(|d| d.join(" "));
    let kind = match ty {
        "spin" => OptionKind::Spin {
            default: default.as_deref().and_then(parse_i64_sat),
            min,
            max,
        },
        "check" => OptionKind::Check {
            default: default.as_deref().and_then(|d| d.parse().ok()),
        },
        "combo" => OptionKind::Combo {
            default,
            vars: vars.into_iter().map(|v| v.join(" ")).collect(),
        },
        "string" => OptionKind::String {
            default: default.map(|d| if d == "<empty>" { String::new() } else { d }),
        },
        "button" => OptionKind::Button,
        _ => return None,
    };
    Some(UciOption { name, kind })
}

/// Signed decimal, saturating at the i64 range.
fn parse_i64_sat(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut v: i64 = 0;
    for b in digits.bytes() {
        let d = (b - b'0') as i64;
        v = if neg {
            v.saturating_mul(10).saturating_sub(d)
        } else {
            v.saturating_mul(10).saturating_add(d)
        };
    }
    Some(v)
}

/// A value a configuration wants to give an option.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    /// For spin options (rounded to the nearest integer, halves away from zero) and string options.
    Number(f64),
    /// For check options.
    Bool(bool),
    /// For combo and string options; also accepted for spin (`"64"`) and check (`"true"`).
    Text(String),
    /// For button options: `setoption name X` without a value.
    Press,
}

impl From<f64> for OptionValue {
    fn from(v: f64) -> Self {
        OptionValue::Number(v)
    }
}
impl From<i64> for OptionValue {
    fn from(v: i64) -> Self {
        OptionValue::Number(v as f64)
    }
}
impl From<bool> for OptionValue {
    fn from(v: bool) -> Self {
        OptionValue::Bool(v)
    }
}
impl From<&str> for OptionValue {
    fn from(v: &str) -> Self {
        OptionValue::Text(v.to_string())
    }
}
impl From<String> for OptionValue {
    fn from(v: String) -> Self {
        OptionValue::Text(v)
    }
}

impl fmt::Display for OptionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Number(v) => write!(f, "{v}"),
            OptionValue::Bool(v) => write!(f, "{v}"),
            OptionValue::Text(v) => write!(f, "{v:?}"),
            OptionValue::Press => f.write_str("(press)"),
        }
    }
}

/// A configuration asked for an option the engine does not have, or a value it cannot take.
/// Every variant names the engine and the option and lists what the engine does offer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OptionError {
    #[error("engine `{engine}` has no option `{option}`. Its options are:\n{available}")]
    Unknown {
        engine: String,
        option: String,
        available: String,
    },
    #[error(
        "engine `{engine}`: option `{option}` = {value} is outside its range {min}..={max}. Its options are:\n{available}"
    )]
    OutOfRange {
        engine: String,
        option: String,
        value: String,
        min: i64,
        max: i64,
        available: String,
    },
    #[error(
        "engine `{engine}`: option `{option}` is a {expected} option and cannot take {value}. Its options are:\n{available}"
    )]
    WrongType {
        engine: String,
        option: String,
        expected: &'static str,
        value: String,
        available: String,
    },
    /// A Chess960 book needs engines that play Chess960 and say so.
    #[error(
        "engine `{engine}` ({command}) does not declare the UCI_Chess960 option, so it cannot \
         play the Chess960 book's games"
    )]
    NoChess960 { engine: String, command: String },
    /// A clock counted in nodes needs engines that count time in nodes and say so.
    #[error(
        "engine `{engine}` ({command}) does not declare the `nodestime` option, so it cannot \
         play a clock counted in nodes (`nodestime`); leave it out to play the wall clock"
    )]
    NoNodestime { engine: String, command: String },
}

/// An option the engine does not have or cannot take is the user's to fix (in the config or
/// the flags that asked for it).
impl crate::error::UserFacing for OptionError {
    fn is_user_error(&self) -> bool {
        true
    }
}

/// The UCI option that switches an engine to Chess960 castling (king takes rook).
pub const UCI_CHESS960: &str = "UCI_Chess960";

/// Stockfish's option that makes its time manager count `nodestime` nodes as a millisecond.
pub const NODESTIME: &str = "nodestime";

impl OptionError {
    /// The engine's name and the option it refused.
    pub fn engine_and_option(&self) -> Option<(&str, &str)> {
        match self {
            OptionError::Unknown { engine, option, .. }
            | OptionError::OutOfRange { engine, option, .. }
            | OptionError::WrongType { engine, option, .. } => Some((engine, option)),
            OptionError::NoChess960 { .. } | OptionError::NoNodestime { .. } => None,
        }
    }
}

/// The options an engine declared, in its order, with an index by name, so that setting 50,000
/// options costs 50,000 hash lookups rather than 50,000 scans of 50,000 names. Reads as the
/// slice of declarations.
#[derive(Clone, Debug, Default)]
pub struct OptionTable {
    options: Vec<UciOption>,
    /// [`name_key`] → position in `options`; the first declaration of a name wins.
    index: HashMap<String, usize>,
}

impl OptionTable {
    pub fn new(options: Vec<UciOption>) -> OptionTable {
        let mut index = HashMap::with_capacity(options.len());
        for (i, o) in options.iter().enumerate() {
            index.entry(name_key(&o.name)).or_insert(i);
        }
        OptionTable { options, index }
    }

    /// The option called `name`, ignoring case and the spacing between words, as
    /// [`find_option`] does.
    pub fn find(&self, name: &str) -> Option<&UciOption> {
        self.index.get(&name_key(name)).map(|&i| &self.options[i])
    }
}

impl std::ops::Deref for OptionTable {
    type Target = [UciOption];
    fn deref(&self) -> &[UciOption] {
        &self.options
    }
}

/// An option name as UCI compares it: words in lower case, one space between them.
fn name_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len());
    for word in name.split_ascii_whitespace() {
        if !key.is_empty() {
            key.push(' ');
        }
        key.extend(word.chars().map(|c| c.to_ascii_lowercase()));
    }
    key
}

/// Declarations listed in an error message: an engine with 50,000 options gets the first ones
/// and a count, not a 50,000-line message.
const DESCRIBED: usize = 40;

/// List declared options one per line, spins with their ranges, for error messages.
pub fn describe_options(options: &[UciOption]) -> String {
    if options.is_empty() {
        return "  (none)".to_string();
    }
    let mut lines: Vec<String> = options
        .iter()
        .take(DESCRIBED)
        .map(|o| format!("  {o}"))
        .collect();
    if options.len() > DESCRIBED {
        lines.push(format!("  … and {} more", options.len() - DESCRIBED));
    }
    lines.join("\n")
}

/// Find a declared option by name, case-insensitively (UCI option names are case-insensitive)
/// and ignoring differences in whitespace between words.
pub fn find_option<'o>(options: &'o [UciOption], name: &str) -> Option<&'o UciOption> {
    let same = |a: &str| {
        let mut x = a.split_ascii_whitespace();
        let mut y = name.split_ascii_whitespace();
        loop {
            match (x.next(), y.next()) {
                (None, None) => return true,
                (Some(p), Some(q)) if p.eq_ignore_ascii_case(q) => {}
                _ => return false,
            }
        }
    };
    options.iter().find(|o| same(&o.name))
}

/// Check one wish against the declarations and turn it into what goes on the wire:
/// (the engine's spelling of the name, the value text or `None` for a button).
pub fn resolve(
    engine: &str,
    options: &OptionTable,
    name: &str,
    value: &OptionValue,
) -> Result<(String, Option<String>), OptionError> {
    let available = || describe_options(options);
    let Some(opt) = options.find(name) else {
        return Err(OptionError::Unknown {
            engine: engine.to_string(),
            option: name.to_string(),
            available: available(),
        });
    };
    let wrong = |expected: &'static str| OptionError::WrongType {
        engine: engine.to_string(),
        option: opt.name.clone(),
        expected,
        value: value.to_string(),
        available: available(),
    };
    let text = match (&opt.kind, value) {
        (OptionKind::Spin { min, max, .. }, _) => {
            let v = match value {
                OptionValue::Number(v) => *v,
                OptionValue::Text(t) => t.trim().parse::<f64>().map_err(|_| wrong("spin"))?,
                _ => return Err(wrong("spin")),
            };
            if !v.is_finite() {
                return Err(wrong("spin"));
            }
            let r = v.round();
            let (lo, hi) = (min.unwrap_or(i64::MIN), max.unwrap_or(i64::MAX));
            if r < lo as f64 || r > hi as f64 {
                return Err(OptionError::OutOfRange {
                    engine: engine.to_string(),
                    option: opt.name.clone(),
                    value: value.to_string(),
                    min: lo,
                    max: hi,
                    available: available(),
                });
            }
            Some((r as i64).to_string())
        }
        (OptionKind::Check { .. }, OptionValue::Bool(b)) => Some(b.to_string()),
        (OptionKind::Check { .. }, OptionValue::Text(t)) => {
            match t.trim().to_ascii_lowercase().as_str() {
                "true" => Some("true".to_string()),
                "false" => Some("false".to_string()),
                _ => return Err(wrong("check")),
            }
        }
        (OptionKind::Check { .. }, _) => return Err(wrong("check")),
        (OptionKind::Combo { vars, .. }, OptionValue::Text(t)) => {
            match vars.iter().find(|v| v.eq_ignore_ascii_case(t.trim())) {
                Some(v) => Some(v.clone()),
                None => return Err(wrong("combo")),
            }
        }
        (OptionKind::Combo { .. }, _) => return Err(wrong("combo")),
        (OptionKind::String { .. }, OptionValue::Text(t)) => Some(t.clone()),
        (OptionKind::String { .. }, OptionValue::Number(v)) => Some(v.to_string()),
        (OptionKind::String { .. }, OptionValue::Bool(b)) => Some(b.to_string()),
        (OptionKind::String { .. }, OptionValue::Press) => return Err(wrong("string")),
        (OptionKind::Button, OptionValue::Press) => None,
        (OptionKind::Button, _) => return Err(wrong("button")),
    };
    if text.as_deref().is_some_and(|t| t.contains(['\n', '\r'])) {
        return Err(wrong("single-line"));
    }
    Ok((opt.name.clone(), text))
}

/// Validate a whole configuration's wishes before a match; the first problem is returned.
pub fn validate<'a>(
    engine: &str,
    options: &OptionTable,
    wanted: impl IntoIterator<Item = (&'a str, &'a OptionValue)>,
) -> Result<(), OptionError> {
    for (name, value) in wanted {
        resolve(engine, options, name, value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn toga() -> OptionTable {
        OptionTable::new(
            [
                "option name Hash type spin default 128 min 4 max 1024",
                "option name Ponder type check default false",
                "option name NullMove Pruning type combo default Always var Always var Fail High var Never",
                "option name Material type spin default 100 min 0 max 400",
                "option name BookFile type string default performance.bin",
                "option name Clear Hash type button",
            ]
            .iter()
            .map(|l| parse_option_line(l).unwrap())
            .collect(),
        )
    }

    #[test]
    fn the_table_finds_what_find_option_finds_and_keeps_the_first_of_a_twice_declared_name() {
        let mut lines: Vec<UciOption> = toga().to_vec();
        lines.push(
            parse_option_line("option name material type spin default 7 min 0 max 9").unwrap(),
        );
        let table = OptionTable::new(lines.clone());
        for name in [
            "material",
            " nullmove   PRUNING ",
            "CLEAR HASH",
            "hash",
            "Materiel",
            "",
            "Clear",
        ] {
            assert_eq!(table.find(name), find_option(&lines, name), "{name:?}");
        }
        assert_eq!(table.find("MATERIAL").unwrap().kind, lines[3].kind);
        assert_eq!(table.len(), 7);
    }

    #[test]
    fn an_error_lists_forty_declarations_and_counts_the_rest() {
        let many: Vec<UciOption> = (0..50_000)
            .map(|i| {
                parse_option_line(&format!(
                    "option name W{i} type spin default 0 min -9 max 9"
                ))
                .unwrap()
            })
            .collect();
        let text = describe_options(&many);
        assert_eq!(text.lines().count(), 41);
        assert!(text.starts_with("  W0 "), "{text}");
        assert!(text.ends_with("  … and 49960 more"), "{text}");
        assert_eq!(describe_options(&many[..40]).lines().count(), 40);
    }

    #[test]
    fn own_reader_agrees_with_vampirc_on_real_lines() {
        for line in [
            "option name Debug Log File type string default ",
            "option name SyzygyPath type string default <empty>",
            "option name NullMove Pruning type combo default Always var Always var Fail High var Never",
            "option name Pawn Structure (Endgame) type spin default 100 min 0 max 200",
            "option name Clear Hash type button",
            "option name Hash type spin default 16 min 1 max 33554432",
            "option name Ponder type check default true",
        ] {
            let UciMessage::Option(cfg) = vampirc_uci::parse_one(line) else {
                panic!("vampirc: {line}")
            };
            let mut theirs = from_vampirc(cfg);
            let mine = parse_option_own(line).unwrap();
            // vampirc reads an empty `default` as None, we as Some(""); both mean "no text".
            if let (OptionKind::String { default: d @ None }, OptionKind::String { default: m }) =
                (&mut theirs.kind, &mine.kind)
                && m.as_deref() == Some("")
            {
                *d = Some(String::new());
            }
            assert_eq!(theirs, mine, "{line}");
        }
    }

    #[test]
    fn fallback_handles_what_vampirc_rejects() {
        let o = parse_option_line("option name Big type spin default 1 min 0 max 99999999999999")
            .unwrap();
        assert_eq!(
            o.kind,
            OptionKind::Spin {
                default: Some(1),
                min: Some(0),
                max: Some(99_999_999_999_999)
            }
        );
    }

    #[test]
    fn resolve_sends_engine_spelling_and_rounds_spins() {
        let o = toga();
        let r = resolve("Toga", &o, "material", &OptionValue::Number(123.5)).unwrap();
        assert_eq!(r, ("Material".to_string(), Some("124".to_string())));
        let r = resolve("Toga", &o, "MATERIAL", &OptionValue::Number(-0.4)).unwrap();
        assert_eq!(r.1.as_deref(), Some("0"));
        let r = resolve("Toga", &o, "nullmove pruning", &"fail high".into()).unwrap();
        assert_eq!(r, ("NullMove Pruning".into(), Some("Fail High".into())));
        let r = resolve("Toga", &o, "Ponder", &"TRUE".into()).unwrap();
        assert_eq!(r.1.as_deref(), Some("true"));
        let r = resolve("Toga", &o, "Clear Hash", &OptionValue::Press).unwrap();
        assert_eq!(r.1, None);
        let r = resolve("Toga", &o, " nullmove   PRUNING ", &"never".into()).unwrap();
        assert_eq!(r, ("NullMove Pruning".into(), Some("Never".into())));
        let r = resolve("Toga", &o, "Hash", &"64".into()).unwrap();
        assert_eq!(r.1.as_deref(), Some("64"));
    }

    #[test]
    fn validation_errors_name_engine_option_and_list() {
        let o = toga();
        let e = resolve("Toga", &o, "Materiel", &OptionValue::Number(1.0)).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, OptionError::Unknown { .. }));
        assert!(
            msg.contains("`Toga`") && msg.contains("`Materiel`"),
            "{msg}"
        );
        assert!(
            msg.contains("Material (spin 0..=400, default 100)"),
            "{msg}"
        );
        let e = resolve("Toga", &o, "Material", &OptionValue::Number(400.6)).unwrap_err();
        assert!(
            matches!(
                e,
                OptionError::OutOfRange {
                    min: 0,
                    max: 400,
                    ..
                }
            ),
            "{e}"
        );
        assert!(resolve("Toga", &o, "Material", &OptionValue::Number(400.4)).is_ok());
        let e = resolve("Toga", &o, "Ponder", &OptionValue::Number(1.0)).unwrap_err();
        assert!(matches!(
            e,
            OptionError::WrongType {
                expected: "check",
                ..
            }
        ));
        let e = resolve("Toga", &o, "NullMove Pruning", &"Sometimes".into()).unwrap_err();
        assert!(matches!(
            e,
            OptionError::WrongType {
                expected: "combo",
                ..
            }
        ));
        let e = resolve("Toga", &o, "Material", &OptionValue::Number(f64::NAN)).unwrap_err();
        assert!(matches!(e, OptionError::WrongType { .. }));
        let wanted = [
            ("Hash".to_string(), OptionValue::Number(16.0)),
            ("Nope".to_string(), OptionValue::Number(1.0)),
        ];
        assert!(validate("Toga", &o, wanted.iter().map(|(n, v)| (n.as_str(), v))).is_err());
    }

    proptest! {
        #[test]
        fn option_lines_never_panic(tail in "\\PC{0,80}", tail2 in "[ a-z0-9-]{0,60}") {
            // Both readers, including vampirc on anything that starts like an option line.
            let _ = parse_option_line(&format!("option name {tail}"));
            let _ = parse_option_line(&format!("option name {tail2}"));
            let _ = parse_option_line(&format!("option name X type spin{tail2}"));
            let _ = parse_option_line(&format!("option name X type combo default {tail2}"));
            let _ = parse_option_own(&tail);
        }

        #[test]
        fn spin_declarations_round_trip(name in "[A-Za-z()]{1,8}( [A-Za-z()]{1,8}){0,3}",
                                        a in -1_000_000i64..1_000_000, b in 0i64..1_000_000) {
            prop_assume!(!name.split(' ').any(|w| ["type", "default", "min", "max", "var", "value"].contains(&w)));
            let line = format!("option name {name} type spin default {a} min {} max {}", a - b, a + b);
            let o = parse_option_line(&line).unwrap();
            prop_assert_eq!(o.name, name);
            prop_assert_eq!(o.kind, OptionKind::Spin { default: Some(a), min: Some(a - b), max: Some(a + b) });
        }
    }
}
