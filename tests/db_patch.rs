//! A patch test (issue 57): `spsa match --git REPO --source1 REV --source2 REV --build CMD
//! --binary PATH` plays two commits of one repository against each other, here and on the
//! database's workers, which build each commit themselves from the repository. Two URL-only
//! workers end the match by its SPRT; a worker without a C compiler refuses it, with the shell's
//! words in `spsa status`, and plays no pair of it. The sides are named by their commits; a
//! config's `[engine1.source]` takes its commit from `--source1`; and flags that are missing,
//! stray or in conflict, or a revision the repository lacks, are user errors (exit 2) naming
//! the flag, with nothing created.
//!
//! The engine is a small C program in a repository made by the test that runs the sparring
//! engine behind a pipe: the base commit first tells sparring to value knights and bishops at
//! 150 centipawns, the patch (on `main`) does not, and so plays clearly better.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Instant;

use crate::db_source::git;
use crate::match_common::{self, book, sparring};
use crate::pg_common::{self, Cluster, spsa, wait_for};
use crate::run_common::text;

pub(crate) const BUILD: &str = "cc -O2 -o eng eng.c";

/// The wrapper's source: sparring behind a pipe, `first` sent to it before what it is sent.
fn wrapper(first: &str) -> String {
    format!(
        "#include <stdio.h>\nint main(void) {{\n  FILE *e = popen(\"{}\", \"w\");\n  char line[65536];\n  if (!e) return 127;\n  fputs(\"{first}\", e);\n  fflush(e);\n  while (fgets(line, sizeof line, stdin)) {{\n    fputs(line, e);\n    fflush(e);\n  }}\n  return pclose(e) == 0 ? 0 : 1;\n}}\n",
        sparring()
    )
}

/// A repository at `dir/repo`: the base commit (tagged `base`) weakens sparring's minor
/// pieces, the patch on `main` does not. Returns its path and the two commits (base, patch).
pub(crate) fn patch_repo(dir: &Path) -> (PathBuf, String, String) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(
        repo.join("eng.c"),
        wrapper("setoption name KnightValue value 150\\nsetoption name BishopValue value 150\\n"),
    )
    .unwrap();
    git(&repo, &["add", "eng.c"]);
    git(&repo, &["commit", "--quiet", "-m", "base"]);
    git(&repo, &["tag", "base"]);
    let base = git(&repo, &["rev-parse", "HEAD"]);
    std::fs::write(repo.join("eng.c"), wrapper("")).unwrap();
    git(
        &repo,
        &[
            "commit",
            "--quiet",
            "-am",
            "the patch: minor pieces at their worth",
        ],
    );
    let patch = git(&repo, &["rev-parse", "HEAD"]);
    (repo, base, patch)
}

