//! What a trial of the live Elo curve is (see [`super::track`]): the words the driver's
//! [`super::driver::Trial`] and the curve's core share, kept apart so neither imports the other.

use serde::{Deserialize, Serialize};

/// What θ is measured against.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Against {
    /// The variables file's start column.
    #[default]
    Start,
    /// The engine's own defaults: the tuned options at the values the engine declares.
    Defaults,
}

impl Against {
    /// The config and command-line spelling.
    pub fn name(self) -> &'static str {
        match self {
            Against::Start => "start",
            Against::Defaults => "defaults",
        }
    }

    /// The spelling read back.
    pub fn parse(s: &str) -> Option<Against> {
        match s {
            "start" => Some(Against::Start),
            "defaults" => Some(Against::Defaults),
            _ => None,
        }
    }
}

/// Which measurement a trial is: the point and its opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackUnit {
    pub point: u64,
    pub against: Against,
}
