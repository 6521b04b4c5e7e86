//! Worker leases: a heartbeat each `gza work` process renews while it runs, the positive
//! evidence that its tasks are still being worked on; and the count of running agents that
//! `max_concurrent` is checked against when a task is claimed.

use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{OptionalExtension, Transaction, params};

use super::Store;
use super::runs::WorkerId;
use gza_core::error::Result;

/// How often a worker renews its lease.
pub const LEASE_RENEW_SECS: f64 = 5.0;
/// A lease not renewed for this long belongs to a worker that is gone.
pub const LEASE_STALE_SECS: f64 = 30.0;
/// Leases of workers gone this long are deleted when a worker starts.
const LEASE_FORGET_SECS: f64 = 86_400.0;

/// A worker's lease as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    /// The worker's PID namespace, when its platform has one.
    pub pid_ns: Option<String>,
    /// Seconds since the worker last renewed it.
    pub age_secs: f64,
}

impl WorkerId {
    /// The key of this worker's lease: `pid:start` (start empty when unknown), the same text
    /// SQL builds from a task's `running_pid` and `running_pid_start`.
    pub fn lease_key(&self) -> String {
        match self.start {
            Some(start) => format!("{}:{start}", self.pid),
            None => format!("{}:", self.pid),
        }
    }
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The SQL key of the lease of a task's worker, for joins from `tasks t`.
const TASK_LEASE_KEY: &str = "t.running_pid || ':' || IFNULL(t.running_pid_start, '')";

/// Agents running now: tasks in progress whose worker's lease is fresh. A task whose worker has
/// no lease (claimed by a gza from before leases) counts as running.
pub(super) fn running_agents(tx: &Transaction) -> rusqlite::Result<i64> {
    tx.query_row(
        &format!(
            "SELECT COUNT(*) FROM tasks t LEFT JOIN worker_leases l ON l.worker = {TASK_LEASE_KEY} \
             WHERE t.status = 'in_progress' AND (l.worker IS NULL OR l.heartbeat_at >= ?1)"
        ),
        params![now_secs() - LEASE_STALE_SECS],
        |r| r.get(0),
    )
}

impl Store {
    /// Take (or retake) this worker's lease, and forget leases of workers long gone.
    pub fn acquire_lease(&self, worker: WorkerId, pid_ns: Option<&str>) -> Result<()> {
        let now = now_secs();
        self.immediate(|tx| {
            tx.execute(
                "DELETE FROM worker_leases WHERE heartbeat_at < ?1",
                params![now - LEASE_FORGET_SECS],
            )?;
            tx.execute(
                "INSERT INTO worker_leases (worker, pid, pid_ns, started_at, heartbeat_at) \
                 VALUES (?1, ?2, ?3, ?4, ?4) \
                 ON CONFLICT (worker) DO UPDATE SET pid_ns = ?3, heartbeat_at = ?4",
                params![worker.lease_key(), worker.pid, pid_ns, now],
            )?;
            Ok(())
        })
    }

    /// Renew this worker's lease: it still runs.
    pub fn renew_lease(&self, worker: WorkerId) -> Result<()> {
        self.conn
            .execute(
                "UPDATE worker_leases SET heartbeat_at = ?2 WHERE worker = ?1",
                params![worker.lease_key(), now_secs()],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Give up this worker's lease: it has finished with its tasks.
    pub fn drop_lease(&self, worker: WorkerId) -> Result<()> {
        self.conn
            .execute(
                "DELETE FROM worker_leases WHERE worker = ?1",
                params![worker.lease_key()],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The lease of the worker `pid`/`start`, if it holds one.
    pub fn lease_of(&self, worker: WorkerId) -> Result<Option<Lease>> {
        self.conn
            .query_row(
                "SELECT pid_ns, heartbeat_at FROM worker_leases WHERE worker = ?1",
                params![worker.lease_key()],
                |r| {
                    Ok(Lease {
                        pid_ns: r.get(0)?,
                        age_secs: now_secs() - r.get::<_, f64>(1)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }
}
