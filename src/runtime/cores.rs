//! Cores of their own for each game slot, when the games fill the machine.
//!
//! Unpinned, Linux leaves cores idle between moves. When an engine answers `bestmove`, the
//! other engine of that game is told to search; Stockfish's search thread then wakes on the
//! core it last ran on, which is often the core where the other game's engine is searching,
//! while the core the game just left goes idle. The kernel's balancing moves it over only
//! later (a task that ran moments ago counts as cache-hot, and a core that idles briefly and
//! often skips the pull), so both searches share one core for a while. `perf sched` over 40
//! games (Stockfish, nodes=5000, concurrency 2, two cores) showed the cores idle 7–9% of the
//! time this way; fastchess kept them idle about 2%. With each slot's thread (and so the
//! engines it starts, and their threads) bound to cores of its own, a game's search, its
//! hand-over and the next search stay on one core, and the idle share fell below 1%
//! (docs/speed.md has the side-by-side figures).
//!
//! Binding is only done when the slots need exactly the cores this process may use: with
//! fewer slots, other programs' work (another `spsa` among them) could be bound onto the same
//! cores while others stay free; with more, slots would share cores and gain nothing.

/// The CPUs this process may run on, in ascending order (empty where it cannot be asked).
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

/// The cores of each slot: `slots` disjoint runs of `per_slot` CPUs from `allowed`, in order,
/// when they use every allowed CPU exactly; `None` otherwise (fewer or more are not bound, see
/// the module doc).
pub fn slot_cores(slots: usize, per_slot: usize, allowed: &[usize]) -> Option<Vec<Vec<usize>>> {
    if slots == 0 || per_slot == 0 || slots.checked_mul(per_slot)? != allowed.len() {
        return None;
    }
    Some(allowed.chunks(per_slot).map(<[usize]>::to_vec).collect())
}

/// Bind the calling thread to `cpus`. Threads and processes it starts afterwards inherit the
/// binding: a slot's engines and their search threads run on the slot's cores.
pub fn bind_this_thread(cpus: &[usize]) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is the empty set, and CPU_SET is given indexes below
        // CPU_SETSIZE (checked); pid 0 is the calling thread.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in cpus {
            if cpu >= libc::CPU_SETSIZE as usize {
                return Err(std::io::ErrorKind::InvalidInput.into());
            }
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpus;
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_get_disjoint_cores_only_when_they_fill_the_allowed_ones() {
        let allowed = [0, 1, 4, 5];
        assert_eq!(
            slot_cores(4, 1, &allowed),
            Some(vec![vec![0], vec![1], vec![4], vec![5]])
        );
        assert_eq!(
            slot_cores(2, 2, &allowed),
            Some(vec![vec![0, 1], vec![4, 5]])
        );
        // Fewer slots than cores: not bound (others may bind onto the same cores).
        assert_eq!(slot_cores(3, 1, &allowed), None);
        assert_eq!(slot_cores(1, 2, &allowed), None);
        // More: slots would share cores.
        assert_eq!(slot_cores(5, 1, &allowed), None);
        assert_eq!(slot_cores(2, 4, &allowed), None);
        assert_eq!(slot_cores(0, 1, &allowed), None);
        assert_eq!(slot_cores(1, 0, &allowed), None);
        assert_eq!(slot_cores(usize::MAX, 2, &allowed), None);
        assert_eq!(slot_cores(1, 1, &[]), None);
    }

    #[cfg(target_os = "linux")]
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
}
