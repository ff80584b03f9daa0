//! `spsa serve`: a live web page over shared runs (read from PostgreSQL) and local runs (read
//! from their files while they are written), and a JSON API with the same data.
//!
//! - `GET /`: the runs list; `GET /runs/{id}`: a run's page. Their live parts are fetched again
//!   every 2 s from `/fragment/...?v=VERSION`, which answers 204 while nothing changed.
//! - `GET /api/runs`, `GET /api/runs/{id}`: the same data as JSON ([`model`]); `GET
//!   /api/matches`: the matches read from their record files.
//! - `POST /api/runs/{id}/pause|resume|stop|priority|throughput` (bearer token) and the form behind the
//!   admin buttons, `POST /runs/{id}/admin`: only with an admin token; else 403.
//!
//! Read-only by default. Everything users and workers wrote is escaped (by [`html`]'s templates); every
//! page is sent with a Content-Security-Policy that runs only the page's own script. The server
//! holds no state per client: the local runs' last readings and a bounded rate history only.

pub mod db;
pub mod forms;
pub mod html;
pub mod local;
mod members;
pub mod model;
pub mod team;
pub mod tune_form;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use self::db::{Action, SharedRuns};
use self::local::{LocalMatch, LocalRun};
use self::model::{MatchSummary, RunDetail, RunSummary};

/// What to serve.
pub struct Served {
    pub local: Vec<LocalRun>,
    /// Matches, each read from its record file.
    pub matches: Vec<LocalMatch>,
    pub shared: Option<SharedRuns>,
    /// Admin actions are possible only with a token.
    pub admin_token: Option<String>,
    /// Members' sessions and forms (with `shared` only).
    pub team: team::TeamSettings,
    /// The tunes made in the browser, whose owner processes this server runs (with `shared`
    /// and the forms' folder only).
    pub hosting: Option<Arc<tune_form::Hosting>>,
}

struct App {
    local: Vec<Arc<Mutex<LocalRun>>>,
    matches: Vec<Mutex<LocalMatch>>,
    shared: Option<SharedRuns>,
    admin_token: Option<String>,
    /// Members' sessions: with a database only.
    sessions: Option<team::Sessions>,
    hosting: Option<Arc<tune_form::Hosting>>,
}

type Shared = Arc<App>;

/// The router of the page and the API over `served`.
pub fn router(served: Served) -> Router {
    let app = Arc::new(App {
        local: served
            .local
            .into_iter()
            .map(|r| Arc::new(Mutex::new(r)))
            .collect(),
        matches: served.matches.into_iter().map(Mutex::new).collect(),
        sessions: served
            .shared
            .is_some()
            .then(|| team::Sessions::new(served.team)),
        shared: served.shared,
        admin_token: served.admin_token,
        hosting: served.hosting,
    });
    Router::new()
        .route("/", get(list_page))
        .route("/fragment/runs", get(list_fragment))
        .route("/runs/{id}", get(run_page))
        .route("/fragment/runs/{id}", get(run_fragment))
        .route("/runs/{id}/admin", post(admin_form))
        .route("/api/runs", get(api_list))
        .route("/api/runs/{id}", get(api_run))
        .route("/api/runs/{id}/{action}", post(api_action))
        .route("/api/matches", get(api_matches))
        .route("/signin", get(members::signin_page).post(members::signin))
        .route("/signout", post(members::signout))
        .route(
            "/new/match",
            get(members::new_match_page).post(members::new_match),
        )
        .route("/runs/{id}/team", post(members::team_form))
        .route("/new/tune", get(tune_form::page).post(tune_form::create))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .with_state(app)
}

/// Serve until Ctrl-C on a listener already bound.
pub async fn serve(listener: tokio::net::TcpListener, served: Served) -> Result<()> {
    axum::serve(listener, router(served))
        .with_graceful_shutdown(crate::platform::ctrl_c())
        .await?;
    Ok(())
}

/// An error page: the message (which never holds a password: database URLs are redacted in
/// every error of `db`), escaped.
fn failure(e: anyhow::Error) -> Response {
    tracing::warn!("spsa serve: {e:#}");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{e:#}\n"),
    )
        .into_response()
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "no such run\n").into_response()
}

/// A per-response nonce for the page's one script.
fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", h.finish())
}

