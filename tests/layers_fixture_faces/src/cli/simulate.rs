//! A command that calls another command's file.

pub fn command() {
    crate::cli::run::tune(None);
}
