-- SQLite's V28: the dashboard (`gza serve`) lists each status's newest tasks a page at a time, of
-- one group or one type when asked, and counts the tasks finished per day over a recent window:
-- with these each reads only the rows it shows, however long the history is.
CREATE INDEX tasks_status_recent ON tasks (status, id);
CREATE INDEX tasks_group_status_recent ON tasks (group_name, status, id)
    WHERE group_name IS NOT NULL;
CREATE INDEX tasks_type_status_recent ON tasks (task_type, status, id);
-- Covering for the per-day figures (an index-only scan when the visibility map allows).
CREATE INDEX tasks_finished_at ON tasks (completed_at, status, cost_usd)
    WHERE completed_at IS NOT NULL;
