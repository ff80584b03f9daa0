//! Async slots: keeps every slot busy with the parts of trials, hands finished trials back, and
//! stops cleanly on shutdown. It knows no chess and no SPSA: a [`Feed`] says what to measure next
//! and what to do with a result (the tuner applies it, a match tallies it), a [`Source`] measures.
//!
//! Scheduling is by part, not by trial: a free slot takes the next part of the oldest unfinished
//! trial, and asks the feed for a new trial only when no part is waiting. So a pair's two games
//! run on two slots at once, and the last pair of a match does not leave a slot idle.
//!
//! A source that measures a trial the moment it is asked ([`Source::at_once`], the simulator)
//! is driven by a plain loop instead: no futures, no map of active trials, no allocation of the
//! pool's own per trial, and the runtime is visited (for signals and shutdown) every
//! [`YIELD_EVERY`] trials. The order is the async loop's, so a seed gives the same run either
//! way: with every part ready at once, that loop finishes trials in the order it started them,
//! each started while the slots' other trials were measured but not yet applied.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::Notify;

use crate::runtime::shutdown::Shutdown;
use crate::source::{AtOnce, Measurement, Source, Trial};

/// Where trials come from and where their measurements go.
pub trait Feed {
    /// The next trial to measure, or `None` when there is nothing to start now.
    fn next_trial(&mut self) -> Option<Trial>;

    /// Every part of `trial` finished; `measurement` merges them in part order. An error stops
    /// the pool after this trial (it has been handed over, so it counts).
    fn finished(&mut self, trial: Trial, measurement: Measurement) -> Result<()>;

    /// [`Feed::next_trial`] into a trial the pool keeps (a source measured at once): a feed
    /// that can fill one in place reuses its vectors. False when there is nothing to start.
    fn next_trial_into(&mut self, trial: &mut Trial) -> bool {
        match self.next_trial() {
            Some(t) => {
                *trial = t;
                true
            }
            None => false,
        }
    }

    /// [`Feed::finished`] for a trial and measurement the pool keeps to reuse (a source
    /// measured at once): a feed that only reads them leaves them there, and the next trial
    /// is written and measured into their vectors. The default takes them.
    fn finished_in_place(
        &mut self,
        trial: &mut Trial,
        measurement: &mut Measurement,
    ) -> Result<()> {
        self.finished(std::mem::take(trial), std::mem::take(measurement))
    }

    /// The pool stopped with `trial` unfinished (interrupted, or another trial failed).
    fn unfinished(&mut self, _trial: &Trial) {}

    /// A feed that may have work later than asked (a worker leasing from a database) returns
    /// what it notifies when `next_trial` may have something again; the pool then waits for it
    /// instead of ending when nothing runs. `None` (the default): a dry feed ends the pool.
    fn wakeup(&self) -> Option<Arc<Notify>> {
        None
    }
}

/// How the pool stopped, when it stopped without an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The feed had nothing more and every trial finished.
    Finished,
    /// Shutdown was requested; unfinished trials went back to the feed.
    Interrupted,
}

struct Active {
    trial: Arc<Trial>,
    parts: usize,
    launched: usize,
    results: Vec<Option<Measurement>>,
    remaining: usize,
}

/// Trials finished between two visits to the runtime when nothing waits: parts that are ready
/// at once would otherwise never let a single-threaded runtime poll its drivers (signals,
/// timers), and Ctrl-C could not stop the pool.
pub const YIELD_EVERY: u64 = 256;

