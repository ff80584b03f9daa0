#!/usr/bin/env python3
"""A shared run under faults: real games, several workers, faults on a seeded schedule, checks.

Starts a throwaway PostgreSQL cluster (.ci/pg), an owner (`spsa run --db --no-play`) for each of
two runs at different throughput shares, and WORKERS workers that know only the database's URL
(engines travel with the runs) and reach it through a loopback TCP proxy this script controls:

  sparring  Engine1 built from source (`[engine1.source]`: a git repository the script makes,
            whose C program runs the sparring engine behind a wrapper that kills it 15-120 s
            after a third of its starts, a crashing build), depth 4, share 75 (--shares)
  glaurung  Glaurung behind a wrapper with an `EvalFile` option whose weights file travels
            with the run (`files = { EvalFile = ... }`; other weights search otherwise),
            depth 5, share 25
  match     a shared match (`spsa match --db`, --match): the sparring engine's defaults against
            weaker minor pieces, depth 4, share 50 (--match-share), as many pairs as the soak
            lasts; its creator is killed with SIGKILL by the first `owner` fault that picks it
            (the match goes on without it) and it is stopped with `spsa modify --stop` at the end

By default (--tls) the cluster has a certificate for `localhost` signed by a CA the script
makes, refuses every connection without TLS, and owners and workers connect with
`sslmode=verify-full`; the proxy passes the TLS bytes through unchanged. One more worker
(`nocc`, --build-fail) runs with a PATH that has git and sh but no C compiler: its build of
the sparring engine fails, it must be refused that run (shown in `spsa status`) and play the
other. Halfway (--change-at) one run's share is changed with `spsa modify` (--change). For
MINUTES it injects, in a seeded order, one fault every INTERVAL seconds:

  kill9      a worker killed with SIGKILL, restarted 5 s later
  stop       a worker stopped (SIGSTOP) past its lease, then continued (SIGCONT)
  restart    the database restarted (pg_ctl restart -m fast)
  crash      the database crashed (pg_ctl -m immediate) and started again
  owner      the owner killed with SIGKILL, resumed with --resume 5 s later
  drop       every worker connection through the proxy closed at once
  blackhole  the proxy stops passing bytes for 40 s, connections left open

(plus the wrapper engine's own crashes, all through the run). Then it stops the match, the workers with
Ctrl-C, lets the owner mirror every result, and checks, per run: every iteration applied exactly
once (results numbered 1..applied without a gap, each work row done once), θ equal to its replay
from the stored steps and signals (bit for bit), no game twice in the owner's PGN and every
applied iteration's games in it, the θ log's rows 1..applied once each; the TLS setup (verify-full
through the proxy connects, verify-full to a name not on the certificate and a connection
without TLS are refused, no worker connection without TLS seen); the build-failing worker
refused the source run in `spsa status` and its log, with no result of that run, while it and
the others play the other run; each run's share of the games (results reported) before and
after the change against its throughput share, within --share-tolerance; the changed share
kept through the owners' resumes; for the match: each pair reported once, the counted pairs
1..n with nothing counted past them, and those n pairs, played again by a local `spsa match`
of the same seed, equal pair for pair (W/D/L of each). It prints the faults injected per kind, the engine faults
the results recorded, and the throughput (iterations per minute) in the minute before, during
and the minute after each fault, and logs `uptime` every 5 minutes.

    python3 scripts/soak.py --minutes 60 --workers 4 --seed 1 --out /tmp/soak

The match takes its part of the games beside the runs (its pairs, two games each, counted in
the shares). Not part of CI (it is long); its figures are in docs/records/soaks.md. Exit 0 when every check
holds, 1 otherwise. Needs the release build (`cargo build --release`), PostgreSQL 15, openssl,
git, a C compiler (`cc`) and /usr/games/glaurung.
"""

import argparse
import json
import os
import pathlib
import random
import select
import shutil
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


def openssl(cwd, args):
    subprocess.run(["openssl", *args.split(" ")], cwd=cwd, check=True, capture_output=True)


NEW_KEY = "-new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1"


