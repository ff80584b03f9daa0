//! Checkpoints: everything needed to continue a run, written atomically (temp file, fsync,
//! rename). The file is itself a variables CSV whose start column holds the current θ, so it can
//! be fed back as a plain variables file; the run state rides in `#:` comment lines, which the
//! variables reader skips.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::error::UserError;
use crate::spsa::driver::DriverState;
use crate::spsa::{Part, Schedule, Spsa};
use crate::vars::{self, Variable};

const STATE_PREFIX: &str = "#: ";
/// The tables of [`RunState`] itself (not a method's part).
const STATE_TABLES: [&str; 2] = ["outputs", "counts"];
pub const VERSION: u32 = 2;

/// Game and pair counts since the run began.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub pairs: u64,
    /// Games from the θ+ side's point of view.
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Pairs by θ+ points in half-points: [0, 0.5, 1, 1.5, 2] → index 0..=4.
    pub pentanomial: [u64; 5],
    /// Engine faults by kind.
    pub faults: BTreeMap<String, u64>,
}

impl Counts {
    /// Add a measurement's games and pairs.
    pub fn add(&mut self, t: &crate::stats::Tally) {
        self.pairs += t.pairs();
        self.wins += t.wins;
        self.draws += t.draws;
        self.losses += t.losses;
        for (sum, n) in self.pentanomial.iter_mut().zip(t.pentanomial) {
            *sum += n;
        }
    }
}

/// The state of a run between two updates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub version: u32,
    pub seed: String,
    /// How many iterations were applied (rows in the θ log).
    pub applied: u64,
    pub finished: bool,
    pub theta: Vec<f64>,
    pub start: Vec<f64>,
    /// Every iteration below this one was handed out (0 in version 1: `applied + 1`).
    #[serde(default)]
    pub next_fresh: u64,
    /// Iterations below `next_fresh` that were not applied: a resume plays exactly these.
    #[serde(default)]
    pub missing: Vec<u64>,
    pub log_bytes: u64,
    /// The total to run (N, or N' once the run was extended with `--iterations`).
    pub iterations: u64,
    /// The N the gains were planned with (c_i = c_end·N^γ, a_i = a_end·(A+N)^α); an extended run
    /// keeps it, so its curves go on unchanged. 0: the same as `iterations`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub curve_iterations: u64,
    #[serde(rename = "A")]
    pub a: f64,
    pub alpha: f64,
    pub gamma: f64,
    /// Game pairs per iteration (one δ, one update with their summed result).
    #[serde(default = "one")]
    pub pairs_per_iteration: u32,
    /// The share of the book held out of the tune, drawn with `seed` (see
    /// [`crate::game::Holdout`]); resume and verification take the split from here. `None`: a
    /// checkpoint from before held-out openings (or a run without a book), whose tune played
    /// every opening; it goes on doing so, and its verification says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout: Option<f64>,
    /// How many openings the book had when the split was drawn: the same share and seed split
    /// another book differently, so a changed book is refused rather than silently re-split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout_openings: Option<u64>,
    /// Variables a resume dropped from the variables file: held at their θ, played as
    /// fixed values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<String>,
    /// The length of every output file (PGN, game logs) when this state was saved.
    #[serde(default)]
    pub outputs: BTreeMap<String, u64>,
    pub counts: Counts,
    /// Variables a resume added, each with the iteration it joined after and its curve.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joined: Vec<Join>,
    /// The engines built from their source, as `Engine1 REPOSITORY@COMMIT` (the full commit
    /// id): `spsa report` names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

/// How each of `vars` takes part in a run whose resumes held `held` and added `joined`.
pub fn parts_of(vars: &[Variable], held: &[String], joined: &[Join]) -> Vec<Part> {
    vars.iter()
        .map(|v| {
            if held.contains(&v.name) {
                return Part::Held;
            }
            joined
                .iter()
                .find(|j| j.name == v.name)
                .map_or(Part::Always, |j| Part::After {
                    after: j.after,
                    curve: j.curve,
                })
        })
        .collect()
}

/// A variable a resume added: it moves from iteration `after + 1` on, on a curve of
/// `curve − after` iterations (`curve`: the run's N when it joined).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Join {
    pub name: String,
    pub after: u64,
    pub curve: u64,
}

