//! One platform seam, kept: no file of `src/` outside `src/platform/` calls the operating system.
//! Fails, naming file and line, on `libc`, `std::os`, a `unix::` path (tokio's pipes and
//! signals), `tokio::signal`, a `cfg` on the OS (`unix`, `windows`, `target_os`, ...), tokio's
//! Unix-only `process_group`, or a `/proc` path.
//! Test code counts too (its OS calls are the platform's tests); comments do not, and strings
//! count only for `/proc`.

use std::path::Path;

use super::{blank, crate_root};

/// Words that name the OS's C library or a Unix-only call in code: outside the platform
/// module, none.
const WORDS: &[&str] = &["libc", "process_group"];

/// Paths into the OS's own parts of the standard library and of tokio (`std::os::unix`,
/// `tokio::net::unix`, `tokio::signal::unix`, ...).
const PATHS: &[&str] = &[
    "std::os",
    "os::fd",
    "os::raw",
    "unix::",
    "windows::",
    "tokio::signal",
];

/// What a `cfg` on the OS names (`#[cfg(unix)]`, `cfg!(target_os = "linux")`).
const CFG_WORDS: &[&str] = &[
    "unix",
    "windows",
    "target_os",
    "target_family",
    "target_vendor",
];

/// `text` with its comments blanked and its strings kept, lines where they were.
fn without_comments(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let rest = &c[i..];
        let skip = if rest.starts_with(&['/', '/']) {
            rest.iter().position(|&x| x == '\n').unwrap_or(rest.len())
        } else if rest.starts_with(&['/', '*']) {
            rest.windows(2)
                .position(|w| w == ['*', '/'])
                .map_or(rest.len(), |p| p + 2)
        } else {
            0
        };
        if skip > 0 {
            out.extend(
                rest[..skip]
                    .iter()
                    .map(|&x| if x == '\n' { '\n' } else { ' ' }),
            );
            i += skip;
            continue;
        }
        // A string or char literal is copied whole, so a `//` inside it starts no comment.
        let len = match rest[0] {
            '"' => {
                let mut j = 1;
                while j < rest.len() && rest[j] != '"' {
                    j += if rest[j] == '\\' { 2 } else { 1 };
                }
                j + 1
            }
            '\'' if rest.get(1) == Some(&'\\') => 4,
            '\'' if rest.get(2) == Some(&'\'') => 3,
            _ => 1,
        };
        let len = len.min(rest.len());
        out.extend(&rest[..len]);
        i += len;
    }
    out
}

fn has_word(line: &str, word: &str) -> bool {
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    line.match_indices(word)
        .any(|(at, _)| !line[..at].ends_with(ident) && !line[at + word.len()..].starts_with(ident))
}

/// The OS calls of one file's text, as `rel:line: what`.
fn os_calls_in(rel: &str, text: &str) -> Vec<String> {
    let code = blank(text);
    let with_strings = without_comments(text);
    let mut found = Vec::new();
    for (n, (line, full)) in code.lines().zip(with_strings.lines()).enumerate() {
        let mut what: Vec<String> = WORDS
            .iter()
            .filter(|w| has_word(line, w))
            .map(|w| format!("`{w}`"))
            .collect();
        what.extend(
            PATHS
                .iter()
                .filter(|p| line.contains(*p) && has_word(line, p.trim_end_matches(':')))
                .map(|p| format!("`{p}`")),
        );
        if line.contains("cfg") {
            what.extend(
                CFG_WORDS
                    .iter()
                    .filter(|w| has_word(line, w))
                    .map(|w| format!("a cfg on `{w}`")),
            );
        }
        if full.contains("/proc/") || full.contains("/proc\"") {
            what.push("a /proc path".into());
        }
        if !what.is_empty() {
            found.push(format!(
                "{rel}:{}: {} (an OS call: it belongs in src/platform/)",
                n + 1,
                what.join(", ")
            ));
        }
    }
    found
}

/// Every file of `src/` outside `src/platform/` that the seam applies to.
fn outside_the_platform(rel: &str) -> bool {
    rel.ends_with(".rs") && !rel.starts_with("src/platform/")
}

fn walk(root: &Path, dir: &Path, found: &mut Vec<String>, files: &mut usize) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            walk(root, &path, found, files);
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if outside_the_platform(&rel) {
            *files += 1;
            found.extend(os_calls_in(&rel, &std::fs::read_to_string(&path).unwrap()));
        }
    }
}

#[test]
fn no_file_outside_the_platform_module_calls_the_os() {
    let root = crate_root();
    let (mut found, mut files) = (Vec::new(), 0);
    walk(&root, &root.join("src"), &mut found, &mut files);
    assert!(files > 100, "the scan found too little: {files} files");
    assert!(
        found.is_empty(),
        "operating-system calls outside src/platform/ (docs/development.md, \"Porting to \
         another OS\"):\n{}",
        found.join("\n")
    );
}

/// A test of the test: planted OS calls are named with their lines; the same words in
/// comments, in strings (but for /proc) and inside other names are not.
#[test]
fn planted_os_calls_are_caught_with_file_and_line_and_decoys_are_not() {
    let text = "//! Mentions libc::kill, std::os::unix and /proc/self in a comment: fine.\n\
                use std::os::unix::fs::PermissionsExt;\n\
                fn f() -> String { \"a libc, unix or windows word\".into() }\n\
                fn g() { let _ = std::fs::read(\"/proc/self/stat\"); }\n\
                #[cfg(unix)]\n\
                fn h() { unsafe { libc::getpid() }; }\n\
                /* libc::kill(pid, 9) */ fn i() -> f64 { unix_now() } // tokio::signal\n\
                async fn j() { let _ = tokio::signal::ctrl_c().await; }\n\
                fn k(c: &mut Command) { c.process_group(0); let _ = '\"'; }\n\
                fn l() { let _ = \"// not a comment: /proc\"; }\n\
                fn m(unix: f64, b: &[u8]) -> usize { b.windows(2).count() + unix as usize }\n\
                #[cfg(all(test, target_os = \"linux\"))]\n";
    let found = os_calls_in("src/planted.rs", text);
    let lines: Vec<&str> = found
        .iter()
        .map(|v| v.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "src/planted.rs:2",
            "src/planted.rs:4",
            "src/planted.rs:5",
            "src/planted.rs:6",
            "src/planted.rs:8",
            "src/planted.rs:9",
            "src/planted.rs:10",
            "src/planted.rs:12",
        ],
        "{found:#?}"
    );
    assert!(
        found[0].contains("`unix::`") && found[0].contains("`std::os`"),
        "{}",
        found[0]
    );
    assert!(found[1].contains("a /proc path"), "{}", found[1]);
    assert!(found[2].contains("a cfg on `unix`"), "{}", found[2]);
    assert!(found[5].contains("`process_group`"), "{}", found[5]);
    assert!(found[7].contains("a cfg on `target_os`"), "{}", found[7]);
    assert!(outside_the_platform("src/engine/process.rs"));
    assert!(!outside_the_platform("src/platform/unix.rs"));
    assert!(!outside_the_platform("src/runtime/README.md"));
}
