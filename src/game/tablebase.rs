//! Tablebase adjudication: a game that reaches a position the Syzygy tables cover ends with the
//! tables' verdict, so engines neither spend time on a solved endgame nor spoil it by chance.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shakmaty::{Chess, Color, Position};
use shakmaty_syzygy::{Metric, SyzygyError, Tablebase, Wdl};

use super::record::EndReason;

/// A Syzygy folder that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TablebaseError {
    #[error("{dir}: cannot read Syzygy tables: {cause}")]
    Read { dir: PathBuf, cause: std::io::Error },
    #[error("{dir}: no Syzygy tables (*.rtbw, *.rtbz) in this folder")]
    Empty { dir: PathBuf },
}

/// A Syzygy folder that cannot be used is the user's to fix.
impl crate::error::UserFacing for TablebaseError {
    fn is_user_error(&self) -> bool {
        true
    }
}

/// Syzygy tables, opened once per process and shared by every game: a clone shares the same
/// tables (and their open files).
#[derive(Clone)]
pub struct Tablebases {
    dir: PathBuf,
    tables: Arc<Tablebase<Chess>>,
}

impl Tablebases {
    /// Register the tables in `dir` (files are opened lazily, on the first probe that needs them).
    pub fn open(dir: &Path) -> Result<Tablebases, TablebaseError> {
        let mut tables = Tablebase::new();
        tables
            .add_directory(dir)
            .map_err(|cause| TablebaseError::Read {
                dir: dir.to_path_buf(),
                cause,
            })?;
        if tables.max_pieces() == 0 {
            return Err(TablebaseError::Empty {
                dir: dir.to_path_buf(),
            });
        }
        Ok(Tablebases {
            dir: dir.to_path_buf(),
            tables: Arc::new(tables),
        })
    }

    /// The folder the tables came from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The most pieces any loaded table covers.
    pub fn max_pieces(&self) -> usize {
        self.tables.max_pieces()
    }

    /// How the game ends at `pos` by the tables, or `None` when they give no verdict: more
    /// pieces than the tables cover, castling rights, a missing or unreadable table, or a value
    /// that DTZ rounding leaves ambiguous under the 50-move rule.
    ///
    /// The verdict takes the position's half-move clock into account (with DTZ tables), so a
    /// win that the 50-move rule will frustrate is a draw. Without a DTZ table only a position
    /// right after a capture or pawn move (half-move clock 0) is judged by its WDL table.
    pub fn verdict(&self, pos: &Chess) -> Option<EndReason> {
        if pos.board().occupied().count() > self.max_pieces() || !pos.castles().is_empty() {
            return None;
        }
        let wdl = match self.tables.probe_wdl(pos) {
            Ok(wdl) => wdl.unambiguous()?,
            Err(SyzygyError::MissingTable {
                metric: Metric::Dtz,
                ..
            }) if pos.halfmoves() == 0 => self.tables.probe_wdl_after_zeroing(pos).ok()?,
            Err(_) => return None,
        };
        Some(end_for(wdl, pos.turn()))
    }
}

/// The end a WDL value (from the view of `to_move`, the side to move) means: a win or loss
/// under the 50-move rule decides the game; cursed wins and blessed losses are draws.
pub(crate) fn end_for(wdl: Wdl, to_move: Color) -> EndReason {
    match wdl {
        Wdl::Win => EndReason::TablebaseWin { winner: to_move },
        Wdl::Loss => EndReason::TablebaseWin { winner: !to_move },
        Wdl::CursedWin | Wdl::Draw | Wdl::BlessedLoss => EndReason::TablebaseDraw,
    }
}

impl fmt::Debug for Tablebases {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tablebases")
            .field("dir", &self.dir)
            .field("max_pieces", &self.max_pieces())
            .finish()
    }
}

/// Two handles are equal when they read the same folder (settings compare by what they mean).
impl PartialEq for Tablebases {
    fn eq(&self, other: &Tablebases) -> bool {
        self.dir == other.dir
    }
}

impl Eq for Tablebases {}

#[cfg(test)]
#[path = "../../tests/syzygy_tables/mod.rs"]
pub(crate) mod syzygy_tables;

