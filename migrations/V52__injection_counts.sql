-- Counters of the injections, kept in step with `learning_injections` so that no read a person
-- makes often counts the history (issues 20 and 21: every read of a learning counted its
-- injections, `learnings stats` every injection; with ten per finished task at 100k tasks that
-- was 81 ms of PostgreSQL's CPU for `learnings show L1` and 392 ms for `stats`).
--
-- learning_injection_counts, per learning: `given`, every injection of it (what `stats` calls
-- most injected and never injected); `injected`, those whose task is not an A/B run (what a
-- learning's record shows: an experiment must not train what it measures), exactly the
-- counting query
--     SELECT COUNT(*) FROM learning_injections i WHERE i.learning_id = L
--        AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = i.task_id)
-- injection_event_counts, per event ('task', 'pre-tool-use', ...): every injection of it.
--
-- Triggers keep them in the same transaction as every write of the rows they count, whichever
-- code path makes it: injections added (one or a batch), deleted (with their learning, by
-- `learnings clear`), changed; and an A/B run added, deleted (with its experiment) or pointed
-- at another task (`gza ab --resume`), which moves its task's injections out of or into
-- `injected`. No foreign key: a row counts what the table holds, also for a learning deleted
-- (its injections go with it, and its row reads 0). Readers take a missing row as 0.
-- PostgreSQL's twin (V22) counts per statement, and `gza db copy` builds them once at its end.
CREATE TABLE learning_injection_counts (
    learning_id INTEGER PRIMARY KEY,
    given       INTEGER NOT NULL DEFAULT 0,
    injected    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE injection_event_counts (
    event TEXT    PRIMARY KEY,
    n     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

INSERT INTO learning_injection_counts (learning_id, given, injected)
SELECT i.learning_id, COUNT(*),
       COUNT(CASE WHEN NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = i.task_id) THEN 1 END)
FROM learning_injections i GROUP BY i.learning_id;

INSERT INTO injection_event_counts (event, n)
SELECT event, COUNT(*) FROM learning_injections GROUP BY event;

CREATE TRIGGER injection_counts_insert AFTER INSERT ON learning_injections BEGIN
    INSERT INTO learning_injection_counts (learning_id, given, injected)
    VALUES (NEW.learning_id, 1, NOT EXISTS (SELECT 1 FROM ab_runs WHERE task_id = NEW.task_id))
    ON CONFLICT (learning_id) DO UPDATE SET given = given + 1, injected = injected + excluded.injected;
    INSERT INTO injection_event_counts (event, n) VALUES (NEW.event, 1)
    ON CONFLICT (event) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER injection_counts_delete AFTER DELETE ON learning_injections BEGIN
    UPDATE learning_injection_counts SET
        given = given - 1,
        injected = injected - NOT EXISTS (SELECT 1 FROM ab_runs WHERE task_id = OLD.task_id)
    WHERE learning_id = OLD.learning_id;
    UPDATE injection_event_counts SET n = n - 1 WHERE event = OLD.event;
END;

CREATE TRIGGER injection_counts_update AFTER UPDATE OF learning_id, task_id, event ON learning_injections BEGIN
    UPDATE learning_injection_counts SET
        given = given - 1,
        injected = injected - NOT EXISTS (SELECT 1 FROM ab_runs WHERE task_id = OLD.task_id)
    WHERE learning_id = OLD.learning_id;
    UPDATE injection_event_counts SET n = n - 1 WHERE event = OLD.event;
    INSERT INTO learning_injection_counts (learning_id, given, injected)
    VALUES (NEW.learning_id, 1, NOT EXISTS (SELECT 1 FROM ab_runs WHERE task_id = NEW.task_id))
    ON CONFLICT (learning_id) DO UPDATE SET given = given + 1, injected = injected + excluded.injected;
    INSERT INTO injection_event_counts (event, n) VALUES (NEW.event, 1)
    ON CONFLICT (event) DO UPDATE SET n = n + 1;
END;

-- A task becomes an A/B run (its injections leave `injected`) or stops being one (they come
-- back). `ab_runs.task_id` is unique, so a task is named by one run at most.
CREATE TRIGGER injection_counts_ab_insert AFTER INSERT ON ab_runs BEGIN
    UPDATE learning_injection_counts SET injected = injected - (
        SELECT COUNT(*) FROM learning_injections i
        WHERE i.task_id = NEW.task_id AND i.learning_id = learning_injection_counts.learning_id)
    WHERE learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = NEW.task_id);
END;

CREATE TRIGGER injection_counts_ab_delete AFTER DELETE ON ab_runs BEGIN
    UPDATE learning_injection_counts SET injected = injected + (
        SELECT COUNT(*) FROM learning_injections i
        WHERE i.task_id = OLD.task_id AND i.learning_id = learning_injection_counts.learning_id)
    WHERE learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = OLD.task_id);
