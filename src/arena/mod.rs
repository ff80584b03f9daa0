//! Real games: a pool of engine pairs, one per concurrency slot, started once and reused, each
//! slot playing one game at a time through the arbiter on a thread of its own. Used by the games source (tuning and
//! `spsa match`), which schedules games, not pairs, so both games of a pair can run at once.
//!
//! Faults cost a game, never the run: the faulting engine is restarted (options re-sent) and
//! play goes on. Only an engine that cannot be started or configured is an error here; a streak
//! of faulty pairs is the caller's to judge (it sees every game).

mod records;
mod setup;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use shakmaty::Color;

pub use crate::engine::setup::{EngineSetup, engine_setup, open_engine_log};
use crate::engine::{
    EngineError, EngineFault, EngineLog, NODESTIME, OptionError, OptionValue, Player, UCI_CHESS960,
    UciEngine,
};
use crate::game::{Book, GameRecord, GameSettings, Opening, TimeControl, play_game};
use crate::runtime::cores;
use crate::runtime::thread_home::ThreadHome;
pub use records::{describe_options, game_log_line, pgn_text, summarize_options};
pub use setup::{book_options, game_settings, time_control};

/// Options for one side of one game: the values that differ between the sides.
pub type OptionSet = Vec<(String, OptionValue)>;

/// A finished game and what it cost.
#[derive(Debug)]
pub struct GamePlayed {
    pub record: GameRecord,
    /// Engine faults seen in this game (the one that ended it, and failed restarts before it),
    /// by the engine's side name and kind.
    pub faults: Vec<(String, String)>,
    /// Wall time of the game not spent in engine searches: option changes, `ucinewgame`,
    /// `isready`, restarts, and our per-move work and I/O latency.
    pub overhead: Duration,
}

/// What the arena needs of an engine besides playing: its life cycle and its options. The UCI
/// engine process implements it; tests seat scripted players, so the arena's own rules (options
/// sent once, restarts after faults, start-up failures) are checked without processes.
pub trait Seat: Player {
    /// Whether the process is up (false after a crash the arena has not repaired yet).
    fn is_running(&self) -> bool;
    /// Start again after a fault, with every option set so far.
    fn restart(&mut self) -> impl Future<Output = Result<(), EngineFault>> + Send;
    /// Check options against the engine's declared ones without sending anything.
    fn validate(&self, options: &[(String, OptionValue)]) -> Result<(), OptionError>;
    /// Send options (all validated first) and wait until the engine is ready.
    fn configure(
        &mut self,
        options: &[(String, OptionValue)],
    ) -> impl Future<Output = Result<(), EngineError>> + Send;
    /// Ask the engine to quit and wait for it to exit.
    fn quit(&mut self) -> impl Future<Output = ()> + Send;
    /// The options the engine declared at its handshake (none for a scripted player).
    fn declared(&self) -> &[crate::engine::options::UciOption] {
        &[]
    }
}

impl Seat for UciEngine {
    fn is_running(&self) -> bool {
        UciEngine::is_running(self)
    }
    fn restart(&mut self) -> impl Future<Output = Result<(), EngineFault>> + Send {
        UciEngine::restart(self)
    }
    fn validate(&self, options: &[(String, OptionValue)]) -> Result<(), OptionError> {
        self.validate_options(options.iter().map(as_wish))
    }
    async fn configure(&mut self, options: &[(String, OptionValue)]) -> Result<(), EngineError> {
        UciEngine::configure(self, options.iter().map(as_wish)).await
    }
    fn declared(&self) -> &[crate::engine::options::UciOption] {
        self.options()
    }
    fn quit(&mut self) -> impl Future<Output = ()> + Send {
        UciEngine::quit(self)
    }
}

struct Engine<E> {
    uci: E,
    /// The per-game options last configured, so an unchanged set is not sent again.
    configured: Option<OptionSet>,
}

struct Slot<E> {
    a: Engine<E>,
    b: Engine<E>,
}

