#!/usr/bin/env bash
# Fuzz every parser (docs/development.md, "Fuzzing"): mutated real files of each format from a
# fixed seed, each input under catch_unwind and timed. Any flag of tools/fuzz_parsers.rs:
#   scripts/fuzz.sh --inputs 1000000             every parser, a million inputs each
#   scripts/fuzz.sh --inputs 100000 --target pgn,epd --seed 7
# The dev profile on purpose: overflow checks are on, as in the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
exec nice -n 10 cargo run --quiet --locked --features fuzzing --example fuzz_parsers -- "$@"
