//! Runs shared through PostgreSQL: `spsa run CONFIG --db URL` creates a run, `spsa worker --db
//! URL` on any machine leases its iterations, plays them and reports, `spsa status --db URL`
//! shows where everything stands.
//!
//! # Where the update is applied, and why there
//!
//! An iteration's update θ += a_k/c_k·signal·δ must be applied exactly once, in the same
//! transaction that records its result, and it must keep being applied while the `spsa run`
//! process is dead (the workers carry on). So it cannot wait for the owner: it happens in
//! `spsa.report`, the SECURITY DEFINER function a worker calls with its result. To keep the SPSA
//! math in Rust, the function does no schedule math: the owner stores, per iteration k handed
//! out, the vector `step_k = a_k/c_k·δ_k` (computed by the same `Spsa::gains` the local tuner
//! uses; it depends only on the schedule, the seed and k, not on θ). The report then does
//! `θ := clip(θ + step_k·signal)`, one multiply-add-clamp per variable. Since δ = ±1, that is
//! bit for bit what `Spsa::apply` computes; the owner checks it: it replays every applied result
//! through its own driver, in the order the database applied them (`results.seq`), and stops
//! with an error if its θ ever differs from the database's in a single bit (each result row
//! keeps [`theta_checksum`](crate::spsa::checksum::theta_checksum) of θ after it, computed by
//! the report).
//!
//! # What is stored per iteration
//!
//! Only what that iteration knows (schema version 2, [`SCHEMA_VERSION`]): its result, games and
//! the checksum of θ. A work row holds its step from when the owner hands it out (a window of
//! [`owner::work_window`] iterations ahead of the results, topped up by the owner's mirror)
//! until its result is applied; θ is kept every [`owner::snapshot_every`] results
//! (`spsa.snapshots`, the run page's chart). So a run's rows grow with its iterations, not with
//! parameters × iterations. While the owner is down the workers play the window's iterations,
//! then wait for it.
//!
//! θ± to play are not stored: a worker rebuilds the run's driver from the run's definition and
//! asks it for `trial(k)` at the θ the lease returned, so rounding and clipping stay in Rust too.
//! A hostile worker can thus play other values or report another score, which skews its own
//! result only: the score is range-checked ([−2B, 2B], consistent with the game counts), the
//! lease token must be the current one, and the step comes from the owner's row.
//!
//! The owner's local θ log and checkpoint are a mirror of the database: rebuilt from the
//! results on every start (a resume included), so they always agree with the database.
//!
//! # Roles
//! The role that runs `spsa run --db` installs the schema ([`schema.sql`](self)) and owns its
//! tables and functions. Workers log in as members of `spsa_worker`, which has EXECUTE on the
//! worker functions only (lease, heartbeat, give back, report, an engine's bytes, what it
//! checked of a run's engines, status) and no table rights. Team members (`spsa_member`) and
//! approvers (`spsa_approver`) have no table rights either: they create, hand out, follow,
//! pause, stop, approve and reject through functions that check `session_user` (schema
//! version 4), every run records its author, a member's run waits for an approver before any
//! lease, and triggers keep the audit trail ([`admin`]; docs/shared-runs.md, "Members and
//! approvers").
//!
//! # Engines
//! The owner stores the run's engine files by SHA-256 and their search signatures with the run
//! ([`engines`]; measured and checked by [`crate::engine::identity`]); a worker fetches them into
//! its cache or plays its own build, and refuses a run whose hash or signature it cannot match
//! (recorded for `spsa status` and the page).

pub mod admin;
pub mod conn;
pub mod engines;
pub mod match_create;
pub mod matches;
pub mod owner;
mod placement;
pub mod prune;
pub mod records;
pub mod run;
pub mod status;
pub mod tls;
pub mod worker;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::tuner::checkpoint::Join;
pub use conn::{Db, DbError, redact};

/// Seconds a lease lives without a heartbeat before its work is handed on, unless told
/// (`--lease-timeout`).
pub const LEASE_SECONDS: f64 = 60.0;

/// The schema and functions, installed idempotently by the owner.
pub const SCHEMA: &str = include_str!("schema.sql");

/// The layout of the database this spsa writes and reads (`spsa.schema_version`): installing
/// [`SCHEMA`] migrates a database of an older layout and refuses one of a newer.
pub const SCHEMA_VERSION: i32 = 4;

/// How a worker runs: what its leasing (`worker`) and its engines' placement (`placement`)
/// both read.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Shown in `status` (qualified by the login role there).
    pub name: String,
    /// Games played at once, over all the runs served.
    pub concurrency: usize,
    /// Engine paths on this machine, by the config's engine file name or by Engine1/Engine2.
    pub engines: Vec<(String, PathBuf)>,
    /// Serve only this run (the run process's own worker).
    pub only_run: Option<i64>,
    /// Exit when no active run is left (instead of waiting for new ones).
    pub until_idle: bool,
    /// This machine's engine speed, instead of measuring it for a run with a clock.
    pub nps: Option<f64>,
    /// Where fetched engines are kept (None: this worker runs only engines given to it).
    pub cache: Option<PathBuf>,
}