/// The pool of engine pairs. Each slot's engines live on a thread of their own with a
/// single-threaded runtime: an engine's output lines wake only the thread that plays its game
/// (as in fastchess, a thread per game), and the caller is woken once per game, not per line.
/// During a search the slot's thread blocks in `read` on the engine's pipe (see
/// [`UciEngine::block_searches`]); between searches it gives its runtime a turn every 50 ms, so
/// a shutdown abandons a game within one move.
/// Dropping the arena closes every slot and waits for its thread: the engines are gone (quit
/// or killed) when the arena is, also on error paths that skip `quit_all`.
pub struct Arena<E: Seat + 'static = UciEngine> {
    slots: Vec<ThreadHome<Slot<E>>>,
    book: Arc<Book>,
    game: Arc<GameSettings>,
    /// Every line to and from the engines (`--engine-log`), flushed after each game.
    log: Option<EngineLog>,
}

impl Arena<UciEngine> {
    /// Start `slots` pairs of engines (all at once), configure their fixed options, and check
    /// that every option the run will set exists. Fails with a clear message, before any game,
    /// when an engine cannot be started or an option is wrong. With `log`, every line to and
    /// from the engines goes there, tagged with the slot (1, 2, …) and the engine's name. With
    /// `bind`, when the slots fill this process's cores exactly (each slot needs as many as its
    /// engines' `Threads`), each slot and its engines get cores of their own (see
    /// [`crate::runtime::cores`]).
    pub async fn start(
        setups: [EngineSetup; 2],
        slots: usize,
        book: Book,
        game: GameSettings,
        log: Option<EngineLog>,
        bind: bool,
    ) -> Result<Arena> {
        open_files_for(slots)?;
        let chess960 = book.chess960();
        let nodestime = match game.time_control {
            TimeControl::NodesClock { nodes_per_ms, .. } => Some(nodes_per_ms),
            _ => None,
        };
        let slots = slots.max(1);
        let cores = if bind {
            let per_slot = setups.iter().map(EngineSetup::threads).max().unwrap_or(1);
            cores::slot_cores(slots, per_slot, &cores::allowed_cpus())
        } else {
            None
        };
        let pairs = (0..slots).map(|index| {
            let mut setups = setups.clone();
            for s in &mut setups {
                s.spec.log = log.as_ref().map(|l| l.seat(index + 1));
            }
            let own = cores.as_ref().map(|c| c[index].clone());
            move || async move {
                // On the slot's thread, before the engines start: they inherit the binding.
                if let Some(own) = own
                    && let Err(e) = cores::bind_this_thread(&own)
                {
                    tracing::debug!(slot = index + 1, ?own, "not bound to its cores: {e}");
                }
                let (a, b) = tokio::join!(
                    start_engine(&setups[0], chess960, nodestime),
                    start_engine(&setups[1], chess960, nodestime)
                );
                anyhow::Ok((a?, b?))
            }
        });
        let mut arena = Arena::open(pairs, book, game).await?;
        arena.log = log;
        Ok(arena)
    }
}

