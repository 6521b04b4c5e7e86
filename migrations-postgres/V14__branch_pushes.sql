-- SQLite's V43 (how each task branch's last push to origin went) in PostgreSQL's words;
-- migrations/V43__branch_pushes.sql explains the table.
CREATE TABLE branch_pushes (
    branch     TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    task_id    BIGINT,
    host       TEXT COLLATE "C" NOT NULL,
    pushed_tip TEXT COLLATE "C" NOT NULL,
    error      TEXT COLLATE "C",
    at         TEXT COLLATE "C" NOT NULL
);
