//! A tree for the layers test's own test of the faces (tests/layers.rs): never compiled.
pub mod cli;
pub mod error;