impl<E: Seat + 'static> Arena<E> {
    /// An arena over engines already started and given their fixed options: one pair per slot.
    pub async fn seat(pairs: Vec<(E, E)>, book: Book, game: GameSettings) -> Result<Arena<E>> {
        let pairs = pairs
            .into_iter()
            .map(|pair| move || async move { anyhow::Ok(pair) });
        Arena::open(pairs, book, game).await
    }

    /// One thread per pair; `start` makes the pair on its thread (engine processes belong to
    /// the runtime that reads them). The pairs start at once; if one fails, the others are
    /// closed before the error returns.
    async fn open<F, Fut>(
        starts: impl IntoIterator<Item = F>,
        book: Book,
        game: GameSettings,
    ) -> Result<Arena<E>>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<(E, E)>>,
    {
        let homes = starts.into_iter().enumerate().map(|(index, start)| {
            ThreadHome::start(
                format!("spsa-slot-{}", index + 1),
                move || async move {
                    let (a, b) = start().await?;
                    Ok(Slot {
                        a: Engine {
                            uci: a,
                            configured: None,
                        },
                        b: Engine {
                            uci: b,
                            configured: None,
                        },
                    })
                },
                |s: &mut Slot<E>| Box::pin(s.quit_both()),
            )
        });
        let slots = futures::future::try_join_all(homes).await?;
        Ok(Arena {
            slots,
            book: Arc::new(book),
            game: Arc::new(game),
            log: None,
        })
    }

    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    pub fn book(&self) -> &Book {
        &self.book
    }

    pub fn game_settings(&self) -> &GameSettings {
        &self.game
    }

    /// Send `quit` to every engine and wait for the processes to exit (killing any that do not
    /// within their quit timeout), so they are reaped before the caller reads child CPU times.
    pub async fn quit_all(&self) {
        let quits = self
            .slots
            .iter()
            .map(|home| home.run(|s| Box::pin(s.quit_both())));
        futures::future::join_all(quits).await;
        if let Some(log) = &self.log {
            log.flush();
        }
    }

    /// Check option wishes against both engines' declared options without sending anything.
    pub async fn validate(
        &self,
        a: &[(String, OptionValue)],
        b: &[(String, OptionValue)],
    ) -> Result<()> {
        let (a, b) = (a.to_vec(), b.to_vec());
        self.slot(0)?
            .run(move |s| {
                Box::pin(async move {
                    s.a.uci
                        .validate(&a)
                        .and_then(|()| s.b.uci.validate(&b))
                        .map_err(anyhow::Error::new)
                })
            })
            .await?
    }

    /// The values side B's engine declares as its defaults for the options `names`: what it
    /// plays when none of them is sent. An option without a declared default is an error.
    pub async fn declared_defaults(&self, names: &[String]) -> Result<OptionSet> {
        let names = names.to_vec();
        self.slot(0)?
            .run(move |s| {
                Box::pin(async move {
                    // One index for all the names: 50,000 of them are not 50,000 scans.
                    let declared =
                        crate::engine::options::OptionTable::new(s.b.uci.declared().to_vec());
                    names
                        .iter()
                        .map(|n| {
                            let default = declared
                                .find(n)
                                .and_then(|o| match &o.kind {
                                    crate::engine::options::OptionKind::Spin {
                                        default: Some(d),
                                        ..
                                    } => Some(OptionValue::Number(*d as f64)),
                                    _ => None,
                                });
                            default.map(|d| (n.clone(), d)).ok_or_else(|| {
                                anyhow::anyhow!(
                                    "the engine declares no default value for option `{n}`, so the live curve cannot measure against its defaults"
                                )
                            })
                        })
                        .collect::<Result<OptionSet>>()
                })
            })
            .await?
    }

    /// Play one game in `slot` from opening number `opening` of the book's order: side A (with
    /// `a_options`) has White when `a_white`, else Black. Engine faults are inside the result;
    /// an error means play cannot go on (an option the engine rejects). A game whose caller
    /// stops waiting (shutdown) is abandoned and both engines are quit, so the next game starts
    /// them afresh rather than reading a stale search.
    pub async fn play_game(
        &self,
        slot: usize,
        opening: u64,
        a_white: bool,
        a_options: &[(String, OptionValue)],
        b_options: &[(String, OptionValue)],
    ) -> Result<GamePlayed> {
        self.play_game_in(
            slot,
            &self.book.clone(),
            opening,
            a_white,
            a_options,
            b_options,
        )
        .await
    }

    /// [`Arena::play_game`] from another book's order (the held-out openings a live curve
    /// measures on).
    pub async fn play_game_in(
        &self,
        slot: usize,
        book: &Arc<Book>,
        opening: u64,
        a_white: bool,
        a_options: &[(String, OptionValue)],
        b_options: &[(String, OptionValue)],
    ) -> Result<GamePlayed> {
        let (a, b) = (a_options.to_vec(), b_options.to_vec());
        let (book, game, log) = (book.clone(), self.game.clone(), self.log.clone());
        self.slot(slot)?
            .run_or_abandon(
                move |s| {
                    Box::pin(async move {
                        let opening = book.opening_for(opening);
                        let played = play_in(s, opening, a_white, &a, &b, &game).await;
                        if let Some(log) = log {
                            log.flush();
                        }
                        played
                    })
                },
                |s| Box::pin(s.quit_both()),
            )
            .await
            .with_context(|| format!("concurrency slot {} has stopped", slot + 1))?
    }

    /// Run `f` on slot `index`'s engines, on their thread.
    #[cfg(test)]
    async fn inspect<R: Send + 'static>(
        &self,
        index: usize,
        f: impl FnOnce(&mut Slot<E>) -> R + Send + 'static,
    ) -> R {
        self.slots[index]
            .run(move |s| Box::pin(async move { f(s) }))
            .await
            .expect("slot thread")
    }

    fn slot(&self, slot: usize) -> Result<&ThreadHome<Slot<E>>> {
        self.slots
            .get(slot)
            .ok_or_else(|| anyhow::anyhow!("no concurrency slot {}", slot + 1))
    }
}

