//! What every loop runs on: the async slots that keep engines busy (`pool`), the one shutdown
//! signal (`shutdown`), values that live on an OS thread of their own (`thread_home`), and the
//! threads' requests to the scheduler (`cores`, `slice`).

pub mod cores;
pub mod pool;
pub mod shutdown;
pub mod slice;
pub mod thread_home;
