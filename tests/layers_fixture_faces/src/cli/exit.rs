//! Shared by every command.

pub fn code(_: &crate::error::UserError) -> u8 {
    2
}
