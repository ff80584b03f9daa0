//! Matches in the database (`spsa match … --db URL`): a run of kind 'match' whose work rows are
//! game pairs, leased, played and reported by workers as a tune's iterations are (the same
//! leases, tokens, priority and throughput shares, engines stored by hash and placed per
//! worker, clocks scaled per worker), and whose SPRT lives in its row, so it ends when it decides
//! even if the process that created it is gone.
//!
//! # Where the LLR is computed, and why there
//!
//! The LLR must be the very computation a local `spsa match` makes ([`Sprt::status`], in Rust).
//! Written again in PL/pgSQL it would be a second implementation to keep equal to the bit (its
//! constrained maximum-likelihood fit is iterative). So the worker that reports a pair computes
//! it, inside the transaction that records the pair: `spsa.report_pair` records the pair and
//! returns the counted pentanomial and the pairs now ready to count (reported, following the
//! counted ones without a gap), locking the match's row; the worker adds them one by one in pair
//! order, computing [`Sprt::status`] after each, and stops at the first decision; then
//! `spsa.count_pairs`, still in the same transaction, counts that many pairs (their counts are
//! summed by the database from the pairs' rows, not taken from the worker), stores the LLR and
//! the decision, and finishes the match at a decision. A pair is thus counted exactly once, in
//! the transaction that records it or in the one that fills the gap before it, and a crash
//! anywhere between loses the whole transaction, never half of it.
//!
//! Pairs are counted in pair order, so the counts after n pairs are a local match's after its
//! first n pairs (played at concurrency 1) whatever order the workers finish in, and the
//! decision falls at the same pair. A pair reported after the decision is kept (`counted =
//! false`) and shown as such, not counted and not dropped. What a worker cannot forge: the
//! counts (the database's own sums) and which pairs count (checked against the rows); what it
//! could: the LLR and decision it passes. Every reader that shows a match recomputes the LLR
//! from the counts with [`Sprt::status`] ([`MatchState::sprt_status`]), so a forged one would
//! show as a mismatch.

use std::path::PathBuf;

use anyhow::{Context, Result};
use tokio_postgres::Client;

use super::{Db, RunDefinition, RunFile, VerifyOf, WorkerOptions, engines, owner, placement};
use crate::config::GamesConfig;
use crate::engine::OptionValue;
use crate::engine::identity::Measured;
use crate::source::games::GameSource;
use crate::source::{Measurement, Trial};
use crate::stats::Tally;
use crate::stats::sprt::{Decision, Sprt, SprtStatus};

/// A match to create: its definition (with [`super::MatchDef`]) and what it stores with it.
pub struct NewMatch {
    /// Shown in `spsa status` and on the page.
    pub name: String,
    pub def: RunDefinition,
    /// Both sides' engines, hashed and measured here, stored by hash.
    pub engines: Vec<Measured>,
    /// Files the engines read through an option.
    pub files: Vec<(RunFile, PathBuf)>,
    pub reference_nps: Option<f64>,
    pub throughput: Option<f64>,
    /// The member or approver it is made for, when not the caller (a ladder step of a run made
    /// with `spsa run --author ROLE`: see `owner::Serving::author`).
    pub author: Option<String>,
}

/// The match playing step `of.step` of shared run `of.run`'s ladder, if one was created.
pub async fn find_verify(db: &mut Db, of: VerifyOf) -> Result<Option<i64>> {
    let key = serde_json::to_value(of)?;
    let row = db
        .run("find the ladder step's match", async |c: &Client| {
            c.query_opt(
                "SELECT id FROM spsa.runs WHERE kind = 'match'
                   AND definition->'match'->'verify_of' = $1 ORDER BY id DESC LIMIT 1",
                &[&key],
            )
            .await
        })
        .await?;
    Ok(row.map(|r| r.get(0)))
}

/// What Ctrl-C leaves of a match this process follows: it goes on, and how to follow or stop it.
pub fn goes_on(id: i64, db: &Db) -> String {
    format!(
        "match {id} goes on in database {}: follow it with `spsa status --db URL`, stop it with `spsa modify --db URL --run {id} --stop`",
        db.url()
    )
}

