-- Team mode (issue 21): how the last push of each task branch to `origin` went, so a clone that
-- cannot fetch a branch can say which machine has it and why it is not on `origin`, `gza show`
-- shows a push that failed, and the next command on the machine that has the branch pushes it
-- again. One row per branch (its improve tasks push the same branch); error is NULL when the
-- push succeeded.
CREATE TABLE branch_pushes (
    branch     TEXT    NOT NULL PRIMARY KEY,
    task_id    INTEGER,
    host       TEXT    NOT NULL,
    pushed_tip TEXT    NOT NULL,
    error      TEXT,
    at         TEXT    NOT NULL
);
