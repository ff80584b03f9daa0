//! A run on disk, whatever its method: the θ log, the files it appends records to (loss log,
//! PGN, game logs) and the checkpoint that holds θ, the method's own tables and every file's
//! length. Refusing an earlier run's files, keeping them as numbered backups (`--fresh`),
//! cutting every file back to the checkpoint on a resume, and saving are done here once, for
//! SPSA, the local search and the gradient methods alike.

use anyhow::{Context, Result};

use super::checkpoint::{self, Checkpoint, Parts, RunState, backup_name};
use super::log::{self, ThetaLog};
use super::outputs::Outputs;
use super::replay::{self, Format, ReplayLog};
use super::reshape::{self, Reshape};
use super::{RunFiles, StartMode, UserError, refusal};
use crate::source::Record;
use crate::vars::Variable;

/// A run whose start was checked, ready to open: a method opens it once nothing it must start
/// or load can fail on the user's input any more, so a bad data file or an engine that will not
/// start leaves no files behind.
pub struct SessionStart {
    vars: Vec<Variable>,
    files: RunFiles,
    mode: StartMode,
    fresh: RunState,
    checkpoint: Option<Checkpoint>,
    /// The checkpoint was reshaped in memory (see [`SessionStart::reshape`]): opening writes
    /// its θ log and checkpoint anew before the run goes on.
    reshaped: bool,
}

impl SessionStart {
    /// Check the start (see [`Session::check_start`]); `fresh` is the state a new run starts
    /// from.
    pub fn check(
        vars: Vec<Variable>,
        files: RunFiles,
        mode: StartMode,
        fresh: RunState,
        same_run: impl FnOnce(&Checkpoint) -> Result<()>,
    ) -> Result<SessionStart> {
        let checkpoint = Session::check_start(&files, mode, same_run)?;
        Ok(SessionStart {
            vars,
            files,
            mode,
            fresh,
            checkpoint,
            reshaped: false,
        })
    }

    /// Continue the checkpoint with the variables a changed file gives (see
    /// [`Reshape`]): nothing is written until the run opens.
    pub fn reshape(&mut self, reshape: &Reshape) {
        if let Some(ck) = self.checkpoint.as_mut() {
            reshape.apply(ck);
            self.vars = ck.vars.clone();
            self.reshaped = true;
        }
    }

    /// Take the run's variables as the store that decides says they are now (a shared run's
    /// database, `shape.vars` with its held and joined ones): a checkpoint with other variables
    /// is reshaped to them as [`SessionStart::reshape`] does, and a new run starts with them.
    pub fn take_shape(&mut self, shape: &Reshape) {
        match &self.checkpoint {
            Some(ck) if !shape.stands_in(ck) => self.reshape(shape),
            Some(ck) => self.vars = ck.vars.clone(),
            None => {
                let start: Vec<f64> = shape.vars.iter().map(|v| v.start).collect();
                self.fresh.theta.clone_from(&start);
                self.fresh.start = start;
                self.fresh.held.clone_from(&shape.held);
                self.fresh.joined.clone_from(&shape.joined);
                self.vars = shape.vars.clone();
            }
        }
    }

    /// The run's variables, in the order θ holds them.
    pub fn vars(&self) -> &[Variable] {
        &self.vars
    }

    /// θ as the run continues from it: the checkpoint's, or the start values.
    pub fn theta(&self) -> &[f64] {
        self.checkpoint
            .as_ref()
            .map_or(&self.fresh.theta, |ck| &ck.state.theta)
    }

    /// The checkpoint a resume continues from.
    pub fn checkpoint(&self) -> Option<&Checkpoint> {
        self.checkpoint.as_ref()
    }

    pub fn files(&self) -> &RunFiles {
        &self.files
    }

    /// Files the method appends records to, known once its source is open (PGN, game logs).
    pub fn add_outputs(&mut self, paths: impl IntoIterator<Item = std::path::PathBuf>) {
        for path in paths {
            if !self.files.outputs.contains(&path) {
                self.files.outputs.push(path);
            }
        }
    }

