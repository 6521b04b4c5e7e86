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