/// Measure the feed's trials on `slots` slots until the feed runs dry, shutdown is requested,
/// or a part or the feed fails.
pub async fn run(
    source: &dyn Source,
    slots: usize,
    feed: &mut dyn Feed,
    shutdown: &Shutdown,
) -> Result<Ending> {
    if let Some(at_once) = source.at_once()
        && feed.wakeup().is_none()
    {
        return run_at_once(at_once, slots, feed, shutdown).await;
    }
    let mut active: BTreeMap<u64, Active> = BTreeMap::new();
    let mut next_id = 0u64;
    let mut free: Vec<usize> = (0..slots.max(1)).rev().collect();
    let mut running = FuturesUnordered::new();
    let mut completed = 0u64;
    let stop = shutdown.wait();
    tokio::pin!(stop);
    loop {
        while let Some(&slot) = free.last() {
            let waiting = active
                .iter_mut()
                .find(|(_, a)| a.launched < a.parts)
                .map(|(&id, a)| {
                    a.launched += 1;
                    (id, a.trial.clone(), a.launched - 1)
                });
            let (id, trial, part) = match waiting {
                Some(w) => w,
                None => {
                    let Some(trial) = feed.next_trial() else {
                        break;
                    };
                    let parts = source.parts(&trial).max(1);
                    let trial = Arc::new(trial);
                    next_id += 1;
                    active.insert(
                        next_id,
                        Active {
                            trial: trial.clone(),
                            parts,
                            launched: 1,
                            results: vec![None; parts],
                            remaining: parts,
                        },
                    );
                    (next_id, trial, 0)
                }
            };
            free.pop();
            running.push(async move {
                let result = source.run_part(slot, &trial, part).await;
                (id, part, slot, result)
            });
        }
        let wakeup = feed.wakeup();
        if running.is_empty() && wakeup.is_none() {
            return Ok(Ending::Finished);
        }
        let (id, part, slot, result) = tokio::select! {
            biased;
            _ = &mut stop => {
                drop(running);
                give_back(feed, active);
                return Ok(Ending::Interrupted);
            }
            Some(done) = running.next() => done,
            _ = async { wakeup.as_ref().expect("checked").notified().await }, if wakeup.is_some() => continue,
        };
        free.push(slot);
        let measurement = match result {
            Ok(m) => m,
            Err(e) => {
                drop(running);
                give_back(feed, active);
                return Err(e);
            }
        };
        let Some(a) = active.get_mut(&id) else {
            continue;
        };
        a.results[part] = Some(measurement);
        a.remaining -= 1;
        if a.remaining == 0
            && let Some(a) = active.remove(&id)
        {
            let merged = Measurement::merge(a.results.into_iter().flatten());
            let trial = Arc::try_unwrap(a.trial).unwrap_or_else(|t| (*t).clone());
            if let Err(e) = feed.finished(trial, merged) {
                drop(running);
                give_back(feed, active);
                return Err(e);
            }
        }
        completed += 1;
        if completed.is_multiple_of(YIELD_EVERY) {
            tokio::task::yield_now().await;
        }
    }
}

/// [`run`] for a source whose trials are measured the moment they start: `slots` trials in
/// flight, finished first in, first out, as the async loop finishes parts that are all ready at
/// once. Shutdown is looked at every [`YIELD_EVERY`] trials, after a visit to the runtime.
async fn run_at_once(
    source: &dyn AtOnce,
    slots: usize,
    feed: &mut dyn Feed,
    shutdown: &Shutdown,
) -> Result<Ending> {
    let mut window = Window::new(slots.max(1));
    let mut completed = 0u64;
    loop {
        while let Some(next) = window.free() {
            if !feed.next_trial_into(&mut next.trial) {
                break;
            }
            next.measured = source.measure_into(&next.trial, &mut next.measurement);
            window.push();
        }
        if window.len == 0 {
            return Ok(Ending::Finished);
        }
        if completed.is_multiple_of(YIELD_EVERY) && shutdown.is_requested() {
            window.give_back(feed);
            return Ok(Ending::Interrupted);
        }
        let oldest = &mut window.ring[window.head];
        let outcome = match std::mem::replace(&mut oldest.measured, Ok(())) {
            Ok(()) => feed.finished_in_place(&mut oldest.trial, &mut oldest.measurement),
            Err(e) => {
                feed.unfinished(&oldest.trial);
                Err(e)
            }
        };
        window.pop();
        if let Err(e) = outcome {
            window.give_back(feed);
            return Err(e);
        }
        completed += 1;
        if completed.is_multiple_of(YIELD_EVERY) {
            tokio::task::yield_now().await;
        }
    }
}

/// The trials in flight in [`run_at_once`], oldest first: a ring of slots whose trials and
/// measurements stay in place and are written again (nothing moved or allocated per trial).
struct Window {
    ring: Vec<InFlight>,
    /// The oldest trial's slot, and how many are in flight.
    head: usize,
    len: usize,
}

struct InFlight {
    trial: Trial,
    measurement: Measurement,
    measured: Result<()>,
}

