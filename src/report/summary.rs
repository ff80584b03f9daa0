//! The end-of-run table: each variable's start, final value and bounds.

use super::status::{TABLE_VARS, most_moved, table};
use crate::vars::{Variable, format_value};

/// Render the final table. `decimals` is how values are shown: 0 for engine runs (spin options
/// take integers), more for simulations. Past [`TABLE_VARS`] variables it shows those that
/// moved most in units of c_end, as `spsa report` does, and a line for the rest: a run of
/// 50,000 variables does not end in 50,000 lines.
pub fn final_table(vars: &[Variable], start: &[f64], theta: &[f64], decimals: usize) -> String {
    let moved = |i: usize| {
        let scale = if vars[i].c_end > 0.0 {
            vars[i].c_end
        } else {
            1.0
        };
        (theta[i] - start[i]) / scale
    };
    let shown: Vec<usize> = if vars.len() > TABLE_VARS {
        most_moved((0..vars.len()).map(moved), TABLE_VARS)
    } else {
        (0..vars.len()).collect()
    };
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|&i| {
            let v = &vars[i];
            vec![
                v.name.clone(),
                format_value(start[i], decimals),
                format_value(theta[i], decimals),
                format_value(v.min, decimals.max(4)),
                format_value(v.max, decimals.max(4)),
            ]
        })
        .collect();
    let mut text = table(&["variable", "start", "final", "min", "max"], &rows);
    if shown.len() < vars.len() {
        let rest = vars.len() - shown.len();
        let most = (0..vars.len())
            .filter(|i| !shown.contains(i))
            .map(|i| moved(i).abs())
            .fold(0.0, f64::max);
        text.push_str(&format!(
            "(the {} that moved most in units of c_end; the other {rest} moved at most {most:.2} c_end: `spsa report LOG --format csv` lists every one)\n",
            shown.len()
        ));
    }
    text
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

/// The closing lines of the live Elo curve: the latest point against each opponent (the one
/// at the highest iteration: a shared run's points arrive in the order workers report them),
/// the pairs it cost, and why a stop rule ended the run.
pub fn track_lines(t: &crate::spsa::track::TrackState) -> String {
    let mut out = String::new();
    let mut seen = Vec::new();
    for p in &t.points {
        if seen.contains(&p.against) {
            continue;
        }
        seen.push(p.against);
        let latest = crate::spsa::track::latest(&t.points, p.against).unwrap_or(p);
        let gained = crate::spsa::track::gained(&t.points, p.against)
            .map(|g| format!("track: vs {}: {}\n", p.against.name(), g.text()))
            .unwrap_or_default();
        out.push_str(&format!(
            "{}\n{gained}",
            super::progress::point_text(latest)
        ));
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
    fn past_forty_variables_the_most_moved_and_a_line_for_the_rest() {
        let text: String = (0..100)
            .map(|i| format!("v{i},0,-1000,1000,{},0.002,0\n", 1 + i % 2))
            .collect();
        let vars = crate::vars::parse(&text, std::path::Path::new("v")).unwrap();
        let start = vec![0.0; 100];
        // v_i moves i: in units of c_end (1 or 2) the odd ones move half as far, so the 40
        // shown are the even ones from 98 down to 40 and the odd ones from 99 down to 81.
        let theta: Vec<f64> = (0..100).map(|i| i as f64).collect();
        let t = final_table(&vars, &start, &theta, 0);
        let names: Vec<&str> = t
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with('v'))
            .collect();
        assert_eq!(names.len(), 40, "{t}");
        assert_eq!(&names[..3], ["v98", "v96", "v94"], "{t}");
        assert!(t.contains("the other 60 moved at most 39.50 c_end"), "{t}");
        // Forty or fewer: every one, in file order.
        let t = final_table(&vars[..40], &start[..40], &theta[..40], 0);
        assert_eq!(t.lines().count(), 41);
        assert!(t.lines().nth(1).unwrap().starts_with("v0 "), "{t}");
    }

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

    #[test]
    fn the_curves_closing_line_is_its_latest_point_whatever_order_the_points_came_in() {
        use crate::spsa::track::{Against, Point, TrackState};
        // A shared run: workers reported point 3 (iteration 300) before point 2 (200); against
        // Stockfish's values only point 1 was measured.
        let at = |point: u64, against: Against, penta: [u64; 5]| {
            Point::measured(point, 100 * point, against, penta)
        };
        let t = TrackState {
            points: vec![
                at(1, Against::Start, [0, 2, 6, 2, 0]),
                at(1, Against::Defaults, [0, 1, 8, 1, 0]),
                at(3, Against::Start, [0, 0, 6, 4, 0]),
                at(2, Against::Start, [0, 4, 6, 0, 0]),
            ],
            ..Default::default()
        };
        let text = track_lines(&t);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("track: iteration 300 vs start: Elo +"),
            "{text}"
        );
        assert!(lines[1].starts_with("track: vs start: "), "{text}");
        assert!(
            lines[2].starts_with("track: iteration 100 vs defaults: Elo +0.0"),
            "{text}"
        );
        assert_eq!(
            lines.last(),
            Some(&"track: 4 measurements, 40 pairs on held-out openings")
        );
    }
}
