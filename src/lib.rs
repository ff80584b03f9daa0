//! `spsa`: tune chess engine parameters by SPSA over game pairs.
//!
//! Configuration flows in at the top ([`config`], [`vars`]), the pure optimizer ([`spsa`]) decides
//! what to try, a [`source::MatchSource`] (the [`simulate`] model or real engines) turns each trial
//! into a result, and the [`tuner`] feeds results back and writes logs and checkpoints.

pub mod app;
pub mod arena;
pub mod coefficients;
pub mod config;
pub mod engine;
pub mod game;
pub mod matchrun;
pub mod positions;
pub mod report;
pub mod simulate;
pub mod source;
pub mod spsa;
pub mod stats;
pub mod study;
pub mod tuner;
pub mod vars;