#[cfg(test)]
mod tests {
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    use super::*;
    use Color::{Black, White};

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("test FEN parses")
            .into_position(CastlingMode::Standard)
            .expect("test FEN is legal")
    }

    fn tables() -> Option<Tablebases> {
        let dir = syzygy_tables::tables()?;
        Some(Tablebases::open(&dir).expect("the fetched tables load"))
    }

    #[test]
    fn the_fetched_set_covers_four_pieces() {
        let Some(tb) = tables() else { return };
        assert_eq!(tb.max_pieces(), 4);
    }

    #[test]
    fn queen_against_bare_king_is_won_for_the_queen_side() {
        let Some(tb) = tables() else { return };
        // White to move and win; then Black to move and lose: the same winner either way.
        assert_eq!(
            tb.verdict(&pos("8/8/8/4k3/8/8/8/1Q2K3 w - - 0 1")),
            Some(EndReason::TablebaseWin { winner: White })
        );
        assert_eq!(
            tb.verdict(&pos("8/8/8/4k3/8/8/8/1Q2K3 b - - 0 1")),
            Some(EndReason::TablebaseWin { winner: White })
        );
        assert_eq!(
            tb.verdict(&pos("3qk3/8/8/8/8/8/8/4K3 w - - 0 1")),
            Some(EndReason::TablebaseWin { winner: Black })
        );
    }

    #[test]
    fn rook_against_rook_is_drawn() {
        let Some(tb) = tables() else { return };
        assert_eq!(
            tb.verdict(&pos("4k3/8/8/2r5/8/8/5R2/4K3 w - - 0 1")),
            Some(EndReason::TablebaseDraw)
        );
    }

    #[test]
    fn no_verdict_beyond_the_tables_or_with_castling_rights() {
        let Some(tb) = tables() else { return };
        // Five pieces: the 3-4-piece set has no table.
        assert_eq!(tb.verdict(&pos("4k3/8/8/2r5/8/8/5RP1/4K3 w - - 0 1")), None);
        // KRvK with White's castling right (rook on h1, king on e1): the tables exclude it.
        assert_eq!(tb.verdict(&pos("4k3/8/8/8/8/8/8/4K2R w K - 0 1")), None);
        assert_eq!(
            tb.verdict(&pos("4k3/8/8/8/8/8/8/4K2R w - - 0 1")),
            Some(EndReason::TablebaseWin { winner: White })
        );
    }

    #[test]
    fn a_win_the_fifty_move_rule_frustrates_is_a_draw() {
        let Some(tb) = tables() else { return };
        // King and rook against king, mate far away: won with a fresh half-move clock, a cursed
        // win (and a blessed loss for the defender to move) when the clock is nearly out.
        let fresh = pos("8/8/8/3k4/8/8/8/R3K3 w - - 0 1");
        assert_eq!(
            tb.verdict(&fresh),
            Some(EndReason::TablebaseWin { winner: White })
        );
        assert_eq!(
            tb.verdict(&pos("8/8/8/3k4/8/8/8/R3K3 w - - 95 60")),
            Some(EndReason::TablebaseDraw)
        );
        assert_eq!(
            tb.verdict(&pos("8/8/8/3k4/8/8/8/R3K3 b - - 95 60")),
            Some(EndReason::TablebaseDraw)
        );
    }

    #[test]
    fn without_dtz_tables_only_a_fresh_half_move_clock_is_judged() {
        let Some(dir) = syzygy_tables::tables() else {
            return;
        };
        let wdl_only = tempfile::tempdir().expect("temp dir");
        for name in ["KRvK.rtbw", "KvK.rtbw"] {
            if dir.join(name).exists() {
                std::fs::copy(dir.join(name), wdl_only.path().join(name)).expect("copy table");
            }
        }
        let tb = Tablebases::open(wdl_only.path()).expect("WDL tables load");
        assert_eq!(
            tb.verdict(&pos("8/8/8/3k4/8/8/8/R3K3 w - - 0 1")),
            Some(EndReason::TablebaseWin { winner: White })
        );
        assert_eq!(tb.verdict(&pos("8/8/8/3k4/8/8/8/R3K3 w - - 10 6")), None);
        // A material the folder lacks: no verdict, no error.
        assert_eq!(tb.verdict(&pos("8/8/8/4k3/8/8/8/1Q2K3 w - - 0 1")), None);
    }

    #[test]
    fn verdicts_map_to_ends_from_the_side_to_moves_view() {
        for (to_move, other) in [(White, Black), (Black, White)] {
            assert_eq!(
                end_for(Wdl::Win, to_move),
                EndReason::TablebaseWin { winner: to_move }
            );
            assert_eq!(
                end_for(Wdl::Loss, to_move),
                EndReason::TablebaseWin { winner: other }
            );
            for drawn in [Wdl::CursedWin, Wdl::Draw, Wdl::BlessedLoss] {
                assert_eq!(end_for(drawn, to_move), EndReason::TablebaseDraw);
            }
        }
    }

    #[test]
    fn an_unusable_folder_is_a_clear_error() {
        let missing = Path::new("/nonexistent/syzygy");
        let err = Tablebases::open(missing).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/syzygy: cannot read")
        );
        let empty = tempfile::tempdir().expect("temp dir");
        let err = Tablebases::open(empty.path()).unwrap_err();
        assert!(matches!(err, TablebaseError::Empty { .. }), "{err}");
    }
}
