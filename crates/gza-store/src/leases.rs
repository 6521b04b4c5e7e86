//! Worker leases: a heartbeat each `gza work` process renews while it runs, the positive
//! evidence that its tasks are still being worked on; and the count of running agents that
//! `max_concurrent` is checked against when a task is claimed.
//!
//! Every time is the database's (`Backend::now_epoch`), never a worker's: machines whose clocks
//! disagree still agree on which lease is stale. Each lease has an id that is never given out
//! again (its generation); a task records the lease it was claimed under, and a worker whose
//! lease expired can neither renew it nor claim under it: it takes a new one, and what it
//! writes for tasks of the old one is refused once they are reaped (see `runs.rs`).

use super::Store;
use super::runs::WorkerId;
use crate::db::{DbResult, Tx};
use gza_core::error::Result;
use gza_core::task::TaskId;

/// How often a worker renews its lease.
pub const LEASE_RENEW_SECS: f64 = 5.0;
/// A lease not renewed for this long belongs to a worker that is gone.
pub const LEASE_STALE_SECS: f64 = 30.0;
/// Leases of workers gone this long are deleted when a worker starts.
const LEASE_FORGET_SECS: f64 = 86_400.0;

/// A worker's lease as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    /// Its generation: never given to another lease.
    pub id: i64,
    /// `pid:start` of the worker.
    pub worker: String,
    /// The worker's host name (what `gza ps` shows).
    pub host: String,
    /// The worker's machine and boot: where its PID means something.
    pub machine: String,
    pub pid: i64,
    /// The worker's PID namespace, when its platform has one.
    pub pid_ns: Option<String>,
    /// Seconds since the worker last renewed it, on the database's clock.
    pub age_secs: f64,
    /// Seconds since the worker took it.
    pub running_secs: f64,
}

impl Lease {
    /// Whether the worker stopped renewing it long enough ago to be gone.
    pub fn expired(&self) -> bool {
        self.age_secs > LEASE_STALE_SECS
    }
}

/// What a task in progress has for a lease.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskLease {
    /// Claimed without a lease id (by a gza from before they had ids) and no lease under its
    /// worker's `pid:start`: where the PID is visible, it decides.
    None,
    /// Claimed under a lease that no longer exists: its worker gave it up or was forgotten.
    Gone { lease: i64 },
    /// The lease it was claimed under (or, without an id, its worker's).
    Held {
        lease: Lease,
        claimed_under: Option<i64>,
    },
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

/// The join from `tasks t` to the lease of its worker: the lease it was claimed under, or for
/// a task claimed without one, its worker's by key (`pid:start`, as [`WorkerId::lease_key`]).
const TASK_LEASE_JOIN: &str = "LEFT JOIN worker_leases l ON (t.lease_id IS NOT NULL AND l.id = t.lease_id) \
     OR (t.lease_id IS NULL AND l.worker = CAST(t.running_pid AS TEXT) || ':' || COALESCE(CAST(t.running_pid_start AS TEXT), ''))";

const LEASE_COLUMNS: &str = "l.id, l.worker, l.host, l.machine, l.pid, l.pid_ns";

impl Store {
    /// The SQL time before which a heartbeat is stale, on the database's clock.
    pub(crate) fn stale_before(&self) -> String {
        format!("({} - {LEASE_STALE_SECS})", self.backend().now_epoch())
    }

    fn lease_from_row(&self, r: &crate::db::Row, at: usize) -> DbResult<Lease> {
        Ok(Lease {
            id: r.get(at)?,
            worker: r.get(at + 1)?,
            host: r.get(at + 2)?,
            machine: r.get(at + 3)?,
            pid: r.get(at + 4)?,
            pid_ns: r.get(at + 5)?,
            age_secs: r.get(at + 6)?,
            running_secs: r.get(at + 7)?,
        })
    }

    /// The lease columns and their ages, for `SELECT`s over `worker_leases l`.
    fn lease_select(&self) -> String {
        let now = self.backend().now_epoch();
        format!("{LEASE_COLUMNS}, {now} - l.heartbeat_at, {now} - l.started_at")
    }

