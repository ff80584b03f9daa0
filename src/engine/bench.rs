//! How fast an engine searches on this machine: a few fixed positions searched for a fixed
//! time each, nodes per second from the nodes the engine reports over the wall time we measure.
//! A shared run with a clock scales each worker's clock by a reference speed over this one.

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
