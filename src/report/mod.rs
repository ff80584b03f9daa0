//! What users see of a run: the progress line while it goes and the summary when it ends, and
//! `spsa report` afterwards (status table, plots, paste-able outputs).
//! Reads state, never changes it.

pub mod chart;
pub mod command;
pub mod elo_curve;
pub mod export;
pub mod history;
pub mod history_csv;
pub mod loss_curve;
pub mod plot;
pub mod progress;
pub mod status;
pub mod summary;

/// A report problem the user must fix (a missing or wrong file): exit status 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReportError(pub String);

impl crate::error::UserFacing for ReportError {
    fn is_user_error(&self) -> bool {
        true
    }
}
