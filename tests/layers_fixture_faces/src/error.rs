//! The ground floor.

pub struct UserError;
