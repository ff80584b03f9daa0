//! An engine's own words reach the user: what it wrote on stderr is shown when it fails to start
//! or crashes, and a chatty stderr never blocks it (the pipe is drained as it writes).

use crate::match_common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use match_common::*;

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn an_engine_that_dies_at_start_is_shown_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let engine = script(
        dir.path(),
        "dies",
        "echo 'info: loading net' >&2\necho 'fatal: cannot open network file nn-0001.bin' >&2\nexit 3",
    );
    let o = run(&[
        "match",
        "--engine1",
        engine.to_str().unwrap(),
        "--engine2",
        sparring(),
        "--pairs",
        "1",
        "--depth",
        "1",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("exit status: 3")
            && err.contains("fatal: cannot open network file nn-0001.bin")
            && err.contains("info: loading net"),
        "{err}"
    );
}

#[test]
fn a_chatty_stderr_never_blocks_the_engine() {
    // 1 MiB on stderr before the engine starts: 16 times a pipe's buffer. Undrained, the
    // engine would block before answering `uci`.
    let dir = tempfile::tempdir().unwrap();
    let engine = script(
        dir.path(),
        "chatty",
        &format!(
            "head -c 1048576 /dev/zero | tr '\\0' 'x' >&2\necho >&2\necho 'started' >&2\nexec {}",
            sparring()
        ),
    );
    let o = run(&[
        "match",
        "--engine1",
        engine.to_str().unwrap(),
        "--engine2",
        sparring(),
        "--pairs",
        "2",
        "--depth",
        "1",
        "--max-plies",
        "40",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = counts(&stdout(&o));
    assert_eq!(c.games, 4, "{}", stdout(&o));
}

#[test]
fn a_crash_mid_game_carries_the_engines_last_words() {
    // Killed a moment into its first game, after a message on stderr: the game is a fault whose
    // reason has the message, and the match goes on with a restarted engine.
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("crashed-once");
    let engine = script(
        dir.path(),
        "crashes",
        &format!(
            "if [ ! -e {flag} ]; then touch {flag}; (sleep 0.5; echo 'assertion failed: movegen.cpp:42' >&2; kill -9 $$) & fi\nexec {}",
            sparring(),
            flag = flag.display()
        ),
    );
    let o = run(&[
        "match",
        "--engine1",
        engine.to_str().unwrap(),
        "--engine2",
        sparring(),
        "--pairs",
        "2",
        "--depth",
        "3",
        "--max-plies",
        "200",
        "--concurrency",
        "1",
    ]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{err}");
    assert!(
        format!("{out}{err}").contains("assertion failed: movegen.cpp:42"),
        "stdout:\n{out}\nstderr:\n{err}"
    );
}
