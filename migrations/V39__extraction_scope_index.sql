-- What a regeneration reads of the tasks (issue 20, "Scale"): the newest completed tasks that
-- teach learnings, in completion order, found through an index instead of a sort of every
-- completed task, so a regeneration with nothing to do costs the same at a million tasks as at
-- ten thousand. The tasks owed an extraction are looked for only among the newest ones (see
-- `Store::learnings_scope`): older ones still owed are retired.
CREATE INDEX tasks_completed_for_learnings ON tasks (completed_at DESC, id DESC)
    WHERE status = 'completed' AND skip_learnings = 0;
