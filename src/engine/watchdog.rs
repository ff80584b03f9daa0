//! [`Watchdog`]: the deadline of a search whose answer is read by blocking the thread.
//!
//! A blocking `read` cannot time out, and a `poll` before every read costs a system call per
//! line the engine writes. Instead a thread per engine looks at the armed deadline about ten
//! times a second (arming and disarming only take an uncontended lock): when a search overruns
//! it, the watchdog sends `stop`, and if no answer ends the search within the grace, it kills
//! the process, which ends the blocked read with end-of-file. The reader then asks the watchdog
//! what it did, to tell a stalled engine from one that answered in time.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How late the watchdog may notice a passed deadline.
const TICK: Duration = Duration::from_millis(100);

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
    closing: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Only to end the thread promptly when the watchdog is dropped.
    wake: Condvar,
}

/// Watches one engine process's searches (see the module doc).
pub(super) struct Watchdog {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// A watchdog that writes `stop` to `stdin` (the engine's input) and kills process `pid`.
    pub(super) fn new(stdin: OwnedFd, pid: u32) -> std::io::Result<Watchdog> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let mine = shared.clone();
        let mut input = std::fs::File::from(stdin);
        let thread = std::thread::Builder::new()
            .name(format!("watchdog-{pid}"))
            .spawn(move || watch(&mine, &mut input, pid))?;
        Ok(Watchdog {
            shared,
            thread: Some(thread),
        })
    }

    /// Watch a search that started at `started` and must end by `deadline`.
    pub(super) fn arm(&self, started: Instant, deadline: Instant, grace: Duration) {
        self.lock().armed = Some(Armed {
            started,
            deadline,
            grace,
            verdict: Verdict::InTime,
        });
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

fn watch(shared: &Shared, input: &mut std::fs::File, pid: u32) {
    let mut state = shared
        .state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    loop {
        if state.closing {
            return;
        }
        let now = Instant::now();
        let mut next = now + TICK;
        if let Some(a) = state.armed.as_mut() {
            if a.verdict == Verdict::InTime && now >= a.deadline {
                // The pipe is non-blocking (shared with the runtime's handle): a full pipe
                // means the engine reads nothing, and the kill below deals with it.
                let _ = input.write_all(b"stop\n");
                a.verdict = Verdict::Stopped {
                    after: now - a.started,
                };
            }
            match a.verdict {
                Verdict::InTime => next = next.min(a.deadline),
                Verdict::Stopped { after } => {
                    let kill_at = a.started + after + a.grace;
                    if now >= kill_at {
                        // SAFETY: kill(2) with a pid and a signal number has no memory effects.
                        // The process cannot have been reaped (and its pid reused) while armed:
                        // the reader disarms before it reaps.
                        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                        a.verdict = Verdict::Killed { after };
                    } else {
                        next = next.min(kill_at);
                    }
                }
                Verdict::Killed { .. } => {}
            }
        }
        let wait = next.saturating_duration_since(Instant::now());
        state = match shared.wake.wait_timeout(state, wait) {
            Ok((s, _)) => s,
            Err(poisoned) => poisoned.into_inner().0,
        };
    }
}
