-- The twin of SQLite's V50: what the rerank did for each `gza work` task it ran for.
CREATE TABLE task_reranks (
    task_id       BIGINT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    outcome       TEXT COLLATE "C" NOT NULL CHECK (outcome IN ('chosen', 'none', 'fallback')),
    candidates    BIGINT NOT NULL,
    chosen        TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    reason        TEXT COLLATE "C",
    ms            BIGINT NOT NULL,
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    at            TEXT COLLATE "C" NOT NULL
);
