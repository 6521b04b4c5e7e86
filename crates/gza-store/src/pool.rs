//! A process's open stores of one project, kept for its threads to reuse (issue 21).
//!
//! `gza work` on PostgreSQL opened a connection for each step of a task (the start's sweep and
//! lease, the worker, the heartbeat, the lease's release, the hooks' snapshot): five backend
//! processes for one quick task, ~3 ms of the server's CPU each. A [`Pool`] opens a store when
//! a thread asks and none is idle, and takes it back when the thread is done with it, so a
//! process opens as many as its threads use at once (one for `gza work --parallel 1`). A
//! [`Store`] is used by one thread at a time (it is `Send`, not `Sync`); the pool's lock is
//! held only to take or give one back.

use std::sync::Mutex;

use gza_core::error::Result;
use gza_core::project::Project;

use crate::Store;

/// Open stores of one project, shared by a process's threads.
pub struct Pool<'p> {
    project: &'p Project,
    idle: Mutex<Vec<Store>>,
    opened: std::sync::atomic::AtomicUsize,
}

/// A store taken from a [`Pool`]: given back when dropped (or left out with [`Pooled::discard`]).
pub struct Pooled<'a> {
    pool: &'a Pool<'a>,
    store: Option<Store>,
}

impl<'p> Pool<'p> {
    /// A pool of `project`'s database; nothing is opened until a store is asked for.
    pub fn new(project: &'p Project) -> Pool<'p> {
        Pool {
            project,
            idle: Mutex::new(Vec::new()),
            opened: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// An idle store, or a newly opened one ([`Store::open_project`]) when none is idle.
    pub fn get(&self) -> Result<Pooled<'_>> {
        let idle = self.idle.lock().expect("store pool lock").pop();
        let store = match idle {
            Some(store) => store,
            None => {
                let store = Store::open_project(self.project)?;
                self.opened
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                store
            }
        };
        Ok(Pooled {
            pool: self,
            store: Some(store),
        })
    }

    /// The project whose database this is.
    pub fn project(&self) -> &'p Project {
        self.project
    }

    /// How many stores this pool has opened (each a connection on PostgreSQL).
    pub fn opened(&self) -> usize {
        self.opened.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Pooled<'_> {
    /// Close this store instead of giving it back (its connection failed: the next one asked
    /// for is opened afresh).
    pub fn discard(mut self) {
        self.store = None;
    }
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Store;
    fn deref(&self) -> &Store {
        self.store
            .as_ref()
            .expect("a pooled store is present until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        // What this use of it changed reaches the hooks now, not when the run ends (and
        // before the pool's lock is taken: other threads do not wait on the refresh).
        if let Some(store) = &self.store {
            store.announce_hook_change();
        }
        if let Some(store) = self.store.take()
            && let Ok(mut idle) = self.pool.idle.lock()
        {
            idle.push(store);
        }
    }
}
