//! The tune form (`/new/tune`) and the tunes `spsa serve --db URL --form-files DIR` hosts.
//!
//! A tune needs an owner process (the run loop that hands out iterations and applies results),
//! and a browser has none, so the server hosts it: a form is written as a run folder,
//! `DIR/tunes/NAME/` (`tune.toml`, and `tune.var` from the pasted OpenBench/fishtest lines or a
//! copy of a variables file of the folder), checked by the CLI's own loaders ([`Config::load`],
//! [`crate::vars::load`]; their messages shown next to the field they name; nothing created and
//! no folder left on a bad form), and run by the CLI's own code: this server's executable,
//! `spsa run tune.toml --db URL --author ROLE --no-play`, with the server's own connection
//! (the schema's owner) in the member's name, its output in `owner.log` there. The database
//! checks that ROLE is a member or an approver (`spsa.author_for`), so the run waits for an
//! approver as the member's own `spsa run --db` would.
//!
//! The server keeps its children: one that exits is reaped, and its exit written at the end of
//! its log, which the run's page shows. At its start, the server starts again (`--resume`) the
//! owner process of every hosted tune not over whose process is not still running (its pid in
//! `owner.pid`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::Shared;
use super::forms::{FormErrors, field, folder_files, folder_list, input_row, limit_row};
use super::members::require;
use super::team::{self, Session, form_file};
use crate::config::Config;
use crate::db::Db;

/// The folder of hosted tunes inside the forms' folder.
pub const TUNES: &str = "tunes";
/// How long a new tune's owner process may take to create its run (it measures the engine).
const CREATE_WITHIN: Duration = Duration::from_secs(120);

/// A tune form as posted.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct TuneForm {
    #[serde(default)]
    pub csrf: String,
    /// The run's name: its folder's.
    #[serde(default)]
    pub name: String,
    /// OpenBench/fishtest lines, `name, int|float, value, min, max, c_end, r_end`.
    #[serde(default)]
    pub params: String,
    /// Or a variables file of the folder.
    #[serde(default)]
    pub vars_file: String,
    #[serde(default)]
    pub engine: String,
    #[serde(default)]
    pub book: String,
    /// `nodes` or `tc`.
    #[serde(default)]
    pub limit: String,
    #[serde(default)]
    pub limit_value: String,
    #[serde(default)]
    pub iterations: String,
    #[serde(default)]
    pub pairs: String,
    /// A verification after the last iteration (`[verify]`): its most pairs and its SPRT
    /// (both empty: none).
    #[serde(default)]
    pub verify_pairs: String,
    #[serde(default)]
    pub verify_sprt: String,
}

/// An owner process the server started or found running.
#[derive(Clone, Debug)]
pub struct HostedTune {
    pub dir: PathBuf,
    pub author: String,
    pub pid: Option<u32>,
    /// Whether this server started it (and reaps it); else it was found running at the
    /// server's start, left by an earlier server.
    pub child: bool,
    /// How it ended (None: running, as far as this server knows).
    pub exit: Option<String>,
}

/// The tunes this server hosts.
pub struct Hosting {
    /// `DIR/tunes`.
    root: PathBuf,
    /// The forms' folder.
    files: PathBuf,
    /// The server's own database URL (the schema's owner), handed to its children.
    url: String,
    /// This server's executable.
    exe: PathBuf,
    runs: Mutex<BTreeMap<i64, HostedTune>>,
}

fn err(field: Option<&'static str>, message: String) -> FormErrors {
    FormErrors::one(field, message)
}

/// Words of the loaders' messages and the fields they are about.
const WORDS: &[(&str, &str)] = &[
    ("tune.var", "params"),
    ("variable", "params"),
    ("option", "params"),
    ("Engine1", "engine"),
    ("engine1", "engine"),
    ("book", "book"),
    ("nodes", "limit"),
    ("base_time_ms", "limit"),
    ("inc_time_ms", "limit"),
    ("pairs_per_iteration", "pairs"),
    ("iterations", "iterations"),
    ("verify", "verify"),
    ("sprt", "verify"),
];

