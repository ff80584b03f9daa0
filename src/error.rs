//! The one user-error type: input the user must fix (a bad flag, a refused start, a mismatched
//! resume). Everything that is the user's to fix exits with status 2; [`exit_code`] is the one
//! place that decides, from the error chain.

use crate::config::ConfigError;
use crate::config::vars::VarsError;
use crate::engine::{EngineFault, OptionError};
use crate::game::BookError;
use crate::report::ReportError;

/// A problem the user must fix, with one clear message (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UserError(pub String);

/// Exit status for an error: 2 for input the user must fix, 1 for everything else.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    let user = err.chain().any(|e| {
        e.is::<UserError>()
            || e.is::<ConfigError>()
            || e.is::<VarsError>()
            || e.is::<ReportError>()
            || e.is::<BookError>()
            || e.is::<OptionError>()
            || e.is::<crate::game::TablebaseError>()
            || e.is::<crate::positions::PositionsError>()
            || e.is::<crate::coefficients::CoefficientError>()
            || e.is::<crate::coefficients::objective::MappingError>()
            || matches!(
                e.downcast_ref::<crate::db::DbError>(),
                Some(crate::db::DbError::NotReached { .. } | crate::db::DbError::BadUrl { .. })
            )
            || matches!(
                e.downcast_ref::<EngineFault>(),
                Some(EngineFault::Startup(_))
            )
    });
    if user { 2 } else { 1 }
}
