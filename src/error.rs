//! Whose problem an error is. Every error type of the crate says, beside its definition, whether
//! it is the user's to fix (a bad file, flag or option, an engine that does not start, a refused
//! start): it implements [`UserFacing`], per variant where the variants differ, and a transparent
//! wrapper asks the error it wraps. The exit policy that reads those answers lives at the top,
//! in `cli::exit`, which may name every error type; this file is on the ground floor and
//! imports nothing of the crate.

/// Whether an error is the user's to fix (exit status 2), decided where the type is defined.
pub trait UserFacing {
    /// True when the user must fix something (a file, a flag, an option, an engine's path, a
    /// database URL); false for faults of engines, machines and `spsa` itself.
    fn is_user_error(&self) -> bool;
}

/// A problem the user must fix, with one clear message (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UserError(pub String);

/// A [`UserError`] with this message, as `anyhow` code returns it.
pub fn user_error(message: impl Into<String>) -> anyhow::Error {
    UserError(message.into()).into()
}

impl UserFacing for UserError {
    fn is_user_error(&self) -> bool {
        true
    }
}
