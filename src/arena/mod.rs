//! Real games: a pool of engine pairs, one per concurrency slot, started once and reused, playing
//! game pairs (one opening, colours reversed) through the arbiter. Used by the tuner (through
//! [`TuningSource`], the real [`crate::source::MatchSource`]) and by `spsa match`.
//!
//! Faults cost a game, never the run: the faulting engine is restarted (options re-sent) and the
//! pair goes on. Only an engine that cannot be started, or that faults in every game for
//! [`ArenaSettings::max_faulty_pairs`] pairs in a row, stops the run.

mod setup;
mod tuning;

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use shakmaty::Color;

use crate::engine::{
    EngineFault, EngineSpec, GoCommand, OptionValue, Player, SearchReply, UciEngine,
};
use crate::game::{Book, GameRecord, GameSettings, PgnOptions, play_game, write_pgn};
pub use setup::{book_options, engine_setup, game_settings};
pub use tuning::TuningSource;

/// One side's engine and the options it always plays with (Hash, Threads, OwnBook, …).
#[derive(Clone, Debug)]
pub struct EngineSetup {
    pub spec: EngineSpec,
    pub fixed: Vec<(String, OptionValue)>,
}

/// Options for one side of one pair: the values that differ between the sides.
pub type OptionSet = Vec<(String, OptionValue)>;

/// How the arena plays.
#[derive(Clone, Debug)]
pub struct ArenaSettings {
    pub game: GameSettings,
    /// Per-slot readable game log; `$THREAD` is replaced by the slot number (1-based).
    pub game_log: Option<PathBuf>,
    /// Append every game here as PGN.
    pub pgn: Option<PathBuf>,
    /// Stop after this many consecutive pairs in which every game ended in an engine fault.
    pub max_faulty_pairs: u32,
    /// Event tag for PGN output.
    pub event: String,
}

/// A finished pair, from side A's point of view (A is θ+ in tuning, the first engine in matches).
#[derive(Debug)]
pub struct PairGames {
    /// Game 1: A has White. Game 2: A has Black.
    pub games: [GameRecord; 2],
    /// +1/0/−1 per game for side A.
    pub scores: [i32; 2],
    /// Engine faults seen, by kind, e.g. "crash", "stall", "illegal move".
    pub faults: Vec<String>,
    /// Wall time from the end of game 1 to the end of game 2 not spent in engine searches:
    /// restarts, `ucinewgame`/`isready`, and our per-move work and I/O latency in game 2.
    pub overhead: Duration,
    /// From the end of game 1 to game 2's first `go` (restarts, `ucinewgame`, `isready`).
    pub gap: Duration,
}

/// Labels that go into game logs and PGN tags.
#[derive(Clone, Debug, Default)]
pub struct PairLabel {
    /// Round tag prefix, e.g. the iteration number.
    pub round: String,
    /// Extra text for the game log line (e.g. θ values).
    pub note: String,
}

struct Slot {
    a: UciEngine,
    b: UciEngine,
    /// Opened on the first game, so a run that fails to start leaves no files behind.
    game_log: LazyFile,
}

/// An append-mode output file opened when first written.
struct LazyFile {
    path: Option<PathBuf>,
    file: Option<File>,
}

impl LazyFile {
    fn new(path: Option<PathBuf>) -> Self {
        LazyFile { path, file: None }
    }

    /// The open file, or `None` when this output is not wanted.
    fn get(&mut self) -> Result<Option<&mut File>> {
        if self.file.is_none()
            && let Some(path) = &self.path
        {
            self.file = Some(open_append(path)?);
        }
        Ok(self.file.as_mut())
    }
}

/// The pool of engine pairs.
pub struct Arena {
    slots: Vec<tokio::sync::Mutex<Slot>>,
    book: Book,
    settings: ArenaSettings,
    pgn: Mutex<LazyFile>,
    /// Consecutive pairs in which every game ended in a fault.
    faulty_streak: Mutex<u32>,
}

