-- Claims across machines (team mode), the same rules on one machine:
-- each `gza work` process takes a lease with an id of its own that is never given out again
-- (its generation); the tasks it claims record it in lease_id, and every write the worker makes
-- to them names it, so a worker that comes back after its task was reaped (its lease expired)
-- can neither complete it nor overwrite what happened since (fencing). A lease records the
-- worker's host (`gza ps`) and machine (its machine id and boot), where its PID means something.
-- Heartbeats and their staleness are measured on the database's clock.
ALTER TABLE worker_leases RENAME TO worker_leases_v7;
CREATE TABLE worker_leases (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    worker       TEXT    NOT NULL UNIQUE,
    host         TEXT    NOT NULL DEFAULT '',
    machine      TEXT    NOT NULL DEFAULT '',
    pid          INTEGER NOT NULL,
    pid_ns       TEXT,
    started_at   REAL    NOT NULL,
    heartbeat_at REAL    NOT NULL
);
INSERT INTO worker_leases (worker, pid, pid_ns, started_at, heartbeat_at)
SELECT worker, pid, pid_ns, started_at, heartbeat_at FROM worker_leases_v7;
DROP TABLE worker_leases_v7;
ALTER TABLE tasks ADD COLUMN lease_id INTEGER;
