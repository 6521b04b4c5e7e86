-- SQLite's V52: counters of the injections, per learning (`given`, and `injected` outside A/B
-- runs) and per event, kept in step with `learning_injections` and `ab_runs` (see V52 for what
-- each counts and why).
--
-- Here the triggers are per statement, over its transition tables: one statement's rows are
-- aggregated and each counter row is updated once. Row triggers upserting a few counter rows
-- were tried and reverted: in one large transaction (`gza db copy` of a long history) each
-- update of the same row is a new version on a growing chain, and 950k injections had not gone
-- in after 10 minutes (18 s without). Counter rows are taken in learning id order (no deadlock
-- between two writers). A bulk load sets `gza.bulk_load` to 'on' for its transaction, which
-- the triggers then skip, and builds the counters once at its end (`copy.rs`).
CREATE TABLE learning_injection_counts (
    learning_id BIGINT PRIMARY KEY,
    given       BIGINT NOT NULL DEFAULT 0,
    injected    BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE injection_event_counts (
    event TEXT COLLATE "C" PRIMARY KEY,
    n     BIGINT NOT NULL DEFAULT 0
);

INSERT INTO learning_injection_counts (learning_id, given, injected)
SELECT i.learning_id, COUNT(*),
       COUNT(CASE WHEN NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = i.task_id) THEN 1 END)
FROM learning_injections i GROUP BY i.learning_id;

INSERT INTO injection_event_counts (event, n)
SELECT event, COUNT(*) FROM learning_injections GROUP BY event;

-- Per learning and way of ending: the finished tasks it was given to, each once, A/B runs
-- aside (see V52).
CREATE TABLE learning_outcome_counts (
    learning_id    BIGINT NOT NULL,
    status         TEXT COLLATE "C" NOT NULL,
    failure_reason TEXT COLLATE "C" NOT NULL,
    tasks          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (learning_id, status, failure_reason)
);

INSERT INTO learning_outcome_counts (learning_id, status, failure_reason, tasks)
SELECT g.learning_id, t.status, COALESCE(t.failure_reason, ''), COUNT(*)
FROM (SELECT DISTINCT learning_id, task_id FROM learning_injections WHERE task_id IS NOT NULL) g
JOIN tasks t ON t.id = g.task_id
WHERE t.status IN ('completed', 'failed')
  AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id)
GROUP BY g.learning_id, t.status, COALESCE(t.failure_reason, '');

-- Injections added, deleted or changed: each row of the statement counted +1 (new) or -1
-- (old), summed per learning and per event. (One function for the three triggers: a trigger
-- with transition tables names one event, and `new_rows`/`old_rows` exist only for theirs, so
-- the rows are named in the statement's text.)
CREATE FUNCTION injection_counts_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    delta TEXT;
BEGIN
    IF current_setting('gza.bulk_load', true) = 'on' THEN
        RETURN NULL;
    END IF;
    delta := CASE TG_OP
        WHEN 'INSERT' THEN 'SELECT learning_id, task_id, event, 1 AS sign FROM new_rows'
        WHEN 'DELETE' THEN 'SELECT learning_id, task_id, event, -1 AS sign FROM old_rows'
        ELSE 'SELECT learning_id, task_id, event, 1 AS sign FROM new_rows
              UNION ALL SELECT learning_id, task_id, event, -1 AS sign FROM old_rows'
    END;
    EXECUTE format(
        'INSERT INTO learning_injection_counts AS c (learning_id, given, injected)
         SELECT d.learning_id, SUM(d.sign),
                SUM(CASE WHEN NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = d.task_id)
                         THEN d.sign ELSE 0 END)
         FROM (%s) d GROUP BY d.learning_id ORDER BY d.learning_id
         ON CONFLICT (learning_id) DO UPDATE
             SET given = c.given + excluded.given, injected = c.injected + excluded.injected',
        delta);
    EXECUTE format(
        'INSERT INTO injection_event_counts AS c (event, n)
         SELECT d.event, SUM(d.sign) FROM (%s) d GROUP BY d.event ORDER BY d.event
         ON CONFLICT (event) DO UPDATE SET n = c.n + excluded.n',
        delta);
    -- A learning first given to a finished task, or no longer given to it: per (learning,
    -- task) of the statement, given now (`now_n` rows) against before (`now_n - added`).
    EXECUTE format(
        'INSERT INTO learning_outcome_counts AS c (learning_id, status, failure_reason, tasks)
         SELECT p.learning_id, t.status, COALESCE(t.failure_reason, %L), SUM(p.delta)
         FROM (SELECT d.learning_id, d.task_id,
                      CASE WHEN d.now_n > 0 THEN 1 ELSE 0 END
                      - CASE WHEN d.now_n - d.added > 0 THEN 1 ELSE 0 END AS delta
               FROM (SELECT r.learning_id, r.task_id, SUM(r.sign) AS added,
                            (SELECT COUNT(*) FROM learning_injections i
                             WHERE i.learning_id = r.learning_id AND i.task_id = r.task_id) AS now_n
                     FROM (%s) r WHERE r.task_id IS NOT NULL
                     GROUP BY r.learning_id, r.task_id) d) p
         JOIN tasks t ON t.id = p.task_id
         WHERE p.delta <> 0 AND t.status IN (%L, %L)
           AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id)
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
         ON CONFLICT (learning_id, status, failure_reason) DO UPDATE SET tasks = c.tasks + excluded.tasks',
        '', delta, 'completed', 'failed');
    RETURN NULL;
