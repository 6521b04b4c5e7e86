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
