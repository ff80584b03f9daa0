//! The live record of a match: who plays, at what limits, the counts so far, the Elo difference
//! and the SPRT's state, in a small JSON file rewritten atomically after every finished pair
//! (and once at the start and at the end), so `spsa serve` can show a match while it runs.
//!
//! Its place: `--record FILE`, else beside the PGN file with `.match.json` in place of the
//! PGN's extension (`games.pgn` → `games.match.json`); a match with neither keeps no record.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{MatchEnding, MatchOutcome};
use crate::stats::sprt::{Decision, Sprt, SprtStatus};
use crate::stats::{self, Tally};

/// The `kind` of every match record: how `spsa serve` tells one from other JSON.
pub const KIND: &str = "spsa match";
/// The record format's version.
pub const VERSION: u32 = 1;

/// Where a match keeps its record: `--record`, else beside the PGN (`x.pgn` → `x.match.json`).
pub fn default_path(record: Option<&Path>, pgn: Option<&Path>) -> Option<PathBuf> {
    record
        .map(Path::to_path_buf)
        .or_else(|| pgn.map(|p| p.with_extension("match.json")))
}

/// The SPRT part of a record.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SprtRecord {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    /// `running`, `H0 accepted` or `H1 accepted`; `undecided` when the match ended first.
    pub state: String,
}

impl SprtRecord {
    pub fn new(test: &Sprt, status: &SprtStatus) -> SprtRecord {
        SprtRecord {
            elo0: test.elo0,
            elo1: test.elo1,
            alpha: test.alpha,
            beta: test.beta,
            llr: status.llr,
            lower: status.lower,
            upper: status.upper,
            state: match status.decision {
                None => "running",
                Some(Decision::H0) => "H0 accepted",
                Some(Decision::H1) => "H1 accepted",
            }
            .into(),
        }
    }

    /// Whether the test accepted a hypothesis.
    pub fn decided(&self) -> bool {
        self.state.ends_with(" accepted")
    }

    /// `LLR 1.23 [-2.94, 2.94]`, and `: H1 accepted` once decided (as `spsa match` prints it).
    pub fn text(&self) -> String {
        let decision = match self.state.as_str() {
            "H0 accepted" => Some(Decision::H0),
            "H1 accepted" => Some(Decision::H1),
            _ => None,
        };
        SprtStatus {
            llr: self.llr,
            lower: self.lower,
            upper: self.upper,
            decision,
        }
        .to_string()
    }

    /// `nElo [0, 2]`.
    pub fn bounds_text(&self) -> String {
        format!("nElo [{}, {}]", self.elo0, self.elo1)
    }
}

/// One match as it stands.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MatchRecord {
    /// Always [`KIND`].
    pub kind: String,
    pub version: u32,
    /// `spsa match`, or `spsa verify CONFIG`.
    pub event: String,
    /// Side A's and side B's names.
    pub engines: [String; 2],
    /// Side A's and side B's own options (`KnightValue=60`, or `defaults`).
    pub options: [String; 2],
    /// The search limit: `depth=1`, `10+0.1`, `nodes=5000`, `movetime=100ms`.
    pub limits: String,
    /// The whole setting as the header line says it: limits, seed, book.
    pub description: String,
    pub pairs_planned: u64,
    pub pairs_played: u64,
    /// The pairs handed out so far (played, or in flight when the match stopped): a resumed
    /// match starts at this pair of the book's order, so no pair is played twice. Records
    /// written before it read as `pairs_played`.
    #[serde(default)]
    pub next_pair: u64,
    /// Games from side A's point of view.
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Pairs by A's points: 0, ½, 1, 1½, 2.
    pub pentanomial: [u64; 5],
    /// Engine faults, all kinds and sides.
    pub faults: u64,
    /// Elo of A over B from the pentanomial counts (null before the first pair, or when A
    /// scored everything or nothing), and its 95% interval (null below 10 pairs).
    pub elo: Option<f64>,
    pub elo_low: Option<f64>,
    pub elo_high: Option<f64>,
    pub sprt: Option<SprtRecord>,
    /// `running`, `finished` (every pair played, or the SPRT decided), `interrupted`
    /// (Ctrl-C) or `failed` (an engine that faulted in every game, an unwritable output).
    pub state: String,
    /// Unix seconds: the start, and the last write.
    pub started: f64,
    pub updated: f64,
    /// Seconds of play to the last write, over every run of the match: the pauses between a
    /// stop and its `--resume` are not counted (records written before this rule count them).
    pub elapsed_seconds: f64,
    /// The process and machine playing it (a record whose process is gone is a stopped match).
    pub pid: u32,
    pub host: String,
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// This machine's name (empty when it cannot be read).
pub fn host_name() -> String {
    crate::platform::host_name()
}

