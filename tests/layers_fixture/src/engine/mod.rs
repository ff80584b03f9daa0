//! crate::cli::exit in a comment does not count, nor in a string, nor in test code.

#[cfg(test)]
mod planted_tests;

pub fn name() -> &'static str {
    "crate::cli::exit::CODE"
}

#[cfg(test)]
mod tests {
    use crate::cli::exit::CODE;

    #[test]
    fn two() {
        assert_eq!(CODE, 2);
    }
}
