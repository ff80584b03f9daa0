//! The final values in the forms users paste into their engine or feed back into a run.

use std::fmt::Write as _;

use crate::vars::{self, Variable, format_value};

/// What `spsa report --format` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// The human report (see [`super::status`]).
    #[default]
    Table,
    /// The variables CSV with θ in the start column (loads back as a variables file).
    Csv,
    /// `setoption name <name> value <v>` lines.
    Uci,
    /// `name, v` lines.
    Pairs,
    /// The SPSA parameter block of OpenBench and fishtest: `name, int, value, min, max, c_end,
    /// r_end` (`float` and decimals when the bounds or --decimals are not integers).
    Openbench,
    /// The lines Stockfish prints when built with TUNE: `name,value,min,max,c_end,r_end`.
    Tune,
    /// θ after every applied result, from the log: `row,iteration,<θ…>` (see
    /// [`super::history_csv`]).
    History,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "table" => Ok(Format::Table),
            "csv" => Ok(Format::Csv),
            "uci" => Ok(Format::Uci),
            "pairs" => Ok(Format::Pairs),
            "openbench" | "fishtest" => Ok(Format::Openbench),
            "tune" => Ok(Format::Tune),
            "history" => Ok(Format::History),
            _ => Err(format!(
                "unknown format `{s}` (expected table, csv, uci, pairs, openbench, tune or history)"
            )),
        }
    }
}

/// θ rounded to `decimals` places (half away from zero) and kept within the bounds, as the
/// engine will take it: with 0 decimals, within the integers inside [min, max].
pub fn engine_value(v: &Variable, theta: f64, decimals: usize) -> String {
    let scale = 10f64.powi(decimals.min(9) as i32);
    let lo = (v.min * scale).ceil();
    let hi = (v.max * scale).floor();
    let mut r = (theta * scale).round();
    if lo <= hi {
        r = r.clamp(lo, hi);
    }
    format_value(r / scale, decimals)
}

/// Render θ in one of the paste-able formats (`Table` and `History` are rendered elsewhere).
pub fn render(format: Format, vars: &[Variable], theta: &[f64], decimals: usize) -> String {
    let mut out = String::new();
    match format {
        Format::Table | Format::History => {}
        Format::Csv => out = vars::to_csv(vars, theta),
        Format::Uci => {
            for (v, &t) in vars.iter().zip(theta) {
                let _ = writeln!(
                    out,
                    "setoption name {} value {}",
                    v.name,
                    engine_value(v, t, decimals)
                );
            }
        }
        Format::Pairs => {
            for (v, &t) in vars.iter().zip(theta) {
                let _ = writeln!(out, "{}, {}", v.name, engine_value(v, t, decimals));
            }
        }
        Format::Openbench => {
            for (v, &t) in vars.iter().zip(theta) {
                let integral = decimals == 0 && v.min.fract() == 0.0 && v.max.fract() == 0.0;
                let (kind, places) = if integral {
                    ("int", 0)
                } else {
                    ("float", decimals.max(2))
                };
                let _ = writeln!(
                    out,
                    "{}, {kind}, {}, {}, {}, {}, {}",
                    v.name,
                    engine_value(v, t, places),
                    format_value(v.min, 9),
                    format_value(v.max, 9),
                    format_value(v.c_end, 4),
                    format_value(v.r_end, 6)
                );
            }
        }
        Format::Tune => {
            for (v, &t) in vars.iter().zip(theta) {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{}",
                    v.name,
                    engine_value(v, t, decimals),
                    format_value(v.min, 9),
                    format_value(v.max, 9),
                    format_value(v.c_end, 4),
                    format_value(v.r_end, 6)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn vars() -> Vec<Variable> {
        vars::parse(
            "Knight Value,300,0,1000,20,0.002,0\nTempo,0.4,0.3,0.8,0.1,0.002,0\nneg,-3,-10,10,1,0.002,0\n",
            Path::new("v"),
        )
        .unwrap()
    }

    #[test]
    fn uci_and_pairs_round_within_bounds() {
        let theta = [312.5, 0.45, -2.5];
        assert_eq!(
            render(Format::Uci, &vars(), &theta, 0),
            "setoption name Knight Value value 313\n\
             setoption name Tempo value 0\n\
             setoption name neg value -3\n"
        );
        // Tempo's only integer candidate would be out of [0.3, 0.8]; no integer fits, so the
        // plain rounding is shown. With decimals it is kept inside.
        assert_eq!(
            render(Format::Pairs, &vars(), &theta, 1),
            "Knight Value, 312.5\nTempo, 0.5\nneg, -2.5\n"
        );
        assert_eq!(engine_value(&vars()[0], 1000.4, 0), "1000");
        assert_eq!(engine_value(&vars()[0], 999.6, 0), "1000");
        assert_eq!(engine_value(&vars()[2], -10.7, 0), "-10");
    }

    #[test]
    fn csv_loads_back_with_the_same_theta() {
        let theta = [312.123_456, 0.45, -2.5];
        let text = render(Format::Csv, &vars(), &theta, 0);
        let back = vars::parse(&text, Path::new("out.var")).unwrap();
        for ((b, v), t) in back.iter().zip(vars()).zip(theta) {
            assert_eq!(b.name, v.name);
            assert!((b.start - t).abs() <= 5e-5, "{} vs {t}", b.start);
            assert_eq!(
                (b.min, b.max, b.c_end, b.r_end),
                (v.min, v.max, v.c_end, v.r_end)
            );
        }
    }

    #[test]
    fn openbench_block_loads_back_as_parameter_rows() {
        let theta = [312.5, 0.45, -2.5];
        let text = render(Format::Openbench, &vars(), &theta, 0);
        assert_eq!(
            text,
            "Knight Value, int, 313, 0, 1000, 20, 0.002\n\
             Tempo, float, 0.45, 0.3, 0.8, 0.1, 0.002\n\
             neg, int, -3, -10, 10, 1, 0.002\n"
        );
        // Our variables reader takes these rows as they are (start = value).
        let back = vars::parse(&text, Path::new("ob.var")).unwrap();
        assert_eq!(
            back.iter().map(|v| v.start).collect::<Vec<_>>(),
            [313.0, 0.45, -3.0]
        );
        for (b, v) in back.iter().zip(vars()) {
            assert_eq!(
                (&b.name, b.min, b.max, b.c_end, b.r_end),
                (&v.name, v.min, v.max, v.c_end, v.r_end)
            );
        }
        // With decimals every row is a float row.
        let text = render(Format::Openbench, &vars(), &theta, 1);
        assert!(
            text.starts_with("Knight Value, float, 312.5, 0, 1000,"),
            "{text}"
        );
    }

    #[test]
    fn tune_lines_as_stockfish_prints_them() {
        let theta = [312.5, 0.45, -2.5];
        assert_eq!(
            render(Format::Tune, &vars(), &theta, 0),
            "Knight Value,313,0,1000,20,0.002\nTempo,0,0.3,0.8,0.1,0.002\nneg,-3,-10,10,1,0.002\n"
        );
    }

    #[test]
    fn formats_parse() {
        assert_eq!("openbench".parse::<Format>(), Ok(Format::Openbench));
        assert_eq!("Tune".parse::<Format>(), Ok(Format::Tune));
        assert_eq!("UCI".parse::<Format>(), Ok(Format::Uci));
        assert!("xml".parse::<Format>().is_err());
    }
}