fn one() -> u32 {
    1
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl RunState {
    /// The state of a run about to start: nothing applied, θ at `start`, the first iteration
    /// next. Every kind of run (games, positions, shared, gradient, a classic tool's log read
    /// back) starts from here and changes what differs.
    pub fn fresh(
        seed: impl ToString,
        start: Vec<f64>,
        schedule: &Schedule,
        pairs: u32,
    ) -> RunState {
        RunState {
            version: VERSION,
            seed: seed.to_string(),
            applied: 0,
            finished: false,
            theta: start.clone(),
            start,
            next_fresh: 1,
            missing: Vec::new(),
            log_bytes: 0,
            iterations: schedule.iterations,
            curve_iterations: 0,
            a: schedule.a,
            alpha: schedule.alpha,
            gamma: schedule.gamma,
            pairs_per_iteration: pairs,
            holdout: None,
            holdout_openings: None,
            held: Vec::new(),
            outputs: BTreeMap::new(),
            counts: Counts::default(),
            joined: Vec::new(),
            sources: Vec::new(),
        }
    }

    /// The seed as a number.
    pub fn seed(&self) -> Result<u64> {
        self.seed
            .parse()
            .map_err(|_| UserError(format!("bad seed `{}` in checkpoint", self.seed)).into())
    }

    /// The driver's part of the state.
    pub fn driver_state(&self) -> DriverState {
        DriverState {
            theta: self.theta.clone(),
            next_fresh: if self.next_fresh == 0 {
                self.applied + 1
            } else {
                self.next_fresh
            },
            missing: self.missing.clone(),
        }
    }

    /// The last iteration handed out: a variable that joins now joins after it.
    pub fn last_handed_out(&self) -> u64 {
        match self.next_fresh {
            0 => self.applied,
            n => n - 1,
        }
    }

    /// The N the gains follow (see `curve_iterations`).
    pub fn curve(&self) -> u64 {
        if self.curve_iterations == 0 {
            self.iterations
        } else {
            self.curve_iterations
        }
    }

    /// Extend the run to `total` iterations (more than it has): the gains keep their curve.
    pub fn extend(&mut self, total: u64) {
        self.curve_iterations = self.curve();
        self.iterations = total;
        self.finished = false;
    }

    /// The run's optimizer over `vars` (the checkpoint's, in its order): its curve, and the
    /// part of each variable a resume added or dropped.
    pub fn spsa(&self, vars: &[Variable]) -> Spsa {
        Spsa::with_parts(vars, self.schedule(), self.curve(), &self.parts(vars))
    }

    /// How each of `vars` takes part in the run.
    pub fn parts(&self, vars: &[Variable]) -> Vec<Part> {
        parts_of(vars, &self.held, &self.joined)
    }

    pub fn schedule(&self) -> Schedule {
        Schedule {
            iterations: self.iterations,
            a: self.a,
            alpha: self.alpha,
            gamma: self.gamma,
        }
    }
}

/// A checkpoint as read back: the state plus the variable definitions it was written with.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    pub path: PathBuf,
    pub state: RunState,
    pub vars: Vec<Variable>,
    /// The method's own tables (`[gradient]`, …) beside the state: see [`Parts`].
    pub parts: Parts,
}

/// What a method keeps in its checkpoint besides the [`RunState`] every run has (Adam's moments,
/// a K still being refitted): named TOML tables after the state's `#:` lines. A method reads
/// back only its own table; every other reader sees a plain run's checkpoint.
#[derive(Clone, Debug, Default)]
pub struct Parts {
    table: toml::Table,
    /// The checkpoint it was read from, which a damaged table's refusal names.
    path: Option<PathBuf>,
}

/// The same tables, wherever they were read from.
impl PartialEq for Parts {
    fn eq(&self, other: &Parts) -> bool {
        self.table == other.table
    }
}

impl Parts {
    /// Keep `part` under `name`, replacing what was there.
    pub fn set<T: Serialize>(&mut self, name: &str, part: &T) -> Result<()> {
        let value = toml::Value::try_from(part)
            .with_context(|| format!("cannot serialize the checkpoint's [{name}]"))?;
        self.table.insert(name.to_string(), value);
        Ok(())
    }

