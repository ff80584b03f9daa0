//! The other half: `r#match` is the file match.rs, not the front door.
use super::r#match::MatchArgs;

pub fn follow(_: MatchArgs, _: Option<f64>) {
    let _ = super::exit::code(&crate::error::UserError);
}