fn html_response(body: String, nonce: Option<&str>) -> Response {
    let csp = match nonce {
        Some(n) => format!(
            "default-src 'none'; script-src 'nonce-{n}'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        ),
        None => "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'".into(),
    };
    let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

impl App {
    fn source_label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(s) = &self.shared {
            parts.push(format!("database {}", s.url()));
        }
        if !self.local.is_empty() {
            parts.push(format!("{} local run(s)", self.local.len()));
        }
        if !self.matches.is_empty() {
            parts.push(format!("{} match(es)", self.matches.len()));
        }
        parts.join(", ")
    }

    /// A local run, read again if its files changed.
    async fn local_run<T: Send + 'static>(
        run: &Arc<Mutex<LocalRun>>,
        f: fn(&LocalRun) -> T,
    ) -> Result<T> {
        let run = run.clone();
        tokio::task::spawn_blocking(move || {
            let mut r = run.lock().unwrap_or_else(|e| e.into_inner());
            r.refresh()?;
            Ok(f(&r))
        })
        .await?
    }

    async fn list(&self) -> Result<Vec<RunSummary>> {
        let mut runs = Vec::new();
        for r in &self.local {
            runs.push(App::local_run(r, LocalRun::summary).await?);
        }
        if let Some(s) = &self.shared {
            runs.extend(s.list().await?);
        }
        Ok(runs)
    }

    /// The matches, each record read again if it changed (a small file: read in place), then
    /// the database's.
    async fn matches(&self) -> Result<Vec<MatchSummary>> {
        let mut out: Vec<MatchSummary> = self
            .matches
            .iter()
            .map(|m| {
                let mut m = m.lock().unwrap_or_else(|e| e.into_inner());
                m.refresh();
                m.summary()
            })
            .collect();
        if let Some(s) = &self.shared {
            out.extend(s.matches().await?);
        }
        Ok(out)
    }

    /// A run's page data with the variables `query` asks for (see [`model::focus`]).
    async fn detail(&self, id: &str, query: &model::VarQuery) -> Result<Option<RunDetail>> {
        let mut d = self.whole_detail(id).await?;
        if let Some(d) = d.as_mut() {
            model::focus(d, query);
        }
        Ok(d)
    }

    async fn whole_detail(&self, id: &str) -> Result<Option<RunDetail>> {
        if let Some(n) = id.strip_prefix("local-") {
            let Some(run) = n
                .parse::<usize>()
                .ok()
                .and_then(|n| self.local.get(n.wrapping_sub(1)))
            else {
                return Ok(None);
            };
            return Ok(Some(App::local_run(run, LocalRun::detail).await?));
        }
        match (
            id.strip_prefix("db-").and_then(|n| n.parse::<i64>().ok()),
            &self.shared,
        ) {
            (Some(n), Some(s)) => s.detail(n).await,
            _ => Ok(None),
        }
    }

    /// Whether `given` is the admin token (compared in time independent of where they differ).
    fn admin(&self, given: Option<&str>) -> bool {
        match (&self.admin_token, given) {
            (Some(t), Some(g)) if t.len() == g.len() => {
                t.bytes()
                    .zip(g.bytes())
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                    == 0
            }
            _ => false,
        }
    }

    fn admin_enabled(&self) -> bool {
        self.admin_token.is_some() && self.shared.is_some()
    }
}

#[derive(Deserialize)]
struct Poll {
    v: Option<String>,
    /// A run page's search and page of variables (see [`model::VarQuery`]).
    q: Option<String>,
    page: Option<usize>,
}

impl Poll {
    fn vars(&self) -> model::VarQuery {
        model::VarQuery {
            q: self.q.clone(),
            page: self.page,
        }
    }
}

async fn list_page(State(app): State<Shared>, headers: HeaderMap) -> Response {
    match app.list().await {
        Ok(runs) => {
            let matches = match app.matches().await {
                Ok(m) => m,
                Err(e) => return failure(e),
            };
            let extra = match members::list_extra(&app).await {
                Ok(x) => x,
                Err(e) => return failure(e),
            };
            let v = model::list_version(&runs, &matches);
            let live = html::runs_list(&runs, &matches, &v, &app.source_label());
            let bar = app.bar(app.session(&headers).as_deref());
            let n = nonce();
            html_response(
                html::page(
                    "spsa runs",
                    "/fragment/runs",
                    &live,
                    &bar,
                    extra.as_ref(),
                    &n,
                ),
                Some(&n),
            )
        }
        Err(e) => failure(e),
    }
}

async fn list_fragment(State(app): State<Shared>, Query(p): Query<Poll>) -> Response {
    match app.list().await {
        Ok(runs) => {
            let matches = match app.matches().await {
                Ok(m) => m,
                Err(e) => return failure(e),
            };
            let v = model::list_version(&runs, &matches);
            if p.v.as_deref() == Some(v.as_str()) {
                return StatusCode::NO_CONTENT.into_response();
            }
            html_response(
                html::runs_list(&runs, &matches, &v, &app.source_label()).into_string(),
                None,
            )
        }
        Err(e) => failure(e),
    }
}

async fn run_page(
    State(app): State<Shared>,
    Path(id): Path<String>,
    Query(p): Query<Poll>,
    headers: HeaderMap,
) -> Response {
    let query = p.vars();
    match app.detail(&id, &query).await {
        Ok(Some(d)) => {
            let v = d.version();
            let live = html::run_page(&d, &v);
            let admin =
                (app.admin_enabled() && id.starts_with("db-")).then(|| html::admin_panel(&id));
            let session = app.session(&headers);
            let team = match members::run_panel(&app, &id, session.as_deref()).await {
                Ok(t) => t,
                Err(e) => return failure(e),
            };
            let extra = (admin.is_some() || team.is_some()).then(|| {
                maud::html! { @if let Some(t) = &team { (t) } @if let Some(a) = &admin { (a) } }
            });
            let bar = app.bar(session.as_deref());
            let n = nonce();
            let src = format!("/fragment/runs/{}{}", d.summary.id, query.query_string());
            html_response(
                html::page(&d.summary.name, &src, &live, &bar, extra.as_ref(), &n),
                Some(&n),
            )
        }
        Ok(None) => members::run_team_page(&app, &id, &headers)
            .await
            .unwrap_or_else(not_found),
        Err(e) => failure(e),
    }
}

