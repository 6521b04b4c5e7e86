//! Live updates: one poller for the whole server, fanning out to every open page.
//!
//! An open page subscribes to a *view*: the board under one filter, or one task. Each view has
//! one `watch` channel, shared by every page showing it. Every [`TICK`] the poller asks its own
//! connection one cheap question, [`Store::change_marker`] (no table is read), and only when the
//! database changed does it compute each view that has a page open, once, whatever the number
//! of pages showing it; a value equal to the last one is not sent. Logs are watched by their
//! length (a `stat`, no database): a page's stream reads only the bytes appended since it last
//! read. So 50 pages on the board cost one marker check per tick and one board query per change,
//! not 50 (`/api/hub` counts both; docs/benchmarks.md measures it).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::App;
use super::pages::{self, BoardKey};
use crate::error::Error;
use crate::store::Store;
use crate::task::TaskId;

/// How often the poller looks.
pub const TICK: Duration = Duration::from_millis(500);

/// What a task's open pages are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskLive {
    /// The task's facts panel, rendered.
    pub facts: Arc<str>,
    /// Its log (confined to the project's logs), when it has one.
    pub log: Option<PathBuf>,
    /// The log's length in bytes when last looked at.
    pub log_len: u64,
    /// Whether it is still running (a finished task's log will not grow again).
    pub running: bool,
}

#[derive(Default)]
struct Views {
    boards: HashMap<BoardKey, watch::Sender<Arc<str>>>,
    tasks: HashMap<TaskId, watch::Sender<TaskLive>>,
}

/// Counters, for `/api/hub`: how much the live updates cost.
#[derive(Default)]
pub struct Counters {
    pub ticks: AtomicU64,
    /// Times the database was found changed.
    pub changes: AtomicU64,
    /// Views computed (each one or a few queries), by the poller and by first subscribers.
    pub renders: AtomicU64,
}

pub struct Hub {
    views: Mutex<Views>,
    pub counters: Counters,
}

impl Hub {
    pub fn new() -> Hub {
        Hub {
            views: Mutex::new(Views::default()),
            counters: Counters::default(),
        }
    }

    /// How many views and open streams there are.
    pub fn census(&self) -> (usize, usize, usize) {
        let views = self.views.lock().expect("views");
        let streams = views
            .boards
            .values()
            .map(|s| s.receiver_count())
            .sum::<usize>()
            + views
                .tasks
                .values()
                .map(|s| s.receiver_count())
                .sum::<usize>();
        (views.boards.len(), views.tasks.len(), streams)
    }
}

/// Subscribe to the board under `key`: its current payload first (computed now only when no
/// page shows this view yet).
pub async fn subscribe_board(
    app: &Arc<App>,
    key: BoardKey,
) -> Result<watch::Receiver<Arc<str>>, Error> {
    if let Some(sender) = app.hub.views.lock().expect("views").boards.get(&key) {
        return Ok(sender.subscribe());
    }
    let payload = {
        let app = app.clone();
        let key = key.clone();
        blocking(move || {
            app.db
                .read(&app.project, |store| board_payload(&app, store, &key))
        })
        .await?
    };
    let mut views = app.hub.views.lock().expect("views");
    let sender = views
        .boards
        .entry(key)
        .or_insert_with(|| watch::channel(payload).0);
    Ok(sender.subscribe())
}

/// Subscribe to one task's facts and log length.
pub async fn subscribe_task(
    app: &Arc<App>,
    id: TaskId,
) -> Result<watch::Receiver<TaskLive>, Error> {
    if let Some(sender) = app.hub.views.lock().expect("views").tasks.get(&id) {
        return Ok(sender.subscribe());
    }
    let live = {
        let app = app.clone();
        blocking(move || {
            app.db
                .read(&app.project, |store| task_live(&app, store, id))
        })
        .await?
    };
    let mut views = app.hub.views.lock().expect("views");
    let sender = views
        .tasks
        .entry(id)
        .or_insert_with(|| watch::channel(live).0);
    Ok(sender.subscribe())
}