    pub fn open(self) -> Result<Session> {
        if let Some(ck) = self.checkpoint.as_ref().filter(|_| self.reshaped) {
            // The log first: a resume that dies before the checkpoint does this again, and
            // a log that already has the new columns comes out of it the same.
            let mut state = ck.state.clone();
            let names: Vec<String> = ck.vars.iter().map(|v| v.name.clone()).collect();
            state.log_bytes = match replay::format_of(&self.files.log)? {
                // Rows past the checkpoint go, then the new names, the optimizer over them
                // and θ as they go on: the rows before keep the definition they were made with.
                Format::Replay => {
                    let (mut log, _) = ReplayLog::resume(&self.files.log, state.log_bytes)?;
                    log.names(&names);
                    let spsa = state.spsa(&ck.vars);
                    log.define(state.seed()?, &spsa, state.applied, &state.theta)?;
                    log.flush()?
                }
                _ => log::reshape(&self.files.log, state.applied, &names, &state.start)?,
            };
            // An older curve file carries θ in its rows: they get the new columns as the log does
            // (a file of today has none, and stays as it is).
            let track = crate::spsa::track::file_for(&self.files.log);
            let key = track.to_string_lossy().into_owned();
            if let Some(&len) = state.outputs.get(&key) {
                let len = reshape::track_file(&track, len, &names, &state.start)?;
                state.outputs.insert(key, len);
            }
            checkpoint::write_with(&self.files.checkpoint, &state, &ck.parts, &ck.vars)?;
        }
        Session::open(self.vars, self.files, self.mode, self.fresh)
    }
}

/// The θ log as it is written: a run begun in the CSV form (format 1) goes on in it.
enum Log {
    Csv(ThetaLog),
    Replay(ReplayLog),
}

/// An open run: its state, its θ log and its records, saved together by [`Session::save`].
pub struct Session {
    vars: Vec<Variable>,
    files: RunFiles,
    /// θ, counts, how far the run is: the part of the checkpoint every run has.
    pub state: RunState,
    /// The method's own tables in the checkpoint.
    pub parts: Parts,
    log: Log,
    outputs: Outputs,
    /// Opened as a new run (not resumed): the time to write the files' header rows.
    new_run: bool,
}

impl Session {
    /// Refuse a start the user must fix, before anything is started or written: an earlier
    /// run's files without `--resume`/`--fresh`, a resume without a checkpoint, or (through
    /// `same_run`) a resume of a checkpoint that is another run's. Gives the checkpoint a
    /// resume continues from.
    pub fn check_start(
        files: &RunFiles,
        mode: StartMode,
        same_run: impl FnOnce(&Checkpoint) -> Result<()>,
    ) -> Result<Option<Checkpoint>> {
        match mode {
            StartMode::New if files.checkpoint.exists() || files.log.exists() => {
                Err(refusal(files).into())
            }
            StartMode::Resume => {
                if !files.checkpoint.exists() {
                    return Err(UserError(format!(
                        "{}: no checkpoint to resume from; start the run without --resume",
                        files.checkpoint.display()
                    ))
                    .into());
                }
                let ck = checkpoint::read(&files.checkpoint)?;
                same_run(&ck)?;
                Ok(Some(ck))
            }
            _ => Ok(None),
        }
    }

    /// Open the run's files: a new run's (after keeping an earlier run's as backups when
    /// `Fresh`) starting from `fresh`, or a resumed run's, cut back to its checkpoint. The
    /// caller has checked the start with [`Session::check_start`]. A new run is saved at once,
    /// so its checkpoint exists from the start.
    pub fn open(
        vars: Vec<Variable>,
        files: RunFiles,
        mode: StartMode,
        fresh: RunState,
    ) -> Result<Session> {
        if mode == StartMode::Resume {
            let ck = checkpoint::read(&files.checkpoint)?;
            let log = match replay::format_of(&files.log)? {
                Format::Replay => {
                    let (log, read) = ReplayLog::resume(&files.log, ck.state.log_bytes)?;
                    // Every row's checksum, as `spsa report` will check them: a run goes on
                    // only from a history that reads (linear in the log, about a second for
                    // 10^7 rows).
                    read.check()?;
                    if !read.ends_at(&ck.state.theta) {
                        return Err(UserError(format!(
                            "{}: the θ log's last row does not give the checkpoint's θ ({}); one of them was changed",
                            files.log.display(),
                            files.checkpoint.display()
                        ))
                        .into());
                    }
                    Log::Replay(log)
                }
                _ => Log::Csv(ThetaLog::resume(&files.log, ck.state.log_bytes)?),
            };
            // Files the method appends to that an older checkpoint did not track are
            // tracked from their current length.
            let mut lengths = ck.state.outputs.clone();
            for path in &files.outputs {
                let name = path.to_string_lossy().into_owned();
                lengths
                    .entry(name)
                    .or_insert_with(|| std::fs::metadata(path).map_or(0, |m| m.len()));
            }
            let outputs = Outputs::resume(&lengths)?;
            return Ok(Session {
                vars,
                files,
                state: ck.state,
                parts: ck.parts,
                log,
                outputs,
                new_run: false,
            });
        }
        if mode == StartMode::Fresh {
            let all = [&files.log, &files.checkpoint]
                .into_iter()
                .chain(files.outputs.iter());
            for path in all {
                if path.exists() {
                    let bak = backup_name(path);
                    std::fs::rename(path, &bak).with_context(|| {
                        format!("{}: cannot move aside to {}", path.display(), bak.display())
                    })?;
                }
            }
        }
        let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
        let log = Log::Replay(ReplayLog::create(&files.log, &names)?);
        let outputs = Outputs::new(&files.outputs);
        let mut session = Session {
            vars,
            files,
            state: fresh,
            parts: Parts::default(),
            log,
            outputs,
            new_run: true,
        };
        session.save()?;
        Ok(session)
    }

