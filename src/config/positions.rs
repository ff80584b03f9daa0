//! The TOML form's `objective = "positions"` and its `[positions]` table: tune an engine's options
//! to minimise a loss over labelled positions instead of playing games.
//!
//! ```toml
//! objective = "positions"     # default "games"
//! [positions]
//! train = "data/train.epd"
//! validation = "data/valid.epd" # or validation_fraction = 0.1 (split off train, seeded)
//! depth = 1                     # or nodes = N: the search of each evaluation
//! loss = "texel"                # or "tanh"
//! k = "fit"                     # or a number
//! method = "spsa"               # or "local"
//! batch = 1000                  # positions per SPSA iteration
//! ```
//!
//! Engines that export their evaluation as a coefficient file (see [`crate::coefficients`]) are
//! tuned with exact gradients instead of searches:
//!
//! ```toml
//! [positions]
//! coefficients = "data/train.coef"  # replaces `train`; `validation` is then a coefficient file
//! method = "gradient"               # Adam; or "lbfgs"
//! epochs = 200                      # most epochs (L-BFGS: iterations)
//! learning_rate = 1.0               # Adam's step, in units of each variable's c_end
//! minibatch = 16384                 # positions per Adam step (default: all)
//! patience = 20                     # Adam: stop after this many epochs without a better validation loss
//! ```
//! The engine is `[engine1]`; `concurrency` engine processes share the evaluations.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{ConfigError, resolve_input};
use crate::positions::LossKind;
pub use crate::positions::loss::KSetting;

/// The `[positions]` table as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct PositionsTable {
    train: Option<String>,
    validation: Option<String>,
    validation_fraction: Option<f64>,
    depth: Option<u32>,
    nodes: Option<u64>,
    loss: Option<String>,
    k: Option<KValue>,
    method: Option<String>,
    batch: Option<u64>,
    coefficients: Option<String>,
    epochs: Option<u64>,
    learning_rate: Option<f64>,
    minibatch: Option<u64>,
    patience: Option<u64>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum KValue {
    Number(f64),
    Word(String),
}

/// A tune from labelled positions.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionsConfig {
    pub train: PathBuf,
    pub validation: Validation,
    pub search: PositionSearch,
    pub loss: LossKind,
    pub k: KSetting,
    pub method: Method,
    /// Positions per SPSA iteration (the same batch for θ+ and θ−).
    pub batch: usize,
    /// The exact-gradient settings (`method = "gradient"` or `"lbfgs"`).
    pub gradient: GradientConfig,
}

/// Settings of the exact-gradient methods; `coefficients` set means the engine's evaluation
/// comes from that file (and `train`/`validation` name coefficient files), else the gradients
/// are estimated through UCI.
#[derive(Clone, Debug, PartialEq)]
pub struct GradientConfig {
    pub coefficients: Option<PathBuf>,
    pub epochs: usize,
    pub learning_rate: f64,
    pub minibatch: Option<usize>,
    pub patience: usize,
}

/// Where validation positions come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Validation {
    None,
    File(PathBuf),
    /// A seeded random fraction of the training file, held out from training.
    Fraction(f64),
}

/// The search each evaluation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PositionSearch {
    Depth(u32),
    Nodes(u64),
}

/// How the loss is minimised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// SPSA on the loss, through the run's driver and schedule.
    #[default]
    Spsa,
    /// Texel's local search: ±step per variable while the full training loss drops.
    Local,
    /// Adam on exact (or estimated) gradients, with learning curves and early stopping.
    Gradient,
    /// L-BFGS on exact (or estimated) gradients.
    Lbfgs,
}

/// Default positions per SPSA iteration.
pub const DEFAULT_BATCH: usize = 1000;

