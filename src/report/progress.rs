//! Progress on stderr while a run goes (results go to stdout): a live indicatif line when stderr
//! is a terminal, else a plain line every few seconds. [`for_terminal`] makes the choice.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

use crate::spsa::track::Point;
use crate::stats::gain::Gain;
use crate::tuner::{Counts, Observer, Update};

/// A point of the live Elo curve as a line of its own, at most one per `every` (a simulated
/// run records hundreds a second); `last` is when the previous one was printed.
fn track_line(
    last: &mut Option<Instant>,
    every: Duration,
    p: &Point,
    gained: Option<&Gain>,
) -> Option<String> {
    let now = Instant::now();
    if last.is_some_and(|t| now.duration_since(t) < every) {
        return None;
    }
    *last = Some(now);
    Some(match gained {
        Some(g) => format!("{}; {}", point_text(p), g.text()),
        None => point_text(p),
    })
}

/// One point of the live Elo curve, as the progress output and the summary say it.
pub fn point_text(p: &crate::spsa::track::Point) -> String {
    use crate::stats::{format_elo, format_interval};
    let band = match (p.low, p.high) {
        (Some(l), Some(h)) => format_interval(l, h),
        _ => "[95%: n/a]".to_string(),
    };
    format!(
        "track: iteration {} vs {}: Elo {} {band} ({} pairs)",
        p.iteration,
        p.against.name(),
        format_elo(p.elo),
        p.pairs()
    )
}

/// The progress display for this process: a live bar when stderr is a terminal, else the plain
/// line every `every`. Never both, and never on stdout.
pub fn for_terminal(every: Duration) -> Box<dyn Observer> {
    if std::io::stderr().is_terminal() {
        Box::new(BarProgress::new(ProgressDrawTarget::stderr()))
    } else {
        Box::new(PlainProgress::new(every))
    }
}

/// A live line redrawn in place: bar, iteration/total, it/s, ETA, games, faults.
pub struct BarProgress {
    target: Option<ProgressDrawTarget>,
    bar: Option<ProgressBar>,
    started: Instant,
    started_at: u64,
    last_refresh: Instant,
    stride: u64,
    since_check: u64,
    last_track: Option<Instant>,
}

impl Drop for BarProgress {
    /// Leave the last state on screen (not 100% when interrupted) and end its line, so what is
    /// printed next starts on a line of its own.
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.abandon();
            if !bar.is_hidden() {
                eprintln!();
            }
        }
    }
}

/// How often the bar's text is recomputed.
const BAR_REFRESH: Duration = Duration::from_millis(100);

impl BarProgress {
    pub fn new(target: ProgressDrawTarget) -> Self {
        let now = Instant::now();
        BarProgress {
            target: Some(target),
            bar: None,
            started: now,
            started_at: 0,
            last_refresh: now,
            stride: 1,
            since_check: 0,
            last_track: None,
        }
    }

    fn bar(&mut self, u: &Update<'_>) -> &ProgressBar {
        if self.bar.is_none() {
            // Created at the first update so a resumed run's rate counts only its own updates.
            self.started_at = u.applied.saturating_sub(1);
            self.started = Instant::now();
            let target = self
                .target
                .take()
                .unwrap_or_else(ProgressDrawTarget::hidden);
            let bar = ProgressBar::with_draw_target(Some(u.total), target)
                .with_style(
                    // Framed and filled (`[=====>----]`): a bare `>` and spaces early in a run
                    // read as a stray prompt.
                    ProgressStyle::with_template("[{bar:20.cyan/blue}] {wide_msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=>-"),
                )
                .with_finish(ProgressFinish::Abandon)
                .with_position(self.started_at);
            self.bar = Some(bar);
        }
        self.bar.as_ref().expect("just set")
    }
}

impl Observer for BarProgress {
    fn on_track(&mut self, p: &Point, gained: Option<&Gain>) {
        if let Some(text) = track_line(&mut self.last_track, Duration::from_secs(1), p, gained) {
            match &self.bar {
                Some(bar) => bar.println(text),
                None => eprintln!("{text}"),
            }
        }
    }

    fn on_update(&mut self, u: &Update<'_>) {
        let last = u.applied >= u.total;
        self.since_check += 1;
        if self.bar.is_some() && self.since_check < self.stride && !last {
            return;
        }
        // Read the clock about twenty times a second however fast updates come, adapting from
        // the average rate since the start so that a burst of updates (pairs finishing
        // together) cannot make the stride jump and freeze the line.
        let now = Instant::now();
        let secs = now.duration_since(self.started).as_secs_f64().max(1.0);
        let rate = u.applied.saturating_sub(self.started_at) as f64 / secs;
        self.stride = ((rate * 0.05) as u64).clamp(1, 1 << 20);
        self.since_check = 0;
        if self.bar.is_some() && now.duration_since(self.last_refresh) < BAR_REFRESH && !last {
            return;
        }
        self.last_refresh = now;
        let bar = self.bar(u).clone();
        bar.set_position(u.applied);
        bar.set_message(line(
            u.applied,
            u.total,
            self.started,
            self.started_at,
            u.counts,
        ));
    }
}