/// The creator's copy of a match's games (`spsa match --db --pgn FILE`): the PGN of each
/// counted pair, appended in pair order as the pairs are counted (pairs reported after the
/// match ended are not counted, and not copied).
pub struct GameCopy {
    path: PathBuf,
    outputs: crate::tuner::Outputs,
    /// The last pair copied.
    after: i64,
}

impl GameCopy {
    /// Copy into `path` (appended to; the plan checked it when the match was made).
    pub fn new(path: PathBuf) -> GameCopy {
        GameCopy {
            outputs: crate::tuner::Outputs::new(std::slice::from_ref(&path)),
            path,
            after: 0,
        }
    }

    /// Append the games of match `id`'s pairs counted since the last call.
    pub async fn catch_up(&mut self, db: &mut Db, id: i64) -> Result<()> {
        const BATCH: i64 = 200;
        loop {
            let after = self.after;
            let rows = db
                .run("read the match's games", async |c: &Client| {
                    c.query(
                        "SELECT pair, records FROM spsa.match_records($1, $2, $3)",
                        &[&id, &after, &BATCH],
                    )
                    .await
                })
                .await?;
            for row in &rows {
                let pair: i64 = row.get(0);
                let text: String = row.get(1);
                let records = super::records::decode(&text)
                    .with_context(|| format!("match {id}, pair {pair}"))?;
                for r in records
                    .into_iter()
                    .filter(|r| r.path.as_os_str() == super::records::PGN)
                {
                    self.outputs.append(&crate::source::Record {
                        path: self.path.clone(),
                        text: r.text,
                    })?;
                }
                self.after = pair;
            }
            if (rows.len() as i64) < BATCH {
                return Ok(());
            }
        }
    }
}

/// Follow match `id` until it ends (then its state) or `shutdown` (then None; the match goes
/// on), a progress line on stderr every `every`, its counted games copied to `copy` as they
/// are counted.
pub async fn follow(
    db: &mut Db,
    id: i64,
    every: Option<std::time::Duration>,
    shutdown: &crate::runtime::shutdown::Shutdown,
    mut copy: Option<&mut GameCopy>,
) -> Result<Option<MatchState>> {
    use std::time::{Duration, Instant};
    let mut last = Instant::now();
    loop {
        let state = match states(db, Some(id)).await {
            Ok(mut s) => s.pop(),
            Err(e) if super::DbError::is_stop(&e) => None,
            Err(e) => return Err(e),
        };
        if let Some(copy) = copy.as_deref_mut() {
            match copy.catch_up(db, id).await {
                Err(e) if !super::DbError::is_stop(&e) => return Err(e),
                _ => {}
            }
        }
        if shutdown.is_requested() {
            return Ok(None);
        }
        let state = state.with_context(|| format!("match {id} is gone from the database"))?;
        if !matches!(state.state.as_str(), "active" | "paused") {
            return Ok(Some(state));
        }
        if let Some(every) = every
            && last.elapsed() >= every
        {
            eprintln!("{}", state.line());
            last = Instant::now();
        }
        tokio::select! {
            _ = shutdown.wait() => {}
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
    }
}

/// How many pairs ahead of the counted ones a match keeps work rows (`SPSA_WORK_WINDOW=N` sets
/// it, as it does a tune's window).
pub fn match_window() -> i32 {
    std::env::var("SPSA_WORK_WINDOW")
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(64)
}

/// Install (or upgrade) the schema, store the engines and create the match with its first
/// window of pairs, in one transaction; returns its id, and whether it waits for an approver
/// (a member's: see `spsa.new_run`).
pub async fn create(db: &mut Db, m: &NewMatch) -> Result<(i64, bool)> {
    owner::install_schema(db).await?;
    engines::store_artifacts(db, &m.engines).await?;
    engines::store_files(db, &m.files).await?;
    let spec = m.def.match_def.as_ref().context("not a match")?;
    let sprt: Option<Vec<f64>> = spec.sprt.map(|s| s.to_vec());
    let definition = serde_json::to_value(&m.def)?;
    let window = match_window();
    let planned = i64::try_from(m.def.iterations).unwrap_or(i64::MAX);
    let serving = owner::Serving {
        lease_seconds: m.def.lease_seconds,
        reference_nps: m.reference_nps,
        throughput: m.throughput,
        track: None,
        author: m.author.clone(),
    };
    let engines: Vec<(String, String)> = m
        .def
        .engines
        .iter()
        .map(|e| (e.side.clone(), e.sha256.clone()))
        .chain(m.def.files.iter().map(|f| (f.key(), f.sha256.clone())))
        .collect();
    let created = db
        .run("create the match", async |c: &Client| {
            owner::insert_run(
                c,
                &owner::NewRow {
                    kind: "match",
                    name: &m.name,
                    definition: &definition,
                    names: &[],
                    lo: &[],
                    hi: &[],
                    start: &[],
                    total: planned,
                    serving: &serving,
                    snapshot_every: 1,
                    engines: &engines,
                    sprt: sprt.clone(),
                    match_window: window,
                },
            )
            .await
        })
        .await
        .map_err(super::admin::refusal)?;
    Ok(created)
}

/// Where a match stands, as its row and its pairs say.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchState {
    pub id: i64,
    pub name: String,
    /// active, paused, finished or stopped.
    pub state: String,
    /// The most pairs to play.
    pub planned: u64,
    /// The counted pairs' W/D/L and pentanomial (side A's view).
    pub tally: Tally,
    pub sprt: Option<Sprt>,
    /// The LLR and decision the database holds (computed by the reporting workers).
    pub llr: Option<f64>,
    pub decision: Option<String>,
    /// Pairs reported in all, and those of them not counted: waiting for a pair ahead of them
    /// while the match runs, reported after its end once it is over.
    pub reported: u64,
    pub not_counted: u64,
    /// Pairs reported in the last minute.
    pub recent_pairs: u64,
    /// Pairs leased now.
    pub leased: u64,
    /// The workers that reported its pairs, with how many.
    pub workers: Vec<(String, u64)>,
    /// The header line of the match: limits, seed, book; and both sides.
    pub description: String,
    pub sides: [String; 2],
    /// The sides' names and own options (`KnightValue=60`, or `defaults`), and the limit.
    pub names: [String; 2],
    pub options: [String; 2],
    pub limits: String,
    /// Seconds from its creation to its last report.
    pub elapsed_seconds: f64,
}

