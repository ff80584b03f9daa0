//! `spsa verify`: play the tuned values against the start values (or any two variables files)
//! with a run's engines, book and limits, through the same match runner as `spsa match`. The
//! match itself is [`crate::matchrun::verify`], which a finished tune's `[verify]` ladder plays
//! too ([`crate::method::ladder`]); this file turns the command's flags into one.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::flags::{MatchFlags, apply_flags, progress_every};
use crate::config::{Against, Config};
use crate::error::user_error;
use crate::matchrun::verify::{Tuned, Verification};
use crate::runtime::shutdown::Shutdown;

/// `spsa verify CONFIG`: does the tuned θ beat the start values?
#[derive(Args, Clone, Debug)]
pub struct VerifyArgs {
    /// The tuning run's config (engines, book, limits, adjudication, variables, checkpoint).
    pub config: PathBuf,
    /// Take the tuned θ from this checkpoint instead of the config's.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["values", "a", "b"])]
    pub checkpoint: Option<PathBuf>,
    /// Take the tuned θ from the θ log's row for this iteration (the values after K updates),
    /// to verify a point along the run.
    #[arg(long, value_name = "K", conflicts_with_all = ["checkpoint", "values", "a", "b"])]
    pub iteration: Option<u64>,
    /// Take the tuned values from this variables file's start column instead of a checkpoint.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["a", "b"])]
    pub values: Option<PathBuf>,
    /// Play any two sets: side A's values from this variables file (start column)…
    #[arg(long, value_name = "FILE", requires = "b")]
    pub a: Option<PathBuf>,
    /// …against side B's from this one.
    #[arg(long, value_name = "FILE", requires = "a")]
    pub b: Option<PathBuf>,
    /// What the tuned values play: the variables file's start values, or the engine's own
    /// defaults (the tuned options are then not sent to the other side at all).
    #[arg(long, value_enum, default_value_t = Against::Start, conflicts_with_all = ["a", "b"])]
    pub against: Against,
    /// Play every opening of the run's book, the tune's own included, instead of only the
    /// openings held out of the tune.
    #[arg(long, conflicts_with = "book")]
    pub all_openings: bool,
    #[command(flatten)]
    pub flags: MatchFlags,
    /// Play the verification on the workers of this PostgreSQL database (`spsa worker --db
    /// URL`) as a match there: this process creates it and follows it; Ctrl-C leaves it
    /// running (`spsa status --db URL` follows it, `spsa modify --db URL --run ID --stop`
    /// stops it).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// With --db: the match's throughput share among the active runs of its priority (above
    /// 0, at most 1000; default 100).
    #[arg(long, value_name = "P", requires = "db", value_parser = crate::config::check::throughput_text)]
    pub throughput: Option<f64>,
}

/// Run `spsa verify` and print the values, the counts, the Elo difference and the verdict.
pub async fn command(args: VerifyArgs) -> Result<()> {
    let mut config = Config::load(&args.config)?;
    crate::engine::build::build_sources(&mut config).await?;
    let Some(mut games) = config.games.clone() else {
        return Err(user_error(format!(
            "{}: no engines configured (verify plays real games)",
            config.path.display()
        )));
    };
    // The run's PGN file is the tuning games'; verification games go only where --pgn says.
    games.pgn = None;
    apply_flags(&mut games, &args.flags)?;
    let tuned = match (
        &args.a,
        &args.b,
        &args.values,
        args.iteration,
        &args.checkpoint,
    ) {
        (Some(a), Some(b), ..) => Tuned::Pair(a.clone(), b.clone()),
        (_, _, Some(v), ..) => Tuned::Values(v.clone()),
        (_, _, _, Some(k), _) => Tuned::Iteration(k),
        (_, _, _, _, Some(c)) => Tuned::CheckpointFile(c.clone()),
        _ => Tuned::Checkpoint,
    };
    let verification = Verification {
        config: &config,
        games,
        settings: args.flags.settings(),
        tuned,
        against: args.against,
        all_openings: args.all_openings,
        book_given: args.flags.book.is_some(),
        progress: progress_every(&args.flags),
        fail_below: 0.0,
    };
    let shutdown = Shutdown::on_signals();
    let Some(url) = &args.db else {
        crate::matchrun::verify::verify(verification, &shutdown).await?;
        return Ok(());
    };
    if args.flags.resume || args.flags.engine_log.is_some() || args.flags.pgn.is_some() {
        return Err(user_error(
            "--resume, --engine-log and --pgn: a verification in the database is played on the workers' machines and goes on by itself; follow it with `spsa status --db URL`",
        ));
    }
    crate::db::match_create::verify_on_workers(url, verification, args.throughput, &shutdown).await
}
