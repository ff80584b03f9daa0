//! A ground-floor file that reaches the top through the front door's re-export.
use crate::cli::CODE;

pub fn two() -> u8 {
    CODE
}