impl MatchState {
    /// The SPRT's state recomputed here from the counts ([`Sprt::status`], the local match's
    /// computation), None without a test.
    pub fn sprt_status(&self) -> Option<SprtStatus> {
        self.sprt.map(|s| s.status(&self.tally.pentanomial))
    }

    /// Whether the LLR the database holds is the one the counts give (always, unless a worker
    /// forged it).
    pub fn llr_agrees(&self) -> bool {
        match (self.sprt_status(), self.llr) {
            (Some(s), Some(llr)) => (s.llr - llr).abs() <= 1e-9 * s.llr.abs().max(1.0),
            _ => true,
        }
    }

    /// The match as a match record (the page's and the JSON API's form of a match, as a local
    /// match's record file holds it): host `database`, state `running` while it is active.
    pub fn record(&self) -> crate::matchrun::MatchRecord {
        use crate::matchrun::record::SprtRecord;
        let mut r = crate::matchrun::MatchRecord::start(
            &format!("spsa match --db (match {})", self.id),
            self.names.clone(),
            self.options.clone(),
            self.limits.clone(),
            self.description.clone(),
            self.planned,
            self.sprt.as_ref(),
        );
        let t = &self.tally;
        r.pairs_played = t.pairs();
        r.next_pair = self.reported;
        (r.wins, r.draws, r.losses) = (t.wins, t.draws, t.losses);
        r.pentanomial = t.pentanomial;
        let finite = |x: f64| x.is_finite().then_some(x);
        let e = crate::stats::pentanomial(&t.pentanomial);
        r.elo = e.and_then(|e| finite(e.elo));
        let interval = e.and_then(|e| e.interval);
        r.elo_low = interval.and_then(|i| finite(i.0));
        r.elo_high = interval.and_then(|i| finite(i.1));
        let over = !matches!(self.state.as_str(), "active" | "paused");
        if let (Some(test), Some(status)) = (self.sprt, self.sprt_status()) {
            let mut s = SprtRecord::new(&test, &status);
            if over && !s.decided() {
                s.state = "undecided".into();
            }
            r.sprt = Some(s);
        }
        r.state = match self.state.as_str() {
            "active" | "paused" => "running",
            "finished" => "finished",
            _ => "interrupted",
        }
        .into();
        r.pid = 0;
        r.host = "database".into();
        r.elapsed_seconds = self.elapsed_seconds;
        r.started = r.updated - self.elapsed_seconds;
        r
    }