    /// Take a new lease for this worker (its generation: an id never given out before), and
    /// forget leases of workers long gone. Returns the lease id.
    pub fn acquire_lease(
        &self,
        worker: WorkerId,
        host: &str,
        machine: &str,
        pid_ns: Option<&str>,
    ) -> Result<i64> {
        let now = self.backend().now_epoch();
        // Safe to run again whole: a lease a commit in doubt made is deleted by the next run
        // (by the worker's key) before it takes its own.
        self.immediate_retrying(|tx, _| {
            tx.execute(
                &format!("DELETE FROM worker_leases WHERE heartbeat_at < {now} - ?1"),
                params![LEASE_FORGET_SECS],
            )?;
            tx.execute(
                "DELETE FROM worker_leases WHERE worker = ?1",
                params![worker.lease_key()],
            )?;
            tx.one(
                &format!(
                    "INSERT INTO worker_leases (worker, host, machine, pid, pid_ns, started_at, heartbeat_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, {now}, {now}) RETURNING id"
                ),
                params![worker.lease_key(), host, machine, worker.pid, pid_ns],
            )
        })
    }

    /// Renew lease `lease`: the worker still runs. False when it can no longer be renewed: it
    /// expired (the worker could not renew it in time, and its tasks may have been reaped) or
    /// is gone; the worker must take a new one.
    pub fn renew_lease(&self, lease: i64) -> Result<bool> {
        let now = self.backend().now_epoch();
        let stale = self.stale_before();
        self.db
            .execute(
                &format!(
                    "UPDATE worker_leases SET heartbeat_at = {now} WHERE id = ?1 AND heartbeat_at >= {stale}"
                ),
                params![lease],
            )
            .map(|n| n == 1)
            .map_err(|e| self.err(e))
    }

    /// Give up lease `lease`: its worker has finished with its tasks.
    pub fn drop_lease(&self, lease: i64) -> Result<()> {
        self.db
            .execute("DELETE FROM worker_leases WHERE id = ?1", params![lease])
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The lease task `id` runs under.
    pub fn task_lease(&self, id: TaskId) -> Result<TaskLease> {
        let sql = format!(
            "SELECT t.lease_id, {} FROM tasks t {TASK_LEASE_JOIN} WHERE t.id = ?1",
            self.lease_select()
        );
        let found = self
            .db
            .query_opt(&sql, params![id], |r| {
                let claimed_under: Option<i64> = r.get(0)?;
                let has_lease: Option<i64> = r.get(1)?;
                Ok(match (claimed_under, has_lease) {
                    (_, Some(_)) => TaskLease::Held {
                        lease: self.lease_from_row(r, 1)?,
                        claimed_under,
                    },
                    (Some(lease), None) => TaskLease::Gone { lease },
                    (None, None) => TaskLease::None,
                })
            })
            .map_err(|e| self.err(e))?;
        Ok(found.unwrap_or(TaskLease::None))
    }

    /// The lease each running task is worked under, by task (a task whose lease is gone, or
    /// that was claimed without one by a gza from before leases, is absent): where `gza ps` and
    /// the dashboard's board say which worker on which host runs it. Reads the running tasks
    /// only (the partial index on status), whatever the history's size.
    pub fn running_task_leases(&self) -> Result<std::collections::HashMap<TaskId, Lease>> {
        let sql = format!(
            "SELECT t.id, {} FROM tasks t {TASK_LEASE_JOIN} \
             WHERE t.status = 'in_progress' AND l.id IS NOT NULL",
            self.lease_select()
        );
        let rows = self
            .db
            .query_map(&sql, params![], |r| {
                Ok((TaskId(r.get(0)?), self.lease_from_row(r, 1)?))
            })
            .map_err(|e| self.err(e))?;
        Ok(rows.into_iter().collect())
    }

    /// Every worker's lease, oldest first: what `gza ps` shows of the workers of the project,
    /// on every machine.
    pub fn leases(&self) -> Result<Vec<Lease>> {
        let sql = format!(
            "SELECT {} FROM worker_leases l ORDER BY l.started_at, l.id",
            self.lease_select()
        );
        self.db
            .query_map(&sql, params![], |r| self.lease_from_row(r, 0))
            .map_err(|e| self.err(e))
    }
}

/// Agents running now: tasks in progress whose worker's lease is fresh. A task claimed without
/// a lease id whose worker has no lease (a gza from before leases) counts as running; a task
/// whose lease is gone does not.
pub(super) fn running_agents(tx: &Tx) -> DbResult<i64> {
    let stale = format!("({} - {LEASE_STALE_SECS})", tx.backend().now_epoch());
    tx.one(
        &format!(
            "SELECT COUNT(*) FROM tasks t {TASK_LEASE_JOIN} \
             WHERE t.status = 'in_progress' \
               AND ((l.id IS NULL AND t.lease_id IS NULL) OR l.heartbeat_at >= {stale})"
        ),
        params![],
    )
}
