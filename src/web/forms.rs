//! The forms a signed-in member fills in. A match form is turned into the command line of
//! `spsa match --db` and parsed by its own flags ([`MatchArgs`]), planned by the same
//! [`MatchArgs::plan_and_games`], made by [`crate::db::match_create::new_match`] and created
//! by [`crate::db::matches::create`] on the member's own connection: a match made here is the
//! match the CLI makes, and a form the CLI would refuse is refused with the CLI's message, shown
//! next to the field it names. Nothing is created on a bad form.
//!
//! A patch test is the same form with a git repository, two revisions, a build command and a
//! binary in place of the engines (`spsa match --git`'s flags), offered when the server was
//! started with `--form-git`: the server builds both revisions and measures them as the CLI's
//! creator does, and the workers build the same commits and must find the same signatures.

use std::collections::BTreeMap;
use std::path::Path;

use clap::Parser;
use maud::{Markup, html};
use serde::Deserialize;

use super::team::{Session, form_file, form_repository};
use crate::cli::r#match::MatchArgs;

/// A match form as posted.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct MatchForm {
    #[serde(default)]
    pub csrf: String,
    #[serde(default)]
    pub engine1: String,
    #[serde(default)]
    pub engine2: String,
    /// A patch test's repository (a URL or a clone in the server's folder); empty: engines.
    #[serde(default)]
    pub git: String,
    /// Side A's revision (the patch, by custom: what is tested).
    #[serde(default)]
    pub source1: String,
    /// Side B's revision (the base).
    #[serde(default)]
    pub source2: String,
    #[serde(default)]
    pub build: String,
    #[serde(default)]
    pub binary: String,
    /// Side A's options, NAME=VALUE a line.
    #[serde(default)]
    pub options1: String,
    #[serde(default)]
    pub options2: String,
    #[serde(default)]
    pub book: String,
    /// nodes, depth, movetime or tc.
    #[serde(default)]
    pub limit: String,
    #[serde(default)]
    pub limit_value: String,
    #[serde(default)]
    pub pairs: String,
    #[serde(default)]
    pub sprt: String,
    #[serde(default)]
    pub seed: String,
}

/// What is wrong with a form: per field, and what names no field.
#[derive(Debug, Default)]
pub struct FormErrors {
    pub fields: BTreeMap<&'static str, String>,
    pub top: Option<String>,
}

impl FormErrors {
    pub fn one(field: Option<&'static str>, message: String) -> FormErrors {
        let mut e = FormErrors::default();
        match field {
            Some(f) => {
                e.fields.insert(f, message);
            }
            None => e.top = Some(message),
        }
        e
    }

    /// The CLI's message, put next to the field whose flag (or side) it names first.
    pub fn of(message: String) -> FormErrors {
        let field = FLAGS
            .iter()
            .filter_map(|(flag, field)| message.find(flag).map(|at| (at, *field)))
            .min_by_key(|(at, _)| *at)
            .map(|(_, f)| f);
        FormErrors::one(field, message)
    }
}

/// The flags (and the sides' names in the CLI's messages) and the fields they come from.
const FLAGS: &[(&str, &str)] = &[
    ("--engine1", "engine1"),
    ("Engine1", "engine1"),
    ("--engine2", "engine2"),
    ("Engine2", "engine2"),
    ("--git", "git"),
    ("--source1", "source1"),
    ("--source2", "source2"),
    ("--build", "build"),
    ("--binary", "binary"),
    ("--option1", "options1"),
    ("--option2", "options2"),
    ("--book", "book"),
    ("book", "book"),
    ("--nodes", "limit"),
    ("--depth", "limit"),
    ("--movetime", "limit"),
    ("--tc", "limit"),
    ("--pairs", "pairs"),
    ("--sprt", "sprt"),
    ("SPRT", "sprt"),
    ("--seed", "seed"),
];

/// `spsa match`'s flags, to parse a form's command line with.
#[derive(Parser)]
#[command(name = "spsa match", no_binary_name = true)]
struct FormCommand {
    #[command(flatten)]
    args: MatchArgs,
}

