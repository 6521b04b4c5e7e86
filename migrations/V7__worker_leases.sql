-- A heartbeat lease per `gza work` process: positive evidence that a worker still runs.
-- A task's worker is the lease whose key is `running_pid:running_pid_start` (start may be
-- empty where the platform gives none). The worker renews heartbeat_at every few seconds;
-- a task is reaped as WORKER_DIED only when its worker's lease is stale, or when the worker
-- runs in this process's PID namespace and its PID is positively dead.
-- pid_ns: the worker's PID namespace (/proc/self/ns/pid), when the platform has one.
CREATE TABLE worker_leases (
    worker       TEXT PRIMARY KEY,
    pid          INTEGER NOT NULL,
    pid_ns       TEXT,
    started_at   REAL NOT NULL,
    heartbeat_at REAL NOT NULL
);

-- What `gza clean` looks for: finished tasks that still have a worktree or a log, oldest first.
CREATE INDEX tasks_worktree_kept ON tasks (completed_at) WHERE worktree IS NOT NULL;
CREATE INDEX tasks_log_kept ON tasks (completed_at) WHERE log_file IS NOT NULL;
