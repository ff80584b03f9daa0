pub mod exit;

pub use exit::CODE;
