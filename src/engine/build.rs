//! An engine built from its source, as fishtest and OpenBench build theirs: a commit of a git
//! repository, checked out and built with a shell command on this machine, by this machine's
//! compiler. The owner of a shared run builds it once to resolve the commit and measure the
//! run's search signature ([`build_games`]); every worker builds the same commit from the same
//! repository into its own cache ([`obtain`]) and plays only when its build searches as the
//! owner's did (`engine::identity::verify`). Storing the recipe with the run is the database's.
//!
//! The cache (`ROOT` is `~/.cache/spsa/engines/source` unless told otherwise):
//! `ROOT/repos/HASH.git`, a bare mirror of each repository (HASH: of its URL), fetched when a
//! wanted commit is not in it yet; `ROOT/builds/COMMIT-HASH/` (HASH: of the build command and
//! binary path) with the checked-out `tree/`, the build's output `build.log` and a `built`
//! marker written last. A build is done once per commit: a later start finds the marker and the
//! binary and builds nothing; a build that failed or was cut short has no marker and is redone.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::config::{Config, EngineSource, GamesConfig};
use crate::error::UserError;

/// How many of a failed build's last lines a refusal carries, and at most how many bytes.
pub const TAIL_LINES: usize = 20;
pub const TAIL_BYTES: usize = 1200;

/// How long a fetch of the repository may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What a shared run records of an engine built from source: everything a worker needs to
/// build the same program, the commit resolved to its full id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recipe {
    pub git: String,
    /// The full 40-hex commit id.
    pub commit: String,
    pub build: String,
    pub binary: String,
    pub timeout_seconds: f64,
}

impl Recipe {
    pub fn from_source(s: &EngineSource) -> Recipe {
        Recipe {
            git: s.git.clone(),
            commit: s.commit.clone(),
            build: s.build.clone(),
            binary: s.binary.clone(),
            timeout_seconds: s.timeout.as_secs_f64(),
        }
    }
}

/// Why an engine could not be had from its source; each names the source's key it is about.
#[derive(Clone, Debug, thiserror::Error)]
pub enum BuildError {
    #[error("cannot read the repository {git}: {message}")]
    Repository { git: String, message: String },
    #[error("no commit `{rev}` in the repository {git}")]
    Commit { git: String, rev: String },
    #[error("`{command}` at commit {commit} failed ({status}); its last lines:\n{tail}")]
    Build {
        command: String,
        commit: String,
        status: String,
        tail: String,
    },
    #[error(
        "no binary `{binary}` in the tree of commit {commit} after `{command}` (it built, but not there)"
    )]
    Binary {
        binary: String,
        commit: String,
        command: String,
    },
    #[error("the engine source cache {path}: {message}")]
    Cache { path: String, message: String },
}

/// A source that cannot be fetched or built is the user's to fix (on the owner's machine, in
/// the config; on a worker's, its compiler or network), not a fault of `spsa`.
impl crate::error::UserFacing for BuildError {
    fn is_user_error(&self) -> bool {
        true
    }
}

impl BuildError {
    /// The key of `source` the problem is about.
    pub fn key(&self) -> &'static str {
        match self {
            BuildError::Repository { .. } | BuildError::Cache { .. } => "git",
            BuildError::Commit { .. } => "commit",
            BuildError::Build { .. } => "build",
            BuildError::Binary { .. } => "binary",
        }
    }
}

/// An engine built (or found built) in the cache.
#[derive(Clone, Debug)]
pub struct Built {
    /// The recipe with its commit resolved.
    pub recipe: Recipe,
    pub binary: PathBuf,
    /// Time spent fetching the repository (None: the commit was in the cache already).
    pub fetched: Option<Duration>,
    /// Time spent checking out and building (None: the build was in the cache).
    pub built: Option<Duration>,
}

impl Built {
    /// What it cost, for logs: `fetched in 0.1 s, built in 2.3 s`, or `reused`.
    pub fn cost(&self) -> String {
        let fetch = match self.fetched {
            Some(d) => format!("fetched in {:.2} s", d.as_secs_f64()),
            None => "commit in the cache".into(),
        };
        let build = match self.built {
            Some(d) => format!("built in {:.2} s", d.as_secs_f64()),
            None => "build reused".into(),
        };
        format!("{fetch}, {build}")
    }
}