    /// The result block of a match that ended, as a local match prints it, and how it ended.
    pub fn result(&self) -> String {
        let mut out = crate::stats::Report(&self.tally).to_string();
        if let (Some(test), Some(status)) = (self.sprt, self.sprt_status()) {
            out.push_str(&format!("{test}: {status}\n"));
        }
        out.push_str(&format!(
            "match {} {}: {} of {} pairs counted",
            self.id,
            self.state,
            self.tally.pairs(),
            self.planned
        ));
        if self.not_counted > 0 {
            out.push_str(&format!(
                ", {} more reported after it ended (not counted)",
                self.not_counted
            ));
        }
        out.push('\n');
        out
    }

    /// Pairs reported by each worker: `w1 30, w2 24`.
    pub fn workers_text(&self) -> String {
        let w: Vec<String> = self
            .workers
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        w.join(", ")
    }

    /// Games per second over the last minute.
    pub fn games_per_second(&self) -> f64 {
        self.recent_pairs as f64 * 2.0 / 60.0
    }

    /// `match 3 active: pairs 120/1000, +50 =120 -70, Elo … , LLR 1.20 [-2.94, 2.94]`.
    pub fn line(&self) -> String {
        let t = &self.tally;
        let mut s = format!(
            "match {} {}: pairs {}/{}, {:.2} games/s, +{} ={} -{}",
            self.id,
            self.state,
            t.pairs(),
            self.planned,
            self.games_per_second(),
            t.wins,
            t.draws,
            t.losses
        );
        let p = t.pentanomial;
        s.push_str(&format!(
            ", pentanomial {} {} {} {} {}",
            p[0], p[1], p[2], p[3], p[4]
        ));
        if let Some(elo) = crate::stats::progress_elo(t) {
            s.push_str(&format!(", {elo}"));
        }
        if let Some(status) = self.sprt_status() {
            s.push_str(&format!(", {status}"));
            if !self.llr_agrees() {
                s.push_str(&format!(
                    " (the database says LLR {:.4}: not what the counts give)",
                    self.llr.unwrap_or(f64::NAN)
                ));
            }
        }
        if self.not_counted > 0 {
            let why = if self.state == "active" || self.state == "paused" {
                "waiting for pairs ahead of them"
            } else {
                "reported after the match ended, not counted"
            };
            s.push_str(&format!(", {} pairs {why}", self.not_counted));
        }
        s
    }
}

/// Every match in the database (one, with `only`), newest last.
pub async fn states(db: &mut Db, only: Option<i64>) -> Result<Vec<MatchState>> {
    let rows = db
        .run("read the matches", async |c: &Client| query(c, only).await)
        .await?;
    parse(rows)
}

/// [`states`] on a connection of the caller's (the page's).
pub async fn states_on(c: &Client, only: Option<i64>) -> Result<Vec<MatchState>> {
    parse(query(c, only).await?)
}

async fn query(
    c: &Client,
    only: Option<i64>,
) -> Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
    c.query(
        "SELECT id, name, state, planned, wins, draws, losses, pentanomial, sprt, llr,
                decision, reported, not_counted, recent, leased, workers, definition, elapsed
           FROM spsa.status_matches($1)",
        &[&only],
    )
    .await
}

