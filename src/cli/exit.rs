//! The exit policy, in one place: which errors are the user's to fix (exit 2), which are not
//! (exit 1), and that a reader who stopped reading (`spsa report LOG | head -1`) is a quiet end
//! (exit 0). Every error type of the crate says beside its definition whether it is the user's
//! ([`UserFacing`]); this file, on the top floor, names each type once so a chain of
//! `&dyn Error` can be asked. Stable Rust cannot ask a `&dyn Error` for a trait it may
//! implement, so [`KINDS`] names each type (a name, no decision); a test fails for any error
//! type defined in `src/` that is not named there.

use std::error::Error;
use std::process::ExitCode;

use crate::error::{UserError, UserFacing};

/// One error type the exit policy can recognise in a chain.
struct Kind {
    /// For the test that every error type is named here.
    #[cfg_attr(not(test), allow(dead_code))]
    name: fn() -> &'static str,
    /// `Some(decision)` when the error is of this type.
    probe: fn(&(dyn Error + 'static)) -> Option<bool>,
}

impl Kind {
    const fn of<T: UserFacing + Error + 'static>() -> Kind {
        Kind {
            name: std::any::type_name::<T>,
            probe: |e| e.downcast_ref::<T>().map(T::is_user_error),
        }
    }
}

/// Every error type of the crate (see the module's docs). The decisions are in each type's
/// `impl UserFacing`, not here.
const KINDS: &[Kind] = &[
    Kind::of::<UserError>(),
    Kind::of::<crate::output::PipeClosed>(),
    Kind::of::<crate::spsa::driver::ApplyError>(),
    Kind::of::<crate::config::ConfigError>(),
    Kind::of::<crate::vars::VarsError>(),
    Kind::of::<crate::engine::EngineError>(),
    Kind::of::<crate::engine::OptionError>(),
    Kind::of::<crate::engine::EngineFault>(),
    Kind::of::<crate::report::ReportError>(),
    Kind::of::<crate::game::BookError>(),
    Kind::of::<crate::game::TablebaseError>(),
    Kind::of::<crate::coefficients::objective::MappingError>(),
    Kind::of::<crate::coefficients::CoefficientError>(),
    Kind::of::<crate::engine::identity::EngineRefusal>(),
    Kind::of::<crate::engine::build::BuildError>(),
    Kind::of::<crate::db::DbError>(),
    Kind::of::<crate::positions::PositionsError>(),
];

/// Whether one link of a chain is the user's to fix (false for types outside the crate).
pub fn is_user_error(e: &(dyn Error + 'static)) -> bool {
    KINDS.iter().find_map(|k| (k.probe)(e)).unwrap_or(false)
}

/// Exit status for an error: 0 when the reader of our results stopped reading, 2 when any link
/// of its chain is the user's to fix, else 1.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if crate::output::is_pipe_closed(err) {
        0
    } else if err.chain().any(is_user_error) {
        2
    } else {
        1
    }
}

