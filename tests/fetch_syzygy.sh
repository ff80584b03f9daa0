#!/usr/bin/env bash
# Fetch the 3-4-piece Syzygy tables (WDL and DTZ) that python-chess ships in its source package,
# for the tablebase tests. Unpacks only data/syzygy/regular into target/syzygy/regular and prints
# that folder on stdout. Runs once: later calls only print the folder. The tables are never
# committed; target/ is ignored by git.
set -euo pipefail

version=1.11.2
sha256=a8b43e5678fdb3000695bdaa573117ad683761e5ca38e591c4826eba6d25bb39

root=$(cd "$(dirname "$0")/.." && pwd)
base=${CARGO_TARGET_DIR:-$root/target}/syzygy
dest=$base/regular
if [ -f "$dest/.complete" ]; then
  echo "$dest"
  exit 0
fi

mkdir -p "$base/download"
archive=$base/download/chess-$version.tar.gz
if [ ! -f "$archive" ]; then
  # The source distribution (not the wheel) carries the tables.
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    --dest "$base/download" "chess==$version" >&2
fi
if ! echo "$sha256  $archive" | sha256sum --check --status; then
  echo "fetch_syzygy.sh: $archive does not have the expected SHA-256; remove it and retry" >&2
  exit 1
fi

# Unpack beside the destination and move it in whole, so a concurrent or interrupted run never
# leaves a half-filled table folder behind.
tmp=$(mktemp -d "$base/unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$archive" -C "$tmp" --strip-components=3 "chess-$version/data/syzygy/regular"
touch "$tmp/regular/.complete"
mv -T "$tmp/regular" "$dest" 2>/dev/null || [ -f "$dest/.complete" ]
echo "$dest"
