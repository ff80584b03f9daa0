//! Engines that travel with a shared run, as the database holds them. The owner stores each
//! engine executable the run names in `spsa.artifacts`, keyed by its SHA-256 (once per distinct
//! content), and the run's definition says which hash and which search signature each side must
//! have. A worker without `--engine` fetches the bytes into its cache, checks the hash before
//! every start, and every worker measures the signature of what it is about to play: a mismatch
//! refuses the run there. Measuring and checking an engine's identity (which starts it) is
//! `engine::identity`'s; this module only stores and serves the bytes.

use std::io::Write;
use std::path::{Path, PathBuf};

use tokio_postgres::Client;

use super::Db;
use crate::engine::identity::{EngineRefusal, Measured, RunEngine, sha256_bytes, sha256_file};
use crate::error::UserError;

/// The first 12 hex digits, as status and logs show a hash.
pub fn short(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

/// Store the engines' bytes the database does not hold yet (one row per distinct content).
pub async fn store_artifacts(db: &mut Db, engines: &[Measured]) -> anyhow::Result<()> {
    for m in engines {
        let sha = m.engine.sha256.clone();
        let held: bool = db
            .run("look up a stored engine", async |c: &Client| {
                Ok(c.query_one(
                    "SELECT EXISTS (SELECT FROM spsa.artifacts WHERE sha256 = $1)",
                    &[&sha],
                )
                .await?
                .get(0))
            })
            .await?;
        if held {
            continue;
        }
        let bytes = std::fs::read(&m.path)
            .map_err(|e| UserError(format!("{} {}: {e}", m.engine.side, m.path.display())))?;
        if sha256_bytes(&bytes) != sha {
            anyhow::bail!(
                "{} {} changed while the run was being created",
                m.engine.side,
                m.path.display()
            );
        }
        let size = bytes.len() as i64;
        db.run("store an engine", async |c: &Client| {
            c.execute(
                "INSERT INTO spsa.artifacts (sha256, bytes, size) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&sha, &bytes, &size],
            )
            .await
        })
        .await?;
    }
    Ok(())
}

/// The folder fetched engines are kept in: `$XDG_CACHE_HOME/spsa/engines`, else
/// `~/.cache/spsa/engines`.
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

/// The run's engine in this machine's cache, fetched from the database when it is not there
/// or its bytes no longer hash to what the run says. Written to a temporary file, made
/// executable, then renamed into place.
pub async fn fetch(db: &mut Db, root: &Path, e: &RunEngine) -> Result<PathBuf, EngineRefusal> {
    let refuse = |message: String| EngineRefusal::Artifact {
        side: e.side.clone(),
        message,
    };
    if e.sha256.len() != 64 || !e.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refuse(format!("`{}` is not a SHA-256", e.sha256)));
    }
    let dir = root.join(&e.sha256);
    let name = if e.file.is_empty() || e.file.contains('/') || e.file == "." || e.file == ".." {
        "engine".to_string()
    } else {
        e.file.clone()
    };
    let path = dir.join(name);
    let hashing = std::time::Instant::now();
    if let Ok((sha, _)) = sha256_file(&path) {
        if sha == e.sha256 {
            tracing::info!(
                "{} in the cache, its hash checked in {:.2} s",
                path.display(),
                hashing.elapsed().as_secs_f64()
            );
            return Ok(path);
        }
        tracing::warn!(
            "{}: cached bytes hash to {}, not {}; fetching again",
            path.display(),
            sha,
            e.sha256
        );
    }
    let sha = e.sha256.clone();
    let started = std::time::Instant::now();
    let bytes: Option<Vec<u8>> = db
        .run("fetch an engine", async |c: &Client| {
            Ok(c.query_one("SELECT spsa.artifact($1)", &[&sha])
                .await?
                .get(0))
        })
        .await
        .map_err(|err| refuse(format!("cannot fetch engine {}: {err}", short(&sha))))?;
    let bytes = bytes.ok_or_else(|| refuse(format!("the database holds no engine {sha}")))?;
    let got = sha256_bytes(&bytes);
    if got != e.sha256 {
        return Err(refuse(format!(
            "the stored engine {} was altered: its bytes hash to {got}",
            e.sha256
        )));
    }
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
        tmp.write_all(&bytes)?;
        tmp.as_file().sync_all()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o755))?;
        }
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    };
    // The temporary file is removed on any error (a full disk included): nothing partial is
    // ever found under the engine's name.
    write().map_err(|err| refuse(format!("cannot cache it as {}: {err}", path.display())))?;
    tracing::info!(
        "fetched {} ({} bytes) into {} in {:.2} s",
        e.file,
        bytes.len(),
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_hashes_as_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e");
        std::fs::write(&path, b"abc").unwrap();
        let (sha, size) = sha256_file(&path).unwrap();
        assert_eq!(
            sha,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(size, 3);
        assert_eq!(sha256_bytes(b"abc"), sha);
        assert_eq!(short(&sha), "ba7816bf8f01");
    }

    #[test]
    fn an_unwritable_cache_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, b"").unwrap();
        let err = check_cache(&file.join("engines")).unwrap_err().to_string();
        assert!(err.contains("plain-file/engines"), "{err}");
    }
}