/// A folder of links to `git` and `sh` alone: a PATH on which there is no C compiler.
fn path_without_cc(dir: &Path) -> PathBuf {
    let bin = dir.join("no-cc-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["git", "sh"] {
        let out = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .unwrap();
        let found = text(&out.stdout).trim().to_string();
        assert!(out.status.success() && !found.is_empty(), "no {tool}");
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    bin
}

/// A worker that knows only the URL, in a folder of its own (which holds only its cache);
/// `path`: its PATH.
fn worker(dir: &Path, url: &str, name: &str, path: Option<&Path>) -> Child {
    let own = dir.join(format!("worker-{name}"));
    std::fs::create_dir_all(&own).unwrap();
    let mut c = pg_common::worker(&own, url, name);
    if let Some(path) = path {
        c.env("PATH", path);
    }
    c.env_remove("CC").spawn().unwrap()
}

fn finished(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    said
}

/// The patch test's flags: `main` (the patch) against `base` of `repo`, `extra` added.
fn patch_test(repo: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = [
        "match",
        "--git",
        repo.to_str().unwrap(),
        "--source1",
        "main",
        "--source2",
        "base",
        "--build",
        BUILD,
        "--binary",
        "eng",
        "--book",
        book().to_str().unwrap(),
        "--depth",
        "2",
        "--seed",
        "57",
        "--progress",
        "0",
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(dir: &Path, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spsa(dir, &dir.join("cache-here"), &args).output().unwrap()
}

#[test]
fn workers_build_both_commits_of_a_patch_test_and_end_it_by_its_sprt() {
    let cluster = Cluster::shared();
    let db = cluster.database("patch_test");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (repo, base, patch) = patch_repo(d);
    let names = [
        format!("eng@{}", &patch[..8]),
        format!("eng@{}", &base[..8]),
    ];

    // Here: both commits built, then played, each side named by its commit.
    let pgn = d.join("local.pgn");
    let out = run(
        d,
        &patch_test(&repo, &["--pairs", "2", "--pgn", pgn.to_str().unwrap()]),
    );
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    assert!(
        said.contains(&format!(
            "match: {} (defaults) vs {} (defaults)",
            names[0], names[1]
        )),
        "{said}"
    );
    let pgn = std::fs::read_to_string(&pgn).unwrap();
    let mut players = match_common::tags(&pgn, "White");
    players.extend(match_common::tags(&pgn, "Black"));
    assert_eq!(players.len(), 8, "{pgn}");
    for name in &names {
        assert_eq!(players.iter().filter(|p| *p == name).count(), 4, "{pgn}");
    }
    let builds = d.join("cache-here/spsa/engines/source/builds");
    let mut built: Vec<String> = std::fs::read_dir(&builds)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy()[..40].to_string())
        .collect();
    built.sort();
    let mut want = vec![base.clone(), patch.clone()];
    want.sort();
    assert_eq!(built, want);

    // In the database: the creator builds both once for their signatures; each worker builds
    // them itself. The one without a compiler refuses the match, while it is active.
    let args = patch_test(
        &repo,
        &["--db", &db.url, "--sprt", "0,30", "--pairs", "400"],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let creator = spsa(d, &d.join("cache-creator"), &args).spawn().unwrap();
    let run_id = wait_for(&db, "SELECT coalesce(max(id), 0) FROM spsa.runs", |s| {
        !s.is_empty() && s != "0"
    });
    let url = db.worker_role("patch_w", "pwp");
    let no_cc = path_without_cc(d);
    let bad = worker(d, &url, "bad", Some(&no_cc));
    let refusal = format!(
        "patch_w/bad Engine1: no engine, REFUSED: Engine1: cannot build it from source: `{BUILD}` at commit {patch} failed (exit status: 127); its last lines:"
    );
    let status = || {
        let out = spsa(d, &d.join("cache-status"), &["status", "--db", &url])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let t = Instant::now();
    let shown = loop {
        let shown = status();
        if shown.contains(&refusal) {
            break shown;
        }
        assert!(t.elapsed().as_secs() < 90, "no refusal shown:\n{shown}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(shown.contains("  | sh: 1: cc: not found"), "{shown}");
    let started = Instant::now();
    let a = worker(d, &url, "a", None);
    let b = worker(d, &url, "b", None);
    let out = creator.wait_with_output().unwrap();
    let result = text(&out.stdout);
    assert!(out.status.success(), "{result}{}", text(&out.stderr));
    eprintln!(
        "two workers built both commits and decided the patch test in {:?}",
        started.elapsed()
    );
    // The patch is better: the test ends by accepting H1, and the workers played it all.
    assert!(result.contains("H1 accepted"), "{result}");
    assert!(
        result.contains(&format!("match {run_id} finished")),
        "{result}"
    );
    let (said_a, said_b, said_bad) = (finished(a), finished(b), finished(bad));
    for said in [&said_a, &said_b] {
        for (side, commit) in [("Engine1", &patch), ("Engine2", &base)] {
            assert!(
                said.contains(&format!(
                    "run {run_id}: {side} from {} at {commit} (",
                    repo.display()
                )),
                "{said}"
            );
        }
        assert_eq!(said.matches("built in").count(), 2, "{said}");
    }
    assert!(said_bad.contains("cc: not found"), "{said_bad}");
    let row = db.psql(&format!(
        "SELECT state, decision, applied >= 10, definition->'match'->'names' FROM spsa.runs WHERE id = {run_id}"
    ));
    assert_eq!(
        row,
        format!("finished|H1|t|[\"{}\", \"{}\"]", names[0], names[1])
    );
    let by = db.psql(&format!(
        "SELECT string_agg(DISTINCT worker, ' ' ORDER BY worker) FROM spsa.match_pairs WHERE run_id = {run_id}"
    ));
    assert_eq!(by, "patch_w/a patch_w/b");
    let shown = status();
    assert!(
        shown.contains(&format!("match {run_id} finished")) && shown.contains(&refusal),
        "{shown}"
    );
}

#[test]
fn patch_test_flags_that_are_missing_stray_or_in_conflict_are_named() {
    let cluster = Cluster::shared();
    let db = cluster.database("patch_flags");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (repo, _, patch) = patch_repo(d);
    let repo_text = repo.display().to_string();
    let without = |flag: &str| -> Vec<String> {
        let mut args = patch_test(&repo, &["--pairs", "1"]);
        let at = args.iter().position(|a| a == flag).unwrap();
        args.drain(at..at + 2);
        args
    };
    let with = |extra: &[&str]| patch_test(&repo, &[&["--pairs", "1"], extra].concat());
    let replaced = |flag: &str, value: &str| -> Vec<String> {
        let mut args = patch_test(&repo, &["--pairs", "1"]);
        let at = args.iter().position(|a| a == flag).unwrap();
        args[at + 1] = value.to_string();
        args
    };
    let cases: Vec<(Vec<String>, String)> =
        vec![
        (
            with(&["--engine1", sparring()]),
            "the argument '--source1 <REV>' cannot be used with '--engine1 <PATH>'".into(),
        ),
        (
            without("--build"),
            "--source1 main: give --build CMD too (engine 1 has no `source` table to take it from)"
                .into(),
        ),
        (
            without("--binary"),
            "--source1 main: give --binary PATH too".into(),
        ),
        (
            without("--git"),
            "--source1 main: give --git REPO too".into(),
        ),
        (
            [
                "match", "--engine1", sparring(), "--git", &repo_text, "--depth", "2",
            ]
            .map(String::from)
            .to_vec(),
            "--git: says how to build the engines of --source1 REV and --source2 REV".into(),
        ),
        (
            replaced("--source2", "no-such-rev"),
            format!("--source2: no commit `no-such-rev` in the repository {repo_text}"),
        ),
        (
            replaced("--binary", "../eng"),
            "--binary: `../eng` must be a path inside the repository's tree".into(),
        ),
        (
            replaced("--build", "exit 3"),
            format!("--build: `exit 3` at commit {patch} failed (exit status: 3)"),
        ),
    ];
    for (args, want) in cases {
        let mut args = args;
        args.extend(["--db", &db.url].map(String::from));
        let out = run(d, &args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&want), "want {want}\n{err}");
        assert_eq!(
            db.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'spsa'"),
            "0",
            "nothing in the database after {err}"
        );
    }

    // A config's `[engine1.source]` at the base commit: --source1 plays the patch instead,
    // built as the table says; engine 2 stays at the table's commit.
    std::fs::write(
        d.join("m.toml"),
        format!(
            "[games]\ndepth = 2\n[engine1.source]\ngit = \"repo\"\ncommit = \"base\"\nbuild = \"{BUILD}\"\nbinary = \"eng\"\n"
        ),
    )
    .unwrap();
    let base = git(&repo, &["rev-parse", "base"]);
    let config_match = |extra: &[&str]| {
        let mut args = vec![
            "match",
            "--config",
            "m.toml",
            "--pairs",
            "1",
            "--progress",
            "0",
        ];
        args.extend(extra);
        run(d, &args.into_iter().map(String::from).collect::<Vec<_>>())
    };
    let out = config_match(&["--source1", "main"]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    assert!(
        said.contains(&format!(
            "match: eng@{} (defaults) vs eng@{} (defaults)",
            &patch[..8],
            &base[..8]
        )),
        "{said}"
    );
    // A revision from the flag that fails names the flag; a key of the table, its line.
    let out = config_match(&["--source1", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--source1: no commit `nope` in the repository"),
        "{}",
        text(&out.stderr)
    );
    let out = config_match(&["--source1", "main", "--binary", "build/eng"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--binary: no binary `build/eng` in the tree of commit"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(
        d.join("m.toml"),
        std::fs::read_to_string(d.join("m.toml"))
            .unwrap()
            .replace("binary = \"eng\"", "binary = \"out/eng\""),
    )
    .unwrap();
    let out = config_match(&["--source1", "main"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "m.toml:7: key `engine1.source.binary`: no binary `out/eng` in the tree of commit"
        ),
        "{}",
        text(&out.stderr)
    );
}
