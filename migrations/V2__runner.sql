-- What `gza work` needs to own a task safely and report on it.
-- running_pid_start: the worker's process start time (clock ticks since boot), so a reused
--   PID is never mistaken for a live worker.
-- agent_pid / agent_start: the agent's process (its process group leader), ended when its
--   worker is found dead.
ALTER TABLE tasks ADD COLUMN running_pid_start INTEGER;
ALTER TABLE tasks ADD COLUMN agent_pid INTEGER;
ALTER TABLE tasks ADD COLUMN agent_start INTEGER;
ALTER TABLE tasks ADD COLUMN worktree TEXT;
ALTER TABLE tasks ADD COLUMN diff_stats TEXT;
ALTER TABLE tasks ADD COLUMN report_file TEXT;
-- A session to continue (`gza resume`), copied from the task being resumed.
ALTER TABLE tasks ADD COLUMN resume_session_id TEXT;

CREATE INDEX tasks_in_progress ON tasks (status) WHERE status = 'in_progress';