/// Whether a process with this id exists on this machine.
fn process_alive(pid: u32) -> bool {
    crate::platform::process_exists(pid)
}

impl MatchRecord {
    /// A record of a match about to start: nothing played yet.
    pub fn start(
        event: &str,
        engines: [String; 2],
        options: [String; 2],
        limits: String,
        description: String,
        pairs_planned: u64,
        sprt: Option<&Sprt>,
    ) -> MatchRecord {
        let now = unix_now();
        MatchRecord {
            kind: KIND.into(),
            version: VERSION,
            event: event.into(),
            engines,
            options,
            limits,
            description,
            pairs_planned,
            pairs_played: 0,
            next_pair: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            pentanomial: [0; 5],
            faults: 0,
            elo: None,
            elo_low: None,
            elo_high: None,
            sprt: sprt.map(|s| SprtRecord::new(s, &s.status(&[0; 5]))),
            state: "running".into(),
            started: now,
            updated: now,
            elapsed_seconds: 0.0,
            pid: std::process::id(),
            host: host_name(),
        }
    }

    /// Take the counts, the estimate and the test's state of `out`; `ending` (when the match
    /// is over) sets the final state.
    pub fn update(&mut self, out: &MatchOutcome, ending: Option<&MatchEnding>) {
        let t = &out.tally;
        self.pairs_played = t.pairs();
        self.next_pair = out.next_pair;
        (self.wins, self.draws, self.losses) = (t.wins, t.draws, t.losses);
        self.pentanomial = t.pentanomial;
        self.faults = out.faults.values().sum();
        let finite = |x: f64| x.is_finite().then_some(x);
        let e = stats::pentanomial(&t.pentanomial);
        self.elo = e.and_then(|e| finite(e.elo));
        let interval = e.and_then(|e| e.interval);
        self.elo_low = interval.and_then(|i| finite(i.0));
        self.elo_high = interval.and_then(|i| finite(i.1));
        if let Some((test, status)) = &out.sprt {
            let mut s = SprtRecord::new(test, status);
            if ending.is_some() && !s.decided() {
                s.state = "undecided".into();
            }
            self.sprt = Some(s);
        }
        self.state = match ending {
            None => "running",
            Some(MatchEnding::Finished) => "finished",
            Some(MatchEnding::Interrupted) => "interrupted",
            Some(MatchEnding::Failed(_)) => "failed",
        }
        .into();
        self.updated = unix_now();
        self.elapsed_seconds = out.earlier.seconds + out.elapsed.as_secs_f64();
    }

    /// The first pair a resumed match plays.
    pub fn resume_at(&self) -> u64 {
        self.next_pair.max(self.pairs_played)
    }