impl Window {
    fn new(slots: usize) -> Window {
        Window {
            ring: (0..slots)
                .map(|_| InFlight {
                    trial: Trial::default(),
                    measurement: Measurement::default(),
                    measured: Ok(()),
                })
                .collect(),
            head: 0,
            len: 0,
        }
    }

    fn at(&self, i: usize) -> usize {
        let at = self.head + i;
        if at >= self.ring.len() {
            at - self.ring.len()
        } else {
            at
        }
    }

    /// The slot the next trial goes to, if one is free.
    fn free(&mut self) -> Option<&mut InFlight> {
        let at = self.at(self.len);
        (self.len < self.ring.len()).then(|| &mut self.ring[at])
    }

    /// The free slot now holds a trial in flight.
    fn push(&mut self) {
        self.len += 1;
    }

    /// The oldest trial is done.
    fn pop(&mut self) {
        self.head = self.at(1);
        self.len -= 1;
    }

    /// Every trial still in flight goes back to the feed.
    fn give_back(&self, feed: &mut dyn Feed) {
        for i in 0..self.len {
            feed.unfinished(&self.ring[self.at(i)].trial);
        }
    }
}

fn give_back(feed: &mut dyn Feed, active: BTreeMap<u64, Active>) {
    for a in active.values() {
        feed.unfinished(&a.trial);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::GameScore;
    use futures::future::BoxFuture;
    use std::sync::Mutex;
    use std::time::Duration;

    /// A scripted source: part p of trial k takes `ms(k, p)` milliseconds and wins; it records
    /// which slot ran what, and when.
    struct Scripted {
        parts: usize,
        ms: fn(u64, usize) -> u64,
        log: Mutex<Vec<(u64, usize, usize)>>,
        fail_at: Option<u64>,
    }

    impl Source for Scripted {
        fn parts(&self, _: &Trial) -> usize {
            self.parts
        }
        fn run_part<'a>(
            &'a self,
            slot: usize,
            trial: &'a Trial,
            part: usize,
        ) -> BoxFuture<'a, Result<Measurement>> {
            Box::pin(async move {
                self.log.lock().unwrap().push((trial.iteration, part, slot));
                tokio::time::sleep(Duration::from_millis((self.ms)(trial.iteration, part))).await;
                if Some(trial.iteration) == self.fail_at {
                    anyhow::bail!("engines gone");
                }
                Ok(Measurement {
                    games: vec![GameScore::from_value(if part == 0 { 1 } else { 0 })],
                    ..Default::default()
                })
            })
        }
    }

    fn trial(k: u64) -> Trial {
        Trial {
            iteration: k,
            delta: vec![],
            c_k: vec![],
            plus: vec![],
            minus: vec![],
            opening: k - 1,
            pairs: 1,
            seed: k,
            track: None,
        }
    }

    #[derive(Default)]
    struct Counter {
        next: u64,
        total: u64,
        done: Vec<(u64, f64)>,
        given_back: Vec<u64>,
        stop_after: Option<usize>,
    }

    impl Feed for Counter {
        fn next_trial(&mut self) -> Option<Trial> {
            (self.next < self.total).then(|| {
                self.next += 1;
                trial(self.next)
            })
        }
        fn finished(&mut self, t: Trial, m: Measurement) -> Result<()> {
            self.done.push((t.iteration, m.signal()));
            if Some(self.done.len()) == self.stop_after {
                anyhow::bail!("enough");
            }
            Ok(())
        }
        fn unfinished(&mut self, t: &Trial) {
            self.given_back.push(t.iteration);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_last_pair_uses_both_slots() {
        let source = Scripted {
            parts: 2,
            ms: |_, _| 100,
            log: Mutex::default(),
            fail_at: None,
        };
        let mut feed = Counter {
            total: 3,
            ..Default::default()
        };
        let t0 = tokio::time::Instant::now();
        let end = run(&source, 2, &mut feed, &Shutdown::new()).await.unwrap();
        assert_eq!(end, Ending::Finished);
        // Six games of 100 ms on two slots: 300 ms, not the 400 ms of pair-granular slots.
        assert_eq!(t0.elapsed(), Duration::from_millis(300));
        assert_eq!(feed.done, vec![(1, 1.0), (2, 1.0), (3, 1.0)]);
        let log = source.log.lock().unwrap();
        assert!(log.contains(&(3, 0, 0)) && log.contains(&(3, 1, 1)));
    }

    #[tokio::test(start_paused = true)]
    async fn results_arrive_in_the_order_they_finish() {
        let source = Scripted {
            parts: 1,
            ms: |k, _| if k == 1 { 500 } else { 10 },
            log: Mutex::default(),
            fail_at: None,
        };
        let mut feed = Counter {
            total: 4,
            ..Default::default()
        };
        run(&source, 2, &mut feed, &Shutdown::new()).await.unwrap();
        let order: Vec<u64> = feed.done.iter().map(|d| d.0).collect();
        assert_eq!(order, vec![2, 3, 4, 1]);
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_gives_unfinished_trials_back() {
        let source = Scripted {
            parts: 2,
            ms: |_, p| if p == 0 { 10 } else { 1000 },
            log: Mutex::default(),
            fail_at: None,
        };
        let mut feed = Counter {
            total: 100,
            ..Default::default()
        };
        let shutdown = Shutdown::new();
        let stopper = shutdown.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            stopper.request();
        });
        let end = run(&source, 2, &mut feed, &shutdown).await.unwrap();
        assert_eq!(end, Ending::Interrupted);
        assert!(!feed.given_back.is_empty());
        for k in &feed.given_back {
            assert!(!feed.done.iter().any(|d| d.0 == *k));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_failing_part_or_feed_stops_the_pool() {
        let source = Scripted {
            parts: 1,
            ms: |_, _| 10,
            log: Mutex::default(),
            fail_at: Some(3),
        };
        let mut feed = Counter {
            total: 10,
            ..Default::default()
        };
        let err = run(&source, 1, &mut feed, &Shutdown::new())
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "engines gone");
        assert_eq!(feed.done.len(), 2);

        let source = Scripted {
            parts: 1,
            ms: |_, _| 10,
            log: Mutex::default(),
            fail_at: None,
        };
        let mut feed = Counter {
            total: 10,
            stop_after: Some(4),
            ..Default::default()
        };
        let err = run(&source, 2, &mut feed, &Shutdown::new())
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "enough");
        assert_eq!(
            feed.done.len(),
            4,
            "the trial that stopped it was handed over"
        );
    }

    /// A source ready at once: its measurement of trial k is a win when k·seed is odd. Through
    /// `at_once` unless `hidden`, when the pool sees only its (ready) futures.
    struct Ready {
        hidden: bool,
        fail_at: Option<u64>,
    }

    impl Ready {
        fn result(&self, trial: &Trial) -> Result<Measurement> {
            if Some(trial.iteration) == self.fail_at {
                anyhow::bail!("model broken");
            }
            let win = (trial.iteration * trial.seed) % 2 == 1;
            Ok(Measurement {
                games: vec![GameScore::from_value(if win { 1 } else { -1 })],
                ..Default::default()
            })
        }
    }

    impl Source for Ready {
        fn parts(&self, _: &Trial) -> usize {
            1
        }
        fn run_part<'a>(
            &'a self,
            _: usize,
            trial: &'a Trial,
            _: usize,
        ) -> BoxFuture<'a, Result<Measurement>> {
            Box::pin(std::future::ready(self.result(trial)))
        }
        fn at_once(&self) -> Option<&dyn AtOnce> {
            (!self.hidden).then_some(self as &dyn AtOnce)
        }
    }

    impl AtOnce for Ready {
        fn measure(&self, trial: &Trial) -> Result<Measurement> {
            self.result(trial)
        }
    }

    /// A feed whose trials depend on what finished before they were handed out (as θ does).
    #[derive(Default)]
    struct Delayed {
        next: u64,
        total: u64,
        done: Vec<(u64, u64, f64)>,
        given_back: Vec<u64>,
    }

    impl Feed for Delayed {
        fn next_trial(&mut self) -> Option<Trial> {
            (self.next < self.total).then(|| {
                self.next += 1;
                let mut t = trial(self.next);
                t.seed = 3 + self.done.len() as u64;
                t
            })
        }
        fn finished(&mut self, t: Trial, m: Measurement) -> Result<()> {
            self.done.push((t.iteration, t.seed, m.signal()));
            Ok(())
        }
        fn unfinished(&mut self, t: &Trial) {
            self.given_back.push(t.iteration);
        }
    }

    #[tokio::test]
    async fn a_source_measured_at_once_runs_as_the_async_loop_would() {
        for slots in [1, 2, 3, 4, 7] {
            let mut runs = Vec::new();
            for hidden in [false, true] {
                let source = Ready {
                    hidden,
                    fail_at: None,
                };
                let mut feed = Delayed {
                    total: 1000,
                    ..Default::default()
                };
                let end = run(&source, slots, &mut feed, &Shutdown::new()).await;
                assert_eq!(end.unwrap(), Ending::Finished);
                assert_eq!(feed.done.len(), 1000);
                runs.push(feed.done);
            }
            assert_eq!(runs[0], runs[1], "{slots} slots");
        }
    }

    #[tokio::test]
    async fn a_source_measured_at_once_stops_on_shutdown_and_on_errors() {
        let source = Ready {
            hidden: false,
            fail_at: None,
        };
        let mut feed = Delayed {
            total: 100,
            ..Default::default()
        };
        let shutdown = Shutdown::new();
        shutdown.request();
        let end = run(&source, 3, &mut feed, &shutdown).await.unwrap();
        assert_eq!(end, Ending::Interrupted);
        assert!(feed.done.is_empty());
        assert_eq!(feed.given_back, vec![1, 2, 3]);

        // Asked to stop from another thread mid-run: seen within YIELD_EVERY trials.
        let mut feed = Delayed {
            total: u64::MAX,
            ..Default::default()
        };
        let shutdown = Shutdown::new();
        let stopper = shutdown.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            stopper.request();
        });
        let end = run(&source, 2, &mut feed, &shutdown).await.unwrap();
        assert_eq!(end, Ending::Interrupted);
        assert!((feed.done.len() as u64).is_multiple_of(YIELD_EVERY));
        assert_eq!(feed.given_back.len(), 2);

        let source = Ready {
            hidden: false,
            fail_at: Some(5),
        };
        let mut feed = Delayed {
            total: 100,
            ..Default::default()
        };
        let err = run(&source, 3, &mut feed, &Shutdown::new())
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "model broken");
        assert_eq!(feed.done.len(), 4);
        assert_eq!(feed.given_back, vec![5, 6, 7]);
    }

    /// A feed whose work arrives later (as leases do): shared with whoever adds it.
    struct Later {
        queue: Arc<Mutex<(Vec<u64>, bool)>>,
        wake: Arc<Notify>,
        done: Vec<u64>,
    }

    impl Feed for Later {
        fn next_trial(&mut self) -> Option<Trial> {
            self.queue.lock().unwrap().0.pop().map(trial)
        }
        fn finished(&mut self, t: Trial, _: Measurement) -> Result<()> {
            self.done.push(t.iteration);
            Ok(())
        }
        fn wakeup(&self) -> Option<Arc<Notify>> {
            (!self.queue.lock().unwrap().1).then(|| self.wake.clone())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_feed_with_a_wakeup_gets_work_while_slots_play_and_ends_when_it_says_so() {
        let source = Scripted {
            parts: 1,
            ms: |k, _| if k == 1 { 1000 } else { 10 },
            log: Mutex::default(),
            fail_at: None,
        };
        let queue = Arc::new(Mutex::new((vec![1], false)));
        let wake = Arc::new(Notify::new());
        let mut feed = Later {
            queue: queue.clone(),
            wake: wake.clone(),
            done: Vec::new(),
        };
        let t0 = tokio::time::Instant::now();
        let lessor = async {
            // Trial 2 arrives while trial 1 still plays: the free slot takes it at once.
            tokio::time::sleep(Duration::from_millis(100)).await;
            queue.lock().unwrap().0.push(2);
            wake.notify_one();
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(
                source.log.lock().unwrap().len(),
                2,
                "trial 2 started at once"
            );
            // Nothing more will come.
            queue.lock().unwrap().1 = true;
            wake.notify_one();
        };
        let shutdown = Shutdown::new();
        let (end, ()) = tokio::join!(run(&source, 2, &mut feed, &shutdown), lessor);
        assert_eq!(end.unwrap(), Ending::Finished);
        assert_eq!(feed.done, vec![2, 1]);
        assert_eq!(t0.elapsed(), Duration::from_millis(1000));
    }
}
