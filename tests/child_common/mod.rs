//! Helpers for tests that follow a child process while it runs.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Take `child`'s stderr and wait (60 s at most, not a fixed time: a loaded machine may take
/// long to get there) until a line of it contains `want`; the handle gives the whole of it once
/// the child has ended. A child that never says it is killed and the test fails.
pub fn stderr_until(child: &mut Child, want: &str) -> JoinHandle<Vec<u8>> {
    let stderr = child.stderr.take().expect("stderr piped");
    let (tx, lines) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut r = BufReader::new(stderr);
        let (mut all, mut line) = (Vec::new(), Vec::new());
        while r.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
            all.append(&mut line);
        }
        all
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.contains(want) => return reader,
            Ok(_) => {}
            Err(e) => {
                let _ = child.kill();
                panic!("no `{want}` on stderr: {e}");
            }
        }
    }
}

/// Stop `child` (SIGSTOP) and return once every thread of it is stopped (or it has ended): what
/// is read of its state afterwards stays true until [`go_on`] or a kill.
pub fn stop(child: &Child) {
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let stopped = || {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return true; // gone
        };
        tasks.flatten().all(|task| {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            // `pid (comm) S ...`: the state follows the last ')'; a thread gone has none.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            matches!(state, Some('T' | 't' | 'Z' | 'X') | None)
        })
    };
    let t = Instant::now();
    while !stopped() {
        assert!(t.elapsed() < Duration::from_secs(20), "{pid} never stopped");
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Let a child stopped by [`stop`] go on (SIGCONT).
pub fn go_on(child: &Child) {
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGCONT) },
        0
    );
}
