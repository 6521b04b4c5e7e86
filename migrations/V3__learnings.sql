-- Learnings, each kept with its source, so a task is extracted once and the file is rebuilt
-- deterministically from what is stored.

-- One row per task whose learnings have been extracted (even when it taught nothing).
CREATE TABLE learning_extractions (
    task_id       INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    provider      TEXT NOT NULL,
    model         TEXT,
    extracted_at  TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0
);

-- A learning. task_id is NULL for lines the user pinned (added to the file or with
-- `gza learnings add`); those survive every regeneration until the user deletes them.
CREATE TABLE learnings (
    id         INTEGER PRIMARY KEY,
    task_id    INTEGER REFERENCES tasks(id) ON DELETE CASCADE,
    section    TEXT NOT NULL,
    content    TEXT NOT NULL,
    origin     TEXT NOT NULL CHECK (origin IN ('agent', 'llm', 'user')),
    created_at TEXT NOT NULL
);
CREATE INDEX learnings_task ON learnings (task_id);

-- Lines the user deleted from learnings.md: kept out of every later regeneration.
CREATE TABLE learnings_suppressed (
    content       TEXT PRIMARY KEY,
    suppressed_at TEXT NOT NULL
);

-- Every version of learnings.md gza wrote, with what the regeneration did and cost.
CREATE TABLE learnings_versions (
    id            INTEGER PRIMARY KEY,
    created_at    TEXT NOT NULL,
    from_task_id  INTEGER,
    window_tasks  INTEGER NOT NULL DEFAULT 0,
    items         INTEGER NOT NULL DEFAULT 0,
    added         INTEGER NOT NULL DEFAULT 0,
    removed       INTEGER NOT NULL DEFAULT 0,
    kept          INTEGER NOT NULL DEFAULT 0,
    llm_calls     INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    duration_ms   INTEGER NOT NULL DEFAULT 0,
    content       TEXT NOT NULL
);

-- Which learnings version a task was given (NULL: none).
ALTER TABLE tasks ADD COLUMN learnings_version INTEGER;
