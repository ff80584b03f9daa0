//! The UCI stand-in engine (`tools/uci-standin.rs`): a test double, so an example and not a
//! binary (`cargo install` must not put it on users' PATH). A full `cargo test` builds the
//! examples before any test runs; `cargo test --test NAME` does not, so the first call builds
//! it then.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

/// `cargo`, run from the package's folder without what cargo puts in a test's environment, so
/// it finds what `cargo test` built up to date. A test runs with cargo's package variables set
/// (`CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, …) and, under .ci/run, `RUSTC_BOOTSTRAP=1` (for
/// libtest's --report-time); build scripts that watch them (ring's watches the first two) made a
/// cargo started with them rebuild ring, rustls and this crate, and the next plain build rebuild
/// them back: 50–75 s of CI per call. What the caller set for the build itself
/// (`CARGO_INCREMENTAL`, `CARGO_TARGET_DIR`, `CARGO_HOME`, …) stays: without it the same
/// rebuild happens for the other reason.
pub fn cargo() -> std::process::Command {
    let mut cargo = std::process::Command::new(env!("CARGO"));
    cargo.current_dir(env!("CARGO_MANIFEST_DIR"));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_for_tests = name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_EXE_")
            || matches!(
                name.as_ref(),
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
                    | "OUT_DIR"
                    | "RUSTC_BOOTSTRAP"
            );
        if set_for_tests {
            cargo.env_remove(name.as_ref());
        }
    }
    cargo
}

/// The features these tests were built with, for a nested `cargo build` of an example: without
/// them cargo would build the library again for the example (the suite runs with `--features
/// fuzzing` in CI, and a second build of the crate cost minutes there).
pub fn features() -> &'static [&'static str] {
    if cfg!(feature = "fuzzing") {
        &["--features", "fuzzing"]
    } else {
        &[]
    }
}

/// The stand-in's path, built if it is not there yet.
pub fn standin() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        // Test binaries live in target/<profile>/deps; examples in target/<profile>/examples.
        let exe = std::env::current_exe().expect("the test binary's path");
        let profile_dir = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("target/<profile>/deps");
        let path: PathBuf = profile_dir.join("examples").join("uci-standin");
        let profile = profile_dir.file_name().and_then(|n| n.to_str());
        let mut build = cargo();
        build.args(["build", "--quiet", "--example", "uci-standin"]);
        build.args(features());
        if profile == Some("release") {
            build.arg("--release");
        }
        // Always ask cargo: it does nothing when the example is up to date.
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "building the uci-standin example failed");
        assert!(path.exists(), "{} not built", path.display());
        path.to_string_lossy().into_owned()
    })
}