    /// The table `name`, if the checkpoint has one; one that does not read as a `T` (a field
    /// missing or mistyped) is refused naming the checkpoint and the table.
    pub fn get<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<Option<T>> {
        let file = self
            .path
            .as_ref()
            .map_or(String::new(), |p| format!("{}: ", p.display()));
        self.table
            .get(name)
            .map(|v| {
                v.clone().try_into().map_err(|e: toml::de::Error| {
                    UserError(format!(
                        "{file}damaged [{name}] in the checkpoint: {}",
                        e.message().trim()
                    ))
                    .into()
                })
            })
            .transpose()
    }
}

/// Render a checkpoint file.
pub fn render(state: &RunState, vars: &[Variable]) -> Result<String> {
    render_with(state, &Parts::default(), vars)
}

/// Render a checkpoint file with a method's own tables after the state.
pub fn render_with(state: &RunState, parts: &Parts, vars: &[Variable]) -> Result<String> {
    let mut out = String::from(
        "# spsa checkpoint: a variables file whose start column is θ as of the state below.\n\
         # Continue the run with `spsa run CONFIG --resume`; the `#:` lines are its state.\n",
    );
    let mut body = toml::to_string(state).context("cannot serialize checkpoint state")?;
    if !parts.table.is_empty() {
        body.push_str(&toml::to_string(&parts.table).context("cannot serialize checkpoint state")?);
    }
    for line in body.lines() {
        out.push_str(STATE_PREFIX);
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&vars::to_csv(vars, &state.theta));
    Ok(out)
}

/// Write a checkpoint atomically: a crash leaves either the old file or the new one.
pub fn write(path: &Path, state: &RunState, vars: &[Variable]) -> Result<()> {
    write_with(path, state, &Parts::default(), vars)
}

/// Write a checkpoint with a method's own tables, atomically.
pub fn write_with(path: &Path, state: &RunState, parts: &Parts, vars: &[Variable]) -> Result<()> {
    let text = render_with(state, parts, vars)?;
    write_atomically(path, text.as_bytes())
}

/// `x.log` → `x.log.bak`, or `.bak.1`, `.bak.2`, … when earlier backups exist: never overwrite one.
pub fn backup_name(path: &Path) -> PathBuf {
    let mut n = 0;
    loop {
        let suffix = if n == 0 {
            ".bak".to_string()
        } else {
            format!(".bak.{n}")
        };
        let candidate = with_suffix(path, &suffix);
        if !candidate.exists() {
            return candidate;
        }
        n += 1;
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Write a file by temp file, fsync and rename, then fsync the folder.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create folder", dir.display()))?;
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let result = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        crate::platform::sync_dir(dir)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("{}: cannot write", path.display()))
}

/// Read a checkpoint file. Every damage (bytes that are not UTF-8, a cut, a missing or
/// mistyped field, a line of state that is not TOML) is refused as the user's to fix (exit 2),
/// naming the file and, where it can, the line.
pub fn read(path: &Path) -> Result<Checkpoint> {
    let bytes = std::fs::read(path)
        .map_err(|e| UserError(format!("{}: cannot read checkpoint: {e}", path.display())))?;
    parse_bytes(&bytes, path)
}

/// A checkpoint from the file's bytes: what [`read`] does once it has read them.
pub fn parse_bytes(bytes: &[u8], path: &Path) -> Result<Checkpoint> {
    parse(crate::textfile::utf8(bytes, path)?, path)
}