    /// Take this record up to go on with it as `fresh` (the record the same match would start
    /// with now) describes the match: the same event, engines, options, limits, seed and book,
    /// and SPRT bounds. The pairs planned may change (a match extended or cut short). The
    /// error says which part differs.
    pub fn resume_as(mut self, fresh: &MatchRecord) -> Result<MatchRecord, String> {
        let differs = |what: &str, old: &str, new: &str| {
            Err(format!(
                "it is another match: its {what} was `{old}`, this one's is `{new}`"
            ))
        };
        if self.event != fresh.event {
            return differs("command", &self.event, &fresh.event);
        }
        for side in 0..2 {
            if self.engines[side] != fresh.engines[side] {
                return differs("engine", &self.engines[side], &fresh.engines[side]);
            }
            if self.options[side] != fresh.options[side] {
                return differs("options", &self.options[side], &fresh.options[side]);
            }
        }
        if self.description != fresh.description {
            return differs("setting", &self.description, &fresh.description);
        }
        let bounds = |r: &MatchRecord| r.sprt.as_ref().map(SprtRecord::bounds_text);
        if bounds(&self) != bounds(fresh) {
            let text = |b: Option<String>| b.unwrap_or_else(|| "no SPRT".into());
            return differs("SPRT", &text(bounds(&self)), &text(bounds(fresh)));
        }
        self.pairs_planned = fresh.pairs_planned;
        self.state = "running".into();
        self.pid = fresh.pid;
        self.host = fresh.host.clone();
        Ok(self)
    }

    /// The counts as a [`Tally`], for the statistics.
    pub fn tally(&self) -> Tally {
        Tally {
            wins: self.wins,
            draws: self.draws,
            losses: self.losses,
            pentanomial: self.pentanomial,
        }
    }

    /// `+12.0 [95%: -3.1, +27.4]`, `-190.8 [95%: n/a below 10 pairs]`, `> +190.8`, or `-`
    /// before the first pair: as the progress line of `spsa match` says it.
    pub fn elo_text(&self) -> String {
        stats::progress_elo(&self.tally())
            .map(|e| e.trim_start_matches("Elo ").to_string())
            .unwrap_or_else(|| "-".into())
    }

    /// Pairs per second of play over the match so far (pauses between runs not counted).
    pub fn pairs_per_second(&self) -> Option<f64> {
        (self.elapsed_seconds > 0.0 && self.pairs_played > 0)
            .then(|| self.pairs_played as f64 / self.elapsed_seconds)
    }

    /// Whether a match recorded as running has lost its process: `true` only when it ran on
    /// this machine and its process is gone (from another machine it cannot be told).
    pub fn stopped(&self) -> bool {
        self.state == "running" && self.host == host_name() && !process_alive(self.pid)
    }

    /// Its state for people: the SPRT's verdict once decided, `stopped` for a running record
    /// whose process is gone, else the recorded state.
    pub fn shown_state(&self) -> String {
        match &self.sprt {
            Some(s) if s.decided() => s.state.clone(),
            _ if self.stopped() => "stopped".into(),
            _ => self.state.clone(),
        }
    }