fn parse(rows: Vec<tokio_postgres::Row>) -> Result<Vec<MatchState>> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let n = |i: usize| row.get::<_, i64>(i).max(0) as u64;
        let penta: Vec<i64> = row.get(7);
        let mut pentanomial = [0u64; 5];
        for (p, v) in pentanomial.iter_mut().zip(penta) {
            *p = v.max(0) as u64;
        }
        let sprt: Option<Vec<f64>> = row.get(8);
        let def: RunDefinition = serde_json::from_value(row.get(16))
            .context("a match's definition is not one this spsa reads")?;
        let spec = def.match_def.as_ref();
        let workers: Vec<String> = row.get(15);
        out.push(MatchState {
            id: row.get(0),
            name: row.get(1),
            state: row.get(2),
            planned: n(3),
            tally: Tally {
                wins: n(4),
                draws: n(5),
                losses: n(6),
                pentanomial,
            },
            sprt: sprt.and_then(|v| match v[..] {
                [elo0, elo1, alpha, beta] => Some(Sprt {
                    elo0,
                    elo1,
                    alpha,
                    beta,
                }),
                _ => None,
            }),
            llr: row.get(9),
            decision: row.get(10),
            reported: n(11),
            not_counted: n(12),
            recent_pairs: n(13),
            leased: n(14),
            workers: workers
                .iter()
                .filter_map(|w| {
                    let (name, k) = w.rsplit_once(' ')?;
                    Some((name.to_string(), k.parse().ok()?))
                })
                .collect(),
            description: spec.map(|m| m.description.clone()).unwrap_or_default(),
            names: spec.map_or_else(Default::default, |m| m.names.clone()),
            options: spec.map_or_else(Default::default, |m| {
                m.options.clone().map(|o| {
                    if o.is_empty() {
                        "defaults".to_string()
                    } else {
                        let o: Vec<String> = o.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        o.join(" ")
                    }
                })
            }),
            limits: spec.map_or_else(String::new, |m| {
                crate::arena::game_settings(&m.games)
                    .map(|g| g.time_control.describe())
                    .unwrap_or_default()
            }),
            elapsed_seconds: row.get::<_, f64>(17).max(0.0),
            sides: spec.map_or_else(Default::default, |m| {
                [0, 1].map(|i| {
                    let opts = &m.options[i];
                    if opts.is_empty() {
                        format!("{} (defaults)", m.names[i])
                    } else {
                        let o: Vec<String> = opts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        format!("{} ({})", m.names[i], o.join(" "))
                    }
                })
            }),
        });
    }
    Ok(out)
}

/// Open a match's source on this worker: its engines placed and checked as a tune's are (the
/// run's stored engines fetched by hash or built from their commit, the signature checked, a
/// clock scaled to this machine), then the same plan a local `spsa match` makes of the games,
/// the seed and the sides' options, so pair i plays the same opening, colours and seed.
pub(super) async fn open_source(
    db: &mut Db,
    def: &RunDefinition,
    opts: &WorkerOptions,
    id: i64,
) -> Result<(GameSource, tempfile::TempDir)> {
    let spec = def.match_def.as_ref().context("not a match")?;
    let dir = tempfile::tempdir().context("a temporary folder for the match's book")?;
    let mut games: GamesConfig = spec.games.clone();
    games.engine_log = None;
    games.pgn = None;
    games.book = None;
    if let Some((name, text)) = &def.book {
        let book = dir.path().join(name);
        std::fs::write(&book, text)?;
        games.book = Some(book);
    }
    placement::place_engines(db, def, opts, id, &mut games).await?;
    if games.limits.is_timed() {
        placement::scale_clock(db, opts, id, &mut games).await?;
    }
    let sides = spec.options.clone().map(|o| {
        o.into_iter()
            .map(|(k, v)| (k, OptionValue::Text(v)))
            .collect::<crate::arena::OptionSet>()
    });
    let [a, b] = sides;
    let settings = crate::matchrun::MatchSettings {
        pairs: Some(def.iterations.max(1)),
        concurrency: Some(opts.concurrency.clamp(1, 1024)),
        seed: Some(def.seed),
        max_faulty_pairs: 5,
        ..Default::default()
    };
    let mut plan = crate::matchrun::setup::plan(
        &games,
        spec.names.clone(),
        a,
        b,
        &settings,
        def.iterations.max(1),
        None,
        None,
        format!("spsa match {id}"),
    )?;
    // The creator keeps the games: each pair's PGN goes back with its report, under the
    // placeholder name a tune's records use (never a path of this machine).
    if spec.records {
        plan.pgn = Some(PathBuf::from(super::records::PGN));
    }
    // A verification plays the openings its tune held out, cut as the local one cuts them.
    if let Some(h) = spec.held_out {
        let book = plan.book.take().context("the match's plan has no book")?;
        book.check_split_size(h.drawn_from)?;
        let holdout = crate::game::Holdout {
            share: h.share,
            seed: h.seed,
        };
        plan.book = Some(book.part(holdout, crate::game::BookPart::HeldOut)?);
    }
    let source = plan.start_source().await?;
    Ok((source, dir))
}

