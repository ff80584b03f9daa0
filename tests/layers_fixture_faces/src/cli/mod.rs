//! The front door uses every command's file: not counted.
pub mod exit;
pub mod flags;
pub mod r#match;
pub mod match_db;
pub mod run;
pub mod simulate;

pub fn dispatch() {
    r#match::command();
    run::command();
}
