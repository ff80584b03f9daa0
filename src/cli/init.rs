//! `spsa init --engine PATH [--option NAME ...] -o VARS.var [--config TUNE.toml]`: start the
//! engine, read its spin options, write a variables file ([`crate::config::from_engine`] decides
//! the rows) and, with `--config`, a ready tune's config beside it with the bundled book.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::config::from_engine::{
    Limit, TuneConfig, config_text, file_text, fixed_options, select,
};
use crate::engine::{EngineSpec, UciEngine};
use crate::error::UserError;
use crate::vars::format_setting;

/// The bundled large book (5,000 openings, of which a tune holds 20% out for its verification),
/// written beside a generated config so it works wherever it is.
const BUNDLED_BOOK: &str = include_str!("../../openings/balanced_8ply_large.epd");
const BUNDLED_BOOK_NAME: &str = "balanced_8ply_large.epd";

/// `spsa init`'s command line.
#[derive(Args)]
pub struct InitArgs {
    /// The engine to ask for its options.
    #[arg(long, value_name = "PATH")]
    pub engine: PathBuf,
    /// A command-line argument for the engine (repeat for several).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Take only this spin option (repeat for several); default: every spin option except
    /// engine controls such as Hash, Threads, MultiPV, Move Overhead, UCI_* and Syzygy*.
    #[arg(long = "option", value_name = "NAME")]
    pub options: Vec<String>,
    /// Where to write the variables file (not overwritten when anything is wrong).
    #[arg(short = 'o', long = "output", value_name = "VARS.var")]
    pub out: PathBuf,
    /// How long the engine may take to answer `uci`.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub handshake_timeout: u64,
    /// Also write a ready tune's config here (never overwritten), with the bundled book beside
    /// it, the engine's fixed options, a limit, this machine's cores and a [verify] SPRT.
    #[arg(long, value_name = "TUNE.toml")]
    pub config: Option<PathBuf>,
    /// With --config: each move searched to this depth.
    #[arg(long, value_name = "N", conflicts_with_all = ["nodes", "tc"])]
    pub depth: Option<u32>,
    /// With --config: each move searched this many nodes.
    #[arg(long, value_name = "N", conflicts_with = "tc")]
    pub nodes: Option<u64>,
    /// With --config: a clock per game, BASE+INC in seconds [default: 10+0.1].
    #[arg(long, value_name = "BASE+INC")]
    pub tc: Option<String>,
    /// With --config: game pairs to play.
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub iterations: u64,
}

/// `BASE+INC` in seconds (`10+0.1`), as milliseconds.
fn parse_tc(text: &str) -> Result<Limit, UserError> {
    let bad = || {
        UserError(format!(
            "--tc `{text}`: must be BASE+INC in seconds, e.g. 10+0.1"
        ))
    };
    let (base, inc) = text.split_once('+').unwrap_or((text, "0"));
    let secs = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let (base, inc) = (secs(base).ok_or_else(bad)?, secs(inc).ok_or_else(bad)?);
    if base <= 0.0 {
        return Err(bad());
    }
    Ok(Limit::Clock {
        base_ms: (base * 1000.0).round() as u64,
        inc_ms: (inc * 1000.0).round() as u64,
    })
}

/// `to` as a path from `dir` when it lies below it, else absolute.
fn relative_to(dir: &std::path::Path, to: &std::path::Path) -> String {
    to.strip_prefix(dir)
        .unwrap_or(to)
        .to_string_lossy()
        .into_owned()
}

/// Everything `--config` will write, checked before anything is: the config must not exist, the
/// book beside it must be absent or the bundled one.
struct ConfigPlan {
    config: PathBuf,
    /// The config's folder, absolute: the paths the config names are relative to it.
    dir: PathBuf,
    book: PathBuf,
    write_book: bool,
    limit: Limit,
}

