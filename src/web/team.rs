//! A team's front door on `spsa serve --db`: members sign in with their PostgreSQL role and
//! password, and act through a connection of their own.
//!
//! - **Sign-in**: the server opens a connection to the served database as the role, with the
//!   password given ([`crate::db::Db::sign_in`]): PostgreSQL checks it. Refused: no session. A
//!   role in neither `spsa_member` nor `spsa_approver` (a worker's) is refused too.
//! - **A session is that connection**, kept in this process's memory under a random id (the
//!   cookie), dropped at sign-out or expiry (idle or absolute), so every action a member takes
//!   is a database function called as that role, which checks what the role may do. The
//!   password is not kept (the connection's settings forget it once it is open), written or
//!   logged: a lost connection signs the session out.
//! - **CSRF**: each session has a random token; every form that changes something posts it,
//!   and the API takes it as `X-CSRF-Token`. A missing or another session's token is refused
//!   (403) before anything is done.
//!
//! Why not tower-sessions: its sessions are serialised key-value records in a store, and what a
//! session holds here is a live connection; its memory store also keeps expired records until
//! asked. The map below is the whole mechanism (ids and tokens of 32 bytes from the operating
//! system's generator through `rand`'s thread generator, compared in constant time).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, header};
use maud::{Markup, html};

use crate::db::conn::NOT_ALLOWED;
use crate::db::{Db, DbError};

/// The cookie that carries the session's id.
pub const COOKIE: &str = "spsa_session";

/// How sessions live and what the forms may name.
#[derive(Clone, Debug)]
pub struct TeamSettings {
    /// A session not used for this long is signed out.
    pub idle: Duration,
    /// A session is signed out this long after its sign-in, used or not.
    pub max_age: Duration,
    /// The folder whose files (engines, books) a member's form may name; None: no forms.
    pub files: Option<PathBuf>,
    /// Mark the cookie `Secure` (served behind TLS).
    pub secure_cookie: bool,
    /// The match form takes a patch test from git (`--form-git`): the server then builds the
    /// member's revisions with the member's build command before the match exists.
    pub git: bool,
}

impl Default for TeamSettings {
    fn default() -> Self {
        TeamSettings {
            idle: Duration::from_secs(30 * 60),
            max_age: Duration::from_secs(12 * 3600),
            files: None,
            secure_cookie: false,
            git: false,
        }
    }
}

/// A signed-in member: its role, what it may do, its CSRF token and its own connection.
pub struct Session {
    pub role: String,
    /// In `spsa_approver` (or the schema's owner): approves and rejects.
    pub approver: bool,
    pub csrf: String,
    pub db: tokio::sync::Mutex<Db>,
    created: Instant,
    last: Mutex<Instant>,
}

/// The sessions of this server.
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    pub settings: TeamSettings,
}

/// Run the future `f` makes on a blocking thread of the runtime and wait for it: a future that
/// calls [`Db::run`] with an async closure is not provably `Send`, which an axum handler's must
/// be. None when it panicked.
pub async fn detached<T, F>(f: impl FnOnce() -> F + Send + 'static) -> Option<T>
where
    T: Send + 'static,
    F: Future<Output = T>,
{
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || handle.block_on(f()))
        .await
        .ok()
}

/// 32 random bytes in hex.
pub fn token() -> String {
    use rand::Rng as _;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `a` and `b` are equal, in time independent of where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The session id the request's cookie names, if any.
fn cookie_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.to_string())
}

impl Sessions {
    pub fn new(settings: TeamSettings) -> Sessions {
        Sessions {
            map: Mutex::new(HashMap::new()),
            settings,
        }
    }

    fn expired(&self, s: &Session, now: Instant) -> bool {
        let last = *s.last.lock().unwrap_or_else(|e| e.into_inner());
        now.duration_since(s.created) > self.settings.max_age
            || now.duration_since(last) > self.settings.idle
    }