async fn run_fragment(
    State(app): State<Shared>,
    Path(id): Path<String>,
    Query(p): Query<Poll>,
) -> Response {
    match app.detail(&id, &p.vars()).await {
        Ok(Some(d)) => {
            let v = d.version();
            if p.v.as_deref() == Some(v.as_str()) {
                return StatusCode::NO_CONTENT.into_response();
            }
            html_response(html::run_page(&d, &v).into_string(), None)
        }
        Ok(None) => not_found(),
        Err(e) => failure(e),
    }
}

async fn api_list(State(app): State<Shared>) -> Response {
    match app.list().await {
        Ok(runs) => axum::Json(runs).into_response(),
        Err(e) => failure(e),
    }
}

async fn api_matches(State(app): State<Shared>) -> Response {
    match app.matches().await {
        Ok(m) => axum::Json(m).into_response(),
        Err(e) => failure(e),
    }
}

async fn api_run(
    State(app): State<Shared>,
    Path(id): Path<String>,
    Query(p): Query<Poll>,
) -> Response {
    match app.detail(&id, &p.vars()).await {
        Ok(Some(d)) => axum::Json(d).into_response(),
        Ok(None) => not_found(),
        Err(e) => failure(e),
    }
}

fn forbidden() -> Response {
    (
        StatusCode::FORBIDDEN,
        "forbidden: admin token missing or wrong\n",
    )
        .into_response()
}

/// Apply an admin action on a shared run `db-N`.
async fn act(app: &App, id: &str, action: Action) -> Response {
    let (Some(n), Some(shared)) = (
        id.strip_prefix("db-").and_then(|n| n.parse::<i64>().ok()),
        &app.shared,
    ) else {
        return not_found();
    };
    match shared.act(n, action).await {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => (
            StatusCode::CONFLICT,
            "no such run, or not in a state that takes this action\n",
        )
            .into_response(),
        Err(e) => failure(e),
    }
}

/// An action by its name, with the value it takes (a priority, a throughput share); the
/// message says what is wrong.
fn parse_action(name: &str, value: Option<&str>) -> Result<Action, String> {
    let value = || value.map(str::trim).filter(|v| !v.is_empty());
    match name {
        "pause" => Ok(Action::Pause),
        "resume" => Ok(Action::Resume),
        "stop" => Ok(Action::Stop),
        "priority" => value()
            .and_then(|v| v.parse().ok())
            .map(Action::Priority)
            .ok_or_else(|| "priority: the value must be a whole number\n".into()),
        "throughput" => crate::config::check::throughput_text(value().unwrap_or_default())
            .map(Action::Throughput)
            .map_err(|e| format!("throughput: {e}\n")),
        _ => Err("actions: pause, resume, stop, priority?value=N, throughput?value=P\n".into()),
    }
}

#[derive(Deserialize)]
struct PriorityQuery {
    value: Option<String>,
    /// A rejection's reason (a member's `reject`).
    reason: Option<String>,
}

async fn api_action(
    State(app): State<Shared>,
    Path((id, action)): Path<(String, String)>,
    Query(q): Query<PriorityQuery>,
    headers: HeaderMap,
) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if token.is_none()
        && let Some(r) = members::api_member_action(
            &app,
            &headers,
            &id,
            &action,
            q.reason.as_deref(),
            q.value.as_deref(),
        )
        .await
    {
        return r;
    }
    if !app.admin(token) {
        return forbidden();
    }
    match parse_action(&action, q.value.as_deref()) {
        Ok(a) => act(&app, &id, a).await,
        Err(why) => (StatusCode::BAD_REQUEST, why).into_response(),
    }
}

#[derive(Deserialize)]
struct AdminForm {
    token: String,
    action: String,
    priority: Option<String>,
    throughput: Option<String>,
}

async fn admin_form(
    State(app): State<Shared>,
    Path(id): Path<String>,
    Form(f): Form<AdminForm>,
) -> Response {
    if !app.admin(Some(&f.token)) {
        return forbidden();
    }
    let value = match f.action.as_str() {
        "throughput" => f.throughput.as_deref(),
        _ => f.priority.as_deref(),
    };
    let a = match parse_action(&f.action, value) {
        Ok(a) => a,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    let r = act(&app, &id, a).await;
    if r.status() == StatusCode::NO_CONTENT {
        Redirect::to(&format!("/runs/{}", model::url_escape(&id))).into_response()
    } else {
        r
    }
}

/// The address to print: the one bound.
pub fn url_of(addr: SocketAddr) -> String {
    format!("http://{addr}/")
}
