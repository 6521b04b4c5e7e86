-- A learning's injections with their tasks, read from the index alone (issue 21): how many
-- tasks a learning was given to (`learnings show`, `stats`), whether any of them completed
-- (the learnings that only ever failed) and their outcomes were a read of every injection's
-- row, which grows with the history (about ten rows per finished task). It replaces the index
-- on `learning_id` alone, which it covers.
DROP INDEX IF EXISTS learning_injections_learning;
CREATE INDEX learning_injections_learning_task ON learning_injections (learning_id, task_id);