/// 16 hex digits of the SHA-256 of `text`: a cache folder's name.
fn hash(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn is_full_commit(rev: &str) -> bool {
    rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The last [`TAIL_LINES`] lines of `text`, at most [`TAIL_BYTES`] bytes of them, each on a
/// line of its own after `  | ` (so they stand apart in `spsa status` and a log).
pub fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if lines.is_empty() {
        return "  | (no output)".into();
    }
    let from = lines.len().saturating_sub(TAIL_LINES);
    let mut joined = lines[from..].join("\n");
    if joined.len() > TAIL_BYTES {
        let mut cut = joined.len() - TAIL_BYTES;
        while !joined.is_char_boundary(cut) {
            cut += 1;
        }
        joined = format!("…{}", &joined[cut..]);
    }
    joined
        .lines()
        .map(|l| format!("  | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A git command with no prompt and no inherited repository, to run in `dir`.
fn git(dir: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null());
    cmd
}

/// Run `cmd` in a process group of its own, its output (stdout and stderr, interleaved) to
/// `log`; killed with its whole group after `timeout`. Ok(None): it succeeded; Ok(Some(why)):
/// it failed or was killed.
async fn run_logged(
    mut cmd: tokio::process::Command,
    log: &Path,
    timeout: Duration,
) -> std::io::Result<Option<String>> {
    let out = std::fs::File::create(log)?;
    cmd.stdout(out.try_clone()?)
        .stderr(out)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    crate::platform::own_process_group(&mut cmd);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => {
            let status = status?;
            Ok((!status.success()).then(|| status.to_string()))
        }
        Err(_) => {
            if let Some(pid) = pid {
                // The whole group: `sh -c make` leaves compilers behind otherwise.
                crate::platform::kill_group(pid);
            }
            let _ = child.wait().await;
            Ok(Some(format!(
                "killed after its time limit of {} s",
                timeout.as_secs_f64()
            )))
        }
    }
}

/// Run a git command whose output only matters when it fails: Err(the last lines).
async fn git_quiet(cmd: tokio::process::Command, log: &Path) -> Result<(), String> {
    match run_logged(cmd, log, FETCH_TIMEOUT).await {
        Ok(None) => Ok(()),
        Ok(Some(status)) => {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            Err(format!("git {status}: {}", tail(&text)))
        }
        Err(e) => Err(format!("cannot run git: {e}")),
    }
}

/// The full id of `rev` in the mirror, if it names a commit there.
async fn rev_parse(mirror: &Path, rev: &str) -> Option<String> {
    let out = git(mirror)
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"))
        .stderr(Stdio::null())
        .output()
        .await
        .ok()?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && is_full_commit(&id)).then_some(id)
}

/// The folder of this machine's engine builds: `ROOT/repos` and `ROOT/builds`.
fn cache_dirs(root: &Path) -> Result<(PathBuf, PathBuf), BuildError> {
    let repos = root.join("repos");
    let builds = root.join("builds");
    for dir in [&repos, &builds] {
        std::fs::create_dir_all(dir).map_err(|e| BuildError::Cache {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
    }
    Ok((repos, builds))
}

/// Make sure `rev` is in the mirror of `git` (fetching the repository's branches and tags when
/// it is not, and then the commit itself for one no branch holds) and resolve it. Returns the
/// full commit id and the time spent fetching (None: no fetch was needed).
async fn resolve_rev(
    repos: &Path,
    git_url: &str,
    rev: &str,
) -> Result<(String, Option<Duration>), BuildError> {
    let mirror = repos.join(format!("{}.git", hash(git_url)));
    let log = repos.join(format!("{}.log", hash(git_url)));
    let repo_error = |message: String| BuildError::Repository {
        git: git_url.to_string(),
        message,
    };
    // One fetch into a mirror at a time (workers on one machine may share the cache).
    let _lock = lock(&repos.join(format!("{}.lock", hash(git_url))))
        .await
        .map_err(|e| repo_error(format!("cannot lock its mirror: {e}")))?;
    if !mirror.join("HEAD").exists() {
        let mut init = git(repos);
        init.args(["init", "--quiet", "--bare"]).arg(&mirror);
        git_quiet(init, &log).await.map_err(repo_error)?;
    }
    if is_full_commit(rev)
        && let Some(id) = rev_parse(&mirror, rev).await
    {
        return Ok((id, None));
    }
    let started = Instant::now();
    let mut fetch = git(&mirror);
    fetch
        .args(["fetch", "--quiet", "--force", "--prune", "--end-of-options"])
        .arg(git_url)
        .args(["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]);
    git_quiet(fetch, &log).await.map_err(repo_error)?;
    if is_full_commit(rev) && rev_parse(&mirror, rev).await.is_none() {
        // A commit no branch or tag holds: ask for it by id (servers that allow it do).
        let mut one = git(&mirror);
        one.args(["fetch", "--quiet", "--end-of-options"])
            .arg(git_url)
            .arg(rev);
        let _ = git_quiet(one, &log).await;
    }
    let fetched = started.elapsed();
    match rev_parse(&mirror, rev).await {
        Some(id) => Ok((id, Some(fetched))),
        None => Err(BuildError::Commit {
            git: git_url.to_string(),
            rev: rev.to_string(),
        }),
    }
}

/// Hold `path` locked while a build runs (another process building the same commit waits).
async fn lock(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// The engine of `recipe` (whose `commit` may be any revision) built in the cache under `root`:
/// the commit fetched into the repository's mirror when it is not there, checked out and built
/// once; later calls find the build and only check that its binary is there.
pub async fn obtain(root: &Path, recipe: &Recipe) -> Result<Built, BuildError> {
    let (repos, builds) = cache_dirs(root)?;
    let (commit, fetched) = resolve_rev(&repos, &recipe.git, &recipe.commit).await?;
    let recipe = Recipe {
        commit: commit.clone(),
        ..recipe.clone()
    };
    let dir = builds.join(format!(
        "{commit}-{}",
        hash(&format!("{}\0{}", recipe.build, recipe.binary))
    ));
    let cache_error = |e: std::io::Error| BuildError::Cache {
        path: dir.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(cache_error)?;
    let _lock = lock(&dir.join("lock")).await.map_err(cache_error)?;
    let tree = dir.join("tree");
    let binary = tree.join(&recipe.binary);
    let marker = dir.join("built");
    if marker.is_file() && binary.is_file() {
        return Ok(Built {
            recipe,
            binary,
            fetched,
            built: None,
        });
    }
    let started = Instant::now();
    let _ = std::fs::remove_file(&marker);
    if tree.exists() {
        std::fs::remove_dir_all(&tree).map_err(cache_error)?;
    }
    let mirror = repos.join(format!("{}.git", hash(&recipe.git)));
    let log = dir.join("build.log");
    let mut clone = git(&dir);
    clone
        .args(["clone", "--quiet", "--no-checkout", "--end-of-options"])
        .arg(&mirror)
        .arg(&tree);
    let mut checkout = git(&tree);
    checkout.args([
        "-c",
        "advice.detachedHead=false",
        "checkout",
        "--quiet",
        "--detach",
        &commit,
    ]);
    let checked_out = match git_quiet(clone, &log).await {
        Ok(()) => git_quiet(checkout, &log).await,
        Err(e) => Err(e),
    };
    checked_out.map_err(|message| BuildError::Repository {
        git: recipe.git.clone(),
        message: format!("cannot check out {commit}: {message}"),
    })?;
    let mut build = tokio::process::Command::new("sh");
    build.arg("-c").arg(&recipe.build).current_dir(&tree);
    let timeout = Duration::from_secs_f64(recipe.timeout_seconds.max(1.0));
    let failed = run_logged(build, &log, timeout)
        .await
        .map_err(|e| BuildError::Build {
            command: recipe.build.clone(),
            commit: commit.clone(),
            status: format!("cannot start sh: {e}"),
            tail: String::new(),
        })?;
    if let Some(status) = failed {
        return Err(BuildError::Build {
            command: recipe.build.clone(),
            commit,
            status,
            tail: tail(&std::fs::read_to_string(&log).unwrap_or_default()),
        });
    }
    if !binary.is_file() {
        return Err(BuildError::Binary {
            binary: recipe.binary.clone(),
            commit,
            command: recipe.build.clone(),
        });
    }
    let built = started.elapsed();
    let record = serde_json::to_string_pretty(&recipe).unwrap_or_default();
    std::fs::write(&marker, record).map_err(cache_error)?;
    Ok(Built {
        recipe,
        binary,
        fetched,
        built: Some(built),
    })
}

/// The folder this machine keeps engines in: `$XDG_CACHE_HOME/spsa/engines`, else
/// `~/.cache/spsa/engines`; engines built from source under `source/` ([`build_games`]), a
/// shared run's engines fetched by their hash beside it (`db::engines::fetch`).
pub fn cache_root() -> Result<PathBuf, UserError> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or_else(|| {
            UserError("neither XDG_CACHE_HOME nor HOME is set: no cache for engines".into())
        })?;
    Ok(base.join("spsa").join("engines"))
}

/// Check that engines can be cached under `root` (create it, write and remove a file there).
pub fn check_cache(root: &Path) -> Result<(), UserError> {
    let fail = |e: std::io::Error| {
        UserError(format!(
            "engine cache {}: {e}; set XDG_CACHE_HOME to a writable folder, or pass --engine NAME=PATH for every engine",
            root.display()
        ))
    };
    std::fs::create_dir_all(root).map_err(fail)?;
    tempfile::NamedTempFile::new_in(root).map_err(fail)?;
    Ok(())
}

/// Build the engines the config names by their source (`source = { git, commit, … }`) in this
/// machine's cache, before anything is created: a commit, build or binary that fails is the
/// config's error at its line. A simulated run builds nothing.
pub async fn build_sources(config: &mut Config) -> anyhow::Result<()> {
    let path = config.path.clone();
    match config.games.as_mut().filter(|_| !config.simulate) {
        Some(games) => {
            build_games(games, |s, e| {
                anyhow::Error::from(s.error(&path, e.key(), e.to_string()))
            })
            .await
        }
        None => Ok(()),
    }
}

/// Build the engines of `games` named by their source (a config's `source` tables, or `spsa
/// match --source1/--source2`), in this machine's cache ([`cache_root`]`/source`), before
/// anything else is done: each side's commit is resolved to its full id and its command set to
/// the built binary. A repository that cannot be read, an unknown commit, a build that fails or
/// a binary that is not there is `fail`'s error for that source (at the config's line of the
/// key it is about, or naming the flag that gave it). Engine 2 configured as engine 1 is built
/// once.
pub async fn build_games(
    games: &mut GamesConfig,
    fail: impl Fn(&EngineSource, BuildError) -> anyhow::Error,
) -> anyhow::Result<()> {
    if games.engine1.source.is_none() && games.engine2.source.is_none() {
        return Ok(());
    }
    let root = cache_root()?.join("source");
    check_cache(&root)?;
    let same = games.engine1 == games.engine2;
    let mut first: Option<(PathBuf, String)> = None;
    for engine in [&mut games.engine1, &mut games.engine2] {
        let Some(source) = engine.source.as_mut() else {
            continue;
        };
        if let Some((binary, commit)) = first.as_ref().filter(|_| same) {
            engine.command = binary.clone();
            source.commit = commit.clone();
            continue;
        }
        let built = obtain(&root, &Recipe::from_source(source))
            .await
            .map_err(|e| fail(source, e))?;
        eprintln!(
            "{}: {} at {} ({})",
            source.table,
            source.git,
            built.recipe.commit,
            built.cost()
        );
        source.commit = built.recipe.commit.clone();
        engine.command = built.binary.clone();
        engine.workdir = None;
        first = Some((built.binary, built.recipe.commit));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_keeps_the_last_lines_within_its_bytes() {
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let t = tail(&text);
        assert!(t.starts_with("  | line 11\n  | line 12\n"), "{t}");
        assert!(t.ends_with("  | line 30"), "{t}");
        assert_eq!(t.lines().count(), TAIL_LINES);
        let long = "é".repeat(3000);
        let t = tail(&long);
        assert!(t.len() <= TAIL_BYTES + "  | …".len(), "{}", t.len());
        assert_eq!(tail(""), "  | (no output)");
    }

    #[tokio::test]
    async fn a_build_over_its_time_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        let pid_file = dir.path().join("child.pid");
        let mut cmd = tokio::process::Command::new("sh");
        // A child of the shell that would outlive a kill of the shell alone.
        cmd.arg("-c")
            .arg("echo started; sleep 30 & echo $! > child.pid; wait")
            .current_dir(dir.path());
        let started = Instant::now();
        let failed = run_logged(cmd, &log, Duration::from_millis(500))
            .await
            .unwrap();
        assert_eq!(
            failed.as_deref(),
            Some("killed after its time limit of 0.5 s")
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "started\n");
        let child: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The sleep was killed with its group (reaped by init, or a zombie at most).
        std::thread::sleep(Duration::from_millis(200));
        assert!(crate::platform::process_ended(child), "{child} runs on");
    }

    #[test]
    fn an_unwritable_cache_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, b"").unwrap();
        let err = check_cache(&file.join("engines")).unwrap_err().to_string();
        assert!(err.contains("plain-file/engines"), "{err}");
    }

    #[test]
    fn only_forty_hex_digits_are_a_full_commit() {
        assert!(is_full_commit(&"a".repeat(40)));
        assert!(!is_full_commit("main"));
        assert!(!is_full_commit(&"g".repeat(40)));
    }
}