impl<E: Seat> Slot<E> {
    /// Quit both engines; the next game configures them afresh.
    async fn quit_both(&mut self) {
        tokio::join!(self.a.uci.quit(), self.b.uci.quit());
        self.a.configured = None;
        self.b.configured = None;
    }
}

/// One game on a slot's pair (see [`Arena::play_game`]).
async fn play_in<E: Seat>(
    s: &mut Slot<E>,
    opening: &Opening,
    a_white: bool,
    a_options: &[(String, OptionValue)],
    b_options: &[(String, OptionValue)],
    settings: &GameSettings,
) -> Result<GamePlayed> {
    let started = Instant::now();
    let ready_a = prepare(&mut s.a, a_options).await?;
    let ready_b = prepare(&mut s.b, b_options).await?;
    let (white, black, white_ready, black_ready) = if a_white {
        (&mut s.a.uci, &mut s.b.uci, ready_a, ready_b)
    } else {
        (&mut s.b.uci, &mut s.a.uci, ready_b, ready_a)
    };
    let record = if white_ready && black_ready {
        play_game(white, black, opening, settings).await
    } else {
        startup_failure(white, black, white_ready, opening)
    };
    let mut faults = Vec::new();
    if let (Some(kind), Some(by)) = (record.end.fault_kind(), record.end.faulted()) {
        let name = if by == Color::White {
            white.name().to_string()
        } else {
            black.name().to_string()
        };
        // The engine's own account (its exit status and last words on stderr) goes to the
        // user; the tallies keep only the kind.
        if let Some(f) = &record.fault {
            tracing::warn!("{name}: {kind}: {}", f.fault);
        }
        faults.push((name, kind.to_string()));
    }
    recover(white, black, &record).await;
    if record.fault.is_some() {
        // A restarted engine has lost its per-game options.
        for e in [&mut s.a, &mut s.b] {
            if !e.uci.is_running() {
                e.configured = None;
            }
        }
    }
    let overhead = started.elapsed().saturating_sub(game_duration(&record));
    Ok(GamePlayed {
        record,
        faults,
        overhead,
    })
}

/// Start an engine on its slot's thread. The thread serves this pair alone, so searches are
/// read by blocking it (a `write`, and a `read` per batch of lines, with no runtime wake-ups in
/// between); the engine's watchdog keeps each search's deadline. For a Chess960 book the
/// engine must declare `UCI_Chess960`, which is set after its fixed options (so it wins over a
/// config's contrary wish); a restart re-sends it with them. A clock counted in nodes
/// (`nodestime`, [`TimeControl::NodesClock`]) is set the same way, and needs an engine that
/// declares the option.
async fn start_engine(
    setup: &EngineSetup,
    chess960: bool,
    nodestime: Option<u64>,
) -> Result<UciEngine> {
    let mut engine = UciEngine::start(setup.spec.clone()).await?;
    let declares = |name: &str| engine.options().find(name).is_some();
    if chess960 && !declares(UCI_CHESS960) {
        return Err(OptionError::NoChess960 {
            engine: setup.spec.name.clone(),
            command: setup.spec.command.display().to_string(),
        }
        .into());
    }
    if nodestime.is_some() && !declares(NODESTIME) {
        return Err(OptionError::NoNodestime {
            engine: setup.spec.name.clone(),
            command: setup.spec.command.display().to_string(),
        }
        .into());
    }
    engine.block_searches();
    let variant = chess960.then(|| (UCI_CHESS960.to_string(), OptionValue::Bool(true)));
    let nodes_clock = nodestime.map(|n| (NODESTIME.to_string(), OptionValue::Number(n as f64)));
    engine
        .configure(
            setup
                .fixed
                .iter()
                .chain(&variant)
                .chain(&nodes_clock)
                .map(as_wish),
        )
        .await?;
    Ok(engine)
}

