-- Running totals per status, so `gza stats` reads five rows instead of every task. Triggers keep
-- them in the same transaction as every insert, delete and update of a task (claiming,
-- completion, retry, edit, import), whichever code path makes it.
CREATE TABLE task_totals (
    status           TEXT    PRIMARY KEY,
    tasks            INTEGER NOT NULL DEFAULT 0,
    cost_usd         REAL    NOT NULL DEFAULT 0,
    costed           INTEGER NOT NULL DEFAULT 0,
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    duration_seconds REAL    NOT NULL DEFAULT 0,
    timed            INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- The statuses the tasks table allows (its CHECK constraint), back-filled from the tasks there.
INSERT INTO task_totals (status)
VALUES ('pending'), ('in_progress'), ('completed'), ('failed'), ('dropped');
UPDATE task_totals SET
    tasks            = (SELECT COUNT(*) FROM tasks t WHERE t.status = task_totals.status),
    cost_usd         = (SELECT COALESCE(SUM(cost_usd), 0) FROM tasks t WHERE t.status = task_totals.status),
    costed           = (SELECT COUNT(cost_usd) FROM tasks t WHERE t.status = task_totals.status),
    input_tokens     = (SELECT COALESCE(SUM(input_tokens), 0) FROM tasks t WHERE t.status = task_totals.status),
    output_tokens    = (SELECT COALESCE(SUM(output_tokens), 0) FROM tasks t WHERE t.status = task_totals.status),
    duration_seconds = (SELECT COALESCE(SUM(duration_seconds), 0) FROM tasks t WHERE t.status = task_totals.status),
    timed            = (SELECT COUNT(duration_seconds) FROM tasks t WHERE t.status = task_totals.status);

CREATE TRIGGER task_totals_insert AFTER INSERT ON tasks BEGIN
    UPDATE task_totals SET
        tasks = tasks + 1,
        cost_usd = cost_usd + COALESCE(NEW.cost_usd, 0),
        costed = costed + (NEW.cost_usd IS NOT NULL),
        input_tokens = input_tokens + COALESCE(NEW.input_tokens, 0),
        output_tokens = output_tokens + COALESCE(NEW.output_tokens, 0),
        duration_seconds = duration_seconds + COALESCE(NEW.duration_seconds, 0),
        timed = timed + (NEW.duration_seconds IS NOT NULL)
    WHERE status = NEW.status;
END;

CREATE TRIGGER task_totals_delete AFTER DELETE ON tasks BEGIN
    UPDATE task_totals SET
        tasks = tasks - 1,
        cost_usd = cost_usd - COALESCE(OLD.cost_usd, 0),
        costed = costed - (OLD.cost_usd IS NOT NULL),
        input_tokens = input_tokens - COALESCE(OLD.input_tokens, 0),
        output_tokens = output_tokens - COALESCE(OLD.output_tokens, 0),
        duration_seconds = duration_seconds - COALESCE(OLD.duration_seconds, 0),
        timed = timed - (OLD.duration_seconds IS NOT NULL)
    WHERE status = OLD.status;
END;

CREATE TRIGGER task_totals_update
AFTER UPDATE OF status, cost_usd, input_tokens, output_tokens, duration_seconds ON tasks BEGIN
    UPDATE task_totals SET
        tasks = tasks - 1,
        cost_usd = cost_usd - COALESCE(OLD.cost_usd, 0),
        costed = costed - (OLD.cost_usd IS NOT NULL),
        input_tokens = input_tokens - COALESCE(OLD.input_tokens, 0),
        output_tokens = output_tokens - COALESCE(OLD.output_tokens, 0),
        duration_seconds = duration_seconds - COALESCE(OLD.duration_seconds, 0),
        timed = timed - (OLD.duration_seconds IS NOT NULL)
    WHERE status = OLD.status;
    UPDATE task_totals SET
        tasks = tasks + 1,
        cost_usd = cost_usd + COALESCE(NEW.cost_usd, 0),
        costed = costed + (NEW.cost_usd IS NOT NULL),
        input_tokens = input_tokens + COALESCE(NEW.input_tokens, 0),
        output_tokens = output_tokens + COALESCE(NEW.output_tokens, 0),
        duration_seconds = duration_seconds + COALESCE(NEW.duration_seconds, 0),
        timed = timed + (NEW.duration_seconds IS NOT NULL)
    WHERE status = NEW.status;
END;

-- Pending tasks that wait on another: `gza next` counts the blocked ones from here, not from
-- every pending task.
CREATE INDEX tasks_pending_deps ON tasks (depends_on)
    WHERE status = 'pending' AND depends_on IS NOT NULL;
