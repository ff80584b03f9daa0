#!/usr/bin/env python3
"""A shared run under faults: real games, several workers, faults on a seeded schedule, checks.

Starts a throwaway PostgreSQL cluster (.ci/pg), an owner (`spsa run --db --no-play`) for two runs
(the sparring engine behind a wrapper that crashes in some games, and Glaurung at a fixed depth),
and WORKERS workers that know only the database's URL (engines travel with the runs) and reach
it through a loopback TCP proxy this script controls. For MINUTES it injects, in a seeded order,
one fault every INTERVAL seconds:

  kill9      a worker killed with SIGKILL, restarted 5 s later
  stop       a worker stopped (SIGSTOP) past its lease, then continued (SIGCONT)
  restart    the database restarted (pg_ctl restart -m fast)
  crash      the database crashed (pg_ctl -m immediate) and started again
  owner      the owner killed with SIGKILL, resumed with --resume 5 s later
  drop       every worker connection through the proxy closed at once
  blackhole  the proxy stops passing bytes for 40 s, connections left open

(plus the wrapper engine's own crashes, all through the run). Then it stops the workers with
Ctrl-C, lets the owner mirror every result, and checks, per run: every iteration applied exactly
once (results numbered 1..applied without a gap, each work row done once), θ equal to its replay
from the stored steps and signals (bit for bit), no game twice in the owner's PGN and every
applied iteration's games in it, the θ log's rows 1..applied once each; and it prints the faults
injected per kind, the engine faults the results recorded, and the throughput (iterations per
minute) in the minute before, during and the minute after each fault.

    python3 scripts/soak.py --minutes 60 --workers 4 --seed 1 --out /tmp/soak

Not part of CI (it is long); its figures are in docs/shared-runs.md. Exit 0 when every check
holds, 1 otherwise. Needs the release build (`cargo build --release`), PostgreSQL 15 and
/usr/games/glaurung.
"""

import argparse
import json
import os
import pathlib
import random
import select
import signal
import socket
import subprocess
import sys
import threading
import time

REPO = pathlib.Path(__file__).resolve().parent.parent


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Proxy:
    """A loopback TCP proxy to the database that can drop every connection or stop passing
    bytes (a blackhole), as a flaky network between a worker and the server would."""

    def __init__(self, target_port):
        self.target = ("127.0.0.1", target_port)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.pairs = []
        self.hold_until = 0.0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            client, _ = self.listener.accept()
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, a, b):
        socks = [a, b]
        try:
            while True:
                ready, _, _ = select.select(socks, [], [], 0.5)
                if time.time() < self.hold_until:
                    continue  # blackhole: read nothing, pass nothing
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        raise OSError("closed")
                    (b if s is a else a).sendall(data)
        except (OSError, ValueError):
            pass
        finally:
            for s in socks:
                try:
                    s.close()
                except OSError:
                    pass
            with self.lock:
                if (a, b) in self.pairs:
                    self.pairs.remove((a, b))

    def drop_all(self):
        with self.lock:
            pairs = list(self.pairs)
        for a, b in pairs:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        return len(pairs)

    def blackhole(self, seconds):
        self.hold_until = time.time() + seconds