    /// The request's session: None when it has no cookie, an unknown (forged, signed out) one,
    /// or one that expired (then dropped, its connection closed). Using it counts as activity.
    pub fn get(&self, headers: &HeaderMap) -> Option<Arc<Session>> {
        let id = cookie_id(headers)?;
        let now = Instant::now();
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, s| !self.expired(s, now));
        let s = map
            .iter()
            .find(|(k, _)| same(k, &id))
            .map(|(_, s)| s.clone())?;
        *s.last.lock().unwrap_or_else(|e| e.into_inner()) = now;
        Some(s)
    }

    /// Keep `session`; its id for the cookie.
    pub fn insert(&self, role: String, approver: bool, db: Db) -> String {
        let id = token();
        let now = Instant::now();
        let s = Session {
            role,
            approver,
            csrf: token(),
            db: tokio::sync::Mutex::new(db),
            created: now,
            last: Mutex::new(now),
        };
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, s| !self.expired(s, now));
        map.insert(id.clone(), Arc::new(s));
        id
    }

    /// Sign the request's session out (its connection closes when the last request using it
    /// ends).
    pub fn remove(&self, headers: &HeaderMap) {
        if let Some(id) = cookie_id(headers) {
            let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
            map.retain(|k, _| !same(k, &id));
        }
    }

    /// The Set-Cookie value for session `id`.
    pub fn cookie(&self, id: &str) -> HeaderValue {
        let secure = if self.settings.secure_cookie {
            "; Secure"
        } else {
            ""
        };
        HeaderValue::from_str(&format!(
            "{COOKIE}={id}; Path=/; HttpOnly; SameSite=Strict{secure}"
        ))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    /// The Set-Cookie value that clears the cookie.
    pub fn cleared() -> HeaderValue {
        HeaderValue::from_static("spsa_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
    }
}

/// Why a sign-in was refused, as the page says it (never with the password).
#[derive(Debug)]
pub enum SignInRefused {
    /// The database refused the role with this password (or the role may not log in).
    Password,
    /// The role is in neither `spsa_member` nor `spsa_approver`.
    NotMember(String),
    /// Something else went wrong (the database unreachable).
    Failed(String),
}

impl std::fmt::Display for SignInRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SignInRefused::Password => f.write_str("the database refused this role and password"),
            SignInRefused::NotMember(role) => write!(
                f,
                "role {role} is in neither spsa_member nor spsa_approver: it cannot sign in here (a worker's role only plays)"
            ),
            SignInRefused::Failed(why) => write!(f, "cannot sign in: {why}"),
        }
    }
}

/// Open `role`'s connection with `password` and read what it may do: (connection, approver).
pub async fn sign_in(base: &Db, role: &str, password: &str) -> Result<(Db, bool), SignInRefused> {
    if role.is_empty() || role.len() > 63 || password.is_empty() {
        return Err(SignInRefused::Password);
    }
    let mut db = match base.sign_in(role, password).await {
        Ok(db) => db,
        // The server's word on the role and password (28P01, 28000: the same for a role that
        // does not exist, so the page does not tell which).
        Err(DbError::NotReached { reason, .. })
            if [
                "password",
                "authentication",
                "not permitted to log in",
                "does not exist",
                "pg_hba.conf",
            ]
            .iter()
            .any(|w| reason.contains(w)) =>
        {
            return Err(SignInRefused::Password);
        }
        Err(e) => return Err(SignInRefused::Failed(e.to_string())),
    };
    let groups = db
        .run("read the role's groups", async |c: &tokio_postgres::Client| {
            let r = c
                .query_one(
                    "SELECT coalesce(to_regrole('spsa_member') IS NOT NULL
                                     AND pg_has_role(current_user, 'spsa_member', 'MEMBER'), false),
                            coalesce(to_regrole('spsa_approver') IS NOT NULL
                                     AND pg_has_role(current_user, 'spsa_approver', 'MEMBER'), false),
                            coalesce((SELECT pg_has_role(current_user, n.nspowner, 'MEMBER')
                                        FROM pg_namespace n WHERE n.nspname = 'spsa'), false)",
                    &[],
                )
                .await?;
            Ok((r.get::<_, bool>(0), r.get::<_, bool>(1), r.get::<_, bool>(2)))
        })
        .await
        .map_err(|e| SignInRefused::Failed(e.to_string()))?;
    let (member, approver, owner) = groups;
    if !(member || approver || owner) {
        return Err(SignInRefused::NotMember(role.to_string()));
    }
    Ok((db, approver || owner))
}

