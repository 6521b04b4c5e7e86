//! The dashboard's routes and their HTML. Every page is rendered on the server with maud, which
//! escapes every interpolated value; nothing under `src/serve/` writes markup unescaped (a test
//! keeps it so). Text that came from an agent, a model, a repository or a person is also
//! redacted (the one redactor) before it is shown.

mod board;
mod events;
mod learnings;
mod stats;
mod task;

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use maud::{DOCTYPE, Markup, html};

use super::App;
use super::hub::blocking;
use crate::error::Error;
use crate::store::Store;

pub use board::{BoardKey, board_payload};
pub use task::task_live;

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(board::board_page))
        .route("/tasks", get(board::list_page).post(board::add_task))
        .route("/tasks/{id}", get(task::task_page))
        .route("/tasks/{id}/retry", post(task::retry))
        .route("/tasks/{id}/kill", post(task::kill))
        .route("/tasks/{id}/delete", post(task::delete))
        .route("/learnings", get(learnings::learnings_page))
        .route("/learnings/{id}", get(learnings::learning_page))
        .route("/learnings/{id}/edit", post(learnings::edit))
        .route("/learnings/{id}/archive", post(learnings::archive))
        .route("/learnings/{id}/restore", post(learnings::restore))
        .route("/learnings/{id}/promote", post(learnings::promote))
        .route("/drafts", get(learnings::drafts_page))
        .route("/stats", get(stats::stats_page))
        .route("/events/board", get(events::board_events))
        .route("/events/tasks/{id}", get(events::task_events))
        .route("/api/hub", get(hub_census))
        .route("/login", get(login_page).post(login))
        .route("/assets/app.css", get(super::assets::css))
        .route("/assets/app.js", get(super::assets::js))
        .fallback(not_found)
        // The guard has read (and bounded) every state-changing body already.
        .layer(DefaultBodyLimit::max(super::security::MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            super::security::guard,
        ))
        .with_state(app)
}

/// A page that could not be shown: a status and one line saying why and what to do.
pub struct Failure(StatusCode, String);

impl Failure {
    pub fn bad_request(text: impl Into<String>) -> Failure {
        Failure(StatusCode::BAD_REQUEST, text.into())
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let status = match &e {
            Error::TaskNotFound(_) => StatusCode::NOT_FOUND,
            Error::Usage(text) if text.starts_with("no learning ") => StatusCode::NOT_FOUND,
            e if e.is_user_error() => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::error!("dashboard: {e}");
        }
        Failure(status, e.to_string())
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let Failure(status, text) = self;
        let title = status.canonical_reason().unwrap_or("Error");
        let page = html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    title { "gza · " (title) }
                    link rel="stylesheet" href="/assets/app.css";
                }
                body {
                    main.narrow {
                        h1 { (title) }
                        p.error { (crate::redact::redact(&text)) }
                        p { a href="/" { "Back to the board" } }
                    }
                }
            }
        };
        (status, page).into_response()
    }
}

async fn not_found() -> Failure {
    Failure(
        StatusCode::NOT_FOUND,
        "no such page; the board is at /".into(),
    )
}

/// Read the store on a blocking thread with a pooled connection.
pub async fn read<T: Send + 'static>(
    app: &Arc<App>,
    f: impl FnOnce(&App, &Store) -> Result<T, Error> + Send + 'static,
) -> Result<T, Failure> {
    let app = app.clone();
    Ok(blocking(move || app.db.read(&app.project, |store| f(&app, store))).await?)
}

/// Run an action the way a command does: its own connection, orphans reaped, spool taken in.
pub async fn act<T: Send + 'static>(
    app: &Arc<App>,
    f: impl FnOnce(&App, &Store) -> Result<T, Error> + Send + 'static,
) -> Result<T, Failure> {
    let app = app.clone();
    Ok(blocking(move || {
        let store = crate::actions::open_store(&app.project, |note| {
            tracing::info!("{note}");
        })?;
        f(&app, &store)
    })
    .await?)
}

/// What a finished action says on the page it leads to: a closed set, so no text from a URL is
/// ever shown as a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flash {
    Added(i64),
    Retried(i64),
    Killed(i64),
    Deleted(i64),
    Promoted(i64),
    Archived(i64),
    Restored(i64),
    Edited(i64),
    Held(i64),
    Unchanged(i64),
}

