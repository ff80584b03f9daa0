//! Per-game settings: the search limit (clock or fixed nodes/depth/movetime), time margin,
//! stall deadlines, maximum length, score and tablebase adjudication.

use std::time::Duration;

use super::tablebase::Tablebases;
use crate::engine::GoCommand;

/// How each search is limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeControl {
    /// A clock per side: `base_ms` at the start, `inc_ms` added after each move.
    Clock { base_ms: u64, inc_ms: u64 },
    /// `go nodes N` (no clock; the stall timeout guards engines that ignore it).
    Nodes(u64),
    /// `go depth N` (no clock; the stall timeout guards it).
    Depth(u32),
    /// `go movetime N` ms; overrunning it by more than the time margin forfeits.
    MoveTime(u64),
    /// A clock counted in nodes, as Stockfish's `nodestime` option counts it: each engine is
    /// told `nodestime = nodes_per_ms` and searches as if every `nodes_per_ms` nodes were a
    /// millisecond, and a move costs its clock the nodes it searched over `nodes_per_ms`. Time
    /// management and time losses then follow the nodes, so machine load cannot change a game
    /// (fishtest's way of removing hardware noise).
    NodesClock {
        base_ms: u64,
        inc_ms: u64,
        nodes_per_ms: u64,
    },
}

impl TimeControl {
    /// The PGN `TimeControl` tag value: `base+inc` in seconds for clocks, `-` otherwise (no clock
    /// is kept; PGN has no form for node or depth limits).
    pub fn pgn_tag(&self) -> String {
        match *self {
            TimeControl::Clock { base_ms, inc_ms }
            | TimeControl::NodesClock {
                base_ms, inc_ms, ..
            } => {
                if inc_ms == 0 {
                    secs(base_ms)
                } else {
                    format!("{}+{}", secs(base_ms), secs(inc_ms))
                }
            }
            _ => "-".to_string(),
        }
    }

    /// A short human form: `10+0.1`, `10+0.1 nodestime=1500`, `nodes=5000`, `depth=8`,
    /// `movetime=100ms`.
    pub fn describe(&self) -> String {
        match *self {
            TimeControl::Clock { .. } => self.pgn_tag(),
            TimeControl::NodesClock { nodes_per_ms, .. } => {
                format!("{} nodestime={nodes_per_ms}", self.pgn_tag())
            }
            TimeControl::Nodes(n) => format!("nodes={n}"),
            TimeControl::Depth(d) => format!("depth={d}"),
            TimeControl::MoveTime(ms) => format!("movetime={ms}ms"),
        }
    }
}

/// Milliseconds as seconds with no trailing zeros: 10000 → "10", 100 → "0.1".
fn secs(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}", ms / 1000)
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        s.trim_end_matches('0').to_string()
    }
}

/// Draw adjudication by score.
///
/// Classic form (`both_sides == false`, the `DrawScoreLimit`/`DrawMoveLimit` keys): the game
/// is drawn after `moves` consecutive *engine moves* (plies; each engine's report counts as one)
/// whose mover reported |score| ≤ `score_cp`.
///
/// Safer cutechess/fastchess form (`both_sides == true`): `moves` counts full moves, so both
/// engines must each have reported |score| ≤ `score_cp` on their last `moves` moves (that is
/// 2×`moves` consecutive plies), and only once the game's full-move number is at least
/// `min_fullmove`.
///
/// A move without a score, or with a mate score, breaks the streak. `score_cp == 0` or
/// `moves == 0` disables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawAdjudication {
    pub score_cp: u32,
    pub moves: u32,
    pub both_sides: bool,
    /// Full-move number from which the draw may be adjudicated (0 or 1: from the start).
    pub min_fullmove: u32,
}

