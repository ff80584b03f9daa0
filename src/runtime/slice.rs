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
    #[cfg(target_os = "linux")]
    {
        /// `sched_setattr(2)`'s flag: children start with the default scheduling attributes.
        const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;
        /// `struct sched_attr` of `sched_setattr(2)`.
        #[repr(C)]
        struct SchedAttr {
            size: u32,
            sched_policy: u32,
            sched_flags: u64,
            sched_nice: i32,
            sched_priority: u32,
            sched_runtime: u64,
            sched_deadline: u64,
            sched_period: u64,
        }
        // SAFETY: getpriority reads this thread's nice value; errno is reset first because -1
        // is also a valid nice value.
        let nice = unsafe {
            *libc::__errno_location() = 0;
            libc::getpriority(libc::PRIO_PROCESS, 0)
        };
        if nice == -1 && std::io::Error::last_os_error().raw_os_error() != Some(0) {
            return false;
        }
        let attr = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            sched_policy: libc::SCHED_OTHER as u32,
            // Reset on fork: the engines this thread starts keep the default slice.
            sched_flags: SCHED_FLAG_RESET_ON_FORK,
            sched_nice: nice,
            sched_priority: 0,
            sched_runtime: 100_000,
            sched_deadline: 0,
            sched_period: 0,
        };
        // SAFETY: the attribute is a valid, fully initialised `struct sched_attr` of the size
        // it states; pid 0 is the calling thread.
        let r = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
        r == 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// This thread's `se.slice` in nanoseconds, where the kernel shows it.
    fn slice_ns() -> Option<u64> {
        let text = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
        let line = text.lines().find(|l| l.starts_with("se.slice"))?;
        line.split(':').nth(1)?.trim().parse().ok()
    }

    #[test]
    fn a_short_slice_keeps_the_nice_value_and_engines_started_after_it_do_not_inherit_it() {
        std::thread::spawn(|| {
            // SAFETY: raising this thread's own nice value needs no privilege.
            let tid = unsafe { libc::gettid() } as libc::id_t;
            assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, 3) }, 0);
            let before = slice_ns();
            let granted = ask_for_short_slices();
            assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) }, 3);
            // SAFETY: reads the calling thread's policy.
            let policy = unsafe { libc::sched_getscheduler(0) };
            assert_eq!(policy & !libc::SCHED_RESET_ON_FORK, libc::SCHED_OTHER);
            match (granted, before) {
                (true, Some(_)) => assert_eq!(slice_ns(), Some(100_000)),
                (false, _) => assert_eq!(slice_ns(), before, "refused, nothing changed"),
                (true, None) => {}
            }
            let child = std::process::Command::new("grep")
                .args(["se.slice", "/proc/self/sched"])
                .output()
                .unwrap();
            // An engine started from this thread searches with the default slice.
            let child: u64 = String::from_utf8_lossy(&child.stdout)
                .split(':')
                .nth(1)
                .map_or(0, |v| v.trim().parse().unwrap());
            if granted {
                assert!(child > 100_000, "the child's slice is {child} ns");
            }
        })
        .join()
        .unwrap();
    }
}
