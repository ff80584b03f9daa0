#!/usr/bin/env bash
# The transfer table of docs/proofs.md ("How many nodes to tune at"): every fixed-node tune of
# classical Stockfish against Stockfish's own values on the openings its tune held out, at its
# own node count, 1 s + 10 ms, 3 s + 30 ms and 10 s + 0.1 s. The clock matches count the clock in
# nodes (`--nodestime`, Stockfish's own option) so that they play the same games under any load
# and can run at nice 19 beside other work; each cell keeps its match record in proofs/transfer/
# and goes on from it (`--resume`) when the script runs again, so the table fills across
# sessions. One cell is one `spsa verify` command, printed before it runs.
#
#   scripts/transfer_table.sh [CELL...]      # e.g. A:3s B:10s; default: every cell in order
#
# Cells: TUNE:CHECK with TUNE one of A (from Stockfish's values, 10,000 nodes), B (from a bad
# start, 10,000 nodes), C (from Stockfish's values, 10,000 nodes, shared run), D (from
# Stockfish's values, 40,000 nodes) and CHECK one of own, 1s, 3s, 10s.
set -euo pipefail
cd "$(dirname "$0")/.."
spsa=${SPSA:-target/release/spsa}
nodestime=${NODESTIME:-2000}
mkdir -p logs/transfer proofs/transfer

tune() {
    case $1 in
        A) echo "conf/sf_classical_defaults.toml vars/sf_classical_defaults_tuned.var" ;;
        B) echo "conf/sf_classical_bad_measured.toml vars/sf_classical_bad_measured_tuned.var" ;;
        C) echo "conf/sf_classical_defaults_shared.toml vars/sf_classical_defaults_shared_tuned.var" ;;
        D) echo "conf/sf_classical_defaults_40k.toml vars/sf_classical_defaults_40k_tuned.var" ;;
        *) echo "unknown tune $1" >&2; exit 2 ;;
    esac
}

check() {
    case $1 in
        own) echo "--pairs 200 --seed 31" ;;
        1s) echo "--tc 1000+10 --nodestime $nodestime --pairs 200 --seed 32 --stall-timeout 600000" ;;
        3s) echo "--tc 3000+30 --nodestime $nodestime --pairs 200 --seed 33 --stall-timeout 600000" ;;
        10s) echo "--tc 10000+100 --nodestime $nodestime --sprt 0,10 --pairs 400 --seed 34 --stall-timeout 600000" ;;
        *) echo "unknown check $1" >&2; exit 2 ;;
    esac
}

cells=("$@")
if [ ${#cells[@]} -eq 0 ]; then
    # The cells not played before this script (docs/proofs.md has the others, played at the
    # real clock), A:1s first: against its real-clock twin it checks that a clock counted in
    # nodes gives the same verdict.
    cells=(A:1s C:own A:3s B:3s C:3s)
fi
for cell in "${cells[@]}"; do
    t=${cell%%:*}; c=${cell#*:}
    read -r config values <<<"$(tune "$t")"
    record=proofs/transfer/${t}_${c}.match.json
    resume=""
    [ -f "$record" ] && resume="--resume"
    flags=$(check "$c")
    # A:1s replays the real-clock match of docs/proofs.md (seed 6) with the clock in nodes:
    # the same openings in the same order, side by side.
    [ "$cell" = A:1s ] && flags=${flags/--seed 32/--seed 6}
    cmd="$spsa verify $config --values $values --against defaults $flags --concurrency 2 --no-bind-cores --handshake-timeout 120000 --progress 60 --record $record --pgn logs/transfer/${t}_${c}.pgn $resume"
    echo "== $cell: $cmd" >&2
    # shellcheck disable=SC2086
    nice -n 19 $cmd
done
