//! `spsa`: tune chess engine parameters by SPSA over game pairs (or positions).
//!
//! Layout, top to bottom: [`config`] and [`vars`] read the inputs; [`cli`] holds one file per
//! command and wires the parts; the pure core [`spsa`] (schedule, update, and
//! [`spsa::driver`], the delayed-update bookkeeping) decides what to try; a [`source`] turns each
//! [`source::Trial`] into a [`source::Measurement`] (the simulator, real games through [`arena`]
//! and [`game`], ...); the [`pool`] keeps every slot busy; the [`tuner`] applies measurements and
//! keeps the run on disk; [`report`] and [`stats`] show where it stands.

pub mod arena;
pub mod cli;
pub mod coefficients;
pub mod config;
pub mod db;
pub mod engine;
pub mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
pub mod game;
pub mod matchrun;
pub mod method;
pub mod output;
pub mod plan;
pub mod platform;
pub mod positions;
pub mod report;
pub mod runtime;
pub mod source;
pub mod spsa;
pub mod stats;
pub mod textfile;
pub mod tuner;
pub mod vars;
pub mod web;
