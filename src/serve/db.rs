//! The dashboard's connections to the store. `Store` is synchronous (and not `Sync`), so every
//! use runs on tokio's blocking threads with a connection of its own: pages borrow one from a
//! small pool of open connections (opening costs a schema check), actions open theirs the way
//! every command does ([`crate::actions::open_store`]: orphans reaped, spooled writes taken in).

use std::sync::Mutex;

use crate::error::Error;
use crate::project::Project;
use crate::store::Store;

/// Idle connections kept for pages; more may be open at once, and are closed after use.
const POOL_SIZE: usize = 4;

pub struct Db {
    read_only: bool,
    idle: Mutex<Vec<Store>>,
}

impl Db {
    /// Open the project's database once now, so a missing or broken one is said in one line
    /// before the server starts.
    pub fn open(project: &Project, read_only: bool) -> Result<Db, Error> {
        let db = Db {
            read_only,
            idle: Mutex::new(Vec::new()),
        };
        let first = db.connect(project)?;
        db.idle.lock().expect("pool").push(first);
        Ok(db)
    }

    fn connect(&self, project: &Project) -> Result<Store, Error> {
        if self.read_only {
            Store::open_project_for_reading(project)
        } else {
            Store::open_project(project)
        }
    }

    /// Run `f` with a pooled connection (call it from a blocking thread).
    pub fn read<T>(
        &self,
        project: &Project,
        f: impl FnOnce(&Store) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let store = self.idle.lock().expect("pool").pop();
        let store = match store {
            Some(store) => store,
            None => self.connect(project)?,
        };
        let result = f(&store);
        // A connection whose database was replaced under it is dropped, not kept.
        if store.ensure_still_at_path().is_ok() {
            let mut idle = self.idle.lock().expect("pool");
            if idle.len() < POOL_SIZE {
                idle.push(store);
            }
        }
        result
    }
}
