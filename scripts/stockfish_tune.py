#!/usr/bin/env python3
"""Expose search parameters of classical Stockfish as UCI spin options through its own TUNE framework.

Stockfish's authors tune a parameter on fishtest by turning a constant into a global `int` and
naming it in `TUNE(SetRange(min, max), Name)` (src/tune.h): the engine then offers a spin option
per name and prints the fishtest line `Name,value,min,max,c_end,r_end` at start. This script does
that edit for a list of search parameters to a user's own checkout of the tag `SF_classical` (the
last Stockfish without a network file), and can build it. It carries no Stockfish source: each
edit names the short expression it replaces and fails, changing nothing, if that expression is not
found exactly once.

    git clone https://github.com/official-stockfish/Stockfish && cd Stockfish && git checkout SF_classical
    python3 scripts/stockfish_tune.py PATH/TO/Stockfish --build          # edits src/search.cpp, builds src/stockfish
    python3 scripts/stockfish_tune.py PATH/TO/Stockfish --bad-start vars/sf_bad.var   # a start 30-50% off each

The edit is idempotent: run on an already edited checkout it says so and changes nothing.
"""

import argparse
import pathlib
import subprocess
import sys

MARK = "// spsa: search parameters exposed through TUNE"

# name, default, min, max, the expression in src/search.cpp, what replaces it
PARAMS = [
    ("RazorMargin", 527, 0, 1000, "constexpr int RazorMargin = 527;", None),
    ("FutilityMargin", 227, 50, 450, "return Value(227 * (d - improving));",
     "return Value(FutilityMargin * (d - improving));"),
    ("LmrBase", 570, 0, 1100, "return (r + 570) / 1024 + (!i && r > 1018);",
     "return (r + LmrBase) / 1024 + (!i && r > LmrNotImproving);"),
    ("LmrNotImproving", 1018, 500, 2000, None, None),
    ("HistBonusQuad", 17, 4, 34, "return d > 15 ? 27 : 17 * d * d + 133 * d - 134;",
     "return d > 15 ? 27 : HistBonusQuad * d * d + HistBonusLin * d - HistBonusBase;"),
    ("HistBonusLin", 133, 30, 266, None, None),
    ("HistBonusBase", 134, 0, 268, None, None),
    ("NmpStatScore", 23824, 10000, 40000, "(ss-1)->statScore < 23824",
     "(ss-1)->statScore < NmpStatScore"),
    ("NmpDepth", 33, 8, 66, "ss->staticEval >= beta - 33 * depth - 33 * improving + 112 * ttPv + 311",
     "ss->staticEval >= beta - NmpDepth * depth - NmpImproving * improving + NmpTtPv * ttPv + NmpBase"),
    ("NmpImproving", 33, 0, 66, None, None),
    ("NmpTtPv", 112, 0, 224, None, None),
    ("NmpBase", 311, 50, 622, None, None),
    ("NmpReductionBase", 737, 300, 1200, "Depth R = (737 + 77 * depth) / 246 + std::min(int(eval - beta) / 192, 3);",
     "Depth R = (NmpReductionBase + NmpReductionDepth * depth) / 246 + std::min(int(eval - beta) / NmpEvalDivisor, 3);"),
    ("NmpReductionDepth", 77, 20, 150, None, None),
    ("NmpEvalDivisor", 192, 60, 400, None, None),
    ("ProbCutMargin", 176, 50, 350, "probcutBeta = beta + 176 - 49 * improving;",
     "probcutBeta = beta + ProbCutMargin - 49 * improving;"),
    ("FutilityParentBase", 284, 50, 560, "ss->staticEval + 284 + 188 * lmrDepth <= alpha",
     "ss->staticEval + FutilityParentBase + FutilityParentDepth * lmrDepth <= alpha"),
    ("FutilityParentDepth", 188, 50, 380, None, None),
    ("SeeQuiet", 29, 10, 60, "Value(-(29 - std::min(lmrDepth, 17)) * lmrDepth * lmrDepth)",
     "Value(-(SeeQuiet - std::min(lmrDepth, 17)) * lmrDepth * lmrDepth)"),
    ("SeeCapture", 202, 50, 400, "pos.see_ge(move, Value(-202) * depth)",
     "pos.see_ge(move, Value(-SeeCapture) * depth)"),
]

