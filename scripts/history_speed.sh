#!/usr/bin/env bash
# The speed target of `spsa report LOG --format history` (issue 55): a θ log of 50,000
# variables × 30,000 applied results, written by `spsa simulate` on a generated variables
# file, streamed as CSV to /dev/null in at most 60 s and 200 MB of peak RSS. Prints each run's
# wall time and peak RSS (`/usr/bin/time -v`), their medians, and the load before and after.
#
#   scripts/history_speed.sh            # build in release, 3 runs
#   HISTORY_VARS=5000 HISTORY_ITERATIONS=3000 HISTORY_RUNS=1 scripts/history_speed.sh
#   SPSA=/path/to/spsa scripts/history_speed.sh   # another build, not rebuilt
#
# Needs /usr/bin/time (Debian's `time` package). The log (about 60 MB) is written in a
# temporary folder, removed at the end.
set -euo pipefail

vars=${HISTORY_VARS:-50000}
iterations=${HISTORY_ITERATIONS:-30000}
runs=${HISTORY_RUNS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
spsa=${SPSA:-}
if [ -z "$spsa" ]; then
    (cd "$root" && cargo build --release --quiet --bin spsa)
    spsa=$root/target/release/spsa
fi
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Variables of a few scales; the optimum of each is at 0.
awk -v n="$vars" 'BEGIN {
    for (i = 0; i < n; i++)
        printf "v%d,%d,-1000,1000,%d,0.002,%d\n", i, (i % 201) - 100, 5 + i % 11, 1 + i % 3
}' > "$dir/h.var"
cat > "$dir/h.conf" <<CONF
[Main]
Simulate = 1
Variables = h.var
Log = h.log
Iterations = $iterations
A = $((iterations / 10))
Gamma = 0.101
Alpha = 0.602

[Engine]
Concurrency = 1
CONF

echo "load before: $(uptime)"
start=$(date +%s.%N)
"$spsa" simulate "$dir/h.conf" --seed 1 > /dev/null 2> "$dir/simulate.err" \
    || { cat "$dir/simulate.err" >&2; exit 1; }
end=$(date +%s.%N)
echo "log: $vars variables × $iterations rows, $(stat -c %s "$dir/h.log") bytes, written in $(echo "$end - $start" | bc) s"
echo "history: $("$spsa" report "$dir/h.log" --format history --every "$iterations" | wc -c) bytes in the header and last row"

walls=()
rss=()
for run in $(seq "$runs"); do
    /usr/bin/time -v "$spsa" report "$dir/h.log" --format history > /dev/null 2> "$dir/time.txt" \
        || { cat "$dir/time.txt" >&2; exit 1; }
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$dir/time.txt")
    kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$dir/time.txt")
    cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { print u + s }' "$dir/time.txt")
    echo "run $run: wall $wall s, CPU $cpu s, peak RSS $((kb / 1024)) MB"
    walls+=("$wall")
    rss+=("$kb")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "median: wall $(median "${walls[@]}") s, peak RSS $(( $(median "${rss[@]}") / 1024 )) MB (target: 60 s, 200 MB)"
echo "load after: $(uptime)"
