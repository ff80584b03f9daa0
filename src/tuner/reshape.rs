//! A resume with a changed variables file: rows added join the run, rows dropped are held at
//! their θ, a bound moved that still holds θ is taken. What cannot be honoured (a variable
//! renamed, a bound that shuts out θ, a changed c_end or R_end) is refused with the row that
//! asks for it, before anything is written.
//!
//! The run keeps its checkpoint's order and appends what joins, so every θ log column, the
//! random draws of the iterations already applied and their rows stay as they were.

use std::path::Path;

use anyhow::{Context, Result};

use super::UserError;
use super::checkpoint::{Checkpoint, Join};
use crate::vars::Variable;

/// The run's variables after a resume that changed them.
#[derive(Clone, Debug, PartialEq)]
pub struct Reshape {
    /// The run's variables in their order (as the file now defines them, or as they were for
    /// a dropped one), then the added ones in the file's order.
    pub vars: Vec<Variable>,
    /// Names that join now (new rows, or dropped ones come back).
    pub joining: Vec<String>,
    /// Names the file no longer has: held from now on.
    pub dropping: Vec<String>,
    /// The run's iterations in all, as it goes on (the curve a joining variable follows).
    pub iterations: u64,
    /// Every variable held once the change is made.
    pub held: Vec<String>,
    /// Every variable that joined after the first iteration, once the change is made.
    pub joined: Vec<Join>,
}

/// Where a run stands, as far as a change of its variables goes: a local checkpoint's, or a
/// shared run's in the database (where the join follows the last iteration any worker leased).
pub struct Standing<'a> {
    /// What the messages call the run: the checkpoint's path, `run 3 in the database`.
    pub run: String,
    pub vars: &'a [Variable],
    pub theta: &'a [f64],
    pub held: &'a [String],
    pub joined: &'a [Join],
    /// The last iteration handed out: a variable that joins now moves from the next one on.
    pub after: u64,
    /// `--iterations` may give the run more (a local run; a shared one keeps its schedule).
    pub extends: bool,
}

impl<'a> Standing<'a> {
    pub fn of_checkpoint(ck: &'a Checkpoint) -> Standing<'a> {
        Standing {
            run: ck.path.display().to_string(),
            vars: &ck.vars,
            theta: &ck.state.theta,
            held: &ck.state.held,
            joined: &ck.state.joined,
            after: ck.state.last_handed_out(),
            extends: true,
        }
    }
}

impl Reshape {
    /// The change from `ck` to the variables `file` (read from `path`), for a run of
    /// `iterations` iterations in all; `None` when nothing changed.
    pub fn between(
        ck: &Checkpoint,
        file: &[Variable],
        path: &Path,
        iterations: u64,
    ) -> Result<Option<Reshape>> {
        Reshape::from(&Standing::of_checkpoint(ck), file, path, iterations)
    }

