//! The text a finished game leaves behind: one game-log line and one PGN game, each rendered
//! whole so it can go out in a single write.

use crate::engine::OptionValue;
use crate::game::{GameRecord, PgnOptions, write_pgn};

/// One game-log line (ending in a newline): when, which round and slot, who played whom from
/// which opening, and how it ended; `note` (e.g. the θ values) is appended after a `;`.
pub fn game_log_line(g: &GameRecord, round: &str, slot: usize, note: &str) -> String {
    format!(
        "[{}] round {round} slot {}: {} (White) vs {} (Black), opening {}: {} {} after {} plies{}{}\n",
        timestamp(),
        slot + 1,
        g.white,
        g.black,
        g.opening_source,
        g.result.pgn(),
        g.end,
        g.ply_count(),
        match &g.fault {
            Some(f) => format!(" ({})", f.fault).replace('\n', " "),
            None => String::new(),
        },
        if note.is_empty() {
            String::new()
        } else {
            format!("; {note}")
        }
    )
}

/// Options a PGN tag or game-log line lists in full; past this a game would carry a tune's
/// whole θ twice (1.5 MB a game at 50,000 options), so it names the first [`TAG_SHOWN`] and
/// counts the rest: the θ log has every game's values.
const TAG_FULL: usize = 64;
const TAG_SHOWN: usize = 16;

/// The game as PGN, with the option values each side played as `WhiteOptions`/`BlackOptions`
/// (cut short past 64 options), then `tags`.
pub fn pgn_text(
    g: &GameRecord,
    event: &str,
    round: &str,
    white_options: &[(String, OptionValue)],
    black_options: &[(String, OptionValue)],
    tags: &[(String, String)],
) -> String {
    let options = PgnOptions {
        event: event.to_string(),
        site: "spsa".into(),
        date: pgn_date(),
        round: round.to_string(),
        extra_tags: [
            (
                "WhiteOptions".into(),
                summarize_options(white_options, "; "),
            ),
            (
                "BlackOptions".into(),
                summarize_options(black_options, "; "),
            ),
        ]
        .into_iter()
        .chain(tags.iter().cloned())
        .collect(),
        move_comments: true,
    };
    write_pgn(g, &options)
}

/// [`describe_options`], cut short past 64 options (PGN tags and game-log lines).
pub fn summarize_options(options: &[(String, OptionValue)], separator: &str) -> String {
    if options.len() <= TAG_FULL {
        return describe_options(options, separator);
    }
    format!(
        "{}{separator}… and {} more",
        describe_options(&options[..TAG_SHOWN], separator),
        options.len() - TAG_SHOWN
    )
}

/// Options as `name=value` joined by `separator` (text values unquoted), for logs and PGN tags.
pub fn describe_options(options: &[(String, OptionValue)], separator: &str) -> String {
    options
        .iter()
        .map(|(n, v)| match v {
            OptionValue::Text(t) => format!("{n}={t}"),
            other => format!("{n}={other}"),
        })
        .collect::<Vec<_>>()
        .join(separator)
}

/// Seconds since the Unix epoch, for game log lines (no date crate needed).
fn timestamp() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Today's date as `YYYY.MM.DD` (UTC), from the civil-from-days algorithm.
fn pgn_date() -> String {
    let days = (timestamp() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}.{m:02}.{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(n: usize) -> Vec<(String, OptionValue)> {
        (0..n)
            .map(|i| (format!("W{i}"), OptionValue::Number(i as f64)))
            .collect()
    }

    #[test]
    fn sixty_four_options_are_listed_and_more_are_cut_to_sixteen_and_a_count() {
        let full = summarize_options(&options(64), "; ");
        assert_eq!(full.split("; ").count(), 64);
        assert!(full.ends_with("W63=63"), "{full}");
        let cut = summarize_options(&options(50_000), " ");
        assert!(cut.starts_with("W0=0 W1=1 "), "{cut}");
        assert!(cut.ends_with("W15=15 … and 49984 more"), "{cut}");
        assert!(cut.len() < 200, "{}", cut.len());
    }
}