/// A file of the forms' folder named by a form: a plain file name (no folder, no `..`) of a
/// file there; the message says what is wrong.
pub fn form_file(folder: &Path, name: &str) -> Result<PathBuf, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("name a file".into());
    }
    if name.contains('/') || name.contains('\\') || name.starts_with('.') {
        return Err(format!(
            "`{name}`: a file name of the server's folder, no path"
        ));
    }
    let path = folder.join(name);
    if !path.is_file() {
        return Err(format!("`{name}`: no such file in the server's folder"));
    }
    Ok(path)
}

/// The repository a patch test names: a URL `git fetch` takes over the network (`https://`,
/// `http://`, `ssh://`, `git://`), or the name of a folder in the server's forms folder (a
/// clone the operator keeps there). A path elsewhere on the server, `file://` or a transport
/// helper (`ext::`) is refused: a member names what the operator let them name.
pub fn form_repository(folder: &Path, name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("name a repository".into());
    }
    if let Some((scheme, rest)) = name.split_once("://") {
        return match scheme {
            "https" | "http" | "ssh" | "git"
                if !rest.is_empty() && !name.contains(char::is_whitespace) =>
            {
                Ok(name.to_string())
            }
            _ => Err(format!(
                "`{name}`: a repository URL is https://, http://, ssh:// or git://"
            )),
        };
    }
    if name.contains('/') || name.contains('\\') || name.contains("::") || name.starts_with('.') {
        return Err(format!(
            "`{name}`: a URL, or the name of a repository in the server's folder, no path"
        ));
    }
    let path = folder.join(name);
    if !path.is_dir() {
        return Err(format!(
            "`{name}`: no such repository in the server's folder"
        ));
    }
    Ok(path.display().to_string())
}

/// The line at the top of every page: who is signed in, and the buttons that go with it.
pub fn bar(session: Option<&Session>, forms: bool) -> Markup {
    html! {
        div class="team" {
            @match session {
                Some(s) => {
                    "signed in as " b { (s.role) }
                    @if s.approver { " (approver)" }
                    @if forms { " · " a href="/new/match" { "new match" } " · " a href="/new/tune" id="new-tune" { "new tune" } }
                    form method="post" action="/signout" style="display:inline" {
                        input type="hidden" name="csrf" value=(s.csrf);
                        " " button id="signout" { "sign out" }
                    }
                }
                None => { a href="/signin" id="signin-link" { "sign in" } }
            }
        }
    }
}

/// The sign-in page, with `error` above the form when a sign-in was refused.
pub fn signin_page(error: Option<&str>) -> Markup {
    html! {
        h1 { "sign in" }
        p { "Your PostgreSQL role's name and password: the database checks them." }
        @if let Some(e) = error { p class="error" id="error" { (e) } }
        form method="post" action="/signin" {
            label { "role " input type="text" name="role" id="role" autocomplete="username"; }
            " "
            label { "password " input type="password" name="password" id="password" autocomplete="current-password"; }
            " " button id="go" { "sign in" }
        }
    }
}

/// What became of a member's action.
#[derive(Debug, PartialEq)]
pub enum Acted {
    Done,
    /// The database refused the role (403).
    Refused(String),
    /// The run is in no state to take it, or there is no such run (409).
    Conflict(String),
    /// The request itself is wrong (400).
    Bad(String),
}

