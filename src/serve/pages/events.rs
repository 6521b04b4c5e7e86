//! The Server-Sent Event streams open pages listen to. Each subscribes to a view of the hub
//! (one poller for the whole server); a task's stream also reads its log's new bytes itself, from
//! the offset its page was rendered at, so a page that connects late loses nothing.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path as UrlPath, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream, StreamExt};
use tokio::sync::watch;

use super::Failure;
use super::board::board_key;
use super::task::{LOG_CHUNK_BYTES, parse_id, read_last_partial, read_lines};
use crate::config::ProviderKind;
use crate::serve::App;
use crate::serve::hub::{self, TaskLive};

#[derive(Debug, Default, serde::Deserialize)]
pub struct BoardEventsQuery {
    group: Option<String>,
    #[serde(rename = "type")]
    task_type: Option<String>,
}

fn keep_alive() -> KeepAlive {
    KeepAlive::new().interval(Duration::from_secs(15))
}

/// `board` events: the columns, whenever they change (the current ones first).
pub async fn board_events(
    State(app): State<Arc<App>>,
    Query(q): Query<BoardEventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Failure> {
    let key = board_key(&q.group, &q.task_type)?;
    let mut rx = hub::subscribe_board(&app, key).await?;
    rx.mark_changed();
    let events = stream::unfold(rx, |mut rx| async move {
        rx.changed().await.ok()?;
        let payload = rx.borrow_and_update().clone();
        Some((Ok(Event::default().event("board").data(&*payload)), rx))
    });
    Ok(Sse::new(events.take_until(closing(&app))).keep_alive(keep_alive()))
}

/// Resolves when the server stops.
fn closing(app: &App) -> impl std::future::Future<Output = ()> + use<> {
    let mut rx = app.closing.subscribe();
    async move {
        let _ = rx.wait_for(|closing| *closing).await;
    }
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct TaskEventsQuery {
    /// The log offset the page was rendered at.
    offset: Option<u64>,
}

struct TaskStream {
    rx: watch::Receiver<TaskLive>,
    kind: ProviderKind,
    offset: u64,
    /// Whether the finished task's log was read to its end.
    closed: bool,
    last_facts: Option<Arc<str>>,
    pending: Vec<Event>,
    /// More of the log is waiting than one event carries.
    more: bool,
}

/// At most this many chunks of log go in one event.
const MAX_CHUNKS_PER_EVENT: usize = 8;

/// `task` events (the facts, when they change) and `log` events (the lines appended since).
pub async fn task_events(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<TaskEventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Failure> {
    let id = parse_id(&id)?;
    let mut rx = hub::subscribe_task(&app, id).await?;
    let kind = {
        let app = app.clone();
        super::read(&app, move |app, store| {
            let task = store.get_task(id)?;
            Ok(super::task::provider(&app.project, &task))
        })
        .await?
    };
    rx.mark_changed();
    let state = TaskStream {
        rx,
        kind,
        offset: q.offset.unwrap_or(0),
        closed: false,
        last_facts: None,
        pending: Vec::new(),
        more: false,
    };
    let events = stream::unfold(state, |mut s| async move {
        loop {
            if let Some(event) = s.pending.pop() {
                return Some((Ok(event), s));
            }
            if s.more {
                s.more = false;
            } else {
                s.rx.changed().await.ok()?;
            }
            let live = s.rx.borrow_and_update().clone();
            let mut out = Vec::new();
            if s.last_facts.as_ref() != Some(&live.facts) {
                s.last_facts = Some(live.facts.clone());
                out.push(Event::default().event("task").data(&*live.facts));
            }
            if let Some(path) = live.log.clone()
                && !s.closed
                && (live.log_len > s.offset || !live.running)
            {
                let (kind, from, running) = (s.kind, s.offset, live.running);
                let read = tokio::task::spawn_blocking(move || {
                    let Ok(mut file) =
                        crate::fsutil::open_regular(&path, std::fs::OpenOptions::new().read(true))
                    else {
                        return (Vec::new(), from, true, false);
                    };
                    let len = file.metadata().map(|m| m.len()).unwrap_or(from);
                    let mut lines = Vec::new();
                    let mut at = from;
                    // What there is now, whole lines only, a bounded amount per event.
                    for _ in 0..MAX_CHUNKS_PER_EVENT {
                        if at >= len {
                            break;
                        }
                        let (more, end, _) =
                            read_lines(&mut file, kind, at, len.min(at + LOG_CHUNK_BYTES), false);
                        if end > at {
                            lines.extend(more);
                            at = end;
                        } else if len - at >= LOG_CHUNK_BYTES {
                            // A line longer than a chunk: `gza log` cuts it too.
                            lines.extend(read_last_partial(&mut file, kind, at));
                            at += LOG_CHUNK_BYTES;
                        } else {
                            // A partial line: wait for its end.
                            break;
                        }
                    }
                    if at < len && len - at >= LOG_CHUNK_BYTES {
                        // More than one event's worth is left: say so, so it is read at once.
                        return (lines, at, false, true);
                    }
                    let done = !running;
                    if done && at < len {
                        lines.extend(read_last_partial(&mut file, kind, at));
                        at = len;
                    }
                    (lines, at, done, false)
                })
                .await;
                if let Ok((lines, at, done, more)) = read {
                    s.offset = at;
                    s.closed = done;
                    s.more = more;
                    if !lines.is_empty() {
                        let html = maud::html! { @for line in &lines { div.line { (line) } } };
                        let data = serde_json::json!({ "html": html.into_string(), "offset": at })
                            .to_string();
                        out.push(Event::default().event("log").data(data));
                    }
                }
            }
            out.reverse();
            s.pending = out;
        }
    });
    Ok(Sse::new(events.take_until(closing(&app))).keep_alive(keep_alive()))
}
