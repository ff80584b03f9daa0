//! Each parser's seam, and the real files its inputs are mutated from.
//!
//! A seam takes the file's bytes and a name for it, exactly as the command that reads the file
//! hands them over; a refusal is the message the user would see (the whole chain), and it must
//! name the file (`names`).

use std::path::{Path, PathBuf};

use super::{Outcome, seeds};

/// One parser to fuzz.
pub struct Target {
    pub name: &'static str,
    /// What every refusal must name (the file), if the parser can refuse.
    pub names: Option<&'static str>,
    /// Real files of the format (generated ones where the repository keeps none).
    pub seeds: fn() -> Vec<Vec<u8>>,
    pub parse: fn(&[u8]) -> Outcome,
}

fn outcome<T, E: std::fmt::Display>(r: Result<T, E>) -> Outcome {
    match r {
        Ok(_) => Outcome::Accepted,
        Err(e) => Outcome::Refused(e.to_string()),
    }
}

fn outcome_chain<T>(r: anyhow::Result<T>) -> Outcome {
    match r {
        Ok(_) => Outcome::Accepted,
        Err(e) => Outcome::Refused(format!("{e:#}")),
    }
}

/// A refusal as [`outcome_chain`], but one that would not exit 2 (the user's to fix) is
/// [`Outcome::Failed`]: a damaged run file is bad input, never `spsa`'s fault.
fn outcome_users<T>(r: anyhow::Result<T>) -> Outcome {
    match r {
        Ok(_) => Outcome::Accepted,
        Err(e) if crate::cli::exit::exit_code(&e) == 2 => Outcome::Refused(format!("{e:#}")),
        Err(e) => Outcome::Failed(format!("{e:#}")),
    }
}

/// Text as `read_to_string` would give it: bytes that are not UTF-8 are refused naming the
/// file (as the commands do); here they are read lossily so the parser still sees the rest.
fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

thread_local! {
    /// A folder of this thread's own for the parsers that read only from a path.
    /// In memory where the machine has one (`/dev/shm`): a million writes to a disk cost more
    /// than the parsing.
    static DIR: tempfile::TempDir = {
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            tempfile::tempdir_in(shm)
        } else {
            tempfile::tempdir()
        }
        .inspect(|d| super::remove_later(d.path().to_path_buf()))
        .expect("a temporary folder for fuzzing")
    };
}

/// `bytes` written to `name` in this thread's folder: its path.
fn in_file(name: &str, bytes: &[u8]) -> PathBuf {
    DIR.with(|d| {
        let path = d.path().join(name);
        std::fs::write(&path, bytes).expect("write a fuzzed input");
        path
    })
}

