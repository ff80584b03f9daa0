#!/usr/bin/env bash
# How many nodes a move classical Stockfish searches at a clock, on the real clock and with the
# clock counted in nodes (Stockfish's `nodestime`), side by side (proofs/transfer/README.md, "How many
# nodes to tune at"). Plays PAIRS pairs (default 3) of tune A against Stockfish's values in each
# mode, the match bound to core CORE (default: the last core; keep other work off it), logs
# every engine line, and prints the median nodes of the last `info` before each `bestmove`:
# for all moves, and for each engine's moves 1-30, 31-80 and 81 on (counted over both engines).
#
#   scripts/clock_in_nodes.sh [TC] [NODESTIME]     # default: 1000+10 2000
set -euo pipefail
cd "$(dirname "$0")/.."
spsa=${SPSA:-target/release/spsa}
tc=${1:-1000+10}
nodestime=${2:-2000}
pairs=${PAIRS:-3}
core=${CORE:-$(($(nproc) - 1))}
out=logs/clock_in_nodes
mkdir -p "$out"

median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }

for mode in real nodes; do
    extra=()
    [ "$mode" = nodes ] && extra=(--nodestime "$nodestime")
    log=$out/${tc}_$mode.log
    rm -f "$log"
    taskset -c "$core" "$spsa" verify proofs/sf_classical_defaults/sf_classical_defaults.toml \
        --values proofs/sf_classical_defaults/sf_classical_defaults_tuned.var --against defaults --tc "$tc" "${extra[@]}" \
        --pairs "$pairs" --seed 6 --concurrency 1 --no-bind-cores --engine-log "$log" \
        --pgn "$out/${tc}_$mode.pgn" >"$out/${tc}_$mode.out" 2>&1
    # Per move: "<move number of that engine in its game> <nodes>".
    awk '$4 == ">" && $5 == "ucinewgame" { move[$3] = 0 }
         $4 == "<" && $5 == "info" { for (i = 5; i < NF; i++) if ($i == "nodes") last[$3] = $(i + 1) }
         $4 == "<" && $5 == "bestmove" && ($3 in last) { print ++move[$3], last[$3]; delete last[$3] }' \
        "$log" >"$out/${tc}_$mode.moves"
    all=$(cut -d' ' -f2 "$out/${tc}_$mode.moves" | median)
    early=$(awk '$1 <= 30 {print $2}' "$out/${tc}_$mode.moves" | median)
    mid=$(awk '$1 > 30 && $1 <= 80 {print $2}' "$out/${tc}_$mode.moves" | median)
    late=$(awk '$1 > 80 {print $2}' "$out/${tc}_$mode.moves" | median)
    label=$mode
    [ "$mode" = nodes ] && label="nodestime $nodestime"
    echo "$tc $label: $(wc -l <"$out/${tc}_$mode.moves") moves, median nodes a move $all (moves 1-30: $early, 31-80: $mid, 81 on: $late)"
done
