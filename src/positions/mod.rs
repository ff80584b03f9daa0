//! Tuning from labelled positions: the data (positions with game results), the losses and the K
//! fit, the evaluation of positions through any UCI engine, and the methods that minimise the loss
//! over the engine's options (SPSA on the loss, Texel's local search).

pub mod eval;
pub mod extract;
pub mod labelled;
pub mod local;
pub mod loss;
pub mod loss_log;

pub use labelled::{LabelledPositions, Outcome, PositionsError};
pub use loss::{K_SETTLED, KFit, Loss, LossKind, fit_k, k_still_moving};
