//! Matches in the database (`spsa match … --db URL`, issue 57): URL-only workers play an SPRT
//! between two option sets of the sparring engine through a worker's kill -9, a database
//! restart and a kill -9 of the process that created it, and the match ends by its test with
//! the pentanomial, the LLR and the verdict of a local `spsa match` of the same seed, pair for
//! pair, each pair counted once.

use std::path::Path;
use std::process::{Child, Output};

use crate::child_common;
use crate::match_common::{self, book, sparring};
use crate::pg_common::{self, Cluster, TestDb, kill_owner, spsa, wait_for};
use crate::run_common::text;

fn finish(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

fn count(db: &TestDb, sql: &str) -> u64 {
    db.psql(sql).parse().unwrap()
}

/// The node count of [`settings`]: fixed, so the same games on any machine, under any load.
/// At 2,000 nodes a pair costs a fifth of its CPU at 10,000 (the match below took 8.5 CPU-s
/// against 48.5), and the SPRT still takes 28 pairs at [`SEED`].
pub(crate) const NODES: &str = "2000";
/// The seed of [`settings`], chosen for an SPRT that decides after a few dozen pairs (28): the
/// tests kill workers and the creator on the way, so it must not end sooner.
pub(crate) const SEED: &str = "6";

/// What both matches play: sparring's defaults against weaker minor pieces, at [`NODES`] a
/// move, on the shipped book, by an SPRT that takes a few dozen pairs to decide.
pub(crate) fn common(book: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        "match",
        "--engine1",
        sparring(),
        "--option2",
        "KnightValue=150",
        "--option2",
        "BishopValue=150",
    ]
    .map(String::from)
    .to_vec();
    args.extend(settings(book));
    args
}

/// What [`common`] plays its sides by: the book, [`NODES`] a move, [`SEED`], the SPRT and its
/// ceiling of pairs (a patch test of the same sides plays by them too).
pub(crate) fn settings(book: &str) -> Vec<String> {
    [
        "--book",
        book,
        "--nodes",
        NODES,
        "--seed",
        SEED,
        "--sprt",
        "0,60",
        "--pairs",
        "400",
        "--progress",
        "0",
    ]
    .map(String::from)
    .to_vec()
}

/// Side A's (W, D, L) in each pair of a local match's PGN, in pair order (side A is
/// `sparring.1`, as [`common`] names it).
pub(crate) fn local_pairs(pgn: &str) -> Vec<(u64, u64, u64)> {
    local_pairs_of(pgn, "sparring.1")
}

/// Side A's (W, D, L) in each pair of a local match's PGN, side A named `a`.
pub(crate) fn local_pairs_of(pgn: &str, a: &str) -> Vec<(u64, u64, u64)> {
    let whites = match_common::tags(pgn, "White");
    let results = match_common::tags(pgn, "Result");
    let rounds = match_common::tags(pgn, "Round");
    let mut pairs: Vec<(u64, u64, u64)> = Vec::new();
    for ((white, result), round) in whites.iter().zip(&results).zip(&rounds) {
        let pair: usize = round.split('.').next().unwrap().parse().unwrap();
        if pairs.len() < pair {
            pairs.resize(pair, (0, 0, 0));
        }
        let a_white = white == a;
        let p = &mut pairs[pair - 1];
        match (result.as_str(), a_white) {
            ("1-0", true) | ("0-1", false) => p.0 += 1,
            ("1/2-1/2", _) => p.1 += 1,
            _ => p.2 += 1,
        }
    }
    pairs
}

/// Pair for pair: the counted pairs of match `run` are `pairs` (a local match's, in order), each
/// with its result.
pub(crate) fn assert_pairs_are(db: &TestDb, run: &str, pairs: &[(u64, u64, u64)]) {
    let counted = db.psql(&format!(
        "SELECT string_agg(pair || ':' || wins || draws || losses, ' ' ORDER BY pair)
           FROM spsa.match_pairs WHERE run_id = {run} AND counted"
    ));
    let want: Vec<String> = pairs
        .iter()
        .enumerate()
        .map(|(i, (w, dr, l))| format!("{}:{w}{dr}{l}", i + 1))
        .collect();
    assert_eq!(counted, want.join(" "), "pair for pair");
}

fn spawn_worker(d: &Path, url: &str, name: &str) -> Child {
    pg_common::worker(d, url, name).spawn().unwrap()
}