    /// The change from the run `at` to the variables `file` (read from `path`), for a run of
    /// `iterations` iterations in all; `None` when nothing changed.
    pub fn from(
        at: &Standing,
        file: &[Variable],
        path: &Path,
        iterations: u64,
    ) -> Result<Option<Reshape>> {
        let refuse = |row: usize, name: &str, what: String| -> anyhow::Error {
            let line = match crate::vars::line_of(path, name) {
                Some(line) => format!("{}:{line}", path.display()),
                None => format!("{}: row {}", path.display(), row + 1),
            };
            UserError(format!(
                "{line}: `{name}`: cannot resume {}: {what}; nothing was written (use --fresh to start a new run)",
                at.run
            ))
            .into()
        };
        let held = |name: &str| at.held.iter().any(|h| h == name);
        let in_run = |name: &str| at.vars.iter().position(|v| v.name == name);
        let in_file = |name: &str| file.iter().any(|v| v.name == name);
        let after = at.after;
        let more = if at.extends {
            "; give more with --iterations"
        } else {
            ""
        };
        let no_room = |row: usize, name: &str, what: &str| {
            refuse(
                row,
                name,
                format!(
                    "the run has no iterations left for it to {what} (iteration {after} of {iterations} was handed out){more}"
                ),
            )
        };
        let mut vars = at.vars.to_vec();
        let mut joining = Vec::new();
        for (row, v) in file.iter().enumerate() {
            let Some(i) = in_run(&v.name) else {
                // A new name where a dropped variable of the same definition stood is a rename.
                let same = |w: &&Variable| {
                    (w.min, w.max, w.c_end, w.r_end) == (v.min, v.max, v.c_end, v.r_end)
                };
                if let Some(was) = at
                    .vars
                    .get(row)
                    .filter(|w| !in_file(&w.name) && !held(&w.name))
                    .filter(same)
                {
                    return Err(refuse(
                        row,
                        &v.name,
                        format!(
                            "it takes the place of the run's `{0}` with the same bounds and schedule, and a renamed variable cannot go on; rename it back (to drop `{0}` and add `{1}`, resume once without either row, then with `{1}`)",
                            was.name, v.name
                        ),
                    ));
                }
                if after >= iterations {
                    return Err(no_room(row, &v.name, "join"));
                }
                joining.push(v.name.clone());
                vars.push(v.clone());
                continue;
            };
            let was = &at.vars[i];
            for (field, a, b) in [("c_end", was.c_end, v.c_end), ("R_end", was.r_end, v.r_end)] {
                if a != b {
                    return Err(refuse(
                        row,
                        &v.name,
                        format!(
                            "its {field} was {a}, now {b}; a running variable keeps its schedule"
                        ),
                    ));
                }
            }
            let theta = at.theta[i];
            if theta < v.min || theta > v.max {
                return Err(refuse(
                    row,
                    &v.name,
                    format!("its bounds [{}, {}] shut out its θ {theta}", v.min, v.max),
                ));
            }
            if held(&v.name) {
                if after >= iterations {
                    return Err(no_room(row, &v.name, "come back"));
                }
                joining.push(v.name.clone());
            }
            vars[i] = Variable {
                start: was.start,
                ..v.clone()
            };
        }
        let dropping: Vec<String> = at
            .vars
            .iter()
            .filter(|v| !in_file(&v.name) && !held(&v.name))
            .map(|v| v.name.clone())
            .collect();
        let changed = !joining.is_empty() || !dropping.is_empty() || vars != at.vars;
        if !changed {
            return Ok(None);
        }
        let mut now_held: Vec<String> = at
            .held
            .iter()
            .filter(|n| !joining.contains(n))
            .cloned()
            .collect();
        now_held.extend(dropping.iter().cloned());
        let mut joined: Vec<Join> = at
            .joined
            .iter()
            .filter(|j| !joining.contains(&j.name))
            .cloned()
            .collect();
        joined.extend(joining.iter().map(|name| Join {
            name: name.clone(),
            after,
            curve: iterations,
        }));
        Ok(Some(Reshape {
            vars,
            joining,
            dropping,
            iterations,
            held: now_held,
            joined,
        }))
    }

    /// Whether `ck` stands in this shape already: the same variables in the same order with
    /// the same bounds and schedule, and the same ones held and joined. Start values are not
    /// compared (a checkpoint's start column holds θ, the run's start values are in its
    /// state), and settings are compared to the digits a checkpoint keeps of them
    /// ([`crate::vars::format_setting`]).
    pub fn stands_in(&self, ck: &Checkpoint) -> bool {
        let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-9 * b.abs();
        let same = |a: &Variable, b: &Variable| {
            a.name == b.name
                && close(a.min, b.min)
                && close(a.max, b.max)
                && close(a.c_end, b.c_end)
                && close(a.r_end, b.r_end)
                && close(a.simul_elo, b.simul_elo)
        };
        ck.vars.len() == self.vars.len()
            && ck.vars.iter().zip(&self.vars).all(|(a, b)| same(a, b))
            && ck.state.held == self.held
            && ck.state.joined == self.joined
    }

