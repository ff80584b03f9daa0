//! A command that imports only the shared files.
use super::flags;

pub fn command() {
    tune(flags::nps("2"));
}

pub fn tune(_: Option<f64>) {}
