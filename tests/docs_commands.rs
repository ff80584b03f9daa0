//! The guide cannot drift from the binary: every `spsa` command in a code block of the README, of
//! `docs/*.md` or of a proof's `proofs/*/README.md` must parse with the real command line
//! (subcommand, flags, values), and every shipped file it names (`conf/`, `vars/`, `openings/`,
//! `data/`, `tools/`, `proofs/`) must exist. `conf/` and `vars/` hold only what a user starts
//! from: every file there is named by the README or the guide (or by a config that is).

use std::path::{Path, PathBuf};

use clap::Parser;
use spsa::cli::Cli;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The guide: the README and every Markdown file of `docs/`.
fn guide() -> Vec<PathBuf> {
    let mut docs = vec![repo().join("README.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    docs.extend(pages);
    docs
}

/// The documents checked: the guide and each proof's README (`proofs/NAME/README.md`).
fn documents() -> Vec<PathBuf> {
    let mut docs = guide();
    let mut proofs: Vec<PathBuf> = std::fs::read_dir(repo().join("proofs"))
        .expect("proofs/ exists")
        .map(|e| e.unwrap().path().join("README.md"))
        .filter(|p| p.exists())
        .collect();
    proofs.sort();
    docs.extend(proofs);
    docs
}

/// `spsa ...` commands in fenced code blocks, with their line numbers: `\` continuations joined,
/// `# comments` cut, the part after `&&` taken when a line chains commands, and a redirection
/// (`> FILE`) or pipe cut off.
fn commands(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            continue;
        }
        let line = line.trim();
        let (number, joined) = match pending.take() {
            Some((n, head)) => (n, format!("{head} {line}")),
            None => (i + 1, line.to_string()),
        };
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((number, head.trim_end().to_string()));
            continue;
        }
        let code = match joined.find(" #") {
            Some(at) if !joined.starts_with('#') => joined[..at].trim_end().to_string(),
            _ => joined.clone(),
        };
        for part in code.split("&&") {
            // What a shell redirects or pipes to is not the command's own argument.
            let part = part.split(['>', '|']).next().unwrap_or_default();
            let part = part.trim().trim_start_matches("$ ");
            if part.starts_with("spsa ") {
                out.push((number, part.to_string()));
            }
        }
    }
    out
}

/// `spsa ...` commands written inline in the prose (`` `spsa verify conf/x.toml --pairs 300` ``),
/// with their line numbers; spans with placeholders (`CONFIG`, `N`, `[--resume | --fresh]`, `…`)
/// are synopses, not commands, and are left out.
fn inline_commands(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        for (k, span) in line.split('`').enumerate() {
            let placeholder = |w: &str| {
                !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_uppercase() || "._|".contains(c))
                    && w.chars().any(|c| c.is_ascii_uppercase())
            };
            let synopsis = span.contains(['[', '|', '…', '<'])
                || span.contains("...")
                || span
                    .split_whitespace()
                    .any(|w| placeholder(w) || w.split('=').any(placeholder));
            // A command names what it works on; `spsa run` or `spsa report --plot` in a
            // sentence names a command or a flag.
            let names_a_file = span
                .split_whitespace()
                .skip(2)
                .any(|w| w.contains('/') || w.contains('.'));
            if k % 2 == 1 && span.starts_with("spsa ") && !synopsis && names_a_file {
                out.push((i + 1, span.to_string()));
            }
        }
    }
    out
}

/// Split a command line as a shell would for these simple cases: whitespace, and single or
/// double quotes around a word.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            (_, c) => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// Shipped files a command names must exist (outputs under logs/ or /tmp need not).
fn missing_files(args: &[String]) -> Vec<String> {
    const SHIPPED: [&str; 6] = ["conf/", "vars/", "openings/", "data/", "tools/", "proofs/"];
    args.iter()
        .flat_map(|a| a.split(['=', ',']))
        .filter(|a| SHIPPED.iter().any(|d| a.starts_with(d)))
        .filter(|a| !a.contains('*') && !Path::new(&repo().join(a)).exists())
        .map(str::to_string)
        .collect()
}

/// The `--db` values of a command that are URLs (not a `URL` placeholder).
fn database_urls(args: &[String]) -> Vec<&str> {
    args.windows(2)
        .filter(|pair| pair[0] == "--db" && pair[1] != "URL")
        .map(|pair| pair[1].as_str())
        .collect()
}

