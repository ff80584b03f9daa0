//! Helpers shared by the coefficient tests: labelled positions from real opening lines and the
//! sparring engine's export of them.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use rand::{RngExt, SeedableRng};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

/// Labelled positions from real opening lines of the bundled book, each played on by up to 90
/// random legal plies (seeded), so every game phase and odd pawn structures occur. Labels are
/// spread over the three results (they do not matter to the evaluation).
pub fn write_positions(path: &Path, n: usize) -> Vec<Chess> {
    let book = std::fs::read_to_string("openings/balanced_6ply.epd").unwrap();
    let starts: Vec<Chess> = book
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().take(4).collect();
            let fen: Fen = format!("{} 0 1", fields.join(" ")).parse().unwrap();
            fen.into_position(CastlingMode::Standard).unwrap()
        })
        .collect();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(9);
    let mut out = String::new();
    let mut positions = Vec::new();
    while positions.len() < n {
        let mut pos = starts[rng.random_range(0..starts.len())].clone();
        let plies = rng.random_range(0..90);
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.random_range(0..moves.len())];
            pos.play_unchecked(m);
        }
        if pos.is_game_over() {
            continue;
        }
        let fen = Fen::from_position(&pos, EnPassantMode::Legal);
        let label = ["1-0", "1/2-1/2", "0-1"][positions.len() % 3];
        // Both accepted forms.
        if positions.len() % 2 == 0 {
            out.push_str(&format!("{fen} [{label}]\n"));
        } else {
            let epd: Vec<String> = fen
                .to_string()
                .split(' ')
                .take(4)
                .map(String::from)
                .collect();
            out.push_str(&format!("{} c9 \"{label}\";\n", epd.join(" ")));
        }
        positions.push(pos);
    }
    std::fs::write(path, out).unwrap();
    positions
}

/// Runs `sparring coefficients epd coef`.
pub fn export(epd: &Path, coef: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args([
            "coefficients",
            epd.to_str().unwrap(),
            coef.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
}
