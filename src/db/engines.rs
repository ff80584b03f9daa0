//! Engines that travel with a shared run, as the database holds them. The owner stores each
//! engine executable the run names in `spsa.artifacts`, keyed by its SHA-256 (once per distinct
//! content), and the run's definition says which hash and which search signature each side must
//! have. A worker without `--engine` fetches the bytes into its cache, checks the hash before
//! every start, and every worker measures the signature of what it is about to play: a mismatch
//! refuses the run there. Measuring and checking an engine's identity (which starts it) is
//! `engine::identity`'s, and building one from source and the cache's folder are
//! `engine::build`'s; this module only stores and serves the bytes.

use std::io::Write;
use std::path::{Path, PathBuf};

use tokio_postgres::Client;

use super::{Db, RunFile};
use crate::config::GamesConfig;
use crate::engine::identity::{
    EngineRefusal, MAX_ARTIFACT_BYTES, Measured, RunEngine, sha256_bytes, sha256_file,
};
use crate::error::UserError;

/// The first 12 hex digits, as status and logs show a hash.
pub fn short(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

/// Store the engines' bytes the database does not hold yet (one row per distinct content).
pub async fn store_artifacts(db: &mut Db, engines: &[Measured]) -> anyhow::Result<()> {
    let items: Vec<(String, &Path, &str)> = engines
        .iter()
        .map(|m| {
            (
                m.engine.side.clone(),
                m.path.as_path(),
                m.engine.sha256.as_str(),
            )
        })
        .collect();
    store(db, &items).await
}

/// Store the files beside the engines (see [`run_files`]) as engines are stored.
pub async fn store_files(db: &mut Db, files: &[(RunFile, PathBuf)]) -> anyhow::Result<()> {
    let items: Vec<(String, &Path, &str)> = files
        .iter()
        .map(|(f, path)| (f.label(), path.as_path(), f.sha256.as_str()))
        .collect();
    store(db, &items).await
}

/// Store each (label for messages, path, SHA-256) the database does not hold yet.
async fn store(db: &mut Db, items: &[(String, &Path, &str)]) -> anyhow::Result<()> {
    for (label, path, sha) in items {
        let sha = sha.to_string();
        let held: bool = db
            .run("look up a stored engine", async |c: &Client| {
                Ok(c.query_one("SELECT spsa.has_artifact($1)", &[&sha])
                    .await?
                    .get(0))
            })
            .await?;
        if held {
            continue;
        }
        let bytes = std::fs::read(path)
            .map_err(|e| UserError(format!("{label} {}: {e}", path.display())))?;
        if sha256_bytes(&bytes) != sha {
            anyhow::bail!(
                "{label} {} changed while the run was being created",
                path.display()
            );
        }
        // `spsa.store_artifact` checks the hash, and the caller (whoever creates runs).
        db.run("store an engine", async |c: &Client| {
            c.execute("SELECT spsa.store_artifact($1, $2)", &[&sha, &bytes])
                .await
        })
        .await?;
    }
    Ok(())
}

/// The files a config's engines read through an option (`files = { EvalFile = "nn.bin" }`),
/// hashed, with their paths here; one over the cap is refused before anything is stored.
/// Engine 2 playing engine 1's config reads the same files.
pub fn run_files(games: &GamesConfig) -> Result<Vec<(RunFile, PathBuf)>, UserError> {
    let mut out = Vec::new();
    for (side, engine) in [("Engine1", &games.engine1), ("Engine2", &games.engine2)] {
        for option in &engine.files {
            let Some((_, value)) = engine.options.iter().find(|(o, _)| o == option) else {
                continue;
            };
            let path = PathBuf::from(value);
            let fail = |e: std::io::Error| {
                UserError(format!("{side} file {option} {}: {e}", path.display()))
            };
            let size = std::fs::metadata(&path).map_err(fail)?.len();
            if size > MAX_ARTIFACT_BYTES {
                return Err(UserError(format!(
                    "{side} file {option} {}: {size} bytes, more than the {} MiB a file stored with a run may have",
                    path.display(),
                    MAX_ARTIFACT_BYTES >> 20
                )));
            }
            let (sha256, size) = sha256_file(&path).map_err(fail)?;
            let file = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let stored = RunFile {
                side: side.into(),
                option: option.clone(),
                file,
                sha256,
                size,
            };
            out.push((stored, path));
        }
    }
    Ok(out)
}

/// The run's engine in this machine's cache, fetched from the database when it is not there
/// or its bytes no longer hash to what the run says. Written to a temporary file, made
/// executable, then renamed into place.
pub async fn fetch(db: &mut Db, root: &Path, e: &RunEngine) -> Result<PathBuf, EngineRefusal> {
    let stored = Stored {
        side: &e.side,
        what: "engine",
        sha256: &e.sha256,
        file: &e.file,
        executable: true,
    };
    fetch_stored(db, root, &stored).await
}

/// A file stored with a run (an engine, or a file beside it), as a worker fetches it.
pub struct Stored<'a> {
    /// Engine1 or Engine2: the side a refusal names.
    pub side: &'a str,
    /// What the file is, for messages: `engine`, `file EvalFile`.
    pub what: &'a str,
    pub sha256: &'a str,
    /// Its file name on the owner's machine, kept in the cache (an engine may read its name).
    pub file: &'a str,
    pub executable: bool,
}

/// A stored file in this machine's cache (`ROOT/SHA256/FILE`), fetched from the database when
/// it is not there or its bytes no longer hash to what the run says. Written to a temporary
/// file then renamed into place, so a kill never leaves half a file under its name.
pub async fn fetch_stored(
    db: &mut Db,
    root: &Path,
    s: &Stored<'_>,
) -> Result<PathBuf, EngineRefusal> {
    let refuse = |message: String| EngineRefusal::Artifact {
        side: s.side.to_string(),
        message,
    };
    let what = s.what;
    if s.sha256.len() != 64 || !s.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refuse(format!("`{}` is not a SHA-256", s.sha256)));
    }
    let dir = root.join(s.sha256);
    let name = if s.file.is_empty() || s.file.contains('/') || s.file == "." || s.file == ".." {
        "engine".to_string()
    } else {
        s.file.to_string()
    };
    let path = dir.join(name);
    let hashing = std::time::Instant::now();
    if let Ok((sha, _)) = sha256_file(&path) {
        if sha == s.sha256 {
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
            s.sha256
        );
    }
    let sha = s.sha256.to_string();
    let started = std::time::Instant::now();
    let bytes: Option<Vec<u8>> = db
        .run("fetch a stored file", async |c: &Client| {
            Ok(c.query_one("SELECT spsa.artifact($1)", &[&sha])
                .await?
                .get(0))
        })
        .await
        .map_err(|err| refuse(format!("cannot fetch {what} {}: {err}", short(&sha))))?;
    let bytes = bytes.ok_or_else(|| refuse(format!("the database holds no {what} {sha}")))?;
    let got = sha256_bytes(&bytes);
    if got != s.sha256 {
        return Err(refuse(format!(
            "the stored {what} {} was altered: its bytes hash to {got}",
            s.sha256
        )));
    }
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
        tmp.write_all(&bytes)?;
        tmp.as_file().sync_all()?;
        if s.executable {
            crate::platform::make_executable(tmp.as_file())?;
        }
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    };
    // The temporary file is removed on any error (a full disk included): nothing partial is
    // ever found under the file's name.
    write().map_err(|err| refuse(format!("cannot cache it as {}: {err}", path.display())))?;
    tracing::info!(
        "fetched {what} {} ({} bytes) into {} in {:.2} s",
        s.file,
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
}
