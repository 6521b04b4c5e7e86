-- The review loop (review, improve, diff, merge, rebase, pr) and groups.

-- Where a code task's branch started: the branch it was cut from (NULL when HEAD was detached)
-- and that branch's commit at the time. `gza diff`, reviews and `gza rebase` compare against it.
ALTER TABLE tasks ADD COLUMN base_branch TEXT;
ALTER TABLE tasks ADD COLUMN base_commit TEXT;

-- A completed review's verdict, read from the Verdict section of its final output
-- (NULL: not a review, not finished, or no verdict found).
ALTER TABLE tasks ADD COLUMN review_verdict TEXT
    CHECK (review_verdict IN ('APPROVED', 'APPROVED_WITH_FOLLOWUPS', 'CHANGES_REQUESTED'));

-- When `gza merge` merged the task's branch, and into which branch.
ALTER TABLE tasks ADD COLUMN merged_at TEXT;
ALTER TABLE tasks ADD COLUMN merged_into TEXT;

-- The pull request `gza pr` opened for the task's branch.
ALTER TABLE tasks ADD COLUMN pr_url TEXT;

-- `history --group`, newest first; and `next` / `work --group`, in pickup order.
CREATE INDEX tasks_group ON tasks (group_name, id) WHERE group_name IS NOT NULL;
CREATE INDEX tasks_group_pickup ON tasks (group_name, status, urgent DESC, id)
    WHERE group_name IS NOT NULL;

-- Which entry of a task file `gza import` queued the task from (a hash of its content), so
-- importing the same file again queues nothing twice.
ALTER TABLE tasks ADD COLUMN import_key TEXT;
CREATE UNIQUE INDEX tasks_import_key ON tasks (import_key) WHERE import_key IS NOT NULL;
