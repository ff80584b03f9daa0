//! The floors of the house, kept. docs/development.md's `floors` block says which floor each
//! module of `src/` is on and which few imports may run up a floor (each with its reason); this
//! test reads that block and every file of `src/`, and fails, naming file and line, on an
//! import from a lower floor to a higher one that the block does not allow, on an import circle
//! between files, on a module that is on no floor, and on an allowed exception nothing uses any
//! more.
//!
//! What counts as an import: every path that starts with `crate::`, `super::` or `self::` (in
//! `main.rs`, `spsa::`), in `use` declarations and in code, and a plain path to a child module;
//! a path through a re-export (`pub use`) counts as an import of the file that defines the
//! item. Comments, strings and test-only code (`#[cfg(test)]` modules and files) do not count.
//! A room's `mod.rs` is its front door: what it uses of its own files is not counted.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// No OS call outside `src/platform/` (its own file: the seam, apart from the floors).
#[path = "layers/os_calls.rs"]
mod os_calls;

/// The floors and the allowed exceptions, as docs/development.md writes them.
#[derive(Debug, Default)]
struct Floors {
    /// Top-level module name (`config`, `vars`, `main`) → floor, 1 the lowest.
    of_module: HashMap<String, u32>,
    /// (from, to) file pairs, relative to the crate (`src/a/b.rs`), allowed to run up.
    allowed: Vec<(String, String)>,
    /// `commands: src/cli except exit.rs flags.rs`: the folder of the commands' files, each
    /// of which imports no other file of it but its front door and these shared ones.
    commands: Option<(String, Vec<String>)>,
}