/// Every target, in the order of docs/development.md's table.
pub fn all() -> Vec<Target> {
    vec![
        Target {
            name: "ini",
            names: Some("fuzz.conf"),
            seeds: || {
                vec![
                    include_bytes!("../../conf/simul_8var.conf").to_vec(),
                    include_bytes!("../../conf/simul_1var.conf").to_vec(),
                    include_bytes!("../../conf/aggr.conf").to_vec(),
                ]
            },
            parse: |b| outcome(crate::config::Config::load(&in_file("fuzz.conf", b))),
        },
        Target {
            name: "toml",
            names: Some("fuzz.toml"),
            seeds: || {
                vec![
                    include_bytes!("../../conf/simul_1var.toml").to_vec(),
                    include_bytes!("../../conf/toga2.toml").to_vec(),
                    include_bytes!("../../conf/sparring_games13.toml").to_vec(),
                    include_bytes!("../../conf/positions_sparring.toml").to_vec(),
                    include_bytes!("../../conf/sparring_gradient.toml").to_vec(),
                    include_bytes!("../../tests/legacy_format/legacy.toml").to_vec(),
                ]
            },
            parse: |b| {
                let path = in_file("fuzz.toml", b);
                match crate::config::Config::load(&path) {
                    Ok(_) => outcome(crate::config::Config::load_games(&path)),
                    Err(e) => Outcome::Refused(e.to_string()),
                }
            },
        },
        Target {
            name: "vars",
            names: Some("fuzz.var"),
            seeds: || {
                vec![
                    include_bytes!("../../vars/simul_8var.var").to_vec(),
                    include_bytes!("../../vars/minors.var").to_vec(),
                    include_bytes!("../../vars/toga2.var").to_vec(),
                    include_bytes!("../../tests/legacy_format/legacy.var").to_vec(),
                ]
            },
            parse: |b| outcome(crate::vars::parse(&text(b), Path::new("fuzz.var"))),
        },
        Target {
            name: "epd",
            names: Some("fuzz.epd"),
            seeds: || {
                vec![
                    seeds::head(include_bytes!("../../openings/balanced_6ply.epd"), 12),
                    seeds::head(include_bytes!("../../openings/chess960_sample.epd"), 12),
                    seeds::head(include_bytes!("../../openings/dfrc_balanced.epd"), 8),
                ]
            },
            parse: |b| outcome(book(b, "fuzz.epd")),
        },
        Target {
            name: "pgn",
            names: Some("fuzz.pgn"),
            seeds: || vec![include_bytes!("../../openings/balanced_small.pgn").to_vec()],
            parse: |b| outcome(book(b, "fuzz.pgn")),
        },
        Target {
            name: "labelled",
            names: Some("fuzz.epd"),
            seeds: || {
                vec![seeds::head(
                    include_bytes!("../../data/sf3000_valid.epd"),
                    12,
                )]
            },
            parse: |b| {
                outcome(crate::positions::LabelledPositions::read(
                    Path::new("fuzz.epd"),
                    b,
                ))
            },
        },
        Target {
            name: "uci",
            names: None,
            seeds: || vec![UCI.to_vec()],
            parse: |b| {
                use crate::engine::{options, parse};
                for line in text(b).lines() {
                    std::hint::black_box(parse::parse_line(line));
                    std::hint::black_box(parse::parse_search_line(line));
                    if line.starts_with("option") {
                        std::hint::black_box(options::parse_option_own(line));
                        std::hint::black_box(options::parse_option_line(line));
                    }
                }
                Outcome::Accepted
            },
        },
        Target {
            name: "theta-log",
            names: Some("fuzz.log"),
            seeds: seeds::theta_logs,
            parse: |b| {
                let names: Vec<String> = (0..4).map(|i| format!("v{i}")).collect();
                let path = Path::new("fuzz.log");
                for line in b.split(|c| *c == b'\n') {
                    let mut row = [0.0; 4];
                    std::hint::black_box(crate::tuner::log::parse_row(line, &mut row));
                }
                let read = crate::tuner::replay::LogReader::parse(b.to_vec(), path, Some(&names))
                    .and_then(|r| r.to_csv());
                if let Err(e) = read {
                    return outcome_users::<()>(Err(e));
                }
                outcome_users(crate::report::history::History::parse(b, path))
            },
        },
        Target {
            name: "checkpoint",
            names: Some("fuzz.checkpoint.var"),
            seeds: seeds::checkpoints,
            parse: |b| checkpoint(b),
        },
        Target {
            name: "checkpoint-state",
            names: Some("fuzz.checkpoint.var"),
            seeds: seeds::checkpoint_states,
            // The state's TOML alone, made a checkpoint here: mutations reach its fields and
            // tables instead of breaking the `#:` lines around them.
            parse: |b| {
                let mut file = Vec::with_capacity(b.len() + 256);
                for line in b.split_inclusive(|c| *c == b'\n') {
                    file.extend_from_slice(b"#: ");
                    file.extend_from_slice(line);
                }
                if file.last().is_some_and(|c| *c != b'\n') {
                    file.push(b'\n');
                }
                file.extend_from_slice(seeds::CHECKPOINT_VARS);
                checkpoint(&file)
            },
        },
        Target {
            name: "track",
            names: Some("fuzz.track.csv"),
            seeds: seeds::tracks,
            parse: |b| {
                // As `report` reads it.
                outcome_users(crate::report::elo_curve::parse(
                    b,
                    Path::new("fuzz.track.csv"),
                ))
            },
        },
        Target {
            name: "coefficients-text",
            names: Some("fuzz.coef"),
            seeds: || vec![seeds::coefficient_seed(false)],
            parse: |b| {
                outcome(crate::coefficients::parse_text(
                    &text(b),
                    Path::new("fuzz.coef"),
                ))
            },
        },
        Target {
            name: "coefficients-binary",
            names: Some("fuzz.coefb"),
            seeds: || vec![seeds::coefficient_seed(true)],
            parse: |b| outcome(crate::coefficients::read_binary(b, Path::new("fuzz.coefb"))),
        },
        Target {
            name: "pilot-memo",
            names: Some("fuzz.pilot.csv"),
            seeds: || vec![PILOT.to_vec()],
            parse: |b| {
                outcome_chain(crate::plan::pilot_memo::PilotMemo::parse(
                    &text(b),
                    Path::new("fuzz.pilot.csv"),
                    "0123456789abcdef",
                ))
            },
        },
        Target {
            name: "match-record",
            names: Some("fuzz.json"),
            seeds: seeds::match_records,
            parse: |b| {
                // As `spsa serve` and `--resume` read it: the file, then the message; then what
                // the page and the API make of it.
                let read = crate::matchrun::record::MatchRecord::parse(&text(b))
                    .map_err(|e| format!("fuzz.json: {e}"));
                if let Ok(record) = &read {
                    use crate::web::model::MatchSummary;
                    let summary = MatchSummary::of("m".into(), "fuzz.json".into(), record.clone());
                    std::hint::black_box(serde_json::to_vec(&summary).ok());
                    let list = crate::web::html::runs_list(&[], &[summary], "v", "fuzz");
                    std::hint::black_box(list.into_string());
                    std::hint::black_box(record.resume_at());
                }
                outcome(read)
            },
        },
        Target {
            name: "web",
            names: None,
            seeds: super::web::seeds,
            parse: super::web::request,
        },
        Target {
            name: "loss-log",
            names: Some("fuzz.loss.csv"),
            seeds: || vec![LOSS.to_vec()],
            parse: |b| {
                outcome_chain(crate::positions::loss_log::parse(
                    &text(b),
                    Path::new("fuzz.loss.csv"),
                ))
            },
        },
    ]
}

