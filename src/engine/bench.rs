//! How fast an engine searches on this machine: a few fixed positions searched for a fixed
//! time each, nodes per second from the nodes the engine reports over the wall time we measure.
//! A shared run with a clock scales each worker's clock by a reference speed over this one.
//!
//! The same positions give an engine's search signature: the node counts of fixed-depth
//! searches (as `bench` prints them). Two builds of one engine search the same tree whatever
//! their speed; another program, or the same one with another evaluation weight, does not.

use std::time::Duration;

use super::{EngineError, EngineSpec, GoCommand, OptionValue, Player, UciEngine};

/// The positions searched: the start, an open middlegame, a tactical one (Kiwipete) and an
/// endgame, so one kind of position does not decide the speed.
const POSITIONS: [&str; 4] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 8",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/5pk1/6p1/3R4/7P/6P1/r4PK1/8 w - - 0 40",
];

/// How long each position is searched.
pub const SEARCH_MS: u64 = 400;

/// What the benchmark measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Speed {
    /// Nodes per second over all positions.
    pub nps: f64,
    pub nodes: u64,
    pub elapsed: Duration,
}

/// Start the engine, set `options` (Threads, Hash… as the games use them), search each
/// position for [`SEARCH_MS`], and quit. About 2 s. Err when the engine fails or reports no
/// node counts.
pub async fn measure(
    spec: EngineSpec,
    options: &[(String, OptionValue)],
) -> Result<Speed, EngineError> {
    let name = spec.name.clone();
    let mut engine = UciEngine::start(spec).await?;
    let measured = search_all(&mut engine, options).await;
    engine.quit().await;
    let (nodes, elapsed) = measured?;
    if nodes == 0 || elapsed.is_zero() {
        return Err(EngineError::Fault(super::EngineFault::Startup(format!(
            "engine `{name}` reported no node counts (`info … nodes N`) in {} searches, so its speed cannot be measured",
            POSITIONS.len()
        ))));
    }
    Ok(Speed {
        nps: nodes as f64 / elapsed.as_secs_f64(),
        nodes,
        elapsed,
    })
}

async fn search_all(
    engine: &mut UciEngine,
    options: &[(String, OptionValue)],
) -> Result<(u64, Duration), EngineError> {
    engine
        .configure(options.iter().map(|(n, v)| (n.as_str(), v)))
        .await?;
    let go = GoCommand {
        movetime_ms: Some(SEARCH_MS),
        ..GoCommand::default()
    };
    let (mut nodes, mut elapsed) = (0, Duration::ZERO);
    for fen in POSITIONS {
        engine.new_game().await?;
        let reply = engine
            .search(fen, &[], &go, Duration::from_millis(SEARCH_MS * 5 + 1000))
            .await?;
        nodes += reply.nodes.unwrap_or(0);
        elapsed += reply.elapsed;
    }
    Ok((nodes, elapsed))
}

/// An engine's search signature: the nodes it searched at `depth` in each position, in a fresh
/// process with the run's options set.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Signature {
    pub depth: u32,
    pub nodes: Vec<u64>,
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let nodes: Vec<String> = self.nodes.iter().map(u64::to_string).collect();
        write!(f, "depth {}: nodes {}", self.depth, nodes.join("/"))
    }
}

/// The owner's depth search stops at the first depth whose searches together take this long.
/// A tenth of a second is already hundreds of thousands of nodes for a fast engine, and every
/// worker pays it again before its first game: at 0.4 s a worker's start took about half a
/// second per engine (docs/records/shared-runs.md, "The signature's depth").
const SIGNATURE_BUDGET: Duration = Duration::from_millis(100);
/// The deepest depth tried (an engine that ignores `go depth` stops the search here).
const SIGNATURE_MAX_DEPTH: u32 = 30;
/// How long one fixed-depth search may take before the engine counts as stalled.
const SIGNATURE_DEADLINE: Duration = Duration::from_secs(60);

/// What the owner measured of an engine: its signature at a depth that costs about
/// [`SIGNATURE_BUDGET`] here, and whether a second measurement in a new process agreed.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    pub signature: Signature,
    /// False when two measurements differed (threads, randomness): only the hash can tell.
    pub repeatable: bool,
}

