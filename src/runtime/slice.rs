//! Ask the kernel for short time slices on the threads that read engines.
//!
//! Linux's EEVDF scheduler (6.6 and later) lets a running task finish its slice (3 ms by default)
//! before a task that has just woken up gets the core. When both cores are busy with searching
//! engines, a thread woken by `bestmove` then waits up to a slice before it can hand the move to
//! the other engine, and that engine's core idles meanwhile. A thread that asks for a short slice
//! (`sched_setattr` with `sched_runtime`, Linux 6.12 and later, no privilege needed) gets an
//! earlier deadline and is run at once. It uses no more CPU for it: it only runs sooner. The
//! engines it starts do not inherit it (reset on fork): their searches keep the default slice.

/// Ask for a 0.1 ms slice for the calling thread, keeping its policy (SCHED_OTHER) and nice
/// value. False where the kernel does not offer it (older kernels ignore or refuse it; either
/// way nothing changes).
pub fn ask_for_short_slices() -> bool {
    crate::platform::ask_for_time_slice(std::time::Duration::from_micros(100))
}

// Tested where the call is made: `platform::unix`, a short slice keeps the nice value and the
// processes started after it do not inherit it.