/// A loader's message about the files of `dir` next to the field it names first (else above
/// the form), the server's folders left out of it.
fn placed(message: String, dir: &Path) -> FormErrors {
    let message = message.replace(&format!("{}/", dir.display()), "");
    let field = WORDS
        .iter()
        .filter_map(|(w, f)| message.find(w).map(|at| (at, *f)))
        .min_by_key(|(at, _)| *at)
        .map(|(_, f)| f);
    err(field, message)
}

/// A string as TOML writes it (quoted, escaped).
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A whole number of at least `min` from field `field`.
fn number(text: &str, field: &'static str, min: u64) -> Result<u64, FormErrors> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(err(
            Some(field),
            format!("a whole number of at least {min}, not `{}`", text.trim()),
        )),
    }
}

/// The run folder's files as the form makes them: (tune.toml, tune.var), paths absolute.
pub fn tune_files(form: &TuneForm, files: &Path) -> Result<(String, String), FormErrors> {
    let engine = form_file(files, &form.engine).map_err(|e| err(Some("engine"), e))?;
    let vars = match (
        form.params.trim().is_empty(),
        form.vars_file.trim().is_empty(),
    ) {
        (false, true) => format!("{}\n", form.params.trim()),
        (true, false) => {
            let path = form_file(files, &form.vars_file).map_err(|e| err(Some("vars_file"), e))?;
            std::fs::read_to_string(&path).map_err(|e| err(Some("vars_file"), e.to_string()))?
        }
        _ => {
            return Err(err(
                Some("params"),
                "paste the parameters (OpenBench/fishtest lines) or name a variables file of the folder, one of the two".into(),
            ));
        }
    };
    let iterations = number(&form.iterations, "iterations", 1)?;
    let pairs = number(&form.pairs, "pairs", 1)?;
    let limit = match form.limit.as_str() {
        "nodes" => format!("nodes = {}\n", number(&form.limit_value, "limit", 1)?),
        "tc" => {
            let text = form.limit_value.trim();
            let (base, inc) = text.split_once('+').unwrap_or((text, "0"));
            match (base.trim().parse::<u64>(), inc.trim().parse::<u64>()) {
                (Ok(b), Ok(i)) if b > 0 => format!("base_time_ms = {b}\ninc_time_ms = {i}\n"),
                _ => {
                    return Err(err(
                        Some("limit"),
                        format!("tc `{text}`: BASE_MS+INC_MS in milliseconds, e.g. 10000+100"),
                    ));
                }
            }
        }
        _ => return Err(err(Some("limit"), "choose nodes or tc".into())),
    };
    let mut verify = String::new();
    if !form.verify_pairs.trim().is_empty() {
        let n = number(&form.verify_pairs, "verify", 1)?;
        verify.push_str(&format!("pairs = {n}\n"));
    }
    if !form.verify_sprt.trim().is_empty() {
        verify.push_str(&format!("sprt = {}\n", quoted(form.verify_sprt.trim())));
    }
    if !verify.is_empty() {
        verify.insert_str(0, "\n[verify]\n");
    }
    let book = if form.book.trim().is_empty() {
        String::new()
    } else {
        let path = form_file(files, &form.book).map_err(|e| err(Some("book"), e))?;
        format!("book = {}\n", quoted(&path.display().to_string()))
    };
    let config = format!(
        "# Made by spsa serve's tune form; its owner process is `spsa run tune.toml --db URL --author ROLE --no-play`.\n\
         variables = \"tune.var\"\nlog = \"tune.log\"\niterations = {iterations}\nA = {}\n\
         gamma = 0.101\nalpha = 0.602\npairs_per_iteration = {pairs}\n\n\
         [engine1]\ncommand = {}\n\n[games]\n{book}{limit}{verify}",
        (iterations / 10).max(1),
        quoted(&engine.display().to_string()),
    );
    Ok((config, vars))
}

/// A run name: 1 to 64 letters, digits, `-` and `_`.
fn check_name(name: &str) -> Result<&str, FormErrors> {
    let name = name.trim();
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(name)
    } else {
        Err(err(
            Some("name"),
            format!("`{name}`: 1 to 64 letters, digits, - and _"),
        ))
    }
}

