//! The verification record, `<log stem>.verify.txt` beside the θ log: what a finished tune's
//! `[verify]` steps printed, one block per step, each ending in its `verdict:` line. A ladder of
//! more than one step (`[[verify]]`) opens each block with the step's header and closes it with
//! whether the step passed:
//!
//! ```text
//! step 1 of 3: SPRT [0,2] at 10000+100 ms against the start
//! verify: tuned (…) vs start (…)
//! … the values, the openings, the counts, Elo, the SPRT …
//! verdict: tuned is better than start: SPRT nElo [0, 2] … accepted H1 after 812 pairs (…)
//! step 1 of 3 passed
//! ```
//!
//! A step is written when it ends, the whole file rewritten atomically, so a kill between steps
//! leaves every finished step recorded and none half-written: a resume plays the first step the
//! file does not hold. One reader ([`read`]) serves that resume, `spsa report` and the page.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::StartMode;
use super::checkpoint::backup_name;

/// Where a run with θ log `log` records its verification: `x.log` → `x.verify.txt` (the same
/// rule as [`crate::config::Config::verify_record`]).
pub fn file_for(log: &Path) -> PathBuf {
    log.with_extension("verify.txt")
}

/// A record of an earlier run's verification is moved aside (numbered backup) when a run starts
/// anew, local or shared, so it can never be read as this run's.
pub fn set_aside(record: &Path, mode: StartMode) -> Result<()> {
    if mode != StartMode::Resume && record.exists() {
        let bak = backup_name(record);
        std::fs::rename(record, &bak).with_context(|| {
            format!(
                "{}: cannot move aside to {}",
                record.display(),
                bak.display()
            )
        })?;
    }
    Ok(())
}

/// One recorded step.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Step {
    /// 1-based.
    pub step: usize,
    /// How many steps the ladder has.
    pub of: usize,
    /// The step in words (its header), `None` for a single `[verify]`.
    pub header: Option<String>,
    /// The verdict line's text, after `verdict: `.
    pub verdict: String,
    /// Whether it passed; `None` for a single `[verify]` (nothing after it to stop).
    pub passed: Option<bool>,
}

impl Step {
    /// `step 2 of 3 failed: no gain of tuned over start shown: …`, or the verdict alone.
    pub fn line(&self) -> String {
        match self.passed {
            Some(p) => format!(
                "step {} of {} {}: {}",
                self.step,
                self.of,
                if p { "passed" } else { "failed" },
                self.verdict
            ),
            None => format!("verdict: {}", self.verdict),
        }
    }
}

/// The record's steps, in order (none when the file is missing). A block without its closing
/// line (a file from an older version, or one edited by hand) counts as a single verification.
pub fn read(path: &Path) -> Result<Vec<Step>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(e).with_context(|| format!("{}: cannot read", path.display()));
        }
    };
    Ok(parse(&text))
}

/// The steps of a record's text.
pub fn parse(text: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut header: Option<(usize, usize, String)> = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("verdict: ") {
            let (step, of, h) = match &header {
                Some((k, n, h)) => (*k, *n, Some(h.clone())),
                None => (steps.len() + 1, 1, None),
            };
            steps.push(Step {
                step,
                of,
                header: h,
                verdict: v.to_string(),
                passed: None,
            });
        } else if let Some((k, n, rest)) = step_line(line) {
            match rest {
                Tail::Header(h) => header = Some((k, n, h.to_string())),
                Tail::Passed(p) => {
                    if let Some(last) = steps.last_mut().filter(|s| s.step == k) {
                        last.passed = Some(p);
                    }
                    header = None;
                }
            }
        }
    }
    steps
}

enum Tail<'a> {
    Header(&'a str),
    Passed(bool),
}

/// `step K of N: HEADER`, `step K of N passed` or `step K of N failed`.
fn step_line(line: &str) -> Option<(usize, usize, Tail<'_>)> {
    let rest = line.strip_prefix("step ")?;
    let (k, rest) = rest.split_once(" of ")?;
    let k = k.parse().ok()?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let n = rest[..end].parse().ok()?;
    let tail = match &rest[end..] {
        " passed" => Tail::Passed(true),
        " failed" => Tail::Passed(false),
        t => Tail::Header(t.strip_prefix(": ")?),
    };
    Some((k, n, tail))
}

/// Where a ladder of `of` steps stands, one line a step, each beginning `verification: `:
/// the steps played with their verdicts, those not played and why, and the outcome. A single
/// `[verify]` is its verdict line.
pub fn summary(steps: &[Step], of: usize) -> String {
    let mut out = String::new();
    for s in steps {
        match s.passed {
            Some(_) => out.push_str(&format!("verification: {}\n", s.line())),
            None => out.push_str(&format!("verification: {}\n", s.verdict)),
        }
    }
    if of <= 1 {
        return out;
    }
    let failed = steps.iter().find(|s| s.passed == Some(false));
    for k in steps.len() + 1..=of {
        let line = match failed {
            Some(f) => format!("not played (the ladder stopped at step {})", f.step),
            None => "not recorded yet".into(),
        };
        out.push_str(&format!("verification: step {k} of {of} {line}\n"));
    }
    let outcome = match failed {
        Some(f) => format!("failed at step {} of {of}", f.step),
        None if steps.len() == of => format!("passed all {of} steps"),
        None => format!("{} of {of} steps passed so far", steps.len()),
    };
    out.push_str(&format!("verification: {outcome}\n"));
    out
}

/// The block one step adds to the record: `text` (what it printed, ending in its verdict line),
/// with the ladder's header and closing line around it when there is more than one step.
pub fn block(step: usize, of: usize, header: &str, text: &str, passed: bool) -> String {
    if of == 1 {
        return text.to_string();
    }
    format!(
        "step {step} of {of}: {header}\n{text}step {step} of {of} {}\n",
        if passed { "passed" } else { "failed" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ladders_blocks_read_back_as_its_steps() {
        let one = "verify: a vs b\nverdict: tuned is better\n";
        assert_eq!(block(1, 1, "x", one, false), one);
        assert_eq!(
            parse(one),
            [Step {
                step: 1,
                of: 1,
                header: None,
                verdict: "tuned is better".into(),
                passed: None
            }]
        );
        let text = block(1, 3, "SPRT [0,2] at 100 nodes against the start", one, true)
            + &block(
                2,
                3,
                "20 pairs at depth 2 against the defaults",
                "verdict: no\n",
                false,
            );
        let steps = parse(&text);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].passed, Some(true));
        assert_eq!(
            steps[0].header.as_deref(),
            Some("SPRT [0,2] at 100 nodes against the start")
        );
        assert_eq!(steps[1].line(), "step 2 of 3 failed: no");
        assert_eq!((steps[1].step, steps[1].of), (2, 3));
        assert_eq!(
            summary(&steps, 3),
            "verification: step 1 of 3 passed: tuned is better\n\
             verification: step 2 of 3 failed: no\n\
             verification: step 3 of 3 not played (the ladder stopped at step 2)\n\
             verification: failed at step 2 of 3\n"
        );
        assert_eq!(
            summary(&steps[..1], 3),
            "verification: step 1 of 3 passed: tuned is better\n\
             verification: step 2 of 3 not recorded yet\n\
             verification: step 3 of 3 not recorded yet\n\
             verification: 1 of 3 steps passed so far\n"
        );
        // A block cut before its closing line is still a verdict, not a pass.
        let cut = block(1, 2, "h", one, true);
        let cut = cut.trim_end_matches("step 1 of 2 passed\n");
        assert_eq!(parse(cut)[0].passed, None);
    }
}
