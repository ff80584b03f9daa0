//! The pages and posts of a team's members (see [`super::team`]): sign-in and sign-out, the
//! match form, and the buttons of a run's page.

use std::sync::Arc;

use axum::extract::{Form, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;

use super::forms::{self, FormErrors, MatchForm};
use super::team::{self, Acted, Session};
use super::{App, Shared, html_response};

/// A page of the team's own (no live part, no script).
pub(super) fn static_page(title: &str, bar: &Markup, body: &Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            (super::html::head(title))
            body {
                p { a href="/" { "runs" } }
                (bar)
                (body)
            }
        }
    }
    .into_string()
}

impl App {
    /// The request's session (None: signed out, or no database served).
    pub(super) fn session(&self, headers: &HeaderMap) -> Option<Arc<Session>> {
        self.sessions.as_ref()?.get(headers)
    }

    /// The line at the top of a page, for the request's session.
    pub(super) fn bar(&self, session: Option<&Session>) -> Markup {
        match &self.sessions {
            Some(s) => team::bar(session, s.settings.files.is_some()),
            None => html! {},
        }
    }

    pub(super) fn page(
        &self,
        status: StatusCode,
        title: &str,
        session: Option<&Session>,
        body: &Markup,
    ) -> Response {
        let mut r = html_response(static_page(title, &self.bar(session), body), None);
        *r.status_mut() = status;
        r
    }
}

/// The session of a request that changes something, with the form's token: else 403, nothing
/// done.
pub(super) fn require(
    app: &App,
    headers: &HeaderMap,
    csrf: Option<&str>,
) -> Result<Arc<Session>, Box<Response>> {
    let Some(session) = app.session(headers) else {
        return Err(Box::new(refuse(
            app,
            None,
            "not signed in (or the session expired): sign in again",
        )));
    };
    match csrf {
        Some(t) if team::same(t, &session.csrf) => Ok(session),
        _ => Err(Box::new(refuse(
            app,
            Some(&session),
            "refused: the form's token is missing or not this session's (reload the page)",
        ))),
    }
}

fn refuse(app: &App, session: Option<&Session>, why: &str) -> Response {
    app.page(
        StatusCode::FORBIDDEN,
        "refused",
        session,
        &html! { p class="error" id="error" { (why) } },
    )
}

pub(super) async fn signin_page(State(app): State<Shared>, headers: HeaderMap) -> Response {
    if app.sessions.is_none() {
        return super::not_found();
    }
    let s = app.session(&headers);
    app.page(
        StatusCode::OK,
        "sign in",
        s.as_deref(),
        &team::signin_page(None),
    )
}

#[derive(Deserialize)]
pub(super) struct SignIn {
    #[serde(default)]
    role: String,
    #[serde(default)]
    password: String,
}

pub(super) async fn signin(State(app): State<Shared>, Form(f): Form<SignIn>) -> Response {
    let (Some(sessions), Some(shared)) = (&app.sessions, &app.shared) else {
        return super::not_found();
    };
    let role = f.role.trim();
    let base = shared.base().await;
    let (who, password) = (role.to_string(), f.password);
    let signed = team::detached(move || async move { team::sign_in(&base, &who, &password).await })
        .await
        .unwrap_or_else(|| Err(team::SignInRefused::Failed("see the server's log".into())));
    match signed {
        Ok((db, approver)) => {
            tracing::info!("spsa serve: {role} signed in");
            let id = sessions.insert(role.to_string(), approver, db);
            let mut r = Redirect::to("/").into_response();
            r.headers_mut()
                .insert(header::SET_COOKIE, sessions.cookie(&id));
            r
        }
        Err(why) => {
            tracing::info!("spsa serve: sign-in of role {role} refused: {why}");
            app.page(
                StatusCode::FORBIDDEN,
                "sign in",
                None,
                &team::signin_page(Some(&why.to_string())),
            )
        }
    }
}

#[derive(Deserialize)]
pub(super) struct Csrf {
    #[serde(default)]
    csrf: Option<String>,
}

