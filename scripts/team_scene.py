#!/usr/bin/env python3
"""A real team on `spsa serve --db`, for the screenshots of docs/team.md (issue 65).

A throwaway PostgreSQL cluster (.ci/pg) with three members and an approver, Patricia's own
repository and a build of it, Debian's Stockfish and Glaurung. In Chromium (through
chromedriver's WebDriver, spoken here with urllib):

  - bob submits a patch test through the form (`--form-git`: the server builds both commits)
    of a repository made here from Patricia's engine folder: the base commit is the folder as
    it is, the patch sets params.h's defaults to a tune's values (a variables file, rounded);
  - alice submits a tune of Patricia's search parameters from their OpenBench lines (its
    `printparams`) through the tune form: the server hosts its owner process in her name;
  - dave submits a match of Stockfish against Glaurung; carol (the approver) rejects it with a
    reason and approves bob's and alice's;
  - one worker plays for a while (nice 19), then the runs list and a run's page are captured.

    python3 scripts/team_scene.py --spsa target/debug/spsa --engine-src /tmp/patricia/engine \\
        --values proofs/patricia_openbench_vs_plan/spsa_plan_tuned.var --play 300 --out docs/img

Needs: root (the cluster runs as `postgres`), chromium and chromium-driver, g++ and make.
"""

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class WebDriver:
    """The few WebDriver commands a screenshot needs."""

    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1500,1000"]}}}}
        for _ in range(50):
            try:
                self.sid = self.call("POST", "/session", caps)["sessionId"]
                break
            except OSError:
                time.sleep(0.2)
        self.call("POST", f"/session/{self.sid}/timeouts", {"pageLoad": 900000})

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=1000) as r:
            return json.load(r)["value"]

    def s(self, method, path, body=None):
        return self.call(method, f"/session/{self.sid}{path}", body)

    def goto(self, url):
        self.s("POST", "/url", {"url": url})

    def find(self, css):
        e = self.s("POST", "/element", {"using": "css selector", "value": css})
        return next(iter(e.values()))

    def fill(self, css, text):
        e = self.find(css)
        self.s("POST", f"/element/{e}/clear", {})
        self.s("POST", f"/element/{e}/value", {"text": text})

    def click(self, css):
        self.s("POST", f"/element/{self.find(css)}/click", {})

    def text(self, css):
        return self.s("GET", f"/element/{self.find(css)}/text")

    def has(self, css):
        return bool(self.s("POST", "/elements", {"using": "css selector", "value": css}))

    def wait_text(self, css, want, seconds=30):
        for _ in range(seconds * 10):
            try:
                if self.has(css) and want in self.text(css):
                    return
            except urllib.error.HTTPError:
                pass  # the page changed under the lookup: look again
            time.sleep(0.1)
        sys.exit(f"{css} never said {want!r}")

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.s("GET", "/screenshot")))

    def quit(self):
        self.s("DELETE", "")


def psql(url, sql):
    subprocess.run(["psql", "-q", url, "-c", sql], check=True, stdout=subprocess.DEVNULL)