/// Measure an engine's signature for a run: deepen until a depth takes
/// [`SIGNATURE_BUDGET`], then measure that depth twice, each in a new process.
pub async fn identify(
    spec: &EngineSpec,
    options: &[(String, OptionValue)],
) -> Result<Identity, EngineError> {
    let mut engine = UciEngine::start(spec.clone()).await?;
    let chosen = choose_depth(&mut engine, options).await;
    engine.quit().await;
    let depth = chosen?;
    let first = signature(spec, options, depth).await?;
    let second = signature(spec, options, depth).await?;
    Ok(Identity {
        repeatable: first == second,
        signature: first,
    })
}

async fn choose_depth(
    engine: &mut UciEngine,
    options: &[(String, OptionValue)],
) -> Result<u32, EngineError> {
    engine
        .configure(options.iter().map(|(n, v)| (n.as_str(), v)))
        .await?;
    for depth in 1..=SIGNATURE_MAX_DEPTH {
        let (_, elapsed) = search_depth(engine, depth).await?;
        if elapsed >= SIGNATURE_BUDGET {
            return Ok(depth);
        }
    }
    Ok(SIGNATURE_MAX_DEPTH)
}

/// The engine's signature at `depth`: a new process, `options` set, each position searched.
/// Err when the engine fails or reports no node counts.
pub async fn signature(
    spec: &EngineSpec,
    options: &[(String, OptionValue)],
    depth: u32,
) -> Result<Signature, EngineError> {
    let mut engine = UciEngine::start(spec.clone()).await?;
    let measured = async {
        engine
            .configure(options.iter().map(|(n, v)| (n.as_str(), v)))
            .await?;
        search_depth(&mut engine, depth).await
    }
    .await;
    engine.quit().await;
    let (nodes, _) = measured?;
    if nodes.iter().all(|&n| n == 0) {
        return Err(EngineError::Fault(super::EngineFault::Startup(format!(
            "engine `{}` reported no node counts (`info … nodes N`) at depth {depth}, so its search signature cannot be measured",
            spec.name
        ))));
    }
    Ok(Signature { depth, nodes })
}

/// Search every position to `depth`: the nodes of each, and the wall time of all.
async fn search_depth(
    engine: &mut UciEngine,
    depth: u32,
) -> Result<(Vec<u64>, Duration), EngineError> {
    let go = GoCommand {
        depth: Some(depth),
        ..GoCommand::default()
    };
    let (mut nodes, mut elapsed) = (Vec::with_capacity(POSITIONS.len()), Duration::ZERO);
    for fen in POSITIONS {
        engine.new_game().await?;
        let reply = engine.search(fen, &[], &go, SIGNATURE_DEADLINE).await?;
        nodes.push(reply.nodes.unwrap_or(0));
        elapsed += reply.elapsed;
    }
    Ok((nodes, elapsed))
}

/// The factor a worker's clock is multiplied by: the run's reference speed over this
/// machine's, within [`SCALE_RANGE`] (a machine 10× slower still gets 4×, not a clock so long
/// that the run waits on it; a broken measurement cannot shrink the clock to nothing).
pub fn clock_scale(reference_nps: f64, own_nps: f64) -> f64 {
    let (lo, hi) = SCALE_RANGE;
    if !(reference_nps > 0.0 && own_nps > 0.0) {
        return 1.0;
    }
    (reference_nps / own_nps).clamp(lo, hi)
}

/// A worker's speed outside this range of the reference (as a factor) is not one machine of
/// the same engine against another: its run is refused there.
pub const PLAUSIBLE_SPEED: (f64, f64) = (0.05, 20.0);

/// The smallest and largest clock scale.
pub const SCALE_RANGE: (f64, f64) = (0.25, 4.0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slower_machine_gets_more_time_within_the_range() {
        assert_eq!(clock_scale(1e6, 1e6), 1.0);
        assert_eq!(clock_scale(1e6, 5e5), 2.0);
        assert_eq!(clock_scale(1e6, 2e6), 0.5);
        assert_eq!(clock_scale(1e6, 1e4), 4.0);
        assert_eq!(clock_scale(1e4, 1e6), 0.25);
        assert_eq!(clock_scale(0.0, 1e6), 1.0);
        assert_eq!(clock_scale(1e6, f64::NAN), 1.0);
    }
}