/// How a command ended, as the process's exit status: its error, if any, printed once on
/// stderr (a closed pipe ends quietly).
pub fn status(done: anyhow::Result<()>) -> ExitCode {
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = exit_code(&e);
            if code != 0 {
                eprintln!("spsa: {e:#}");
            }
            ExitCode::from(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineError, EngineFault, OptionError};

    fn option_error() -> OptionError {
        OptionError::Unknown {
            engine: "sparring".into(),
            option: "Knight".into(),
            available: "KnightValue".into(),
        }
    }

    #[test]
    fn a_closed_pipe_anywhere_in_the_chain_is_a_quiet_end() {
        let e = anyhow::Error::new(crate::output::PipeClosed).context("printing the table");
        assert_eq!(exit_code(&e), 0);
        assert_eq!(status(Err(e)), ExitCode::SUCCESS);
        assert_eq!(status(Ok(())), ExitCode::SUCCESS);
        assert_eq!(
            status(Err(crate::error::user_error("bad"))),
            ExitCode::from(2)
        );
    }

    #[test]
    fn a_user_error_anywhere_in_the_chain_exits_2() {
        let e = anyhow::Error::new(UserError("--pairs must be at least 1".into()));
        assert_eq!(exit_code(&e), 2);
        let e = e.context("planning the match").context("spsa match");
        assert_eq!(exit_code(&e), 2);
    }

    #[test]
    fn a_transparent_wrapper_around_a_user_error_exits_2() {
        // `#[error(transparent)]` hides the wrapped error from the chain: the wrapper answers
        // for it.
        let e = anyhow::Error::new(EngineError::Option(option_error()));
        assert!(e.chain().all(|c| !c.is::<OptionError>()));
        assert_eq!(exit_code(&e), 2);
        let e = anyhow::Error::new(EngineError::Fault(EngineFault::Startup(
            "cannot start engine `x` (/nowhere/x): No such file or directory".into(),
        )))
        .context("starting the arena");
        assert_eq!(exit_code(&e), 2);
    }

    #[test]
    fn engine_faults_and_unmarked_errors_exit_1() {
        let e = anyhow::Error::new(EngineError::Fault(EngineFault::Disconnected(
            "crashed".into(),
        )));
        assert_eq!(exit_code(&e), 1);
        let e = anyhow::anyhow!("every game of the last 5 pairs ended in an engine fault");
        assert_eq!(exit_code(&e), 1);
        let io = std::io::Error::other("disk on fire");
        assert_eq!(exit_code(&anyhow::Error::new(io).context("writing")), 1);
        let e = anyhow::Error::new(crate::spsa::driver::ApplyError::AlreadyApplied(3));
        assert_eq!(exit_code(&e), 1);
    }

    #[test]
    fn database_errors_are_the_users_only_for_the_url_and_the_first_connection() {
        use crate::db::DbError;
        let user = DbError::NotReached {
            url: "postgres://nowhere".into(),
            reason: "refused".into(),
        };
        assert_eq!(exit_code(&user.into()), 2);
        let lost = DbError::Unreachable {
            url: "postgres://nowhere".into(),
            seconds: 60.0,
            last: "refused".into(),
        };
        assert_eq!(exit_code(&lost.into()), 1);
    }

    /// Every error type defined in `src/` is named in [`KINDS`], so its own decision is read.
    #[test]
    fn every_error_type_of_the_crate_is_known_to_the_exit_policy() {
        let known: Vec<&str> = KINDS
            .iter()
            .map(|k| (k.name)().rsplit("::").next().unwrap_or_default())
            .collect();
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut missing = Vec::new();
        let mut found = 0;
        for (path, name) in error_types(&src) {
            found += 1;
            if !known.contains(&name.as_str()) {
                missing.push(format!("{}: {name}", path.display()));
            }
        }
        assert!(found >= KINDS.len(), "the scan found only {found} types");
        assert!(
            missing.is_empty(),
            "error types the exit policy does not know: implement `UserFacing` beside each and \
             name it in `error::KINDS`:\n{}",
            missing.join("\n")
        );
    }

    /// (file, type name) of every `thiserror::Error` derive and `impl ... Error for` in `dir`.
    fn error_types(dir: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
        let mut out = Vec::new();
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for entry in entries {
            let path = entry.path();
            if path.is_dir() {
                out.extend(error_types(&path));
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            for (i, line) in lines.iter().enumerate() {
                if line.starts_with("#[derive(") && line.contains("thiserror::Error") {
                    let item = lines[i + 1..]
                        .iter()
                        .find(|l| !l.starts_with("#[") && !l.starts_with("//"))
                        .unwrap();
                    let name = item
                        .split_whitespace()
                        .skip_while(|w| *w != "struct" && *w != "enum")
                        .nth(1)
                        .unwrap_or_default();
                    let name = name.split(['(', '<', '{', ';']).next().unwrap_or_default();
                    out.push((path.clone(), name.to_string()));
                } else if line.starts_with("impl")
                    && (line.contains(" Error for ") || line.contains("::Error for "))
                {
                    let name = line.split(" for ").nth(1).unwrap_or_default();
                    let name = name.split([' ', '<', '{']).next().unwrap_or_default();
                    out.push((path.clone(), name.to_string()));
                }
            }
        }
        out
    }
}
