//! From the typed config to the arena's game settings and book options (an engine's setup is
//! `engine::setup`).

use std::time::Duration;

use crate::config::{GamesConfig, LimitsConfig};
use crate::game::{
    Adjudication, BookOptions, BookOrder, GameSettings, TablebaseError, Tablebases, TimeControl,
};

/// The arbiter's settings from the config (which has one search limit at most: the config
/// readers refuse two). Opens the Syzygy tables when a folder is given (call once per process:
/// the settings' clones share them).
pub fn game_settings(g: &GamesConfig) -> Result<GameSettings, TablebaseError> {
    let l = &g.limits;
    let time_control = time_control(l);
    let a = &g.adjudication;
    let mut adjudication = Adjudication::classic(
        a.draw_score_limit.max(0) as u32,
        a.draw_move_limit,
        a.win_score_limit.max(0) as u32,
        a.win_move_limit,
    );
    adjudication.draw.min_fullmove = a.draw_min_move;
    adjudication.draw.both_sides = a.both_agree;
    adjudication.win.both_sides = a.both_agree;
    let tablebases = a.tb_path.as_deref().map(Tablebases::open).transpose()?;
    Ok(GameSettings {
        time_control,
        time_margin: Duration::from_millis(l.time_margin_ms),
        stall_timeout: Duration::from_millis(l.stall_timeout_ms),
        max_plies: g.max_plies.unwrap_or(0),
        adjudication,
        tablebases,
        ..GameSettings::default()
    })
}

/// The search limit the config sets.
pub fn time_control(l: &LimitsConfig) -> TimeControl {
    if let Some(base_ms) = l.base_time_ms {
        let inc_ms = l.inc_time_ms.unwrap_or(0);
        match l.nodestime {
            Some(nodes_per_ms) => TimeControl::NodesClock {
                base_ms,
                inc_ms,
                nodes_per_ms,
            },
            None => TimeControl::Clock { base_ms, inc_ms },
        }
    } else if let Some(ms) = l.movetime_ms {
        TimeControl::MoveTime(ms)
    } else if let Some(d) = l.depth {
        TimeControl::Depth(d)
    } else {
        TimeControl::Nodes(l.nodes.unwrap_or(1))
    }
}

/// Book order and ply limit from the config; `seed` fixes the random order.
pub fn book_options(g: &GamesConfig, seed: u64) -> BookOptions {
    BookOptions {
        order: if g.book_random {
            BookOrder::Random
        } else {
            BookOrder::Sequential
        },
        seed,
        max_plies: g.book_plies.map(|p| p as usize),
        variant: g.variant,
    }
}