/// A checkpoint from its text (`path` names it in errors): what [`read`] does once it has read
/// the file.
pub fn parse(text: &str, path: &Path) -> Result<Checkpoint> {
    let refuse =
        |what: String| -> anyhow::Error { UserError(format!("{}: {what}", path.display())).into() };
    // Written whole (temp file and rename), it ends with its last variable's line: a file that
    // does not was cut short, and its last line may still parse as another value.
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(refuse(format!(
            "byte {}: the checkpoint ends in the middle of a line (cut short?)",
            text.len()
        )));
    }
    // The state's lines, and the file's line number of each (for the TOML's errors).
    let mut state_text = String::new();
    let mut lines = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(l) = l.strip_prefix(STATE_PREFIX).or(l.strip_prefix("#:")) {
            state_text.push_str(l);
            state_text.push('\n');
            lines.push(i + 1);
        }
    }
    if state_text.is_empty() {
        return Err(refuse("not a checkpoint (no `#:` state lines)".into()));
    }
    let damaged = |e: toml::de::Error| {
        let at = e.span().map(|s| {
            let n = state_text[..s.start.min(state_text.len())]
                .matches('\n')
                .count();
            lines[n.min(lines.len() - 1)]
        });
        let message = e.message().trim();
        UserError(match at {
            Some(line) => format!(
                "{}:{line}: damaged checkpoint state: {message}",
                path.display()
            ),
            None => format!("{}: damaged checkpoint state: {message}", path.display()),
        })
    };
    let state: RunState = toml::from_str(&state_text).map_err(damaged)?;
    // The method's tables are the top-level tables that are not the state's own.
    let mut table: toml::Table = toml::from_str(&state_text).map_err(damaged)?;
    table.retain(|key, value| value.is_table() && !STATE_TABLES.contains(&key));
    if !(1..=VERSION).contains(&state.version) {
        return Err(refuse(format!(
            "checkpoint version {} is not supported (expected {VERSION})",
            state.version
        )));
    }
    if state.seed.parse::<u64>().is_err() {
        let line = text
            .lines()
            .position(|l| l.trim_start_matches(['#', ':', ' ']).starts_with("seed"))
            .map_or(String::new(), |i| format!(":{}", i + 1));
        return Err(UserError(format!(
            "{}{line}: damaged checkpoint state: the seed `{}` is not a number",
            path.display(),
            state.seed
        ))
        .into());
    }
    let vars = vars::parse(text, path)?;
    if vars.len() != state.theta.len() || vars.len() != state.start.len() {
        return Err(refuse(format!(
            "damaged checkpoint: {} variables but {} θ values (the file ends at byte {}; cut short?)",
            vars.len(),
            state.theta.len(),
            text.len()
        )));
    }
    Ok(Checkpoint {
        path: path.to_path_buf(),
        state,
        vars,
        parts: Parts {
            table,
            path: Some(path.to_path_buf()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> RunState {
        RunState {
            version: VERSION,
            seed: u64::MAX.to_string(),
            applied: 12,
            finished: false,
            theta: vec![0.1 + 0.2, -1e-7, 999.999_999_999_9],
            start: vec![100.0, 0.0, 5.0],
            next_fresh: 15,
            missing: vec![3, 9],
            log_bytes: 345,
            iterations: 50_000,
            curve_iterations: 40_000,
            a: 5000.0,
            alpha: 0.602,
            gamma: 0.101,
            pairs_per_iteration: 2,
            holdout: Some(0.2),
            holdout_openings: Some(300),
            held: vec!["b \"quoted\"".to_string()],
            outputs: [("logs/x y.pgn".to_string(), 1234)].into(),
            sources: vec![format!("Engine1 /src/engine \"x\"@{}", "ab".repeat(20))],
            counts: Counts {
                pairs: 12,
                wins: 10,
                draws: 4,
                losses: 10,
                pentanomial: [1, 2, 6, 2, 1],
                faults: [("crash".to_string(), 2)].into(),
            },
            joined: vec![Join {
                name: "c".into(),
                after: 14,
                curve: 50_000,
            }],
        }
    }

    #[test]
    fn round_trips_exactly_and_is_a_variables_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.checkpoint.var");
        let vars = vars::parse(
            "Pawn Value,100,0,1000,10,0.002,1\nb,0,-1,1,0.1,0.1,0\nc,5,0,1000,1,0,0\n",
            Path::new("v"),
        )
        .unwrap();
        write(&path, &state(), &vars).unwrap();
        let back = read(&path).unwrap();
        assert_eq!(back.state, state(), "θ and counters survive exactly");
        assert_eq!(back.state.seed().unwrap(), u64::MAX);
        assert_eq!(back.state.driver_state().missing, vec![3, 9]);
        // As a plain variables file: θ rounded in the start column, definitions kept.
        let plain = vars::load(&path).unwrap();
        assert_eq!(plain[0].name, "Pawn Value");
        assert_eq!(plain[0].start, 0.3);
        assert_eq!(plain[2].start, 1000.0);
        assert_eq!(plain[1].c_end, 0.1);
        assert!(!dir.path().join("x.checkpoint.var.tmp").exists());
    }

    /// The held-out share rides in the state; a checkpoint written before it existed has no
    /// such line and reads as `None` (its tune played the whole book).
    #[test]
    fn the_held_out_share_is_kept_and_old_checkpoints_read_without_it() {
        let vars = vars::parse(
            "a,1,0,1000,1,0.1,0\nb,2,-1,1000,1,0.1,0\nc,3,0,1000,1,0.1,0\n",
            Path::new("v"),
        )
        .unwrap();
        let text = render(&state(), &vars).unwrap();
        assert!(text.contains("#: holdout = 0.2\n"), "{text}");
        assert!(text.contains("#: holdout_openings = 300\n"), "{text}");
        let old: String = text
            .lines()
            .filter(|l| !l.starts_with("#: holdout"))
            .flat_map(|l| [l, "\n"])
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.checkpoint.var");
        std::fs::write(&path, old).unwrap();
        let back = read(&path).unwrap();
        assert_eq!(back.state.holdout, None);
        assert_eq!(back.state.holdout_openings, None);
        assert_eq!(
            RunState {
                holdout: Some(0.2),
                holdout_openings: Some(300),
                ..back.state
            },
            state()
        );
    }

    /// A method's own table rides beside the state: it comes back to the method, and every
    /// other reader sees the same state as without it.
    #[test]
    fn a_methods_table_round_trips_and_leaves_the_state_alone() {
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Moments {
            k: f64,
            m: Vec<f64>,
            epoch: usize,
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.checkpoint.var");
        let vars = vars::parse(
            "a,1,0,2,1,0,0\nb,0,-1,1,0.1,0.1,0\nc,5,0,1000,1,0,0\n",
            Path::new("v"),
        )
        .unwrap();
        let moments = Moments {
            k: 1.0 / 3.0,
            m: vec![0.1 + 0.2, -1e-300, 7.0],
            epoch: 12,
        };
        let mut parts = Parts::default();
        parts.set("gradient", &moments).unwrap();
        write_with(&path, &state(), &parts, &vars).unwrap();
        let back = read(&path).unwrap();
        assert_eq!(back.state, state());
        assert_eq!(
            back.parts.get::<Moments>("gradient").unwrap(),
            Some(moments)
        );
        assert_eq!(back.parts.get::<Moments>("local").unwrap(), None);
        // The state's own tables are not a method's.
        assert_eq!(back.parts.get::<Counts>("counts").unwrap(), None);
        // Without a method's table: no parts.
        write(&path, &state(), &vars).unwrap();
        assert_eq!(read(&path).unwrap().parts, Parts::default());
        // A damaged table is named.
        let text = std::fs::read_to_string(&path).unwrap();
        let last_state_line = text.rfind("\n#: ").unwrap();
        let end = last_state_line + 1 + text[last_state_line + 1..].find('\n').unwrap() + 1;
        let damaged = format!(
            "{}#: [gradient]\n#: k = \"x\"\n{}",
            &text[..end],
            &text[end..]
        );
        std::fs::write(&path, damaged).unwrap();
        let err = read(&path)
            .unwrap()
            .parts
            .get::<Moments>("gradient")
            .unwrap_err();
        assert!(format!("{err:#}").contains("[gradient]"), "{err:#}");
    }

    /// Issue 55: a checkpoint cut short anywhere is refused naming the file, never read as
    /// another state (its last line cut to `c,5,0,10` would still be a variable).
    #[test]
    fn a_checkpoint_cut_short_anywhere_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.checkpoint.var");
        let vars = vars::parse(
            "Pawn Value,100,0,1000,10,0.002,1\nb,0,-1,1,0.1,0.1,0\nc,5,0,1000,1,0.5,0\n",
            Path::new("v"),
        )
        .unwrap();
        write(&path, &state(), &vars).unwrap();
        let full = std::fs::read(&path).unwrap();
        assert_eq!(read(&path).unwrap().state, state());
        for cut in 0..full.len() {
            std::fs::write(&path, &full[..cut]).unwrap();
            let e = read(&path).expect_err(&format!("cut at {cut}"));
            let text = format!("{e:#}");
            assert!(
                text.starts_with(&format!("{}:", path.display())),
                "cut at {cut}: {text}"
            );
            use crate::error::UserFacing;
            let users = |c: &(dyn std::error::Error + 'static)| {
                c.downcast_ref::<UserError>().is_some()
                    || c.downcast_ref::<vars::VarsError>()
                        .is_some_and(UserFacing::is_user_error)
            };
            assert!(e.chain().any(users), "cut at {cut}: {text}");
        }
        std::fs::write(&path, &full[..full.len() - 3]).unwrap();
        let text = format!("{:#}", read(&path).unwrap_err());
        assert!(
            text.contains(&format!("byte {}: ", full.len() - 3)),
            "{text}"
        );
    }

    /// Issue 67: every damage is the user's to fix (exit 2), refused naming the file and,
    /// where the TOML can say, the line: bytes that are not UTF-8, a field left out or
    /// mistyped, an array that lost a comma, a seed that is not a number, a method's table that
    /// does not read.
    #[test]
    fn a_damaged_checkpoint_is_the_users_to_fix_naming_file_and_line() {
        let vars = vars::parse(
            "a,1,0,1000,1,0.1,0\nb,2,-1,1000,1,0.1,0\nc,3,0,1000,1,0.1,0\n",
            Path::new("v"),
        )
        .unwrap();
        let text = render(&state(), &vars).unwrap();
        let line_of = |key: &str| 1 + text.lines().position(|l| l.starts_with(key)).unwrap();
        let path = Path::new("t.checkpoint.var");
        let refused = |bytes: &[u8]| {
            let e = parse_bytes(bytes, path).unwrap_err();
            assert!(
                e.chain().any(|c| c.downcast_ref::<UserError>().is_some()),
                "{e:#}"
            );
            format!("{e:#}")
        };
        let mut invalid = text.clone().into_bytes();
        let at = text.find("#: theta").unwrap() + 3;
        invalid[at] = 0xff;
        assert_eq!(
            refused(&invalid),
            format!(
                "t.checkpoint.var:{}: byte {at}: not UTF-8 text (damaged?)",
                line_of("#: theta")
            )
        );
        let without = |key: &str| -> String {
            text.lines()
                .filter(|l| !l.starts_with(key))
                .flat_map(|l| [l, "\n"])
                .collect()
        };
        let e = refused(without("#: applied").as_bytes());
        assert!(
            e.starts_with("t.checkpoint.var:") && e.ends_with("missing field `applied`"),
            "{e}"
        );
        let mistyped = text.replace("#: applied = 12\n", "#: applied = \"12\"\n");
        assert_eq!(
            refused(mistyped.as_bytes()),
            format!(
                "t.checkpoint.var:{}: damaged checkpoint state: invalid type: string \"12\", expected u64",
                line_of("#: applied")
            )
        );
        let comma = text.replacen("#: missing = [3, 9]", "#: missing = [3\n#: 9]", 1);
        assert_ne!(comma, text);
        assert_eq!(
            refused(comma.as_bytes()),
            format!(
                "t.checkpoint.var:{}: damaged checkpoint state: missing comma between array elements, expected `,`",
                line_of("#: missing") + 1
            )
        );
        let comma = text.replacen("#: missing = [3, 9]", "#: missing = [3 9]", 1);
        assert!(refused(comma.as_bytes()).starts_with(&format!(
            "t.checkpoint.var:{}: damaged checkpoint state: ",
            line_of("#: missing")
        )));
        let seed = text.replace(&format!("#: seed = \"{}\"", u64::MAX), "#: seed = \"x1\"");
        assert_eq!(
            refused(seed.as_bytes()),
            format!(
                "t.checkpoint.var:{}: damaged checkpoint state: the seed `x1` is not a number",
                line_of("#: seed")
            )
        );
        let version = text.replace("#: version = 2", "#: version = 9");
        assert!(refused(version.as_bytes()).contains("version 9 is not supported"));
        // A method's table read by the method: the file and the table named.
        let table = text.replace("#: [counts]", "#: [track]\n#: handed = \"x\"\n#: [counts]");
        let ck = parse_bytes(table.as_bytes(), path).unwrap();
        let e = ck
            .parts
            .get::<crate::spsa::track::TrackState>("track")
            .unwrap_err();
        assert!(e.chain().any(|c| c.downcast_ref::<UserError>().is_some()));
        assert_eq!(
            format!("{e:#}"),
            "t.checkpoint.var: damaged [track] in the checkpoint: invalid type: string \"x\", expected u64"
        );
    }

    #[test]
    fn rejects_files_that_are_not_checkpoints() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.var");
        std::fs::write(&path, "a,1,0,2,1,0,0\n").unwrap();
        assert!(
            read(&path)
                .unwrap_err()
                .to_string()
                .contains("not a checkpoint")
        );
    }
}
