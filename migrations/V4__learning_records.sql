-- Learnings become records with stable ids (shown as L<id>). The database is the source of
-- truth; .gza/learnings.md is a view that carries each line's id. Every learning, pin and
-- suppression stored by V3 is carried over: nothing is dropped.

ALTER TABLE learnings RENAME TO learnings_v3;
DROP INDEX IF EXISTS learnings_task;

-- keywords, applies_when and checklist are JSON arrays of strings; triggers is a JSON object
-- ({"tools": [], "files": [], "actions": [], "contexts": []}) saying before which tool calls a
-- piece of process knowledge is injected. origin 'user' marks a learning a person wrote: it is
-- always in the file and stays until the person removes it. 'draft' is for learnings awaiting
-- review (used from the review workflow on).
CREATE TABLE learnings (
    id                INTEGER PRIMARY KEY,
    section           TEXT NOT NULL,
    text              TEXT NOT NULL,
    insight           TEXT,
    example           TEXT,
    keywords          TEXT NOT NULL DEFAULT '[]',
    applies_when      TEXT NOT NULL DEFAULT '[]',
    kind              TEXT NOT NULL DEFAULT 'learning',
    triggers          TEXT NOT NULL DEFAULT '{}',
    checklist         TEXT NOT NULL DEFAULT '[]',
    confidence        REAL NOT NULL DEFAULT 0.7 CHECK (confidence >= 0 AND confidence <= 1),
    priority          TEXT NOT NULL DEFAULT 'MEDIUM'
        CHECK (priority IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW')),
    status            TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('draft', 'active', 'archived')),
    status_reason     TEXT,
    status_changed_at TEXT,
    origin            TEXT NOT NULL CHECK (origin IN ('agent', 'llm', 'user')),
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    confirmed_at      TEXT NOT NULL
);
CREATE INDEX learnings_status ON learnings (status, section);

-- What happened to each learning, oldest first: its evolution log.
CREATE TABLE learning_events (
    id          INTEGER PRIMARY KEY,
    learning_id INTEGER NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    at          TEXT NOT NULL,
    event       TEXT NOT NULL,
    detail      TEXT
);
CREATE INDEX learning_events_learning ON learning_events (learning_id);

-- Every task (or Claude Code session) that taught or re-confirmed a learning. task_id has no
-- foreign key on purpose: deleting a task leaves a dangling reference, never deletes what it
-- taught.
CREATE TABLE learning_sources (
    learning_id INTEGER NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    task_id     INTEGER,
    session_id  TEXT,
    kind        TEXT NOT NULL CHECK (kind IN ('taught', 'confirmed')),
    created_at  TEXT NOT NULL,
    CHECK (task_id IS NOT NULL OR session_id IS NOT NULL),
    UNIQUE (learning_id, task_id),
    UNIQUE (learning_id, session_id)
);
CREATE INDEX learning_sources_task ON learning_sources (task_id) WHERE task_id IS NOT NULL;

-- Claude Code sessions whose transcript an extraction model has read (once each).
CREATE TABLE session_extractions (
    session_id    TEXT PRIMARY KEY,
    provider      TEXT NOT NULL,
    model         TEXT,
    extracted_at  TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0
);

-- A learning's sentence embedding, computed once per model (`model` is the weights'
-- fingerprint) and dropped when its text changes.
CREATE TABLE learning_embeddings (
    learning_id INTEGER PRIMARY KEY REFERENCES learnings(id) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    vector      BLOB NOT NULL
);

-- Each time a learning was given to an agent: by which task (or session) and how.
CREATE TABLE learning_injections (
    id          INTEGER PRIMARY KEY,
    learning_id INTEGER NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    task_id     INTEGER,
    session_id  TEXT,
    event       TEXT NOT NULL,
    injected_at TEXT NOT NULL
);
CREATE INDEX learning_injections_learning ON learning_injections (learning_id);
CREATE INDEX learning_injections_task ON learning_injections (task_id) WHERE task_id IS NOT NULL;

-- Carry V3's rows over: one record per distinct text. A pinned line keeps its section and
-- becomes a user learning; otherwise the newest row's section and origin stand.
INSERT INTO learnings (section, text, origin, created_at, updated_at, confirmed_at)
SELECT v.section, v.content, 'user', v.created_at, v.created_at, v.created_at
FROM learnings_v3 v
WHERE v.task_id IS NULL
  AND v.id = (SELECT MAX(w.id) FROM learnings_v3 w WHERE w.task_id IS NULL AND w.content = v.content);

INSERT INTO learnings (section, text, origin, created_at, updated_at, confirmed_at)
SELECT v.section, v.content, v.origin,
       (SELECT MIN(w.created_at) FROM learnings_v3 w WHERE w.content = v.content),
       v.created_at, v.created_at
FROM learnings_v3 v
WHERE v.task_id IS NOT NULL
  AND v.id = (SELECT MAX(w.id) FROM learnings_v3 w WHERE w.task_id IS NOT NULL AND w.content = v.content)
  AND NOT EXISTS (SELECT 1 FROM learnings l WHERE l.text = v.content);

INSERT OR IGNORE INTO learning_sources (learning_id, task_id, kind, created_at)
SELECT l.id, v.task_id, 'taught', v.created_at
FROM learnings_v3 v JOIN learnings l ON l.text = v.content
WHERE v.task_id IS NOT NULL
ORDER BY v.id;

-- A line the user deleted becomes an archived learning (restorable), never a text filter.
UPDATE learnings SET status = 'archived', status_reason = 'deleted from learnings.md',
    status_changed_at = (SELECT suppressed_at FROM learnings_suppressed s WHERE s.content = learnings.text)
WHERE text IN (SELECT content FROM learnings_suppressed);
INSERT INTO learnings (section, text, origin, status, status_reason, status_changed_at,
                       created_at, updated_at, confirmed_at)
SELECT 'General', content, 'llm', 'archived', 'deleted from learnings.md', suppressed_at,
       suppressed_at, suppressed_at, suppressed_at
FROM learnings_suppressed s WHERE NOT EXISTS (SELECT 1 FROM learnings l WHERE l.text = s.content);

INSERT INTO learning_events (learning_id, at, event, detail)
SELECT id, created_at, 'created', 'carried over from the line-based store' FROM learnings;
INSERT INTO learning_events (learning_id, at, event, detail)
SELECT id, status_changed_at, 'archived', status_reason FROM learnings WHERE status = 'archived';

DROP TABLE learnings_v3;
DROP TABLE learnings_suppressed;

-- The prompt that was actually sent to the agent, so `gza show ID --prompt` never rebuilds it
-- from today's files.
ALTER TABLE tasks ADD COLUMN prompt_sent TEXT;
