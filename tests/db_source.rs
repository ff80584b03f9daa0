//! Engines built from their source, as fishtest and OpenBench build theirs: a run names a git
//! repository, a commit, a build command and the binary's path; the owner resolves the commit
//! to its full id and builds it once for the run's signature, and every worker (in an empty
//! folder, given only the database's URL) fetches that commit, builds it with its own compiler
//! into its cache, once, and plays only when its build searches as the owner's did. A worker
//! whose build fails is refused, with the compiler's last lines where users look, while the
//! others play on; the PGN and `spsa report` name the commit; and a source that cannot be read,
//! resolved or built is the config's error at its line, exit 2, with nothing created.
//!
//! The engine is a small C program in a repository made by the test: it runs the sparring
//! engine, so its signature is sparring's, and it builds in a fraction of a second.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Instant;

use crate::pg_common;
use crate::web_common;
use pg_common::{Cluster, assert_finished, create_run};

const SPARRING: &str = env!("CARGO_BIN_EXE_sparring");

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `spsa ARGS` in `dir` with `cache` as XDG_CACHE_HOME and `env` set (and no other CC).
fn command(dir: &Path, cache: &Path, env: &[(&str, &str)], args: &[&str]) -> Command {
    let mut c = pg_common::spsa(dir, cache, args);
    c.env_remove("CC").envs(env.iter().copied());
    c
}

/// `git ARGS` in `repo` (its commits by a test identity): its output, trimmed.
pub(crate) fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=test", "-c", "user.email=test@example.org"])
        .args(args)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

/// A repository at `dir/repo` whose `eng.c` builds (with `$CC`, else `cc`) into a program that
/// runs sparring; returns its path and the commit id.
fn engine_repo(dir: &Path) -> (PathBuf, String) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(
        repo.join("eng.c"),
        format!(
            "#include <unistd.h>\nint main(int argc, char **argv) {{\n  (void)argc;\n  execv(\"{SPARRING}\", argv);\n  return 127;\n}}\n"
        ),
    )
    .unwrap();
    git(&repo, &["add", "eng.c"]);
    git(&repo, &["commit", "--quiet", "-m", "a wrapper engine"]);
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    (repo, commit)
}

const BUILD: &str = "${CC:-cc} -O2 -o eng eng.c";

/// A run's config (`g.toml`) and variables in `dir`: engine 1 built from `source` (the lines of
/// an `[engine1.source]` table), sparring's knight value tuned at depth 2.
fn source_config(dir: &Path, iterations: u64, source: &str) {
    std::fs::write(dir.join("g.var"), "KnightValue,300,100,600,40,0.002,0\n").unwrap();
    std::fs::write(
        dir.join("g.toml"),
        format!(
            "simulate = false\nvariables = \"g.var\"\nlog = \"g.log\"\niterations = {iterations}\nA = 10\ngamma = 0.101\nalpha = 0.602\nseed = 9\n[games]\ndepth = 2\nmax_plies = 120\npgn = \"g.pgn\"\n[engine1.source]\n{source}"
        ),
    )
    .unwrap();
}

/// The `[engine1.source]` lines (lines 14 to 17 of `g.toml`).
fn source_lines(git: &str, commit: &str, build: &str, binary: &str) -> String {
    format!("git = \"{git}\"\ncommit = \"{commit}\"\nbuild = \"{build}\"\nbinary = \"{binary}\"\n")
}

fn worker(dir: &Path, cache: &Path, env: &[(&str, &str)], url: &str, name: &str) -> Child {
    command(
        dir,
        cache,
        env,
        &["worker", "--db", url, "--until-idle", "--name", name],
    )
    .spawn()
    .unwrap()
}

fn finished(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    said
}