pub(super) async fn signout(
    State(app): State<Shared>,
    headers: HeaderMap,
    Form(f): Form<Csrf>,
) -> Response {
    let Some(sessions) = &app.sessions else {
        return super::not_found();
    };
    if let Err(r) = require(&app, &headers, f.csrf.as_deref()) {
        return *r;
    }
    sessions.remove(&headers);
    let mut r = Redirect::to("/").into_response();
    r.headers_mut()
        .insert(header::SET_COOKIE, team::Sessions::cleared());
    r
}

/// The forms' folder and whether patch tests from git are taken; None: no forms here.
fn form_settings(app: &App) -> Option<(std::path::PathBuf, bool)> {
    let settings = &app.sessions.as_ref()?.settings;
    Some((settings.files.clone()?, settings.git))
}

pub(super) async fn new_match_page(State(app): State<Shared>, headers: HeaderMap) -> Response {
    let Some((folder, git)) = form_settings(&app) else {
        return super::not_found();
    };
    let Some(session) = app.session(&headers) else {
        return Redirect::to("/signin").into_response();
    };
    let form = MatchForm {
        limit: "nodes".into(),
        ..MatchForm::default()
    };
    let body = forms::match_page(
        &session,
        &form,
        &FormErrors::default(),
        &forms::folder_files(&folder),
        git,
    );
    app.page(StatusCode::OK, "new match", Some(&session), &body)
}

pub(super) async fn new_match(
    State(app): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<MatchForm>,
) -> Response {
    let Some((folder, git)) = form_settings(&app) else {
        return super::not_found();
    };
    let session = match require(&app, &headers, Some(&form.csrf)) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let bad = |errors: FormErrors| {
        let files = forms::folder_files(&folder);
        let body = forms::match_page(&session, &form, &errors, &files, git);
        app.page(StatusCode::BAD_REQUEST, "new match", Some(&session), &body)
    };
    let argv = match forms::match_command(&form, &folder, git) {
        Ok(a) => a,
        Err(e) => return bad(e),
    };
    let member = session.clone();
    let made = team::detached(move || async move { create_match(&member, &argv).await })
        .await
        .unwrap_or_else(|| {
            Err(FormErrors::of(
                "the match could not be made (see the server's log)".into(),
            ))
        });
    match made {
        Ok(id) => {
            tracing::info!("spsa serve: {} created match {id}", session.role);
            Redirect::to(&format!("/runs/db-{id}")).into_response()
        }
        Err(e) => bad(e),
    }
}

/// Plan the match of `argv` (`spsa match`'s flags) as the CLI does, make it and create it on
/// the member's connection.
async fn create_match(session: &Session, argv: &[String]) -> Result<i64, FormErrors> {
    let args = forms::match_args(argv)?;
    let (plan, games) = args
        .plan_and_games()
        .await
        .map_err(|e| FormErrors::of(format!("{e:#}")))?;
    let serving = crate::db::match_create::Serving {
        lease_seconds: args.lease_timeout,
        throughput: args.throughput,
        reference_nps: args.reference_nps,
    };
    let name = crate::db::match_create::match_name(&plan);
    let new = crate::db::match_create::new_match(name, &plan, &games, None, None, serving)
        .await
        .map_err(|e| FormErrors::of(format!("{e:#}")))?;
    let mut db = session.db.lock().await;
    let created = crate::db::matches::create(&mut db, &new)
        .await
        .map_err(|e| FormErrors::of(format!("{e:#}")))?;
    Ok(created.0)
}

#[derive(Deserialize)]
pub(super) struct ActForm {
    #[serde(default)]
    csrf: Option<String>,
    #[serde(default)]
    action: String,
    reason: Option<String>,
    value: Option<String>,
}

/// A status and a page for what became of an action.
fn acted(app: &App, session: &Session, id: &str, a: Acted) -> Response {
    let (status, why) = match a {
        Acted::Done => {
            return Redirect::to(&format!("/runs/{}", super::model::url_escape(id)))
                .into_response();
        }
        Acted::Refused(m) => (
            StatusCode::FORBIDDEN,
            format!("refused by the database: {m}"),
        ),
        Acted::Conflict(m) => (StatusCode::CONFLICT, m),
        Acted::Bad(m) => (StatusCode::BAD_REQUEST, m),
    };
    app.page(
        status,
        "refused",
        Some(session),
        &html! { p class="error" id="error" { (why) } },
    )
}

