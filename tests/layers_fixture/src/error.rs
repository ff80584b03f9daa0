//! The ground floor, with a planted import up to the top floor.

pub struct UserError;

/// crate::cli in a doc comment does not count.
pub fn code() -> u8 {
    crate::cli::exit::CODE
}