fn plan_config(args: &InitArgs) -> Result<Option<ConfigPlan>> {
    let Some(config) = &args.config else {
        if args.depth.is_some() || args.nodes.is_some() || args.tc.is_some() {
            return Err(UserError("--depth, --nodes and --tc go with --config".into()).into());
        }
        return Ok(None);
    };
    if config.exists() {
        return Err(UserError(format!(
            "--config {}: exists; not overwritten (remove it or name another file)",
            config.display()
        ))
        .into());
    }
    let dir = std::path::absolute(config)?
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default();
    if !dir.is_dir() {
        return Err(UserError(format!("--config {}: no such folder", config.display())).into());
    }
    let book = dir.join(BUNDLED_BOOK_NAME);
    let write_book = match std::fs::read_to_string(&book) {
        Ok(text) if text == BUNDLED_BOOK => false,
        Ok(_) => {
            return Err(UserError(format!(
                "{}: exists and is not the bundled book; not overwritten (the config would name it)",
                book.display()
            ))
            .into());
        }
        Err(_) => true,
    };
    let limit = match (args.depth, args.nodes, &args.tc) {
        (Some(d), _, _) if d >= 1 => Limit::Depth(d),
        (Some(_), _, _) => return Err(UserError("--depth must be 1 or more".into()).into()),
        (_, Some(n), _) if n >= 1 => Limit::Nodes(n),
        (_, Some(_), _) => return Err(UserError("--nodes must be 1 or more".into()).into()),
        (_, _, Some(tc)) => parse_tc(tc)?,
        _ => Limit::Clock {
            base_ms: 10_000,
            inc_ms: 100,
        },
    };
    Ok(Some(ConfigPlan {
        config: config.clone(),
        dir,
        book,
        write_book,
        limit,
    }))
}

/// Run `spsa init`: start the engine, read its options, write the file, list what was taken.
pub async fn command(args: InitArgs) -> Result<()> {
    let plan = plan_config(&args)?;
    let shown = args.engine.display().to_string();
    let mut spec = EngineSpec::new(
        args.engine
            .file_stem()
            .map_or(shown.clone(), |s| s.to_string_lossy().into_owned()),
        &args.engine,
    );
    spec.args = args.args.clone();
    spec.handshake_timeout = Duration::from_millis(args.handshake_timeout);
    let mut engine = UciEngine::start(spec).await?;
    let declared = engine.options().to_vec();
    engine.quit().await;
    let (vars, skipped) = select(&shown, &declared, &args.options)?;
    if !skipped.is_empty() {
        eprintln!(
            "skipped (engine controls or no range; name them with --option to take them): {}",
            skipped.join(", ")
        );
    }
    std::fs::write(&args.out, file_text(&shown, &vars))
        .with_context(|| format!("{}: cannot write", args.out.display()))?;
    for v in &vars {
        crate::outln!(
            "{}: start {}, [{}, {}], c_end {}, R_end {}",
            v.name,
            format_setting(v.start),
            format_setting(v.min),
            format_setting(v.max),
            format_setting(v.c_end),
            format_setting(v.r_end)
        )?;
    }
    crate::outln!("wrote {} variables to {}", vars.len(), args.out.display())?;
    if let Some(plan) = plan {
        write_config(&args, &plan, &declared)?;
    }
    Ok(())
}

/// Write the config (and the bundled book beside it when it is not there yet).
fn write_config(
    args: &InitArgs,
    plan: &ConfigPlan,
    declared: &[crate::engine::UciOption],
) -> Result<()> {
    let dir = &plan.dir;
    // The engine as found now: a bare name stays a name (looked up on PATH, as the shell did).
    let engine = if args.engine.components().count() > 1 {
        std::path::absolute(&args.engine)?
            .to_string_lossy()
            .into_owned()
    } else {
        args.engine.to_string_lossy().into_owned()
    };
    let vars = std::path::absolute(&args.out)?;
    let log = dir.join("logs").join(format!(
        "{}.log",
        plan.config
            .file_stem()
            .map_or("tune".into(), |s| s.to_string_lossy())
    ));
    let concurrency = std::thread::available_parallelism().map_or(1, |n| n.get());
    let text = config_text(&TuneConfig {
        engine: &engine,
        args: &args.args,
        fixed: fixed_options(declared),
        variables: &relative_to(dir, &vars),
        log: &relative_to(dir, &log),
        book: &relative_to(dir, &plan.book),
        limit: plan.limit,
        concurrency,
        iterations: args.iterations,
    });
    if plan.write_book {
        std::fs::write(&plan.book, BUNDLED_BOOK)
            .with_context(|| format!("{}: cannot write", plan.book.display()))?;
    }
    // Never over a file that appeared meanwhile.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&plan.config)
        .with_context(|| format!("{}: cannot create", plan.config.display()))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .with_context(|| format!("{}: cannot write", plan.config.display()))?;
    crate::outln!(
        "wrote {} (book {}, {concurrency} pairs at once); start it with `spsa run {}`",
        plan.config.display(),
        plan.book.display(),
        plan.config.display()
    )?;
    Ok(())
}
