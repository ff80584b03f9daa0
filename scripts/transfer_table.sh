#!/usr/bin/env bash
# The transfer table of proofs/transfer/README.md ("How many nodes to tune at"): every fixed-node tune of
# classical Stockfish against Stockfish's own values on the openings its tune held out, at its
# own node count, 1 s + 10 ms, 3 s + 30 ms and 10 s + 0.1 s. Each cell keeps its match record in
# proofs/transfer/ and goes on from it (`--resume`) when the script runs again, so the table
# fills across sessions. One cell is one `spsa verify` command, printed before it runs.
#
#   scripts/transfer_table.sh [CELL...]      # e.g. A:3s B:10s; default: every cell in order
#
# Cells: TUNE:CHECK with TUNE one of A (from Stockfish's values, 10,000 nodes), B (from a bad
# start, 10,000 nodes), C (from Stockfish's values, 10,000 nodes, shared run), D (from
# Stockfish's values, 40,000 nodes) and CHECK one of own, 1s, 3s, 10s.
#
# Every cell plays one game at a time, the match and its engines bound to core CORE (default:
# the machine's last core), so two copies of the script on CORE=0 and CORE=1 fill a 2-core
# machine; CORE=all plays one game on every core (a long cell, with nothing else running). The clock checks play the real clock, so that core must carry nothing else: keep
# other work off it (`taskset -c 0 nice -n 19 spsa run ...` for a tune beside it) and note
# the load printed before each cell. Separate work by core, not by nice: where the kernel's
# autogroup is on (it was on the machine that filled the table), nice only ranks processes of
# one terminal session, and a nice-19 tune started from another took half a core from a build. A clock
# counted in nodes (Stockfish's `nodestime`) did not give the real clock's verdict side by side
# (proofs/transfer/README.md), so it is only played when asked for: NODESTIME=2000 plays the clock checks
# in nodes at nice 19 on both cores, each with its own record (`..._nodestime.match.json`).
#
# A cell that is interrupted (Ctrl-C, kill) stops the script: run it again to go on.
set -euo pipefail
cd "$(dirname "$0")/.."
spsa=${SPSA:-target/release/spsa}
nodestime=${NODESTIME:-}
core=${CORE:-$(($(nproc) - 1))}
mkdir -p logs/transfer proofs/transfer

tune() {
    case $1 in
        A) echo "proofs/sf_classical_defaults/sf_classical_defaults.toml proofs/sf_classical_defaults/sf_classical_defaults_tuned.var" ;;
        B) echo "proofs/sf_classical_bad/sf_classical_bad_measured.toml proofs/sf_classical_bad/sf_classical_bad_measured_tuned.var" ;;
        C) echo "proofs/sf_classical_defaults_shared/sf_classical_defaults_shared.toml proofs/sf_classical_defaults_shared/sf_classical_defaults_shared_tuned.var" ;;
        D) echo "proofs/sf_classical_defaults_40k/sf_classical_defaults_40k.toml proofs/sf_classical_defaults_40k/sf_classical_defaults_40k_tuned.var" ;;
        *) echo "unknown tune $1" >&2; exit 2 ;;
    esac
}

check() {
    case $1 in
        own) echo "--pairs 200 --seed 31" ;;
        1s) echo "--tc 1000+10 --pairs 200 --seed 32" ;;
        3s) echo "--tc 3000+30 --pairs 200 --seed 33" ;;
        10s) echo "--tc 10000+100 --sprt 0,10 --pairs 400 --seed 34" ;;
        *) echo "unknown check $1" >&2; exit 2 ;;
    esac
}

cells=("$@")
if [ ${#cells[@]} -eq 0 ]; then
    # The cells still to play (proofs/transfer/README.md has the others): the 10 s + 0.1 s SPRT of A,
    # the best tune by its 3 s + 30 ms result, then tune C's row, then tune D's once it is tuned.
    # A cell already played to its end prints its result again.
    cells=(A:10s C:own C:3s C:10s D:own D:1s D:3s D:10s)
fi
for cell in "${cells[@]}"; do
    t=${cell%%:*}; c=${cell#*:}
    read -r config values <<<"$(tune "$t")"
    flags=$(check "$c")
    # A:1s replays the real-clock match of proofs/transfer/README.md (seed 6): the same openings in the
    # same order.
    [ "$cell" = A:1s ] && flags=${flags/--seed 32/--seed 6}
    name=${t}_${c}
    run=()
    if [ -n "$nodestime" ] && [ "$c" != own ]; then
        name=${name}_nodestime
        flags="$flags --nodestime $nodestime --stall-timeout 600000 --concurrency 2 --no-bind-cores"
        run=(nice -n 19)
    elif [ "$core" = all ]; then
        # One game on each core, each slot and its engines bound to a core by spsa itself.
        flags="$flags --concurrency $(nproc)"
        run=(env)
    else
        flags="$flags --concurrency 1 --no-bind-cores"
        run=(taskset -c "$core")
    fi
    record=proofs/transfer/$name.match.json
    resume=""
    [ -f "$record" ] && resume="--resume"
    cmd="$spsa verify $config --values $values --against defaults $flags --handshake-timeout 120000 --progress 60 --record $record --pgn logs/transfer/$name.pgn $resume"
    echo "== $cell ($(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)): ${run[*]} $cmd" >&2
    # shellcheck disable=SC2086
    "${run[@]}" $cmd
done