/// Turn `objective` and `[positions]` into a [`PositionsConfig`] (`None` for a tune by games).
pub(super) fn build(
    objective: Option<&str>,
    table: Option<&PositionsTable>,
    simulate: bool,
    path: &Path,
    text: &str,
) -> Result<Option<PositionsConfig>, ConfigError> {
    // Each mistake names its line, as every other config error does: the key's, else the
    // table's, else none.
    let at = |line: Option<usize>, message: String| match line {
        Some(line) => ConfigError::AtLine {
            path: path.to_path_buf(),
            line,
            message,
        },
        None => ConfigError::InFile {
            path: path.to_path_buf(),
            message,
        },
    };
    let table_line = line_of_key(text, Some("positions"), None);
    let err = |message: String| at(table_line, message);
    let top = |name: &str, message: String| {
        at(line_of_key(text, None, Some(name)).or(table_line), message)
    };
    let line_in_table =
        |name: &str| line_of_key(text, Some("positions"), Some(name)).or(table_line);
    let both = |a: &str, b: &str| {
        at(
            line_in_table(b),
            format!("keys `positions.{a}` and `positions.{b}`: give one, not both"),
        )
    };
    match objective.unwrap_or("games") {
        "games" => {
            if table.is_some() {
                return Err(err(
                    "a [positions] table needs `objective = \"positions\"`".into()
                ));
            }
            return Ok(None);
        }
        "positions" => {}
        other => {
            return Err(top(
                "objective",
                format!("key `objective`: expected \"games\" or \"positions\", found \"{other}\""),
            ));
        }
    }
    if simulate {
        return Err(top(
            "simulate",
            "`objective = \"positions\"` evaluates positions with a real engine; remove `simulate = true`".into(),
        ));
    }
    let Some(t) = table else {
        return Err(top(
            "objective",
            "`objective = \"positions\"` needs a [positions] table (at least `train = \"FILE\"`)"
                .into(),
        ));
    };
    let key = |name: &str, message: String| {
        at(
            line_in_table(name),
            format!("key `positions.{name}`: {message}"),
        )
    };
    let train = match (t.train.as_deref(), t.coefficients.as_deref()) {
        (Some(_), Some(_)) => {
            return Err(both("train", "coefficients"));
        }
        (Some(f), None) | (None, Some(f)) => f,
        (None, None) => return Err(err("missing key `positions.train`".into())),
    };
    let validation = match (&t.validation, t.validation_fraction) {
        (Some(_), Some(_)) => {
            return Err(both("validation", "validation_fraction"));
        }
        (Some(v), None) => Validation::File(resolve_input(path, v)),
        (None, Some(f)) if f > 0.0 && f < 1.0 => Validation::Fraction(f),
        (None, Some(f)) => {
            return Err(key(
                "validation_fraction",
                format!("must be between 0 and 1 (exclusive), not {f}"),
            ));
        }
        (None, None) => Validation::None,
    };
    let search = match (t.depth, t.nodes) {
        (Some(_), Some(_)) => {
            return Err(both("depth", "nodes"));
        }
        (Some(0), None) => return Err(key("depth", "must be at least 1".into())),
        (None, Some(0)) => return Err(key("nodes", "must be at least 1".into())),
        (Some(d), None) => PositionSearch::Depth(d),
        (None, Some(n)) => PositionSearch::Nodes(n),
        (None, None) => PositionSearch::Depth(1),
    };
    let loss = match t.loss.as_deref().unwrap_or("texel") {
        "texel" => LossKind::Texel,
        "tanh" => LossKind::Tanh,
        other => {
            return Err(key(
                "loss",
                format!("expected \"texel\" or \"tanh\", found \"{other}\""),
            ));
        }
    };
    let k = match &t.k {
        None => KSetting::Fit,
        Some(KValue::Word(w)) if w == "fit" => KSetting::Fit,
        Some(KValue::Number(k)) if k.is_finite() && *k > 0.0 => KSetting::Fixed(*k),
        Some(KValue::Number(k)) => return Err(key("k", format!("must be > 0, not {k}"))),
        Some(KValue::Word(w)) => {
            return Err(key(
                "k",
                format!("expected \"fit\" or a number, found \"{w}\""),
            ));
        }
    };
    let method = match t.method.as_deref().unwrap_or("spsa") {
        "spsa" => Method::Spsa,
        "local" => Method::Local,
        "gradient" => Method::Gradient,
        "lbfgs" => Method::Lbfgs,
        other => {
            return Err(key(
                "method",
                format!(
                    "expected \"spsa\", \"local\", \"gradient\" or \"lbfgs\", found \"{other}\""
                ),
            ));
        }
    };
    let positive = |name: &str, v: Option<u64>, default: Option<usize>| match v {
        Some(0) => Err(key(name, "must be at least 1".into())),
        Some(v) => usize::try_from(v)
            .map(Some)
            .map_err(|_| key(name, format!("too large: {v}"))),
        None => Ok(default),
    };
    let gradient = GradientConfig {
        coefficients: t.coefficients.as_deref().map(|c| resolve_input(path, c)),
        epochs: positive("epochs", t.epochs, Some(200))?.unwrap_or(200),
        learning_rate: match t.learning_rate {
            None => 1.0,
            Some(r) if r.is_finite() && r > 0.0 => r,
            Some(r) => return Err(key("learning_rate", format!("must be > 0, not {r}"))),
        },
        minibatch: positive("minibatch", t.minibatch, None)?,
        patience: t.patience.map_or(20, |p| p as usize),
    };
    let batch = match t.batch {
        None => DEFAULT_BATCH,
        Some(0) => return Err(key("batch", "must be at least 1".into())),
        Some(b) => usize::try_from(b).map_err(|_| key("batch", format!("too large: {b}")))?,
    };
    Ok(Some(PositionsConfig {
        train: resolve_input(path, train),
        validation,
        search,
        loss,
        k,
        method,
        batch,
        gradient,
    }))
}