/// Kill `worker` (-9) while it holds a lease of `run`: stopped, its lease read, then killed.
fn kill_9_holding_a_lease(db: &TestDb, worker: &mut Child, run: &str, key: &str) {
    loop {
        child_common::stop(worker);
        let held = count(
            db,
            &format!(
                "SELECT count(*) FROM spsa.work WHERE run_id = {run} AND state = 'leased' AND worker = '{key}'"
            ),
        );
        if held > 0 {
            worker.kill().unwrap();
            worker.wait().unwrap();
            return;
        }
        child_common::go_on(worker);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn workers_play_an_sprt_through_kills_and_a_restart_as_a_local_match_does() {
    let cluster = Cluster::start();
    let db = cluster.database("match_sprt");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let book = book();
    let book = book.to_str().unwrap();

    // The local match: every pair in order, at concurrency 1. It plays beside the database's
    // match below (fixed nodes: the same games under any load) and is read at the end; its
    // output goes to files, which no reader has to drain while the test waits elsewhere.
    let pgn = d.join("local.pgn");
    let (out_path, err_path) = (d.join("local.out"), d.join("local.err"));
    let mut args = common(book);
    args.extend(["--concurrency", "1", "--pgn", pgn.to_str().unwrap()].map(String::from));
    let local = match_common::spsa()
        .args(&args)
        .current_dir(d)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();

    // The same match in the database, created by a process that is killed on the way.
    let mut args = common(book);
    args.extend(["--db", &db.url, "--lease-timeout", "3"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let cache = d.join("cache-creator");
    let mut creator = spsa(d, &cache, &args).spawn().unwrap();
    let run = wait_for(&db, "SELECT coalesce(max(id), 0) FROM spsa.runs", |s| {
        !s.is_empty() && s != "0"
    });
    let url1 = db.worker_role("match_w1", "pwd");
    let url2 = db.worker_role("match_w2", "pwd");
    let mut w1 = spawn_worker(d, &url1, "w1");
    let w2 = spawn_worker(d, &url2, "w2");
    let applied = |n: u64| {
        wait_for(
            &db,
            &format!("SELECT applied >= {n} OR state <> 'active' FROM spsa.runs WHERE id = {run}"),
            |s| s == "t",
        );
    };
    applied(4);
    kill_9_holding_a_lease(&db, &mut w1, &run, "match_w1/w1");
    let w1b = spawn_worker(d, &url1, "w1b");
    applied(9);
    cluster.restart();
    applied(14);
    kill_owner(&db, &mut creator);
    assert_eq!(
        db.psql(&format!("SELECT state FROM spsa.runs WHERE id = {run}")),
        "active",
        "the match ended before the creator was killed: make it longer"
    );
    wait_for(
        &db,
        &format!("SELECT state FROM spsa.runs WHERE id = {run}"),
        |s| s == "finished",
    );
    for w in [w1b, w2] {
        let out = finish(w);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }

    let status = finish(local).status;
    let local_out = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        status.success(),
        "{local_out}{}",
        std::fs::read_to_string(&err_path).unwrap()
    );
    let local_counts = match_common::counts(&local_out);
    let sprt_line = local_out
        .lines()
        .find(|l| l.starts_with("SPRT"))
        .unwrap_or_else(|| panic!("{local_out}"))
        .to_string();
    assert!(sprt_line.contains("accepted"), "{local_out}");
    let pairs = local_pairs(&std::fs::read_to_string(&pgn).unwrap());
    assert_eq!(pairs.len() as u64, local_counts.pairs);
    assert!(
        local_counts.pairs >= 20,
        "decided too soon for the test: {local_out}"
    );

    // The counts, the LLR and the verdict are the local match's.
    let row = db.psql(&format!(
        "SELECT applied, wins, draws, losses, array_to_string(pentanomial, ' '), decision, round(llr::numeric, 2)
           FROM spsa.runs WHERE id = {run}"
    ));
    let c = &local_counts;
    let p = c.penta;
    let decision = if sprt_line.contains("H1 accepted") {
        "H1"
    } else {
        "H0"
    };
    let llr = sprt_line
        .split("LLR ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap();
    assert_eq!(
        row,
        format!(
            "{}|{}|{}|{}|{} {} {} {} {}|{decision}|{llr}",
            c.pairs, c.wins, c.draws, c.losses, p[0], p[1], p[2], p[3], p[4]
        ),
        "local: {local_out}"
    );
    assert_pairs_are(&db, &run, &pairs);
    // Every pair reported once; those after the decision are kept, not counted.
    assert_eq!(
        count(
            &db,
            &format!(
                "SELECT count(*) FROM spsa.match_pairs WHERE run_id = {run} AND NOT counted AND pair <= {}",
                c.pairs
            )
        ),
        0
    );
    assert_eq!(
        db.psql(&format!(
            "SELECT match_reported = (SELECT count(*) FROM spsa.match_pairs WHERE run_id = {run}) FROM spsa.runs WHERE id = {run}"
        )),
        "t"
    );
    // Nothing is leased once the match is over.
    assert_eq!(
        count(
            &db,
            &format!(
                "SELECT count(*) FROM spsa.work WHERE run_id = {run} AND state = 'leased' AND lease_expires > now()"
            )
        ),
        0
    );
    // `spsa status` shows it, with the LLR and the pentanomial.
    let out = spsa(d, &cache, &["status", "--db", &db.url])
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    assert!(
        said.contains(&format!("match {run} finished"))
            && said.contains(&sprt_line[sprt_line.find("LLR").unwrap()..]),
        "{said}\nwant {sprt_line}"
    );
}

/// A PGN's games, each as its Round, White, Black, FEN and Result tags and its moves without
/// their comments (the Event, Site and date tags and the search times in the comments say
/// where and when, which differ between two plays of one game).
fn games_of(pgn: &str) -> Vec<String> {
    let keep = ["[Round ", "[White ", "[Black ", "[FEN ", "[Result "];
    let mut games: Vec<(String, String)> = Vec::new();
    for line in pgn.lines() {
        if line.starts_with("[Event ") {
            games.push(Default::default());
        }
        let Some((tags, moves)) = games.last_mut() else {
            continue;
        };
        if keep.iter().any(|k| line.starts_with(k)) {
            tags.push_str(line);
            tags.push('\n');
        } else if !line.starts_with('[') {
            moves.push_str(line);
            moves.push(' ');
        }
    }
    games
        .into_iter()
        .map(|(tags, moves)| {
            let mut plain = String::new();
            let mut depth = 0;
            for ch in moves.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ if depth == 0 => plain.push(ch),
                    _ => {}
                }
            }
            format!(
                "{tags}{}",
                plain.split_whitespace().collect::<Vec<_>>().join(" ")
            )
        })
        .collect()
}

/// `spsa match --db … --pgn FILE`: the workers send each pair's games with its report, and the
/// creator's PGN holds the counted pairs' games in pair order, the very games (move for move)
/// of a local match of the same seed, however the two workers' reports interleave.
#[test]
fn the_creators_pgn_holds_the_workers_games_in_pair_order() {
    let cluster = Cluster::shared();
    let db = cluster.database("match_pgn");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let book = book();
    let flags = [
        "match",
        "--engine1",
        sparring(),
        "--option2",
        "KnightValue=150",
        "--book",
        book.to_str().unwrap(),
        "--depth",
        "2",
        "--seed",
        "58",
        "--pairs",
        "12",
        "--progress",
        "0",
    ];
    let local = d.join("local.pgn");
    let mut args = flags.to_vec();
    args.extend(["--concurrency", "1", "--pgn", local.to_str().unwrap()]);
    let out = match_common::spsa()
        .args(&args)
        .current_dir(d)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));

    let shared = d.join("shared.pgn");
    let mut args = flags.to_vec();
    args.extend(["--db", &db.url, "--pgn", shared.to_str().unwrap()]);
    let creator = spsa(d, &d.join("cache-creator"), &args).spawn().unwrap();
    wait_for(&db, "SELECT coalesce(max(id), 0) FROM spsa.runs", |s| {
        !s.is_empty() && s != "0"
    });
    let url = db.worker_role("pgn_w", "pwd");
    let workers = [spawn_worker(d, &url, "a"), spawn_worker(d, &url, "b")];
    let out = finish(creator);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for w in workers {
        let out = finish(w);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let local = games_of(&std::fs::read_to_string(&local).unwrap());
    let shared = games_of(&std::fs::read_to_string(&shared).unwrap());
    assert_eq!(local.len(), 24);
    assert_eq!(shared.len(), local.len());
    for (i, (s, l)) in shared.iter().zip(&local).enumerate() {
        assert_eq!(s, l, "game {} differs", i + 1);
    }
    // Both workers played, and each pair was reported once.
    assert_eq!(
        db.psql("SELECT count(DISTINCT worker) || ' ' || count(*) || ' ' || count(DISTINCT pair) FROM spsa.match_pairs"),
        "2 12 12"
    );
}
