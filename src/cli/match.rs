//! `spsa match`: play game pairs between two engines or two option sets. Its flags (the game
//! flags it shares with `spsa verify` are [`MatchFlags`]) and how they combine with a config
//! file into a [`Plan`] (flags override the config), played here
//! ([`crate::matchrun::play_here`]) or on a database's workers
//! ([`crate::db::match_create::play_on_workers`]).

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use super::flags::{MatchFlags, SourceFlags, apply_flags, build_error, progress_every};
use crate::arena::OptionSet;
use crate::config::{Config, EngineConfig, GamesConfig};
use crate::engine::OptionValue;
use crate::error::user_error;
use crate::matchrun::Plan;
use crate::matchrun::setup::{OptionPlaces, engine_name, plan};

/// `spsa match`: two engines, or one engine with two option sets.
#[derive(Args, Clone, Debug, Default)]
pub struct MatchArgs {
    /// Take engines, book, limits and adjudication from this config (TOML or classic INI);
    /// flags override it. A TOML file may leave out the tuning keys.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The first engine (side A).
    #[arg(long, value_name = "PATH")]
    pub engine1: Option<PathBuf>,
    /// The second engine (side B); the first one again when not given.
    #[arg(long, value_name = "PATH")]
    pub engine2: Option<PathBuf>,
    // Boxed: the command line's largest variant stays near the others (clippy).
    #[command(flatten)]
    pub sources: Box<SourceFlags>,
    /// A command-line argument for engine 1 (repeat for several).
    #[arg(long = "arg1", value_name = "ARG", allow_hyphen_values = true)]
    pub args1: Vec<String>,
    /// A command-line argument for engine 2 (repeat for several).
    #[arg(long = "arg2", value_name = "ARG", allow_hyphen_values = true)]
    pub args2: Vec<String>,
    /// An option for both engines, NAME=VALUE (repeatable), e.g. "Hash=16".
    #[arg(long = "option", value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// An option for side A, NAME=VALUE (repeatable), e.g. "KnightValue=150".
    #[arg(long = "option1", value_name = "NAME=VALUE")]
    pub options1: Vec<String>,
    /// An option for side B, NAME=VALUE (repeatable).
    #[arg(long = "option2", value_name = "NAME=VALUE")]
    pub options2: Vec<String>,
    #[command(flatten)]
    pub flags: MatchFlags,
    /// Play the match on the workers of this PostgreSQL database (`spsa worker --db URL`):
    /// this process creates it and follows it; Ctrl-C leaves it running (`spsa status --db
    /// URL` follows it, `spsa modify --db URL --run ID --stop` stops it).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// With --db: seconds a lease lives without a heartbeat before its pair is handed on.
    #[arg(long, default_value_t = crate::db::LEASE_SECONDS, requires = "db")]
    pub lease_timeout: f64,
    /// With --db: the match's throughput share among the active runs of its priority (above
    /// 0, at most 1000; default 100).
    #[arg(long, value_name = "P", requires = "db", value_parser = crate::config::check::throughput_text)]
    pub throughput: Option<f64>,
    /// With --db and a clock: the engine speed (nodes per second) the clock is meant for; each
    /// worker scales it to its own. Default: engine 1 measured here.
    #[arg(long, value_name = "NPS", requires = "db", value_parser = super::flags::nps_flag)]
    pub reference_nps: Option<f64>,
}

/// `NAME=VALUE` → an option wish; `flag` names the flag in the message.
pub fn parse_option(text: &str, flag: &str) -> Result<(String, OptionValue)> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((
            name.trim().to_string(),
            OptionValue::Text(value.trim().to_string()),
        )),
        _ => Err(user_error(format!("{flag} `{text}`: expected NAME=VALUE"))),
    }
}

fn engine_from_flag(command: &Path, args: &[String]) -> EngineConfig {
    EngineConfig {
        command: command.to_path_buf(),
        args: args.to_vec(),
        workdir: None,
        options: Vec::new(),
        files: Vec::new(),
        source: None,
    }
}

/// A games config from flags alone (no config file): engine 1 is required (`--engine1`, or
/// `--source1`); engine 2 is engine 1 again unless given (with `--arg2`'s args if any).
fn games_from_flags(a: &MatchArgs) -> Result<GamesConfig> {
    let mut engine1 = match (&a.engine1, &a.sources.source1) {
        (Some(e1), _) => engine_from_flag(e1, &a.args1),
        (None, Some(_)) => engine_from_flag(Path::new(""), &a.args1),
        (None, None) => {
            return Err(user_error(
                "no engine: give --engine1 PATH (and --engine2 PATH), --source1 REV (and --source2 REV) with --git REPO, --build CMD and --binary PATH, or --config FILE",
            ));
        }
    };
    a.sources.side(1, &mut engine1)?;
    let mut engine2 = match &a.engine2 {
        Some(e2) => engine_from_flag(e2, &a.args2),
        None if !a.args2.is_empty() => EngineConfig {
            args: a.args2.clone(),
            ..engine1.clone()
        },
        None => engine1.clone(),
    };
    a.sources.side(2, &mut engine2)?;
    Ok(GamesConfig::with_engines(engine1, engine2))
}