impl Arena {
    /// Start `slots` pairs of engines (all at once), configure their fixed options, and check
    /// that every option the run will set exists. Fails with a clear message, before any game,
    /// when an engine cannot be started or an option is wrong.
    pub async fn start(
        setups: [EngineSetup; 2],
        slots: usize,
        book: Book,
        settings: ArenaSettings,
    ) -> Result<Arena> {
        let starts = (0..slots).map(|i| {
            let setups = &setups;
            let settings = &settings;
            async move {
                let (a, b) = tokio::join!(start_engine(&setups[0]), start_engine(&setups[1]));
                let game_log = settings.game_log.as_ref().map(|t| {
                    PathBuf::from(t.to_string_lossy().replace("$THREAD", &(i + 1).to_string()))
                });
                anyhow::Ok(Slot {
                    a: a?,
                    b: b?,
                    game_log: LazyFile::new(game_log),
                })
            }
        });
        let slots: Vec<Slot> = futures::future::try_join_all(starts).await?;
        let pgn = Mutex::new(LazyFile::new(settings.pgn.clone()));
        Ok(Arena {
            slots: slots.into_iter().map(tokio::sync::Mutex::new).collect(),
            book,
            settings,
            pgn,
            faulty_streak: Mutex::new(0),
        })
    }

    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Send `quit` to every engine and wait for the processes to exit (killing any that do not
    /// within their quit timeout), so they are reaped before the caller reads child CPU times.
    pub async fn quit_all(&self) {
        let quits = self.slots.iter().map(|slot| async move {
            let mut s = slot.lock().await;
            let s = &mut *s;
            tokio::join!(s.a.quit(), s.b.quit());
        });
        futures::future::join_all(quits).await;
    }

    /// Check option wishes against both engines' declared options without sending anything.
    pub async fn validate(
        &self,
        a: &[(String, OptionValue)],
        b: &[(String, OptionValue)],
    ) -> Result<()> {
        let slot = self.slots[0].lock().await;
        slot.a
            .validate_options(a.iter().map(as_wish))
            .map_err(anyhow::Error::new)?;
        slot.b
            .validate_options(b.iter().map(as_wish))
            .map_err(anyhow::Error::new)?;
        Ok(())
    }

    /// Play one pair in `slot` from opening number `opening`: A with `a_options` as White, then
    /// as Black. Engine faults are inside the result; an error means the run should stop.
    pub async fn play_pair(
        &self,
        slot: usize,
        opening: u64,
        a_options: &[(String, OptionValue)],
        b_options: &[(String, OptionValue)],
        label: &PairLabel,
    ) -> Result<PairGames> {
        let mut guard = self.slots[slot].lock().await;
        let s = &mut *guard;
        let opening = self.book.opening_for(opening);
        let mut faults = Vec::new();
        let game = &self.settings.game;

        let setup_a = prepare(&mut s.a, a_options).await?;
        let setup_b = prepare(&mut s.b, b_options).await?;
        let g1 = match (setup_a, setup_b) {
            (true, true) => play_game(&mut s.a, &mut s.b, opening, game).await,
            _ => startup_failure(&s.a, &s.b, setup_a, opening),
        };
        let g1_end = Instant::now();
        recover(&mut s.a, &mut s.b, &g1, &mut faults).await;
        let first_go = std::sync::OnceLock::new();
        let g2 = if s.a.is_running() && s.b.is_running() {
            let mut white = FirstGo {
                engine: &mut s.b,
                at: &first_go,
            };
            let mut black = FirstGo {
                engine: &mut s.a,
                at: &first_go,
            };
            play_game(&mut white, &mut black, opening, game).await
        } else {
            startup_failure(&s.b, &s.a, s.b.is_running(), opening)
        };
        let overhead = g1_end.elapsed().saturating_sub(game_duration(&g2));
        let gap = first_go
            .get()
            .map_or(Duration::ZERO, |t: &Instant| t.duration_since(g1_end));
        tracing::debug!(
            slot,
            gap_us = gap.as_micros() as u64,
            overhead_us = overhead.as_micros() as u64,
            "pair done"
        );
        recover(&mut s.b, &mut s.a, &g2, &mut faults).await;

        let scores = [g1.value_for(Color::White), g2.value_for(Color::Black)];
        for (i, g) in [&g1, &g2].into_iter().enumerate() {
            self.record(slot, &mut s.game_log, g, label, i + 1, a_options, b_options)?;
        }
        let all_faulty = [&g1, &g2].iter().all(|g| g.end.fault_kind().is_some());
        {
            let mut streak = self.faulty_streak.lock().unwrap_or_else(|e| e.into_inner());
            *streak = if all_faulty { *streak + 1 } else { 0 };
            if *streak >= self.settings.max_faulty_pairs {
                bail!(
                    "every game of the last {} pairs ended in an engine fault (last: {}); stopping",
                    *streak,
                    g2.end
                );
            }
        }
        Ok(PairGames {
            games: [g1, g2],
            scores,
            faults,
            overhead,
            gap,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        slot: usize,
        game_log: &mut LazyFile,
        g: &GameRecord,
        label: &PairLabel,
        game_no: usize,
        a_options: &[(String, OptionValue)],
        b_options: &[(String, OptionValue)],
    ) -> Result<()> {
        let (white_opts, black_opts) = if game_no == 1 {
            (a_options, b_options)
        } else {
            (b_options, a_options)
        };
        if let Some(log) = game_log.get()? {
            writeln!(
                log,
                "[{}] round {}.{} slot {}: {} (White) vs {} (Black), opening {}: {} {} after {} plies{}",
                timestamp(),
                label.round,
                game_no,
                slot + 1,
                g.white,
                g.black,
                g.opening_source,
                g.result.pgn(),
                g.end,
                g.ply_count(),
                if label.note.is_empty() {
                    String::new()
                } else {
                    format!("; {}", label.note)
                }
            )
            .context("cannot write game log")?;
        }
        let mut pgn = self.pgn.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = pgn.get()? {
            let options = PgnOptions {
                event: self.settings.event.clone(),
                site: "spsa".into(),
                date: pgn_date(),
                round: format!("{}.{}", label.round, game_no),
                extra_tags: vec![
                    ("WhiteOptions".into(), describe_options(white_opts, "; ")),
                    ("BlackOptions".into(), describe_options(black_opts, "; ")),
                ],
                move_comments: true,
            };
            let text = write_pgn(g, &options);
            file.write_all(text.as_bytes())
                .context("cannot write PGN")?;
        }
        Ok(())
    }
}

/// An engine in game 2, noting when the game's first search is requested (its first `go`).
struct FirstGo<'a> {
    engine: &'a mut UciEngine,
    at: &'a std::sync::OnceLock<Instant>,
}

impl Player for FirstGo<'_> {
    fn name(&self) -> &str {
        self.engine.name()
    }

    async fn new_game(&mut self) -> Result<(), EngineFault> {
        self.engine.new_game().await
    }

    async fn search(
        &mut self,
        start_fen: &str,
        moves: &[String],
        go: &GoCommand,
        deadline: Duration,
    ) -> Result<SearchReply, EngineFault> {
        self.at.get_or_init(Instant::now);
        self.engine.search(start_fen, moves, go, deadline).await
    }
}

async fn start_engine(setup: &EngineSetup) -> Result<UciEngine> {
    let mut engine = UciEngine::start(setup.spec.clone())
        .await
        .with_context(|| {
            format!(
                "cannot start engine `{}` ({})",
                setup.spec.name,
                setup.spec.command.display()
            )
        })?;
    engine
        .configure(setup.fixed.iter().map(as_wish))
        .await
        .map_err(anyhow::Error::new)?;
    Ok(engine)
}

/// Send this pair's options, restarting the engine once if it is down or fails. Returns whether
/// the engine is ready to play (a failure shows up as the game's `StartupFailed` end). Option
/// errors are fatal.
async fn prepare(engine: &mut UciEngine, options: &[(String, OptionValue)]) -> Result<bool> {
    for attempt in 0..2 {
        if (!engine.is_running() || attempt == 1)
            && let Err(e) = engine.restart().await
        {
            tracing::warn!("{}: restart failed: {e}", engine.spec().name);
            continue;
        }
        match engine.configure(options.iter().map(as_wish)).await {
            Ok(()) => return Ok(true),
            Err(crate::engine::EngineError::Option(e)) => return Err(e.into()),
            Err(crate::engine::EngineError::Fault(f)) => {
                tracing::warn!("{}: {f}", engine.spec().name);
            }
        }
    }
    // The game that cannot be played records the fault (`StartupFailed`), counted once there.
    Ok(false)
}

/// After a game: restart whichever engine faulted in a way that left it unusable.
async fn recover(
    white: &mut UciEngine,
    black: &mut UciEngine,
    g: &GameRecord,
    faults: &mut Vec<String>,
) {
    if let Some(kind) = g.end.fault_kind() {
        faults.push(kind.to_string());
    }
    let Some(fault) = &g.fault else { return };
    if !fault.fault.needs_restart() {
        return;
    }
    let engine = if fault.color == Color::White {
        white
    } else {
        black
    };
    if let Err(e) = engine.restart().await {
        tracing::warn!(
            "{}: restart after {} failed: {e}",
            engine.spec().name,
            fault.fault
        );
    }
}

/// A game that could not start because an engine is down: a loss for that engine.
fn startup_failure(
    white: &UciEngine,
    black: &UciEngine,
    white_ok: bool,
    opening: &crate::game::Opening,
) -> GameRecord {
    let by = if white_ok { Color::Black } else { Color::White };
    let end = crate::game::EndReason::StartupFailed { by };
    GameRecord {
        white: white.spec().name.clone(),
        black: black.spec().name.clone(),
        start_fen: opening.start_fen().to_string(),
        moves: Vec::new(),
        result: end.result(),
        end,
        fault: None,
        time_control: String::new(),
        opening_source: opening.source().to_string(),
    }
}

fn game_duration(g: &GameRecord) -> Duration {
    g.moves.iter().map(|m| m.elapsed).sum()
}

/// `(name, value)` as the engine module takes it (a named fn, so async callers stay `Send`).
fn as_wish(option: &(String, OptionValue)) -> (&str, &OptionValue) {
    (option.0.as_str(), &option.1)
}

/// Options as `name=value` joined by `separator` (text values unquoted), for logs and PGN tags.
pub fn describe_options(options: &[(String, OptionValue)], separator: &str) -> String {
    options
        .iter()
        .map(|(n, v)| match v {
            OptionValue::Text(t) => format!("{n}={t}"),
            other => format!("{n}={other}"),
        })
        .collect::<Vec<_>>()
        .join(separator)
}

fn open_append(path: &std::path::Path) -> Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create folder", dir.display()))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("{}: cannot open for writing", path.display()))
}

/// Seconds since the Unix epoch, for game log lines (no date crate needed).
fn timestamp() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Today's date as `YYYY.MM.DD` (UTC), from the civil-from-days algorithm.
fn pgn_date() -> String {
    let days = (timestamp() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}.{m:02}.{d:02}")
}
