//! What users see of a run: the progress line while it goes and the summary when it ends.
//! Reads state, never changes it.

pub mod progress;
pub mod summary;
