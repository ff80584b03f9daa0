#!/usr/bin/env python3
"""Make Patricia's search parameters tunable by UCI and let it answer `go nodes N`.

Patricia (Adam-Kulju/Patricia, an NNUE engine) declares 35 search parameters with
`TUNE_PARAM(name, default, min, max)` in engine/src/params.h and prints them as OpenBench lines
with the command `printparams`, but its `uci` answer does not list them (the loop is commented out
in engine/src/uci.h), and `go nodes N` without a clock never answers: `time * 8 / 10` overflows an
int when no clock is given, so the search gets a negative time budget. This script makes two edits
to a user's own copy of the engine folder, each naming the exact text it replaces and failing,
changing nothing, when that text is not found exactly once, and can build it. It carries no
Patricia source and no network.

    git archive HEAD engine | tar x -C /tmp/patricia      # in a Patricia checkout: the engine folder alone
    python3 scripts/patricia_tune.py /tmp/patricia/engine --build      # edits, then `make CXX=g++`
    python3 scripts/patricia_tune.py --list              # the parameters' OpenBench lines, as printparams prints them

The edit is idempotent: run on an already edited folder it says so and changes nothing.
"""

import argparse
import pathlib
import subprocess
import sys

MARK = "/* spsa: parameters listed as spin options */"

# (what is replaced, what replaces it, why), all in src/uci.h
EDITS = [
    (
        "      /*for (auto &param : params) {\n"
        "        std::cout << \"option name \" << param.name << \" type spin default \"\n"
        "                  << param.value << \" min \" << param.min << \" max \" << param.max\n"
        "                  << \"\\n\";\n"
        "      }*/\n",
        "      " + MARK + "\n"
        "      for (auto &param : params) {\n"
        "        std::cout << \"option name \" << param.name << \" type spin default \"\n"
        "                  << param.current() << \" min \" << param.min << \" max \" << param.max\n"
        "                  << \"\\n\";\n"
        "      }\n"
        "      std::cout << std::flush;\n",
        "the tunable parameters listed under `uci` (the commented loop printed a pointer)",
    ),
    (
        "thread_info.max_time = time * 8 / 10;",
        "thread_info.max_time = static_cast<int>(static_cast<int64_t>(time) * 8 / 10);",
        "`go nodes N` with no clock: the time budget computed in 64 bits instead of overflowing",
    ),
]

# The parameters as engine/src/params.h declares them at the commit this was written for
# (1fcee72), for --list only; the engine itself is the authority (`spsa init` reads its options).
PARAMS = [
    ("NMPMinDepth", 3, 1, 5), ("NMPBase", 4, 1, 5), ("NMPDepthDiv", 5, 3, 9),
    ("NMPEvalDiv", 175, 100, 300), ("RFPMargin", 85, 50, 110), ("RFPMaxDepth", 10, 6, 12),
    ("ProbcutMargin", 250, 150, 400), ("LMRBase", 4, 2, 8), ("LMRRatio", 20, 15, 30),
    ("LMPBase", 2, 1, 5), ("LMPDepth", 6, 3, 7), ("SEDepth", 5, 4, 10),
    ("HistPruningDepth", 4, 2, 7), ("SEDoubleExtMargin", 18, 10, 30),
    ("SETripleExtMargin", 126, 75, 175), ("FPDepth", 9, 5, 11), ("FPMargin1", 98, 50, 150),
    ("FPMargin2", 121, 75, 175), ("IIRMinDepth", 2, 1, 5), ("SeePruningDepth", 7, 5, 11),
    ("SeePruningNoisyMargin", -86, -110, -50), ("SeePruningQuietMargin", -94, -150, -50),
    ("HistBonus", 291, 200, 400), ("HistMax", 2476, 1500, 3500), ("HistDiv", 9818, 5000, 15000),
    ("AgeDiffDiv", 5, 2, 6), ("CorrWeight", 25, 10, 40), ("LMRMinDepth", 3, 2, 6),
    ("AspStartWindow", 20, 10, 30), ("NodeTmFactor1", 149, 100, 200),
    ("NodeTmFactor2", 177, 125, 225), ("BmFactor1", 152, 100, 200),
    ("ScoreDropDiv", 540, 250, 850), ("ScoreDropMin", 90, 70, 100), ("ScoreDropMax", 118, 100, 140),
]

# Time management: they change nothing at a node limit, so a tune at fixed nodes leaves them out.
TIME_MANAGEMENT = {"NodeTmFactor1", "NodeTmFactor2", "BmFactor1", "ScoreDropDiv", "ScoreDropMin",
                   "ScoreDropMax"}


def edit(src: str) -> str:
    """The edited uci.h, or SystemExit naming the text that was not found exactly once."""
    for old, new, why in EDITS:
        count = src.count(old)
        if count != 1:
            first = old.strip().splitlines()[0]
            sys.exit(f"src/uci.h: expected `{first}` exactly once ({why}), found {count} "
                     "(is this Patricia's engine folder?)")
        src = src.replace(old, new)
    return src


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("engine", type=pathlib.Path, nargs="?", help="Patricia's engine folder (it holds src/ and nets/)")
    ap.add_argument("--build", action="store_true", help="then run `make CXX=g++` in it")
    ap.add_argument("--list", action="store_true",
                    help="print the parameters as OpenBench lines (printparams' form) and stop")
    ap.add_argument("--search-only", action="store_true",
                    help="with --list: leave out the six time-management parameters")
    args = ap.parse_args()
    if args.list:
        for name, d, lo, hi in PARAMS:
            if args.search_only and name in TIME_MANAGEMENT:
                continue
            print(f"{name}, int, {d}, {lo}, {hi}, {max(0.5, (hi - lo) / 20.0):g}, 0.002")
        return
    if args.engine is None:
        ap.error("give the path of Patricia's engine folder")
    uci = args.engine / "src" / "uci.h"
    if not uci.is_file():
        sys.exit(f"{uci}: not found (give Patricia's engine folder, the one with src/ and nets/)")
    src = uci.read_text()
    if MARK in src:
        print(f"{uci}: already edited, unchanged")
    else:
        uci.write_text(edit(src))
        print(f"{uci}: {len(EDITS)} edits made")
    if args.build:
        subprocess.run(["make", "CXX=g++"], cwd=args.engine, check=True)
        print(f"built {args.engine / 'patricia'}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # `--list | head -1` is a quiet end, not an error
        sys.exit(0)