    /// `ck` as the reshaped run continues from it: added variables at their start values,
    /// joining after the last iteration handed out (one still missing is played without them,
    /// as it was drawn), on a curve of the run's iterations.
    pub fn apply(&self, ck: &mut Checkpoint) {
        let state = &mut ck.state;
        for v in &self.vars[ck.vars.len()..] {
            state.theta.push(v.start);
            state.start.push(v.start);
        }
        state.held.clone_from(&self.held);
        state.joined.clone_from(&self.joined);
        ck.vars = self.vars.clone();
    }
}

/// Give the live Elo curve's file (`spsa::track`) the columns of variables `names`: its
/// first `len` bytes (what the checkpoint holds) are kept, the header names them all, and each
/// row's θ gains the `fill` value of each variable it did not have (one that joined later).
/// Repeatable, and written atomically, as [`super::log::reshape`]. Gives the new length. A file
/// of today keeps no θ (a point's θ is the log's), so it stays as it is; only one written before
/// 2026-12, with θ in every row, is reshaped.
pub fn track_file(path: &Path, len: u64, names: &[String], fill: &[f64]) -> Result<u64> {
    let text = std::fs::read(path)
        .with_context(|| format!("{}: cannot read the curve's file", path.display()))?;
    let kept = text.get(..len as usize).ok_or_else(|| {
        UserError(format!(
            "{}: byte {}: shorter than the checkpoint recorded ({len} bytes); it was cut short, changed or lost",
            path.display(),
            text.len()
        ))
    })?;
    let kept = String::from_utf8_lossy(kept);
    if kept
        .lines()
        .next()
        .is_none_or(|h| h.split(',').count() <= TRACK_FIELDS)
    {
        return Ok(len);
    }
    let mut out = String::with_capacity(kept.len() + 64);
    for (i, line) in kept.lines().enumerate() {
        if i == 0 {
            out.push_str(crate::spsa::track::CSV_HEADER.trim_end());
            for n in names {
                out.push(',');
                out.push_str(n);
            }
            out.push('\n');
            continue;
        }
        out.push_str(line);
        let values = line.split(',').count().saturating_sub(TRACK_FIELDS);
        for v in fill.iter().skip(values) {
            out.push(',');
            out.push_str(&v.to_string());
        }
        out.push('\n');
    }
    super::checkpoint::write_atomically(path, out.as_bytes())?;
    Ok(out.len() as u64)
}

/// The fields of a curve row before an older file's θ values.
const TRACK_FIELDS: usize = crate::spsa::track::CSV_FIELDS;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spsa::Schedule;
    use crate::tuner::checkpoint::{Parts, RunState};

    fn var(name: &str, min: f64, max: f64, c_end: f64) -> Variable {
        Variable {
            name: name.into(),
            start: 0.0,
            min,
            max,
            c_end,
            r_end: 0.002,
            simul_elo: 1.0,
        }
    }