/// The command line of `spsa match` the form stands for (engines and book in `folder`; a
/// patch test from git only when `git` allows it). Each flag and its value are one word,
/// `--flag=value`, so that a value which starts with `-` (an SPRT of `-5,0`) is not taken
/// for a flag.
pub fn match_command(
    form: &MatchForm,
    folder: &Path,
    git: bool,
) -> Result<Vec<String>, FormErrors> {
    let mut argv: Vec<String> = Vec::new();
    let file = |name: &str, field: &'static str| {
        form_file(folder, name)
            .map(|p| p.display().to_string())
            .map_err(|e| FormErrors::one(Some(field), e))
    };
    let from_git = [
        &form.git,
        &form.source1,
        &form.source2,
        &form.build,
        &form.binary,
    ]
    .iter()
    .any(|f| !f.trim().is_empty());
    if from_git {
        if !git {
            return Err(FormErrors::one(
                Some("git"),
                "this server builds no patch tests from git (it was started without --form-git)"
                    .into(),
            ));
        }
        let repo =
            form_repository(folder, &form.git).map_err(|e| FormErrors::one(Some("git"), e))?;
        argv.push(format!("--git={repo}"));
        for (flag, value) in [
            ("--source1", &form.source1),
            ("--source2", &form.source2),
            ("--build", &form.build),
            ("--binary", &form.binary),
        ] {
            if !value.trim().is_empty() {
                argv.push(format!("{flag}={}", value.trim()));
            }
        }
    }
    if !from_git || !form.engine1.trim().is_empty() {
        argv.push(format!("--engine1={}", file(&form.engine1, "engine1")?));
    }
    if !form.engine2.trim().is_empty() {
        argv.push(format!("--engine2={}", file(&form.engine2, "engine2")?));
    }
    for (flag, text) in [("--option1", &form.options1), ("--option2", &form.options2)] {
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            argv.push(format!("{flag}={line}"));
        }
    }
    if !form.book.trim().is_empty() {
        argv.push(format!("--book={}", file(&form.book, "book")?));
    }
    let limit = match form.limit.as_str() {
        "nodes" | "depth" | "movetime" | "tc" => form.limit.as_str(),
        _ => {
            return Err(FormErrors::one(
                Some("limit"),
                "choose nodes, depth, movetime or tc".into(),
            ));
        }
    };
    argv.push(format!("--{limit}={}", form.limit_value.trim()));
    for (flag, value) in [
        ("--pairs", &form.pairs),
        ("--sprt", &form.sprt),
        ("--seed", &form.seed),
    ] {
        if !value.trim().is_empty() {
            argv.push(format!("{flag}={}", value.trim()));
        }
    }
    Ok(argv)
}

/// The form's match, planned and checked as `spsa match --db` plans and checks it.
pub fn match_args(argv: &[String]) -> Result<MatchArgs, FormErrors> {
    FormCommand::try_parse_from(argv)
        .map(|c| c.args)
        .map_err(|e| {
            let text = e.to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string();
            FormErrors::of(first)
        })
}

/// A field's error, if it has one, beside it.
pub fn field(errors: &FormErrors, name: &str) -> Markup {
    html! {
        @if let Some(e) = errors.fields.get(name) {
            span class="error" id={ "error-" (name) } { " " (e) }
        }
    }
}

/// A form's row of one text input: its label, the input named (and with the id) `name`, and
/// the field's error beside it.
pub fn input_row(label: &str, name: &str, value: &str, errors: &FormErrors) -> Markup {
    html! {
        tr { td { (label) } td { input name=(name) id=(name) value=(value); (field(errors, name)) } }
    }
}

/// A form's limit row: a choice among `kinds` (the first while none is chosen), its value, and
/// the error of the field `limit`.
pub fn limit_row(kinds: &[&str], chosen: &str, value: &str, errors: &FormErrors) -> Markup {
    let chosen = if chosen.is_empty() { kinds[0] } else { chosen };
    html! {
        tr { td { "limit" } td {
            select name="limit" id="limit" {
                @for l in kinds { option value=(l) selected[*l == chosen] { (l) } }
            }
            " " input name="limit_value" id="limit_value" value=(value);
            (field(errors, "limit"))
        } }
    }
}

/// The files of the forms' folder a form may name, as the text above it lists them.
pub fn folder_list(files: &[String]) -> Markup {
    html! { @for (i, f) in files.iter().enumerate() { @if i > 0 { ", " } code { (f) } } }
}

/// The match form, filled with `form` and its errors.
pub fn match_page(
    session: &Session,
    form: &MatchForm,
    errors: &FormErrors,
    files: &[String],
    git: bool,
) -> Markup {
    html! {
        h1 { "new match" }
        p { "Played by the database's workers once approved; a member's waits for an approver. Engines and books: files of the server's folder ("
            (folder_list(files)) ")." }
        @if let Some(e) = &errors.top { p class="error" id="error-top" { (e) } }
        form method="post" action="/new/match" id="match-form" {
            input type="hidden" name="csrf" value=(session.csrf);
            table {
                (input_row("engine 1 (side A)", "engine1", &form.engine1, errors))
                (input_row("engine 2 (side B; engine 1 again if empty)", "engine2", &form.engine2, errors))
                @if git {
                    tr { td colspan="2" { b { "or a patch test from git" } " (instead of the engines: the server builds both revisions, then each worker builds them and must search alike)" } }
                    (input_row("repository (a URL, or a clone in the server's folder)", "git", &form.git, errors))
                    (input_row("revision of side A (the patch)", "source1", &form.source1, errors))
                    (input_row("revision of side B (the base)", "source2", &form.source2, errors))
                    (input_row("build command (run with sh -c in the tree)", "build", &form.build, errors))
                    (input_row("binary (its path in the tree)", "binary", &form.binary, errors))
                }
                tr { td { "side A's options, NAME=VALUE a line" } td { textarea name="options1" id="options1" rows="2" { (form.options1) } (field(errors, "options1")) } }
                tr { td { "side B's options" } td { textarea name="options2" id="options2" rows="2" { (form.options2) } (field(errors, "options2")) } }
                (input_row("book", "book", &form.book, errors))
                (limit_row(&["nodes", "depth", "movetime", "tc"], &form.limit, &form.limit_value, errors))
                (input_row("pairs (at most)", "pairs", &form.pairs, errors))
                (input_row("SPRT elo0,elo1[,alpha,beta]", "sprt", &form.sprt, errors))
                (input_row("seed", "seed", &form.seed, errors))
            }
            button id="create" { "create the match" }
        }
    }
}

