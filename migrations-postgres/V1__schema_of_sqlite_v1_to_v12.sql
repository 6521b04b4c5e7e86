-- One project's tables in a shared PostgreSQL database: SQLite's V1 to V12 (migrations/) in
-- PostgreSQL's words. Every project has a schema of its own (gza_p_…, named in gza.projects) and
-- search_path names it, so these statements and every query gza makes are unqualified: two
-- projects never see each other's rows, and ids count from 1 in each, as they do in SQLite.
--
-- How the words differ: integers are BIGINT, reals DOUBLE PRECISION, flags stay integers (0/1)
-- as in SQLite, so one SQL text serves both; every text column sorts and compares bytewise
-- (COLLATE "C"), as SQLite does, whatever the database's locale; times stay text in the format
-- gza writes (2026-11-22T07:50:09Z); ids SQLite gives out by rowid are identity columns; a
-- table SQLite orders by rowid has a `rowid` column of its own; triggers are PL/pgSQL functions
-- that keep this schema as their search_path.

-- V12: a deleted task's id is never given to another task (the floor, kept by a trigger below).
CREATE TABLE task_id_floor (id BIGINT NOT NULL);
INSERT INTO task_id_floor (id) VALUES (0);

-- V1, V2, V3, V4, V5, V11: the task queue.
CREATE TABLE tasks (
    id                BIGINT PRIMARY KEY,
    prompt            TEXT COLLATE "C" NOT NULL DEFAULT '',
    task_type         TEXT COLLATE "C" NOT NULL DEFAULT 'implement'
        CHECK (task_type IN ('implement', 'explore', 'plan', 'review', 'improve')),
    status            TEXT COLLATE "C" NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'dropped')),
    based_on          BIGINT REFERENCES tasks(id) ON DELETE SET NULL,
    depends_on        BIGINT REFERENCES tasks(id) ON DELETE SET NULL,
    group_name        TEXT COLLATE "C",
    spec              TEXT COLLATE "C",
    model             TEXT COLLATE "C",
    provider          TEXT COLLATE "C",
    skip_learnings    BIGINT NOT NULL DEFAULT 0,
    urgent            BIGINT NOT NULL DEFAULT 0,
    created_at        TEXT COLLATE "C" NOT NULL
        DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    started_at        TEXT COLLATE "C",
    completed_at      TEXT COLLATE "C",
    running_pid       BIGINT,
    branch            TEXT COLLATE "C",
    log_file          TEXT COLLATE "C",
    output            TEXT COLLATE "C",
    failure_reason    TEXT COLLATE "C",
    cost_usd          DOUBLE PRECISION,
    input_tokens      BIGINT,
    output_tokens     BIGINT,
    num_turns         BIGINT,
    duration_seconds  DOUBLE PRECISION,
    session_id        TEXT COLLATE "C",
    running_pid_start BIGINT,
    agent_pid         BIGINT,
    agent_start       BIGINT,
    worktree          TEXT COLLATE "C",
    diff_stats        TEXT COLLATE "C",
    report_file       TEXT COLLATE "C",
    resume_session_id TEXT COLLATE "C",
    learnings_version BIGINT,
    prompt_sent       TEXT COLLATE "C",
    base_branch       TEXT COLLATE "C",
    base_commit       TEXT COLLATE "C",
    review_verdict    TEXT COLLATE "C"
        CHECK (review_verdict IN ('APPROVED', 'APPROVED_WITH_FOLLOWUPS', 'CHANGES_REQUESTED')),
    merged_at         TEXT COLLATE "C",
    merged_into       TEXT COLLATE "C",
    pr_url            TEXT COLLATE "C",
    import_key        TEXT COLLATE "C",
    log_redacted      BIGINT
);
-- The id a task gets when an insert gives none, as SQLite's rowid would (gza's own inserts
-- give it, under the project's write lock): above every task there is and ever was.
CREATE FUNCTION next_task_id() RETURNS BIGINT LANGUAGE sql VOLATILE
SET search_path FROM CURRENT AS $$
    SELECT GREATEST(COALESCE((SELECT MAX(id) FROM tasks), 0),
                    COALESCE((SELECT MAX(id) FROM task_id_floor), 0)) + 1
$$;
ALTER TABLE tasks ALTER COLUMN id SET DEFAULT next_task_id();

CREATE INDEX tasks_pickup ON tasks (status, urgent DESC, id);
CREATE INDEX tasks_depends_on ON tasks (depends_on) WHERE depends_on IS NOT NULL;
CREATE INDEX tasks_based_on ON tasks (based_on) WHERE based_on IS NOT NULL;
CREATE INDEX tasks_in_progress ON tasks (status) WHERE status = 'in_progress';
CREATE INDEX tasks_group ON tasks (group_name, id) WHERE group_name IS NOT NULL;
CREATE INDEX tasks_group_pickup ON tasks (group_name, status, urgent DESC, id)
    WHERE group_name IS NOT NULL;
