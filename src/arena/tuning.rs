//! The real [`MatchSource`]: each SPSA iteration becomes a game pair between θ+ (Engine1) and
//! θ− (Engine2), with θ± rounded to the integers spin options take.

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use super::{Arena, OptionSet, PairLabel, describe_options};
use crate::engine::OptionValue;
use crate::source::{GameScore, MatchSource, PairOutcome, PairTask};
use crate::spsa::rounding::{RoundingMode, round_pair};
use crate::vars::Variable;

/// Plays the tuner's pairs in an [`Arena`].
pub struct TuningSource {
    arena: Arena,
    names: Vec<String>,
    bounds: Vec<(f64, f64)>,
    rounding: RoundingMode,
}

impl TuningSource {
    /// Check that every variable is an option of both engines whose range covers the variable's
    /// bounds, so a bad variables file fails before the first game.
    pub async fn new(
        arena: Arena,
        vars: &[Variable],
        rounding: RoundingMode,
    ) -> anyhow::Result<Self> {
        for ends in [0, 1] {
            let wishes: OptionSet = vars
                .iter()
                .map(|v| {
                    let end = if ends == 0 { v.min } else { v.max };
                    (v.name.clone(), OptionValue::Number(end.round()))
                })
                .collect();
            arena.validate(&wishes, &wishes).await?;
        }
        Ok(TuningSource {
            arena,
            names: vars.iter().map(|v| v.name.clone()).collect(),
            bounds: vars.iter().map(|v| (v.min, v.max)).collect(),
            rounding,
        })
    }

    /// The option values each side plays with for this task.
    pub fn option_sets(&self, task: &PairTask) -> (OptionSet, OptionSet) {
        let mut rng = SmallRng::seed_from_u64(task.seed);
        let mut plus = Vec::with_capacity(self.names.len());
        let mut minus = Vec::with_capacity(self.names.len());
        for (i, name) in self.names.iter().enumerate() {
            let (p, m) = (task.plus[i], task.minus[i]);
            let c_k = (p - m).abs() / 2.0;
            let (rp, rm) = round_pair(
                p,
                m,
                c_k,
                self.bounds[i],
                self.rounding,
                rng.random::<f64>(),
            );
            plus.push((name.clone(), OptionValue::Number(rp as f64)));
            minus.push((name.clone(), OptionValue::Number(rm as f64)));
        }
        (plus, minus)
    }
}

impl MatchSource for TuningSource {
    async fn play(&self, task: PairTask) -> anyhow::Result<PairOutcome> {
        let (plus, minus) = self.option_sets(&task);
        let label = PairLabel {
            round: task.iteration.to_string(),
            note: format!(
                "θ+ {}; θ− {}",
                describe_options(&plus, " "),
                describe_options(&minus, " ")
            ),
        };
        let pair = self
            .arena
            .play_pair(task.slot, task.opening, &plus, &minus, &label)
            .await?;
        let score = |v: i32| match v.signum() {
            1 => GameScore::Win,
            0 => GameScore::Draw,
            _ => GameScore::Loss,
        };
        Ok(PairOutcome {
            games: [score(pair.scores[0]), score(pair.scores[1])],
            faults: pair.faults,
        })
    }
}
