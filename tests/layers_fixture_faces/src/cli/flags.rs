//! Shared flags: every command may import this file.

pub fn nps(text: &str) -> Option<f64> {
    text.parse().ok()
}