impl Flash {
    pub fn encode(self) -> String {
        let (kind, n) = match self {
            Flash::Added(n) => ("added", n),
            Flash::Retried(n) => ("retried", n),
            Flash::Killed(n) => ("killed", n),
            Flash::Deleted(n) => ("deleted", n),
            Flash::Promoted(n) => ("promoted", n),
            Flash::Archived(n) => ("archived", n),
            Flash::Restored(n) => ("restored", n),
            Flash::Edited(n) => ("edited", n),
            Flash::Held(n) => ("held", n),
            Flash::Unchanged(n) => ("unchanged", n),
        };
        format!("{kind}-{n}")
    }

    pub fn decode(text: &str) -> Option<Flash> {
        let (kind, n) = text.split_once('-')?;
        let n: i64 = n.parse().ok()?;
        Some(match kind {
            "added" => Flash::Added(n),
            "retried" => Flash::Retried(n),
            "killed" => Flash::Killed(n),
            "deleted" => Flash::Deleted(n),
            "promoted" => Flash::Promoted(n),
            "archived" => Flash::Archived(n),
            "restored" => Flash::Restored(n),
            "edited" => Flash::Edited(n),
            "held" => Flash::Held(n),
            "unchanged" => Flash::Unchanged(n),
            _ => return None,
        })
    }

    fn text(self) -> String {
        let l = crate::learning::label;
        match self {
            Flash::Added(n) => format!("Added task {n}"),
            Flash::Retried(n) => format!("Created task {n} (a retry)"),
            Flash::Killed(n) => format!("Task {n} killed"),
            Flash::Deleted(n) => format!("Deleted task {n}"),
            Flash::Promoted(n) => format!("Promoted {}: it is active", l(n)),
            Flash::Archived(n) => format!("Archived {}", l(n)),
            Flash::Restored(n) => format!("Restored {}", l(n)),
            Flash::Edited(n) => format!("Updated {}", l(n)),
            Flash::Held(n) => format!(
                "Updated {}; it now reads like an instruction, so it is held as a draft until accepted",
                l(n)
            ),
            Flash::Unchanged(n) => format!("{} already had that status", l(n)),
        }
    }
}

/// Redirect after an action (303: the browser follows with GET), with what it did.
pub fn done(to: &str, flash: Flash) -> Response {
    let sep = if to.contains('?') { '&' } else { '?' };
    Redirect::to(&format!("{to}{sep}flash={}", flash.encode())).into_response()
}

/// Which page is which in the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Board,
    Learnings,
    Drafts,
    Stats,
    None,
}

/// The frame of every page.
pub fn layout(app: &App, nav: Nav, title: &str, flash: Option<&str>, body: Markup) -> Markup {
    let project = app
        .project
        .root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let flash = flash.and_then(Flash::decode);
    let item = |this: Nav, href: &str, name: &str| {
        html! {
            a href=(href) class=[(nav == this).then_some("here")] { (name) }
        }
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="csrf-token" content=(app.security.csrf());
                title { (title) " · gza" }
                link rel="stylesheet" href="/assets/app.css";
                script src="/assets/app.js" defer {}
            }
            body {
                header.top {
                    a.brand href="/" { "gza" }
                    span.project { (project) }
                    nav {
                        (item(Nav::Board, "/", "Board"))
                        (item(Nav::Learnings, "/learnings", "Learnings"))
                        (item(Nav::Drafts, "/drafts", "Drafts"))
                        (item(Nav::Stats, "/stats", "Stats"))
                    }
                    @if app.read_only {
                        span.badge.readonly title="gza serve --read-only" { "read-only" }
                    }
                }
                main {
                    @if let Some(flash) = flash {
                        p.flash role="status" { (flash.text()) }
                    }
                    (body)
                }
            }
        }
    }
}

/// The hidden field every form carries.
pub fn csrf_field(app: &App) -> Markup {
    html! { input type="hidden" name="csrf" value=(app.security.csrf()); }
}

/// A one-button form posting to `action` (nothing under `--read-only`).
pub fn button(app: &App, action: &str, label: &str, confirm: Option<&str>, class: &str) -> Markup {
    if app.read_only {
        return html! {};
    }
    html! {
        form.inline method="post" action=(action) data-confirm=[confirm] {
            (csrf_field(app))
            button type="submit" class=(class) { (label) }
        }
    }
}

