//! A plain progress line on stderr every few seconds (results go to stdout).

use std::time::{Duration, Instant};

use crate::tuner::{Counts, Observer, Update};

/// Prints `iteration N/M (p%), R it/s, ETA …, games W-D-L …, faults …` every `every`.
pub struct PlainProgress {
    every: Duration,
    started: Instant,
    started_at: u64,
    last_print: Instant,
    /// Updates between clock reads, adapted so the clock is read about ten times a second.
    stride: u64,
    since_check: u64,
}

impl PlainProgress {
    pub fn new(every: Duration) -> Self {
        let now = Instant::now();
        PlainProgress {
            every,
            started: now,
            started_at: u64::MAX,
            last_print: now,
            stride: 1,
            since_check: 0,
        }
    }
}

impl Observer for PlainProgress {
    fn on_update(&mut self, u: &Update<'_>) {
        if self.started_at == u64::MAX {
            self.started_at = u.applied.saturating_sub(1);
        }
        self.since_check += 1;
        if self.since_check < self.stride {
            return;
        }
        let now = Instant::now();
        // Adapt from the average rate since the start, so that a burst of updates (pairs that
        // finish together) cannot make the stride jump and silence the line.
        let secs = now.duration_since(self.started).as_secs_f64().max(1.0);
        let rate = u.applied.saturating_sub(self.started_at) as f64 / secs;
        self.stride = ((rate * 0.1) as u64).clamp(1, 1 << 20);
        self.since_check = 0;
        if now.duration_since(self.last_print) < self.every && u.applied < u.total {
            return;
        }
        self.last_print = now;
        eprintln!(
            "{}",
            line(u.applied, u.total, self.started, self.started_at, u.counts)
        );
    }
}

/// One progress line.
pub fn line(applied: u64, total: u64, started: Instant, started_at: u64, c: &Counts) -> String {
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    let rate = (applied.saturating_sub(started_at)) as f64 / secs;
    let eta = if rate > 0.0 {
        format_duration((total.saturating_sub(applied)) as f64 / rate)
    } else {
        "?".into()
    };
    let mut s = format!(
        "iteration {applied}/{total} ({:.1}%), {} it/s, ETA {eta}, games +{} ={} -{}",
        100.0 * applied as f64 / total.max(1) as f64,
        if rate >= 100.0 {
            format!("{rate:.0}")
        } else {
            format!("{rate:.2}")
        },
        c.wins,
        c.draws,
        c.losses
    );
    if !c.faults.is_empty() {
        let faults: Vec<String> = c.faults.iter().map(|(k, v)| format!("{k} {v}")).collect();
        s.push_str(&format!(", faults: {}", faults.join(", ")));
    }
    s
}

/// `3h05m`, `4m10s`, `12s`.
pub fn format_duration(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_updates_does_not_silence_the_line() {
        let mut p = PlainProgress::new(Duration::ZERO);
        let counts = Counts::default();
        let outcome = crate::source::PairOutcome {
            games: [crate::source::GameScore::Draw; 2],
            faults: Vec::new(),
        };
        let update = |applied| Update {
            applied,
            total: 1000,
            iteration: applied,
            theta: &[],
            outcome: &outcome,
            counts: &counts,
        };
        // Two pairs finishing together, then slow pairs: the clock keeps being read.
        p.on_update(&update(1));
        p.on_update(&update(2));
        std::thread::sleep(Duration::from_millis(30));
        p.on_update(&update(3));
        assert!(p.stride <= 2, "stride {} after a burst", p.stride);
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration(12.4), "12s");
        assert_eq!(format_duration(250.0), "4m10s");
        assert_eq!(format_duration(11_100.0), "3h05m");
    }

    #[test]
    fn line_shows_counts_and_faults() {
        let mut c = Counts {
            wins: 3,
            draws: 2,
            losses: 1,
            ..Counts::default()
        };
        c.faults.insert("crash".into(), 2);
        let l = line(50, 200, Instant::now(), 0, &c);
        assert!(l.starts_with("iteration 50/200 (25.0%), "), "{l}");
        assert!(l.ends_with("games +3 =2 -1, faults: crash 2"), "{l}");
    }
}