/// What a worker needs to rebuild a run's driver and source, stored as JSON with the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunDefinition {
    /// The config file's name (its extension says INI or TOML) and text.
    pub config_name: String,
    pub config_text: String,
    /// The opening book's file name and text, when the config names one.
    pub book: Option<(String, String)>,
    pub vars: Vec<VarDef>,
    pub iterations: u64,
    pub a: f64,
    pub alpha: f64,
    pub gamma: f64,
    /// Seeds every draw: δ, rounding and the games' own randomness of each iteration.
    pub seed: u64,
    pub pairs: u32,
    pub simulate: bool,
    pub draw_rate: f64,
    /// A lease not reported or renewed within this many seconds is handed to another worker.
    pub lease_seconds: f64,
    /// The engines stored with the run and their signatures (none in a run created before
    /// engines travelled with runs: its workers use engines of their own).
    #[serde(default)]
    pub engines: Vec<crate::engine::identity::RunEngine>,
    /// The held-out share of the book, drawn with `seed`, as a local run's checkpoint records
    /// it: workers play only the tuning part, and the owner's checkpoint (on any machine)
    /// carries it to verification. `None`: no book, or a run created before shared runs
    /// recorded their split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout: Option<f64>,
    /// How many openings the book had when the split was drawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout_openings: Option<u64>,
    /// Files the engines read through an option (a network, a book), stored with the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<RunFile>,
    /// The variables resumes held and added (`vars` keeps them all, the added at the end).
    #[serde(flatten)]
    pub parts: Parts,
    /// The run's shapes before the resumes that changed its variables, oldest first: the
    /// owner's mirror replays each result in the shape the database applied it in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<Shape>,
    /// A match (`spsa match --db`, run kind 'match'): what both sides play. `iterations` is
    /// then the most pairs, `seed` the match's seed, and there are no variables.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_def: Option<MatchDef>,
}

/// What a match in the database plays, beyond its engines (stored by hash in `engines`) and
/// its book (`book`): pair i is played by a worker as `spsa match` plays it locally
/// ([`crate::matchrun::pair_trial`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchDef {
    /// The games as the creator's flags and config made them (the book by its file name, no
    /// PGN and no engine log: those are paths on the creator's machine).
    pub games: crate::config::GamesConfig,
    /// The sides' names, as the local match names them.
    pub names: [String; 2],
    /// Each side's own options, NAME=VALUE as given.
    pub options: [Vec<(String, String)>; 2],
    /// The SPRT's elo0, elo1, alpha and beta, when the match runs one.
    pub sprt: Option<[f64; 4]>,
    /// The header line's description: limits, seed, book.
    pub description: String,
    /// Play only the openings a tune held out of its book (a verification), as the local
    /// verification cuts them: the book is the whole one, cut on each worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_out: Option<HeldOutOpenings>,
    /// The step of a shared run's `[verify]` ladder this match plays, so a resumed owner
    /// follows it again instead of starting another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_of: Option<VerifyOf>,
    /// The creator keeps the games (`--pgn`): the workers send each pair's PGN with its report.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub records: bool,
}

/// The part of a book a tune held out ([`crate::game::Holdout`]) and the book's size when the
/// split was drawn (a book that changed since is refused, as a local verification refuses it).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldOutOpenings {
    pub share: f64,
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drawn_from: Option<u64>,
}

/// Step `step` of `of` of the `[verify]` ladder of shared run `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyOf {
    pub run: i64,
    pub step: usize,
    pub of: usize,
}

impl MatchDef {
    /// The match's test.
    pub fn sprt(&self) -> Option<crate::stats::sprt::Sprt> {
        self.sprt
            .map(|[elo0, elo1, alpha, beta]| crate::stats::sprt::Sprt {
                elo0,
                elo1,
                alpha,
                beta,
            })
    }
}

/// Which variables of a shared run resumes dropped and added, as a local checkpoint records them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Parts {
    /// Dropped: held at their θ, played as fixed values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<String>,
    /// Added, each with the iteration it joined after.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joined: Vec<Join>,
}

/// The variables of a shared run before a resume changed them, and the results applied so.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    /// Results applied in this shape (in all, counted from the run's first).
    pub until: u64,
    pub vars: Vec<VarDef>,
    #[serde(flatten)]
    pub parts: Parts,
}

/// A file an engine option names, stored with the run by its SHA-256: each worker fetches it
/// into its cache and sets the option to its copy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    /// Engine1 or Engine2.
    pub side: String,
    /// The option that names the file (`EvalFile`).
    pub option: String,
    /// Its file name on the owner's machine (kept in the cache: engines may read the name).
    pub file: String,
    pub sha256: String,
    pub size: u64,
}

impl RunFile {
    /// How `spsa.run_engines` keys it (beside the engines' sides), so the stored bytes stay.
    pub fn key(&self) -> String {
        format!("{} {}", self.side, self.option)
    }

