-- A learning's injections with their tasks, read from the index alone (issue 21): how many
-- tasks a learning was given to (`learnings show`, `stats`), whether any of them completed
-- (the learnings that only ever failed) and their outcomes were a read of every injection's
-- row, which grows with the history (about ten rows per finished task). It replaces the index
-- on `learning_id` alone, which it covers.
DROP INDEX IF EXISTS learning_injections_learning;
CREATE INDEX learning_injections_learning_task ON learning_injections (learning_id, task_id);

-- How many times each learning was given outside A/B runs (what `learnings show` and every read
-- of learnings print as "Injected"), kept by triggers in the same transaction as every change
-- to the injections and to which tasks are A/B runs: it was a count of the learning's
-- injections on every read (ten rows per finished task: 0.5 s of the server's for 30 learnings
-- at 950k injections, in every `gza work` task's reads of the learnings).
CREATE TABLE learning_injected (
    learning_id INTEGER PRIMARY KEY REFERENCES learnings(id) ON DELETE CASCADE,
    injected    INTEGER NOT NULL DEFAULT 0
);
INSERT INTO learning_injected (learning_id, injected)
SELECT i.learning_id, COUNT(*) FROM learning_injections i
WHERE NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = i.task_id)
  AND EXISTS (SELECT 1 FROM learnings l WHERE l.id = i.learning_id)
GROUP BY i.learning_id;

CREATE TRIGGER learning_injected_insert AFTER INSERT ON learning_injections
WHEN NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = NEW.task_id)
BEGIN
    INSERT INTO learning_injected (learning_id, injected) VALUES (NEW.learning_id, 1)
    ON CONFLICT (learning_id) DO UPDATE SET injected = injected + 1;
END;

CREATE TRIGGER learning_injected_delete AFTER DELETE ON learning_injections
WHEN NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = OLD.task_id)
BEGIN
    UPDATE learning_injected SET injected = injected - 1 WHERE learning_id = OLD.learning_id;
END;

CREATE TRIGGER learning_injected_update AFTER UPDATE OF learning_id, task_id ON learning_injections
BEGIN
    UPDATE learning_injected SET injected = injected - 1
    WHERE learning_id = OLD.learning_id
      AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = OLD.task_id);
    INSERT INTO learning_injected (learning_id, injected)
    SELECT NEW.learning_id, 1 WHERE NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = NEW.task_id)
    ON CONFLICT (learning_id) DO UPDATE SET injected = injected + 1;
END;

-- A task that becomes an A/B run takes its injections out of the counts; one that stops being
-- one puts them back.
CREATE TRIGGER learning_injected_ab_insert AFTER INSERT ON ab_runs BEGIN
    UPDATE learning_injected SET injected = injected - (
        SELECT COUNT(*) FROM learning_injections i
        WHERE i.task_id = NEW.task_id AND i.learning_id = learning_injected.learning_id)
    WHERE learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = NEW.task_id);
END;

CREATE TRIGGER learning_injected_ab_delete AFTER DELETE ON ab_runs BEGIN
    INSERT INTO learning_injected (learning_id, injected)
    SELECT i.learning_id, COUNT(*) FROM learning_injections i WHERE i.task_id = OLD.task_id
    GROUP BY i.learning_id
    ON CONFLICT (learning_id) DO UPDATE SET injected = injected + excluded.injected;
END;

CREATE TRIGGER learning_injected_ab_update AFTER UPDATE OF task_id ON ab_runs
WHEN OLD.task_id IS NOT NEW.task_id
BEGIN
    INSERT INTO learning_injected (learning_id, injected)
    SELECT i.learning_id, COUNT(*) FROM learning_injections i WHERE i.task_id = OLD.task_id
    GROUP BY i.learning_id
    ON CONFLICT (learning_id) DO UPDATE SET injected = injected + excluded.injected;
    UPDATE learning_injected SET injected = injected - (
        SELECT COUNT(*) FROM learning_injections i
        WHERE i.task_id = NEW.task_id AND i.learning_id = learning_injected.learning_id)
    WHERE learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = NEW.task_id);
END;