/// The 1-based line of `key` in `table` (`None`: the top level, before any table), or of the
/// table's header when `key` is `None`. Plain keys only: what the mistakes above name.
fn line_of_key(text: &str, table: Option<&str>, key: Option<&str>) -> Option<usize> {
    let mut current: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[').and_then(|h| h.split(']').next()) {
            current = Some(header.trim());
            if key.is_none() && current == table {
                return Some(i + 1);
            }
            continue;
        }
        if let Some(key) = key
            && current == table
            && line
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        {
            return Some(i + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::Config;
    use super::*;

    const HEAD: &str = "variables = \"v.var\"\niterations = 10\nA = 1\ngamma = 0.1\nalpha = 0.6\n\
        [engine1]\ncommand = \"/usr/games/stockfish\"\n";

    fn parse(text: &str) -> Result<Config, ConfigError> {
        super::super::toml_form::parse(text, Path::new("conf/p.toml"))
    }

    #[test]
    fn defaults_and_every_key() {
        let c = parse(&format!(
            "objective = \"positions\"\n{HEAD}[positions]\ntrain = \"t.epd\"\n"
        ))
        .unwrap();
        let p = c.positions.unwrap();
        assert_eq!(p.train, Path::new("conf/t.epd"));
        assert_eq!(p.validation, Validation::None);
        assert_eq!(p.search, PositionSearch::Depth(1));
        assert_eq!(p.loss, LossKind::Texel);
        assert_eq!(p.k, KSetting::Fit);
        assert_eq!(p.method, Method::Spsa);
        assert_eq!(p.batch, DEFAULT_BATCH);
        // The engine comes from [engine1]; no [games] limit is needed for positions.
        assert!(c.games.unwrap().limits.depth.is_none());

        let c = parse(&format!(
            "objective = \"positions\"\n{HEAD}[positions]\ntrain = \"t.epd\"\nvalidation_fraction = 0.1\nnodes = 500\nloss = \"tanh\"\nk = 1.5\nmethod = \"local\"\nbatch = 64\n"
        ))
        .unwrap();
        let p = c.positions.unwrap();
        assert_eq!(p.validation, Validation::Fraction(0.1));
        assert_eq!(p.search, PositionSearch::Nodes(500));
        assert_eq!(p.loss, LossKind::Tanh);
        assert_eq!(p.k, KSetting::Fixed(1.5));
        assert_eq!(p.method, Method::Local);
        assert_eq!(p.batch, 64);
        let c = parse(&format!(
            "objective = \"positions\"\n{HEAD}[positions]\ntrain = \"t.epd\"\nvalidation = \"v.epd\"\nk = \"fit\"\n"
        ))
        .unwrap();
        assert_eq!(
            c.positions.unwrap().validation,
            Validation::File("conf/v.epd".into())
        );
        assert_eq!(p.gradient.coefficients, None);

        let c = parse(&format!(
            "objective = \"positions\"\n{HEAD}[positions]\ncoefficients = \"t.coef\"\nmethod = \"lbfgs\"\nepochs = 50\nlearning_rate = 0.5\nminibatch = 4096\npatience = 0\n"
        ))
        .unwrap();
        let p = c.positions.unwrap();
        assert_eq!(p.method, Method::Lbfgs);
        assert_eq!(
            p.gradient,
            GradientConfig {
                coefficients: Some("conf/t.coef".into()),
                epochs: 50,
                learning_rate: 0.5,
                minibatch: Some(4096),
                patience: 0,
            }
        );
        // A games config has no positions.
        let c = parse(&format!("{HEAD}[games]\ndepth = 2\n")).unwrap();
        assert!(c.positions.is_none());
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn mistakes_name_the_file_and_key() {
        let p = |body: &str| format!("objective = \"positions\"\n{HEAD}[positions]\n{body}");
        let cases = [
            (
                p("train = \"t.epd\"\ndepth = 1\nnodes = 5\n"),
                "positions.depth",
            ),
            (
                p("train = \"t.epd\"\nloss = \"l2\"\n"),
                "key `positions.loss`",
            ),
            (
                p("train = \"t.epd\"\nk = -1\n"),
                "key `positions.k`: must be > 0",
            ),
            (p("train = \"t.epd\"\nk = \"auto\"\n"), "key `positions.k`"),
            (
                p("train = \"t.epd\"\nmethod = \"adam\"\n"),
                "key `positions.method`",
            ),
            (
                p("coefficients = \"t.coef\"\ntrain = \"t.epd\"\nmethod = \"lbfgs\"\n"),
                "not both",
            ),
            (
                p("coefficients = \"t.coef\"\nmethod = \"gradient\"\nlearning_rate = 0\n"),
                "key `positions.learning_rate`",
            ),
            (
                p("coefficients = \"t.coef\"\nmethod = \"gradient\"\nepochs = 0\n"),
                "key `positions.epochs`",
            ),
            (p("train = \"t.epd\"\nbatch = 0\n"), "key `positions.batch`"),
            (p("train = \"t.epd\"\ndepth = 0\n"), "key `positions.depth`"),
            (
                p("train = \"t.epd\"\nvalidation_fraction = 1.5\n"),
                "validation_fraction",
            ),
            (
                p("train = \"t.epd\"\nvalidation = \"v\"\nvalidation_fraction = 0.1\n"),
                "not both",
            ),
            (p("depth = 1\n"), "missing key `positions.train`"),
            (p("train = \"t.epd\"\nbogus = 1\n"), "unknown field `bogus`"),
            (
                format!("objective = \"positions\"\n{HEAD}"),
                "needs a [positions] table",
            ),
            (
                format!("{HEAD}[positions]\ntrain = \"t.epd\"\n"),
                "needs `objective = \"positions\"`",
            ),
            (format!("objective = \"elo\"\n{HEAD}"), "key `objective`"),
        ];
        for (text, want) in cases {
            let e = error(&text);
            assert!(e.starts_with("conf/p.toml"), "{e}");
            assert!(e.contains(want), "{want:?} not in {e:?}");
        }
    }

    /// A mistake in or about the [positions] table names its line: the key's, or the table's
    /// when the mistake is a missing key, or the top-level key's.
    #[test]
    fn mistakes_name_their_line() {
        let p = |body: &str| format!("objective = \"positions\"\n{HEAD}[positions]\n{body}");
        // HEAD is 7 lines: [positions] is line 9, its first key line 10.
        let cases = [
            (p("train = \"t.epd\"\nloss = \"l2\"\n"), 11),
            (p("train = \"t.epd\"\n  k = -1\n"), 11),
            (p("train = \"t.epd\"\nmethod = \"adam\"\n"), 11),
            (p("train = \"t.epd\"\ndepth = 1\nnodes = 5\n"), 12),
            (p("coefficients = \"t.coef\"\ntrain = \"t.epd\"\n"), 10),
            (p("depth = 1\n"), 9),
            (format!("objective = \"positions\"\n{HEAD}"), 1),
            (format!("objective = \"elo\"\n{HEAD}"), 1),
            (format!("{HEAD}[positions]\ntrain = \"t.epd\"\n"), 8),
        ];
        for (text, line) in cases {
            let e = error(&text);
            assert!(
                e.starts_with(&format!("conf/p.toml:{line}: ")),
                "line {line}: {e}"
            );
        }
        assert_eq!(
            line_of_key("a = 1\n[x]\nab = 2\na=3\n", Some("x"), Some("a")),
            Some(4)
        );
        assert_eq!(line_of_key("a = 1\n[x]\n", None, Some("a")), Some(1));
        assert_eq!(line_of_key("a = 1\n", Some("x"), None), None);
    }

    #[test]
    fn spsa_schedule_keys_are_needed_only_by_spsa() {
        let head = "variables = \"v.var\"\n[engine1]\ncommand = \"/usr/games/stockfish\"\n";
        for method in ["local", "gradient", "lbfgs"] {
            let data = if method == "local" {
                "train = \"t.epd\""
            } else {
                "coefficients = \"t.coef\""
            };
            let c = parse(&format!(
                "objective = \"positions\"\n{head}[positions]\n{data}\nmethod = \"{method}\"\n"
            ));
            assert!(c.is_ok(), "{method}: {:?}", c.err());
        }
        // SPSA over positions, and games, still need them.
        let spsa = error(&format!(
            "objective = \"positions\"\n{head}[positions]\ntrain = \"t.epd\"\n"
        ));
        assert!(spsa.contains("missing key `iterations`"), "{spsa}");
        assert!(error(head).contains("missing key `iterations`"));
    }
}