pub(super) async fn team_form(
    State(app): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(f): Form<ActForm>,
) -> Response {
    let session = match require(&app, &headers, f.csrf.as_deref()) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let Some(n) = id.strip_prefix("db-").and_then(|n| n.parse::<i64>().ok()) else {
        return super::not_found();
    };
    let member = session.clone();
    let a = team::detached(move || async move {
        team::act(
            &member,
            n,
            &f.action,
            f.reason.as_deref(),
            f.value.as_deref(),
        )
        .await
    })
    .await
    .unwrap_or_else(|| Acted::Conflict("the action failed (see the server's log)".into()));
    acted(&app, &session, &id, a)
}

/// An API action as the signed-in member (the cookie, and the session's token in
/// `X-CSRF-Token`): None when the request carries no session.
pub(super) async fn api_member_action(
    app: &App,
    headers: &HeaderMap,
    id: &str,
    action: &str,
    reason: Option<&str>,
    value: Option<&str>,
) -> Option<Response> {
    let session = app.session(headers)?;
    let token = headers.get("x-csrf-token").and_then(|v| v.to_str().ok());
    if !token.is_some_and(|t| team::same(t, &session.csrf)) {
        return Some(
            (
                StatusCode::FORBIDDEN,
                "forbidden: X-CSRF-Token missing or not this session's\n",
            )
                .into_response(),
        );
    }
    let Some(n) = id.strip_prefix("db-").and_then(|n| n.parse::<i64>().ok()) else {
        return Some(super::not_found());
    };
    let (action, reason, value) = (
        action.to_string(),
        reason.map(String::from),
        value.map(String::from),
    );
    let acted = team::detached(move || async move {
        team::act(&session, n, &action, reason.as_deref(), value.as_deref()).await
    })
    .await
    .unwrap_or_else(|| Acted::Conflict("the action failed (see the server's log)".into()));
    Some(match acted {
        Acted::Done => StatusCode::NO_CONTENT.into_response(),
        Acted::Refused(m) => (StatusCode::FORBIDDEN, format!("{m}\n")).into_response(),
        Acted::Conflict(m) => (StatusCode::CONFLICT, format!("{m}\n")).into_response(),
        Acted::Bad(m) => (StatusCode::BAD_REQUEST, format!("{m}\n")).into_response(),
    })
}

/// A shared run's team part for its page (None: not served, or no such run).
pub(super) async fn run_panel(
    app: &App,
    id: &str,
    session: Option<&Session>,
) -> anyhow::Result<Option<Markup>> {
    let (Some(n), Some(shared)) = (
        id.strip_prefix("db-").and_then(|n| n.parse::<i64>().ok()),
        &app.shared,
    ) else {
        return Ok(None);
    };
    let hosted = app.hosting.as_ref().and_then(|h| h.panel(n));
    Ok(shared
        .team(n)
        .await?
        .map(|v| html! { (team::run_panel(&v, session)) @if let Some(h) = &hosted { (h) } }))
}

/// A shared run that has no live page of its own (a match): its team part alone.
pub(super) async fn run_team_page(app: &App, id: &str, headers: &HeaderMap) -> Option<Response> {
    let session = app.session(headers);
    match run_panel(app, id, session.as_deref()).await {
        Ok(Some(panel)) => Some(app.page(StatusCode::OK, id, session.as_deref(), &panel)),
        Ok(None) => None,
        Err(e) => Some(super::failure(e)),
    }
}

/// The list page's team part: the runs with their authors (the bar goes at the top).
pub(super) async fn list_extra(app: &App) -> anyhow::Result<Option<Markup>> {
    let (Some(_), Some(shared)) = (&app.sessions, &app.shared) else {
        return Ok(None);
    };
    let runs = shared.team_list().await?;
    Ok(Some(team::team_list(&runs)))
}