/// Read the fenced block that starts with ```` ```floors ```` : lines `N: module module …`,
/// `allow: src/a.rs -> src/b.rs` and `commands: src/cli except a.rs b.rs`; `#` starts a
/// comment.
fn parse_floors(doc: &str) -> Result<Floors, String> {
    let mut floors = Floors::default();
    let mut inside = false;
    let mut seen = false;
    for (i, raw) in doc.lines().enumerate() {
        let trimmed = raw.trim();
        if !inside {
            if trimmed == "```floors" {
                inside = true;
                seen = true;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            break;
        }
        let line = trimmed.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let (head, rest) = line
            .split_once(':')
            .ok_or_else(|| format!("floors block, line {}: no `:` in {line:?}", i + 1))?;
        if head.trim() == "allow" {
            let (from, to) = rest
                .split_once("->")
                .ok_or_else(|| format!("floors block, line {}: allow needs `A -> B`", i + 1))?;
            floors
                .allowed
                .push((from.trim().to_string(), to.trim().to_string()));
            continue;
        }
        if head.trim() == "commands" {
            let mut words = rest.split_whitespace();
            let folder = words
                .next()
                .ok_or_else(|| format!("floors block, line {}: commands needs a folder", i + 1))?
                .trim_end_matches('/');
            let shared = match words.next() {
                None => Vec::new(),
                Some("except") => words.map(|w| format!("{folder}/{w}")).collect(),
                Some(w) => {
                    return Err(format!(
                        "floors block, line {}: `{w}`: commands takes `FOLDER except FILE …`",
                        i + 1
                    ));
                }
            };
            floors.commands = Some((folder.to_string(), shared));
            continue;
        }
        let floor: u32 = head
            .trim()
            .parse()
            .map_err(|_| format!("floors block, line {}: `{head}` is not a floor", i + 1))?;
        for module in rest.split_whitespace() {
            if floors.of_module.insert(module.to_string(), floor).is_some() {
                return Err(format!("floors block: `{module}` is on two floors"));
            }
        }
    }
    if !seen {
        return Err("no ```floors block".into());
    }
    Ok(floors)
}

/// Source text with comments, strings and char literals blanked (newlines kept, so line
/// numbers stay).
fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_lines = |s: &[char], out: &mut String| {
        for ch in s {
            out.push(if *ch == '\n' { '\n' } else { ' ' });
        }
    };
    while i < c.len() {
        let rest = &c[i..];
        if rest.starts_with(&['/', '/']) {
            let end = rest.iter().position(|&x| x == '\n').unwrap_or(rest.len());
            keep_lines(&rest[..end], &mut out);
            i += end;
        } else if rest.starts_with(&['/', '*']) {
            let mut depth = 0;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with(&['/', '*']) {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(&['*', '/']) {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            keep_lines(&rest[..j.min(rest.len())], &mut out);
            i += j;
        } else if let Some(len) = raw_string(rest) {
            keep_lines(&rest[..len], &mut out);
            i += len;
        } else if rest[0] == '"' || (rest.starts_with(&['b', '"']) && !ident_before(&c, i)) {
            let open = if rest[0] == 'b' { 2 } else { 1 };
            let mut j = open;
            while j < rest.len() && rest[j] != '"' {
                j += if rest[j] == '\\' { 2 } else { 1 };
            }
            let len = (j + 1).min(rest.len());
            keep_lines(&rest[..len], &mut out);
            i += len;
        } else if rest[0] == '\'' {
            // A char literal ('x', '\n', '\u{1F600}'), or a lifetime ('a), which stays.
            let len = if rest.get(1) == Some(&'\\') {
                rest[2..].iter().position(|&x| x == '\'').map(|p| p + 3)
            } else if rest.get(2) == Some(&'\'') {
                Some(3)
            } else {
                None
            };
            match len {
                Some(len) => {
                    keep_lines(&rest[..len], &mut out);
                    i += len;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    out
}

fn ident_before(c: &[char], i: usize) -> bool {
    i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) at the start of `s`.
fn raw_string(s: &[char]) -> Option<usize> {
    let mut j = 0;
    if s.first() == Some(&'b') {
        j += 1;
    }
    if s.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = s[j..].iter().take_while(|&&x| x == '#').count();
    j += hashes;
    if s.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < s.len() {
        if s[j] == '"'
            && s[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&x| x == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(s.len())
}

/// Blank `#[cfg(test)]` items (a `mod tests { … }` block, a `use`, a function): test code may
/// import anything.
fn strip_test_items(text: &str) -> String {
    let mut out: Vec<char> = text.chars().collect();
    let marker: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + marker.len() <= out.len() {
        if out[i..i + marker.len()] != marker[..] {
            i += 1;
            continue;
        }
        // The item runs to its `;` or to the `}` that closes its first `{`.
        let mut j = i + marker.len();
        let mut depth = 0;
        while j < out.len() {
            match out[j] {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    j += 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let end = j.min(out.len());
        for ch in &mut out[i..end] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        i = j;
    }
    out.into_iter().collect()
}

/// One module file of the crate.
#[derive(Debug)]
struct ModuleFile {
    /// Relative to the crate: `src/config/mod.rs`.
    rel: String,
    /// Its module path: `["config"]`; `[]` for lib.rs.
    path: Vec<String>,
    /// mod.rs or lib.rs: a room's front door.
    front_door: bool,
    /// Comments, strings and test code blanked.
    code: String,
}

/// Every module file under `root/src` that is not test-only, by module path (`src/bin/` and
/// its binaries apart).
fn module_files(root: &Path) -> BTreeMap<Vec<String>, ModuleFile> {
    let mut out = BTreeMap::new();
    let src = root.join("src");
    let mut stack = vec![src.clone()];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                if p != src.join("bin") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    for file in files {
        let rel_src = file.strip_prefix(&src).unwrap();
        let mut path: Vec<String> = rel_src
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let front_door = matches!(path.last().map(String::as_str), Some("mod") | Some("lib"))
            && !(path.len() == 1 && path[0] == "mod");
        if front_door {
            path.pop();
        }
        let text = std::fs::read_to_string(&file).unwrap();
        out.insert(
            path.clone(),
            ModuleFile {
                rel: format!("src/{}", rel_src.display()),
                path,
                front_door,
                code: strip_test_items(&blank(&text)),
            },
        );
    }
    // Files their parent declares only for tests (`#[cfg(test)] mod tests;`) are test code.
    let test_only: Vec<Vec<String>> = out
        .keys()
        .filter(|path| {
            let Some((name, parent)) = path.split_last() else {
                return false;
            };
            let Some(parent) = out.get(parent) else {
                return false;
            };
            let text = std::fs::read_to_string(root.join(&parent.rel)).unwrap();
            let t: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            t.contains(&format!("#[cfg(test)] mod {name};"))
                || t.contains(&format!("#[cfg(test)] pub mod {name};"))
        })
        .cloned()
        .collect();
    for path in test_only {
        out.remove(&path);
    }
    out
}

/// The leaves of a `use` tree (whitespace removed), each as its path segments.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    fn go(prefix: &[String], t: &str, out: &mut Vec<Vec<String>>) {
        let t = t.trim();
        if t.is_empty() {
            return;
        }
        match t.find('{') {
            None => {
                let t = t.split(" as ").next().unwrap_or_default();
                let mut segs = prefix.to_vec();
                segs.extend(
                    t.split("::")
                        .filter(|s| !s.is_empty() && *s != "*")
                        .map(unraw),
                );
                out.push(segs);
            }
            Some(open) => {
                let mut head = prefix.to_vec();
                head.extend(t[..open].split("::").filter(|s| !s.is_empty()).map(unraw));
                let body = &t[open + 1..t.rfind('}').unwrap_or(t.len())];
                let mut depth = 0;
                let mut part = String::new();
                for ch in body.chars() {
                    match ch {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    if ch == ',' && depth == 0 {
                        go(&head, &part, out);
                        part.clear();
                    } else {
                        part.push(ch);
                    }
                }
                go(&head, &part, out);
            }
        }
    }
    let mut out = Vec::new();
    go(&[], tree, &mut out);
    out
}

/// A name as the compiler reads it: a raw identifier (`r#match`) is the module `match`.
fn unraw(segment: &str) -> String {
    segment.strip_prefix("r#").unwrap_or(segment).to_string()
}

/// A path as written in `file` (`crate::a::B`, `super::c`, `child::d`), made absolute; `None`
/// for a path outside the crate.
fn absolute(file: &ModuleFile, segs: &[String], crate_name: &str) -> Option<Vec<String>> {
    let here: Vec<String> = file.path.clone();
    let mut segs: Vec<String> = segs.iter().filter(|s| *s != "self").cloned().collect();
    if segs.is_empty() {
        return None;
    }
    let (mut base, rest) = match segs[0].as_str() {
        "crate" => (Vec::new(), segs.split_off(1)),
        s if s == crate_name => (Vec::new(), segs.split_off(1)),
        "super" => {
            let mut base = here.clone();
            let mut rest = segs.split_off(0);
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest.remove(0);
            }
            (base, rest)
        }
        _ => (here.clone(), segs),
    };
    base.extend(rest);
    Some(base)
}

/// The file an absolute path lands in: the deepest module file on it, or the file a
/// front door re-exports the named item from.
fn resolve(
    files: &BTreeMap<Vec<String>, ModuleFile>,
    reexports: &HashMap<Vec<String>, HashMap<String, Vec<String>>>,
    path: &[String],
    hops: u32,
) -> Option<Vec<String>> {
    let n = (0..=path.len())
        .rev()
        .find(|&n| files.contains_key(&path[..n]))?;
    let module = path[..n].to_vec();
    if hops < 8
        && let Some(item) = path.get(n)
        && let Some(target) = reexports.get(&module).and_then(|r| r.get(item))
    {
        let mut again = target.clone();
        again.extend(path[n + 1..].iter().cloned());
        if let Some(found) = resolve(files, reexports, &again, hops + 1) {
            return Some(found);
        }
    }
    Some(module)
}

/// `(line, path segments)` of every path into the crate written in `code`.
fn paths_in(code: &str, is_main: bool) -> Vec<(usize, Vec<String>, bool)> {
    let mut out = Vec::new();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    // `use` declarations (their trees expanded); `true` marks `pub use`.
    let bytes = code.as_bytes();
    let word = |at: usize, w: &str| {
        code[at..].starts_with(w)
            && (at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_'))
            && code[at + w.len()..]
                .chars()
                .next()
                .is_some_and(char::is_whitespace)
    };
    let mut at = 0;
    while let Some(found) = code[at..].find("use") {
        let start = at + found;
        at = start + 3;
        if !word(start, "use") {
            continue;
        }
        let Some(end) = code[start..].find(';') else {
            break;
        };
        // Whitespace out, but `as` kept apart from the names around it.
        let tree: String = code[start + 3..start + end]
            .split_whitespace()
            .map(|t| if t == "as" { " as " } else { t })
            .collect();
        let public =
            code[..start].trim_end().ends_with("pub") || code[..start].trim_end().ends_with(')');
        for segs in expand_use(&tree) {
            out.push((line_of(start), segs, public));
        }
        at = start + end;
    }
    // Paths in code: crate::…, super::…, self::… (and spsa::… in main.rs).
    let roots: &[&str] = if is_main {
        &["spsa::", "crate::"]
    } else {
        &["crate::", "super::", "self::"]
    };
    for root in roots {
        let mut at = 0;
        while let Some(found) = code[at..].find(root) {
            let start = at + found;
            at = start + root.len();
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            // `#` only as a raw identifier's (`super::r#match::f`).
            let text: String = code[start..]
                .char_indices()
                .take_while(|&(i, c)| {
                    c.is_alphanumeric()
                        || c == '_'
                        || c == ':'
                        || (c == '#' && code[..start + i].ends_with("::r"))
                })
                .map(|(_, c)| c)
                .collect();
            let segs: Vec<String> = text
                .split("::")
                .filter(|s| !s.is_empty())
                .map(unraw)
                .collect();
            out.push((line_of(start), segs, false));
        }
    }
    out
}

/// One import of one file by another.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    from: String,
    line: usize,
    to: String,
}

/// Every import between two files of the crate at `root` (the first line each is written on).
fn imports(root: &Path, crate_name: &str) -> (Vec<Import>, Vec<String>) {
    let files = module_files(root);
    // What each front door re-exports: item name → absolute path of its definition.
    let mut reexports: HashMap<Vec<String>, HashMap<String, Vec<String>>> = HashMap::new();
    for file in files.values().filter(|f| f.front_door) {
        for (_, segs, public) in paths_in(&file.code, false) {
            if !public {
                continue;
            }
            if let Some(abs) = absolute(file, &segs, crate_name)
                && let Some(name) = abs.last()
            {
                reexports
                    .entry(file.path.clone())
                    .or_default()
                    .insert(name.clone(), abs);
            }
        }
    }
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for file in files.values() {
        let is_main = file.rel == "src/main.rs";
        for (line, segs, _) in paths_in(&file.code, is_main) {
            let segs = if is_main && segs.first().is_some_and(|s| s == "spsa") {
                let mut s = segs.clone();
                s[0] = "crate".into();
                s
            } else {
                segs
            };
            let relative = !matches!(
                segs.first().map(String::as_str),
                Some("crate") | Some("super") | Some("self")
            );
            // A plain path counts only when it names a child module of this file.
            if relative {
                let mut child = file.path.clone();
                child.push(segs[0].clone());
                if !files.contains_key(&child) || is_main {
                    continue;
                }
            }
            let Some(abs) = absolute(file, &segs, crate_name) else {
                continue;
            };
            let Some(target) = resolve(&files, &reexports, &abs, 0) else {
                continue;
            };
            let to = &files[&target];
            if to.rel == file.rel || to.path.is_empty() {
                continue;
            }
            // The front door's own rooms are not counted.
            if file.front_door && to.path.starts_with(&file.path) {
                continue;
            }
            let key = (file.rel.clone(), to.rel.clone());
            let first = seen.entry(key).or_insert(line);
            *first = (*first).min(line);
        }
    }
    let all = files.values().map(|f| f.rel.clone()).collect();
    let imports = seen
        .into_iter()
        .map(|((from, to), line)| Import { from, line, to })
        .collect();
    (imports, all)
}

/// The floor of a file: its top-level module's.
fn floor_of(floors: &Floors, rel: &str) -> Result<u32, String> {
    let module = rel
        .trim_start_matches("src/")
        .split('/')
        .next()
        .unwrap_or_default()
        .trim_end_matches(".rs");
    floors.of_module.get(module).copied().ok_or_else(|| {
        format!(
            "{rel}: module `{module}` is on no floor; add it to the floors block of docs/development.md"
        )
    })
}

/// Everything that breaks the floors in the crate at `root`: one line each.
fn violations(root: &Path, floors: &Floors, crate_name: &str) -> Vec<String> {
    let (imports, files) = imports(root, crate_name);
    let mut out = Vec::new();
    for rel in files.iter().filter(|f| *f != "src/lib.rs") {
        if let Err(e) = floor_of(floors, rel) {
            out.push(e);
        }
    }
    let mut used_exceptions = BTreeSet::new();
    for i in &imports {
        if i.from == "src/lib.rs" {
            continue;
        }
        let (Ok(from), Ok(to)) = (floor_of(floors, &i.from), floor_of(floors, &i.to)) else {
            continue;
        };
        if to <= from {
            continue;
        }
        let pair = (i.from.clone(), i.to.clone());
        if floors.allowed.contains(&pair) {
            used_exceptions.insert(pair);
            continue;
        }
        out.push(format!(
            "{}:{}: imports {} (floor {from} imports floor {to}): move the code to the floor it belongs on",
            i.from, i.line, i.to
        ));
    }
    for pair in &floors.allowed {
        if !used_exceptions.contains(pair) {
            out.push(format!(
                "allowed exception {} -> {} is not used any more: delete it from the floors block",
                pair.0, pair.1
            ));
        }
    }
    if let Some((folder, shared)) = &floors.commands {
        let is_command = |rel: &str| {
            rel.strip_prefix(folder.as_str())
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|name| !name.contains('/') && name != "mod.rs")
                && !shared.iter().any(|s| s == rel)
        };
        for i in imports
            .iter()
            .filter(|i| is_command(&i.from) && is_command(&i.to))
        {
            out.push(format!(
                "{}:{}: imports {}, another command's file: move what both need to a shared file ({}) or into the library",
                i.from,
                i.line,
                i.to,
                shared.join(", ")
            ));
        }
    }
    for circle in circles(&imports) {
        let edges: Vec<String> = imports
            .iter()
            .filter(|i| circle.contains(&i.from) && circle.contains(&i.to))
            .map(|i| format!("{}:{} -> {}", i.from, i.line, i.to))
            .collect();
        out.push(format!(
            "import circle between {} files: {}",
            circle.len(),
            edges.join(", ")
        ));
    }
    out
}

/// The strongly connected groups of more than one file (Tarjan).
fn circles(imports: &[Import]) -> Vec<BTreeSet<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for i in imports {
        next.entry(&i.from).or_default().push(&i.to);
        next.entry(&i.to).or_default();
    }
    struct State<'a> {
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(v: &'a str, next: &BTreeMap<&'a str, Vec<&'a str>>, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for &w in &next[v] {
            if !s.index.contains_key(w) {
                visit(w, next, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                group.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in next.keys().copied().collect::<Vec<_>>() {
        if !s.index.contains_key(v) {
            visit(v, &next, &mut s);
        }
    }
    s.out
}

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_crate_keeps_the_floors_docs_development_md_draws() {
    let doc = std::fs::read_to_string(crate_root().join("docs/development.md")).unwrap();
    let floors = parse_floors(&doc).unwrap();
    assert!(
        floors.allowed.len() <= 4,
        "at most 4 imports may run up a floor; the floors block allows {}",
        floors.allowed.len()
    );
    let (imports, files) = imports(&crate_root(), "spsa");
    assert!(
        files.len() > 100 && imports.len() > 300,
        "the scan found too little: {} files, {} imports",
        files.len(),
        imports.len()
    );
    let found = violations(&crate_root(), &floors, "spsa");
    assert!(
        found.is_empty(),
        "the floors of docs/development.md are broken:\n{}",
        found.join("\n")
    );
}

/// A test of the test: a small tree with a planted circle, a planted import up a floor, and
/// decoys the scan must not count (a comment, a string, test code).
#[test]
fn a_planted_circle_and_an_import_up_a_floor_are_caught_with_file_and_line() {
    let root = crate_root().join("tests/layers_fixture");
    let floors =
        parse_floors("```floors\n1: error words\n2: engine\n3: cli   # the top\n```\n").unwrap();
    let found = violations(&root, &floors, "fixture");
    let expect_up = "src/error.rs:7: imports src/cli/exit.rs (floor 1 imports floor 3)";
    assert!(found.iter().any(|v| v.starts_with(expect_up)), "{found:#?}");
    let circle = found
        .iter()
        .find(|v| v.starts_with("import circle between 2 files"))
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert!(
        circle.contains("src/cli/exit.rs:3 -> src/error.rs"),
        "{circle}"
    );
    assert!(
        circle.contains("src/error.rs:7 -> src/cli/exit.rs"),
        "{circle}"
    );
    // engine/mod.rs mentions cli only in a comment, a string and a test: no violation.
    assert!(
        !found.iter().any(|v| v.contains("src/engine/")),
        "{found:#?}"
    );
    // words.rs reaches cli through a re-export of the front door cli/mod.rs: counted as
    // an import of the file that defines the item.
    assert!(
        found
            .iter()
            .any(|v| v.starts_with("src/words.rs:2: imports src/cli/exit.rs")),
        "{found:#?}"
    );
    assert_eq!(found.len(), 3, "{found:#?}");
}

/// A test of the test: `r#match` is the file `cli/match.rs` (not the front door `cli/mod.rs`),
/// so the circle it closes with `cli/match_db.rs` is caught, in a `use` and in code alike.
#[test]
fn a_circle_through_a_raw_identifier_is_caught() {
    let root = crate_root().join("tests/layers_fixture_faces");
    let floors = parse_floors("```floors\n1: error\n3: cli\n```\n").unwrap();
    let found = violations(&root, &floors, "fixture");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with("import circle between 2 files"),
        "{found:#?}"
    );
    for edge in [
        "src/cli/match.rs:3 -> src/cli/match_db.rs",
        "src/cli/match_db.rs:2 -> src/cli/match.rs",
    ] {
        assert!(found[0].contains(edge), "{edge}: {}", found[0]);
    }
    let (imports, _) = imports(&root, "fixture");
    let to_door = imports
        .iter()
        .filter(|i| i.to == "src/cli/mod.rs")
        .collect::<Vec<_>>();
    assert!(to_door.is_empty(), "{to_door:#?}");
    let code = "fn f() { super::r#match::g(); crate::cli::r#match::h(); }";
    let paths: Vec<Vec<String>> = paths_in(code, false).into_iter().map(|p| p.1).collect();
    assert!(paths.contains(&vec!["super".into(), "match".into(), "g".into()]));
    assert!(paths.contains(&vec![
        "crate".into(),
        "cli".into(),
        "match".into(),
        "h".into()
    ]));
}

/// A test of the test: a command's file that imports another command's file is caught with
/// both named; the front door and the shared files are not commands.
#[test]
fn a_command_importing_another_commands_file_is_caught() {
    let root = crate_root().join("tests/layers_fixture_faces");
    let floors = parse_floors(
        "```floors\n1: error\n3: cli\ncommands: src/cli/ except exit.rs flags.rs  # faces\n```\n",
    )
    .unwrap();
    let found = violations(&root, &floors, "fixture");
    let commands: Vec<&String> = found
        .iter()
        .filter(|v| v.contains("another command's file"))
        .collect();
    for expect in [
        "src/cli/simulate.rs:4: imports src/cli/run.rs, another command's file",
        "src/cli/match.rs:3: imports src/cli/match_db.rs, another command's file",
        "src/cli/match_db.rs:2: imports src/cli/match.rs, another command's file",
    ] {
        assert!(
            commands.iter().any(|v| v.starts_with(expect)),
            "{expect}: {found:#?}"
        );
    }
    assert_eq!(commands.len(), 3, "{found:#?}");
    assert!(
        commands[0].contains("(src/cli/exit.rs, src/cli/flags.rs)"),
        "{}",
        commands[0]
    );
    assert!(parse_floors("```floors\ncommands: src/cli but x.rs\n```").is_err());
}

#[test]
fn an_allowed_exception_passes_a_stale_one_fails_and_a_module_needs_a_floor() {
    let root = crate_root().join("tests/layers_fixture");
    let floors = parse_floors(
        "```floors\n1: error words\n2: engine\n3: cli\n\
         allow: src/words.rs -> src/cli/exit.rs   # why: planted\n\
         allow: src/engine/mod.rs -> src/cli/exit.rs\n```\n",
    )
    .unwrap();
    let found = violations(&root, &floors, "fixture");
    assert!(
        !found.iter().any(|v| v.starts_with("src/words.rs")),
        "{found:#?}"
    );
    assert!(
        found.iter().any(|v| v.starts_with(
            "allowed exception src/engine/mod.rs -> src/cli/exit.rs is not used any more"
        )),
        "{found:#?}"
    );
    let floors = parse_floors("```floors\n1: error words\n3: cli\n```\n").unwrap();
    let found = violations(&root, &floors, "fixture");
    assert!(
        found
            .iter()
            .any(|v| v.starts_with("src/engine/mod.rs: module `engine` is on no floor")),
        "{found:#?}"
    );
    assert!(parse_floors("no block here").is_err());
    assert!(parse_floors("```floors\n1: a\n2: a\n```").is_err());
}

#[test]
fn comments_strings_and_test_code_are_blanked_with_their_lines_kept() {
    let text = "a // crate::x\nb \"crate::y\" r#\"crate::z\"# 'c' '\\n' 'a\n/* crate::w\n */ c\n";
    let out = blank(text);
    assert_eq!(out.lines().count(), text.lines().count());
    assert!(!out.contains("crate::"), "{out}");
    assert!(out.contains("'a"), "a lifetime stays: {out}");
    let code = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\nfn f() {}\n";
    let stripped = strip_test_items(code);
    assert!(stripped.contains("crate::a") && !stripped.contains("crate::b"));
    assert!(stripped.contains("fn f()"));
    assert_eq!(
        expand_use("crate::{a::{B, c::D as E}, f}"),
        vec![
            vec!["crate", "a", "B"],
            vec!["crate", "a", "c", "D"],
            vec!["crate", "f"]
        ]
    );
}