/// Write the form's folder under a name of its own, check it with the CLI's loaders and move it
/// to `root/NAME`: its config's path. A bad form leaves nothing.
fn make_folder(form: &TuneForm, files: &Path, root: &Path) -> Result<PathBuf, FormErrors> {
    let name = check_name(&form.name)?;
    let (config, vars) = tune_files(form, files)?;
    let dir = root.join(name);
    if dir.exists() {
        return Err(err(
            Some("name"),
            format!("`{name}`: the server hosts a tune of this name already"),
        ));
    }
    let io = |e: std::io::Error| err(None, format!("{}: {e}", root.display()));
    std::fs::create_dir_all(root).map_err(io)?;
    let staging = root.join(format!(".new-{}", &team::token()[..16]));
    std::fs::create_dir(&staging).map_err(io)?;
    let checked = (|| {
        std::fs::write(staging.join("tune.toml"), &config).map_err(io)?;
        std::fs::write(staging.join("tune.var"), &vars).map_err(io)?;
        let loaded = Config::load(&staging.join("tune.toml"))
            .map_err(|e| placed(e.to_string(), &staging))?;
        if loaded.games.is_none() || loaded.simulate {
            return Err(err(None, "the config plays no games".into()));
        }
        crate::vars::load(&loaded.variables).map_err(|e| placed(e.to_string(), &staging))?;
        loaded
            .check_engine_files()
            .map_err(|e| placed(e.to_string(), &staging))?;
        std::fs::rename(&staging, &dir).map_err(io)
    })();
    if checked.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    checked?;
    Ok(dir)
}

/// A line of the server's at the end of the owner's log in `dir`.
fn append(dir: &Path, said: &str) {
    use std::io::Write as _;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("owner.log"))
    {
        let _ = writeln!(f, "spsa serve: {said}");
    }
}

