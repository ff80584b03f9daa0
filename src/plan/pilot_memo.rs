//! The pilot's memo: every finished pilot match kept as one line of a CSV file beside the plan's
//! output (`OUT.pilot.csv`), so a pilot stopped by Ctrl-C, a kill or the end of a session goes
//! on where it stopped instead of playing hours of matches again, and the measurements a plan
//! came from stay on disk.
//!
//! The first line names what the matches were played for: a SHA-256 over the config file's
//! bytes, engine 1's binary, each variable's name, start, bounds and c_end, the pairs, the
//! offsets in c_end and the seed. A memo of other settings is refused (exit 2) with what to
//! do, never reused or overwritten. A line cut short by a kill (no newline) is ignored: its
//! match is played again.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::config::Config;
use crate::error::UserError;
use crate::stats::Tally;
use crate::vars::Variable;

const HEADER: &str = "name,start,offset,wins,draws,losses,p0,p1,p2,p3,p4";

/// The matches a pilot has finished, by (variable, offset), and the file it appends to.
pub struct PilotMemo {
    path: PathBuf,
    file: File,
    done: HashMap<(String, i64), Tally>,
}

/// What the matches depend on, as the memo's first line states it.
pub fn key(config: &Config, vars: &[Variable], pairs: u64, c_ends: f64) -> Result<String> {
    key_for(config, vars, &format!("{pairs},{c_ends}"))
}

/// The key of matches played for the config, its engine 1, these variables and `settings` (a
/// line naming everything else they depend on; the seed is added).
pub fn key_for(config: &Config, vars: &[Variable], settings: &str) -> Result<String> {
    let mut text = std::fs::read(&config.path)
        .with_context(|| format!("{}: cannot read the config", config.path.display()))?;
    if let Some(g) = &config.games
        && let Ok((hash, _)) = crate::engine::identity::sha256_file(&g.engine1.command)
    {
        text.extend_from_slice(hash.as_bytes());
    }
    for v in vars {
        let line = format!("\n{},{},{},{},{}", v.name, v.start, v.min, v.max, v.c_end);
        text.extend_from_slice(line.as_bytes());
    }
    let line = format!("\n{settings},{:?}", config.seed);
    text.extend_from_slice(line.as_bytes());
    Ok(crate::engine::identity::sha256_bytes(&text)[..16].to_string())
}

impl PilotMemo {
    /// Open (or start) the memo at `path` for matches of `key`. A memo of another key is the
    /// user's to move aside.
    pub fn open(path: &Path, key: &str) -> Result<PilotMemo> {
        let first = format!("# spsa plan --measure: pilot matches, key {key}");
        let mut done = HashMap::new();
        match std::fs::read_to_string(path) {
            Ok(text) => {
                done = PilotMemo::parse(&text, path, key)?;
                // Drop a cut-short tail so the next row starts on a line of its own.
                let keep = text.rfind('\n').map_or(0, |i| i + 1);
                if keep < text.len() {
                    OpenOptions::new()
                        .write(true)
                        .open(path)
                        .and_then(|f| f.set_len(keep as u64))
                        .with_context(|| format!("{}: cannot be written", path.display()))?;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::write(path, format!("{first}\n{HEADER}\n"))
                    .with_context(|| format!("{}: cannot be written", path.display()))?;
            }
            Err(e) => {
                return Err(e).with_context(|| format!("{}: cannot be read", path.display()));
            }
        }
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("{}: cannot be written", path.display()))?;
        Ok(PilotMemo {
            path: path.to_path_buf(),
            file,
            done,
        })
    }

    /// The matches a memo's text holds, by (variable, offset): what [`PilotMemo::open`] reads
    /// (`path` names it in errors). A memo of another key is refused; a last line without its
    /// newline (cut short by a kill) is left out.
    pub fn parse(text: &str, path: &Path, key: &str) -> Result<HashMap<(String, i64), Tally>> {
        let first = format!("# spsa plan --measure: pilot matches, key {key}");
        let mut done = HashMap::new();
        let mut lines = text.split_inclusive('\n');
        let head = lines.next().unwrap_or("").trim_end();
        if head != first {
            return Err(UserError(format!(
                "{}: holds pilot matches of other settings (its first line `{head}`, \
                 these settings' key {key}: the config, the engine, the variables, \
                 --pairs, --offset-c-ends or the seed changed); delete or move it to \
                 measure again, or give -o another file",
                path.display()
            ))
            .into());
        }
        for (n, line) in lines.enumerate() {
            // A line a kill cut short has no newline: its match is played again.
            let Some(line) = line.strip_suffix('\n') else {
                break;
            };
            if line == HEADER {
                continue;
            }
            let (name, offset, tally) = parse_row(line).ok_or_else(|| {
                UserError(format!(
                    "{}:{}: not a pilot match row (`{line}`); expected {HEADER}",
                    path.display(),
                    n + 2
                ))
            })?;
            done.insert((name, offset), tally);
        }
        Ok(done)
    }

    /// The tally of a match already played: variable `name` at `offset` from its start.
    pub fn get(&self, name: &str, offset: f64) -> Option<Tally> {
        self.done.get(&(name.to_string(), offset as i64)).copied()
    }