/// Pair `pair` of a match, as a local match plays it.
pub(super) fn trial(pair: i64) -> Option<Trial> {
    let pair = u64::try_from(pair).ok().filter(|&p| p >= 1)?;
    Some(crate::matchrun::pair_trial(pair))
}

/// Report a played pair and count what it makes ready, in one transaction (see the module
/// docs). Safe to repeat: a retry of a report that committed counts nothing again.
pub(super) async fn report(
    db: &mut Db,
    name: &str,
    run: i64,
    pair: i64,
    token: &str,
    sprt: Option<Sprt>,
    m: &Measurement,
) -> Result<(), super::DbError> {
    let (wins, draws, losses, penta, faults, records) = super::records::report_fields(m);
    db.run("report a pair", async |c: &Client| {
        super::conn::in_transaction(c, async {
            let row = c
                .query_one(
                    "SELECT counted, pentanomial, next FROM spsa.report_pair($1, $2, $3, $4::text::uuid, $5, $6, $7, $8, $9, $10)",
                    &[&name, &run, &pair, &token, &wins, &draws, &losses, &penta, &faults, &records],
                )
                .await?;
            let counted: Vec<i64> = row.get(1);
            let next: Vec<i32> = row.get(2);
            let (n, llr, decision) = count_ready(sprt, &counted, &next);
            let n = i32::try_from(n).unwrap_or(i32::MAX);
            c.query_one(
                "SELECT spsa.count_pairs($1, $2, $3::text::uuid, $4, $5, $6)",
                &[&name, &run, &token, &n, &llr, &decision],
            )
            .await?;
            Ok(())
        })
        .await
    })
    .await
}

/// Of the pairs ready to count (their buckets in pair order) after `counted`: how many to count,
/// the LLR after them and the decision, if one falls among them (then only the pairs up to it).
/// [`Sprt::status`] after each pair, as a local match computes it after each finished pair.
pub fn count_ready(
    sprt: Option<Sprt>,
    counted: &[i64],
    next: &[i32],
) -> (usize, f64, Option<&'static str>) {
    let mut counts = [0u64; 5];
    for (c, v) in counts.iter_mut().zip(counted) {
        *c = (*v).max(0) as u64;
    }
    let mut llr = sprt.map_or(0.0, |s| s.llr(&counts));
    for (i, &b) in next.iter().enumerate() {
        if let Some(slot) = usize::try_from(b).ok().and_then(|b| counts.get_mut(b)) {
            *slot += 1;
        }
        if let Some(s) = sprt {
            let status = s.status(&counts);
            llr = status.llr;
            match status.decision {
                Some(Decision::H0) => return (i + 1, llr, Some("H0")),
                Some(Decision::H1) => return (i + 1, llr, Some("H1")),
                None => {}
            }
        }
    }
    (next.len(), llr, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_stops_at_the_pair_that_decides() {
        let sprt = Sprt::parse("0,5").unwrap();
        // Pairs of 2 points each: the LLR climbs to the upper bound within a few dozen.
        let next = vec![4; 200];
        let (n, llr, decision) = count_ready(Some(sprt), &[0, 0, 0, 0, 0], &next);
        assert_eq!(decision, Some("H1"));
        assert!(n < 200);
        // The same pairs counted one at a time decide at the same one, with the same LLR.
        let mut counts = [0i64; 5];
        for k in 1..=n {
            let (m, l, d) = count_ready(Some(sprt), &counts, &[4]);
            assert_eq!(m, 1);
            counts[4] += 1;
            if k < n {
                assert_eq!(d, None);
            } else {
                assert_eq!((l, d), (llr, Some("H1")));
            }
        }
        // Without a test every ready pair counts.
        assert_eq!(count_ready(None, &[0; 5], &[1, 2, 3]), (3, 0.0, None));
    }
}
