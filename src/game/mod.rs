//! Games between two [`crate::engine::Player`]s: the arbiter (rules and adjudication with
//! shakmaty), clocks and limits, the opening book, PGN writing. Knows nothing about SPSA.