    /// Keep a finished match: one line in one write, synced, before the pilot goes on.
    pub fn record(&mut self, name: &str, start: f64, offset: f64, t: &Tally) -> Result<()> {
        let p = t.pentanomial;
        let line = format!(
            "{name},{start},{},{},{},{},{},{},{},{},{}\n",
            offset as i64, t.wins, t.draws, t.losses, p[0], p[1], p[2], p[3], p[4]
        );
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.sync_data())
            .with_context(|| format!("{}: cannot be written", self.path.display()))?;
        self.done.insert((name.to_string(), offset as i64), *t);
        Ok(())
    }

    /// How many matches the memo held when it was opened or has recorded since.
    pub fn len(&self) -> usize {
        self.done.len()
    }

    pub fn is_empty(&self) -> bool {
        self.done.is_empty()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `name,start,offset,wins,draws,losses,p0..p4`; the offset is a whole number (the pilot
/// rounds every offset).
fn parse_row(line: &str) -> Option<(String, i64, Tally)> {
    let fields: Vec<&str> = line.split(',').collect();
    let [name, _start, offset, rest @ ..] = fields.as_slice() else {
        return None;
    };
    let n: Vec<u64> = rest
        .iter()
        .map(|f| f.trim().parse().ok())
        .collect::<Option<_>>()?;
    let [wins, draws, losses, p0, p1, p2, p3, p4] = n.as_slice() else {
        return None;
    };
    let tally = Tally {
        wins: *wins,
        draws: *draws,
        losses: *losses,
        pentanomial: [*p0, *p1, *p2, *p3, *p4],
    };
    // A row whose counts disagree (games ≠ twice the pairs) was not written by the pilot.
    let offset = offset.trim().parse().ok()?;
    // Counts that add up past u64 were not written by the pilot either (issue 55's fuzzing).
    let games = [wins, draws, losses]
        .into_iter()
        .try_fold(0u64, |a, c| a.checked_add(*c))?;
    let pairs = tally
        .pentanomial
        .iter()
        .try_fold(0u64, |a, c| a.checked_add(*c))?;
    (games == pairs.checked_mul(2)? && !name.is_empty()).then(|| (name.to_string(), offset, tally))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 55: counts that add up past u64 (hostile, never the pilot's) are a row the memo
    /// refuses naming its line, not an `attempt to add with overflow`.
    #[test]
    fn counts_past_u64_are_refused_at_their_line() {
        let path = Path::new("memo.pilot.csv");
        let head = format!("# spsa plan --measure: pilot matches, key k\n{HEADER}\n");
        let max = u64::MAX;
        for row in [
            format!("Pawn,100,8,{max},{max},2,1,1,1,1,1"),
            format!("Pawn,100,8,10,0,0,{max},{max},0,0,0"),
            format!("Pawn,100,8,10,0,0,{},0,0,0,0", max / 2 + 1),
        ] {
            let e = PilotMemo::parse(&format!("{head}{row}\n"), path, "k").unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("memo.pilot.csv:3: not a pilot match row"),
                "{e}"
            );
        }
        let fine = PilotMemo::parse(&format!("{head}Pawn,100,8,5,10,5,1,2,4,2,1\n"), path, "k");
        assert_eq!(fine.unwrap().len(), 1);
    }

    fn tally() -> Tally {
        Tally {
            wins: 5,
            draws: 10,
            losses: 5,
            pentanomial: [1, 2, 4, 2, 1],
        }
    }

    #[test]
    fn a_memo_keeps_finished_matches_and_drops_a_line_cut_short() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.pilot.csv");
        let mut memo = PilotMemo::open(&path, "abc").unwrap();
        assert!(memo.is_empty());
        memo.record("Knight", 320.0, -45.0, &tally()).unwrap();
        memo.record("Knight", 320.0, 45.0, &tally()).unwrap();
        drop(memo);
        // A kill mid-write leaves a row without its newline.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"Bishop,330,-4").unwrap();
        drop(f);
        let mut memo = PilotMemo::open(&path, "abc").unwrap();
        assert_eq!(memo.len(), 2);
        assert_eq!(memo.get("Knight", -45.0), Some(tally()));
        assert_eq!(memo.get("Bishop", -45.0), None);
        memo.record("Bishop", 330.0, -45.0, &tally()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with("\nBishop,330,-45,5,10,5,1,2,4,2,1\n"),
            "{text}"
        );
        assert_eq!(PilotMemo::open(&path, "abc").unwrap().len(), 3);
    }

    #[test]
    fn a_memo_of_other_settings_or_a_bad_row_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.pilot.csv");
        PilotMemo::open(&path, "abc")
            .unwrap()
            .record("Knight", 320.0, 45.0, &tally())
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = PilotMemo::open(&path, "xyz").err().unwrap().to_string();
        assert!(
            err.contains("holds pilot matches of other settings"),
            "{err}"
        );
        assert!(err.contains("key xyz"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        // Counts that do not add up are not a pilot's row.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"Rook,500,50,5,10,5,1,2,4,2,9\n").unwrap();
        drop(f);
        let err = PilotMemo::open(&path, "abc").err().unwrap().to_string();
        assert!(
            err.contains("p.pilot.csv:4: not a pilot match row"),
            "{err}"
        );
    }
}