/// Send this game's options unless the engine already has them, restarting the engine once if
/// it is down or fails. Returns whether the engine is ready to play (a failure shows up as the
/// game's `StartupFailed` end). Option errors are fatal.
async fn prepare<E: Seat>(
    engine: &mut Engine<E>,
    options: &[(String, OptionValue)],
) -> Result<bool> {
    if engine.uci.is_running() && engine.configured.as_deref() == Some(options) {
        return Ok(true);
    }
    engine.configured = None;
    let uci = &mut engine.uci;
    for attempt in 0..2 {
        if (!uci.is_running() || attempt == 1)
            && let Err(e) = uci.restart().await
        {
            tracing::warn!("{}: restart failed: {e}", uci.name());
            continue;
        }
        match uci.configure(options).await {
            Ok(()) => {
                engine.configured = Some(options.to_vec());
                return Ok(true);
            }
            Err(EngineError::Option(e)) => return Err(e.into()),
            Err(EngineError::Fault(f)) => {
                tracing::warn!("{}: {f}", uci.name());
            }
        }
    }
    // The game that cannot be played records the fault (`StartupFailed`), counted once there.
    Ok(false)
}

/// After a game: restart whichever engine faulted in a way that left it unusable.
async fn recover<E: Seat>(white: &mut E, black: &mut E, g: &GameRecord) {
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
            engine.name(),
            fault.fault
        );
    }
}

/// An engine's refusal of an option, reported where the user set it. `names` are the two
/// engines' names (side 1 and 2); `place(side, option, message)` gives the error at its place (a
/// config line, a flag), or `None` to leave `err` as it is.
pub fn option_error_at(
    err: anyhow::Error,
    names: [&str; 2],
    place: impl Fn(usize, &str, &str) -> Option<anyhow::Error>,
) -> anyhow::Error {
    let found = OptionError::find(&err).and_then(|o| {
        let (engine, option) = o.engine_and_option()?;
        let side = names.iter().position(|n| *n == engine)? + 1;
        place(side, option, &o.to_string())
    });
    found.unwrap_or(err)
}

/// A game that could not start because an engine is down: a loss for that engine.
fn startup_failure<E: Seat>(white: &E, black: &E, white_ok: bool, opening: &Opening) -> GameRecord {
    let by = if white_ok { Color::Black } else { Color::White };
    let end = crate::game::EndReason::StartupFailed { by };
    GameRecord {
        white: white.name().to_string(),
        black: black.name().to_string(),
        start_fen: opening.start_fen().to_string(),
        chess960: opening.castling_mode() == shakmaty::CastlingMode::Chess960,
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

/// Open files a slot holds: per engine its input, its output (twice: the runtime's handle and
/// the blocking one), the watchdog's copy of its input and the runtime's pidfd; the slot
/// runtime's own (epoll, its waker, signals). Measured: 907 open at 64 slots.
const FILES_PER_SLOT: u64 = 2 * 5 + 4;

/// Make sure `slots` slots can open their files: raise the soft limit on open files (often
/// 1024) up to the hard one when they need more, as a game manager at 256 games needs. An
/// error when even the hard limit is too low, before any engine starts.
fn open_files_for(slots: usize) -> Result<()> {
    let needed = 64 + FILES_PER_SLOT * slots as u64;
    let Some((soft, hard)) = crate::platform::open_files_limit() else {
        return Ok(());
    };
    if soft >= needed {
        return Ok(());
    }
    if hard < needed {
        anyhow::bail!(
            "{slots} concurrent games need about {needed} open files, and the limit is {} \
             (`ulimit -n`): lower the concurrency or raise the limit",
            hard
        );
    }
    let soft = needed.max(soft.saturating_mul(2)).min(hard);
    if let Err(e) = crate::platform::set_open_files_limit(soft) {
        anyhow::bail!(
            "{slots} concurrent games need about {needed} open files, and the limit cannot \
             be raised: {e}"
        );
    }
    tracing::debug!(limit = soft, "raised the limit on open files");
    Ok(())
}

/// `(name, value)` as the engine module takes it (a named fn, so async callers stay `Send`).
fn as_wish(option: &(String, OptionValue)) -> (&str, &OptionValue) {
    (option.0.as_str(), &option.1)
}