CREATE UNIQUE INDEX tasks_import_key ON tasks (import_key) WHERE import_key IS NOT NULL;
CREATE INDEX tasks_worktree_kept ON tasks (completed_at) WHERE worktree IS NOT NULL;
CREATE INDEX tasks_log_kept ON tasks (completed_at) WHERE log_file IS NOT NULL;
CREATE INDEX tasks_pending_deps ON tasks (depends_on)
    WHERE status = 'pending' AND depends_on IS NOT NULL;

-- V1: the regeneration counter.
CREATE TABLE learnings_metadata (
    id                            BIGINT PRIMARY KEY CHECK (id = 1),
    last_regenerated_at           TEXT COLLATE "C",
    last_regenerated_from_task_id BIGINT,
    tasks_since_regen             BIGINT DEFAULT 0
);
INSERT INTO learnings_metadata (id) VALUES (1);

-- V3, V4: extractions, versions.
CREATE TABLE learning_extractions (
    task_id       BIGINT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    provider      TEXT COLLATE "C" NOT NULL,
    model         TEXT COLLATE "C",
    extracted_at  TEXT COLLATE "C" NOT NULL,
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE learnings_versions (
    id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    created_at    TEXT COLLATE "C" NOT NULL,
    from_task_id  BIGINT,
    window_tasks  BIGINT NOT NULL DEFAULT 0,
    items         BIGINT NOT NULL DEFAULT 0,
    added         BIGINT NOT NULL DEFAULT 0,
    removed       BIGINT NOT NULL DEFAULT 0,
    kept          BIGINT NOT NULL DEFAULT 0,
    llm_calls     BIGINT NOT NULL DEFAULT 0,
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    duration_ms   BIGINT NOT NULL DEFAULT 0,
    content       TEXT COLLATE "C" NOT NULL
);

-- V4, V6, V10: learnings as records, their lifecycle.
CREATE TABLE learnings (
    id                BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    section           TEXT COLLATE "C" NOT NULL,
    text              TEXT COLLATE "C" NOT NULL,
    insight           TEXT COLLATE "C",
    example           TEXT COLLATE "C",
    keywords          TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    applies_when      TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    kind              TEXT COLLATE "C" NOT NULL DEFAULT 'learning',
    triggers          TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    checklist         TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    confidence        DOUBLE PRECISION NOT NULL DEFAULT 0.7 CHECK (confidence >= 0 AND confidence <= 1),
    priority          TEXT COLLATE "C" NOT NULL DEFAULT 'MEDIUM'
        CHECK (priority IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW')),
    status            TEXT COLLATE "C" NOT NULL DEFAULT 'active'
        CHECK (status IN ('draft', 'active', 'archived')),
    status_reason     TEXT COLLATE "C",
    status_changed_at TEXT COLLATE "C",
    origin            TEXT COLLATE "C" NOT NULL CHECK (origin IN ('agent', 'llm', 'user')),
    created_at        TEXT COLLATE "C" NOT NULL,
    updated_at        TEXT COLLATE "C" NOT NULL,
    confirmed_at      TEXT COLLATE "C" NOT NULL,
    tier              BIGINT NOT NULL DEFAULT 1 CHECK (tier IN (1, 2)),
    tier_level        TEXT COLLATE "C" CHECK (tier_level IN ('medium', 'high')),
    evidence          TEXT COLLATE "C",
    validated_at      TEXT COLLATE "C",
    stale_reason      TEXT COLLATE "C",
    quarantine_reason TEXT COLLATE "C"
);
CREATE INDEX learnings_status ON learnings (status, section);
CREATE INDEX learnings_tier ON learnings (tier) WHERE tier = 2;
CREATE INDEX learnings_triggered ON learnings (id) WHERE triggers NOT IN ('{}', '');
CREATE INDEX learnings_text ON learnings (text);

CREATE TABLE learning_events (
    id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    learning_id BIGINT NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    at          TEXT COLLATE "C" NOT NULL,
    event       TEXT COLLATE "C" NOT NULL,
    detail      TEXT COLLATE "C"
);
CREATE INDEX learning_events_learning ON learning_events (learning_id);

CREATE TABLE learning_sources (
    rowid       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    learning_id BIGINT NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    task_id     BIGINT,
    session_id  TEXT COLLATE "C",
    kind        TEXT COLLATE "C" NOT NULL CHECK (kind IN ('taught', 'confirmed')),
    created_at  TEXT COLLATE "C" NOT NULL,
    CHECK (task_id IS NOT NULL OR session_id IS NOT NULL),
    UNIQUE (learning_id, task_id),
    UNIQUE (learning_id, session_id)
);
CREATE INDEX learning_sources_task ON learning_sources (task_id) WHERE task_id IS NOT NULL;

CREATE TABLE session_extractions (
    session_id    TEXT COLLATE "C" PRIMARY KEY,
    provider      TEXT COLLATE "C" NOT NULL,
    model         TEXT COLLATE "C",
    extracted_at  TEXT COLLATE "C" NOT NULL,
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE learning_embeddings (
    learning_id BIGINT PRIMARY KEY REFERENCES learnings(id) ON DELETE CASCADE,
    model       TEXT COLLATE "C" NOT NULL,
    vector      BYTEA NOT NULL
);

CREATE TABLE learning_injections (
    id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    learning_id BIGINT NOT NULL REFERENCES learnings(id) ON DELETE CASCADE,
    task_id     BIGINT,
    session_id  TEXT COLLATE "C",
    event       TEXT COLLATE "C" NOT NULL,
    injected_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX learning_injections_learning ON learning_injections (learning_id);
CREATE INDEX learning_injections_task ON learning_injections (task_id) WHERE task_id IS NOT NULL;
CREATE INDEX learning_injections_session ON learning_injections (session_id)
    WHERE session_id IS NOT NULL;

-- V7: worker leases (reshaped by V2 of these migrations, as SQLite's V26).
CREATE TABLE worker_leases (
    worker       TEXT COLLATE "C" PRIMARY KEY,
    pid          BIGINT NOT NULL,
    pid_ns       TEXT COLLATE "C",
    started_at   DOUBLE PRECISION NOT NULL,
    heartbeat_at DOUBLE PRECISION NOT NULL
);

-- V8: running totals per status, kept by triggers in the same transaction as every change.
CREATE TABLE task_totals (
    status           TEXT COLLATE "C" PRIMARY KEY,
    tasks            BIGINT NOT NULL DEFAULT 0,
    cost_usd         DOUBLE PRECISION NOT NULL DEFAULT 0,
    costed           BIGINT NOT NULL DEFAULT 0,
    input_tokens     BIGINT NOT NULL DEFAULT 0,
    output_tokens    BIGINT NOT NULL DEFAULT 0,
    duration_seconds DOUBLE PRECISION NOT NULL DEFAULT 0,
    timed            BIGINT NOT NULL DEFAULT 0
);
INSERT INTO task_totals (status)
VALUES ('pending'), ('in_progress'), ('completed'), ('failed'), ('dropped');

CREATE FUNCTION task_totals_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE task_totals SET
            tasks = tasks - 1,
            cost_usd = cost_usd - COALESCE(OLD.cost_usd, 0),
            costed = costed - (OLD.cost_usd IS NOT NULL)::int,
            input_tokens = input_tokens - COALESCE(OLD.input_tokens, 0),
            output_tokens = output_tokens - COALESCE(OLD.output_tokens, 0),
            duration_seconds = duration_seconds - COALESCE(OLD.duration_seconds, 0),
            timed = timed - (OLD.duration_seconds IS NOT NULL)::int
        WHERE status = OLD.status;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        UPDATE task_totals SET
            tasks = tasks + 1,
            cost_usd = cost_usd + COALESCE(NEW.cost_usd, 0),
            costed = costed + (NEW.cost_usd IS NOT NULL)::int,
            input_tokens = input_tokens + COALESCE(NEW.input_tokens, 0),
            output_tokens = output_tokens + COALESCE(NEW.output_tokens, 0),
            duration_seconds = duration_seconds + COALESCE(NEW.duration_seconds, 0),
            timed = timed + (NEW.duration_seconds IS NOT NULL)::int
        WHERE status = NEW.status;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER task_totals_insert AFTER INSERT ON tasks
    FOR EACH ROW EXECUTE FUNCTION task_totals_change();
CREATE TRIGGER task_totals_delete AFTER DELETE ON tasks
    FOR EACH ROW EXECUTE FUNCTION task_totals_change();
CREATE TRIGGER task_totals_update
    AFTER UPDATE OF status, cost_usd, input_tokens, output_tokens, duration_seconds ON tasks
    FOR EACH ROW EXECUTE FUNCTION task_totals_change();

-- V9: the extraction endpoint's back-off.
CREATE TABLE extraction_backoff (
    id         BIGINT PRIMARY KEY CHECK (id = 1),
    failures   BIGINT NOT NULL DEFAULT 0,
    until      TEXT COLLATE "C",
    last_error TEXT COLLATE "C"
);
INSERT INTO extraction_backoff (id) VALUES (1);

-- V12: the floor follows every deletion.
CREATE FUNCTION task_id_floor_on_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE task_id_floor SET id = OLD.id WHERE id < OLD.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER task_id_floor_on_delete AFTER DELETE ON tasks
    FOR EACH ROW EXECUTE FUNCTION task_id_floor_on_delete();
