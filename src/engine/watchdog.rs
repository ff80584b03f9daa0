//! [`Watchdog`]: the deadline of a search whose answer is read by blocking the thread.
//!
//! A blocking `read` cannot time out, and a `poll` before every read costs a system call per
//! line the engine writes. Instead a thread per engine sleeps until the armed deadline, to the
//! timer's precision (a clock game's stall deadline is as exact as the runtime's timer was):
//! when a search overruns it, the watchdog sends `stop`, and if no answer ends the search within
//! the grace, it kills the process, which ends the blocked read with end-of-file. The reader
//! then asks the watchdog what it did, to tell a stalled engine from one that answered in time.
//!
//! Arming and disarming take an uncontended lock and, as a rule, wake nobody: the watchdog is
//! woken only when a new deadline comes before the one it sleeps towards (or when it sleeps
//! with nothing armed), so it wakes about once per deadline's length, not per move. A search
//! that ends early leaves the watchdog asleep; when it wakes at the old deadline it finds the
//! newer one armed (or none) and sleeps again.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::log::{Direction, LineLog};

/// The watchdog thread's stack: it only compares instants, writes `stop` and sends a signal.
const STACK: usize = 64 * 1024;

/// What the watchdog did to the search it watched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Nothing: the search ended before its deadline.
    InTime,
    /// The deadline passed and `stop` was sent at `after` into the search.
    Stopped { after: Duration },
    /// `stop` did not end the search within the grace: the process was killed.
    Killed { after: Duration },
}

struct Armed {
    started: Instant,
    deadline: Instant,
    grace: Duration,
    verdict: Verdict,
}

#[derive(Default)]
struct State {
    armed: Option<Armed>,
    /// When the sleeping watchdog will look next (`None`: not until woken).
    wakes_at: Option<Instant>,
    closing: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the watchdog for a deadline earlier than the one it sleeps towards, and to end it
    /// when it is dropped.
    wake: Condvar,
}

/// Watches one engine process's searches (see the module doc).
pub(super) struct Watchdog {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// A watchdog that writes `stop` to `stdin` (the engine's input, and to the engine log when
    /// there is one) and kills process `pid`.
    pub(super) fn new(
        stdin: std::fs::File,
        pid: u32,
        log: Option<LineLog>,
    ) -> std::io::Result<Watchdog> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let mine = shared.clone();
        let mut input = stdin;
        let thread = std::thread::Builder::new()
            .name(format!("watchdog-{pid}"))
            .stack_size(STACK)
            .spawn(move || watch(&mine, &mut input, pid, log.as_ref()))?;
        Ok(Watchdog {
            shared,
            thread: Some(thread),
        })
    }

    /// Watch a search that started at `started` and must end by `deadline`.
    pub(super) fn arm(&self, started: Instant, deadline: Instant, grace: Duration) {
        let mut state = self.lock();
        state.armed = Some(Armed {
            started,
            deadline,
            grace,
            verdict: Verdict::InTime,
        });
        let sooner = state.wakes_at.is_none_or(|at| deadline < at);
        drop(state);
        if sooner {
            self.shared.wake.notify_one();
        }
    }

    /// Stop watching; what was done to the search.
    pub(super) fn disarm(&self) -> Verdict {
        self.lock()
            .armed
            .take()
            .map_or(Verdict::InTime, |a| a.verdict)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.lock().closing = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn watch(shared: &Shared, input: &mut std::fs::File, pid: u32, log: Option<&LineLog>) {
    let mut state = shared
        .state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    loop {
        if state.closing {
            return;
        }
        let now = Instant::now();
        let mut next = None;
        if let Some(a) = state.armed.as_mut() {
            if a.verdict == Verdict::InTime && now >= a.deadline {
                // The pipe is non-blocking (shared with the runtime's handle): a full pipe
                // means the engine reads nothing, and the kill below deals with it.
                if let Some(log) = log {
                    log.lines(Direction::To, "stop");
                }
                let _ = input.write_all(b"stop\n");
                a.verdict = Verdict::Stopped {
                    after: now - a.started,
                };
            }
            match a.verdict {
                Verdict::InTime => next = Some(a.deadline),
                Verdict::Stopped { after } => {
                    let kill_at = a.started + after + a.grace;
                    if now >= kill_at {
                        // The process cannot have been reaped (and its pid reused) while armed:
                        // the reader disarms before it reaps.
                        crate::platform::kill(pid);
                        a.verdict = Verdict::Killed { after };
                    } else {
                        next = Some(kill_at);
                    }
                }
                Verdict::Killed { .. } => {}
            }
        }
        state.wakes_at = next;
        state = match next {
            Some(at) => {
                let wait = at.saturating_duration_since(Instant::now());
                match shared.wake.wait_timeout(state, wait) {
                    Ok((s, _)) => s,
                    Err(poisoned) => poisoned.into_inner().0,
                }
            }
            None => shared
                .wake
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        };
    }
}