#[test]
fn workers_build_the_runs_commit_and_a_worker_whose_build_fails_is_refused() {
    let cluster = Cluster::shared();
    let db = cluster.database("source_build");
    let owner_dir = tempfile::tempdir().unwrap();
    let caches = tempfile::tempdir().unwrap();
    let cache = |name: &str| caches.path().join(name);
    let (repo, commit) = engine_repo(owner_dir.path());
    // The owner names a branch: the run records the commit it is at.
    source_config(
        owner_dir.path(),
        4,
        &source_lines("repo", "main", BUILD, "eng"),
    );
    let (owner, run) = create_run(&db, owner_dir.path(), &cache("owner"), &[]);
    let recorded = db.psql(&format!(
        "SELECT e->'source'->>'git', e->'source'->>'commit', e->'source'->>'build', e->'source'->>'binary' \
         FROM spsa.runs, jsonb_array_elements(definition->'engines') e WHERE id = {run} ORDER BY e->>'side'"
    ));
    let line = format!("{}|{commit}|{BUILD}|eng", repo.display());
    assert_eq!(recorded, format!("{line}\n{line}"));
    // The branch moves on to a commit that does not build: workers build the run's commit.
    std::fs::write(repo.join("eng.c"), "this is not C\n").unwrap();
    git(&repo, &["commit", "--quiet", "-am", "broken"]);

    let url = db.worker_role("source_w", "pws");
    let (empty1, empty2, empty3) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let started = Instant::now();
    // One worker's compiler is missing (its CC names no program): its build fails.
    let bad = worker(
        empty3.path(),
        &cache("bad"),
        &[("CC", "/nonexistent/cc")],
        &url,
        "bad",
    );
    let a = worker(empty1.path(), &cache("a"), &[], &url, "a");
    let b = worker(empty2.path(), &cache("b"), &[], &url, "b");
    let (said_a, said_b, said_bad) = (finished(a), finished(b), finished(bad));
    eprintln!(
        "two workers built and played 4 iterations in {:?}",
        started.elapsed()
    );
    assert_finished(&db, owner, &run, 4, &["source_w/a", "source_w/b"]);
    for said in [&said_a, &said_b] {
        let built = format!(
            "run {run}: Engine1 from {} at {commit} (fetched in ",
            repo.display()
        );
        assert!(said.contains(&built) && said.contains("built in"), "{said}");
        // Engine 2 is the same recipe: built once.
        assert_eq!(said.matches("built in").count(), 1, "{said}");
    }
    for name in ["a", "b"] {
        let binary = cache(name).join("spsa/engines/source/builds");
        let dirs: Vec<_> = std::fs::read_dir(&binary).unwrap().flatten().collect();
        assert_eq!(dirs.len(), 1);
        let dir = dirs[0].path();
        assert!(
            dir.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&commit)
        );
        assert!(dir.join("tree/eng").is_file() && dir.join("built").is_file());
    }

    // The worker without a compiler: refused with the shell's own words, nothing leased.
    let refusal = format!(
        "cannot play run {run}: Engine1: cannot build it from source: `{BUILD}` at commit {commit} failed (exit status: 127); its last lines:\n  | sh: 1: /nonexistent/cc: not found"
    );
    assert!(said_bad.contains(&refusal), "{said_bad}");
    assert_eq!(
        db.psql("SELECT count(*) FROM spsa.results WHERE worker = 'source_w/bad'"),
        "0"
    );
    let status = command(Path::new("."), &cache("x"), &[], &["status", "--db", &url])
        .output()
        .unwrap();
    let shown = text(&status.stdout);
    assert!(status.status.success(), "{}", text(&status.stderr));
    assert!(
        shown.contains(
            "source_w/bad Engine1: no engine, REFUSED: Engine1: cannot build it from source: "
        ) && shown.contains("  | sh: 1: /nonexistent/cc: not found"),
        "{shown}"
    );
    assert!(
        shown.contains("source_w/a Engine1: own build ") && shown.contains(", plays"),
        "{shown}"
    );
    let serve = web_common::Serve::start(&["--db", &db.url]);
    let (code, html) = web_common::http(&serve.url, "GET", &format!("/runs/db-{run}"), &[], "");
    assert_eq!(code, 200);
    assert!(
        html.contains("refused: Engine1: cannot build it from source")
            && html.contains("/nonexistent/cc: not found"),
        "{html}"
    );

    // The games and the report name the commit.
    let pgn = std::fs::read_to_string(owner_dir.path().join("g.pgn")).unwrap();
    let tag = format!("[Engine1Source \"{}@{commit}\"]", repo.display());
    assert_eq!(pgn.matches(&tag).count(), 8, "{pgn}");
    let report = command(owner_dir.path(), &cache("owner"), &[], &["report", "g.log"])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report.stderr));
    assert!(
        text(&report.stdout).contains(&format!(
            "built from source: Engine1 {}@{commit}",
            repo.display()
        )),
        "{}",
        text(&report.stdout)
    );

    // A second run of the same commit: the worker's second start builds nothing.
    let second = tempfile::tempdir().unwrap();
    source_config(
        second.path(),
        1,
        &source_lines(&repo.display().to_string(), &commit, BUILD, "eng"),
    );
    let (owner, run2) = create_run(&db, second.path(), &cache("owner"), &[]);
    let again = finished(worker(empty1.path(), &cache("a"), &[], &url, "a"));
    assert!(
        again.contains(&format!(
            "run {run2}: Engine1 from {} at {commit} (commit in the cache, build reused)",
            repo.display()
        )),
        "{again}"
    );
    assert!(owner.wait_with_output().unwrap().status.success());

    // A recorded build command altered in the database: the run process, resumed, builds only
    // what its config says and refuses before building anything.
    db.psql(&format!(
        "UPDATE spsa.runs SET definition = jsonb_set(definition, '{{engines,0,source,build}}', '\"touch pwned; {BUILD}\"') WHERE id = {run2}"
    ));
    let out = command(
        second.path(),
        &cache("owner2"),
        &[],
        &["run", "g.toml", "--db", &db.url, "--resume"],
    )
    .output()
    .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "Engine1: the run builds {} with `touch pwned; {BUILD}` (eng), not what g.toml says",
            repo.display()
        )),
        "{err}"
    );
    let built: Vec<_> = std::fs::read_dir(cache("owner2").join("spsa/engines/source/builds"))
        .unwrap()
        .flatten()
        .filter_map(|d| std::fs::read_dir(d.path().join("tree")).ok())
        .flatten()
        .flatten()
        .filter(|f| f.file_name() == "pwned")
        .collect();
    assert!(built.is_empty(), "{built:?}");
}