def role_url(url, role, password):
    # postgres://spsa_admin:PW@127.0.0.1:PORT/DB -> the same for `role`
    rest = url.split("@", 1)[1]
    return f"postgres://{role}:{password}@{rest}"


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repo(repo, src, values):
    """Patricia's engine folder as a base commit, and a patch that sets params.h's defaults to
    the values of `values` (rounded); returns the two commits."""
    shutil.copytree(src, repo, ignore=shutil.ignore_patterns("patricia", "*.o"))
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=bob", "-c", "user.email=bob@example.org", "commit", "--quiet",
        "-m", "Patricia 1fcee72, search parameters as UCI options")
    base = git(repo, "rev-parse", "HEAD")
    tuned = {}
    with open(values) as f:
        for row in list(f)[1:]:
            name, value = row.split(",")[:2]
            tuned[name.strip()] = round(float(value))
    params = os.path.join(repo, "src", "params.h")
    with open(params) as f:
        text = f.read()
    out = []
    for line in text.splitlines(keepends=True):
        if line.startswith("TUNE_PARAM("):
            name, default, rest = line[len("TUNE_PARAM("):].split(",", 2)
            if name.strip() in tuned:
                line = f"TUNE_PARAM({name}, {tuned[name.strip()]},{rest}"
        out.append(line)
    with open(params, "w") as f:
        f.write("".join(out))
    git(repo, "-c", "user.name=bob", "-c", "user.email=bob@example.org", "commit", "--quiet",
        "-am", "the tune's values")
    return base, git(repo, "rev-parse", "HEAD")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spsa", default=os.path.join(ROOT, "target/debug/spsa"))
    ap.add_argument("--engine-src", required=True,
                    help="Patricia's engine folder, edited and built by scripts/patricia_tune.py")
    ap.add_argument("--values", required=True, help="a variables file of tuned values for the patch")
    ap.add_argument("--play", type=int, default=300, help="seconds the worker plays")
    ap.add_argument("--out", default=os.path.join(ROOT, "target/web-screenshots"))
    a = ap.parse_args()
    spsa = os.path.abspath(a.spsa)
    work = tempfile.mkdtemp(prefix="spsa-team.")
    os.chmod(work, 0o755)
    pg = os.path.join(work, "pg")
    procs = []
    try:
        url = subprocess.run([os.path.join(ROOT, ".ci/pg"), "start", pg], check=True,
                             capture_output=True, text=True).stdout.strip()
        subprocess.run([spsa, "status", "--db", url, "--install"], check=True, stdout=subprocess.DEVNULL)
        for r, groups in [("alice", "spsa_member"), ("bob", "spsa_member"), ("dave", "spsa_member"),
                          ("carol", "spsa_member, spsa_approver")]:
            psql(url, f"CREATE ROLE {r} LOGIN PASSWORD '{r}-pw' IN ROLE {groups}")
        psql(url, "CREATE ROLE worker1 LOGIN PASSWORD 'w-pw' IN ROLE spsa_worker")

        files = os.path.join(work, "files")
        os.mkdir(files)
        patricia = os.path.join(os.path.abspath(a.engine_src), "patricia")
        os.symlink(patricia, os.path.join(files, "patricia"))
        for e in ["stockfish", "glaurung"]:
            os.symlink(f"/usr/games/{e}", os.path.join(files, e))
        shutil.copy(os.path.join(ROOT, "openings/balanced_8ply_large.epd"), files)
        base_rev, patch_rev = make_repo(os.path.join(files, "Patricia"), a.engine_src, a.values)
        cache = os.path.join(work, "cache")
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        serve = subprocess.Popen([spsa, "serve", "--db", url, "--form-files", files, "--form-git",
                                  "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True, env=env,
                                 cwd=work)
        procs.append(serve)
        base = serve.stdout.readline().strip().rstrip("/")
        print("serving", base, file=sys.stderr)
        driver = subprocess.Popen(["chromedriver", "--port=9517"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        procs.append(driver)
        b = WebDriver(9517)

        def sign_in(role):
            b.goto(base + "/signin")
            b.fill("#role", role)
            b.fill("#password", f"{role}-pw")
            b.click("#go")
            b.wait_text(".team", f"signed in as {role}")

        def sign_out():
            b.click("#signout")
            b.wait_text(".team", "sign in")

        def submit(path, fields):
            """Fill in the form at `path`, post it, and return the run it made (`db-N`)."""
            b.goto(base + path)
            if not b.has("#create"):
                sys.exit(f"this server has no form at {path}")
            for css, value in fields:
                if css == "#limit":
                    b.click(f"#limit option[value='{value}']")
                else:
                    b.fill(css, value)
            b.click("#create")
            # The server builds, measures or starts the tune's owner before it answers: wait
            # for the run's page, or the form again with what is wrong.
            for _ in range(6000):
                url = b.s("GET", "/url")
                if "/runs/" in url or b.has(".error"):
                    break
                time.sleep(0.1)
            if "/runs/" not in url:
                errors = b.s("POST", "/elements", {"using": "css selector", "value": ".error"})
                said = [b.s("GET", f"/element/{next(iter(e.values()))}/text") for e in errors]
                sys.exit(f"the form at {path} was refused: {said}")
            return url.rsplit("/", 1)[-1]

        book = "balanced_8ply_large.epd"
        # bob: a patch test of the tune's values against Patricia's own.
        sign_in("bob")
        t0 = time.time()
        patch = submit("/new/match", [("#git", "Patricia"), ("#source1", patch_rev),
                                      ("#source2", base_rev), ("#build", "make CXX=g++"),
                                      ("#binary", "patricia"), ("#book", book),
                                      ("#limit_value", "10000"), ("#sprt", "-5,0"),
                                      ("#pairs", "4000")])
        print(f"bob's patch test {patch}: built and measured in {time.time() - t0:.0f} s", file=sys.stderr)
        sign_out()
        # dave: Stockfish against Glaurung, which the approver turns down.
        sign_in("dave")
        dave = submit("/new/match", [("#engine1", "stockfish"), ("#engine2", "glaurung"),
                                     ("#book", book), ("#limit", "depth"), ("#limit_value", "8"),
                                     ("#pairs", "200")])
        sign_out()
        # alice: a tune of Patricia's search parameters from their OpenBench lines.
        lines = subprocess.run([patricia], input="printparams\nquit\n", capture_output=True,
                               text=True).stdout
        ob = "\n".join(l for l in lines.splitlines() if l.count(",") == 6)
        sign_in("alice")
        # OpenBench's form defaults: 8 pairs an iteration; 250 iterations = 2,000 pairs.
        alice_tune = submit("/new/tune", [
            ("#name", "patricia-search"), ("#params", ob), ("#engine", "patricia"), ("#book", book),
            ("#limit_value", "10000"), ("#iterations", "250"), ("#pairs", "8"),
            ("#verify_pairs", "200")])
        b.goto(base + "/")
        sign_out()
        # carol approves bob's and alice's, rejects dave's with a reason.
        sign_in("carol")
        for run in [patch, alice_tune]:
            b.goto(f"{base}/runs/{run}")
            b.click("#approve")
            b.wait_text("#approval", "approved by carol")
        b.goto(f"{base}/runs/{dave}")
        b.wait_text("#approval", "waiting")
        b.fill("#reason-input", "Glaurung is not ours: test Stockfish against Patricia")
        b.click("#reject")
        b.wait_text("#approval", "rejected")
        worker = subprocess.Popen(["nice", "-n", "19", spsa, "worker", "--db",
                                   role_url(url, "worker1", "w-pw"), "--name", "box-1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=work)
        procs.append(worker)
        time.sleep(a.play)
        os.makedirs(a.out, exist_ok=True)
        b.goto(base + "/")
        time.sleep(2)
        b.screenshot(os.path.join(a.out, "team-list.png"))
        b.goto(f"{base}/runs/{alice_tune}")
        time.sleep(2)
        b.screenshot(os.path.join(a.out, "team-run.png"))
        b.quit()
        print("screenshots in", a.out, file=sys.stderr)
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        subprocess.run([os.path.join(ROOT, ".ci/pg"), "stop", pg])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