    /// Write the record atomically (a reader sees the old file or the new one, never half).
    pub fn write(&self, path: &Path) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        crate::tuner::checkpoint::write_atomically(path, &bytes)
            .with_context(|| format!("{}: cannot write the match record", path.display()))
    }

    /// Read a record; the error names the file and what is wrong with it.
    pub fn read(path: &Path) -> Result<MatchRecord> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read the match record", path.display()))?;
        MatchRecord::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// A record from its text.
    pub fn parse(text: &str) -> Result<MatchRecord, String> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("not a match record (not JSON: {e})"))?;
        if value.get("kind").and_then(|k| k.as_str()) != Some(KIND) {
            return Err(format!(
                "not a match record (no \"kind\": \"{KIND}\"; `spsa match --pgn` or --record writes one)"
            ));
        }
        let version = value.get("version").and_then(|v| v.as_u64());
        if version != Some(u64::from(VERSION)) {
            return Err(format!(
                "match record version {} is not supported (expected {VERSION})",
                version.map_or("?".into(), |v| v.to_string())
            ));
        }
        serde_json::from_value(value).map_err(|e| format!("damaged match record: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::time::Duration;

    fn outcome(pentanomial: [u64; 5], sprt: Option<Sprt>) -> MatchOutcome {
        let mut tally = Tally::default();
        for (bucket, &n) in pentanomial.iter().enumerate() {
            // A pair scoring `bucket` half points: (win, win), (win, draw), (draw, draw), ...
            let scores = [[-1, -1], [-1, 0], [0, 0], [1, 0], [1, 1]][bucket];
            for _ in 0..n {
                tally.add_pair(scores);
            }
        }
        MatchOutcome {
            planned: 100,
            tally,
            faults: BTreeMap::from([(("B".to_string(), "crash".to_string()), 2)]),
            overheads: Vec::new(),
            engine_moves: 0,
            elapsed: Duration::ZERO,
            ending: MatchEnding::Finished,
            sprt: sprt.map(|s| (s, s.status(&pentanomial))),
            openings: BTreeMap::new(),
            book_len: 0,
            next_pair: 0,
            earlier: Default::default(),
        }
    }

    fn record(sprt: Option<&Sprt>) -> MatchRecord {
        MatchRecord::start(
            "spsa match",
            ["<b>A</b>".into(), "B".into()],
            ["KnightValue=60".into(), "defaults".into()],
            "depth=1".into(),
            "depth=1, seed 5, book none".into(),
            100,
            sprt,
        )
    }

    /// A resumed match: its counts are the whole match's, its speed and ETA this run's, and
    /// its seconds of play leave out the pause before the resume.
    #[test]
    fn a_resumed_match_reports_this_runs_speed_and_no_pause() {
        let mut out = outcome([10, 30, 40, 30, 10], None);
        out.planned = 400;
        // 100 of the 120 pairs were played by earlier runs, in 900 s.
        out.earlier = crate::matchrun::EarlierRuns {
            pairs: 100,
            games: 200,
            seconds: 900.0,
        };
        out.elapsed = Duration::from_secs(100);
        let line = crate::matchrun::progress_line(&out, out.elapsed);
        // 40 games in 100 s; 280 pairs to go at 20 pairs per 100 s.
        assert!(
            line.starts_with("pairs 120/400 (30.0%), 0.40 games/s, ETA 23m20s, +"),
            "{line}"
        );
        out.openings = BTreeMap::from([(3, 1), (7, 1)]);
        out.book_len = 1000;
        assert_eq!(
            out.openings_text().unwrap(),
            "openings in this run (the 100 pairs before the resume not counted): 2 of 1000 used, \
             each played once (a pair plays one opening with both colours)\n"
        );
        let mut r = record(None);
        r.started -= 50_000.0; // the first run started long ago; the pause is not play
        r.update(&out, None);
        assert_eq!(r.elapsed_seconds, 1000.0);
        assert_eq!(r.pairs_per_second(), Some(0.12));
        // Just resumed, nothing played yet in this run: no speed and no ETA to guess from.
        out.earlier.pairs = 120;
        out.earlier.games = 240;
        let line = crate::matchrun::progress_line(&out, Duration::from_secs(1));
        assert!(
            line.starts_with("pairs 120/400 (30.0%), 0.00 games/s, ETA ?, +"),
            "{line}"
        );
    }

    #[test]
    fn a_record_round_trips_through_its_file() {
        let sprt = Sprt::parse("0,10").unwrap();
        let mut r = record(Some(&sprt));
        r.update(&outcome([1, 3, 10, 4, 2], Some(sprt)), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.match.json");
        r.write(&path).unwrap();
        let back = MatchRecord::read(&path).unwrap();
        assert_eq!(back, r);
        assert_eq!(
            (back.pairs_played, back.wins, back.draws, back.losses),
            (20, 8, 27, 5)
        );
        assert_eq!(back.faults, 2);
        let e = stats::pentanomial(&back.pentanomial).unwrap();
        assert_eq!(back.elo, Some(e.elo));
        assert_eq!(
            (back.elo_low, back.elo_high),
            (Some(e.interval.unwrap().0), Some(e.interval.unwrap().1))
        );
        assert_eq!(
            back.elo_text(),
            stats::progress_elo(&back.tally()).unwrap()[4..]
        );
        assert_eq!(back.state, "running");
        assert_eq!(back.pid, std::process::id());
        assert!(!back.stopped(), "this process is alive");
    }

    #[test]
    fn sprt_states_render_as_the_match_prints_them() {
        let sprt = Sprt::parse("0,50").unwrap();
        let mut r = record(Some(&sprt));
        assert_eq!(r.sprt.as_ref().unwrap().text(), "LLR 0.00 [-2.94, 2.94]");
        assert_eq!(r.shown_state(), "running");
        // Even counts: the test goes on while the match does, and stays undecided after it.
        let out = outcome([1, 2, 4, 2, 1], Some(sprt));
        r.update(&out, None);
        assert_eq!(r.sprt.as_ref().unwrap().state, "running");
        r.update(&out, Some(&MatchEnding::Finished));
        assert_eq!(r.sprt.as_ref().unwrap().state, "undecided");
        assert_eq!(r.shown_state(), "finished");
        // Lopsided counts: H1 accepted, and the record says so as `spsa match` does.
        let out = outcome([0, 0, 5, 10, 30], Some(sprt));
        r.update(&out, Some(&MatchEnding::Finished));
        let (test, status) = out.sprt.unwrap();
        let s = r.sprt.as_ref().unwrap();
        assert_eq!(s.state, "H1 accepted");
        assert_eq!(s.text(), status.to_string());
        assert!(s.text().ends_with(": H1 accepted"), "{}", s.text());
        assert_eq!(s.bounds_text(), "nElo [0, 50]");
        assert_eq!(
            (s.elo0, s.elo1, s.alpha, s.beta),
            (test.elo0, test.elo1, 0.05, 0.05)
        );
        assert_eq!(r.shown_state(), "H1 accepted");
        // The other way.
        let out = outcome([30, 10, 5, 0, 0], Some(sprt));
        r.update(&out, Some(&MatchEnding::Finished));
        assert_eq!(r.shown_state(), "H0 accepted");
        assert!(
            r.elo_text().starts_with('-') && r.elo_text().contains("[95%: "),
            "{}",
            r.elo_text()
        );
    }

    #[test]
    fn a_running_record_whose_process_is_gone_shows_as_stopped() {
        let mut r = record(None);
        r.update(&outcome([0, 1, 2, 1, 0], None), None);
        assert_eq!(r.shown_state(), "running");
        // A process id that cannot exist (above the kernel's limit of 2^22).
        r.pid = 4_194_304 + 12_345;
        assert_eq!(r.shown_state(), "stopped");
        // From another machine it cannot be told: still running.
        r.host = format!("{}-elsewhere", r.host);
        assert_eq!(r.shown_state(), "running");
        // A finished record is finished whatever became of its process.
        r.state = "finished".into();
        assert_eq!(r.shown_state(), "finished");
    }

    #[test]
    fn other_files_are_refused_with_what_is_wrong() {
        assert!(
            MatchRecord::parse("iteration,x\n1,2\n")
                .unwrap_err()
                .contains("not JSON")
        );
        assert!(
            MatchRecord::parse("{\"a\": 1}")
                .unwrap_err()
                .contains("\"kind\": \"spsa match\"")
        );
        let mut v = serde_json::to_value(record(None)).unwrap();
        v["version"] = 9.into();
        assert!(
            MatchRecord::parse(&v.to_string())
                .unwrap_err()
                .contains("version 9")
        );
        v["version"] = 1.into();
        v["pairs_played"] = "many".into();
        assert!(
            MatchRecord::parse(&v.to_string())
                .unwrap_err()
                .contains("damaged")
        );
        let dir = tempfile::tempdir().unwrap();
        let err = MatchRecord::read(&dir.path().join("gone.match.json")).unwrap_err();
        assert!(format!("{err:#}").contains("gone.match.json"), "{err:#}");
    }

    #[test]
    fn the_record_sits_beside_the_pgn_unless_named() {
        assert_eq!(
            default_path(None, Some(Path::new("out/games.pgn"))),
            Some(PathBuf::from("out/games.match.json"))
        );
        assert_eq!(
            default_path(Some(Path::new("m.json")), Some(Path::new("g.pgn"))),
            Some(PathBuf::from("m.json"))
        );
        assert_eq!(default_path(None, None), None);
    }
}