#[test]
fn a_source_that_cannot_be_had_is_the_configs_error_at_its_line_and_nothing_is_created() {
    let cluster = Cluster::shared();
    let db = cluster.database("source_bad_input");
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (repo, _) = engine_repo(dir.path());
    let repo = repo.display().to_string();
    let cases = [
        (
            source_lines(&repo, "no-such-commit", BUILD, "eng"),
            format!(
                "g.toml:15: key `engine1.source.commit`: no commit `no-such-commit` in the repository {repo}"
            ),
        ),
        (
            source_lines(&repo, &"0".repeat(40), BUILD, "eng"),
            format!("g.toml:15: key `engine1.source.commit`: no commit `{}`", "0".repeat(40)),
        ),
        (
            source_lines(&repo, "main", "echo compiling; echo 'eng.c:1: error: oops' >&2; exit 3", "eng"),
            "g.toml:16: key `engine1.source.build`: `echo compiling; echo 'eng.c:1: error: oops' >&2; exit 3` at commit ".into(),
        ),
        (
            source_lines(&repo, "main", BUILD, "build/eng"),
            "g.toml:17: key `engine1.source.binary`: no binary `build/eng` in the tree of commit ".into(),
        ),
        (
            source_lines(&format!("{repo}-missing"), "main", BUILD, "eng"),
            format!("g.toml:14: key `engine1.source.git`: cannot read the repository {repo}-missing: "),
        ),
        (
            source_lines(&repo, "main", BUILD, "../eng"),
            "g.toml:17: key `engine1.source.binary`: `../eng` must be a path inside the repository's tree".into(),
        ),
        (
            format!("{}flags = \"-O3\"\n", source_lines(&repo, "main", BUILD, "eng")),
            "g.toml:18: unknown field `flags`, expected one of `git`, `commit`, `build`, `binary`, `build_timeout_s`".into(),
        ),
        (
            format!("git = \"{repo}\"\ncommit = \"main\"\nbinary = \"eng\"\n"),
            "g.toml:13: missing field `build`".into(),
        ),
    ];
    for (source, want) in cases {
        source_config(dir.path(), 2, &source);
        let out = command(dir.path(), &cache, &[], &["run", "g.toml", "--db", &db.url])
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&want), "want {want}\n{err}");
        for file in ["g.log", "g.checkpoint.var", "g.pgn"] {
            assert!(!dir.path().join(file).exists(), "{file} after {err}");
        }
        assert_eq!(
            db.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'spsa'"),
            "0",
            "nothing in the database after {err}"
        );
    }
    // The failed build's output, in the error: its last lines, stdout and stderr together.
    source_config(
        dir.path(),
        2,
        &source_lines(
            &repo,
            "main",
            "echo compiling; echo 'eng.c:1: error: oops' >&2; exit 3",
            "eng",
        ),
    );
    let out = command(dir.path(), &cache, &[], &["run", "g.toml"])
        .output()
        .unwrap();
    assert!(
        text(&out.stderr).ends_with(
            "failed (exit status: 3); its last lines:\n  | compiling\n  | eng.c:1: error: oops\n"
        ),
        "{}",
        text(&out.stderr)
    );
    // An engine given both ways.
    std::fs::write(
        dir.path().join("g.toml"),
        std::fs::read_to_string(dir.path().join("g.toml"))
            .unwrap()
            .replace(
                "[engine1.source]",
                "[engine1]\ncommand = \"eng\"\n[engine1.source]",
            ),
    )
    .unwrap();
    let out = command(dir.path(), &cache, &[], &["run", "g.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "key `engine1.source`: an engine is given by `command` or by `source`, not both"
        ),
        "{}",
        text(&out.stderr)
    );
}
