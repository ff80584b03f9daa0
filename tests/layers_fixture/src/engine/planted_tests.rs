use crate::cli::exit::CODE;