    /// How messages name it: `Engine1 file EvalFile`.
    pub fn label(&self) -> String {
        format!("{} file {}", self.side, self.option)
    }
}

/// One variable of a run, as in the variables file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VarDef {
    pub name: String,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    pub c_end: f64,
    pub r_end: f64,
    pub simul_elo: f64,
}

impl RunDefinition {
    /// The run's variables as it now stands (a dropped one included: it is held).
    pub fn variables(&self) -> Vec<crate::vars::Variable> {
        variables(&self.vars)
    }

    pub fn schedule(&self) -> crate::spsa::Schedule {
        crate::spsa::Schedule {
            iterations: self.iterations,
            a: self.a,
            alpha: self.alpha,
            gamma: self.gamma,
        }
    }

    /// The optimizer of the run as it now stands: each variable's part (held, joined later)
    /// as a local checkpoint gives it.
    pub fn spsa(&self) -> crate::spsa::Spsa {
        self.spsa_of(&self.vars, &self.parts)
    }

    /// The optimizer over `vars` with those held and joined.
    pub fn spsa_of(&self, vars: &[VarDef], parts: &Parts) -> crate::spsa::Spsa {
        let vars = variables(vars);
        let parts = crate::tuner::checkpoint::parts_of(&vars, &parts.held, &parts.joined);
        crate::spsa::Spsa::with_parts(&vars, self.schedule(), self.iterations, &parts)
    }

    /// Every shape the run had, oldest first, each with the results applied before it took
    /// effect: what the owner's mirror replays the results through.
    pub fn shapes(&self) -> Vec<(u64, crate::spsa::Spsa, Vec<f64>)> {
        let mut from = 0;
        let mut out = Vec::with_capacity(self.earlier.len() + 1);
        for s in &self.earlier {
            let start = s.vars.iter().map(|v| v.start).collect();
            out.push((from, self.spsa_of(&s.vars, &s.parts), start));
            from = s.until;
        }
        let start = self.vars.iter().map(|v| v.start).collect();
        out.push((from, self.spsa(), start));
        out
    }

    /// The run's driver at θ (every iteration not yet handed out): used by the owner to derive
    /// the steps and by workers to derive the trial of a leased iteration.
    pub fn driver_at(
        &self,
        theta: Vec<f64>,
        rounding: crate::spsa::driver::Rounding,
    ) -> crate::spsa::driver::Driver {
        self.driver_of(self.spsa(), theta, rounding)
    }

    /// The run's driver over `spsa` (the run in one of its shapes) at θ.
    pub fn driver_of(
        &self,
        spsa: crate::spsa::Spsa,
        theta: Vec<f64>,
        rounding: crate::spsa::driver::Rounding,
    ) -> crate::spsa::driver::Driver {
        crate::spsa::driver::Driver::new(
            spsa,
            rounding,
            self.pairs,
            self.seed,
            crate::spsa::driver::DriverState::start(theta),
        )
    }
}

fn variables(vars: &[VarDef]) -> Vec<crate::vars::Variable> {
    vars.iter()
        .map(|v| crate::vars::Variable {
            name: v.name.clone(),
            start: v.start,
            min: v.min,
            max: v.max,
            c_end: v.c_end,
            r_end: v.r_end,
            simul_elo: v.simul_elo,
        })
        .collect()
}

impl VarDef {
    pub fn from_variable(v: &crate::vars::Variable) -> Self {
        VarDef {
            name: v.name.clone(),
            start: v.start,
            min: v.min,
            max: v.max,
            c_end: v.c_end,
            r_end: v.r_end,
            simul_elo: v.simul_elo,
        }
    }
}

/// A shared run measures game pairs: the report checks every result against its game counts,
/// and workers carry no training data. A positions objective is refused (exit 2) before
/// anything is created or written, at the config line that asks for it.
pub fn refuse_positions(config: &crate::config::Config) -> Result<(), crate::config::ConfigError> {
    if config.positions.is_none() {
        return Ok(());
    }
    let message = "objective = \"positions\" cannot be shared through a database (workers report \
                   game results; positions runs are local): run it without --db and without `database`"
        .to_string();
    let text = std::fs::read_to_string(&config.path).unwrap_or_default();
    let line = text
        .lines()
        .position(|l| l.trim_start().starts_with("objective"))
        .map(|i| i + 1);
    Err(match line {
        Some(line) => crate::config::ConfigError::AtLine {
            path: config.path.clone(),
            line,
            message: format!("key `objective`: {message}"),
        },
        None => crate::config::ConfigError::InFile {
            path: config.path.clone(),
            message,
        },
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_schema_installs_the_version_the_code_reads() {
        let v = super::SCHEMA_VERSION;
        assert!(super::SCHEMA.contains(&format!("IF v > {v} THEN")));
        assert!(super::SCHEMA.contains(&format!("(which knows versions up to {v})")));
        assert!(super::SCHEMA.contains(&format!(
            "INSERT INTO spsa.schema_version (version) VALUES ({v});"
        )));
    }
}