/// Win (resign) adjudication by score.
///
/// Classic form (`both_sides == false`, the `WinScoreLimit`/`WinMoveLimit` keys): after `moves`
/// consecutive engine moves (plies) in which the mover reported at least +`score_cp` for itself
/// (a vote for the mover) or at most −`score_cp` (a vote for its opponent), all voting for the
/// same side, that side wins.
///
/// Safer form (`both_sides == true`, cutechess `twosided`): `moves` counts full moves, so both
/// engines must agree for `moves` moves each (2×`moves` consecutive plies): the winner's view
/// ≥ +`score_cp` and the loser's ≤ −`score_cp`.
///
/// Mate scores count as beyond any limit. A move without a score breaks the streak.
/// `score_cp == 0` or `moves == 0` disables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WinAdjudication {
    pub score_cp: u32,
    pub moves: u32,
    pub both_sides: bool,
}

/// Both adjudication rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Adjudication {
    pub draw: DrawAdjudication,
    pub win: WinAdjudication,
}

impl Adjudication {
    /// The classic keys `DrawScoreLimit`, `DrawMoveLimit`, `WinScoreLimit`, `WinMoveLimit`
    /// (scores in cp, move limits in engine moves; 0 disables).
    pub fn classic(
        draw_score_limit: u32,
        draw_move_limit: u32,
        win_score_limit: u32,
        win_move_limit: u32,
    ) -> Adjudication {
        Adjudication {
            draw: DrawAdjudication {
                score_cp: draw_score_limit,
                moves: draw_move_limit,
                both_sides: false,
                min_fullmove: 0,
            },
            win: WinAdjudication {
                score_cp: win_score_limit,
                moves: win_move_limit,
                both_sides: false,
            },
        }
    }
}

/// Everything the arbiter needs to know about one game besides the players and the opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameSettings {
    pub time_control: TimeControl,
    /// Forfeit only when the clock is below −`time_margin` (cutechess/fastchess `timemargin`).
    pub time_margin: Duration,
    /// Extra wait beyond the time an engine may legally use before its search counts as stalled
    /// (clock and movetime games).
    pub stall_slack: Duration,
    /// How long a nodes/depth search may take before it counts as stalled.
    pub stall_timeout: Duration,
    /// Draw after this many plies (book moves included); 0 disables.
    pub max_plies: u32,
    pub adjudication: Adjudication,
    /// End a game by the tables' verdict once it reaches a position they cover.
    pub tablebases: Option<Tablebases>,
}

impl Default for GameSettings {
    fn default() -> GameSettings {
        GameSettings {
            time_control: TimeControl::Clock {
                base_ms: 10_000,
                inc_ms: 100,
            },
            time_margin: Duration::from_millis(50),
            stall_slack: Duration::from_secs(1),
            stall_timeout: Duration::from_secs(10),
            max_plies: 0,
            adjudication: Adjudication::default(),
            tablebases: None,
        }
    }
}

/// Both sides' clocks for one game, in milliseconds (signed: within the margin a clock may be
/// slightly negative before it is reset to zero).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clocks {
    tc: TimeControl,
    margin_ms: i64,
    /// Remaining time, [white, black].
    remaining_ms: [i64; 2],
}

/// Whether a move's time was within the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockVerdict {
    Ok,
    Forfeit,
}

impl Clocks {
    pub fn new(tc: TimeControl, margin: Duration) -> Clocks {
        let base = match tc {
            TimeControl::Clock { base_ms, .. } | TimeControl::NodesClock { base_ms, .. } => {
                base_ms as i64
            }
            _ => 0,
        };
        Clocks {
            tc,
            margin_ms: margin.as_millis() as i64,
            remaining_ms: [base, base],
        }
    }

    /// Remaining time of `side` (0 = white, 1 = black) in ms; meaningful for clock games only.
    pub fn remaining_ms(&self, side: usize) -> i64 {
        self.remaining_ms[side]
    }

    /// The `go` command for the next search (both clocks are sent, whoever is to move).
    pub fn go_command(&self) -> GoCommand {
        match self.tc {
            TimeControl::Clock { inc_ms, .. } | TimeControl::NodesClock { inc_ms, .. } => {
                GoCommand {
                    wtime_ms: Some(self.remaining_ms[0].max(0) as u64),
                    btime_ms: Some(self.remaining_ms[1].max(0) as u64),
                    winc_ms: Some(inc_ms),
                    binc_ms: Some(inc_ms),
                    ..GoCommand::default()
                }
            }
            TimeControl::Nodes(n) => GoCommand {
                nodes: Some(n),
                ..GoCommand::default()
            },
            TimeControl::Depth(d) => GoCommand {
                depth: Some(d),
                ..GoCommand::default()
            },
            TimeControl::MoveTime(ms) => GoCommand {
                movetime_ms: Some(ms),
                ..GoCommand::default()
            },
        }
    }

