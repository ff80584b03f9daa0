//! The platform interface on Unix (what is Linux's alone says so: affinity, time slices, the
//! `/proc` reads; elsewhere those answer "cannot").

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use super::Clock;

pub use std::os::fd::AsRawFd as Handle;

pub fn pipe() -> io::Result<(
    tokio::net::unix::pipe::Sender,
    tokio::net::unix::pipe::Receiver,
)> {
    tokio::net::unix::pipe::pipe()
}

pub fn blocking_reader(pipe: &impl AsRawFd) -> io::Result<File> {
    // Opening the descriptor's /proc entry opens the pipe anew: same pipe, own flags.
    File::open(format!("/proc/self/fd/{}", pipe.as_raw_fd()))
}

pub fn clone_writer(pipe: &impl AsRawFd) -> io::Result<File> {
    // SAFETY: the descriptor is open for as long as `pipe` is borrowed; it is only duplicated.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(pipe.as_raw_fd()) };
    Ok(File::from(fd.try_clone_to_owned()?))
}

enum Wait {
    Ready,
    Timeout,
    /// The descriptor is closed or in error (`POLLHUP` with nothing left to read counts as ready:
    /// the `read` then sees the end).
    Failed,
}

/// `poll(2)` one descriptor for `events` until `deadline`.
fn wait_for(fd: std::os::fd::RawFd, events: libc::c_short, deadline: Instant) -> Wait {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // Rounded up, so a wait never ends a little before the deadline and spins.
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        let mut p = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd, and its count is 1.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r > 0 {
            return if p.revents & (events | libc::POLLHUP | libc::POLLERR) != 0
                && p.revents & libc::POLLNVAL == 0
            {
                Wait::Ready
            } else {
                Wait::Failed
            };
        }
        if r == 0 {
            if left.is_zero() {
                return Wait::Timeout;
            }
            continue;
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return Wait::Failed;
        }
    }
}

pub fn write_all_until(pipe: &impl AsRawFd, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    let fd = pipe.as_raw_fd();
    while !bytes.is_empty() {
        // SAFETY: `bytes` is valid for reads of its length; `fd` is an open pipe.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n >= 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => match wait_for(fd, libc::POLLOUT, deadline) {
                Wait::Ready => {}
                Wait::Timeout => return Err(io::ErrorKind::TimedOut.into()),
                Wait::Failed => return Err(io::ErrorKind::BrokenPipe.into()),
            },
            _ => return Err(e),
        }
    }
    Ok(())
}

pub fn own_process_group(cmd: &mut tokio::process::Command) {
    cmd.process_group(0);
}

pub fn kill(pid: u32) {
    // SAFETY: kill(2) with a pid and a signal number has no memory effects.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
}

pub fn kill_group(pid: u32) {
    // SAFETY: as in `kill`; a negative pid names the group.
    unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGKILL) };
}

pub fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // Signal 0 checks existence and permission only; EPERM means it exists under another user.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

pub fn process_ended(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        state.is_empty() || state.contains(") Z ")
    }
    #[cfg(not(target_os = "linux"))]
    {
        !process_exists(pid)
    }
}

pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub async fn ctrl_c() {
    let _ = tokio::signal::ctrl_c().await;
}

pub async fn ctrl_c_or_terminate() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = ctrl_c() => {},
                _ = term.recv() => {},
            }
        }
        Err(_) => ctrl_c().await,
    }
}

pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is the empty set; sched_getaffinity fills at most its size.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let r =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if r != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: the index is below CPU_SETSIZE.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

pub fn bind_this_thread(cpus: &[usize]) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is the empty set, and CPU_SET is given indexes below
        // CPU_SETSIZE (checked); pid 0 is the calling thread.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in cpus {
            if cpu >= libc::CPU_SETSIZE as usize {
                return Err(io::ErrorKind::InvalidInput.into());
            }
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpus;
        Err(io::ErrorKind::Unsupported.into())
    }
}

/// `sched_setattr` with `sched_runtime` (Linux 6.12 and later, no privilege needed): an earlier
/// deadline under EEVDF, so the thread runs sooner when it wakes, for no more CPU.
pub fn ask_for_time_slice(slice: Duration) -> bool {
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
        if nice == -1 && io::Error::last_os_error().raw_os_error() != Some(0) {
            return false;
        }
        let attr = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            sched_policy: libc::SCHED_OTHER as u32,
            // Reset on fork: the processes this thread starts keep the default slice.
            sched_flags: SCHED_FLAG_RESET_ON_FORK,
            sched_nice: nice,
            sched_priority: 0,
            sched_runtime: u64::try_from(slice.as_nanos()).unwrap_or(u64::MAX),
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
        let _ = slice;
        false
    }
}

pub fn cpu_time(clock: Clock) -> Duration {
    let clock = match clock {
        Clock::Thread => libc::CLOCK_THREAD_CPUTIME_ID,
        Clock::Process => libc::CLOCK_PROCESS_CPUTIME_ID,
    };
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    if unsafe { libc::clock_gettime(clock, &mut t) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

pub fn open_files_limit() -> Option<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit through a valid pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    Some((lim.rlim_cur, lim.rlim_max))
}

pub fn set_open_files_limit(soft: u64) -> io::Result<()> {
    let (_, hard) = open_files_limit().ok_or_else(io::Error::last_os_error)?;
    let lim = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads one rlimit through a valid pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn make_executable(file: &File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o755))
}

pub fn read_exact_at(file: &File, out: &mut [u8], at: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(out, at)
}

pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_bound_thread_and_the_processes_it_starts_run_on_its_cores_only() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty(), "this process may run somewhere");
        let last = *allowed.last().unwrap();
        std::thread::spawn(move || {
            bind_this_thread(&[last]).unwrap();
            // SAFETY: sched_getcpu has no preconditions.
            assert_eq!(unsafe { libc::sched_getcpu() }, last as i32);
            assert_eq!(allowed_cpus(), vec![last]);
            let child = std::process::Command::new("grep")
                .args(["Cpus_allowed_list", "/proc/self/status"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&child.stdout);
            assert_eq!(
                text.split(':').nth(1).map(str::trim),
                Some(last.to_string().as_str())
            );
        })
        .join()
        .unwrap();
        // The binding was the spawned thread's alone.
        assert_eq!(allowed_cpus(), allowed);
        assert!(bind_this_thread(&[libc::CPU_SETSIZE as usize]).is_err());
    }

    /// This thread's `se.slice` in nanoseconds, where the kernel shows it.
    fn slice_ns() -> Option<u64> {
        let text = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
        let line = text.lines().find(|l| l.starts_with("se.slice"))?;
        line.split(':').nth(1)?.trim().parse().ok()
    }

    #[test]
    fn a_short_slice_keeps_the_nice_value_and_processes_started_after_it_do_not_inherit_it() {
        std::thread::spawn(|| {
            // SAFETY: raising this thread's own nice value needs no privilege.
            let tid = unsafe { libc::gettid() } as libc::id_t;
            assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, 3) }, 0);
            let before = slice_ns();
            let granted = ask_for_time_slice(Duration::from_micros(100));
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
            // A process started from this thread runs with the default slice.
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