#[test]
fn every_documented_command_parses_and_names_files_that_exist() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(repo()).unwrap().display().to_string();
        for (line, command) in commands(&text).into_iter().chain(inline_commands(&text)) {
            let args = words(&command);
            checked += 1;
            if let Err(e) = Cli::try_parse_from(&args) {
                let first = e.to_string().lines().next().unwrap_or_default().to_string();
                problems.push(format!("{name}:{line}: `{command}`: {first}"));
            }
            for file in missing_files(&args) {
                problems.push(format!("{name}:{line}: `{command}`: {file} does not exist"));
            }
            for url in database_urls(&args) {
                if let Err(e) = spsa::db::conn::parse_url(url) {
                    problems.push(format!("{name}:{line}: `{command}`: {e}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The guide is made of commands: a parser that finds none has broken, not the guide.
    assert!(checked >= 25, "only {checked} commands found");
}

/// Every proof folder has a README, and each README replays its claim with commands that parse.
#[test]
fn every_proof_has_a_readme_with_a_command() {
    let mut bare = Vec::new();
    for entry in std::fs::read_dir(repo().join("proofs")).unwrap() {
        let dir = entry.unwrap().path();
        let readme = dir.join("README.md");
        let text = std::fs::read_to_string(&readme).unwrap_or_default();
        if commands(&text).is_empty() {
            bare.push(dir.display().to_string());
        }
    }
    assert!(
        bare.is_empty(),
        "proofs without a README that replays them: {bare:?}"
    );
}

/// `ls conf vars` shows only starting points: a file there is named by the README or the guide
/// (its name anywhere in the text), or by a config of `conf/` that is. Records of results (the
/// proofs' tunes, plans and tuned values) live in their proof's folder under `proofs/`.
#[test]
fn conf_and_vars_hold_only_what_the_guide_uses() {
    let guide: String = guide()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let listed = |dir: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(repo().join(dir))
            .unwrap()
            .map(|e| format!("{dir}/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        names.sort();
        names
    };
    let confs = listed("conf");
    let used_confs: Vec<&String> = confs
        .iter()
        .filter(|c| guide.contains(c.as_str()))
        .collect();
    // A variables file is used when the guide names it or a used config reads it.
    let read_by_used: String = used_confs
        .iter()
        .map(|c| std::fs::read_to_string(repo().join(c)).unwrap())
        .collect();
    let mut strays: Vec<&String> = confs.iter().filter(|c| !used_confs.contains(c)).collect();
    let vars = listed("vars");
    strays.extend(vars.iter().filter(|v| {
        let name = v.trim_start_matches("vars/");
        !guide.contains(v.as_str()) && !read_by_used.contains(&format!("vars/{name}"))
    }));
    assert!(
        strays.is_empty(),
        "files in conf/ or vars/ that neither the README nor the guide uses (move a proof's \
         files to proofs/NAME/): {strays:?}"
    );
}

#[test]
fn the_extraction_sees_what_a_reader_sees() {
    let text = "x\n```sh\nspsa run a.toml   # comment\ncargo build && spsa simulate b.conf --seed 1\nspsa worker --db 'postgres://x y' \\\n  --concurrency 2\n# spsa not-a-command\n```\nspsa outside a block\n";
    let found = commands(text);
    assert_eq!(
        found,
        vec![
            (3, "spsa run a.toml".to_string()),
            (4, "spsa simulate b.conf --seed 1".to_string()),
            (
                5,
                "spsa worker --db 'postgres://x y' --concurrency 2".to_string()
            ),
        ]
    );
    assert_eq!(
        words(&found[2].1),
        [
            "spsa",
            "worker",
            "--db",
            "postgres://x y",
            "--concurrency",
            "2"
        ]
    );
    assert_eq!(
        inline_commands("run `spsa verify c.toml --pairs 300`, not `spsa run CONFIG [--resume]`\n"),
        vec![(1, "spsa verify c.toml --pairs 300".to_string())]
    );
    // A broken command is caught: an unknown flag, and a shipped file that is not there.
    assert!(Cli::try_parse_from(words("spsa run a.toml --no-such-flag")).is_err());
    assert_eq!(
        missing_files(&words("spsa run conf/nope.toml")),
        ["conf/nope.toml"]
    );
    assert!(missing_files(&words("spsa run conf/minors.toml")).is_empty());
    // A database URL the client would refuse is caught too.
    let bad = words("spsa status --db postgres://h/db?sslmode=verify");
    assert_eq!(database_urls(&bad), ["postgres://h/db?sslmode=verify"]);
    assert!(spsa::db::conn::parse_url(database_urls(&bad)[0]).is_err());
}

/// Every config shipped in `conf/` or a proof's folder loads, and the variables file and books it
/// names are where it says (paths are relative to the config, so a moved config that was not
/// rewritten fails here, not in a user's hands).
#[test]
fn every_shipped_config_loads_with_its_variables_and_book() {
    let mut configs = Vec::new();
    for dir in ["conf"].into_iter().map(|d| repo().join(d)).chain(
        std::fs::read_dir(repo().join("proofs"))
            .unwrap()
            .map(|e| e.unwrap().path()),
    ) {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml" || e == "conf") {
                configs.push(path);
            }
        }
    }
    let mut problems = Vec::new();
    for path in &configs {
        let config = match spsa::config::Config::load(path) {
            Ok(c) => c,
            Err(e) => {
                problems.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        if let Err(e) = spsa::vars::load(&config.variables) {
            problems.push(format!("{}: {e}", path.display()));
        }
        let games = config.games.iter();
        for book in games.flat_map(|g| g.book.iter().chain(&g.verify_book)) {
            if !book.exists() {
                problems.push(format!("{}: no book {}", path.display(), book.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(configs.len() > 40, "only {} configs found", configs.len());
}
