-- The task queue. Every column but id has a default or allows NULL, so later
-- migrations and older rows never need back-filling.
CREATE TABLE tasks (
    id               INTEGER PRIMARY KEY,
    prompt           TEXT    NOT NULL DEFAULT '',
    task_type        TEXT    NOT NULL DEFAULT 'implement'
        CHECK (task_type IN ('implement', 'explore', 'plan', 'review', 'improve')),
    status           TEXT    NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'dropped')),
    based_on         INTEGER REFERENCES tasks(id) ON DELETE SET NULL,
    depends_on       INTEGER REFERENCES tasks(id) ON DELETE SET NULL,
    group_name       TEXT,
    spec             TEXT,
    model            TEXT,
    provider         TEXT,
    skip_learnings   INTEGER NOT NULL DEFAULT 0,
    urgent           INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    started_at       TEXT,
    completed_at     TEXT,
    running_pid      INTEGER,
    branch           TEXT,
    log_file         TEXT,
    output           TEXT,
    failure_reason   TEXT,
    cost_usd         REAL,
    input_tokens     INTEGER,
    output_tokens    INTEGER,
    num_turns        INTEGER,
    duration_seconds REAL,
    session_id       TEXT
);

-- Pickup order: urgent first, then oldest. Serves `gza next` and claiming.
CREATE INDEX tasks_pickup ON tasks (status, urgent DESC, id);
CREATE INDEX tasks_depends_on ON tasks (depends_on) WHERE depends_on IS NOT NULL;
CREATE INDEX tasks_based_on ON tasks (based_on) WHERE based_on IS NOT NULL;

-- Exactly the spec's single-row table tracking learnings regeneration.
CREATE TABLE learnings_metadata (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_regenerated_at TEXT,
    last_regenerated_from_task_id INTEGER,
    tasks_since_regen INTEGER DEFAULT 0
);
INSERT INTO learnings_metadata (id) VALUES (1);
