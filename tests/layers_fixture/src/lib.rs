//! A tree for the layers test's own test (tests/layers.rs): never compiled.
pub mod cli;
pub mod engine;
pub mod error;
pub mod words;
