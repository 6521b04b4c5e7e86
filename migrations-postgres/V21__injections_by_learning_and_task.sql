-- SQLite's V51: a learning's injections with their tasks, read from the index alone (issue
-- 21), replacing the index on `learning_id` alone, which it covers.
DROP INDEX IF EXISTS learning_injections_learning;
CREATE INDEX learning_injections_learning_task ON learning_injections (learning_id, task_id);

-- SQLite's V51: how many times each learning was given outside A/B runs, kept by triggers.
CREATE TABLE learning_injected (
    learning_id BIGINT PRIMARY KEY REFERENCES learnings(id) ON DELETE CASCADE,
    injected    BIGINT NOT NULL DEFAULT 0
);
INSERT INTO learning_injected (learning_id, injected)
SELECT i.learning_id, COUNT(*) FROM learning_injections i
WHERE NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = i.task_id)
  AND EXISTS (SELECT 1 FROM learnings l WHERE l.id = i.learning_id)
GROUP BY i.learning_id;

CREATE FUNCTION learning_injected_move(learning BIGINT, task BIGINT, delta BIGINT) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = task) THEN
        RETURN;
    END IF;
    IF delta < 0 THEN
        -- Only down (a learning being deleted takes its count with it, and its injections
        -- after it: nothing is made again for it).
        UPDATE learning_injected SET injected = injected + delta WHERE learning_id = learning;
    ELSE
        INSERT INTO learning_injected (learning_id, injected) VALUES (learning, delta)
        ON CONFLICT (learning_id) DO UPDATE SET injected = learning_injected.injected + delta;
    END IF;
END;
$$;

CREATE FUNCTION learning_injected_on_injection() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM learning_injected_move(OLD.learning_id, OLD.task_id, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM learning_injected_move(NEW.learning_id, NEW.task_id, 1);
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER learning_injected_insert AFTER INSERT OR DELETE ON learning_injections
FOR EACH ROW EXECUTE FUNCTION learning_injected_on_injection();
CREATE TRIGGER learning_injected_update AFTER UPDATE OF learning_id, task_id ON learning_injections
FOR EACH ROW EXECUTE FUNCTION learning_injected_on_injection();

-- A task that becomes an A/B run takes its injections out of the counts; one that stops being
-- one puts them back (the ab_runs row is already there, or already gone, when these run).
CREATE FUNCTION learning_injected_on_ab_run() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.task_id IS NOT NULL THEN
        INSERT INTO learning_injected (learning_id, injected)
        SELECT i.learning_id, COUNT(*) FROM learning_injections i WHERE i.task_id = OLD.task_id
        GROUP BY i.learning_id
        ON CONFLICT (learning_id) DO UPDATE SET injected = learning_injected.injected + excluded.injected;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.task_id IS NOT NULL THEN
        UPDATE learning_injected c SET injected = c.injected - m.n
        FROM (SELECT i.learning_id, COUNT(*) AS n FROM learning_injections i
              WHERE i.task_id = NEW.task_id GROUP BY i.learning_id) m
        WHERE c.learning_id = m.learning_id;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER learning_injected_ab_insert AFTER INSERT OR DELETE ON ab_runs
FOR EACH ROW EXECUTE FUNCTION learning_injected_on_ab_run();
CREATE TRIGGER learning_injected_ab_update AFTER UPDATE OF task_id ON ab_runs
FOR EACH ROW WHEN (OLD.task_id IS DISTINCT FROM NEW.task_id)
EXECUTE FUNCTION learning_injected_on_ab_run();