impl MatchArgs {
    /// Combine the config (if any) and the flags into a plan.
    pub async fn plan(&self) -> Result<Plan> {
        Ok(self.plan_and_games().await?.0)
    }

    /// The plan, and the games config it was made of (what a match in the database stores).
    pub async fn plan_and_games(&self) -> Result<(Plan, GamesConfig)> {
        self.sources.check()?;
        let config = match &self.config {
            Some(path) => Some(Config::load_games(path)?),
            None => None,
        };
        let mut games = match config.as_ref().and_then(|c| c.games.clone()) {
            Some(mut g) => {
                if let Some(e1) = &self.engine1 {
                    g.engine1 = engine_from_flag(e1, &self.args1);
                } else if !self.args1.is_empty() {
                    g.engine1.args = self.args1.clone();
                }
                if let Some(e2) = &self.engine2 {
                    g.engine2 = engine_from_flag(e2, &self.args2);
                } else if !self.args2.is_empty() {
                    g.engine2.args = self.args2.clone();
                }
                self.sources.side(1, &mut g.engine1)?;
                self.sources.side(2, &mut g.engine2)?;
                g
            }
            None if config.is_some() && self.engine1.is_none() => {
                return Err(user_error(format!(
                    "{}: no engines configured; give --engine1 PATH",
                    self.config
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                )));
            }
            None => games_from_flags(self)?,
        };
        apply_flags(&mut games, &self.flags)?;
        // The engines named by their source (the config's tables, --source1/--source2), built
        // here before anything else is done.
        let config_path = self.config.as_deref();
        crate::engine::build::build_games(&mut games, |s, e| build_error(config_path, s, e))
            .await?;
        for text in &self.options {
            let (name, value) = parse_option(text, "--option")?;
            let value = match value {
                OptionValue::Text(t) => t,
                other => other.to_string(),
            };
            games.engine1.options.push((name.clone(), value.clone()));
            games.engine2.options.push((name, value));
        }
        let fixed_flag = self
            .options
            .iter()
            .filter_map(|t| t.split_once('=').map(|(n, _)| n.trim().to_string()))
            .collect();
        let a_options = self
            .options1
            .iter()
            .map(|t| parse_option(t, "--option1"))
            .collect::<Result<OptionSet>>()?;
        let b_options = self
            .options2
            .iter()
            .map(|t| parse_option(t, "--option2"))
            .collect::<Result<OptionSet>>()?;
        let (s1, s2) = (engine_name(&games.engine1), engine_name(&games.engine2));
        let names = if s1 == s2 {
            [format!("{s1}.1"), format!("{s2}.2")]
        } else {
            [s1, s2]
        };
        let mut plan = plan(
            &games,
            names,
            a_options,
            b_options,
            &self.flags.settings(),
            100,
            config.as_ref().map(|c| c.concurrency),
            config.as_ref().and_then(|c| c.seed),
            "spsa match".into(),
        )?;
        plan.option_places = OptionPlaces {
            config,
            fixed_flag,
            side_flags: [Some("--option1"), Some("--option2")],
        };
        Ok((plan, games))
    }
}

/// Run `spsa match` to its end or Ctrl-C and print the results; with `--db`, create the match in
/// the database and follow it while its workers play it (Ctrl-C leaves it running).
pub async fn command(args: MatchArgs) -> Result<()> {
    if let Some(url) = &args.db {
        if args.flags.resume {
            return Err(user_error(
                "--resume: a match in the database goes on by itself; follow it with `spsa status --db URL`",
            ));
        }
        if args.flags.engine_log.is_some() {
            return Err(user_error(
                "--engine-log: the games of a match in the database are played on the workers' machines",
            ));
        }
        // From the start: measuring the engines' signatures can take seconds, and a Ctrl-C then
        // must end the command before a match exists, not kill it halfway.
        let shutdown = crate::runtime::shutdown::Shutdown::on_signals();
        let (plan, games) = args.plan_and_games().await?;
        let serving = crate::db::match_create::Serving {
            lease_seconds: args.lease_timeout,
            throughput: args.throughput,
            reference_nps: args.reference_nps,
        };
        let every = progress_every(&args.flags);
        return crate::db::match_create::play_on_workers(
            url, &plan, &games, serving, every, &shutdown,
        )
        .await;
    }
    let plan = args.plan().await?;
    crate::matchrun::play_here(plan, progress_every(&args.flags)).await
}
