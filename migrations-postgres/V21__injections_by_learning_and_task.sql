-- SQLite's V51: a learning's injections with their tasks, read from the index alone (issue
-- 21), replacing the index on `learning_id` alone, which it covers.
DROP INDEX IF EXISTS learning_injections_learning;
CREATE INDEX learning_injections_learning_task ON learning_injections (learning_id, task_id);