/// The last `n` lines of a file ("" when it cannot be read).
pub fn last_lines(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

impl Hosting {
    /// The tunes of `files/tunes`, run with `url` by this executable.
    pub fn new(files: &Path, url: &str) -> std::io::Result<Hosting> {
        Ok(Hosting {
            root: files.join(TUNES),
            files: files.to_path_buf(),
            url: url.to_string(),
            exe: std::env::current_exe()?,
            runs: Mutex::new(BTreeMap::new()),
        })
    }

    fn runs(&self) -> std::sync::MutexGuard<'_, BTreeMap<i64, HostedTune>> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whatever this server knows of run `id`'s owner process.
    pub fn get(&self, id: i64) -> Option<HostedTune> {
        self.runs().get(&id).cloned()
    }

    /// Start the owner process of the tune in `dir` for `author` (`--resume`: of a run made
    /// before), its output appended to `owner.log`, and reap it when it exits: its pid.
    fn start(
        &self,
        dir: &Path,
        author: &str,
        resume: bool,
    ) -> std::io::Result<tokio::process::Child> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("owner.log"))?;
        let mut cmd = tokio::process::Command::new(&self.exe);
        cmd.args([
            "run",
            "tune.toml",
            "--db",
            &self.url,
            "--author",
            author,
            "--no-play",
        ]);
        if resume {
            cmd.arg("--resume");
        }
        let child = cmd
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        if let Some(pid) = child.id() {
            std::fs::write(dir.join("owner.pid"), format!("{pid}\n"))?;
        }
        Ok(child)
    }

    /// Keep run `id`'s owner process and reap it when it exits (its exit said at the end of its
    /// log and kept for the run's page).
    fn keep(
        self: &Arc<Self>,
        id: i64,
        dir: PathBuf,
        author: String,
        child: Option<tokio::process::Child>,
        pid: Option<u32>,
    ) {
        self.runs().insert(
            id,
            HostedTune {
                dir: dir.clone(),
                author,
                pid,
                child: child.is_some(),
                exit: None,
            },
        );
        let Some(mut child) = child else {
            return;
        };
        let hosting = self.clone();
        tokio::spawn(async move {
            let said = match child.wait().await {
                Ok(status) => format!("the owner process exited: {status}"),
                Err(e) => format!("the owner process could not be waited for: {e}"),
            };
            tracing::info!("spsa serve: run {id}: {said}");
            append(&dir, &said);
            let _ = std::fs::remove_file(dir.join("owner.pid"));
            if let Some(h) = hosting.runs().get_mut(&id) {
                h.exit = Some(said);
            }
        });
    }

    /// The run of the config in `dir` made for `author`, as the server's connection finds it:
    /// (id, state).
    async fn find(db: &mut Db, dir: &Path, author: &str) -> anyhow::Result<Option<(i64, String)>> {
        let name = std::fs::canonicalize(dir.join("tune.toml"))?
            .display()
            .to_string();
        let author = author.to_string();
        Ok(db
            .run("find a hosted tune", async |c: &tokio_postgres::Client| {
                let row = c
                    .query_opt(
                        "SELECT id, state FROM spsa.find_run_as($1, $2)",
                        &[&name, &author],
                    )
                    .await?;
                Ok(row.map(|r| (r.get(0), r.get(1))))
            })
            .await?)
    }

    /// At the server's start: every hosted tune whose run is not over gets its owner process
    /// again (`--resume`), unless the one in its `owner.pid` still runs. Says what it did on
    /// stderr.
    pub async fn restart(self: &Arc<Self>, base: &Db) {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        let mut db = base.sibling();
        for dir in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
            let Ok(author) = std::fs::read_to_string(dir.join("author")) else {
                continue;
            };
            let author = author.trim().to_string();
            let found = match Self::find(&mut db, &dir, &author).await {
                Ok(Some(f)) => f,
                Ok(None) => continue,
                Err(e) => {
                    eprintln!("spsa serve: {}: {e:#}", dir.display());
                    continue;
                }
            };
            let (id, state) = found;
            if !matches!(state.as_str(), "active" | "paused") {
                self.keep(id, dir, author, None, None);
                continue;
            }
            let running = std::fs::read_to_string(dir.join("owner.pid"))
                .ok()
                .and_then(|p| p.trim().parse::<u32>().ok())
                .filter(|&pid| !crate::platform::process_ended(pid));
            if let Some(pid) = running {
                eprintln!(
                    "spsa serve: run {id} ({}): its owner process {pid} still runs",
                    dir.display()
                );
                self.keep(id, dir, author, None, Some(pid));
                continue;
            }
            match self.start(&dir, &author, true) {
                Ok(child) => {
                    let pid = child.id();
                    let said = format!(
                        "run {id}: owner process started again (--resume) at the server's start"
                    );
                    eprintln!("spsa serve: {said} ({})", dir.display());
                    append(&dir, &said);
                    self.keep(id, dir, author, Some(child), pid);
                }
                Err(e) => eprintln!(
                    "spsa serve: run {id} ({}): cannot start its owner: {e}",
                    dir.display()
                ),
            }
        }
    }

    /// Make the form's tune for `session`'s role: its folder, its owner process, and the run
    /// that process creates (its id), or what is wrong (no folder left then).
    async fn create(
        self: &Arc<Self>,
        base: &Db,
        form: &TuneForm,
        author: &str,
    ) -> Result<i64, FormErrors> {
        let dir = make_folder(form, &self.files, &self.root)?;
        let fail = |e: FormErrors| {
            let _ = std::fs::remove_dir_all(&dir);
            e
        };
        std::fs::write(dir.join("author"), format!("{author}\n"))
            .map_err(|e| fail(err(None, e.to_string())))?;
        let mut db = base.sibling();
        // A run of this folder's config from before (its folder removed since) is not this one.
        match Self::find(&mut db, &dir, author).await {
            Ok(None) => {}
            Ok(Some((id, _))) => {
                return Err(fail(err(
                    Some("name"),
                    format!("the database holds run {id} of this name already: choose another"),
                )));
            }
            Err(e) => return Err(fail(err(None, format!("{e:#}")))),
        }
        let mut child = self
            .start(&dir, author, false)
            .map_err(|e| fail(err(None, format!("cannot start the owner process: {e}"))))?;
        let pid = child.id();
        let until = Instant::now() + CREATE_WITHIN;
        loop {
            if let Ok(Some((id, _))) = Self::find(&mut db, &dir, author).await {
                self.keep(id, dir.clone(), author.to_string(), Some(child), pid);
                return Ok(id);
            }
            if let Ok(Some(status)) = child.try_wait() {
                let log = last_lines(&dir.join("owner.log"), 5);
                let said = log
                    .lines()
                    .rev()
                    .find(|l| l.starts_with("error") || l.contains(": "))
                    .unwrap_or(&log)
                    .trim_start_matches("error: ")
                    .to_string();
                return Err(fail(placed(
                    format!("{said} (the owner process exited: {status})"),
                    &dir,
                )));
            }
            if Instant::now() > until {
                let _ = child.kill().await;
                return Err(fail(err(
                    None,
                    format!(
                        "the owner process made no run in {} s",
                        CREATE_WITHIN.as_secs()
                    ),
                )));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The run page's part for hosted run `id`: its owner process and the end of its log.
    pub fn panel(&self, id: i64) -> Option<Markup> {
        let h = self.get(id)?;
        let log = h.dir.join("owner.log");
        Some(html! {
            div class="hosted" id="hosted" {
                h3 { "owner process (hosted by this server)" }
                p id="owner-process" {
                    @match (&h.exit, h.pid) {
                        (Some(e), _) => { (e) }
                        (None, Some(pid)) if !h.child && crate::platform::process_ended(pid) => {
                            "ended (started by an earlier server: its log says how)"
                        }
                        (None, Some(pid)) => { "running, pid " (pid) }
                        (None, None) => { "not running (the run is over)" }
                    }
                    " · `spsa run tune.toml --db URL --author " (h.author) " --no-play` in " code { (h.dir.display()) }
                }
                p { "the end of " code { (log.display()) } ":" }
                pre id="owner-log" { (last_lines(&log, 12)) }
            }
        })
    }
}

/// The tune form, filled with `form` and its errors.
pub fn tune_page(
    session: &Session,
    form: &TuneForm,
    errors: &FormErrors,
    files: &[String],
) -> Markup {
    html! {
        h1 { "new tune" }
        p { "SPSA of the engine's options (its θ+ and θ− play each other), its iterations played by the database's workers once approved (a member's waits for an approver). This server runs its owner process in your name. Engines, books and variables files: files of the server's folder ("
            (folder_list(files)) ")." }
        @if let Some(e) = &errors.top { p class="error" id="error-top" { (e) } }
        form method="post" action="/new/tune" id="tune-form" {
            input type="hidden" name="csrf" value=(session.csrf);
            table {
                (input_row("name", "name", &form.name, errors))
                tr { td { "parameters, OpenBench/fishtest lines: name, int|float, value, min, max, c_end, r_end" }
                     td { textarea name="params" id="params" rows="6" cols="60" { (form.params) } (field(errors, "params")) } }
                (input_row("or a variables file", "vars_file", &form.vars_file, errors))
                (input_row("engine", "engine", &form.engine, errors))
                (input_row("book", "book", &form.book, errors))
                (limit_row(&["nodes", "tc"], &form.limit, &form.limit_value, errors))
                (input_row("iterations", "iterations", &form.iterations, errors))
                (input_row("pairs per iteration", "pairs", &form.pairs, errors))
                tr { td { "verification after the last iteration, tuned against the start on held-out openings: most pairs, SPRT elo0,elo1 (both empty: none)" } td {
                    input name="verify_pairs" id="verify_pairs" value=(form.verify_pairs) style="width:6em";
                    " " input name="verify_sprt" id="verify_sprt" value=(form.verify_sprt);
                    (field(errors, "verify"))
                } }
            }
            button id="create" { "create the tune" }
        }
    }
}

/// `GET /new/tune`.
pub(super) async fn page(State(app): State<Shared>, headers: HeaderMap) -> Response {
    let Some(hosting) = app.hosting.clone() else {
        return super::not_found();
    };
    let Some(session) = app.session(&headers) else {
        return Redirect::to("/signin").into_response();
    };
    let form = TuneForm {
        limit: "nodes".into(),
        pairs: "1".into(),
        ..TuneForm::default()
    };
    let body = tune_page(
        &session,
        &form,
        &FormErrors::default(),
        &folder_files(&hosting.files),
    );
    app.page(StatusCode::OK, "new tune", Some(&session), &body)
}

/// `POST /new/tune`: the tune made and its owner process started, or the form again with what
/// is wrong (nothing made).
pub(super) async fn create(
    State(app): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<TuneForm>,
) -> Response {
    let (Some(hosting), Some(shared)) = (app.hosting.clone(), app.shared.as_ref()) else {
        return super::not_found();
    };
    let session = match require(&app, &headers, Some(&form.csrf)) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let base = shared.base().await;
    let (author, posted) = (session.role.clone(), form.clone());
    let made = team::detached(move || async move { hosting.create(&base, &posted, &author).await })
        .await
        .unwrap_or_else(|| {
            Err(err(
                None,
                "the tune could not be made (see the server's log)".into(),
            ))
        });
    match made {
        Ok(id) => {
            tracing::info!("spsa serve: {} created tune {id} (hosted)", session.role);
            Redirect::to(&format!("/runs/db-{id}")).into_response()
        }
        Err(e) => {
            let files = app
                .hosting
                .as_ref()
                .map(|h| folder_files(&h.files))
                .unwrap_or_default();
            let body = tune_page(&session, &form, &e, &files);
            app.page(StatusCode::BAD_REQUEST, "new tune", Some(&session), &body)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(params: &str) -> TuneForm {
        TuneForm {
            name: "t1".into(),
            params: params.into(),
            engine: "eng".into(),
            limit: "nodes".into(),
            limit_value: "500".into(),
            iterations: "4".into(),
            pairs: "2".into(),
            ..TuneForm::default()
        }
    }

    #[test]
    fn a_form_is_a_folder_the_clis_loaders_take_or_nothing() {
        let files = tempfile::tempdir().unwrap();
        std::fs::write(files.path().join("eng"), "").unwrap();
        let root = files.path().join(TUNES);
        let good = "KnightValue, int, 300, 200, 400, 10, 0.002\nBishopValue, int, 300, 200, 400, 10, 0.002";
        let dir = make_folder(&form(good), files.path(), &root).unwrap();
        let config = Config::load(&dir.join("tune.toml")).unwrap();
        assert_eq!(config.schedule.iterations, 4);
        assert_eq!(config.pairs_per_iteration, 2);
        let vars = crate::vars::load(&config.variables).unwrap();
        assert_eq!(vars.len(), 2);
        assert!(config.verify.is_empty());
        let e = make_folder(&form(good), files.path(), &root).unwrap_err();
        assert!(e.fields["name"].contains("already"), "{e:?}");

        // min > max: the loader's message next to the parameters; no folder left.
        let bad = form("KnightValue, int, 300, 400, 200, 10, 0.002");
        let bad = TuneForm {
            name: "t2".into(),
            ..bad
        };
        let e = make_folder(&bad, files.path(), &root).unwrap_err();
        assert!(e.fields["params"].contains("tune.var:1"), "{e:?}");
        let left: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["t1"]);
        let e = make_folder(
            &TuneForm {
                name: "../x".into(),
                ..form(good)
            },
            files.path(),
            &root,
        )
        .unwrap_err();
        assert!(e.fields.contains_key("name"), "{e:?}");
        let e = make_folder(
            &TuneForm {
                name: "t3".into(),
                engine: "/bin/sh".into(),
                ..form(good)
            },
            files.path(),
            &root,
        )
        .unwrap_err();
        assert!(e.fields.contains_key("engine"), "{e:?}");

        // A verification step: the config's [verify], checked by its loader.
        let verified = TuneForm {
            name: "t4".into(),
            verify_pairs: "20".into(),
            verify_sprt: "0,10".into(),
            ..form(good)
        };
        let dir = make_folder(&verified, files.path(), &root).unwrap();
        let config = Config::load(&dir.join("tune.toml")).unwrap();
        assert_eq!(config.verify.len(), 1);
        let bad = TuneForm {
            name: "t5".into(),
            verify_sprt: "zero".into(),
            ..form(good)
        };
        let e = make_folder(&bad, files.path(), &root).unwrap_err();
        assert!(e.fields.contains_key("verify"), "{e:?}");
    }
}
