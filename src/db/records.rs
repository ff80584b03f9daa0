//! Records (PGN games, game-log lines) travel from a worker to the run's owner inside the
//! report, so a shared run writes locally everything a local run does. A worker's source writes
//! them under placeholder names instead of paths, and the owner maps each name to one of its
//! own files: a worker never names a path on the owner's machine, and a record under any other
//! name is dropped.
//!
//! The report stores them in the same transaction that applies the result, so they are kept
//! exactly once; the owner appends them with the θ log and checkpoints the files' lengths (the
//! local tuner's [`Outputs`](crate::tuner::Outputs)), so a kill of the owner followed by
//! `--resume` neither loses nor repeats a game.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::config::Config;
use crate::source::Record;

/// The worker's PGN "path": the owner's PGN file.
pub const PGN: &str = "pgn";
/// The worker's game-log "path" before `$THREAD` is replaced by its slot number.
pub const GAME_LOG: &str = "game-log-$THREAD";
const GAME_LOG_PREFIX: &str = "game-log-";

/// Point a worker's copy of the run's config at the placeholder names (only for the files the
/// run's config asks for).
pub fn use_placeholders(config: &mut Config) {
    if config.game_log.is_some() {
        config.game_log = Some(PathBuf::from(GAME_LOG));
    }
    if let Some(games) = config.games.as_mut()
        && games.pgn.is_some()
    {
        games.pgn = Some(PathBuf::from(PGN));
    }
}

/// The records of a measurement as the report carries them (empty when there are none).
pub fn encode(records: &[Record]) -> String {
    if records.is_empty() {
        return String::new();
    }
    serde_json::to_string(records).expect("records serialize")
}

/// The records a report carried.
pub fn decode(text: &str) -> Result<Vec<Record>> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(text).context("the records of a result are not JSON records")
}

/// Where the owner writes the records of its run.
#[derive(Clone, Debug, Default)]
pub struct Destinations {
    pgn: Option<PathBuf>,
    /// The game log of each of the owner's slots 1..=n.
    game_logs: Vec<PathBuf>,
}

impl Destinations {
    /// Records to `pgn` and to the game logs of slots 1..=n (`game_logs`).
    pub fn new(pgn: Option<PathBuf>, game_logs: Vec<PathBuf>) -> Destinations {
        Destinations { pgn, game_logs }
    }

    /// The run's own files, as its config names them: the PGN and the game log of each slot
    /// 1..=Concurrency (a worker's slot s writes to slot (s−1 mod Concurrency)+1).
    pub fn of(config: &Config) -> Destinations {
        Destinations::new(
            config.games.as_ref().and_then(|g| g.pgn.clone()),
            (1..=config.concurrency.max(1))
                .filter_map(|slot| config.game_log_for(slot))
                .collect(),
        )
    }

    /// Every file records may go to (tracked from the start, so a checkpoint holds them all).
    pub fn paths(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self.pgn.iter().cloned().collect();
        for p in &self.game_logs {
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
        out
    }

    /// The owner's file for a record a worker named `name`; `None` for a name the run does not
    /// write (or a worker should never send).
    pub fn place(&self, name: &std::path::Path) -> Option<PathBuf> {
        let name = name.to_str()?;
        if name == PGN {
            return self.pgn.clone();
        }
        let slot: usize = name.strip_prefix(GAME_LOG_PREFIX)?.parse().ok()?;
        if slot == 0 || self.game_logs.is_empty() {
            return None;
        }
        Some(self.game_logs[(slot - 1) % self.game_logs.len()].clone())
    }
}

/// What a report sends of a measurement: W/D/L, the pentanomial, the faults and the records.
/// A measurement holds one iteration's (or pair's) games: its counts fit an i32.
pub(super) fn report_fields(
    m: &crate::source::Measurement,
) -> (i32, i32, i32, Vec<i32>, Vec<String>, String) {
    let tally = m.tally();
    let count = |n: u64| i32::try_from(n).unwrap_or(i32::MAX);
    let faults: Vec<String> = m
        .faults
        .iter()
        .map(|f| format!("{}: {}", f.side, f.kind))
        .collect();
    (
        count(tally.wins),
        count(tally.draws),
        count(tally.losses),
        tally.pentanomial.map(count).to_vec(),
        faults,
        encode(&m.records),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_map_to_the_owners_files_and_nothing_else() {
        let d = Destinations {
            pgn: Some(PathBuf::from("/owner/run.pgn")),
            game_logs: vec![
                PathBuf::from("/owner/g1.log"),
                PathBuf::from("/owner/g2.log"),
            ],
        };
        let slot = |s: usize| PathBuf::from(GAME_LOG.replace("$THREAD", &s.to_string()));
        assert_eq!(d.place(&PathBuf::from(PGN)), Some("/owner/run.pgn".into()));
        assert_eq!(d.place(&slot(1)), Some("/owner/g1.log".into()));
        assert_eq!(d.place(&slot(4)), Some("/owner/g2.log".into()));
        assert_eq!(d.place(&slot(0)), None);
        assert_eq!(d.place(&PathBuf::from("/home/owner/.bashrc")), None);
        assert_eq!(d.place(&PathBuf::from("game-log-../x")), None);
        let none = Destinations::default();
        assert_eq!(none.place(&PathBuf::from(PGN)), None);
        assert_eq!(none.place(&slot(1)), None);
    }

    #[test]
    fn records_survive_the_trip() {
        let records = vec![Record {
            path: PathBuf::from(PGN),
            text: "[Event \"x\"]\n\n1. e4 *\n\n".into(),
        }];
        assert_eq!(decode(&encode(&records)).unwrap(), records);
        assert_eq!(encode(&[]), "");
        assert!(decode("").unwrap().is_empty());
        assert!(decode("not json").is_err());
    }
}
