-- What the rerank (`learnings.rerank: extraction`) did for each `gza work` task it ran for: the
-- model chose some of the ranker's candidates (`chosen`, their ids in the order given, as JSON),
-- chose none (`none`), or gza fell back to the ranker's own choice (`fallback`, with why). One
-- row per task, shown by `gza show` and counted by `learnings stats`.
CREATE TABLE task_reranks (
    task_id       INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    outcome       TEXT NOT NULL CHECK (outcome IN ('chosen', 'none', 'fallback')),
    candidates    INTEGER NOT NULL,
    chosen        TEXT NOT NULL DEFAULT '[]',
    reason        TEXT,
    ms            INTEGER NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    at            TEXT NOT NULL
);