fn board_payload(app: &App, store: &Store, key: &BoardKey) -> Result<Arc<str>, Error> {
    app.hub.counters.renders.fetch_add(1, Ordering::Relaxed);
    Ok(pages::board_payload(app, store, key)?.into())
}

fn task_live(app: &App, store: &Store, id: TaskId) -> Result<TaskLive, Error> {
    app.hub.counters.renders.fetch_add(1, Ordering::Relaxed);
    let (facts, log, running) = pages::task_live(app, store, id)?;
    let log_len = log.as_ref().map_or(0, |p| file_len(p));
    Ok(TaskLive {
        facts: facts.into(),
        log,
        log_len,
        running,
    })
}

fn file_len(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Run blocking work (the store, files) off the async threads.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(Error::Usage(format!(
            "internal error in the dashboard: {e}"
        )))
    })
}

/// The poller: every tick, one marker check on its own connection; on a change, each open view
/// computed once; every tick, each watched log's length.
pub async fn run_poller(app: Arc<App>) {
    let mut store: Option<Store> = None;
    let mut last_marker: Option<i64> = None;
    let mut interval = tokio::time::interval(TICK);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        app.hub.counters.ticks.fetch_add(1, Ordering::Relaxed);
        // Views nobody watches any more are dropped; with none, nothing is asked.
        let (boards, tasks) = {
            let mut views = app.hub.views.lock().expect("views");
            views.boards.retain(|_, s| s.receiver_count() > 0);
            views.tasks.retain(|_, s| s.receiver_count() > 0);
            (
                views.boards.keys().cloned().collect::<Vec<_>>(),
                views.tasks.keys().copied().collect::<Vec<_>>(),
            )
        };
        if boards.is_empty() && tasks.is_empty() {
            continue;
        }
        let app2 = app.clone();
        let taken = store.take();
        let polled = tokio::task::spawn_blocking(move || {
            poll_once(&app2, taken, last_marker, &boards, &tasks)
        })
        .await;
        match polled {
            Ok((kept, marker)) => {
                store = kept;
                last_marker = marker.or(last_marker);
            }
            Err(_) => store = None,
        }
    }
}

/// One tick's work on the blocking pool; gives the connection back.
fn poll_once(
    app: &App,
    store: Option<Store>,
    last_marker: Option<i64>,
    boards: &[BoardKey],
    tasks: &[TaskId],
) -> (Option<Store>, Option<i64>) {
    let store = match store {
        Some(store) => store,
        None => match crate::store::Store::open_project_for_reading(&app.project) {
            Ok(store) => store,
            Err(e) => {
                tracing::warn!("the dashboard's poller cannot open the database: {e}");
                return (None, None);
            }
        },
    };
    let marker = match store.change_marker() {
        Ok(marker) => marker,
        Err(e) => {
            tracing::warn!("the dashboard's poller cannot read the database: {e}");
            return (None, None);
        }
    };
    let changed = last_marker != Some(marker);
    if changed {
        app.hub.counters.changes.fetch_add(1, Ordering::Relaxed);
        for key in boards {
            let Ok(payload) = board_payload(app, &store, key) else {
                continue;
            };
            if let Some(sender) = app.hub.views.lock().expect("views").boards.get(key) {
                sender.send_if_modified(|old| {
                    let differs = **old != *payload;
                    if differs {
                        *old = payload.clone();
                    }
                    differs
                });
            }
        }
    }
    for id in tasks {
        let fresh = if changed {
            task_live(app, &store, *id).ok()
        } else {
            None
        };
        let views = app.hub.views.lock().expect("views");
        let Some(sender) = views.tasks.get(id) else {
            continue;
        };
        sender.send_if_modified(|live| {
            let mut next = fresh.clone().unwrap_or_else(|| live.clone());
            if fresh.is_none() {
                next.log_len = next.log.as_ref().map_or(0, |p| file_len(p));
            }
            let differs = *live != next;
            if differs {
                *live = next;
            }
            differs
        });
    }
    (Some(store), Some(marker))
}
