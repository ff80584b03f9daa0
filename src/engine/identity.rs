//! An engine's identity in a shared run: the SHA-256 of its file and its search signature. The
//! owner measures both for each engine the run names ([`measure_run_engines`]); a worker checks
//! what it is about to play against them ([`verify`]) and refuses the run when it differs
//! ([`EngineRefusal`]). Storing the bytes and fetching them into a worker's cache is the
//! database's (`db::engines`).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::EngineConfig;
use crate::engine::OptionValue;
use crate::engine::bench::{self, Signature};
use crate::engine::setup::engine_setup;
use crate::error::UserError;
use crate::vars::Variable;

/// The largest engine file a run may store (the whole file travels in one row).
pub const MAX_ARTIFACT_BYTES: u64 = 256 << 20;

/// What a run says of one side's engine: the file it stored and the signature it measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEngine {
    /// `Engine1` or `Engine2`.
    pub side: String,
    /// The executable's file name (what `--engine NAME=PATH` names).
    pub file: String,
    pub sha256: String,
    pub size: u64,
    pub signature: Signature,
    /// False when two measurements differed: workers then check the hash only.
    pub repeatable: bool,
    /// An engine built from its source: each worker builds this commit itself (its hash is
    /// then its own; the signature is the check), instead of fetching the owner's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::engine::build::Recipe>,
}

/// An engine the owner measured, with where its bytes are on the owner's machine.
pub struct Measured {
    pub engine: RunEngine,
    pub path: PathBuf,
}

/// Why an engine cannot be used for a run, as a worker records and logs it.
#[derive(Clone, Debug, thiserror::Error)]
pub enum EngineRefusal {
    #[error("{side}: {message}")]
    Artifact { side: String, message: String },
    #[error(
        "{side}: signature {here} here, the run's {wanted} (another program, or another build that searches differently)"
    )]
    Signature {
        side: String,
        here: Signature,
        wanted: Signature,
    },
    #[error(
        "{side}: {path} has SHA-256 {here}, the run's engine {wanted} (its signature is not repeatable, so only the same file can play)"
    )]
    Hash {
        side: String,
        path: String,
        here: String,
        wanted: String,
    },
}

/// The engine on this machine is not the run's (or cannot be had): the user's to fix. A
/// worker records it and goes on; it ends no command by itself.
impl crate::error::UserFacing for EngineRefusal {
    fn is_user_error(&self) -> bool {
        true
    }
}

impl EngineRefusal {
    /// The same refusal for the other side (engine 2 configured as engine 1 is checked once).
    pub fn for_side(&self, side: &str) -> EngineRefusal {
        let mut r = self.clone();
        match &mut r {
            EngineRefusal::Artifact { side: s, .. }
            | EngineRefusal::Signature { side: s, .. }
            | EngineRefusal::Hash { side: s, .. } => *s = side.to_string(),
        }
        r
    }
}

/// The SHA-256 of a file (hex) and its size, read in blocks.
pub fn sha256_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((hex(&hasher.finalize()), size))
}

pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a command runs from: a path as given, or a bare name found on PATH (as spawning it
/// would find it).
pub fn resolve(command: &Path) -> Option<PathBuf> {
    if command.components().count() > 1 || command.exists() {
        return command.exists().then(|| command.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|p| p.is_file())
}

/// The options an engine's signature is measured with: the run's fixed options, then every
/// tuned variable at its start (as the games send it), so workers measure what the run plays.
pub fn signature_options(engine: &EngineConfig, vars: &[Variable]) -> Vec<(String, OptionValue)> {
    engine
        .options
        .iter()
        .map(|(n, v)| (n.clone(), OptionValue::Text(v.clone())))
        .chain(
            vars.iter()
                .map(|v| (v.name.clone(), OptionValue::Number(v.start.round()))),
        )
        .collect()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The owner's side: hash each engine of the run (refusing one over [`MAX_ARTIFACT_BYTES`]) and
/// measure its signature (twice, to tell whether it repeats). Engine 2 configured as engine 1
/// is measured once. Runs before anything is stored.
pub async fn measure_run_engines(
    sides: [(&str, &EngineConfig); 2],
    vars: &[Variable],
) -> anyhow::Result<Vec<Measured>> {
    let mut out: Vec<Measured> = Vec::new();
    for (i, (side, engine)) in sides.iter().enumerate() {
        if i == 1 && *engine == sides[0].1 {
            if let Some(first) = out.first() {
                let mut e = first.engine.clone();
                e.side = side.to_string();
                out.push(Measured {
                    engine: e,
                    path: first.path.clone(),
                });
            }
            continue;
        }
        let path = resolve(&engine.command).ok_or_else(|| {
            UserError(format!(
                "{side} `{}`: no such file to store with the run",
                engine.command.display()
            ))
        })?;
        let size = std::fs::metadata(&path)
            .map_err(|e| UserError(format!("{side} {}: {e}", path.display())))?
            .len();
        if size > MAX_ARTIFACT_BYTES {
            return Err(UserError(format!(
                "{side} {}: {size} bytes, more than the {} MiB an engine stored with a run may have",
                path.display(),
                MAX_ARTIFACT_BYTES >> 20
            ))
            .into());
        }
        let (sha256, size) =
            sha256_file(&path).map_err(|e| UserError(format!("{side} {}: {e}", path.display())))?;
        let setup = engine_setup(side, engine);
        let options = signature_options(engine, vars);
        let started = std::time::Instant::now();
        let identity = bench::identify(&setup.spec, &options).await?;
        tracing::info!(
            "{side}: signature {} measured twice in {:.2} s",
            identity.signature,
            started.elapsed().as_secs_f64()
        );
        if engine.source.is_some() && !identity.repeatable {
            return Err(UserError(format!(
                "{side} {}: two measurements of its search signature differ (threads or randomness?); an engine built from source is built anew on every worker and checked by its signature alone, so its signature must repeat",
                path.display()
            ))
            .into());
        }
        if !identity.repeatable {
            eprintln!(
                "warning: {side} {}: two measurements of its search signature differ (threads or randomness?); workers will check its SHA-256 only, so each must run this very file",
                path.display()
            );
        }
        out.push(Measured {
            engine: RunEngine {
                side: side.to_string(),
                file: file_name(&path),
                sha256,
                size,
                signature: identity.signature,
                repeatable: identity.repeatable,
                source: engine
                    .source
                    .as_ref()
                    .map(crate::engine::build::Recipe::from_source),
            },
            path,
        });
    }
    Ok(out)
}

/// Check what this worker is about to play as `e`: its hash (for an engine whose signature does
/// not repeat, the only check) and its signature, measured here as the owner measured it.
/// Returns the signature measured.
pub async fn verify(
    e: &RunEngine,
    engine: &EngineConfig,
    vars: &[Variable],
) -> anyhow::Result<Result<Signature, EngineRefusal>> {
    if !e.repeatable {
        let (here, _) = sha256_file(&engine.command)?;
        if here != e.sha256 {
            return Ok(Err(EngineRefusal::Hash {
                side: e.side.clone(),
                path: engine.command.display().to_string(),
                here,
                wanted: e.sha256.clone(),
            }));
        }
        return Ok(Ok(e.signature.clone()));
    }
    let setup = engine_setup(&e.side, engine);
    let options = signature_options(engine, vars);
    let started = std::time::Instant::now();
    let here = bench::signature(&setup.spec, &options, e.signature.depth).await?;
    tracing::info!(
        "{}: signature {here} measured in {:.2} s",
        e.side,
        started.elapsed().as_secs_f64()
    );
    if here != e.signature {
        return Ok(Err(EngineRefusal::Signature {
            side: e.side.clone(),
            here,
            wanted: e.signature.clone(),
        }));
    }
    Ok(Ok(here))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_engine_over_the_cap_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge-engine");
        // Sparse: nothing is written, and nothing is hashed or started.
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_ARTIFACT_BYTES + 1).unwrap();
        let engine = EngineConfig {
            command: path.clone(),
            args: Vec::new(),
            workdir: None,
            options: Vec::new(),
            files: Vec::new(),
            source: None,
        };
        let err = measure_run_engines([("Engine1", &engine), ("Engine2", &engine)], &[])
            .await
            .err()
            .expect("refused");
        assert!(err.is::<UserError>());
        assert_eq!(
            err.to_string(),
            format!(
                "Engine1 {}: 268435457 bytes, more than the 256 MiB an engine stored with a run may have",
                path.display()
            )
        );
    }

    #[test]
    fn a_refusal_names_its_side_and_both_signatures() {
        let r = EngineRefusal::Signature {
            side: "Engine1".into(),
            here: Signature {
                depth: 5,
                nodes: vec![1, 2],
            },
            wanted: Signature {
                depth: 5,
                nodes: vec![1, 3],
            },
        };
        assert_eq!(
            r.for_side("Engine2").to_string(),
            "Engine2: signature depth 5: nodes 1/2 here, the run's depth 5: nodes 1/3 (another program, or another build that searches differently)"
        );
    }
}
