//! The live Elo curve as a run keeps it (`[track]`): the pure [`Track`] plus its file beside the
//! θ log and its table in the checkpoint. A local run and a shared run's owner keep it with
//! this same code; only where the measurements come from differs.

use std::path::PathBuf;

use anyhow::Result;

use super::{Session, TRACK_PART};
use crate::source::Record;
use crate::spsa::driver::Rounding;
use crate::spsa::track::{self, Point, Track, TrackPlan, TrackState, TrackUnit};

/// The curve of an open run and the file its points go to.
pub struct Curve {
    pub track: Track,
    file: PathBuf,
}

impl Curve {
    /// The curve of `session`: its state from the checkpoint's `[track]` table; a new run's
    /// file gets its header row. The file must be one of the session's outputs.
    pub fn open(
        session: &mut Session,
        plan: TrackPlan,
        pairs_per_iteration: u32,
        seed: u64,
        rounding: Rounding,
        file: PathBuf,
    ) -> Result<Curve> {
        let state: TrackState = session.parts.get(TRACK_PART)?.unwrap_or_default();
        if session.is_new_run() {
            session.record(&Record {
                path: file.clone(),
                text: track::CSV_HEADER.to_string(),
            })?;
        }
        let start = session.state.start.clone();
        let track = Track::new(plan, pairs_per_iteration, seed, start, rounding, state);
        Ok(Curve { track, file })
    }

    /// Record one measurement: its games' records, then its point's row in the curve's file.
    /// `None` (and nothing written) for a unit that is not pending.
    pub fn record(
        &mut self,
        session: &mut Session,
        unit: TrackUnit,
        pentanomial: [u64; 5],
        records: &[Record],
    ) -> Result<Option<Point>> {
        let Some(point) = self.track.finish(unit, pentanomial).cloned() else {
            return Ok(None);
        };
        for r in records {
            session.record(r)?;
        }
        session.record(&Record {
            path: self.file.clone(),
            text: point.csv_row(),
        })?;
        Ok(Some(point))
    }

    /// Put the curve's state into the checkpoint's `[track]` table (written by the next save).
    pub fn keep(&self, session: &mut Session) -> Result<()> {
        session.parts.set(TRACK_PART, self.track.state())
    }
}