END
$$;
CREATE TRIGGER injection_counts_insert AFTER INSERT ON learning_injections
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION injection_counts_change();
CREATE TRIGGER injection_counts_delete AFTER DELETE ON learning_injections
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION injection_counts_change();
CREATE TRIGGER injection_counts_update AFTER UPDATE ON learning_injections
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION injection_counts_change();

-- A task becomes an A/B run (its injections leave `injected`) or stops being one (they come
-- back): a run added counts -1 for its task's injections, one deleted +1, one pointed at
-- another task both. `ab_runs.task_id` is unique, so a task is named by one run at most.
CREATE FUNCTION injection_counts_ab_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    delta TEXT;
BEGIN
    IF current_setting('gza.bulk_load', true) = 'on' THEN
        RETURN NULL;
    END IF;
    delta := CASE TG_OP
        WHEN 'INSERT' THEN 'SELECT task_id, -1 AS sign FROM new_rows'
        WHEN 'DELETE' THEN 'SELECT task_id, 1 AS sign FROM old_rows'
        ELSE 'SELECT task_id, -1 AS sign FROM new_rows
              UNION ALL SELECT task_id, 1 AS sign FROM old_rows'
    END;
    EXECUTE format(
        'INSERT INTO learning_injection_counts AS c (learning_id, given, injected)
         SELECT i.learning_id, 0, SUM(t.sign)
         FROM (SELECT task_id, SUM(sign) AS sign FROM (%s) r GROUP BY task_id HAVING SUM(sign) <> 0) t
         JOIN learning_injections i ON i.task_id = t.task_id
         GROUP BY i.learning_id ORDER BY i.learning_id
         ON CONFLICT (learning_id) DO UPDATE SET injected = c.injected + excluded.injected',
        delta);
    -- A finished task that became an A/B run leaves the outcome counts; one no longer a run
    -- comes back (each learning given to it once).
    EXECUTE format(
        'INSERT INTO learning_outcome_counts AS c (learning_id, status, failure_reason, tasks)
         SELECT g.learning_id, t.status, COALESCE(t.failure_reason, %L), SUM(g.sign)
         FROM (SELECT DISTINCT i.learning_id, i.task_id, s.sign
               FROM (SELECT task_id, SUM(sign) AS sign FROM (%s) r
                     GROUP BY task_id HAVING SUM(sign) <> 0) s
               JOIN learning_injections i ON i.task_id = s.task_id) g
         JOIN tasks t ON t.id = g.task_id
         WHERE t.status IN (%L, %L)
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
         ON CONFLICT (learning_id, status, failure_reason) DO UPDATE SET tasks = c.tasks + excluded.tasks',
        '', delta, 'completed', 'failed');
    RETURN NULL;
END
$$;
CREATE TRIGGER injection_counts_ab_insert AFTER INSERT ON ab_runs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION injection_counts_ab_change();
CREATE TRIGGER injection_counts_ab_delete AFTER DELETE ON ab_runs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION injection_counts_ab_change();
CREATE TRIGGER injection_counts_ab_update AFTER UPDATE ON ab_runs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION injection_counts_ab_change();

-- A task that ends, is queued again, changes its reason, is added finished or deleted: each
-- learning given to it (once each) moves from its old way of ending to its new one. Per row:
-- a task's status changes a few times in its life, each in its own transaction.
CREATE FUNCTION outcome_counts_task_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF current_setting('gza.bulk_load', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status IN ('completed', 'failed')
       AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = OLD.id) THEN
        UPDATE learning_outcome_counts SET tasks = tasks - 1
        WHERE status = OLD.status AND failure_reason = COALESCE(OLD.failure_reason, '')
          AND learning_id IN (SELECT learning_id FROM learning_injections WHERE task_id = OLD.id);
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.status IN ('completed', 'failed')
       AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = NEW.id) THEN
        INSERT INTO learning_outcome_counts AS c (learning_id, status, failure_reason, tasks)
        SELECT DISTINCT i.learning_id, NEW.status, COALESCE(NEW.failure_reason, ''), 1
        FROM learning_injections i WHERE i.task_id = NEW.id ORDER BY 1
        ON CONFLICT (learning_id, status, failure_reason) DO UPDATE SET tasks = c.tasks + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER outcome_counts_task_insert AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.status IN ('completed', 'failed'))
    EXECUTE FUNCTION outcome_counts_task_change();
CREATE TRIGGER outcome_counts_task_update AFTER UPDATE OF status, failure_reason ON tasks
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                       OR OLD.failure_reason IS DISTINCT FROM NEW.failure_reason)
    EXECUTE FUNCTION outcome_counts_task_change();
CREATE TRIGGER outcome_counts_task_delete AFTER DELETE ON tasks
    FOR EACH ROW WHEN (OLD.status IN ('completed', 'failed'))
    EXECUTE FUNCTION outcome_counts_task_change();