/// An action on shared run `id`, as the session's role: each is the database function the CLI
/// calls too, which checks the caller (a member acts on its own runs, an approver on any).
pub async fn act(
    session: &Session,
    id: i64,
    action: &str,
    reason: Option<&str>,
    value: Option<&str>,
) -> Acted {
    let reason = reason.map(str::trim).unwrap_or_default().to_string();
    let value = value.map(str::trim).unwrap_or_default().to_string();
    let (sql, second) = match action {
        "approve" => ("SELECT spsa.approve($1)::text", None),
        "reject" if reason.is_empty() => {
            return Acted::Bad("reject: say why (the member sees the reason)".into());
        }
        "reject" => ("SELECT spsa.reject($1, $2)::text", Some(reason)),
        "pause" => ("SELECT spsa.pause($1)::text", None),
        "resume" => ("SELECT spsa.resume($1)::text", None),
        "stop" => ("SELECT spsa.stop($1)::text", None),
        "priority" if value.parse::<i32>().is_err() => {
            return Acted::Bad("priority: the value must be a whole number".into());
        }
        "priority" => (
            "SELECT spsa.set_share($1, $2::text::int, NULL)::text",
            Some(value),
        ),
        _ => {
            return Acted::Bad(
                "actions: approve, reject (with a reason), pause, resume, stop, priority".into(),
            );
        }
    };
    let mut db = session.db.lock().await;
    let done = db
        .run(action, async |c: &tokio_postgres::Client| {
            let row = match &second {
                Some(v) => c.query_one(sql, &[&id, v]).await?,
                None => c.query_one(sql, &[&id]).await?,
            };
            Ok(row.get::<_, Option<String>>(0))
        })
        .await;
    match done {
        Ok(Some(t)) if t == "false" => {
            Acted::Conflict(format!("run {id} is in no state to {action}"))
        }
        Ok(_) => Acted::Done,
        Err(DbError::Refused { code, message, .. }) if code == NOT_ALLOWED => {
            Acted::Refused(message)
        }
        Err(DbError::Refused { message, .. }) => Acted::Conflict(message),
        Err(e) => Acted::Conflict(e.to_string()),
    }
}

/// The team's part of a run's page: author, approval, the buttons the role may use, the audit
/// trail, and a match's result.
pub fn run_panel(v: &super::db::TeamView, session: Option<&Session>) -> Markup {
    let mine = session.is_some_and(|s| s.role == v.author);
    let approver = session.is_some_and(|s| s.approver);
    let live = matches!(v.state.as_str(), "active" | "paused");
    html! {
        div class="team-run" id="team-run" {
            h2 { (v.kind) " " (v.id) ": " (v.name) }
            table {
                tr { td { "author" } td id="author" { (v.author) } }
                tr { td { "approval" } td id="approval" { (v.approval)
                    @if let Some(a) = &v.approver { " by " span id="approver" { (a) } } } }
                @if let Some(r) = &v.reason { tr { td { "reason" } td id="reason" { (r) } } }
                tr { td { "state" } td id="state" { (v.state) } }
            }
            @if let Some((text, pent)) = &v.result {
                pre id="result" { (text) }
                p { "pentanomial " span id="pentanomial" { (format!("{pent:?}")) } }
            }
            @if let Some(s) = session {
                form method="post" action={ "/runs/db-" (v.id) "/team" } id="actions" {
                    input type="hidden" name="csrf" value=(s.csrf);
                    @if approver && v.approval == "waiting" {
                        button name="action" value="approve" id="approve" { "approve" }
                        " reason " input name="reason" id="reason-input";
                        " " button name="action" value="reject" id="reject" { "reject" }
                    }
                    @if (mine || approver) && live {
                        " " button name="action" value="stop" id="stop" { "stop" }
                    }
                    @if mine && live {
                        @if v.state == "active" { " " button name="action" value="pause" id="pause" { "pause" } }
                        @if v.state == "paused" { " " button name="action" value="resume" id="resume" { "resume" } }
                        " priority " input name="value" id="priority-input" type="number" value="0" style="width:5em";
                        " " button name="action" value="priority" id="priority" { "set priority" }
                    }
                }
            }
            h3 { "audit trail" }
            table id="audit" {
                tr { th { "when" } th { "who" } th { "what" } th { "detail" } }
                @for [at, who, what, detail] in &v.audit {
                    tr { td { (at) } td { (who) } td { (what) } td { (detail) } }
                }
            }
        }
    }
}

/// The team's list: every shared run with its author and approval.
pub fn team_list(runs: &[super::db::TeamView]) -> Markup {
    html! {
        h2 { "the team's runs" }
        table id="team-list" {
            tr { th { "run" } th { "kind" } th { "name" } th { "author" } th { "approval" } th { "state" } }
            @for r in runs {
                tr {
                    td { a href={ "/runs/db-" (r.id) } { (r.id) } }
                    td { (r.kind) } td { (r.name) } td { (r.author) }
                    td { (r.approval) @if let Some(a) = &r.approver { " by " (a) } }
                    td { (r.state) }
                }
            }
        }
    }
}
