#!/usr/bin/env python3
"""Where the test suite's time goes: the build, then every test binary, wall and CPU.

    scripts/test_times.py [--cold] [--target DIR] [--slowest N] [--jobs J] [--markdown]
    scripts/test_times.py --summary LOG     (what .ci/run prints at its end)

Builds the tests (`cargo test --locked --no-run`, timed; with --cold in an empty target
directory, so the dependencies are built too), then runs each test binary alone, one after
another, and prints one line per binary: wall seconds, CPU seconds (user + system of the binary
and every process it waited for: the `spsa` runs, engines, psql), tests passed and failed.
With --per-test, the slowest tests come from libtest's own per-test timer (`--report-time`,
switched on for the test binary with RUSTC_BOOTSTRAP=1, which changes nothing about how the
test was compiled, but which a `cargo build` started by a test must not inherit: build scripts
that watch it would rebuild dependencies): a test's time is its wall time while others ran
beside it on the harness threads.

--jobs J runs J binaries at once (default 1: the per-binary figures are then clean).
The environment of the tests (SPSA_TEST_PG_URL, CI, ...) is passed through unchanged; run it
under `.ci/run`'s set-up (PostgreSQL, Syzygy tables) for CI's figures: `.ci/run --times`.
Exit status: 1 when any test failed.

--summary LOG reads the output of `cargo test -- -Z unstable-options --report-time` (as .ci/run
runs it) and prints one line per test binary (its tests and libtest's own `finished in` time),
then one line per module of the suite binary (each a former tests/NAME.rs: the sum of its tests'
times, which overlap on the harness's threads), slowest first, then the slowest tests.
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def build(target, cold):
    env = dict(os.environ)
    if target:
        env["CARGO_TARGET_DIR"] = target
    if cold and target and os.path.exists(target):
        shutil.rmtree(target)
    cmd = ["cargo", "test", "--locked", "--no-run", "--message-format=json-render-diagnostics"]
    cpu0, t0 = cpu_of_children(), time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    wall, cpu = time.monotonic() - t0, cpu_of_children() - cpu0
    if p.returncode != 0:
        sys.exit("test_times: the build failed")
    bins = []
    for line in p.stdout.splitlines():
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
            kind = m["target"]["kind"][0]
            name = m["target"]["name"] if kind != "lib" else "lib (unit tests)"
            if kind == "bin":
                name = f"bin {name} (unit tests)"
            bins.append((name, m["executable"]))
    return wall, cpu, bins


def run_binary(name, exe, env, per_test):
    """Run one test binary; returns (name, wall, passed, failed, [(secs, test)], failures)."""
    cmd = [exe] + (["-Z", "unstable-options", "--report-time", "--format", "json"] if per_test else [])
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = p.communicate()
    wall = time.monotonic() - t0
    passed = failed = 0
    times, failures, text = [], [], []
    for line in out.splitlines():
        m = re.match(r"test result: \S+\. (\d+) passed; (\d+) failed", line)
        if m:
            passed, failed = int(m.group(1)), int(m.group(2))
        try:
            m = json.loads(line)
        except ValueError:
            text.append(line)
            continue
        if not isinstance(m, dict):
            continue
        if m.get("type") != "test":
            if m.get("type") == "suite" and m.get("event") in ("ok", "failed"):
                passed, failed = m.get("passed", 0), m.get("failed", 0)
            continue
        if m.get("event") in ("ok", "failed") and "exec_time" in m:
            times.append((float(m["exec_time"]), m["name"]))
        if m.get("event") == "failed":
            failures.append((m["name"], m.get("stdout", "")))
    if p.returncode != 0 and not failures:
        failed = max(failed, 1)  # it crashed, could not start, or printed its failures as text
        failures.append((name, "\n".join(text[-60:])))
    return name, wall, passed, failed, times, failures


def summary(log, slowest):
    """Per-binary and per-module times from a `cargo test ... --report-time` log."""
    binaries, modules, tests = [], {}, []
    name = None
    for line in open(log, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"\s+Running (?:unittests )?(\S+)", line)
        if m:
            name = m.group(1)
            continue
        m = re.match(r"test (\S+) \.\.\. (ok|FAILED|ignored)(?: <([0-9.]+)s>)?", line)
        if m and m.group(3):
            t = float(m.group(3))
            tests.append((t, f"{os.path.basename(name or '?')}: {m.group(1)}"))
            if name and name.endswith("suite.rs"):
                mod = m.group(1).split("::")[0]
                modules[mod] = modules.get(mod, 0.0) + t
            continue
        m = re.match(r"test result: (\S+)\. (\d+) passed; (\d+) failed; (\d+) ignored.*finished in ([0-9.]+)s", line)
        if m:
            binaries.append((float(m.group(5)), name or "?", int(m.group(2)), int(m.group(3)), int(m.group(4))))
            name = None
    print("\ntime per test binary (libtest's own wall time, start-up not counted):")
    for t, n, p, f, i in binaries:
        print(f"  {t:8.1f} s  {n}: {p} passed, {f} failed, {i} ignored")
    if modules:
        print("time per module of tests/suite.rs (sum of its tests' times; they overlap on the threads):")
        for n, t in sorted(modules.items(), key=lambda x: -x[1]):
            print(f"  {t:8.1f} s  {n}")
    print(f"slowest {slowest} tests:")
    for t, n in sorted(tests, reverse=True)[:slowest]:
        print(f"  {t:8.1f} s  {n}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--summary", metavar="LOG", help="per-binary times from a cargo test log")
    ap.add_argument("--cold", action="store_true", help="build in an empty target directory")
    ap.add_argument("--target", help="target directory (default: cargo's)")
    ap.add_argument("--slowest", type=int, default=15)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument("--build-only", action="store_true", help="time the build, run nothing")
    ap.add_argument(
        "--per-test",
        action="store_true",
        help="libtest's per-test times (RUSTC_BOOTSTRAP=1 for the test binaries: only for a tree "
        "whose tests clear it before they run cargo, as tests/standin does)",
    )
    args = ap.parse_args()
    if args.summary:
        summary(args.summary, args.slowest)
        return
    if args.cold and not args.target:
        args.target = tempfile.mkdtemp(prefix="spsa-cold-target.")
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

    load = os.getloadavg()
    bwall, bcpu, bins = build(args.target, args.cold)
    if args.build_only:
        print(f"load before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores")
        print(f"build ({'cold' if args.cold else 'warm'}): {bwall:.0f} s wall, {bcpu:.0f} s CPU, {len(bins)} test binaries")
        return
    env = dict(os.environ, RUSTC_BOOTSTRAP="1") if args.per_test else dict(os.environ)
    results = []
    t0 = time.monotonic()
    cpu0 = cpu_of_children()
    # CPU per binary: with one job, the children's counter moves only for the running binary.
    if args.jobs == 1:
        for name, exe in bins:
            c0 = cpu_of_children()
            r = run_binary(name, exe, env, args.per_test)
            results.append(r + (cpu_of_children() - c0,))
            print(f"  {r[1]:7.1f} s  {name}", file=sys.stderr, flush=True)
    else:
        with ThreadPoolExecutor(args.jobs) as pool:
            for r in pool.map(lambda b: run_binary(b[0], b[1], env, args.per_test), bins):
                results.append(r + (float("nan"),))
    rwall, rcpu = time.monotonic() - t0, cpu_of_children() - cpu0

    sep = "|" if args.markdown else " "
    cold = "cold" if args.cold else "warm"
    print(f"load before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores")
    if args.markdown:
        print("| step | wall s | CPU s | tests passed | failed |\n|---|---:|---:|---:|---:|")
    print(f"{sep} build ({cold}, cargo test --no-run) {sep} {bwall:.0f} {sep} {bcpu:.0f} {sep} {sep} {sep}")
    total_p = sum(r[2] for r in results)
    total_f = sum(r[3] for r in results)
    for name, wall, p, f, _, _, cpu in sorted(results, key=lambda r: -r[1]):
        print(f"{sep} run {name} {sep} {wall:.1f} {sep} {cpu:.1f} {sep} {p} {sep} {f} {sep}")
    print(f"{sep} run, all {len(results)} binaries {sep} {rwall:.0f} {sep} {rcpu:.0f} {sep} {total_p} {sep} {total_f} {sep}")
    print(f"{sep} total {sep} {bwall + rwall:.0f} {sep} {bcpu + rcpu:.0f} {sep} {sep} {sep}")
    tests = sorted(((t, f"{r[0]}::{n}") for r in results for t, n in r[4]), reverse=True)
    print(f"\nslowest {args.slowest} tests (wall, beside the others of their binary):")
    for t, n in tests[: args.slowest]:
        print(f"  {t:7.1f} s  {n}")
    for r in results:
        for n, out in r[5]:
            print(f"\nFAILED {r[0]}::{n}\n{out}", file=sys.stderr)
    print(f"{total_p} passed, {total_f} failed")
    sys.exit(1 if total_f else 0)


if __name__ == "__main__":
    main()