    /// How long the player may take before its search counts as stalled: for clocks the
    /// remaining time + margin + slack, for movetime the movetime + margin + slack, for
    /// nodes/depth the stall timeout. A clock in nodes is not a wall clock: a loaded machine
    /// may take several times the clock's milliseconds for its nodes, so the wait is four
    /// times the remaining time + margin, and never less than the stall timeout.
    pub fn deadline(&self, side: usize, slack: Duration, stall_timeout: Duration) -> Duration {
        let margin = Duration::from_millis(self.margin_ms as u64);
        let allowed =
            Duration::from_millis((self.remaining_ms[side] + self.margin_ms).max(0) as u64);
        match self.tc {
            TimeControl::Clock { .. } => allowed + slack,
            TimeControl::NodesClock { .. } => (allowed * 10).max(stall_timeout) + slack,
            TimeControl::MoveTime(ms) => Duration::from_millis(ms) + margin + slack,
            TimeControl::Nodes(_) | TimeControl::Depth(_) => stall_timeout,
        }
    }

    /// Charge a search of `elapsed` wall time and `nodes` (as the engine last reported them)
    /// to `side`. Clock games: subtract the time; below −margin is a forfeit; otherwise a
    /// negative clock is reset to 0 and the increment is added. A clock in nodes does the same
    /// with nodes / `nodes_per_ms` (rounded up), or the wall time when the engine reported no
    /// nodes. Movetime games: a forfeit when `elapsed` exceeds movetime + margin. Nodes/depth:
    /// never a forfeit.
    pub fn charge(&mut self, side: usize, elapsed: Duration, nodes: Option<u64>) -> ClockVerdict {
        let mut elapsed_ms = elapsed.as_millis().min(i64::MAX as u128) as i64;
        if let (TimeControl::NodesClock { nodes_per_ms, .. }, Some(nodes)) = (self.tc, nodes) {
            elapsed_ms = nodes.div_ceil(nodes_per_ms.max(1)).min(i64::MAX as u64) as i64;
        }
        match self.tc {
            TimeControl::Clock { inc_ms, .. } | TimeControl::NodesClock { inc_ms, .. } => {
                let left = self.remaining_ms[side].saturating_sub(elapsed_ms);
                if left < -self.margin_ms {
                    self.remaining_ms[side] = left;
                    return ClockVerdict::Forfeit;
                }
                self.remaining_ms[side] = left.max(0) + inc_ms as i64;
                ClockVerdict::Ok
            }
            TimeControl::MoveTime(ms) => {
                if elapsed_ms > ms as i64 + self.margin_ms {
                    ClockVerdict::Forfeit
                } else {
                    ClockVerdict::Ok
                }
            }
            TimeControl::Nodes(_) | TimeControl::Depth(_) => ClockVerdict::Ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_time_control_tags() {
        let tc = |b, i| TimeControl::Clock {
            base_ms: b,
            inc_ms: i,
        };
        assert_eq!(tc(10_000, 100).pgn_tag(), "10+0.1");
        assert_eq!(tc(60_000, 0).pgn_tag(), "60");
        assert_eq!(tc(1_500, 1_250).pgn_tag(), "1.5+1.25");
        assert_eq!(TimeControl::Nodes(5000).pgn_tag(), "-");
        assert_eq!(TimeControl::Nodes(5000).describe(), "nodes=5000");
    }

    #[test]
    fn clock_charges_resets_and_forfeits() {
        let tc = TimeControl::Clock {
            base_ms: 1000,
            inc_ms: 100,
        };
        let mut c = Clocks::new(tc, Duration::from_millis(50));
        assert_eq!(
            c.charge(0, Duration::from_millis(400), None),
            ClockVerdict::Ok
        );
        assert_eq!(c.remaining_ms(0), 700);
        // 30 ms over: within the margin, reset to 0 then +inc.
        assert_eq!(
            c.charge(0, Duration::from_millis(730), None),
            ClockVerdict::Ok
        );
        assert_eq!(c.remaining_ms(0), 100);
        let go = c.go_command();
        assert_eq!(go.wtime_ms, Some(100));
        assert_eq!(go.btime_ms, Some(1000));
        assert_eq!(go.winc_ms, Some(100));
        // 51 ms over: forfeit.
        assert_eq!(
            c.charge(0, Duration::from_millis(151), None),
            ClockVerdict::Forfeit
        );
        // Deadline for black: remaining + margin + slack.
        assert_eq!(
            c.deadline(1, Duration::from_millis(500), Duration::from_secs(9)),
            Duration::from_millis(1550)
        );
    }

    #[test]
    fn fixed_limits_deadlines_and_commands() {
        let slack = Duration::from_millis(500);
        let stall = Duration::from_secs(7);
        let c = Clocks::new(TimeControl::Nodes(1234), Duration::from_millis(50));
        assert_eq!(c.go_command().nodes, Some(1234));
        assert_eq!(c.go_command().wtime_ms, None);
        assert_eq!(c.deadline(0, slack, stall), stall);
        let c = Clocks::new(TimeControl::Depth(9), Duration::ZERO);
        assert_eq!(c.go_command().depth, Some(9));
        assert_eq!(c.deadline(1, slack, stall), stall);
        let mut c = Clocks::new(TimeControl::MoveTime(200), Duration::from_millis(50));
        assert_eq!(c.go_command().movetime_ms, Some(200));
        assert_eq!(c.deadline(0, slack, stall), Duration::from_millis(750));
        assert_eq!(
            c.charge(0, Duration::from_millis(250), None),
            ClockVerdict::Ok
        );
        assert_eq!(
            c.charge(0, Duration::from_millis(251), None),
            ClockVerdict::Forfeit
        );
        let mut c = Clocks::new(TimeControl::Nodes(1), Duration::ZERO);
        assert_eq!(
            c.charge(0, Duration::from_secs(100), None),
            ClockVerdict::Ok
        );
    }

    #[test]
    fn a_clock_in_nodes_charges_nodes_not_wall_time() {
        let tc = TimeControl::NodesClock {
            base_ms: 1000,
            inc_ms: 100,
            nodes_per_ms: 1500,
        };
        assert_eq!(tc.pgn_tag(), "1+0.1");
        assert_eq!(tc.describe(), "1+0.1 nodestime=1500");
        let mut c = Clocks::new(tc, Duration::from_millis(50));
        let go = c.go_command();
        assert_eq!((go.wtime_ms, go.winc_ms), (Some(1000), Some(100)));
        // 450,001 nodes are 301 ms of this clock (rounded up), whatever the wall time was: a
        // loaded machine that took 5 s for them does not lose on time.
        assert_eq!(
            c.charge(0, Duration::from_secs(5), Some(450_001)),
            ClockVerdict::Ok
        );
        assert_eq!(c.remaining_ms(0), 1000 - 301 + 100);
        // No nodes reported: the wall time is charged.
        assert_eq!(
            c.charge(0, Duration::from_millis(99), None),
            ClockVerdict::Ok
        );
        assert_eq!(c.remaining_ms(0), 799 - 99 + 100);
        // More nodes than the clock holds + margin: a forfeit, counted in nodes.
        assert_eq!(
            c.charge(0, Duration::from_millis(1), Some(1500 * 851)),
            ClockVerdict::Forfeit
        );
        // The wall wait is ten times the clock's, never below the stall timeout.
        let slack = Duration::from_millis(500);
        assert_eq!(
            c.deadline(1, slack, Duration::from_secs(2)),
            Duration::from_millis(10 * 1050 + 500)
        );
        assert_eq!(
            c.deadline(1, slack, Duration::from_secs(20)),
            Duration::from_millis(20_500)
        );
    }
}
