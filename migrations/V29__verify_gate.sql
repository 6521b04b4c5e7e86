-- The verify gate: each run of the project's check command (`verify:` in gza.yaml) on a task's
-- branch. A run belongs to the task that made the branch and to the commit it checked; whether it
-- still speaks for the branch (or is stale, the branch having moved) is decided when it is read.
CREATE TABLE verifications (
    id               INTEGER PRIMARY KEY,
    task_id          INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    commit_sha       TEXT    NOT NULL,
    command          TEXT    NOT NULL,
    status           TEXT    NOT NULL CHECK (status IN ('passed', 'failed', 'timed_out')),
    exit_code        INTEGER,
    -- The end of the command's output (stdout and stderr together), redacted.
    output_tail      TEXT    NOT NULL DEFAULT '',
    duration_seconds REAL,
    -- The whole output, under .gza/logs/.
    log_file         TEXT,
    created_at       TEXT    NOT NULL
);
-- A branch's latest run.
CREATE INDEX verifications_task ON verifications (task_id, id);

-- `gza watch` looks at the open branches on every pass: completed implement tasks with a branch,
-- not yet merged. Indexed so that a pass costs what is open, not the whole history.
CREATE INDEX tasks_open_branches ON tasks (id)
    WHERE task_type = 'implement' AND status = 'completed' AND merged_at IS NULL
      AND branch IS NOT NULL;
-- Failed tasks, which watch retries or stops.
CREATE INDEX tasks_failed ON tasks (failure_reason, id) WHERE status = 'failed';