    /// Whether this session started a new run (a resumed one has its header rows already).
    pub fn is_new_run(&self) -> bool {
        self.new_run
    }

    pub fn vars(&self) -> &[Variable] {
        &self.vars
    }

    pub fn files(&self) -> &RunFiles {
        &self.files
    }

    /// Append a θ log row with θ whole (flushed by the next save, or when the log says it is
    /// due): a method whose rows cannot be replayed.
    pub fn log_theta(&mut self, row: u64, theta: &[f64]) -> Result<()> {
        match &mut self.log {
            Log::Csv(log) => log.append_row(row, theta),
            Log::Replay(log) => log.append_theta(row, theta),
        }
    }

    /// Append the row of an applied SPSA update: iteration `k`'s `signal` moved θ to `theta`
    /// (see [`replay`]; a CSV log gets θ whole).
    #[inline]
    pub fn log_step(&mut self, row: u64, k: u64, signal: f64, theta: &[f64]) -> Result<()> {
        match &mut self.log {
            Log::Csv(log) => log.append_row(row, theta),
            Log::Replay(log) => log.append_step(row, k, signal, theta),
        }
    }

    /// Append the row of a result applied by a driver of `seed` and `spsa` outside the session
    /// (a shared run's mirror): as [`Session::log_step`], with the θ log defined by them first,
    /// from θ as the state holds it before the result (row `row - 1`), when its definition in
    /// force is another or none. So the rows are results that replay, as a local run's are, and
    /// a log begun with the same definition is the local run's byte for byte.
    pub fn log_result(
        &mut self,
        (seed, spsa): (u64, &crate::spsa::Spsa),
        row: u64,
        k: u64,
        signal: f64,
        theta: &[f64],
    ) -> Result<()> {
        if let Log::Replay(log) = &mut self.log
            && !log.is_defined_as(seed, spsa)
        {
            log.define(seed, spsa, row - 1, &self.state.theta)?;
        }
        self.log_step(row, k, signal, theta)
    }

    /// Make the θ log replayable by `spsa` with `seed` from θ as the state holds it now, if
    /// it is not yet (a new run's log; nothing for a CSV log).
    pub fn define_replay(&mut self, seed: u64, spsa: &crate::spsa::Spsa) -> Result<()> {
        match &mut self.log {
            Log::Replay(log) if !log.is_defined() => {
                log.define(seed, spsa, self.state.applied, &self.state.theta)
            }
            _ => Ok(()),
        }
    }

    /// Have a CSV θ log's rows formatted and written by a thread of their own (for a run that
    /// appends millions a second); [`Session::save`] still checkpoints only written rows. A
    /// format-2 log's rows are a few bytes and are written here.
    pub fn log_in_background(&mut self) -> Result<()> {
        match &mut self.log {
            Log::Csv(log) => log.in_background(),
            Log::Replay(_) => Ok(()),
        }
    }

    /// Flush the θ log if it has waited long enough (cheap to call after every row).
    pub fn flush_log_if_due(&mut self, now: std::time::Instant) -> Result<()> {
        match &mut self.log {
            Log::Csv(log) => log.flush_if_due(now),
            Log::Replay(log) => log.flush_if_due(now),
        }
    }

    /// Append a record to one of the run's output files, in one write.
    pub fn record(&mut self, record: &Record) -> Result<()> {
        self.outputs.append(record)
    }

    /// Flush the θ log and the records and write a checkpoint that holds them: a resume from
    /// it cuts every file back to what it holds.
    pub fn save(&mut self) -> Result<()> {
        self.state.log_bytes = match &mut self.log {
            Log::Csv(log) => log.flush()?,
            Log::Replay(log) => log.flush()?,
        };
        self.outputs.sync()?;
        self.state.outputs = self.outputs.lengths();
        checkpoint::write_with(&self.files.checkpoint, &self.state, &self.parts, &self.vars)
    }
}