/// A checkpoint's bytes as `spsa report` and a resume read them, then what they take of it.
fn checkpoint(b: &[u8]) -> Outcome {
    let read = crate::tuner::checkpoint::parse_bytes(b, Path::new("fuzz.checkpoint.var"));
    let read = read.and_then(|ck| {
        let s = &ck.state;
        std::hint::black_box((
            s.seed()?,
            s.driver_state(),
            s.spsa(&ck.vars),
            s.parts(&ck.vars),
            s.schedule(),
            s.curve(),
            s.last_handed_out(),
        ));
        // The live curve's table, as a resume reads it.
        ck.parts
            .get::<crate::spsa::track::TrackState>(crate::tuner::TRACK_PART)
            .map(|_| ())
    });
    outcome_users(read)
}

fn book(bytes: &[u8], name: &str) -> Result<crate::game::Book, crate::game::BookError> {
    let options = crate::game::BookOptions {
        variant: crate::game::Variant::Auto,
        ..Default::default()
    };
    crate::game::Book::parse(Path::new(name), bytes, &options)
}

/// An engine's side of a handshake and a search: Stockfish's forms, and the odd ones.
const UCI: &[u8] = b"id name Stockfish 16\nid author the Stockfish developers\n\
option name Threads type spin default 1 min 1 max 1024\n\
option name Hash type spin default 16 min 1 max 33554432\n\
option name Pawn Structure (Endgame) type spin default 100 min 0 max 200\n\
option name Style type combo default Normal var Solid var Normal var Risky\n\
option name Ponder type check default false\n\
option name Clear Hash type button\n\
option name EvalFile type string default nn-5af11540bbfe.nnue\n\
uciok\nreadyok\n\
info string NNUE evaluation using nn-5af11540bbfe.nnue enabled\n\
info depth 1 seldepth 1 multipv 1 score cp 18 nodes 20 nps 4000 hashfull 0 tbhits 0 time 5 pv e2e4\n\
info depth 12 seldepth 17 multipv 1 score cp -35 upperbound wdl 40 900 60 nodes 123456 nps 1000000 time 123 pv d2d4 g8f6 c2c4\n\
info depth 20 score mate -3 nodes 99 pv a1a2\n\
info currmove e2e4 currmovenumber 1\n\
bestmove e2e4 ponder e7e5\n\
bestmove (none)\n\
bestmove 0000\n";

const PILOT: &[u8] = b"# spsa plan --measure: pilot matches, key 0123456789abcdef\n\
name,start,offset,wins,draws,losses,p0,p1,p2,p3,p4\n\
Pawn,100,-8,3,10,7,1,2,4,2,1\n\
Pawn,100,8,5,10,5,0,3,4,3,0\n\
Knight \"N\",300,-10,4,12,4,0,2,6,2,0\n\
Knight \"N\",300,10,6,";

const LOSS: &[u8] = b"iteration,plus,minus,count,validation\n\
1,10.50000000,10.25000000,100,0.0812\n\
1,11.00000000,10.75000000,100,\n\
2,9.12500000,9.50000000,200,0.0800\n\
3,0.00000000,0.00000000,0,\n";
