//! The machine: the one shutdown signal (`shutdown`), values that live on an OS thread of their
//! own (`thread_home`), and the threads' requests to the scheduler (`cores`, `slice`). It knows
//! nothing above it: the async slots that keep engines busy are `source::pool`, beside the
//! sources they drive.

pub mod cores;
pub mod shutdown;
pub mod slice;
pub mod thread_home;