/// The files of the forms' folder, by name.
pub fn folder_files(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_goes_next_to_the_field_it_names_first() {
        let e = FormErrors::of("--sprt `0`: expected ELO0,ELO1".into());
        assert!(e.fields.contains_key("sprt"), "{e:?}");
        let e = FormErrors::of("no engine at all".into());
        assert!(e.top.is_some() && e.fields.is_empty(), "{e:?}");
    }

    #[test]
    fn a_form_is_the_command_line_of_spsa_match() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("eng"), "").unwrap();
        let form = MatchForm {
            engine1: "eng".into(),
            options2: "KnightValue=150\n\nBishopValue=150\n".into(),
            limit: "nodes".into(),
            limit_value: "1000".into(),
            sprt: "0,10".into(),
            ..MatchForm::default()
        };
        let argv = match_command(&form, dir.path(), false).unwrap();
        let eng = dir.path().join("eng").display().to_string();
        assert_eq!(
            argv,
            [
                format!("--engine1={eng}"),
                "--option2=KnightValue=150".into(),
                "--option2=BishopValue=150".into(),
                "--nodes=1000".into(),
                "--sprt=0,10".into(),
            ]
        );
        let args = match_args(&argv).unwrap();
        assert_eq!(args.options2, ["KnightValue=150", "BishopValue=150"]);
        // A value that starts with `-` is a value, not a flag.
        let negative = MatchForm {
            sprt: "-5,0".into(),
            ..form.clone()
        };
        let args = match_args(&match_command(&negative, dir.path(), false).unwrap()).unwrap();
        assert_eq!(args.flags.sprt.as_deref(), Some("-5,0"));
        let args = match_args(&argv).unwrap();
        assert_eq!(args.flags.nodes, Some(1000));
        for bad in ["../eng", "/bin/sh", "nothing"] {
            let form = MatchForm {
                engine1: bad.into(),
                ..form.clone()
            };
            let e = match_command(&form, dir.path(), false).unwrap_err();
            assert!(e.fields.contains_key("engine1"), "{bad}: {e:?}");
        }
        let e = match_args(&["--engine1".into(), eng, "--nodes".into(), "x".into()])
            .err()
            .unwrap();
        assert!(e.fields.contains_key("limit"), "{e:?}");
    }

    #[test]
    fn a_patch_test_is_spsa_match_git_and_names_only_what_the_operator_allows() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("engine.git")).unwrap();
        std::fs::write(dir.path().join("book.epd"), "").unwrap();
        let form = MatchForm {
            git: "engine.git".into(),
            source1: "main".into(),
            source2: " base ".into(),
            build: "make -j2".into(),
            binary: "src/engine".into(),
            limit: "nodes".into(),
            limit_value: "1000".into(),
            ..MatchForm::default()
        };
        // Refused where the server was not started with --form-git, next to the repository.
        let e = match_command(&form, dir.path(), false).unwrap_err();
        assert!(e.fields["git"].contains("--form-git"), "{e:?}");
        let argv = match_command(&form, dir.path(), true).unwrap();
        let repo = dir.path().join("engine.git").display().to_string();
        assert_eq!(
            argv,
            [
                format!("--git={repo}"),
                "--source1=main".into(),
                "--source2=base".into(),
                "--build=make -j2".into(),
                "--binary=src/engine".into(),
                "--nodes=1000".into(),
            ]
        );
        let args = match_args(&argv).unwrap();
        assert_eq!(args.sources.source2.as_deref(), Some("base"));
        let url = MatchForm {
            git: "https://github.com/official-stockfish/Stockfish".into(),
            ..form.clone()
        };
        assert!(match_command(&url, dir.path(), true).is_ok());
        for bad in [
            "/etc",
            "../engine.git",
            "file:///etc",
            "ext::sh -c touch% /tmp/x",
            "book.epd",
            "nothing",
            "https://",
        ] {
            let form = MatchForm {
                git: bad.into(),
                ..form.clone()
            };
            let e = match_command(&form, dir.path(), true).unwrap_err();
            assert!(e.fields.contains_key("git"), "{bad}: {e:?}");
        }
        // The CLI's own refusal of a patch with an engine as well, next to a field it names.
        let both = MatchForm {
            engine1: "book.epd".into(),
            ..form.clone()
        };
        let argv = match_command(&both, dir.path(), true).unwrap();
        let e = match_args(&argv).err().unwrap();
        assert!(
            e.fields.contains_key("source1") || e.fields.contains_key("engine1"),
            "{e:?}"
        );
    }
}
