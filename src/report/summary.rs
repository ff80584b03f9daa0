//! The end-of-run table: each variable's start, final value and bounds.

use super::status::table;
use crate::vars::{Variable, format_value};

/// Render the final table. `decimals` is how values are shown: 0 for engine runs (spin options
/// take integers), more for simulations.
pub fn final_table(vars: &[Variable], start: &[f64], theta: &[f64], decimals: usize) -> String {
    let rows: Vec<Vec<String>> = vars
        .iter()
        .zip(start.iter().zip(theta))
        .map(|(v, (&s, &t))| {
            vec![
                v.name.clone(),
                format_value(s, decimals),
                format_value(t, decimals),
                format_value(v.min, decimals.max(4)),
                format_value(v.max, decimals.max(4)),
            ]
        })
        .collect();
    table(&["variable", "start", "final", "min", "max"], &rows)
}

/// The games a run played, as its last line says them (θ+ view, pentanomial, faults).
pub fn games_line(c: &crate::tuner::Counts) -> String {
    format!(
        "games: +{} ={} -{} (θ+ view), pentanomial {:?}{}\n",
        c.wins,
        c.draws,
        c.losses,
        c.pentanomial,
        super::progress::faults_suffix(c)
    )
}

/// The closing lines of the live Elo curve: the last point against each opponent, the pairs it
/// cost, and why a stop rule ended the run.
pub fn track_lines(t: &crate::spsa::track::TrackState) -> String {
    let mut out = String::new();
    let mut seen = Vec::new();
    for p in t.points.iter().rev() {
        if !seen.contains(&p.against) {
            seen.push(p.against);
            let gained = crate::spsa::track::gained(&t.points, p.against)
                .map(|g| format!("track: vs {}: {}\n", p.against.name(), g.text()))
                .unwrap_or_default();
            out.insert_str(0, &format!("{}\n{gained}", super::progress::point_text(p)));
        }
    }
    let pairs: u64 = t.points.iter().map(|p| p.pairs()).sum();
    out.push_str(&format!(
        "track: {} measurements, {pairs} pairs on held-out openings\n",
        t.points.len()
    ));
    if let Some(why) = &t.stopped {
        out.push_str(&format!("stopped by the [track] rule {why}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_table_with_rounded_values() {
        let vars = crate::vars::parse(
            "Knight Value,150,0,1000,20,0.002,0\nx,0.5,-1.25,1,0.1,0.01,1\n",
            std::path::Path::new("v"),
        )
        .unwrap();
        let t = final_table(&vars, &[150.0, 0.5], &[301.6, -0.123456], 2);
        assert_eq!(
            t,
            "variable      start  final    min   max\n\
             Knight Value    150  301.6      0  1000\n\
             x               0.5  -0.12  -1.25     1\n"
        );
    }
}
