//! One half of a circle the test must see through a raw identifier.
use super::flags::nps;
use super::match_db::follow;

pub struct MatchArgs;

pub fn command() {
    follow(MatchArgs, nps("1"));
}