/// Text from outside gza (an agent, a model, a repository, a person), made safe to show:
/// secrets redacted and control characters (terminal escapes among them) dropped; maud escapes
/// the rest.
pub fn shown(text: &str) -> String {
    crate::redact::redact(text)
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

/// A query string from pairs (values percent-encoded).
pub fn query(pairs: &[(&str, &str)]) -> String {
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .copied()
        .collect();
    if pairs.is_empty() {
        return String::new();
    }
    format!(
        "?{}",
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    )
}

/// A form or query value, with an empty one read as absent.
pub fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

async fn hub_census(State(app): State<Arc<App>>) -> Response {
    use std::sync::atomic::Ordering;
    let (boards, tasks, streams) = app.hub.census();
    let c = &app.hub.counters;
    axum::Json(serde_json::json!({
        "board_views": boards,
        "task_views": tasks,
        "streams": streams,
        "ticks": c.ticks.load(Ordering::Relaxed),
        "changes": c.changes.load(Ordering::Relaxed),
        "renders": c.renders.load(Ordering::Relaxed),
    }))
    .into_response()
}

#[derive(serde::Deserialize)]
struct LoginForm {
    #[serde(default)]
    token: String,
}

#[derive(serde::Deserialize)]
struct SignInAddress {
    token: Option<String>,
}

/// The sign-in page; with this run's code in the address (as `gza serve` printed it), the
/// browser is signed in and sent on to the board, so the code leaves the address bar.
async fn login_page(
    State(app): State<Arc<App>>,
    axum::extract::Query(query): axum::extract::Query<SignInAddress>,
) -> Response {
    match query.token {
        Some(code) if app.security.signs_in_by_address() && app.security.token_ok(&code) => {
            sign_in_response(&app)
        }
        Some(_) => (
            StatusCode::UNAUTHORIZED,
            login_markup(
                &app,
                Some("That address does not sign in to this run of gza serve."),
            ),
        )
            .into_response(),
        None => login_markup(&app, None).into_response(),
    }
}

/// Sign the browser in (a cookie holding this run's session, never the token or code: a
/// browser sends it to every port of the host) and go to the board.
fn sign_in_response(app: &App) -> Response {
    let cookie = format!(
        "{}={}; HttpOnly; SameSite=Strict; Path=/",
        app.security.cookie_name(),
        app.security.session()
    );
    let mut response = Redirect::to("/").into_response();
    if let Ok(value) = axum::http::HeaderValue::from_str(&cookie) {
        response
            .headers_mut()
            .insert(axum::http::header::SET_COOKIE, value);
    }
    response
}

fn login_markup(app: &App, problem: Option<&str>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "Sign in · gza" }
                link rel="stylesheet" href="/assets/app.css";
            }
            body {
                main.narrow {
                    h1 { "Sign in" }
                    @if !app.security.needs_token() {
                        p { "This dashboard was started with --no-token and needs no sign-in. " a href="/" { "Open the board" } }
                    } @else {
                        @if app.security.signs_in_by_address() {
                            p { "Open the sign-in address " code { "gza serve" } " printed when it started (its second line), or paste the code in it." }
                        } @else {
                            p { "Paste the access token " code { "gza serve --new-token" } " printed." }
                        }
                        @if let Some(problem) = problem { p.error { (problem) } }
                        form method="post" action="/login" {
                            (csrf_field(app))
                            input type="password" name="token" autocomplete="current-password" autofocus;
                            button type="submit" { "Sign in" }
                        }
                    }
                }
            }
        }
    }
}

async fn login(State(app): State<Arc<App>>, axum::Form(form): axum::Form<LoginForm>) -> Response {
    if !app.security.token_ok(&form.token) {
        return (
            StatusCode::UNAUTHORIZED,
            login_markup(
                &app,
                Some(if app.security.signs_in_by_address() {
                    "That is not this run's code: it is in the sign-in address `gza serve` printed when it started."
                } else {
                    "That is not the token; `gza serve --new-token` makes a new one."
                }),
            ),
        )
            .into_response();
    }
    sign_in_response(&app)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flash_is_one_of_a_closed_set() {
        for f in [Flash::Added(3), Flash::Held(12), Flash::Unchanged(1)] {
            assert_eq!(Flash::decode(&f.encode()), Some(f));
        }
        assert_eq!(Flash::decode("<script>-1"), None);
        assert_eq!(Flash::decode("added-x"), None);
    }

    #[test]
    fn queries_are_encoded_and_empty_values_left_out() {
        assert_eq!(query(&[("group", "a&b c"), ("type", "")]), "?group=a%26b+c");
        assert_eq!(query(&[("group", "")]), "");
    }
}