/// Prints `iteration N/M (p%), R it/s, ETA …, games W-D-L …, faults …` every `every`.
pub struct PlainProgress {
    every: Duration,
    started: Instant,
    started_at: u64,
    last_print: Instant,
    /// Updates between clock reads, adapted so the clock is read about ten times a second.
    stride: u64,
    since_check: u64,
    last_track: Option<Instant>,
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
            last_track: None,
        }
    }
}

impl Observer for PlainProgress {
    fn on_track(&mut self, p: &Point, gained: Option<&Gain>) {
        if let Some(text) = track_line(&mut self.last_track, self.every, p, gained) {
            eprintln!("{text}");
        }
    }

    fn on_update(&mut self, u: &Update<'_>) {
        if self.started_at == u64::MAX {
            self.started_at = u.applied.saturating_sub(1);
        }
        let last = u.applied >= u.total;
        self.since_check += 1;
        if self.since_check < self.stride && !last {
            return;
        }
        let now = Instant::now();
        // Adapt from the average rate since the start, so that a burst of updates (pairs that
        // finish together) cannot make the stride jump and silence the line.
        let secs = now.duration_since(self.started).as_secs_f64().max(1.0);
        let rate = u.applied.saturating_sub(self.started_at) as f64 / secs;
        self.stride = ((rate * 0.1) as u64).clamp(1, 1 << 20);
        self.since_check = 0;
        if now.duration_since(self.last_print) < self.every && !last {
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
    s.push_str(&faults_suffix(c));
    s
}

/// `, faults: crash 2, stall 1`, or nothing when there were none.
pub fn faults_suffix(c: &Counts) -> String {
    if c.faults.is_empty() {
        return String::new();
    }
    let faults: Vec<String> = c.faults.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!(", faults: {}", faults.join(", "))
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

    /// The progress line of a curve's point carries the gain so far (issue 46).
    #[test]
    fn a_track_line_says_the_gain_so_far() {
        use crate::spsa::track::{self, Against};
        let points: Vec<Point> = (1..=8u64)
            .map(|k| Point::measured(k, 100 * k, Against::Start, [2, 6, 8, 10, 6]))
            .collect();
        let gained = track::gained(&points, Against::Start);
        let mut last = None;
        let text = track_line(&mut last, Duration::ZERO, &points[7], gained.as_ref()).unwrap();
        assert!(
            text.starts_with("track: iteration 800 vs start: Elo +")
                && text.contains("(32 pairs); gained +")
                && text.ends_with("(pooled 5 points, iterations 400-800)"),
            "{text}"
        );
        // Printed at most once per `every`.
        assert!(track_line(&mut last, Duration::from_secs(60), &points[7], None).is_none());
    }

    #[test]
    fn bar_follows_updates_without_drawing() {
        let mut bar = BarProgress::new(ProgressDrawTarget::hidden());
        let outcome = crate::source::Measurement {
            games: vec![
                crate::source::GameScore::Win,
                crate::source::GameScore::Draw,
            ],
            ..Default::default()
        };
        let counts = Counts::default();
        for applied in 1..=1000 {
            bar.on_update(&Update {
                applied,
                total: 1000,
                iteration: applied,
                theta: &[0.0],
                measurement: &outcome,
                counts: &counts,
            });
        }
        let b = bar.bar.as_ref().unwrap();
        assert_eq!(b.position(), 1000, "the last update is always shown");
        assert!(
            b.message().starts_with("iteration 1000/1000"),
            "{}",
            b.message()
        );
    }

    #[test]
    fn a_burst_of_updates_does_not_freeze_the_bar() {
        let mut bar = BarProgress::new(ProgressDrawTarget::hidden());
        let counts = Counts::default();
        let outcome = crate::source::Measurement {
            games: vec![crate::source::GameScore::Draw; 2],
            ..Default::default()
        };
        let update = |applied| Update {
            applied,
            total: 1000,
            iteration: applied,
            theta: &[],
            measurement: &outcome,
            counts: &counts,
        };
        for applied in 1..=4 {
            bar.on_update(&update(applied));
        }
        std::thread::sleep(BAR_REFRESH + Duration::from_millis(20));
        bar.on_update(&update(5));
        assert!(bar.stride <= 2, "stride {} after a burst", bar.stride);
        assert_eq!(
            bar.bar.as_ref().unwrap().position(),
            5,
            "slow updates are shown"
        );
    }

    #[test]
    fn a_burst_of_updates_does_not_silence_the_line() {
        let mut p = PlainProgress::new(Duration::ZERO);
        let counts = Counts::default();
        let outcome = crate::source::Measurement {
            games: vec![crate::source::GameScore::Draw; 2],
            ..Default::default()
        };
        let update = |applied| Update {
            applied,
            total: 1000,
            iteration: applied,
            theta: &[],
            measurement: &outcome,
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
    fn the_plain_line_always_shows_the_last_update_once() {
        let counts = Counts::default();
        let outcome = crate::source::Measurement::default();
        let mut p = PlainProgress::new(Duration::from_secs(3600));
        p.stride = 1000; // as after a fast stretch
        let mut printed = 0;
        for applied in 1..=10 {
            let before = p.last_print;
            p.on_update(&Update {
                applied,
                total: 10,
                iteration: applied,
                theta: &[],
                measurement: &outcome,
                counts: &counts,
            });
            if p.last_print != before {
                printed += 1;
                assert_eq!(applied, 10, "only the last update is due");
            }
        }
        assert_eq!(printed, 1);
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