END;

CREATE TRIGGER injection_counts_ab_update AFTER UPDATE OF task_id ON ab_runs
WHEN OLD.task_id IS NOT NEW.task_id BEGIN
    UPDATE learning_injection_counts SET injected = injected + (
        SELECT COUNT(*) FROM learning_injections i
        WHERE i.task_id = OLD.task_id AND i.learning_id = learning_injection_counts.learning_id)
    WHERE learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = OLD.task_id);
    UPDATE learning_injection_counts SET injected = injected - (
        SELECT COUNT(*) FROM learning_injections i
        WHERE i.task_id = NEW.task_id AND i.learning_id = learning_injection_counts.learning_id)
    WHERE learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = NEW.task_id);
END;

-- learning_outcome_counts, per learning and way of ending: the finished tasks (completed, or
-- failed with a reason, '' for none) it was given to, each task once however many times it was
-- given, A/B runs aside: exactly the counting query
--     SELECT t.status, COALESCE(t.failure_reason, ''), COUNT(DISTINCT t.id)
--     FROM learning_injections i JOIN tasks t ON t.id = i.task_id
--     WHERE i.learning_id = L AND t.status IN ('completed', 'failed')
--       AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id)
--     GROUP BY 1, 2
-- what `learnings show` and the dashboard's learning page count. Moved by a learning first given
-- to a task or no longer given to it (injections added, deleted, changed), by a task that ends,
-- is queued again or changes its reason, is deleted or added, and by A/B runs as above.
CREATE TABLE learning_outcome_counts (
    learning_id    INTEGER NOT NULL,
    status         TEXT    NOT NULL,
    failure_reason TEXT    NOT NULL,
    tasks          INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (learning_id, status, failure_reason)
) WITHOUT ROWID;

INSERT INTO learning_outcome_counts (learning_id, status, failure_reason, tasks)
SELECT g.learning_id, t.status, COALESCE(t.failure_reason, ''), COUNT(*)
FROM (SELECT DISTINCT learning_id, task_id FROM learning_injections WHERE task_id IS NOT NULL) g
JOIN tasks t ON t.id = g.task_id
WHERE t.status IN ('completed', 'failed')
  AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id)
GROUP BY g.learning_id, t.status, COALESCE(t.failure_reason, '');

-- A learning first given to a finished task, or no longer given to it.
CREATE TRIGGER outcome_counts_given AFTER INSERT ON learning_injections
WHEN NEW.task_id IS NOT NULL
 AND (SELECT COUNT(*) FROM learning_injections i
      WHERE i.learning_id = NEW.learning_id AND i.task_id = NEW.task_id) = 1 BEGIN
    INSERT INTO learning_outcome_counts (learning_id, status, failure_reason, tasks)
    SELECT NEW.learning_id, t.status, COALESCE(t.failure_reason, ''), 1 FROM tasks t
    WHERE t.id = NEW.task_id AND t.status IN ('completed', 'failed')
      AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id)
    ON CONFLICT (learning_id, status, failure_reason) DO UPDATE SET tasks = tasks + 1;
END;

CREATE TRIGGER outcome_counts_ungiven AFTER DELETE ON learning_injections
WHEN OLD.task_id IS NOT NULL
 AND NOT EXISTS (SELECT 1 FROM learning_injections i
                 WHERE i.learning_id = OLD.learning_id AND i.task_id = OLD.task_id) BEGIN
    UPDATE learning_outcome_counts SET tasks = tasks - 1
    WHERE learning_id = OLD.learning_id
      AND (status, failure_reason) = (
          SELECT t.status, COALESCE(t.failure_reason, '') FROM tasks t
          WHERE t.id = OLD.task_id AND t.status IN ('completed', 'failed')
            AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id));
END;

CREATE TRIGGER outcome_counts_regiven AFTER UPDATE OF learning_id, task_id ON learning_injections
WHEN OLD.learning_id IS NOT NEW.learning_id OR OLD.task_id IS NOT NEW.task_id BEGIN
    UPDATE learning_outcome_counts SET tasks = tasks - 1
    WHERE OLD.task_id IS NOT NULL AND learning_id = OLD.learning_id
      AND NOT EXISTS (SELECT 1 FROM learning_injections i
                      WHERE i.learning_id = OLD.learning_id AND i.task_id = OLD.task_id)
      AND (status, failure_reason) = (
          SELECT t.status, COALESCE(t.failure_reason, '') FROM tasks t
          WHERE t.id = OLD.task_id AND t.status IN ('completed', 'failed')
            AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id));
    INSERT INTO learning_outcome_counts (learning_id, status, failure_reason, tasks)
    SELECT NEW.learning_id, t.status, COALESCE(t.failure_reason, ''), 1 FROM tasks t
    WHERE NEW.task_id IS NOT NULL AND t.id = NEW.task_id AND t.status IN ('completed', 'failed')
      AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id)
      AND (SELECT COUNT(*) FROM learning_injections i
           WHERE i.learning_id = NEW.learning_id AND i.task_id = NEW.task_id) = 1
    ON CONFLICT (learning_id, status, failure_reason) DO UPDATE SET tasks = tasks + 1;