def psql(url, sql):
    out = subprocess.run(["psql", url, "-XAtq", "-c", sql], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"psql: {out.stderr.strip()}")
    return out.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--interval", type=float, default=100, help="seconds between faults")
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--spsa", type=pathlib.Path, default=REPO / "target/release/spsa")
    args = ap.parse_args()
    spsa = str(args.spsa)
    sparring = str(args.spsa.with_name("sparring"))
    out = args.out
    out.mkdir(parents=True, exist_ok=False)
    rng = random.Random(args.seed)

    # The database.
    pgdir = out / "pg"
    admin = subprocess.run([str(REPO / ".ci/pg"), "start", str(pgdir)], capture_output=True,
                           text=True, check=True).stdout.strip()
    psql(admin, "create database spsa")
    owner_url = admin.rsplit("/", 1)[0] + "/spsa"
    pg_port = int((pgdir / "port").read_text())
    proxy = Proxy(pg_port)

    # The engines: a sparring that crashes in some games, and Glaurung.
    crashy = out / "sparring_crashy"
    crashy.write_text(
        "#!/bin/bash\n"
        "# The sparring engine, killed 15-120 s after a third of its starts (a crashing build).\n"
        'if [ $((RANDOM % 3)) -eq 0 ]; then (sleep $((RANDOM % 106 + 15)); kill -9 $$) & fi\n'
        f"exec {sparring}\n")
    crashy.chmod(0o755)
    (out / "sparring.var").write_text((REPO / "vars/aggr.var").read_text())
    (out / "glaurung.var").write_text((REPO / "vars/glaurung_bad.var").read_text())
    book = REPO / "openings/balanced_6ply.epd"
    common = ("A = 100\ngamma = 0.101\nalpha = 0.602\nconcurrency = 2\nseed = 1\n"
              "iterations = 100000\n")
    (out / "sparring.toml").write_text(
        f'variables = "sparring.var"\nlog = "logs/sparring.log"\n{common}'
        f'[engine1]\ncommand = "{crashy}"\n'
        f'[games]\nbook = "{book}"\ndepth = 4\nmax_plies = 300\nstall_timeout_ms = 10000\n'
        f'pgn = "logs/sparring.pgn"\n')
    (out / "glaurung.toml").write_text(
        f'variables = "glaurung.var"\nlog = "logs/glaurung.log"\n{common}'
        '[engine1]\ncommand = "/usr/games/glaurung"\n'
        '[engine1.options]\nThreads = 1\nHash = 16\nPonder = false\nOwnBook = false\n'
        f'[games]\nbook = "{book}"\ndepth = 5\nmax_plies = 300\nstall_timeout_ms = 10000\n'
        f'pgn = "logs/glaurung.pgn"\n')
    (out / "logs").mkdir()
    runs = ["sparring", "glaurung"]

    procs = {}
    db = owner_url  # the admin role, on the runs' database

    def start_owner(name, resume):
        cmd = [spsa, "run", f"{name}.toml", "--db", owner_url, "--no-play"]
        if resume:
            cmd.append("--resume")
        f = open(out / f"owner_{name}.log", "a")
        procs[f"owner_{name}"] = subprocess.Popen(cmd, cwd=out, stdout=f, stderr=f)

    for name in runs:
        start_owner(name, resume=False)
    deadline = time.time() + 120
    while psql(admin, "select count(*) from pg_roles where rolname = 'spsa_worker'") != "1":
        if time.time() > deadline:
            sys.exit("the owner made no spsa_worker role")
        time.sleep(1)
    worker_urls = []
    for i in range(1, args.workers + 1):
        pw = f"soak{i}{rng.randrange(10**6)}"
        psql(admin, f"create role w{i} login password '{pw}' in role spsa_worker")
        worker_urls.append(f"postgres://w{i}:{pw}@127.0.0.1:{proxy.port}/spsa")

    def start_worker(i):
        home = out / f"w{i}"
        home.mkdir(exist_ok=True)
        env = dict(os.environ, XDG_CACHE_HOME=str(home / "cache"))
        f = open(home / "worker.log", "a")
        procs[f"w{i}"] = subprocess.Popen(
            [spsa, "worker", "--db", worker_urls[i - 1], "--name", f"w{i}", "--concurrency", "1"],
            cwd=home, stdout=f, stderr=f, env=env)

    for i in range(1, args.workers + 1):
        start_worker(i)

    def applied():
        try:
            rows = psql(db, "select name, applied from spsa.runs")
        except RuntimeError:
            return None
        return sum(int(line.split("|")[1]) for line in rows.splitlines() if line)

    timeline = []  # (t, applied), every 10 s by a thread of its own
    sampling = [True]
    faults = []  # (t_start, t_end, kind, detail)
    kinds = ["kill9", "stop", "restart", "crash", "owner", "drop", "blackhole"]
    schedule = kinds * (1 + int(args.minutes * 60 / args.interval / len(kinds)))
    rng.shuffle(schedule)
    t0 = time.time()
    end = t0 + args.minutes * 60
    next_fault = t0 + args.interval
    lease = 60

    def sample():
        while sampling[0]:
            a = applied()
            if a is not None:
                timeline.append((time.time() - t0, a))
            time.sleep(10)
    threading.Thread(target=sample, daemon=True).start()
    while time.time() < end:
        now = time.time()
        if now >= next_fault and schedule:
            kind = schedule.pop()
            start = now - t0
            detail = ""
            if kind == "kill9":
                i = rng.randrange(1, args.workers + 1)
                procs[f"w{i}"].kill()
                procs[f"w{i}"].wait()
                time.sleep(5)
                start_worker(i)
                detail = f"w{i}"
            elif kind == "stop":
                i = rng.randrange(1, args.workers + 1)
                procs[f"w{i}"].send_signal(signal.SIGSTOP)
                time.sleep(lease + 15)
                procs[f"w{i}"].send_signal(signal.SIGCONT)
                detail = f"w{i} for {lease + 15} s"
            elif kind in ("restart", "crash"):
                subprocess.run([str(REPO / ".ci/pg"), kind, str(pgdir)], check=True,
                               capture_output=True)
            elif kind == "owner":
                name = rng.choice(runs)
                procs[f"owner_{name}"].kill()
                procs[f"owner_{name}"].wait()
                time.sleep(5)
                start_owner(name, resume=True)
                detail = name
            elif kind == "drop":
                detail = f"{proxy.drop_all()} connections"
            elif kind == "blackhole":
                proxy.blackhole(40)
                time.sleep(40)
                detail = "40 s"
            faults.append((start, time.time() - t0, kind, detail))
            log(f"fault {kind} {detail}")
            next_fault = time.time() + args.interval
        time.sleep(1)

    sampling[0] = False
    # Stop: workers first (Ctrl-C gives their leases back), then let the owners mirror.
    log("stopping the workers")
    for i in range(1, args.workers + 1):
        procs[f"w{i}"].send_signal(signal.SIGINT)
    for i in range(1, args.workers + 1):
        try:
            procs[f"w{i}"].wait(timeout=30)
        except subprocess.TimeoutExpired:
            log(f"w{i} did not stop within 30 s of Ctrl-C")
            procs[f"w{i}"].kill()
    report = {"minutes": args.minutes, "workers": args.workers, "seed": args.seed,
              "faults": faults, "timeline": timeline, "runs": {}}
    ok = True
    for name in runs:
        run_id, n_applied, theta, start_theta, lo, hi = psql(
            db,
            "select id, applied, theta, start_theta, lo, hi from spsa.runs "
            f"where name like '%/{name}.toml'").split("|")
        n_applied = int(n_applied)
        # Let the owner mirror every result, then stop it.
        deadline = time.time() + 120
        log_path = out / "logs" / f"{name}.log"
        while time.time() < deadline:
            rows = [l for l in log_path.read_text().splitlines()[1:] if l.strip()]
            if len(rows) >= n_applied:
                break
            time.sleep(2)
        procs[f"owner_{name}"].send_signal(signal.SIGINT)
        try:
            procs[f"owner_{name}"].wait(timeout=30)
        except subprocess.TimeoutExpired:
            ok = False
            log(f"owner {name} did not stop within 30 s of Ctrl-C")
            procs[f"owner_{name}"].kill()
        checks = {}
        seqs = psql(db, f"select seq, iteration from spsa.results where run_id = {run_id} order by seq")
        pairs = [tuple(map(int, l.split("|"))) for l in seqs.splitlines() if l]
        checks["results numbered 1..applied"] = [s for s, _ in pairs] == list(range(1, n_applied + 1))
        iterations = [it for _, it in pairs]
        checks["each iteration once"] = len(iterations) == len(set(iterations))
        done = int(psql(db,
                        f"select count(*) from spsa.work where run_id = {run_id} and state = 'done'"))
        checks["work rows done = applied"] = done == n_applied
        # θ replayed from the start with each result's step and signal, in the order applied.
        steps = psql(db,
                     "select w.step, r.signal from spsa.results r join spsa.work w "
                     "using (run_id, iteration) "
                     f"where r.run_id = {run_id} order by r.seq")
        parse = lambda a: [float(x) for x in a.strip("{}").split(",")]
        t, lo_v, hi_v = parse(start_theta), parse(lo), parse(hi)
        for line in steps.splitlines():
            step, sig = line.rsplit("|", 1)
            sig = float(sig)
            t = [min(max(x + s * sig, l), h) for x, s, l, h in zip(t, parse(step), lo_v, hi_v)]
        checks["theta equals its replay"] = t == parse(theta)
        # The owner's files: every applied iteration's two games once, θ log rows once.
        pgn = (out / "logs" / f"{name}.pgn").read_text() if (out / "logs" / f"{name}.pgn").exists() else ""
        games = []
        round_, white = None, None
        for line in pgn.splitlines():
            if line.startswith("[Round "):
                round_ = line.split('"')[1]
            elif line.startswith("[White "):
                white = line.split('"')[1]
                games.append((round_, white))
        checks["no game twice in the PGN"] = len(games) == len(set(games))
        rounds = {}
        for r, _ in games:
            it = int(r.split(".")[0])
            rounds[it] = rounds.get(it, 0) + 1
        checks["every applied iteration's 2 games in the PGN"] = (
            set(rounds) == set(iterations) and all(v == 2 for v in rounds.values()))
        rows = [int(l.split(",")[0]) for l in log_path.read_text().splitlines()[1:] if l.strip()]
        checks["theta log rows 1..applied once"] = rows == list(range(1, n_applied + 1))
        engine_faults = int(psql(db,
                                 f"select coalesce(sum(cardinality(faults)), 0) from spsa.results "
                                 f"where run_id = {run_id}"))
        report["runs"][name] = {"applied": n_applied, "games": 2 * n_applied,
                                "engine_faults": engine_faults, "checks": checks}
        ok = ok and all(checks.values())
        log(f"{name}: {n_applied} iterations, {engine_faults} engine faults; "
            + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in checks.items()))

    # Throughput around each fault: iterations per minute in the minute before, during, after.
    def rate(a, b):
        pts = [(t, n) for t, n in timeline if a <= t <= b]
        if len(pts) < 2 or pts[-1][0] == pts[0][0]:
            return None
        return 60 * (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])
    per_kind = {}
    for start, stop, kind, detail in faults:
        per_kind.setdefault(kind, 0)
        per_kind[kind] += 1
        r = [rate(start - 60, start), rate(start, max(stop, start + 20)), rate(stop, stop + 60)]
        shown = ["-" if x is None else f"{x:.1f}" for x in r]
        log(f"{kind:9} at {start/60:5.1f} min ({detail}): it/min before {shown[0]}, during {shown[1]}, after {shown[2]}")
    report["faults_per_kind"] = per_kind
    report["overall_it_per_min"] = rate(0, args.minutes * 60)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    log(f"faults per kind: {per_kind}; overall {report['overall_it_per_min']} it/min")
    subprocess.run([str(REPO / ".ci/pg"), "stop", str(pgdir)])
    log("all checks hold" if ok else "A CHECK FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