    #[test]
    fn an_older_curve_file_gains_the_joined_column_and_one_of_today_stays() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = ["x", "y", "z"].map(String::from).to_vec();
        let older = dir.path().join("old.track.csv");
        let text = "point,iteration,against,pairs,p0,p1,p2,p3,p4,elo,low,high,x,y\n\
                    1,40,start,10,0,1,4,3,2,35.22,-60.13,131.65,1.25,-7\n";
        std::fs::write(&older, text).unwrap();
        let len = track_file(&older, text.len() as u64, &names, &[0.0, 0.0, 60.0]).unwrap();
        let after = std::fs::read_to_string(&older).unwrap();
        assert_eq!(len, after.len() as u64);
        assert_eq!(
            after,
            "point,iteration,against,pairs,p0,p1,p2,p3,p4,elo,low,high,x,y,z\n\
             1,40,start,10,0,1,4,3,2,35.22,-60.13,131.65,1.25,-7,60\n"
        );
        let today = dir.path().join("new.track.csv");
        let text = format!(
            "{}1,40,start,10,0,1,4,3,2,35.22,-60.13,131.65\n",
            crate::spsa::track::CSV_HEADER
        );
        std::fs::write(&today, &text).unwrap();
        let len = track_file(&today, text.len() as u64, &names, &[0.0, 0.0, 60.0]).unwrap();
        assert_eq!(len, text.len() as u64);
        assert_eq!(std::fs::read_to_string(&today).unwrap(), text);
    }

    /// A checkpoint of variables a, b, c at θ (1, 2, 3) after 100 of 1000 iterations.
    fn checkpoint() -> Checkpoint {
        let vars = vec![
            var("a", -10.0, 10.0, 1.0),
            var("b", -10.0, 10.0, 1.0),
            var("c", -20.0, 20.0, 2.0),
        ];
        let schedule = Schedule {
            iterations: 1000,
            a: 100.0,
            alpha: 0.602,
            gamma: 0.101,
        };
        let mut state = RunState::fresh(1, vec![0.0; 3], &schedule, 1);
        state.theta = vec![1.0, 2.0, 3.0];
        state.applied = 100;
        state.next_fresh = 103;
        state.missing = vec![101];
        Checkpoint {
            path: "run.checkpoint.var".into(),
            state,
            vars,
            parts: Parts::default(),
        }
    }

    fn between(ck: &Checkpoint, file: &[Variable]) -> Result<Option<Reshape>> {
        Reshape::between(ck, file, Path::new("/no/such/t.var"), 1000)
    }

    fn error(r: Result<Option<Reshape>>) -> String {
        format!("{:#}", r.expect_err("refused"))
    }

    #[test]
    fn the_same_file_changes_nothing() {
        let ck = checkpoint();
        assert_eq!(between(&ck, &ck.vars).unwrap(), None);
    }

    #[test]
    fn rows_added_join_after_the_last_iteration_handed_out_and_rows_dropped_are_held() {
        let mut ck = checkpoint();
        let mut d = var("d", -5.0, 5.0, 1.0);
        d.start = 4.0;
        let file = [ck.vars[2].clone(), d, ck.vars[0].clone()];
        let r = between(&ck, &file).unwrap().expect("a change");
        assert_eq!(
            (r.joining.clone(), r.dropping.clone()),
            (vec!["d".to_string()], vec!["b".to_string()])
        );
        r.apply(&mut ck);
        let names: Vec<_> = ck.vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            ["a", "b", "c", "d"],
            "the checkpoint's order, then the new row"
        );
        assert_eq!(ck.state.theta, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(ck.state.start, [0.0, 0.0, 0.0, 4.0]);
        assert_eq!(ck.state.held, ["b"]);
        assert_eq!(
            ck.state.joined,
            [Join {
                name: "d".into(),
                after: 102,
                curve: 1000
            }],
            "joins after the last iteration handed out; the missing 101 is played without it"
        );
        use crate::spsa::Part;
        assert_eq!(
            ck.state.parts(&ck.vars),
            [
                Part::Always,
                Part::Held,
                Part::Always,
                Part::After {
                    after: 102,
                    curve: 1000
                }
            ]
        );
        // Resumed again with the same file: nothing more to do.
        assert_eq!(between(&ck, &file).unwrap(), None);
        // b comes back: it joins anew from its θ, and is no longer held.
        let back = [
            file[0].clone(),
            file[1].clone(),
            file[2].clone(),
            ck.vars[1].clone(),
        ];
        let r = between(&ck, &back).unwrap().expect("b comes back");
        assert_eq!(r.joining, ["b"]);
        r.apply(&mut ck);
        assert!(ck.state.held.is_empty());
        assert_eq!(ck.state.theta[1], 2.0);
    }

    #[test]
    fn a_rename_is_refused_naming_the_row_but_a_different_variable_in_its_place_joins() {
        let ck = checkpoint();
        let renamed = [
            ck.vars[0].clone(),
            ck.vars[1].clone(),
            var("z", -20.0, 20.0, 2.0),
        ];
        let e = error(between(&ck, &renamed));
        assert!(
            e.contains("row 3") && e.contains("`z`") && e.contains("`c`"),
            "{e}"
        );
        assert!(e.contains("nothing was written"), "{e}");
        let other = [
            ck.vars[0].clone(),
            ck.vars[1].clone(),
            var("z", -5.0, 5.0, 1.0),
        ];
        let r = between(&ck, &other).unwrap().unwrap();
        assert_eq!(
            (r.joining, r.dropping),
            (vec!["z".into()], vec!["c".into()])
        );
    }

    #[test]
    fn bounds_that_shut_out_theta_or_a_changed_schedule_are_refused_a_bound_that_holds_it_is_taken()
    {
        let ck = checkpoint();
        let mut file = ck.vars.clone();
        file[1].max = 1.5;
        let e = error(between(&ck, &file));
        assert!(
            e.contains("row 2") && e.contains("`b`") && e.contains("shut out its θ 2"),
            "{e}"
        );
        file[1].max = 2.0; // θ on the new bound is inside
        let r = between(&ck, &file).unwrap().expect("a moved bound");
        assert_eq!(r.vars[1].max, 2.0);
        assert!(r.joining.is_empty() && r.dropping.is_empty());
        let mut file = ck.vars.clone();
        file[2].c_end = 3.0;
        let e = error(between(&ck, &file));
        assert!(e.contains("`c`") && e.contains("c_end was 2, now 3"), "{e}");
    }

    #[test]
    fn a_row_cannot_join_a_run_with_no_iterations_left() {
        let mut ck = checkpoint();
        ck.state.next_fresh = 1001;
        let file = [
            ck.vars[0].clone(),
            ck.vars[1].clone(),
            ck.vars[2].clone(),
            var("d", 0.0, 1.0, 1.0),
        ];
        let e = error(between(&ck, &file));
        assert!(e.contains("`d`") && e.contains("--iterations"), "{e}");
        let r = Reshape::between(&ck, &file, Path::new("t.var"), 2000)
            .unwrap()
            .unwrap();
        assert_eq!(r.iterations, 2000);
    }

    #[test]
    fn a_checkpoint_read_back_stands_in_its_runs_shape_whatever_its_theta() {
        // Written and read back as a resume reads it: its start column holds θ (1, 2, 3), the
        // run's definition (a shared run's database) keeps the start values (0, 0, 0).
        let dir = tempfile::tempdir().unwrap();
        let written = checkpoint();
        let path = dir.path().join("run.checkpoint.var");
        let mut vars = written.vars.clone();
        vars[0].c_end = 0.1 + 0.2; // not a 4-decimal number: kept in full
        crate::tuner::checkpoint::write_with(&path, &written.state, &written.parts, &vars).unwrap();
        let ck = crate::tuner::checkpoint::read(&path).unwrap();
        assert_eq!(ck.vars[0].start, 1.0, "the start column holds θ");
        let shape = |vars: &[Variable], held: &[&str]| Reshape {
            vars: vars.to_vec(),
            joining: Vec::new(),
            dropping: Vec::new(),
            iterations: 1000,
            held: held.iter().map(|h| h.to_string()).collect(),
            joined: Vec::new(),
        };
        assert!(shape(&vars, &[]).stands_in(&ck));
        // A bound moved, a variable held, or one more: another shape.
        let mut moved = vars.clone();
        moved[2].max = 25.0;
        assert!(!shape(&moved, &[]).stands_in(&ck));
        assert!(!shape(&vars, &["b"]).stands_in(&ck));
        let mut more = vars.clone();
        more.push(var("d", -5.0, 5.0, 1.0));
        assert!(!shape(&more, &[]).stands_in(&ck));
    }
}