END;

-- A task that ends, is queued again, changes its reason, is added finished or deleted: each
-- learning given to it (once each) moves from its old way of ending to its new one.
CREATE TRIGGER outcome_counts_task_update AFTER UPDATE OF status, failure_reason ON tasks
WHEN (OLD.status IS NOT NEW.status OR OLD.failure_reason IS NOT NEW.failure_reason)
 AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = NEW.id) BEGIN
    UPDATE learning_outcome_counts SET tasks = tasks - 1
    WHERE OLD.status IN ('completed', 'failed')
      AND status = OLD.status AND failure_reason = COALESCE(OLD.failure_reason, '')
      AND learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = OLD.id);
    INSERT INTO learning_outcome_counts (learning_id, status, failure_reason, tasks)
    SELECT DISTINCT i.learning_id, NEW.status, COALESCE(NEW.failure_reason, ''), 1
    FROM learning_injections i WHERE i.task_id = NEW.id AND NEW.status IN ('completed', 'failed')
    ON CONFLICT (learning_id, status, failure_reason) DO UPDATE SET tasks = tasks + 1;
END;

CREATE TRIGGER outcome_counts_task_insert AFTER INSERT ON tasks
WHEN NEW.status IN ('completed', 'failed')
 AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = NEW.id) BEGIN
    INSERT INTO learning_outcome_counts (learning_id, status, failure_reason, tasks)
    SELECT DISTINCT i.learning_id, NEW.status, COALESCE(NEW.failure_reason, ''), 1
    FROM learning_injections i WHERE i.task_id = NEW.id
    ON CONFLICT (learning_id, status, failure_reason) DO UPDATE SET tasks = tasks + 1;
END;

CREATE TRIGGER outcome_counts_task_delete AFTER DELETE ON tasks
WHEN OLD.status IN ('completed', 'failed')
 AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = OLD.id) BEGIN
    UPDATE learning_outcome_counts SET tasks = tasks - 1
    WHERE status = OLD.status AND failure_reason = COALESCE(OLD.failure_reason, '')
      AND learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = OLD.id);
END;

-- A finished task becomes an A/B run (leaves the counts) or stops being one (comes back).
CREATE TRIGGER outcome_counts_ab_insert AFTER INSERT ON ab_runs BEGIN
    UPDATE learning_outcome_counts SET tasks = tasks - 1
    WHERE (status, failure_reason) = (
          SELECT t.status, COALESCE(t.failure_reason, '') FROM tasks t
          WHERE t.id = NEW.task_id AND t.status IN ('completed', 'failed'))
      AND learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = NEW.task_id);
END;

CREATE TRIGGER outcome_counts_ab_delete AFTER DELETE ON ab_runs BEGIN
    INSERT INTO learning_outcome_counts (learning_id, status, failure_reason, tasks)
    SELECT DISTINCT i.learning_id, t.status, COALESCE(t.failure_reason, ''), 1
    FROM learning_injections i JOIN tasks t ON t.id = i.task_id
    WHERE i.task_id = OLD.task_id AND t.status IN ('completed', 'failed')
    ON CONFLICT (learning_id, status, failure_reason) DO UPDATE SET tasks = tasks + 1;
END;

CREATE TRIGGER outcome_counts_ab_update AFTER UPDATE OF task_id ON ab_runs
WHEN OLD.task_id IS NOT NEW.task_id BEGIN
    INSERT INTO learning_outcome_counts (learning_id, status, failure_reason, tasks)
    SELECT DISTINCT i.learning_id, t.status, COALESCE(t.failure_reason, ''), 1
    FROM learning_injections i JOIN tasks t ON t.id = i.task_id
    WHERE i.task_id = OLD.task_id AND t.status IN ('completed', 'failed')
    ON CONFLICT (learning_id, status, failure_reason) DO UPDATE SET tasks = tasks + 1;
    UPDATE learning_outcome_counts SET tasks = tasks - 1
    WHERE (status, failure_reason) = (
          SELECT t.status, COALESCE(t.failure_reason, '') FROM tasks t
          WHERE t.id = NEW.task_id AND t.status IN ('completed', 'failed'))
      AND learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = NEW.task_id);
END;
