-- Tags: labels a person puts on tasks (`gza add --tag`, `gza edit --tag/--untag`), kept in
-- lower case, that `next`, `history`, `work`, `search` and `unmerged` filter by. A task based on
-- another (its review, improve task or retry) is given that task's tags when it is queued.
CREATE TABLE task_tags (
    task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    tag     TEXT    NOT NULL,
    PRIMARY KEY (task_id, tag)
) WITHOUT ROWID;
-- The tasks with a tag, for the filters.
CREATE INDEX task_tags_tag ON task_tags (tag, task_id);

-- Comments: notes a person writes on a task (`gza comment`), shown by `gza show` and given to
-- the improve tasks of the task's branch. addressed_by is the improve task that was last given
-- the comment; the comment is open until that task completes (a failed or deleted improve task
-- leaves it open for the next one).
CREATE TABLE task_comments (
    id           INTEGER PRIMARY KEY,
    task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    text         TEXT    NOT NULL,
    author       TEXT,
    created_at   TEXT    NOT NULL,
    addressed_by INTEGER REFERENCES tasks(id) ON DELETE SET NULL
);
CREATE INDEX task_comments_task ON task_comments (task_id, id);
