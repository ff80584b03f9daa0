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
    crate::platform::allowed_cpus()
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
    crate::platform::bind_this_thread(cpus)
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
    // Binding itself, and what the processes a bound thread starts inherit: the platform's
    // tests (`platform::unix`).
}