ANCHOR = "enum NodeType { NonPV, PV };"


def edit(src: str) -> str:
    """The edited search.cpp, or SystemExit naming the expression that was not found once."""
    for name, _d, _lo, _hi, old, new in PARAMS:
        if old is None:
            continue
        count = src.count(old)
        if count != 1:
            sys.exit(f"src/search.cpp: expected `{old}` exactly once for {name}, found {count} "
                     "(is this a checkout of the tag SF_classical?)")
        if new is not None:
            src = src.replace(old, new)
        else:  # the declaration itself is moved into the block below
            src = src.replace(old, "")
    if src.count(ANCHOR) != 1:
        sys.exit(f"src/search.cpp: expected `{ANCHOR}` exactly once")
    block = [ANCHOR, "", "  " + MARK]
    block += [f"  int {name} = {d};" for name, d, *_ in PARAMS]
    block += [f"  TUNE(SetRange({lo}, {hi}), {name});" for name, _d, lo, hi, *_ in PARAMS]
    return src.replace(ANCHOR, "\n".join(block))


def bad_start(out: pathlib.Path) -> None:
    """A seven-column variables file that starts every parameter 30-50% off its default,
    alternately below and above, clipped to the range (spsa's file, fishtest's c_end rule)."""
    lines = ["# Classical Stockfish's search parameters exposed by scripts/stockfish_tune.py, from a bad",
             "# start 30-50% off each default (alternately below and above).",
             "# name, start, min, max, c_end, R_end, simul_elo"]
    for i, (name, d, lo, hi, *_rest) in enumerate(PARAMS):
        off = 0.30 + 0.20 * ((i * 7) % 5) / 4  # 30%, 40%, ... 50%, spread over the list
        start = round(d * (1 - off) if i % 2 == 0 else d * (1 + off))
        start = min(max(start, lo), hi)
        c_end = max((hi - lo) / 20.0, 1.0)
        lines.append(f"{name},{start},{lo},{hi},{c_end:g},0.002,30")
    if out.exists():
        sys.exit(f"{out}: exists; not overwritten")
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}: {len(PARAMS)} parameters from a bad start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=pathlib.Path, nargs="?", help="a checkout of Stockfish's tag SF_classical")
    ap.add_argument("--build", action="store_true", help="then run `make build ARCH=x86-64-modern` in src/")
    ap.add_argument("--arch", default="x86-64-modern")
    ap.add_argument("--bad-start", type=pathlib.Path, metavar="OUT.var", help="write a bad start and stop")
    ap.add_argument("--list", action="store_true", help="print the parameters as fishtest lines and stop")
    args = ap.parse_args()
    if args.list:
        for name, d, lo, hi, *_ in PARAMS:
            print(f"{name},{d},{lo},{hi},{(hi - lo) / 20.0:g},0.0020")
        return
    if args.bad_start:
        bad_start(args.bad_start)
        return
    if args.checkout is None:
        ap.error("give the checkout's path")
    search = args.checkout / "src" / "search.cpp"
    if not search.is_file():
        sys.exit(f"{search}: not found (give the top of a Stockfish checkout)")
    src = search.read_text()
    if MARK in src:
        print(f"{search}: already edited, unchanged")
    else:
        search.write_text(edit(src))
        print(f"{search}: {len(PARAMS)} parameters exposed through TUNE")
    if args.build:
        subprocess.run(["make", "-j2", "build", f"ARCH={args.arch}"], cwd=args.checkout / "src", check=True)
        print(f"built {args.checkout / 'src' / 'stockfish'}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # `--list | head -1` is a quiet end, not an error
        sys.exit(0)