def make_pki(pki):
    """A throwaway CA and a server certificate for `localhost` only, signed by it (as
    tests/db_tls.rs makes them). Returns the CA's, the server's certificate and its key."""
    pki.mkdir()
    openssl(pki, f"req -x509 {NEW_KEY} -days 2 -subj /CN=soak-ca "
                 "-addext basicConstraints=critical,CA:TRUE "
                 "-addext keyUsage=critical,keyCertSign,cRLSign -keyout ca.key -out ca.crt")
    (pki / "server.ext").write_text(
        "subjectAltName = DNS:localhost\nbasicConstraints = CA:FALSE\n"
        "keyUsage = digitalSignature, keyEncipherment\nextendedKeyUsage = serverAuth\n")
    openssl(pki, f"req {NEW_KEY} -subj /CN=localhost -keyout server.key -out server.csr")
    openssl(pki, "x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
                 "-extfile server.ext -out server.crt")
    return pki / "ca.crt", pki / "server.crt", pki / "server.key"


def git(repo, *args):
    return subprocess.run(["git", "-c", "user.name=soak", "-c", "user.email=soak@example.org",
                           *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def share_text(x):
    return f"{x:g}"


def log_rows(spsa, log_path):
    """The row numbers of a θ log, as `spsa report --format history` reads them: the log is
    binary since format 2 (a script that read it as text failed on the first soak after it)."""
    if not log_path.exists():
        return []
    out = subprocess.run([str(spsa), "report", str(log_path), "--format", "history"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return []
    return [int(l.split(",")[0]) for l in out.stdout.splitlines()[1:] if l.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--interval", type=float, default=100, help="seconds between faults")
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--spsa", type=pathlib.Path, default=REPO / "target/release/spsa")
    ap.add_argument("--tls", action=argparse.BooleanOptionalAction, default=True,
                    help="owners and workers connect with sslmode=verify-full to a server that "
                         "refuses connections without TLS (default: on)")
    ap.add_argument("--build-fail", action=argparse.BooleanOptionalAction, default=True,
                    help="one more worker, `nocc`, without a C compiler on its PATH (default: on)")
    ap.add_argument("--shares", default="75,25",
                    help="the throughput shares of the sparring and the glaurung run")
    ap.add_argument("--change", default="glaurung=225",
                    help="RUN=SHARE set with `spsa modify` at --change-at ('' for no change)")
    ap.add_argument("--change-at", type=float, default=0.5,
                    help="when to change the share, as a fraction of MINUTES")
    ap.add_argument("--share-tolerance", type=float, default=0.05,
                    help="largest difference allowed between a run's part of the games and its "
                         "part of the shares")
    ap.add_argument("--match", action=argparse.BooleanOptionalAction, default=True,
                    help="a shared match beside the two runs (default: on)")
    ap.add_argument("--match-share", type=float, default=50,
                    help="the match's throughput share")
    ap.add_argument("--settle", type=float, default=30,
                    help="seconds after the change not counted in the share after it")
    args = ap.parse_args()
    spsa = str(args.spsa)
    sparring = str(args.spsa.with_name("sparring"))
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=False)
    rng = random.Random(args.seed)
    runs = ["sparring", "glaurung"]
    shares = dict(zip(runs, (float(x) for x in args.shares.split(","))))
    sharers = runs + (["match"] if args.match else [])  # what the shares are split between
    if args.match:
        shares["match"] = args.match_share
    change = None
    if args.change:
        cname, cval = args.change.split("=")
        assert cname in sharers, f"--change: no run {cname}"
        change = (cname, float(cval))

    # The database; with --tls, a certificate for `localhost` signed by a CA of our own, and
    # no connection without TLS.
    pgdir = out / "pg"
    pg_env = dict(os.environ)
    ca = None
    if args.tls:
        ca, cert, key = make_pki(out / "pki")
        pg_env.update(PG_SSL_CERT=str(cert), PG_SSL_KEY=str(key))
    admin = subprocess.run([str(REPO / ".ci/pg"), "start", str(pgdir)], capture_output=True,
                           text=True, check=True, env=pg_env).stdout.strip()
    if args.tls:
        hba = pgdir / "data/pg_hba.conf"
        hba.write_text("hostnossl all all all reject\n" + hba.read_text())
        psql(admin, "select pg_reload_conf()")
    psql(admin, "create database spsa")
    owner_url = admin.rsplit("/", 1)[0] + "/spsa"
    pg_port = int((pgdir / "port").read_text())
    host = "localhost" if args.tls else "127.0.0.1"
    tls_query = f"?sslmode=verify-full&sslrootcert={ca}" if args.tls else ""
    # The owners' URL: the certificate's name, verify-full, straight to the server.
    owner_db = owner_url.replace("@127.0.0.1:", f"@{host}:") + tls_query
    proxy = Proxy(pg_port)

    # The sparring run's engine, built from source: a repository whose C program runs the
    # sparring engine behind a wrapper that crashes in some games.
    crashy = out / "sparring_crashy"
    crashy.write_text(
        "#!/bin/bash\n"
        "# The sparring engine, killed 15-120 s after a third of its starts (a crashing build).\n"
        "PATH=/usr/bin:/bin\n"
        'if [ $((RANDOM % 3)) -eq 0 ]; then (sleep $((RANDOM % 106 + 15)); kill -9 $$) & fi\n'
        f"exec {sparring}\n")
    crashy.chmod(0o755)
    src = out / "engine-src"
    src.mkdir()
    git(src, "init", "--quiet", "--initial-branch=main")
    (src / "eng.c").write_text(
        "#include <unistd.h>\nint main(int argc, char **argv) {\n  (void)argc;\n"
        f'  execv("{crashy}", argv);\n  return 127;\n}}\n')
    git(src, "add", "eng.c")
    git(src, "commit", "--quiet", "-m", "the sparring engine behind a crashing wrapper")
    commit = git(src, "rev-parse", "HEAD")
    # The glaurung run's engine: Glaurung with an `EvalFile` option. It searches as Glaurung
    # when the file holds the run's weights, and with another Space weight when not, so the
    # signature is that of the engine with these weights.
    nnue = out / "glaurung_nnue"
    nnue.write_text(
        "#!/bin/sh\n"
        "# Glaurung with a weights file: other weights search otherwise (Space 50).\n"
        "PATH=/usr/bin:/bin\n"
        "while IFS= read -r line; do\n"
        '  case "$line" in\n'
        '    "setoption name EvalFile value "*)\n'
        '      if [ "$(cat "${line#setoption name EvalFile value }" 2>/dev/null)" != weights-v1 ]; then\n'
        "        echo 'setoption name Space value 50'\n"
        "      fi ;;\n"
        "    *) printf '%s\\n' \"$line\" ;;\n"
        "  esac\n"
        '  [ "$line" = quit ] && exit 0\n'
        "done | /usr/games/glaurung | sed -u 's/^uciok$/option name EvalFile type string default none\\nuciok/'\n")
    nnue.chmod(0o755)
    (out / "nets").mkdir()
    (out / "nets/glaurung.weights").write_text("weights-v1\n")
    (out / "sparring.var").write_text((REPO / "vars/aggr.var").read_text())
    (out / "glaurung.var").write_text((REPO / "proofs/glaurung_toga2/glaurung_bad.var").read_text())
    book = REPO / "openings/balanced_6ply.epd"
    common = ("A = 100\ngamma = 0.101\nalpha = 0.602\nconcurrency = 2\nseed = 1\n"
              "iterations = 100000\n")
    (out / "sparring.toml").write_text(
        f'variables = "sparring.var"\nlog = "logs/sparring.log"\n{common}'
        '[engine1.source]\ngit = "engine-src"\ncommit = "main"\n'
        'build = "cc -O2 -o eng eng.c"\nbinary = "eng"\n'
        f'[games]\nbook = "{book}"\ndepth = 4\nmax_plies = 300\nstall_timeout_ms = 10000\n'
        f'pgn = "logs/sparring.pgn"\n')
    (out / "glaurung.toml").write_text(
        f'variables = "glaurung.var"\nlog = "logs/glaurung.log"\n{common}'
        f'[engine1]\ncommand = "{nnue}"\n'
        'files = { EvalFile = "nets/glaurung.weights" }\n'
        '[engine1.options]\nThreads = 1\nHash = 16\nPonder = false\nOwnBook = false\n'
        f'[games]\nbook = "{book}"\ndepth = 5\nmax_plies = 300\nstall_timeout_ms = 10000\n'
        f'pgn = "logs/glaurung.pgn"\n')
    (out / "logs").mkdir()

    procs = {}
    db = owner_url  # the admin role, on the runs' database (psql: TLS when the server asks)
    owner_env = dict(os.environ, XDG_CACHE_HOME=str(out / "owner-cache"))

    def start_owner(name, resume):
        cmd = [spsa, "run", f"{name}.toml", "--db", owner_db, "--no-play"]
        if resume:
            cmd.append("--resume")  # no --throughput: it would replace a changed share
        else:
            cmd += ["--throughput", share_text(shares[name])]
        f = open(out / f"owner_{name}.log", "a")
        procs[f"owner_{name}"] = subprocess.Popen(cmd, cwd=out, stdout=f, stderr=f,
                                                  env=owner_env)

    for name in runs:
        start_owner(name, resume=False)
    deadline = time.time() + 180
    while True:
        try:
            if (psql(admin, "select count(*) from pg_roles where rolname = 'spsa_worker'") == "1"
                    and psql(db, "select count(*) from spsa.runs") == str(len(runs))):
                break
        except RuntimeError:
            pass
        if time.time() > deadline:
            sys.exit("the owners made no spsa_worker role or no runs")
        time.sleep(1)
    run_ids = {}
    for line in psql(db, "select id, name from spsa.runs").splitlines():
        rid, rname = line.split("|")
        run_ids[pathlib.Path(rname).stem] = rid
    # The match: created by `spsa match --db`, which then follows it (and is killed once).
    match_flags = ["--engine1", sparring, "--option2", "KnightValue=150", "--option2",
                   "BishopValue=150", "--book", str(book), "--depth", "4", "--max-plies", "300",
                   "--seed", "57", "--progress", "0"]
    if args.match:
        f = open(out / "match_creator.log", "a")
        procs["match_creator"] = subprocess.Popen(
            [spsa, "match", "--db", owner_db, *match_flags, "--pairs", "1000000",
             "--throughput", share_text(shares["match"])],
            cwd=out, stdout=f, stderr=f, env=owner_env)
        deadline = time.time() + 180
        while "match" not in run_ids:
            got = psql(db, "select id from spsa.runs where kind = 'match'")
            if got:
                run_ids["match"] = got
            elif time.time() > deadline or procs["match_creator"].poll() is not None:
                sys.exit("the match was not created: see match_creator.log")
            else:
                time.sleep(1)
    n_all = args.workers + (1 if args.build_fail else 0)
    nocc = args.workers + 1 if args.build_fail else None
    passwords = {}
    for i in range(1, n_all + 1):
        passwords[i] = f"soak{i}{rng.randrange(10**6)}"
        psql(admin, f"create role w{i} login password '{passwords[i]}' in role spsa_worker")

    def worker_url(i, at=host, query=tls_query):
        return f"postgres://w{i}:{passwords[i]}@{at}:{proxy.port}/spsa{query}"

    def status(url):
        try:
            return subprocess.run([spsa, "status", "--db", url], capture_output=True, text=True,
                                  timeout=120)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(e.cmd, -1, "", "timed out")

    # The TLS setup, before any worker: verify-full through the proxy connects; verify-full to
    # a name the certificate does not have, and a connection without TLS, are refused.
    tls_checks = {}
    if args.tls:
        said = []
        r = status(worker_url(1))
        said.append(f"$ spsa status --db (verify-full, localhost via the proxy): exit {r.returncode}\n{r.stderr}")
        tls_checks["verify-full to localhost through the proxy connects"] = r.returncode == 0
        r = status(worker_url(1, at="127.0.0.1"))
        said.append(f"$ spsa status --db (verify-full, 127.0.0.1): exit {r.returncode}\n{r.stderr}")
        tls_checks["verify-full to 127.0.0.1 (not on the certificate) refused"] = (
            r.returncode == 2 and "certificate verify failed" in r.stderr)
        r = status(worker_url(1, query="?sslmode=disable"))
        said.append(f"$ spsa status --db (sslmode=disable): exit {r.returncode}\n{r.stderr}")
        tls_checks["a connection without TLS refused by the server"] = (
            r.returncode != 0 and "no encryption" in r.stderr)
        (out / "tls_checks.txt").write_text("\n".join(said).replace(passwords[1], "***"))
        log("TLS: " + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in tls_checks.items()))

    nocc_bin = out / "nocc-bin"  # git and sh, no C compiler
    nocc_bin.mkdir()
    for tool in ("git", "sh"):
        (nocc_bin / tool).symlink_to(shutil.which(tool))

    def worker_name(i):
        return "nocc" if i == nocc else f"w{i}"

    def start_worker(i):
        home = out / f"w{i}"
        home.mkdir(exist_ok=True)
        env = dict(os.environ, XDG_CACHE_HOME=str(home / "cache"))
        env.pop("CC", None)
        if i == nocc:
            env["PATH"] = str(nocc_bin)
        f = open(home / "worker.log", "a")
        procs[f"w{i}"] = subprocess.Popen(
            [spsa, "worker", "--db", worker_url(i), "--name", worker_name(i),
             "--concurrency", "1"],
            cwd=home, stdout=f, stderr=f, env=env)

    for i in range(1, n_all + 1):
        start_worker(i)

    def applied():
        try:
            rows = psql(db, "select name, applied from spsa.runs where kind = 'tune'")
        except RuntimeError:
            return None
        return {pathlib.Path(line.split("|")[0]).stem: int(line.split("|")[1])
                for line in rows.splitlines() if line}

    timeline = []  # (t, applied in all, {run: applied}), every 10 s by a thread of its own
    loads = []  # the 1-minute load average, every 10 s
    ssl_seen = {"tls": 0, "plain": 0}  # the most worker connections with and without TLS seen
    sampling = [True]
    faults = []  # (t_start, t_end, kind, detail)
    kinds = ["kill9", "stop", "restart", "crash", "owner", "drop", "blackhole"]
    schedule = []  # rounds of every kind once, each round in a seeded order
    for _ in range(1 + int(args.minutes * 60 / args.interval / len(kinds))):
        round_ = list(kinds)
        rng.shuffle(round_)
        schedule += round_
    t0 = time.time()
    db_time = lambda: float(psql(db, "select extract(epoch from now())"))
    t0_db = db_time()
    end = t0 + args.minutes * 60
    next_fault = t0 + args.interval
    change_time = t0 + args.change_at * args.minutes * 60 if change else None
    change_db = None
    lease = 60
    uptime_log = out / "uptime.log"

    def sample():
        next_uptime = 0.0
        while sampling[0]:
            a = applied()
            if a is not None:
                timeline.append((time.time() - t0, sum(a.values()), a))
            loads.append(os.getloadavg()[0])
            try:
                tls, plain = psql(
                    db, "select count(*) filter (where s.ssl), count(*) filter (where not s.ssl) "
                        "from pg_stat_activity a join pg_stat_ssl s using (pid) "
                        "where a.usename ~ '^w[0-9]+$'").split("|")
                ssl_seen["tls"] = max(ssl_seen["tls"], int(tls))
                ssl_seen["plain"] = max(ssl_seen["plain"], int(plain))
            except (RuntimeError, ValueError):
                pass
            if time.time() >= next_uptime:
                up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
                with open(uptime_log, "a") as f:
                    f.write(f"{time.strftime('%H:%M:%S')} {up}\n")
                log(f"uptime: {up}")
                next_uptime = time.time() + 300
            time.sleep(10)
    threading.Thread(target=sample, daemon=True).start()
    while time.time() < end:
        now = time.time()
        if change_time is not None and change_db is None and now >= change_time:
            cname, cval = change
            (out / "status_before_change.txt").write_text(status(worker_url(1)).stdout)
            for attempt in range(10):
                r = subprocess.run([spsa, "modify", "--db", owner_db, "--run", run_ids[cname],
                                    "--throughput", share_text(cval)],
                                   capture_output=True, text=True, timeout=120)
                if r.returncode == 0:
                    break
                log(f"spsa modify failed (exit {r.returncode}): {r.stderr.strip()}")
                time.sleep(3)
            change_db = db_time()
            log(f"share changed at {(now - t0) / 60:.1f} min: {cname} {share_text(shares[cname])}"
                f" -> {share_text(cval)}: {r.stdout.strip()}")
        if now >= next_fault and schedule:
            kind = schedule.pop(0)
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
                name = rng.choice(sharers)
                creator = procs.get("match_creator")
                if name == "match" and creator is not None and creator.poll() is None:
                    creator.kill()  # the match goes on without the process that made it
                    creator.wait()
                    detail = "the match's creator (not restarted)"
                else:
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
    end_db = db_time()
    status_end = status(worker_url(1))
    (out / "status_end.txt").write_text(status_end.stdout + status_end.stderr)
    # Stop: the match (its pairs in flight are recorded, not counted), the workers (Ctrl-C
    # gives their leases back), then let the owners mirror.
    if args.match:
        r = subprocess.run([spsa, "modify", "--db", owner_db, "--run", run_ids["match"],
                            "--stop"], capture_output=True, text=True, timeout=120)
        log(f"match stopped (exit {r.returncode}): {r.stdout.strip()} {r.stderr.strip()}")
    log("stopping the workers")
    for i in range(1, n_all + 1):
        procs[f"w{i}"].send_signal(signal.SIGINT)
    for i in range(1, n_all + 1):
        try:
            procs[f"w{i}"].wait(timeout=30)
        except subprocess.TimeoutExpired:
            log(f"w{i} did not stop within 30 s of Ctrl-C")
            procs[f"w{i}"].kill()
    report = {"minutes": args.minutes, "workers": args.workers, "seed": args.seed,
              "tls": "verify-full" if args.tls else "prefer", "commit": commit,
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
            rows = log_rows(args.spsa, log_path)
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
        # θ is replayed bit for bit by the owner's mirror against each result's checksum (a work
        # row keeps its step only until applied); here: the run's θ is the last result's, and
        # every snapshot of θ is its result's.
        same = psql(db,
                    "select coalesce(bool_and(x.theta_sum = spsa.theta_checksum(s.theta)), true) "
                    "from spsa.results x join spsa.snapshots s using (run_id, seq) "
                    f"where x.run_id = {run_id}")
        last = psql(db,
                    "select coalesce(bool_and(x.theta_sum = spsa.theta_checksum(r.theta)), true) "
                    "from spsa.runs r join spsa.results x on x.run_id = r.id and x.seq = r.applied "
                    f"where r.id = {run_id}")
        checks["theta agrees with the results' checksums"] = same == "t" and last == "t"
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
        rows = log_rows(args.spsa, log_path)
        checks["theta log rows 1..applied once"] = rows == list(range(1, n_applied + 1))
        if name == "sparring":
            # Every game's PGN names the commit the engine was built from.
            tags = pgn.count(f'[Engine1Source "{src}@{commit}"]')
            checks["every game names the source commit"] = tags == len(games) and tags > 0
        engine_faults = int(psql(db,
                                 f"select coalesce(sum(cardinality(faults)), 0) from spsa.results "
                                 f"where run_id = {run_id}"))
        share_now = float(psql(db, f"select throughput from spsa.runs where id = {run_id}"))
        want_share = change[1] if change and change[0] == name and change_db else shares[name]
        checks["its share after the owners' resumes is the last one set"] = share_now == want_share
        report["runs"][name] = {"id": int(run_id), "applied": n_applied, "games": 2 * n_applied,
                                "engine_faults": engine_faults, "checks": checks}
        ok = ok and all(checks.values())
        log(f"{name}: {n_applied} iterations, {engine_faults} engine faults; "
            + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in checks.items()))

    # The match: each pair reported once, the counted ones 1..n, and those n pairs equal to a
    # local `spsa match` of the same seed, pair for pair.
    if args.match:
        mid = run_ids["match"]
        state, planned, counted_n = psql(
            db, f"select state, iterations, applied from spsa.runs where id = {mid}").split("|")
        counted_n = int(counted_n)
        rows = psql(db, "select pair, counted, wins, draws, losses, worker, "
                        "array_to_string(faults, ';') from spsa.match_pairs "
                        f"where run_id = {mid} order by pair")
        (out / "match_pairs.txt").write_text(rows + "\n")  # kept: the cluster goes at the end
        reported = [l.split("|") for l in rows.splitlines() if l]
        faulty = {int(r[0]) for r in reported if r[6]}
        pairs_db = [int(r[0]) for r in reported]
        counted = [(int(r[0]), (int(r[2]), int(r[3]), int(r[4]))) for r in reported if r[1] == "t"]
        checks = {}
        checks["the match stopped by spsa modify"] = state == "stopped"
        checks["each pair reported once"] = len(pairs_db) == len(set(pairs_db))
        checks["counted pairs are 1..n, n the match's count"] = (
            [p for p, _ in counted] == list(range(1, counted_n + 1)))
        tally = psql(db, f"select wins, draws, losses from spsa.runs where id = {mid}").split("|")
        checks["the match's W/D/L is the sum of its counted pairs'"] = list(map(int, tally)) == [
            sum(c[1][i] for c in counted) for i in range(3)]
        # Played again here: the same seed, book and sides, the first n pairs.
        replay = out / "match_replay.pgn"
        t = time.time()
        r = subprocess.run([spsa, "match", *match_flags, "--pairs", str(max(counted_n, 1)),
                            "--concurrency", "2", "--pgn", str(replay)],
                           capture_output=True, text=True, cwd=out)
        log(f"local replay of the match's {counted_n} pairs: exit {r.returncode} in "
            f"{time.time() - t:.0f} s")
        local = {}
        if r.returncode == 0:
            text = replay.read_text()
            round_ = white = None
            for line in text.splitlines():
                if line.startswith("[Round "):
                    round_ = int(line.split('"')[1].split(".")[0])
                elif line.startswith("[White "):
                    white = line.split('"')[1]
                elif line.startswith("[Result "):
                    res = line.split('"')[1]
                    w, d, l_ = local.get(round_, (0, 0, 0))
                    a_white = white == "sparring.1"
                    if res == "1/2-1/2":
                        d += 1
                    elif (res == "1-0") == a_white:
                        w += 1
                    else:
                        l_ += 1
                    local[round_] = (w, d, l_)
        # A pair with an engine fault (a stall under load, a crash) was decided by the fault,
        # which a replay on a quiet machine need not repeat: those are counted apart.
        same = sum(1 for p, wdl in counted if local.get(p) == wdl)
        clean = [(p, wdl) for p, wdl in counted if p not in faulty]
        differ = [p for p, wdl in counted if local.get(p) != wdl]
        checks["the counted pairs without an engine fault equal a local match's, pair for pair"] = (
            counted_n > 0 and all(local.get(p) == wdl for p, wdl in clean))
        ok = ok and all(checks.values())
        report["match"] = {"id": int(mid), "counted": counted_n, "reported": len(pairs_db),
                           "reported_not_counted": len(pairs_db) - len(counted),
                           "equal_to_local": same, "with_engine_faults": sorted(faulty),
                           "differing_pairs": differ, "checks": checks}
        log(f"match: {counted_n} pairs counted, {len(pairs_db)} reported ({same} equal to the "
            f"local replay; with engine faults: {sorted(faulty)}; differing: {differ}); " + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in checks.items()))

    # The shares: each run's part of the results reported (two games each) before the change
    # and after it (from --settle seconds after), against its part of the shares.
    def games_between(a, b):
        rows = psql(db, "select run_id, count(*) from (select run_id, reported from spsa.results "
                        "union all select run_id, reported from spsa.match_pairs) x "
                        f"where reported >= to_timestamp({a}) and reported < to_timestamp({b}) "
                        "group by run_id")
        got = {r: 0 for r in sharers}
        by_id = {v: k for k, v in run_ids.items()}
        for line in rows.splitlines():
            rid, n = line.split("|")
            got[by_id[rid]] = 2 * int(n)
        return got
    after_shares = dict(shares)
    if change and change_db:
        after_shares[change[0]] = change[1]
    windows = [("before the change" if change_db else "whole run", t0_db, change_db or end_db,
                shares)]
    if change_db:
        windows.append(("after the change", change_db + args.settle, end_db, after_shares))
    share_checks = {}
    report["shares"] = []
    for label, a, b, s in windows:
        got = games_between(a, b)
        total = sum(got.values())
        row = {"window": label, "minutes": (b - a) / 60, "games": got, "runs": {}}
        for name in sharers:
            want = s[name] / sum(s.values())
            part = got[name] / total if total else 0.0
            row["runs"][name] = {"throughput": s[name], "expected": want, "got": part}
            share_checks[f"{name} {label}: {part:.3f} of the games for {want:.3f} of the shares"] = (
                total > 0 and abs(part - want) <= args.share_tolerance)
        report["shares"].append(row)
        log(f"shares {label} ({(b - a) / 60:.1f} min): " + ", ".join(
            f"{n} {got[n]} games = {row['runs'][n]['got']:.3f} (throughput "
            f"{share_text(s[n])}: {row['runs'][n]['expected']:.3f})" for n in sharers))
    per_worker = psql(db, "select worker, run_id, count(*) from (select worker, run_id from "
                          "spsa.results union all select worker, run_id from spsa.match_pairs) x "
                          "group by 1, 2 order by 1, 2")
    report["results_per_worker_and_run"] = per_worker.splitlines()
    log("results per worker and run id: " + "; ".join(per_worker.splitlines()))

    # The worker without a compiler: refused the source run, shown in `spsa status` and its
    # log, nothing of that run played; it and the others play the other run.
    build_checks = {}
    shown = status_end.stdout
    if nocc:
        who = f"w{nocc}/nocc"
        refusal = (f"{who} Engine1: no engine, REFUSED: Engine1: cannot build it from source: "
                   f"`cc -O2 -o eng eng.c` at commit {commit} failed")
        lines = [l for l in shown.splitlines() if refusal in l]
        build_checks["the failed build refused in `spsa status`"] = bool(lines) and "cc: not found" in shown
        said = (out / f"w{nocc}/worker.log").read_text()
        build_checks["the failed build refused in the worker's log"] = (
            f"cannot play run {run_ids['sparring']}: Engine1: cannot build it from source" in said)
        count = lambda sql: int(psql(db, sql))
        build_checks["no result of the source run from it"] = count(
            f"select count(*) from spsa.results where worker = '{who}' "
            f"and run_id = {run_ids['sparring']}") == 0
        build_checks["it plays the other run"] = count(
            f"select count(*) from spsa.results where worker = '{who}' "
            f"and run_id = {run_ids['glaurung']}") > 0
        report["build_refusal"] = lines[0].strip() if lines else None
        start_i = shown.find(lines[0]) if lines else -1
        report["build_refusal_shown"] = shown[start_i:start_i + 600] if lines else None
    build_checks["the other workers built it and play it"] = all(
        f"w{i}/w{i} Engine1: own build " in shown for i in range(1, args.workers + 1))
    build_checks["every worker fetched the weights file"] = all(
        list((out / f"w{i}/cache/spsa/engines").glob("*/glaurung.weights"))
        for i in range(1, n_all + 1))
    logs_all = "".join((out / f"w{i}/worker.log").read_text() for i in range(1, args.workers + 1))
    report["builds"] = {"built": logs_all.count(" built in "),
                        "reused": logs_all.count("build reused")}
    tls_checks["no worker connection without TLS seen"] = ssl_seen["plain"] == 0
    report["ssl_connections_seen"] = ssl_seen
    for label, group in (("TLS", tls_checks), ("build", build_checks), ("shares", share_checks)):
        log(f"{label}: " + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in group.items()))
        ok = ok and all(group.values())
    report["checks"] = {"tls": tls_checks, "build": build_checks, "shares": share_checks}
    report["load"] = {"min": min(loads, default=None), "max": max(loads, default=None),
                      "mean": sum(loads) / len(loads) if loads else None}
    log(f"load average (1 min, every 10 s): {report['load']}; builds in the workers' logs: "
        f"{report['builds']}")

    # Throughput around each fault: iterations per minute in the minute before, during, after.
    def rate(a, b):
        pts = [(t, n) for t, n, _ in timeline if a <= t <= b]
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
